/*
 * engine/crashreport.c's pure parts: the rule of each kind of crash (as
 * classify writes kinds, signatures and messages), path normalization,
 * shell quoting of the reproduce command, and URI escaping for SARIF.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/crashreport.h"
#include "engine/sarif.h"

static const char *rule(const char *kind, const char *sig, const char *msg)
{
        return crashreport_rule(kind, sig, msg)->id;
}

Test(crashreport, sanitizer_bug_types_get_their_own_rules)
{
        cr_expect_str_eq(rule("asan", "asan|heap-buffer-overflow|t.so!f:3", ""),
                         "heap-buffer-overflow");
        cr_expect_str_eq(rule("asan", "asan|heap-use-after-free|t.so!f", ""),
                         "heap-use-after-free");
        cr_expect_str_eq(
            rule("asan", "asan|attempting|t.so!f",
                 "AddressSanitizer: attempting double-free on 0x602000000c30 in thread T0:"),
            "double-free");
        cr_expect_str_eq(rule("asan", "asan|attempting|t.so!f",
                              "AddressSanitizer: attempting free on address which was not "
                              "malloc()-ed: 0x7ffd"),
                         "bad-free");
        cr_expect_str_eq(rule("asan", "asan|SEGV|t.so!f",
                              "AddressSanitizer: SEGV on unknown address 0x000000000008 (pc"),
                         "null-deref");
        cr_expect_str_eq(rule("asan", "asan|SEGV|t.so!f",
                              "AddressSanitizer: SEGV on unknown address 0x7ff0deadbee0 (pc"),
                         "segv");
        cr_expect_str_eq(rule("asan", "asan|something-new|t.so!f", ""), "asan");
        /* A kind's name in the bug type's place is not a sanitizer rule. */
        cr_expect_str_eq(rule("asan", "asan|timeout|t.so!f", ""), "asan");
        cr_expect_str_eq(rule("ubsan", "ubsan|signed integer overflow|t.so!f", ""),
                         "signed-integer-overflow");
        cr_expect_str_eq(rule("ubsan", "ubsan|shift exponent|t.so!f", ""), "shift-out-of-bounds");
        cr_expect_str_eq(rule("ubsan", "ubsan|load of null pointer of type|t.so!f", ""),
                         "null-deref");
        cr_expect_str_eq(rule("ubsan", "ubsan|implicit conversion|t.so!f", ""),
                         "undefined-behavior");
        cr_expect_str_eq(rule("msan", "msan|use-of-uninitialized-value|t.so!f", ""),
                         "use-of-uninitialized-value");
}

Test(crashreport, every_kind_classify_knows_has_a_rule)
{
        static const char *const kinds[][2] = {
            {"segv", "segv"},
            {"bus", "bus"},
            {"fpe", "fpe"},
            {"ill", "ill"},
            {"abort", "abort"},
            {"trap", "trap"},
            {"timeout", "timeout"},
            {"oom", "oom"},
            {"stack-overflow", "stack-overflow"},
            {"exit", "exit"},
            {"killed", "killed"},
            {"sandbox", "sandbox-violation"},
            {"signal", "signal"},
            {"leak", "leak"},
            {"overwrite-input", "overwrite-input"},
            {"file-size", "file-size"},
            {"made-up", "crash"},
            /* A sanitizer's rule name as a kind is not that rule. */
            {"heap-buffer-overflow", "crash"},
        };
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
                cr_expect_str_eq(rule(kinds[i][0], kinds[i][0], "the target died"), kinds[i][1],
                                 "kind %s", kinds[i][0]);
        cr_expect_str_eq(rule("segv", "segv|t.so!f", "SIGSEGV on address 0x40"), "null-deref");
        cr_expect_str_eq(rule("segv", "segv|t.so!f", "SIGSEGV on address 0x7f0000001000"), "segv");
        for (const CrashRule *r = crashreport_rules; r->id; r++) {
                cr_expect(r->name && r->brief && r->full && r->help, "%s", r->id);
                cr_expect(strcmp(r->level, "error") == 0 || strcmp(r->level, "warning") == 0);
                cr_expect(r->brief[strlen(r->brief) - 1] == '.', "%s", r->id);
        }
}

static void expect_normal(const char *in, const char *want)
{
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", in);
        crashreport_path_normalize(buf);
        cr_expect_str_eq(buf, want, "normalize(%s)", in);
}

Test(crashreport, paths_are_normalized_lexically)
{
        expect_normal("/a/b/../c", "/a/c");
        expect_normal("/src/build/../tests/deaths/deaths.c", "/src/tests/deaths/deaths.c");
        expect_normal("/a//b/./c/", "/a/b/c");
        expect_normal("/..", "/");
        expect_normal("/../../etc/passwd", "/etc/passwd");
        expect_normal("/", "/");
        expect_normal("a/../../x", "../x");
        expect_normal("../../x/./y", "../../x/y");
        expect_normal("a/b/../../..", "..");
        expect_normal("./", "");
        expect_normal("x.c", "x.c");
}

Test(crashreport, the_reproduce_command_quotes_what_a_shell_would_split)
{
        char *q = crashreport_shell_quote("out/run-1");
        cr_expect_str_eq(q, "out/run-1");
        free(q);
        q = crashreport_shell_quote("my out/it's");
        cr_expect_str_eq(q, "'my out/it'\\''s'");
        free(q);
        q = crashreport_shell_quote("$(rm -rf ~)");
        cr_expect_str_eq(q, "'$(rm -rf ~)'");
        free(q);
        q = crashreport_shell_quote("");
        cr_expect_str_eq(q, "''");
        free(q);
}

Test(crashreport, uris_are_percent_encoded)
{
        char *u = sarif_uri_escape("/a b/%#?.c");
        cr_expect_str_eq(u, "/a%20b/%25%23%3F.c");
        free(u);
        u = sarif_uri_escape("src/\xc3\xa9t\xc3\xa9.c");
        cr_expect_str_eq(u, "src/%C3%A9t%C3%A9.c");
        free(u);
}
