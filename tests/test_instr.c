/*
 * Instrumentation flavours, end to end on the real binary: harnesses built
 * with gcc's -fsanitize-coverage=trace-pc (and trace-cmp) load, get
 * coverage feedback and their planted crash is found; a harness without
 * coverage instrumentation gets one warning line naming the flags to build
 * with, and --require-coverage makes it an error (exit 2); a harness that
 * needs a SanitizerCoverage callback snapfuzz does not define is refused
 * with one line naming the flags it supports; libFuzzer's extra counters
 * (a section of the target's own counters) are read as features and
 * zeroed before every input.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/sfrun.h"

/* The number of lines of @text that contain @needle. */
static int lines_with(const char *text, const char *needle)
{
        int n = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void expect_found(const char *target, const char *secs)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {"run", sf_target(target),  "--out", out, "--workers", "1", "--seed",
                              "1",   "--max-total-time", secs,    NULL};
        sf_run(&r, atoi(secs) + 90, args);
        cr_assert_eq(r.exit_code, 1, "%s: no crash within %s s (exit %d):\n%s", target, secs,
                     r.exit_code, r.err);
        cr_expect_null(strstr(r.err, "no coverage instrumentation"), "%s has coverage:\n%s", target,
                       r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "abort");
        char input[700];
        snprintf(input, sizeof(input), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *in = sf_read(input, &len);
        cr_assert(in && len >= 4 && memcmp(in, "GCC!", 4) == 0,
                  "%s: the stored input starts with GCC!", target);
        free(in);
        /* And it crashes the target outside snapfuzz too. */
        int st = sf_plainrun(sf_target(target), input, 30);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: plainrun status %d", target, st);
        free(kind);
        free(id);
        sf_run_free(&r);
}

Test(instr, a_gcc_trace_pc_harness_gets_edge_feedback_and_its_crash_is_found, .timeout = 200)
{
        expect_found("gcc_tracepc", "60");
}

Test(instr, a_gcc_trace_cmp_harness_solves_a_64_bit_constant, .timeout = 200)
{
        expect_found("gcc_tracecmp", "90");
}

Test(instr, a_harness_without_coverage_gets_one_warning_naming_the_flags, .timeout = 120)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {
            "run", sf_target("gcc_nocov"), "--out", out, "--workers", "1", "--runs", "2000", NULL};
        sf_run(&r, 90, args);
        cr_expect_eq(r.exit_code, 0, "exit %d:\n%s", r.exit_code, r.err);
        cr_expect_eq(lines_with(r.err, "no coverage instrumentation"), 1, "one warning:\n%s",
                     r.err);
        cr_expect(strstr(r.err, "snapfuzz: warning: ") &&
                      strstr(r.err, "-fsanitize=fuzzer-no-link") &&
                      strstr(r.err, "-fsanitize-coverage=trace-pc,trace-cmp"),
                  "the warning names the flags:\n%s", r.err);
        sf_run_free(&r);
}

Test(instr, require_coverage_refuses_a_harness_without_coverage, .timeout = 120)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {
            "run",  sf_target("gcc_nocov"), "--out", out, "--workers", "1", "--runs",
            "2000", "--require-coverage",   NULL};
        sf_run(&r, 90, args);
        cr_expect_eq(r.exit_code, 2, "exit %d:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "snapfuzz: error: ") &&
                      strstr(r.err, "no coverage instrumentation (--require-coverage)"),
                  "one error line:\n%s", r.err);
        sf_run_free(&r);

        /* An instrumented harness passes the same check. */
        const char *ok[] = {
            "run", sf_target("gcc_tracepc"), "--out", out, "--workers", "1", "--runs",
            "200", "--require-coverage",     NULL};
        sf_run(&r, 90, ok);
        cr_expect_eq(r.exit_code, 0, "exit %d:\n%s", r.exit_code, r.err);
        sf_run_free(&r);
}

Test(instr, an_unsupported_coverage_callback_gets_a_hint_naming_the_supported_flags, .timeout = 60)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {"run", sf_target("clang_trace_loads"), "--out", out, "--runs", "100",
                              NULL};
        sf_run(&r, 45, args);
        cr_expect_eq(r.exit_code, 2, "exit %d:\n%s", r.exit_code, r.err);
        cr_expect_eq(lines_with(r.err, "snapfuzz: error: "), 1, "one line:\n%s", r.err);
        cr_expect(strstr(r.err, "undefined symbol: __sanitizer_cov_load") &&
                      strstr(r.err, "snapfuzz provides") &&
                      strstr(r.err, "gcc -fsanitize-coverage=trace-pc,trace-cmp"),
                  "the line says what is missing and what works:\n%s", r.err);
        sf_run_free(&r);
}

/* A ladder only the target's extra counters show (no branch, no
 * comparison per rung): found in about a second; before they were read,
 * the target's check that they start at zero trapped on its second input
 * and the ladder was never climbed. */
Test(instr, libfuzzer_extra_counters_are_features_zeroed_before_each_input, .timeout = 200)
{
        static const uint8_t key[] = {0xc3, 0x1f, 0x88, 0x5a, 0x07, 0xe4,
                                      0x39, 0xb6, 0x70, 0x2d, 0x9e, 0x41};
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {
            "run", sf_target("extra_counters"), "--out", out, "--workers", "1", "--seed",
            "5",   "--max-total-time",          "60",    NULL};
        sf_run(&r, 150, args);
        cr_assert_eq(r.exit_code, 1, "extra_counters (seed 5): no crash within 60 s (exit %d):\n%s",
                     r.exit_code, r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "abort", "seed 5: a trap says the counters were not zeroed");
        char input[700];
        snprintf(input, sizeof(input), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *in = sf_read(input, &len);
        /* The rungs' bytes appear in order among its first 64 (others
         * between them leave the walk where it is). */
        size_t rung = 0;
        for (size_t i = 0; in && i < len && i < 64 && rung < sizeof(key); i++)
                rung += in[i] == key[rung];
        cr_assert_eq(rung, sizeof(key), "seed 5: the stored input climbs the whole ladder");
        free(in);
        free(kind);
        free(id);
        sf_run_free(&r);
}
