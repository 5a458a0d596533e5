/*
 * Stored crash records are untrusted input (recovery/crashconf.c): the real
 * snapfuzz binary replays hand-made crash directories, as one from a CI
 * artifact or a bug report could be made. Each bad record ends in exit 2
 * and one line; a record never turns the sandbox off or loosens it unless
 * the command line says so; stored text reaches the terminal inert and
 * bounded.
 *
 * The target is sandbox_escape_open: on input "O" it creates a file (the
 * path in $SNAPFUZZ_TEST_ESCAPE_FILE). Under the strict sandbox that is a
 * crash of kind sandbox and no file; with the sandbox off the file appears
 * (and the write into it hits RLIMIT_FSIZE, a file-size crash). So the
 * file, and the kind, say which sandbox ran.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/sfrun.h"

#define ID "feedc0de00000001"
#define SIG_100                                                                                    \
        "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567" \
        "890123456789"
#define SIG_800 SIG_100 SIG_100 SIG_100 SIG_100 SIG_100 SIG_100 SIG_100 SIG_100

TestSuite(trust, .timeout = 120);

typedef struct Dir {
        char *dir;
        char out[600], marker[600];
} Dir;

static int count_lines(const char *s)
{
        int n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/* OUT/crashes/ID with @json as crash.json and "O" as the input. */
static void dir_init(Dir *d, const char *json)
{
        char path[800];
        FILE *f;

        d->dir = sf_tmpdir();
        snprintf(d->out, sizeof(d->out), "%s/out", d->dir);
        snprintf(d->marker, sizeof(d->marker), "%s/escaped", d->dir);
        setenv("SNAPFUZZ_TEST_ESCAPE_FILE", d->marker, 1);
        cr_assert_eq(mkdir(d->out, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes", d->out);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes/" ID, d->out);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes/" ID "/input", d->out);
        f = fopen(path, "w");
        fputs("O", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/crashes/" ID "/crash.json", d->out);
        f = fopen(path, "w");
        fputs(json, f);
        fclose(f);
}

/* A crash.json as snapfuzz writes it, with @sandbox (a JSON member list, or
 * "") and @extra members. */
static char *record(const char *sandbox, const char *extra)
{
        char *json = NULL;

        cr_assert_gt(
            asprintf(&json,
                     "{\"id\": \"" ID "\", \"kind\": \"sandbox\", \"message\": \"the "
                     "sandbox blocked syscall openat\", \"signature\": \"sandbox:openat\", "
                     "\"target\": \"%s\", \"input_len\": 1, \"limits\": {\"timeout_ms\": "
                     "2000, \"rss_limit_mb\": 2048, \"malloc_limit_mb\": 0, \"max_len\": "
                     "64}%s%s%s}",
                     sf_target("sandbox_escape_open"), *sandbox ? ", " : "", sandbox, extra),
            0);
        return json;
}

static bool escaped(const Dir *d)
{
        return access(d->marker, F_OK) == 0;
}

/* Runs `snapfuzz CMD ID --out OUT` plus @more (NULL-terminated). */
static void replay(const Dir *d, const char *cmd, const char *const *more, SfRun *r)
{
        const char *args[16] = {cmd, ID, "--out", d->out};
        int n = 4;

        for (; more && *more; more++)
                args[n++] = *more;
        args[n] = NULL;
        sf_run(r, 60, args);
}

/* Exit 2, one line "snapfuzz: error: ..." holding each of @needles. */
static void expect_refused(const char *json, const char *const *more, const char *const *needles)
{
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", more, &r);
        cr_expect_eq(r.exit_code, 2, "exit %d; stderr:\n%s\nrecord: %s", r.exit_code, r.err, json);
        cr_expect_eq(count_lines(r.err), 1, "one line:\n%s", r.err);
        cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0, "%s", r.err);
        for (; *needles; needles++)
                cr_expect(strstr(r.err, *needles), "'%s' not in:\n%s", *needles, r.err);
        cr_expect_not(escaped(&d), "the target ran without the sandbox");
        cr_expect_eq(strchr(r.err, '\x1b'), NULL, "an escape reached the terminal");
        sf_run_free(&r);
}

#define EXPECT_REFUSED(json, more, ...)                                                            \
        do {                                                                                       \
                const char *const needles_[] = {__VA_ARGS__, NULL};                                \
                expect_refused(json, more, needles_);                                              \
        } while (0)

Test(trust, stored_sandbox_off_is_ignored_without_trust_record)
{
        char *json = record("\"sandbox\": {\"mode\": \"off\"}", "");
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", NULL, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
        cr_expect(strstr(r.out, "REPRODUCED: sandbox"), "%s", r.out);
        cr_expect(strstr(r.out, "  sandbox  strict"), "%s", r.out);
        cr_expect_not(escaped(&d), "the record turned the sandbox off");
        cr_expect_eq(count_lines(r.err), 1, "one note:\n%s", r.err);
        cr_expect(strstr(r.err, "snapfuzz: note: crash.json says the crash was found under "
                                "sandbox off; that was ignored"),
                  "%s", r.err);
        cr_expect(strstr(r.err, "--trust-record"), "the note names the option: %s", r.err);
        sf_run_free(&r);
        free(json);
}

/* The control: trusted, the stored "off" is obeyed, with a warning, and
 * the file appears — so the test above would see a sandbox turned off. */
Test(trust, stored_sandbox_off_is_obeyed_with_trust_record)
{
        char *json = record("\"sandbox\": {\"mode\": \"off\"}", "");
        const char *const more[] = {"--trust-record", NULL};
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", more, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
        cr_expect(strstr(r.out, "REPRODUCED: file-size"), "%s", r.out);
        cr_expect(escaped(&d), "with the sandbox off the target creates its file");
        cr_expect(strstr(r.err, "snapfuzz: warning: crash.json's sandbox is in force (mode off)"),
                  "%s", r.err);
        sf_run_free(&r);
        free(json);
}

/* limits.sandbox, the older place of the mode, is no different. */
Test(trust, stored_limits_sandbox_off_is_ignored)
{
        char *json = NULL;

        cr_assert_gt(asprintf(&json,
                              "{\"id\": \"" ID "\", \"kind\": \"sandbox\", \"target\": \"%s\", "
                              "\"input_len\": 1, \"limits\": {\"sandbox\": \"off\"}}",
                              sf_target("sandbox_escape_open")),
                     0);
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", NULL, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        cr_expect_not(escaped(&d), "the record turned the sandbox off");
        sf_run_free(&r);
        free(json);
}

/* A stored policy that allows every open: ignored (strict applies) unless
 * trusted. */
Test(trust, stored_policy_is_ignored_without_trust_record)
{
        char *json = record("\"sandbox\": {\"mode\": \"strict\", \"policy\": {\"allow\": "
                            "[\"openat\", \"open\", \"write\"]}}",
                            "");
        const char *const trusted[] = {"--trust-record", NULL};
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", NULL, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        cr_expect_not(escaped(&d), "the stored policy was applied");
        cr_expect(strstr(r.err, "sandbox strict with a policy; that was ignored"), "%s", r.err);
        sf_run_free(&r);

        /* Allowed, the open runs: in the sandbox's empty root (namespaces)
         * it fails and the input runs to completion; without namespaces the
         * file appears. Either way it is not a sandbox crash. */
        replay(&d, "reproduce", trusted, &r);
        cr_expect_not(strstr(r.out, "REPRODUCED: sandbox"),
                      "trusted, the stored policy applies:\n%s", r.out);
        cr_expect(r.exit_code == 0 || escaped(&d), "exit %d\n%s", r.exit_code, r.out);
        cr_expect(strstr(r.err, "(mode strict, with its policy), as --trust-record asks"), "%s",
                  r.err);
        sf_run_free(&r);
        free(json);
}

/* minimize rebuilds the worker through the same reader: the same sandbox
 * as reproduce, which the file shows (the hand-made signature matches
 * neither run, so nothing is written either way). */
Test(trust, minimize_uses_the_same_sandbox_as_reproduce)
{
        char *json = record("\"sandbox\": {\"mode\": \"off\"}", "");
        const char *const budget[] = {"--max-trials", "20", NULL};
        const char *const trusted[] = {"--max-trials", "20", "--trust-record", NULL};
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "minimize", budget, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
        cr_expect_not(escaped(&d), "minimize obeyed the stored sandbox");
        cr_expect(strstr(r.err, "that was ignored"), "%s", r.err);
        sf_run_free(&r);

        replay(&d, "minimize", trusted, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s\nstdout:\n%s", r.err, r.out);
        cr_expect(escaped(&d), "trusted, minimize runs with the sandbox off");
        sf_run_free(&r);
        free(json);
}

/* The command line's sandbox replaces the stored one whole. */
Test(trust, command_line_sandbox_wins)
{
        char *json = record("\"sandbox\": {\"mode\": \"off\"}", "");
        const char *const strict[] = {"--sandbox", "strict", "--trust-record", NULL};
        const char *const off[] = {"--sandbox", "off", NULL};
        Dir d;
        SfRun r;

        dir_init(&d, json);
        replay(&d, "reproduce", strict, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        cr_expect_not(escaped(&d), "--sandbox strict was not obeyed");
        sf_run_free(&r);
        replay(&d, "reproduce", off, &r);
        cr_expect_not(strstr(r.out, "REPRODUCED: sandbox"), "%s", r.out);
        cr_expect(escaped(&d), "--sandbox off was not obeyed");
        cr_expect(strstr(r.err, "snapfuzz: warning: the sandbox is off"), "%s", r.err);
        sf_run_free(&r);
        free(json);
}

Test(trust, refused_stored_policies_are_input_errors)
{
        static const char *const trusted[] = {"--trust-record", NULL};
        char *json = record("\"sandbox\": {\"mode\": \"strict\", \"policy\": {\"allow\": "
                            "[{\"syscall\": \"openat\", \"under\": \"/etc/../proc\"}]}}",
                            "");

        EXPECT_REFUSED(json, NULL, "sandbox policy stored in it is refused",
                       "/etc/../proc resolves to /proc", "--sandbox strict");
        EXPECT_REFUSED(json, trusted, "sandbox policy stored in it is refused");
        free(json);
        json = record("\"sandbox\": {\"mode\": \"strict\", \"policy\": {\"allow\": [\"ptrace\"]}}",
                      "");
        EXPECT_REFUSED(json, NULL, "refused", "ptrace cannot be allowed");
        free(json);
        json = record("\"sandbox\": {\"mode\": \"off\", \"policy\": {\"allow\": [\"chdir\"]}}", "");
        EXPECT_REFUSED(json, trusted, "stored with sandbox mode \"off\"");
        free(json);
        /* A stored policy that reads the output directory. */
        Dir d;
        SfRun r;
        char *policy = NULL;
        cr_assert_gt(asprintf(&policy,
                              "\"sandbox\": {\"mode\": \"strict\", \"policy\": {\"allow\": "
                              "[{\"syscall\": \"openat\", \"under\": \"%s\"}]}}",
                              "/tmp"),
                     0);
        json = record(policy, "");
        dir_init(&d, json);
        replay(&d, "reproduce", trusted, &r);
        cr_expect_eq(r.exit_code, 2, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "contains the output directory"), "%s", r.err);
        cr_expect_eq(count_lines(r.err), 1, "%s", r.err);
        sf_run_free(&r);
        free(policy);
        free(json);
}

Test(trust, wrong_types_and_ranges_are_input_errors)
{
        const char *t = sf_target("sandbox_escape_open");
        char *json = NULL;

#define BAD(needle, fmt)                                                                           \
        do {                                                                                       \
                cr_assert_gt(asprintf(&json, fmt, t), 0);                                          \
                EXPECT_REFUSED(json, NULL, needle, "crash.json");                                  \
                free(json);                                                                        \
        } while (0)
        BAD("limits.timeout_ms must be an integer",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": {\"timeout_ms\": \"1000\"}}");
        BAD("limits.timeout_ms must be an integer",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": {\"timeout_ms\": -5}}");
        BAD("limits.rss_limit_mb must be an integer",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": {\"rss_limit_mb\": 1.5}}");
        BAD("limits.max_len must be an integer",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": {\"max_len\": 1e300}}");
        BAD("limits must be an object", "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": 3}");
        BAD("limits.sandbox must be", "{\"kind\": \"segv\", \"target\": \"%s\", \"limits\": "
                                      "{\"sandbox\": \"none\"}}");
        BAD("sandbox must be an object",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"sandbox\": \"off\"}");
        BAD("sandbox.mode must be",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"sandbox\": {\"mode\": 0}}");
        BAD("sandbox.policy must be an object",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"sandbox\": {\"policy\": \"all\"}}");
        BAD("disagree", "{\"kind\": \"segv\", \"target\": \"%s\", \"sandbox\": {\"mode\": "
                        "\"log\"}, \"limits\": {\"sandbox\": \"strict\"}}");
        BAD("message must be a string",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"message\": 42}");
        BAD("signature must be a string",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"signature\": [1]}");
        BAD("kind must be a name", "{\"kind\": \"se\\u001b[2Jgv\", \"target\": \"%s\"}");
        BAD("state_dependent needs", "{\"kind\": \"segv\", \"target\": \"%s\", "
                                     "\"state_dependent\": {\"first\": 9, \"last\": 3}}");
        BAD("state_dependent.first must be",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"state_dependent\": {\"first\": -1}}");
        BAD("signature is longer than",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"signature\": \"" SIG_800 "\"}");
        BAD("minimized_len must be",
            "{\"kind\": \"segv\", \"target\": \"%s\", \"minimized_len\": \"many\"}");
        BAD("sanitizer must be an object",
            "{\"kind\": \"asan\", \"target\": \"%s\", \"sanitizer\": \"asan\"}");
        BAD("sanitizer.confirmed must be true or false",
            "{\"kind\": \"asan\", \"target\": \"%s\", \"sanitizer\": {\"confirmed\": 1}}");
        BAD("sanitizer.report must be a file name",
            "{\"kind\": \"asan\", \"target\": \"%s\", \"sanitizer\": {\"report\": "
            "\"../../etc/passwd\"}}");
#undef BAD
}

Test(trust, missing_fields_and_truncated_json_are_input_errors)
{
        char *json = NULL;

        EXPECT_REFUSED("{\"kind\": \"segv\"}", NULL, "lacks the \"kind\" or \"target\"");
        cr_assert_gt(asprintf(&json, "{\"target\": \"%s\"}", sf_target("sandbox_escape_open")), 0);
        EXPECT_REFUSED(json, NULL, "lacks the \"kind\" or \"target\"");
        free(json);
        json = record("\"sandbox\": {\"mode\": \"strict\"}", "");
        json[strlen(json) / 2] = '\0';
        EXPECT_REFUSED(json, NULL, "is not valid JSON");
        free(json);
        EXPECT_REFUSED("", NULL, "is not valid JSON");
        EXPECT_REFUSED("[1, 2]", NULL, "is not valid JSON");
}

/* A FIFO where crash.json belongs: reading it would wait for a writer
 * forever; reproduce, minimize and crashes refuse it at once instead. */
Test(trust, a_fifo_for_a_crash_record_is_refused_without_waiting, .timeout = 60)
{
        Dir d;
        SfRun r;
        char path[800];
        const char *const cmds[] = {"reproduce", "minimize"};

        dir_init(&d, "{}");
        snprintf(path, sizeof(path), "%s/crashes/" ID "/crash.json", d.out);
        cr_assert_eq(unlink(path), 0);
        cr_assert_eq(mkfifo(path, 0600), 0);
        for (int i = 0; i < 2; i++) {
                replay(&d, cmds[i], NULL, &r);
                cr_expect_eq(r.exit_code, 2, "%s: exit %d; stderr:\n%s", cmds[i], r.exit_code,
                             r.err);
                cr_expect_eq(count_lines(r.err), 1, "one line:\n%s", r.err);
                cr_expect(strstr(r.err, "crash.json"), "%s", r.err);
                sf_run_free(&r);
        }
        const char *args[] = {"crashes", "--out", d.out, NULL};
        sf_run(&r, 20, args);
        cr_expect_eq(r.exit_code, 0, "exit %d; stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.out, "CORRUPT"), "the record is listed as corrupt:\n%s", r.out);
        sf_run_free(&r);
}

Test(trust, a_target_elsewhere_is_an_input_error)
{
        EXPECT_REFUSED("{\"kind\": \"segv\", \"target\": \"/etc/passwd\"}", NULL,
                       "the target /etc/passwd named in the crash record cannot be loaded",
                       "--target PATH");
        EXPECT_REFUSED("{\"kind\": \"segv\", \"target\": \"/nonexistent/t.so\"}", NULL,
                       "cannot be loaded", "--target PATH");
        EXPECT_REFUSED("{\"kind\": \"segv\", \"target\": \"t.so\"}", NULL,
                       "target must be the absolute path");
        EXPECT_REFUSED("{\"kind\": \"segv\", \"target\": \"/tmp/\\u001b[2Jx.so\"}", NULL,
                       "target holds control characters");
}

/* No byte of @s a terminal acts on: ESC, CR, BEL, other C0 but newline,
 * DEL, and C1 (raw or as UTF-8). */
static void expect_inert(const char *what, const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '\n')
                        continue;
                cr_expect(*p >= 0x20 && *p != 0x7f, "%s: byte %#x reached the terminal", what, *p);
                if (*p == 0xc2)
                        cr_expect(p[1] < 0x80 || p[1] > 0x9f, "%s: a C1 control", what);
                if (*p < 0x20 || *p == 0x7f)
                        return;
        }
}

static size_t longest_line(const char *s)
{
        size_t best = 0, cur = 0;
        for (; *s; s++) {
                cur = *s == '\n' ? 0 : cur + 1;
                if (cur > best)
                        best = cur;
        }
        return best;
}

/* A message with escape sequences (title, clear screen, a C1 CSI, CR, BEL)
 * and 100 KB more: escaped, and cut to a few KB, by reproduce, minimize and
 * crashes. */
Test(trust, stored_text_reaches_the_terminal_inert_and_bounded)
{
        size_t big = 100 * 1024;
        char *filler = malloc(big + 1);
        char *json = NULL;
        static const char *const nasty =
            "\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u009b31mboom\\u007f\\b";

        cr_assert_not_null(filler);
        memset(filler, 'A', big);
        filler[big] = '\0';
        cr_assert_gt(asprintf(&json,
                              "{\"id\": \"" ID "\", \"kind\": \"sandbox\", \"message\": \"%s%s\", "
                              "\"signature\": \"%s%s\", \"first_seen\": \"%s\", \"target\": "
                              "\"%s\", \"input_len\": 1}",
                              nasty, filler, nasty, "", nasty, sf_target("sandbox_escape_open")),
                     0);
        Dir d;
        SfRun r;
        const char *const budget[] = {"--max-trials", "5", NULL};
        const char *const list[] = {"crashes", "--out", NULL, NULL};

        dir_init(&d, json);
        replay(&d, "reproduce", NULL, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        expect_inert("reproduce", r.out);
        expect_inert("reproduce", r.err);
        cr_expect(strstr(r.out, "\\x1b]0;pwned\\x07\\x1b[2J\\r\\u009b31mboom\\x7f\\x08"), "%.300s",
                  r.out);
        cr_expect(strstr(r.out, " more bytes]"), "no cut marker");
        cr_expect_lt(longest_line(r.out), 8192, "a line of %zu bytes", longest_line(r.out));
        cr_expect_lt(strlen(r.out), 32768, "%zu bytes of output", strlen(r.out));
        sf_run_free(&r);

        replay(&d, "minimize", budget, &r);
        expect_inert("minimize", r.out);
        expect_inert("minimize", r.err);
        cr_expect_lt(longest_line(r.out), 8192, "a line of %zu bytes", longest_line(r.out));
        sf_run_free(&r);

        const char *args[] = {list[0], list[1], d.out, NULL};
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        expect_inert("crashes", r.out);
        cr_expect(strstr(r.out, ID), "%s", r.out);
        cr_expect_lt(longest_line(r.out), 400, "a row of %zu bytes", longest_line(r.out));
        sf_run_free(&r);
        free(json);
        free(filler);
}
