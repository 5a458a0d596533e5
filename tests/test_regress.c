/*
 * `snapfuzz regress` and the quarantine, on the real binary and the real
 * tests/targets/regress_pair.c, built with its bugs (regress_buggy) and
 * with two of them fixed (regress_fixed): the exit status a CI job sees,
 * the verdicts in OUT/regress.json and on stdout, a state-dependent crash
 * replayed through its sequence/, a quarantined crash that passes and
 * that a run fuzzes past, and quarantine lists that are not what they
 * should be.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sfrun.h"

static void put_file(const char *dir, const char *name, const void *data, size_t len)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "%s", path);
        cr_assert_eq(fwrite(data, 1, len, f), len);
        fclose(f);
}

/* A directory @name under @dir holding one file per input. */
static char *corpus_dir(const char *dir, const char *name, const char *const *inputs)
{
        char *path = malloc(1024);
        snprintf(path, 1024, "%s/%s", dir, name);
        cr_assert_eq(mkdir(path, 0755), 0);
        for (int i = 0; inputs[i]; i++) {
                char file[16];
                snprintf(file, sizeof(file), "in%d", i);
                put_file(path, file, inputs[i], strlen(inputs[i]));
        }
        return path;
}

static cJSON *read_json(const char *path)
{
        size_t len;
        char *text = (char *)sf_read(path, &len);
        cr_assert_not_null(text, "%s is missing", path);
        cJSON *j = cJSON_ParseWithLength(text, len);
        free(text);
        cr_assert_not_null(j, "%s is not JSON", path);
        return j;
}

/* OUT/regress.json's verdict of stored crash @id ("" when not listed). */
static char *verdict_of(const char *out, const char *id)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/regress.json", out);
        cJSON *j = read_json(path);
        const cJSON *c;
        char *v = strdup("");
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "crashes"))
        {
                if (strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id) == 0) {
                        free(v);
                        v = strdup(cJSON_GetObjectItem(c, "verdict")->valuestring);
                }
        }
        cJSON_Delete(j);
        return v;
}

static char *report_result(const char *out)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/regress.json", out);
        cJSON *j = read_json(path);
        char *v = strdup(cJSON_GetObjectItem(j, "result")->valuestring);
        cJSON_Delete(j);
        return v;
}

/* snapfuzz regress TARGET --out OUT [CORPUS]; returns the exit status. */
static int regress(const char *target, const char *out, const char *corpus, SfRun *r)
{
        const char *args[] = {"regress", sf_target(target), "--out", out, "--workers", "1", corpus,
                              NULL};
        sf_run(r, 120, args);
        return r->exit_code;
}

/* A campaign on build @target from @seeds until its first crash. */
static void find_crash(const char *target, const char *out, const char *seeds)
{
        SfRun r;
        const char *args[] = {"run", sf_target(target),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--max-total-time",
                              "60",  "--runner-lifetime-ms",
                              "0",   NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "the run finds the planted crash:\n%s", r.err);
        sf_run_free(&r);
}

Test(regress, a_clean_corpus_passes)
{
        char *dir = sf_tmpdir(), out[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *inputs[] = {"hello", "BU", "HOL", "xyz", NULL};
        char *corpus = corpus_dir(dir, "corpus", inputs);
        SfRun r;
        cr_assert_eq(regress("regress_buggy", out, corpus, &r), 0, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "regress: PASS"), "%s", r.out);
        cr_expect(strstr(r.out, "0 stored crashes"), "%s", r.out);
        cr_expect_eq(sf_count_crashes(out), 0);
        char *res = report_result(out);
        cr_expect_str_eq(res, "pass");
        free(res);
        sf_run_free(&r);
}

Test(regress, a_crash_in_the_corpus_is_stored_and_fails_until_fixed)
{
        char *dir = sf_tmpdir(), out[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *inputs[] = {"hello", "BUG!", NULL};
        char *corpus = corpus_dir(dir, "corpus", inputs);
        SfRun r;
        cr_assert_eq(regress("regress_buggy", out, corpus, &r), 1, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "NEW "), "the new crash is named:\n%s", r.out);
        cr_expect(strstr(r.out, "regress: FAIL"), "%s", r.out);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "segv", "stored like any crash");
        sf_run_free(&r);

        /* The fixed build: the stored crash is fixed, the corpus clean. */
        cr_assert_eq(regress("regress_fixed", out, corpus, &r), 0, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "fixed"), "%s", r.out);
        char *v = verdict_of(out, id);
        cr_expect_str_eq(v, "fixed");
        sf_run_free(&r);
        free(v);
        free(kind);
        free(id);
}

Test(regress, a_stored_crash_fails_while_it_reproduces)
{
        char *dir = sf_tmpdir(), out[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *seeds_in[] = {"BUGGY", NULL};
        char *seeds = corpus_dir(dir, "seeds", seeds_in);
        find_crash("regress_buggy", out, seeds);
        char *id = sf_only_crash(out);
        SfRun r;
        cr_assert_eq(regress("regress_buggy", out, NULL, &r), 1, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "REPRODUCED"), "%s", r.out);
        cr_expect(strstr(r.out, id), "the crash is named:\n%s", r.out);
        char *v = verdict_of(out, id);
        cr_expect_str_eq(v, "reproduced");
        free(v);
        sf_run_free(&r);

        cr_assert_eq(regress("regress_fixed", out, NULL, &r), 0, "%s%s", r.out, r.err);
        v = verdict_of(out, id);
        cr_expect_str_eq(v, "fixed");
        cr_expect(strstr(r.out, "1 fixed"), "%s", r.out);
        free(v);
        sf_run_free(&r);
        /* Fixed is reported, not forgotten: the crash stays stored. */
        cr_expect_eq(sf_count_crashes(out), 1);
        free(id);
}

Test(regress, a_state_dependent_crash_is_replayed_through_its_sequence)
{
        char *dir = sf_tmpdir(), out[600], path[900];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *seeds_in[] = {"G1", "G2", "G3", NULL};
        char *seeds = corpus_dir(dir, "seeds", seeds_in);
        find_crash("regress_buggy", out, seeds);
        char *id = sf_only_crash(out);
        snprintf(path, sizeof(path), "%s/crashes/%s/sequence/00000001", out, id);
        cr_assert_eq(access(path, F_OK), 0, "the crash is state-dependent (sequence/)");
        SfRun r;
        cr_assert_eq(regress("regress_buggy", out, NULL, &r), 1, "%s%s", r.out, r.err);
        char *v = verdict_of(out, id);
        cr_expect_str_eq(v, "reproduced", "its last input alone does not crash: %s", r.out);
        free(v);
        sf_run_free(&r);
        cr_assert_eq(regress("regress_fixed", out, NULL, &r), 0, "%s%s", r.out, r.err);
        v = verdict_of(out, id);
        cr_expect_str_eq(v, "fixed");
        free(v);
        sf_run_free(&r);
        free(id);
}

/* crash.json's count of @id. */
static int crash_count(const char *out, const char *id)
{
        char path[900];
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        cJSON *j = read_json(path);
        int n = (int)cJSON_GetObjectItem(j, "count")->valuedouble;
        cJSON_Delete(j);
        return n;
}

Test(regress, a_quarantined_crash_passes_and_a_run_fuzzes_past_it)
{
        char *dir = sf_tmpdir(), out[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *seeds_in[] = {"HOLD", NULL};
        char *seeds = corpus_dir(dir, "seeds", seeds_in);
        /* The build whose only bug is the known one (crash ids name the
         * module: the other build's would be other ids). */
        find_crash("regress_fixed", out, seeds);
        char *id = sf_only_crash(out);
        SfRun r;
        const char *q[] = {"crashes",  "--out",           out, "--quarantine", id,
                           "--reason", "upstream bug 12", NULL};
        sf_run(&r, 30, q);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);

        /* Still crashes, on either build: quarantined, so it passes. */
        cr_assert_eq(regress("regress_fixed", out, NULL, &r), 0, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "upstream bug 12"), "the reason is shown:\n%s", r.out);
        char *v = verdict_of(out, id);
        cr_expect_str_eq(v, "quarantined");
        free(v);
        sf_run_free(&r);

        /* A run meets it at once (the seed) and goes on to its budget. */
        int before = crash_count(out, id);
        const char *run[] = {"run", sf_target("regress_fixed"), seeds, "--out", out, "--workers",
                             "1",   "--max-total-time",         "3",   NULL};
        sf_run(&r, 60, run);
        cr_expect_eq(r.exit_code, 0, "a quarantined crash does not fail the run:\n%s", r.err);
        cr_expect(strstr(r.err, "is quarantined"), "%s", r.err);
        cr_expect(strstr(r.err, "[   3."), "the run went on to its 3 s budget:\n%s", r.err);
        cr_expect_gt(crash_count(out, id), before, "it was counted again");
        cr_expect_eq(sf_count_crashes(out), 1, "and not filed as a new crash");
        sf_run_free(&r);

        /* Off the list, the known crash fails regress again. */
        const char *uq[] = {"crashes", "--out", out, "--unquarantine", id, NULL};
        sf_run(&r, 30, uq);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        cr_assert_eq(regress("regress_fixed", out, NULL, &r), 1, "%s%s", r.out, r.err);
        v = verdict_of(out, id);
        cr_expect_str_eq(v, "reproduced");
        free(v);
        sf_run_free(&r);
        free(id);
}

/* Lines in @s. */
static int lines(const char *s)
{
        int n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

static void put_bytes(const char *path, const char *data, size_t len)
{
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(data, 1, len, f), len);
        fclose(f);
}

Test(regress, a_hostile_quarantine_list_is_refused_in_one_line)
{
        char *dir = sf_tmpdir(), out[600], path[900];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(path, sizeof(path), "%s/quarantine.json", out);
        cr_assert_eq(mkdir(out, 0755), 0);
        size_t big = 2u << 20;
        char *deep = malloc(big + 64);
        char *reason = malloc(8000);
        char *many = malloc(5000 * 40 + 64);
        memset(deep, '[', big);
        snprintf(reason, 8000, "{\"quarantined\": [{\"id\": \"0123456789abcdef\", \"reason\": \"");
        memset(reason + strlen(reason), 'x', 5000);
        snprintf(reason + strlen(reason) + 5000, 64, "\"}]}");
        strcpy(many, "{\"quarantined\": [");
        for (int i = 0; i < 5000; i++)
                sprintf(many + strlen(many), "%s{\"id\": \"%016x\"}", i ? "," : "", i);
        strcat(many, "]}");
        struct {
                const char *data;
                size_t len;
        } bad[] = {
            {"", 0},
            {"not json", 8},
            {"\x00\x1b[2J\xff\xfe", 6},
            {deep, 100000},
            {deep, big},
            {"{\"quarantined\": 5}", 18},
            {"[]", 2},
            {"{\"quarantined\": [7]}", 20},
            {"{\"quarantined\": [{\"id\": 7}]}", 28},
            {"{\"quarantined\": [{\"id\": \"../../etc/passwd\"}]}", 46},
            {"{\"quarantined\": [{\"id\": \"ab\\u001b[2J\"}]}", 41},
            {"{\"quarantined\": [{\"id\": \"0123456789abcdef\", \"signature\": {\"x\": 1}}]}", 67},
            {reason, strlen(reason)},
            {many, strlen(many)},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                put_bytes(path, bad[i].data, bad[i].len);
                SfRun r;
                cr_assert_eq(regress("regress_fixed", out, NULL, &r), 2, "case %zu: %s%s", i, r.out,
                             r.err);
                cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0 && lines(r.err) == 1,
                          "case %zu: one line:\n%s", i, r.err);
                cr_expect(strstr(r.err, "quarantine.json"), "case %zu names the file: %s", i,
                          r.err);
                cr_expect(!strchr(r.err, '\x1b'), "case %zu: no escape reaches the terminal", i);
                sf_run_free(&r);

                const char *run[] = {"run",       sf_target("regress_fixed"),
                                     "--out",     out,
                                     "--workers", "1",
                                     "--runs",    "10",
                                     NULL};
                sf_run(&r, 60, run);
                cr_expect_eq(r.exit_code, 2, "case %zu: run refuses it:\n%s", i, r.err);
                sf_run_free(&r);

                const char *q[] = {"crashes",          "--out", out, "--quarantine",
                                   "0123456789abcdef", NULL};
                sf_run(&r, 30, q);
                cr_expect_eq(r.exit_code, 2, "case %zu: crashes --quarantine refuses it:\n%s", i,
                             r.err);
                sf_run_free(&r);
                size_t len;
                uint8_t *now = sf_read(path, &len);
                cr_expect(len == bad[i].len && memcmp(now, bad[i].data, len) == 0,
                          "case %zu: the file is left as it was", i);
                free(now);
        }
        free(deep);
        free(reason);
        free(many);
}

Test(regress, a_stored_crash_that_cannot_be_replayed_is_not_a_pass)
{
        char *dir = sf_tmpdir(), out[600], path[900];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *seeds_in[] = {"BUGGY", NULL};
        char *seeds = corpus_dir(dir, "seeds", seeds_in);
        find_crash("regress_buggy", out, seeds);
        char *id = sf_only_crash(out);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        const char *edited = "{\"kind\": \"segv\", \"target\": \"/x.so\", \"limits\": "
                             "{\"timeout_ms\": \"\\u001b[2J\"}}";
        put_bytes(path, edited, strlen(edited));
        SfRun r;
        cr_assert_eq(regress("regress_fixed", out, NULL, &r), 2, "%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "UNREADABLE"), "%s", r.out);
        cr_expect(strstr(r.err, "limits.timeout_ms"), "the field is named:\n%s", r.err);
        cr_expect(!strchr(r.out, '\x1b') && !strchr(r.err, '\x1b'));
        char *res = report_result(out);
        cr_expect_str_eq(res, "unreadable");
        free(res);
        sf_run_free(&r);
        free(id);
}

Test(regress, a_crash_that_is_not_quarantined_still_stops_the_run)
{
        char *dir = sf_tmpdir(), out[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *seeds_in[] = {"A", NULL};
        char *seeds = corpus_dir(dir, "seeds", seeds_in);
        SfRun r;
        const char *first[] = {"run", sf_target("twobugs"), seeds, "--out", out, "--workers",
                               "1",   "--max-total-time",   "60",  NULL};
        sf_run(&r, 120, first);
        cr_assert_eq(r.exit_code, 1, "%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        const char *q[] = {"crashes", "--out", out, "--quarantine", id, NULL};
        sf_run(&r, 30, q);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);

        /* The seed hits the quarantined bug at once, over and over; the
         * other one ('B') is a byte away and ends the run when stored. */
        const char *again[] = {"run", sf_target("twobugs"), seeds, "--out", out, "--workers",
                               "1",   "--max-total-time",   "60",  NULL};
        sf_run(&r, 120, again);
        cr_expect_eq(r.exit_code, 1, "the new crash fails the run:\n%s", r.err);
        cr_expect_eq(sf_count_crashes(out), 2);
        cr_expect(!strstr(r.err, "[  60."), "it stopped at the new crash:\n%s", r.err);
        sf_run_free(&r);
        free(id);
}

Test(regress, an_output_directory_a_run_holds_is_refused)
{
        char *dir = sf_tmpdir(), out[600], stats[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        const char *args[] = {"run", sf_target("regress_fixed"), "--out", out, "--workers",
                              "1",   "--max-total-time",         "60",    NULL};
        pid_t pid = sf_start(dir, args);
        for (int t = 0; t < 600 && access(stats, F_OK) != 0; t++)
                usleep(50000);
        cr_assert_eq(access(stats, F_OK), 0, "the run started");
        SfRun r;
        cr_expect_eq(regress("regress_fixed", out, NULL, &r), 2, "%s%s", r.out, r.err);
        char want[64];
        snprintf(want, sizeof(want), "in use by a run (pid %d)", (int)pid);
        cr_expect(strstr(r.err, want), "names the run:\n%s", r.err);
        sf_run_free(&r);
        kill(pid, SIGTERM);
        sf_wait(pid, 60);
}
