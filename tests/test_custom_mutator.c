/*
 * Custom mutators end to end, on the real binary and the custom_frame test
 * targets (tests/targets/custom_frame.c): a bug behind a checksum only the
 * target's LLVMFuzzerCustomMutator writes (with LLVMFuzzerMutate doing the
 * mutating inside it) is found, stored exactly and reproduced, and is not
 * found without the custom mutator; a bug only the custom crossover's
 * output reaches is found; a custom mutator that is not deterministic is
 * reported as such and nothing wrong is stored; one that keeps state since
 * the runner started is rebuilt by replaying its batch from the seed.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

/* The target's frame_sum(): a test-side check that an input is a valid
 * frame, which only the custom mutator (or crossover) makes. */
static uint32_t frame_sum(const uint8_t *p, size_t n)
{
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h ^ (h >> 15);
}

static bool frame_valid(const uint8_t *d, size_t size)
{
        if (size < 7 || d[0] != 'F' || size != 7u + d[2])
                return false;
        const uint8_t *t = d + 3 + d[2];
        uint32_t sum =
            (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
        return sum == frame_sum(d + 1, 2u + d[2]);
}

typedef struct Run {
        char *out;
        SfRun r;
} Run;

static Run fuzz(const char *target, const char *seconds)
{
        char *dir = sf_tmpdir();
        Run run = {.out = malloc(strlen(dir) + 8)};
        snprintf(run.out, strlen(dir) + 8, "%s/out", dir);
        free(dir);
        const char *args[] = {
            "run", sf_target(target),  "--out", run.out, "--workers", "1", "--seed",
            "5",   "--max-total-time", seconds, NULL};
        sf_run(&run.r, 200, args);
        return run;
}

/* The only crash's record, input and recovery fields. */
static cJSON *crash_obj(const char *out, const char *id, const char *field)
{
        char *s = sf_crash_field(out, id, field);
        cJSON *j = cJSON_Parse(s);
        free(s);
        cr_assert_not_null(j, "crash.json has no %s object", field);
        return j;
}

static uint8_t *crash_input(const char *out, const char *id, size_t *len, char *path,
                            size_t pathlen)
{
        snprintf(path, pathlen, "%s/crashes/%s/input", out, id);
        uint8_t *in = sf_read(path, len);
        cr_assert_not_null(in, "no %s", path);
        return in;
}

Test(custom_mutator, a_bug_only_its_custom_mutator_reaches_is_found_and_stored_exactly,
     .timeout = 300)
{
        Run run = fuzz("custom_frame", "120");
        cr_assert_eq(run.r.exit_code, 1, "a crash is found (exit %d):\n%s", run.r.exit_code,
                     run.r.err);
        char *id = sf_only_crash(run.out);
        char *kind = sf_crash_field(run.out, id, "kind");
        cr_expect_str_eq(kind, "abort");
        char *rep = sf_crash_field(run.out, id, "reproduced");
        cr_expect_str_eq(rep, "true");
        cJSON *rec = crash_obj(run.out, id, "record");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(rec, "custom_mutator")),
                  "the record says the custom mutator made its inputs");
        cr_expect_null(cJSON_GetObjectItem(rec, "custom_crossover"));
        cJSON *rcv = crash_obj(run.out, id, "recovery");
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(rcv, "rebuilt_in_runner")),
                         "slot", "rebuilt in a runner, from the chain's slot");

        char path[600];
        size_t len;
        uint8_t *in = crash_input(run.out, id, &len, path, sizeof(path));
        cr_expect(frame_valid(in, len), "the stored input is a valid frame");
        cr_expect(len >= 11 && memcmp(in + 3, "BOOM", 4) == 0, "whose payload is the bug's");
        int st = sf_plainrun(sf_target("custom_frame"), path, 10);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "plainrun crashes on it (%d)", st);

        SfRun r;
        const char *args[] = {"reproduce", id, "--out", run.out, NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 1, "reproduce: still crashes\n%s", r.err);
        sf_run_free(&r);

        free(in);
        cJSON_Delete(rec);
        cJSON_Delete(rcv);
        free(rep);
        free(kind);
        free(id);
        sf_run_free(&run.r);
        free(run.out);
}

Test(custom_mutator, without_the_custom_mutator_the_same_bug_is_not_found, .timeout = 120)
{
        Run run = fuzz("custom_frame_plain", "6");
        cr_expect_eq(run.r.exit_code, 0, "nothing is found (exit %d):\n%s", run.r.exit_code,
                     run.r.err);
        cr_expect_eq(sf_count_crashes(run.out), 0);
        sf_run_free(&run.r);
        free(run.out);
}

Test(custom_mutator, its_custom_crossover_is_used, .timeout = 300)
{
        Run run = fuzz("custom_frame_cross", "120");
        cr_assert_eq(run.r.exit_code, 1, "a crash is found (exit %d):\n%s", run.r.exit_code,
                     run.r.err);
        char *id = sf_only_crash(run.out);
        cJSON *rec = crash_obj(run.out, id, "record");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(rec, "custom_crossover")));
        char path[600];
        size_t len;
        uint8_t *in = crash_input(run.out, id, &len, path, sizeof(path));
        cr_expect(frame_valid(in, len), "the stored input is a valid frame");
        cr_expect(len >= 2 && in[1] == 1, "made by the crossover (flag 1)");
        int st = sf_plainrun(sf_target("custom_frame_cross"), path, 10);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "plainrun crashes on it (%d)", st);
        free(in);
        cJSON_Delete(rec);
        free(id);
        sf_run_free(&run.r);
        free(run.out);
}

Test(custom_mutator, a_mutator_that_is_not_deterministic_is_named_and_nothing_wrong_is_stored,
     .timeout = 300)
{
        Run run = fuzz("custom_frame_nondet", "120");
        cr_expect_eq(run.r.exit_code, 1, "a crash happened (exit %d):\n%s", run.r.exit_code,
                     run.r.err);
        cr_expect(strstr(run.r.err, "custom mutator is not deterministic"),
                  "the log says why the input is not stored:\n%s", run.r.err);
        cr_expect_eq(sf_count_crashes(run.out), 0, "no wrong input stored");
        sf_run_free(&run.r);
        free(run.out);
}

Test(custom_mutator, a_mutator_with_state_since_the_fork_is_rebuilt_from_the_seed, .timeout = 300)
{
        Run run = fuzz("custom_frame_stateful", "120");
        cr_assert_eq(run.r.exit_code, 1, "a crash is found (exit %d):\n%s", run.r.exit_code,
                     run.r.err);
        char *id = sf_only_crash(run.out);
        cJSON *rcv = crash_obj(run.out, id, "recovery");
        cJSON *rec = crash_obj(run.out, id, "record");
        /* From its chain's slot a fresh runner's mutator has made fewer
         * calls than the dead one's, so the bytes differ and the rebuild
         * falls back to the seed; in the batch's first chain the two are
         * the same replay, and the slot is enough. */
        double chain =
            cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(rec, "chain"), "index"));
        const char *how = cJSON_GetStringValue(cJSON_GetObjectItem(rcv, "rebuilt_in_runner"));
        if (chain > 0)
                cr_expect_str_eq(how, "seed", "chain %g: rebuilt from %s", chain,
                                 how ? how : "(none)");
        else
                cr_expect(how && (strcmp(how, "slot") == 0 || strcmp(how, "seed") == 0), "%s",
                          how ? how : "(none)");
        cJSON_Delete(rec);
        char *rep = sf_crash_field(run.out, id, "reproduced");
        cr_expect_str_eq(rep, "true");
        char path[600];
        size_t len;
        uint8_t *in = crash_input(run.out, id, &len, path, sizeof(path));
        cr_expect(frame_valid(in, len));
        free(in);
        free(rep);
        cJSON_Delete(rcv);
        free(id);
        sf_run_free(&run.r);
        free(run.out);
}
