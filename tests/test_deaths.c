/*
 * Every way a runner can die: for each, snapfuzz finds the input from an
 * empty corpus (a one-byte gate, so mutation and thus replay are involved),
 * recovers it exactly (its first byte is the gate), verifies it in a fresh
 * runner, classifies it with the right kind and stores it; `reproduce`
 * replays it.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

static void expect_death(const char *target, char gate, const char *kind, const char *message,
                         const char *rss_limit, const char *malloc_limit)
{
        char *dir = sf_tmpdir();
        char out[512], input[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {
            "run",
            sf_target(target),
            "--out",
            out,
            "--workers",
            "1",
            "--timeout",
            "1",
            "--rss-limit-mb",
            rss_limit,
            "--malloc-limit-mb",
            malloc_limit,
            "--max-total-time",
            "120",
            NULL,
        };
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "%s: expected a crash (exit 1), got %d:\n%s", target,
                     r.exit_code, r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        char *got_kind = sf_crash_field(out, id, "kind");
        char *got_msg = sf_crash_field(out, id, "message");
        char *reproduced = sf_crash_field(out, id, "reproduced");
        cr_expect_str_eq(got_kind, kind, "%s: kind (message: %s)", target, got_msg);
        if (message)
                cr_expect(strstr(got_msg, message), "%s: message '%s' lacks '%s'", target, got_msg,
                          message);
        cr_expect_str_eq(reproduced, "true", "%s: the rebuilt input crashes a fresh runner",
                         target);
        snprintf(input, sizeof(input), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *in = sf_read(input, &len);
        cr_assert(in && len >= 1 && in[0] == (uint8_t)gate,
                  "%s: the recovered input starts with the gate byte '%c'", target, gate);
        free(in);

        const char *rargs[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 60, rargs);
        cr_expect_eq(r.exit_code, 1, "%s: reproduce still crashes:\n%s", target, r.out);
        char want[64];
        snprintf(want, sizeof(want), "REPRODUCED: %s", kind);
        cr_expect(strstr(r.out, want), "%s: reproduce says '%s':\n%s", target, want, r.out);
        sf_run_free(&r);
        free(got_kind);
        free(got_msg);
        free(reproduced);
        free(id);
}

#define DEATH_TEST(name, gate, kind, message)                                                      \
        Test(deaths, name, .timeout = 300)                                                         \
        {                                                                                          \
                expect_death("deaths_" #name, gate, kind, message, "2048", "2048");                \
        }

DEATH_TEST(segv, 'S', "segv", "SIGSEGV on address 0x40")
DEATH_TEST(bus, 'B', "bus", NULL)
DEATH_TEST(fpe, 'F', "fpe", NULL)
DEATH_TEST(ill, 'I', "ill", NULL)
DEATH_TEST(abort, 'A', "abort", NULL)
DEATH_TEST(stack_overflow, 'R', "stack-overflow", "stack overflow")
DEATH_TEST(heap_corruption, 'H', "abort", NULL)
DEATH_TEST(close_fds, 'C', "segv", "SIGSEGV on address 0x80")
DEATH_TEST(overwrite_input, 'W', "overwrite-input", "const input")
DEATH_TEST(asan_overflow, 'O', "asan", "heap-buffer-overflow")
DEATH_TEST(asan_uaf, 'U', "asan", "heap-use-after-free")
DEATH_TEST(ubsan_overflow, 'N', "ubsan", "signed integer overflow")

Test(deaths, rss_limit_is_kind_oom, .timeout = 300)
{
        /* The malloc limit would stop the one 512 MiB allocation first. */
        expect_death("deaths_oom", 'M', "oom", "RSS limit", "200", "0");
}

static cJSON *crash_json(const char *out, const char *id)
{
        char path[700];
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        uint8_t *text = sf_read(path, &len);
        cJSON *j = cJSON_Parse((const char *)text);
        free(text);
        cr_assert_not_null(j);
        return j;
}

Test(deaths, state_dependent_crash_is_stored_as_the_shortest_suffix, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char out[512], path[800];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {"run", sf_target("deaths_state"), "--out", out, "--workers",
                              "1",   "--max-total-time",        "120",   NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "expected a crash:\n%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        cJSON *j = crash_json(out, id);
        cr_expect_str_eq(cJSON_GetObjectItem(j, "kind")->valuestring, "abort");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "reproduced")),
                  "the history replay reproduced it");
        const cJSON *st = cJSON_GetObjectItem(j, "state_dependent");
        cr_assert_not_null(st, "the last input alone does not crash: state-dependent");
        int first = (int)cJSON_GetObjectItem(st, "first")->valuedouble;
        int last = (int)cJSON_GetObjectItem(st, "last")->valuedouble;
        int length = (int)cJSON_GetObjectItem(st, "length")->valuedouble;
        cr_expect_eq(length, last - first + 1);
        cr_expect_geq(length, 3, "three 'G' inputs are needed");

        /* The shortest suffix starts at the first of the three 'G' inputs
         * and ends at the third: both ends start with 'G'. */
        if (cJSON_IsTrue(cJSON_GetObjectItem(st, "sequence_files"))) {
                size_t len;
                snprintf(path, sizeof(path), "%s/crashes/%s/sequence/%08d", out, id, first);
                uint8_t *in = sf_read(path, &len);
                cr_assert(in && len >= 1 && in[0] == 'G', "the suffix starts with a 'G' input");
                free(in);
                snprintf(path, sizeof(path), "%s/crashes/%s/sequence/%08d", out, id, last);
                in = sf_read(path, &len);
                cr_assert(in && len >= 1 && in[0] == 'G', "the suffix ends with a 'G' input");
                free(in);
        }

        const char *rargs[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 60, rargs);
        cr_expect_eq(r.exit_code, 1, "reproduce replays the sequence:\n%s%s", r.out, r.err);
        char want[96];
        snprintf(want, sizeof(want), "state-dependent: replaying %d inputs", length);
        cr_expect(strstr(r.out, want), "%s", r.out);
        cr_expect(strstr(r.out, "REPRODUCED: abort"), "%s", r.out);
        sf_run_free(&r);
        cJSON_Delete(j);
}

Test(deaths, one_huge_allocation_is_kind_oom_by_the_malloc_limit, .timeout = 300)
{
        expect_death("deaths_malloc_limit", 'Z', "oom", "malloc limit", "2048", "1024");
}

Test(deaths, one_huge_allocation_in_an_asan_target_is_kind_oom, .timeout = 300)
{
        expect_death("deaths_asan_malloc_limit", 'Z', "oom", "exceeds maximum supported size",
                     "2048", "1024");
}

Test(deaths, a_scribbled_record_is_detected_and_no_wrong_input_is_stored, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {"run", sf_target("deaths_scribble"), "--out", out, "--workers",
                              "1",   "--max-total-time",           "120",   NULL};
        sf_run(&r, 200, args);
        cr_expect_eq(r.exit_code, 1, "a crash that cannot be stored still fails the run:\n%s",
                     r.err);
        cr_expect(strstr(r.err, "could not be rebuilt: the batch description fails its checksum"),
                  "the problem is named:\n%s", r.err);
        cr_expect_eq(sf_count_crashes(out), 0, "no input is stored from a scribbled record");
        sf_run_free(&r);
}
