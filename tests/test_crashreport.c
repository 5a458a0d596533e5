/*
 * engine/crashreport.c's pure parts: the rule of each kind of crash (as
 * classify writes kinds, signatures and messages), path normalization,
 * shell quoting of the reproduce command, and URI escaping for SARIF.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "engine/crashreport.h"
#include "engine/junit.h"
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
            {"null-deref", "null-deref"},
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

/* Whether @s (@n bytes) is valid UTF-8 without control characters other
 * than newline and tab. */
static bool clean_utf8(const char *s, size_t n)
{
        const unsigned char *p = (const unsigned char *)s;
        for (size_t i = 0; i < n;) {
                unsigned c = p[i];
                size_t len = c < 0x80             ? 1
                             : (c & 0xe0) == 0xc0 ? 2
                             : (c & 0xf0) == 0xe0 ? 3
                             : (c & 0xf8) == 0xf0 ? 4
                                                  : 0;
                if (len == 0 || i + len > n || (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
                        return false;
                for (size_t k = 1; k < len; k++)
                        if ((p[i + k] & 0xc0) != 0x80)
                                return false;
                i += len;
        }
        return true;
}

static const char fuzz_base[] =
    "{\"kind\":\"asan\",\"message\":\"AddressSanitizer: SEGV on unknown address 0x10\","
    "\"signature\":\"asan|SEGV|t.so!f:3\",\"target\":\"/t.so\",\"input_len\":1,\"count\":2,"
    "\"reproduction\":{\"class\":\"history\",\"history_len\":4},"
    "\"stack\":{\"frames\":[{\"module\":\"libc.so.6\",\"offset\":\"0x1\"},"
    "{\"module\":\"t.so\",\"function\":\"f\",\"file\":\"/src/a/../b.c\",\"line\":3},"
    "{\"module\":\"t.so\",\"function\":\"g\",\"file\":\"b.c\",\"line\":9}]}}";

/* Random damage to a valid crash.json, many times over: loading never
 * fails but by skipping, and both reports stay valid UTF-8 without
 * control characters, the SARIF valid JSON. (Under AddressSanitizer in CI:
 * scripts/check-sanitizers.sh runs the unit tests.) Replay a failure with
 * SF_CRASHREPORT_SEED. */
Test(crashreport, damaged_crash_json_never_breaks_the_reports, .timeout = 120)
{
        const char *env = getenv("SF_CRASHREPORT_SEED");
        unsigned seed = env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)time(NULL);
        printf("crashreport fuzz seed %u (SF_CRASHREPORT_SEED to replay)\n", seed);
        fflush(stdout);
        srand(seed);
        char dir[] = "/tmp/snapfuzz-crashreport-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        char path[256];
        snprintf(path, sizeof(path), "%s/crashes", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes/aa", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes/aa/input", dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputc('x', f);
        fclose(f);
        static const char pool[] = "{}[]\",:\\u0123456789abcdefnulltrue-.e+/\x1b\x80\xff\xc3\x00";
        size_t loaded = 0;
        for (int it = 0; it < 2000; it++) {
                char text[sizeof(fuzz_base) + 64];
                size_t n = sizeof(fuzz_base) - 1;
                memcpy(text, fuzz_base, n);
                for (int k = 1 + rand() % 4; k > 0; k--) {
                        size_t at = (size_t)rand() % n;
                        text[at] = rand() % 2 ? pool[rand() % (int)(sizeof(pool) - 1)]
                                              : (char)(rand() % 256);
                }
                snprintf(path, sizeof(path), "%s/crashes/aa/crash.json", dir);
                f = fopen(path, "w");
                cr_assert_not_null(f);
                fwrite(text, 1, n, f);
                fclose(f);
                CrashReport *r;
                cr_assert_eq(crashreport_load(dir, "/", true, &r), 0, "seed %u it %d", seed, it);
                cr_assert_eq(r->n + r->skipped, 1, "seed %u it %d", seed, it);
                loaded += r->n;
                char *out;
                size_t len;
                cr_assert_eq(sarif_format(r, &out, &len), 0);
                cr_assert(clean_utf8(out, len), "seed %u it %d: SARIF:\n%s", seed, it, out);
                cJSON *j = cJSON_ParseWithLength(out, len);
                cr_assert_not_null(j, "seed %u it %d: SARIF is JSON", seed, it);
                cJSON_Delete(j);
                free(out);
                cr_assert_eq(junit_format(r, &out, &len), 0);
                cr_assert(clean_utf8(out, len), "seed %u it %d: JUnit:\n%s", seed, it, out);
                free(out);
                crashreport_free(r);
        }
        /* Most damage leaves a loadable record: the formatters saw many. */
        cr_expect_gt(loaded, 100, "seed %u", seed);
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        cr_expect_eq(system(cmd), 0);
}
