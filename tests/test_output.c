/*
 * What a target prints (--target-output, --close-fd-mask) and what a run
 * prints about crashes it sees again and again (--keep-going): the run's
 * own stderr stays short and free of control sequences however much the
 * target writes, the output is where the mode says, and crash.json keeps
 * the target's last words in every mode.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

/* Runs the flooding target (without its crash) for @secs seconds in
 * @mode (NULL: the default) into @out. */
static void run_flood(SfRun *r, const char *out, const char *mode, const char *secs)
{
        const char *args[] = {"run",
                              sf_target("flood_nocrash"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              secs,
                              mode ? "--target-output" : NULL,
                              mode,
                              NULL};
        sf_run(r, 120, args);
        cr_assert_eq(r->exit_code, 0, "exit 0 (nothing found), got %d:\n%.4000s", r->exit_code,
                     r->err);
}

static size_t count_of(const char *hay, const char *needle)
{
        size_t n = 0;
        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void expect_bounded_and_inert(const SfRun *r)
{
        size_t len = strlen(r->err);
        cr_expect_lt(len, 200 * 1024, "the run's stderr is %zu bytes", len);
        cr_expect_null(strchr(r->err, '\x1b'), "a raw ESC reached the terminal");
        cr_expect_null(strchr(r->err, '\x07'), "a raw BEL reached the terminal");
        cr_expect_null(strchr(r->err, '\r'), "a raw CR reached the terminal");
}

Test(output, by_default_a_flood_goes_to_the_log_and_not_to_the_terminal, .timeout = 300)
{
        char out[512], log[600];
        SfRun r;
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        run_flood(&r, out, NULL, "8");
        expect_bounded_and_inert(&r);
        cr_expect_null(strstr(r.err, "chatter"), "the target's output was shown:\n%.2000s", r.err);
        cr_expect(strstr(r.err, "/logs/worker-N.log"), "the run says where the output goes:\n%s",
                  r.err);
        snprintf(log, sizeof(log), "%s/logs/worker-1.log", out);
        size_t len = 0;
        uint8_t *text = sf_read(log, &len);
        cr_assert_not_null(text, "%s exists", log);
        cr_expect_gt(len, 100000, "the log holds the output (%zu bytes)", len);
        cr_expect(memmem(text, len, "flood: \x1b[2J", 11), "the log holds the bytes as written");
        cr_expect_leq(len, 16u << 20, "the log is rotated at 16 MiB");
        free(text);
        sf_run_free(&r);
}

Test(output, passed_through_a_flood_is_escaped_and_rate_limited, .timeout = 300)
{
        char out[512];
        SfRun r;
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        run_flood(&r, out, "pass", "8");
        expect_bounded_and_inert(&r);
        cr_expect(strstr(r.err, "flood: \\x1b[2J\\x1b]0;owned\\x07 noise\\r\\u009b31m chatter\n") ||
                      strstr(r.err, "flood: \\x1b[2J\\x1b]0;owned\\x07 noise\\r\\x9b31m chatter\n"),
                  "the output is shown, escaped:\n%.2000s", r.err);
        cr_expect(strstr(r.err, "of the target's output not shown") &&
                      strstr(r.err, "/logs/worker-1.log"),
                  "one line says how much was dropped and where it all is:\n%.2000s",
                  r.err + (strlen(r.err) > 2000 ? strlen(r.err) - 2000 : 0));
        sf_run_free(&r);
}

Test(output, discarded_a_flood_is_neither_shown_nor_logged, .timeout = 300)
{
        char out[512], logs[600];
        SfRun r;
        struct stat st;
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        run_flood(&r, out, "discard", "4");
        expect_bounded_and_inert(&r);
        cr_expect_null(strstr(r.err, "chatter"), "%.2000s", r.err);
        cr_expect_lt(strlen(r.err), 4096, "only snapfuzz's own lines:\n%s", r.err);
        snprintf(logs, sizeof(logs), "%s/logs", out);
        cr_expect_neq(stat(logs, &st), 0, "no log directory");
        sf_run_free(&r);
}

/* The target's last words reach crash.json whatever --target-output and
 * --close-fd-mask say (the mask closes stdout here; stderr carries the
 * assertion). */
static void expect_crash_output(const char *mode, const char *mask)
{
        char out[512], seeds[512], path[700];
        char *dir = sf_tmpdir();
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(path, sizeof(path), "%s/bang", seeds);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("!", f);
        fclose(f);
        SfRun r;
        const char *args[] = {"run", sf_target("flood"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--max-total-time",
                              "60",  "--target-output",
                              mode,  "--close-fd-mask",
                              mask,  NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "a crash (exit 1), got %d:\n%.4000s", r.exit_code, r.err);
        expect_bounded_and_inert(&r);
        char *id = sf_only_crash(out);
        char *output = sf_crash_field(out, id, "output");
        cr_expect(strstr(output, "assertion 'input is not a bang' failed"),
                  "%s, mask %s: crash.json's output lacks the assertion:\n%s", mode, mask, output);
        free(output);
        free(id);
        sf_run_free(&r);
}

Test(output, a_crash_keeps_the_targets_last_output_when_it_is_discarded, .timeout = 300)
{
        expect_crash_output("discard", "0");
}

Test(output, a_crash_keeps_the_targets_last_output_when_stdout_is_closed, .timeout = 300)
{
        expect_crash_output("log", "1");
}

/* --close-fd-mask 3 closes stdout and stderr, but a sanitizer's report
 * still reaches crash.json (as libFuzzer keeps it), so the crash is still
 * classified by it. */
Test(output, with_both_closed_a_sanitizer_report_still_classifies_the_crash, .timeout = 300)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {"run",
                              sf_target("deaths_asan_overflow"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              "120",
                              "--close-fd-mask",
                              "3",
                              NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "a crash (exit 1), got %d:\n%.4000s", r.exit_code, r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        char *message = sf_crash_field(out, id, "message");
        cr_expect_str_eq(kind, "asan", "message: %s", message);
        cr_expect(strstr(message, "heap-buffer-overflow"), "%s", message);
        free(kind);
        free(message);
        free(id);
        sf_run_free(&r);
}

/* Two bugs hit thousands of times: one line when each is new, a count in
 * the status line, one summary line per id; never a line per sighting. */
Test(output, duplicate_crashes_under_keep_going_are_counted_not_printed, .timeout = 300)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {"run",
                              sf_target("twobugs"),
                              "--out",
                              out,
                              "--workers",
                              "2",
                              "--keep-going",
                              "--max-total-time",
                              "10",
                              "--no-minimize",
                              "--status-every",
                              "2",
                              NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "crashes found (exit 1), got %d:\n%.4000s", r.exit_code,
                     r.err);
        cJSON *crashes = NULL;
        char path[700];
        snprintf(path, sizeof(path), "%s/stats.json", out);
        size_t len;
        uint8_t *stats = sf_read(path, &len);
        cr_assert_not_null(stats);
        cJSON *j = cJSON_ParseWithLength((const char *)stats, len);
        cr_assert_not_null(j);
        crashes = cJSON_GetObjectItem(j, "crashes");
        double stored = cJSON_GetNumberValue(crashes);
        cr_expect_gt(stored, 20, "the bugs are hit again and again (%g stored)", stored);
        cr_expect_eq(sf_count_crashes(out), 2, "two ids");
        size_t lines = count_of(r.err, "\n");
        size_t crash_lines = count_of(r.err, "snapfuzz: crash ");
        cr_expect_leq(crash_lines, 2 * 2, "at most a new-crash and a summary line per id:\n%s",
                      r.err);
        cr_expect_lt(lines, 30, "the run printed %zu lines:\n%s", lines, r.err);
        cr_expect(strstr(r.err, " (2 unique)"), "the status counts them:\n%s", r.err);
        cr_expect_eq(count_of(r.err, " times\n"), 2, "one summary line per id:\n%s", r.err);
        cJSON_Delete(j);
        free(stats);
        sf_run_free(&r);
}
