/*
 * Minimization end to end, on the real binary: a 4 KiB seed whose crash
 * needs six bytes ("FUZZ!!" in random bytes, tests/targets/magic6.c) is
 * minimized automatically after recovery and on demand with
 * `snapfuzz minimize`, the result crashes an independent loader, and
 * `snapfuzz crashes` lists it. No figure here is timed: the machine is
 * noisy; scripts/bench-minimize.sh measures.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

#define NEEDLE "FUZZ!!"
#define SEED_LEN 4096

typedef struct Case {
        char *dir;
        char out[512];
        char *id;
        char input[600];
        char minimized[600];
} Case;

/* A seed directory with one 4 KiB file: random bytes (a fixed sequence)
 * with the needle in the middle. */
static void write_seed(const char *dir)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/seeds", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/seeds/big", dir);
        uint8_t buf[SEED_LEN];
        uint64_t x = 0x9e3779b97f4a7c15u;
        for (size_t i = 0; i < sizeof(buf); i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf[i] = (uint8_t)x;
        }
        memcpy(buf + 2045, NEEDLE, 6);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(buf, 1, sizeof(buf), f), sizeof(buf));
        fclose(f);
}

/* `snapfuzz run` on the seed (which crashes in the warm-up pass) with
 * @extra options; returns the case with its one crash. */
static Case run_seed(const char *target_name, const char *const *extra, SfRun *r)
{
        Case c = {.dir = sf_tmpdir()};
        write_seed(c.dir);
        char seeds[512];
        snprintf(seeds, sizeof(seeds), "%s/seeds", c.dir);
        snprintf(c.out, sizeof(c.out), "%s/out", c.dir);
        const char *args[32] = {"run", sf_target(target_name), seeds, "--out",  c.out, "--workers",
                                "1",   "--max-total-time",     "60",  "--seed", "1"};
        int n = 11;
        for (int i = 0; extra && extra[i]; i++)
                args[n++] = extra[i];
        args[n] = NULL;
        sf_run(r, 120, args);
        cr_assert_eq(r->exit_code, 1, "expected exit 1 (crash found), got %d; stderr:\n%s",
                     r->exit_code, r->err);
        c.id = sf_only_crash(c.out);
        snprintf(c.input, sizeof(c.input), "%s/crashes/%s/input", c.out, c.id);
        snprintf(c.minimized, sizeof(c.minimized), "%s/crashes/%s/minimized", c.out, c.id);
        return c;
}

static void case_free(Case *c)
{
        free(c->dir);
        free(c->id);
}

/* crash.json's "minimize" object. */
static cJSON *minimize_field(const Case *c)
{
        char *s = sf_crash_field(c->out, c->id, "minimize");
        cJSON *j = cJSON_Parse(s);
        free(s);
        cr_assert(cJSON_IsObject(j), "crash.json has no \"minimize\" object");
        return j;
}

static void expect_needle_only(const Case *c)
{
        size_t len;
        uint8_t *min = sf_read(c->minimized, &len);
        cr_assert_not_null(min, "no %s", c->minimized);
        cr_expect_eq(len, 6, "minimized to %zu bytes, not 6", len);
        cr_expect_arr_eq(min, NEEDLE, len < 6 ? len : 6);
        free(min);
        int st = sf_plainrun(sf_target("magic6"), c->minimized, 10);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
                  "the minimized input must abort an independent loader (status %d)", st);
}

Test(minimize, a_new_crash_is_minimized_after_recovery, .timeout = 200)
{
        SfRun r;
        /* The default budget is 1 s; on a loaded machine the passes can
         * need more, and this test is about the passes completing. */
        const char *budget[] = {"--minimize-time", "60", NULL};
        Case c = run_seed("magic6", budget, &r);
        cr_expect(strstr(r.err, "minimized 4096 -> 6 bytes"), "no minimization line in:\n%s",
                  r.err);
        sf_run_free(&r);
        expect_needle_only(&c);

        char *v = sf_crash_field(c.out, c.id, "minimized_len");
        cr_expect_str_eq(v, "6");
        free(v);
        v = sf_crash_field(c.out, c.id, "input_len");
        cr_expect_str_eq(v, "4096", "the input stays as it crashed");
        free(v);
        cJSON *m = minimize_field(&c);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "mode")), "auto");
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "stopped")), "done");
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(m, "ms")), "the time is reported");
        cr_expect_gt(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "trials")), 1);
        cJSON_Delete(m);
        case_free(&c);
}

Test(minimize, the_command_honours_a_trial_budget_then_continues, .timeout = 200)
{
        SfRun r;
        const char *no_min[] = {"--no-minimize", NULL};
        Case c = run_seed("magic6", no_min, &r);
        sf_run_free(&r);
        struct stat st;
        cr_expect_neq(stat(c.minimized, &st), 0, "--no-minimize leaves no minimized file");
        char *v = sf_crash_field(c.out, c.id, "minimized_len");
        cr_expect_str_eq(v, "");
        free(v);

        const char *budget[] = {"minimize", c.id, "--out", c.out, "--max-trials", "20", NULL};
        sf_run(&r, 60, budget);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.out, "minimized 4096 -> "), "%s", r.out);
        cr_expect(strstr(r.out, "in 20 trials"), "%s", r.out);
        cr_expect(strstr(r.out, "max-trials"), "%s", r.out);
        sf_run_free(&r);
        size_t len;
        uint8_t *min = sf_read(c.minimized, &len);
        cr_assert_not_null(min);
        cr_expect(len < SEED_LEN && len > 6, "20 trials take it part of the way: %zu", len);
        cr_expect(memmem(min, len, NEEDLE, 6), "a budget-stopped result still crashes");
        free(min);

        const char *more[] = {"minimize", c.id, "--out", c.out, NULL};
        sf_run(&r, 60, more);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.out, "starting from the stored minimized input"), "%s", r.out);
        cr_expect(strstr(r.out, "minimized 4096 -> 6 bytes"), "%s", r.out);
        cr_expect(strstr(r.out, "done"), "%s", r.out);
        sf_run_free(&r);
        expect_needle_only(&c);
        cJSON *m = minimize_field(&c);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(m, "mode")), "command");
        cJSON_Delete(m);

        const char *repro[] = {"reproduce", c.id, "--out", c.out, NULL};
        sf_run(&r, 60, repro);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.out, "minimized 6 bytes"), "reproduce names the minimized input:\n%s",
                  r.out);
        cr_expect(strstr(r.out, "input    4096 bytes"), "and still replays the input:\n%s", r.out);
        sf_run_free(&r);
        case_free(&c);
}

Test(minimize, crashes_lists_stored_crashes_and_corrupt_entries, .timeout = 200)
{
        SfRun r;
        Case c = run_seed("magic6", NULL, &r);
        sf_run_free(&r);
        char path[700];
        snprintf(path, sizeof(path), "%s/crashes/0123456789abcdef", c.out);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/crashes/0123456789abcdef/crash.json", c.out);
        FILE *f = fopen(path, "w");
        fputs("{\"kind\": ", f);
        fclose(f);

        const char *args[] = {"crashes", "--out", c.out, NULL};
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.out, "MINIMIZED"), "a header row:\n%s", r.out);
        char *line = strstr(r.out, c.id);
        cr_assert_not_null(line, "the crash is listed:\n%s", r.out);
        char *eol = strchr(line, '\n');
        if (eol)
                *eol = '\0';
        cr_expect(strstr(line, "abort"), "%s", line);
        cr_expect(strstr(line, " 4096 "), "input length: %s", line);
        cr_expect(strstr(line, " 6 "), "minimized length: %s", line);
        cr_expect(strstr(line, "yes"), "reproduced: %s", line);
        if (eol)
                *eol = '\n';
        line = strstr(r.out, "0123456789abcdef");
        cr_assert_not_null(line, "the corrupt entry is listed:\n%s", r.out);
        cr_expect(strstr(line, "CORRUPT"), "%s", line);
        cr_expect(strstr(r.out, "2 crashes"), "%s", r.out);
        sf_run_free(&r);
        case_free(&c);
}

Test(minimize, bad_ids_and_directories_get_one_line_and_exit_2, .timeout = 60)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        mkdir(out, 0755);
        const char *cases[][8] = {
            {"minimize", "0123456789abcdef", "--out", out, NULL},
            {"minimize", "../../etc", "--out", out, NULL},
            {"minimize", "--out", out, NULL},
            {"minimize", "0123456789abcdef", "--max-trials", "x", "--out", out, NULL},
            {"crashes", "--out", "/nonexistent/snapfuzz-out", NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SfRun r;
                sf_run(&r, 30, cases[i]);
                cr_expect_eq(r.exit_code, 2, "case %zu: exit %d, stderr:\n%s", i, r.exit_code,
                             r.err);
                char *nl = strchr(r.err, '\n');
                cr_expect(nl && nl[1] == '\0', "case %zu: one line, not:\n%s", i, r.err);
                cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0, "case %zu: %s", i, r.err);
                sf_run_free(&r);
        }
        SfRun r;
        const char *empty[] = {"crashes", "--out", out, NULL};
        sf_run(&r, 30, empty);
        cr_expect_eq(r.exit_code, 0);
        cr_expect(strstr(r.out, "no crashes"), "%s", r.out);
        sf_run_free(&r);
        free(dir);
}

Test(minimize, a_corrupt_record_is_exit_2, .timeout = 200)
{
        SfRun r;
        const char *no_min[] = {"--no-minimize", NULL};
        Case c = run_seed("magic6", no_min, &r);
        sf_run_free(&r);
        FILE *f = fopen(c.input, "w");
        fputs("FUZZ", f);
        fclose(f);
        const char *args[] = {"minimize", c.id, "--out", c.out, NULL};
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 2, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "truncated"), "%s", r.err);
        sf_run_free(&r);
        case_free(&c);
}

Test(minimize, hangs_are_skipped_automatically_and_minimized_on_demand, .timeout = 200)
{
        SfRun r;
        const char *fast[] = {"--timeout", "0.2", NULL};
        Case c = run_seed("magic6_hang", fast, &r);
        sf_run_free(&r);
        char *v = sf_crash_field(c.out, c.id, "kind");
        cr_expect_str_eq(v, "timeout");
        free(v);
        struct stat st;
        cr_expect_neq(stat(c.minimized, &st), 0, "the automatic pass skips hangs");
        cJSON *m = minimize_field(&c);
        cr_expect(cJSON_IsString(cJSON_GetObjectItem(m, "skipped")), "and says why");
        cJSON_Delete(m);

        /* On demand, with a short timeout: each trial that hangs costs it. */
        const char *args[] = {"minimize", c.id,           "--out", c.out, "--timeout",
                              "0.1",      "--max-trials", "40",    NULL};
        sf_run(&r, 120, args);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "is a hang"), "a note about the cost:\n%s", r.err);
        sf_run_free(&r);
        size_t len;
        uint8_t *min = sf_read(c.minimized, &len);
        cr_assert_not_null(min);
        cr_expect_lt(len, SEED_LEN);
        cr_expect(memmem(min, len, NEEDLE, 6));
        free(min);
        case_free(&c);
}

/* Ctrl-C during `minimize` keeps the best input found so far: it is
 * written, the report says it was interrupted, and the exit status is 0. A
 * hang (deaths_all's 'T') makes each kept trial cost the whole timeout, so
 * the interruption lands mid-way. */
Test(minimize, ctrl_c_keeps_and_reports_the_best_input_so_far, .timeout = 180)
{
        char *dir = sf_tmpdir();
        char seeds[600], out[600], path[700];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        snprintf(path, sizeof(path), "%s/t", seeds);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("TTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT", f); /* 56 bytes */
        fclose(f);
        SfRun r;
        const char *run[] = {
            "run", sf_target("deaths_all"), seeds, "--out", out, "--workers", "1", "--timeout",
            "0.3", "--no-minimize",         NULL};
        sf_run(&r, 60, run);
        cr_assert_eq(r.exit_code, 1, "the hang is found; stderr:\n%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        const char *min[] = {"minimize", id,          "--out", out, "--max-time",
                             "120",      "--timeout", "1",     NULL};
        pid_t pid = sf_start(dir, min);
        sleep(3);
        kill(-pid, SIGINT);
        int code = sf_wait(pid, 60);
        size_t len;
        snprintf(path, sizeof(path), "%s/stdout", dir);
        char *text = (char *)sf_read(path, &len);
        cr_expect_eq(code, 0, "stdout:\n%s", text);
        cr_expect(strstr(text, "stopped  interrupted"), "stdout:\n%s", text);
        snprintf(path, sizeof(path), "%s/crashes/%s/minimized", out, id);
        uint8_t *m = sf_read(path, &len);
        cr_expect_lt(len, 56, "the best so far is smaller");
        cr_expect(len > 0 && m[0] == 'T');
        free(m);
        free(text);
        free(id);
}
