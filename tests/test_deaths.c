/*
 * Every way a runner can die: for each, snapfuzz finds the input from an
 * empty corpus (a one-byte gate, so mutation and thus replay are involved),
 * recovers it exactly (its first byte is the gate), verifies it in a fresh
 * runner, classifies it with the right kind and stores it; `reproduce`
 * replays it.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

static void expect_death_within(const char *target, char gate, const char *kind,
                                const char *message, const char *rss_limit,
                                const char *malloc_limit, const char *timeout)
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
            timeout,
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

static void expect_death(const char *target, char gate, const char *kind, const char *message,
                         const char *rss_limit, const char *malloc_limit)
{
        expect_death_within(target, gate, kind, message, rss_limit, malloc_limit, "1");
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
DEATH_TEST(asan_leak, 'L', "leak", "LeakSanitizer: detected memory leaks")
/* Built with clang's default static runtime (no -shared-libasan): found
 * the same way, through clang's shared runtime preloaded. */
DEATH_TEST(asan_static_overflow, 'O', "asan", "heap-buffer-overflow")
DEATH_TEST(ubsan_static_overflow, 'N', "ubsan", "signed integer overflow")

/* A sanitizer whose runtime cannot be loaded into a worker is one line
 * that says so, and the usage/load exit code, not a loader error. */
Test(deaths, a_memory_sanitizer_target_is_refused_with_a_reason, .timeout = 60)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {
            "run", sf_target("deaths_msan_static"), "--out", out, "--max-total-time", "5", NULL};
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 2, "exit %d:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "built with MemorySanitizer, which snapfuzz cannot load"),
                  "stderr: %s", r.err);
        sf_run_free(&r);
}

static char *stats_of(const char *out)
{
        char path[700];
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out);
        return (char *)sf_read(path, &len);
}

/* Runs @target with one worker into a fresh output directory (@out, of
 * 512 bytes), with @what limiting the run ("--max-total-time", "5", ...),
 * and checks the exit status. */
static void run_leak_target(const char *target, char *out, const char *what, const char *value,
                            const char *leaks, int want_exit)
{
        snprintf(out, 512, "%s/out", sf_tmpdir());
        SfRun r;
        /* Each minimization trial of a leak runs LeakSanitizer's check
         * (some 40 ms): the default 1 s budget can run out on a loaded
         * machine before the input is down to its byte. */
        const char *args[] = {
            "run", sf_target(target), "--out", out, "--workers", "1", what, value, "--detect-leaks",
            leaks, "--minimize-time", "60",    NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, want_exit, "%s: exit %d:\n%s", target, r.exit_code, r.err);
        sf_run_free(&r);
}

/* A leak's signature and stack are where the lost memory was allocated,
 * symbolized; the minimized input is the one byte that leaks. */
/* Whether llvm-symbolizer is where recovery/symbolize.c looks for it. */
static bool have_symbolizer(void)
{
        return system("command -v llvm-symbolizer >/dev/null 2>&1 || "
                      "ls /usr/bin/llvm-symbolizer-* >/dev/null 2>&1") == 0;
}

Test(deaths, a_leak_is_signed_by_where_the_memory_was_allocated, .timeout = 300)
{
        char out[512], path[800];
        size_t len;

        cr_assert(have_symbolizer(), "signatures name functions only with llvm-symbolizer, "
                                     "which is not installed (scripts/setup.sh installs llvm)");
        run_leak_target("deaths_asan_leak", out, "--max-total-time", "120", "1", 1);
        char *id = sf_only_crash(out);
        char *sig = sf_crash_field(out, id, "signature");
        cr_expect(strstr(sig, "leak|deaths_asan_leak.so!die:"), "signature %s", sig);
        snprintf(path, sizeof(path), "%s/crashes/%s/minimized", out, id);
        uint8_t *min = sf_read(path, &len);
        cr_expect(min && len == 1 && min[0] == 'L', "minimized to the one byte that leaks");
        free(min);
        free(sig);
        free(id);
}

/* More allocations than frees is not a leak: memory a global still holds is
 * checked and dismissed, and the run ends clean. */
Test(deaths, reachable_memory_is_not_a_leak, .timeout = 300)
{
        char out[512];

        run_leak_target("deaths_asan_kept", out, "--max-total-time", "5", "1", 0);
        char *stats = stats_of(out);
        cJSON *j = cJSON_Parse(stats);
        cr_assert_not_null(j);
        double suspects = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "leak_suspects"));
        double dismissed = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "leak_suspects_dismissed"));
        cr_expect_gt(suspects, 0, "'P' inputs allocate more than they free");
        cr_expect_eq(dismissed, suspects, "every suspect was reachable memory");
        cJSON_Delete(j);
        free(stats);
}

/* --detect-leaks 0: no checks, no leak reported. */
Test(deaths, detect_leaks_0_turns_leak_checks_off, .timeout = 300)
{
        char out[512];

        run_leak_target("deaths_asan_leak", out, "--runs", "200000", "0", 0);
        char *stats = stats_of(out);
        cr_expect(strstr(stats, "\"leak_suspects\":\t0"), "%s", stats);
        free(stats);
}

static cJSON *crash_json(const char *out, const char *id);

/* A leak suspect runs again in its runner, and so does every seed (for
 * its features); those runs are history: two 'G' seeds, the first also
 * filling a cache (a suspect), abort on the third 'G' execution, which is
 * one of the first seed's runs again. The stored sequence holds the first
 * seed again, and reproduce replays it with those runs. */
Test(deaths, an_input_run_twice_for_leaks_is_part_of_the_history, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char seeds[512], out[512], path[800];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%d", seeds, i + 1);
                FILE *f = fopen(path, "w");
                cr_assert_not_null(f);
                fprintf(f, "G%c", 'a' + i);
                fclose(f);
        }
        SfRun r;
        const char *args[] = {"run", sf_target("deaths_asan_state"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--max-total-time",
                              "60",  NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        cJSON *j = crash_json(out, id);
        cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "kind")), "abort");
        const cJSON *st = cJSON_GetObjectItem(j, "state_dependent");
        cr_expect_not_null(st, "the second G alone is fine");
        /* The three executions the crash needs: the first seed, its run
         * again, the second seed; none can go. */
        const cJSON *seq = cJSON_GetObjectItem(st, "sequence");
        cr_assert_eq(cJSON_GetArraySize(seq), 3, "three 'G' executions");
        const cJSON *second = cJSON_GetArrayItem(seq, 1);
        cr_expect_eq(cJSON_GetArrayItem(second, 0)->valuedouble, 1, "iteration 1");
        cr_expect_eq(cJSON_GetArrayItem(second, 1)->valuedouble, 1, "run again");
        cJSON_Delete(j);
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/sequence/00000001", out, id);
        uint8_t *first = sf_read(path, &len);
        snprintf(path, sizeof(path), "%s/crashes/%s/sequence/00000002", out, id);
        size_t again_len;
        uint8_t *again = sf_read(path, &again_len);
        cr_expect(first && again && len == 2 && again_len == 2 && memcmp(first, again, 2) == 0 &&
                      again[0] == 'G',
                  "the first seed is there twice");
        free(first);
        free(again);
        const char *rargs[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 60, rargs);
        cr_expect_eq(r.exit_code, 1, "reproduce:\n%s", r.out);
        cr_expect(strstr(r.out, "REPRODUCED: abort"), "%s", r.out);
        sf_run_free(&r);
        free(id);
}

/* --keep-going on a crash that recurs: every death is either stored or
 * counted as a duplicate of a stack already queued, and the run still ends
 * in about --max-total-time (the helper does not fall behind for ever). */
Test(deaths, a_recurring_crash_under_keep_going_ends_in_time, .timeout = 300)
{
        char out[512];
        snprintf(out, sizeof(out), "%s/out", sf_tmpdir());
        SfRun r;
        const char *args[] = {"run",
                              sf_target("deaths_segv"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--max-total-time",
                              "6",
                              "--no-minimize",
                              NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "%s", r.err);
        sf_run_free(&r);
        char *stats = stats_of(out);
        cJSON *j = cJSON_Parse(stats);
        cr_assert_not_null(j);
        double deaths = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "runner_deaths"));
        double stored = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "crashes"));
        double skipped = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "duplicate_deaths_skipped"));
        double lost = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "inputs_lost"));
        double elapsed = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "elapsed_s"));
        cr_expect_gt(stored, 1, "the crash recurs under --keep-going");
        cr_expect_eq(deaths, stored + skipped + lost,
                     "deaths %g = stored %g + skipped %g + lost %g", deaths, stored, skipped, lost);
        cr_expect_eq(lost, 0);
        cr_expect_lt(elapsed, 40, "the run went on for %g s", elapsed);
        cJSON_Delete(j);
        free(stats);
}

Test(deaths, rss_limit_is_kind_oom, .timeout = 300)
{
        /* The malloc limit would stop the one 512 MiB allocation first. A
         * long timeout: on a loaded machine touching 512 MiB can take a
         * second of wall time. */
        expect_death_within("deaths_oom", 'M', "oom", "RSS limit", "200", "0", "20");
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
        /* Every batch in a fresh runner: the three inputs must be in the
         * history of one batch for its replay to find them (a runner that
         * takes many batches would carry the state over, worker/runner.h). */
        const char *args[] = {
            "run", sf_target("deaths_state"), "--out", out, "--workers", "1", "--max-total-time",
            "120", "--runner-lifetime-ms",    "0",     NULL};
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
        int executions = (int)cJSON_GetObjectItem(st, "executions")->valuedouble;
        cr_expect_eq(length, last - first + 1);
        /* A find runs again at once (for its features): that run counts. */
        cr_expect_geq(executions, 3, "three 'G' executions are needed");
        cr_expect_geq(executions, length);

        /* The sequence is the executions the crash needs, in order: it
         * ends with the third 'G' and has at least three of them. */
        int n_seq = (int)cJSON_GetObjectItem(st, "sequence_length")->valuedouble;
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(st, "sequence_files")));
        cr_expect_geq(n_seq, 3);
        cr_expect_leq(n_seq, executions);
        int g = 0;
        for (int i = 1; i <= n_seq; i++) {
                size_t len;
                snprintf(path, sizeof(path), "%s/crashes/%s/sequence/%08d", out, id, i);
                uint8_t *in = sf_read(path, &len);
                cr_assert_not_null(in, "%s", path);
                g += len >= 1 && in[0] == 'G';
                if (i == n_seq)
                        cr_expect(len >= 1 && in[0] == 'G', "the sequence ends with a 'G'");
                free(in);
        }
        cr_expect_geq(g, 3, "three 'G' executions are needed");
        const cJSON *rep = cJSON_GetObjectItem(j, "reproduction");
        cr_expect_str_eq(cJSON_GetObjectItem(rep, "class")->valuestring, "history");
        cr_expect_eq((int)cJSON_GetObjectItem(rep, "history_len")->valuedouble, n_seq);
        cr_expect_eq((int)cJSON_GetObjectItem(rep, "from_len")->valuedouble, executions);

        const char *rargs[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 60, rargs);
        cr_expect_eq(r.exit_code, 1, "reproduce replays the sequence:\n%s%s", r.out, r.err);
        char want[96];
        snprintf(want, sizeof(want), "state-dependent: replaying %d inputs (sequence/", n_seq);
        cr_expect(strstr(r.out, want), "%s", r.out);
        cr_expect(strstr(r.out, "REPRODUCED: abort"), "%s", r.out);
        sf_run_free(&r);
        cJSON_Delete(j);
}

/* A global table that overflows on the 64th distinct key: the runner's
 * history is hundreds or thousands of inputs, the crash needs 63 of them
 * and the last. The stored sequence/ is that short, and a plain loader
 * that knows nothing of snapfuzz crashes with its files run in order in
 * one process, and not with the last one alone. */
/* Runs deaths_table and checks its crash (see the tests below); @long_seed
 * makes inputs about 1.5 KiB, so that the history, as a list of inputs, is
 * longer than a runner of --max-len 2048 holds (64 KiB). */
static void expect_table_sequence(bool long_seed)
{
        char *dir = sf_tmpdir();
        char out[512], path[800], seeds[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        snprintf(path, sizeof(path), "%s/1", seeds);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        /* 64 executions at least (63 keys and the last), each over 1 KiB. */
        fprintf(f, "Qa");
        for (int i = 0; long_seed && i < 1500; i++)
                fputc('x', f);
        fclose(f);
        SfRun r;
        const char *args[] = {"run",
                              sf_target("deaths_table"),
                              seeds,
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              "150",
                              "--runner-lifetime-ms",
                              "0",
                              "--max-len",
                              long_seed ? "2048" : "8",
                              "--minimize-time",
                              "120",
                              NULL};
        sf_run(&r, 330, args);
        cr_assert_eq(r.exit_code, 1, "expected a crash:\n%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        cJSON *j = crash_json(out, id);
        cr_expect_str_eq(cJSON_GetObjectItem(j, "kind")->valuestring, "abort");
        const cJSON *rep = cJSON_GetObjectItem(j, "reproduction");
        cr_assert_not_null(rep);
        cr_assert_str_eq(cJSON_GetObjectItem(rep, "class")->valuestring, "history");
        int n_seq = (int)cJSON_GetObjectItem(rep, "history_len")->valuedouble;
        int from = (int)cJSON_GetObjectItem(rep, "from_len")->valuedouble;
        cr_log_info("table: the history of %d executions shrank to %d", from, n_seq);
        cr_expect_geq(n_seq, 64, "63 distinct keys, then the 64th");
        cr_expect_leq(n_seq, 70, "a sequence a person can read (from %d)", from);
        cr_expect_geq(from, n_seq);
        const cJSON *st = cJSON_GetObjectItem(j, "state_dependent");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(st, "sequence_files")));
        double bytes = cJSON_GetNumberValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(st, "minimize"), "list_bytes"));
        if (long_seed)
                cr_expect_gt(bytes, 65536, "the history needed a worker with room for it (%.0f)",
                             bytes);

        char *paths[80];
        int n = n_seq < 80 ? n_seq : 80;
        for (int i = 0; i < n; i++) {
                snprintf(path, sizeof(path), "%s/crashes/%s/sequence/%08d", out, id, i + 1);
                paths[i] = strdup(path);
                struct stat sb;
                cr_assert_eq(stat(path, &sb), 0, "%s", path);
        }
        int status = sf_plainrun_seq(sf_target("deaths_table"), paths, n, 60);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "the plain loader aborts with the sequence in order (status 0x%x)", status);
        status = sf_plainrun(sf_target("deaths_table"), paths[n - 1], 60);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the last input alone is fine (status 0x%x)", status);
        for (int i = 0; i < n; i++)
                free(paths[i]);

        const char *rargs[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 60, rargs);
        cr_expect_eq(r.exit_code, 1, "reproduce replays the sequence:\n%s%s", r.out, r.err);
        cr_expect(strstr(r.out, "REPRODUCED: abort"), "%s", r.out);
        sf_run_free(&r);
        cJSON_Delete(j);
}

Test(deaths, a_table_overflow_is_stored_as_a_short_sequence_a_plain_loader_replays, .timeout = 400)
{
        expect_table_sequence(false);
}

Test(deaths, a_table_history_longer_than_a_runner_holds_is_shrunk_too, .timeout = 400)
{
        expect_table_sequence(true);
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

/* Without a symbolizer nothing is guessed: the run says so once, crash.json
 * says "symbolized": false, and the signature names every frame by module
 * and offset (dladdr's exported name for the harness's frame is not used,
 * as it would be for a static function after it). */
Test(deaths, without_a_symbolizer_a_signature_is_module_and_offset_and_says_so, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        setenv("SNAPFUZZ_SYMBOLIZER", "/nonexistent/llvm-symbolizer", 1);
        SfRun r;
        const char *args[] = {"run", sf_target("deaths_segv"), "--out", out, "--workers",
                              "1",   "--max-total-time",       "120",   NULL};
        sf_run(&r, 200, args);
        cr_assert_eq(r.exit_code, 1, "expected a crash (exit 1), got %d:\n%s", r.exit_code, r.err);
        const char *note = "SNAPFUZZ_SYMBOLIZER=/nonexistent/llvm-symbolizer is not an executable";
        const char *first = strstr(r.err, note);
        cr_expect(first, "the run says there is no symbolizer:\n%s", r.err);
        cr_expect(!first || !strstr(first + 1, note), "and says it once:\n%s", r.err);
        char *id = sf_only_crash(out);
        char *sig = sf_crash_field(out, id, "signature");
        char *symbolized = sf_crash_field(out, id, "symbolized");
        cr_expect_str_eq(symbolized, "false");
        cr_expect(strncmp(sig, "segv|deaths_segv.so+0x", 22) == 0, "signature %s", sig);
        cr_expect(!strchr(sig, '!'), "no frame is named: %s", sig);
        sf_run_free(&r);
        free(symbolized);
        free(sig);
        free(id);
}

/* The crash of the only seed @seed of target "grow" (tests/targets/grow.c)
 * under --rss-limit-mb 256 --timeout 1: its kind and message. */
static void grow_death(const char *seed, char **ret_kind, char **ret_message)
{
        char *dir = sf_tmpdir();
        char out[512], seeds[512], path[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(path, sizeof(path), "%s/seed", seeds);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(seed, f);
        fclose(f);
        SfRun r;
        const char *args[] = {"run", sf_target("grow"), seeds, "--out",     out, "--workers",
                              "1",   "--rss-limit-mb",  "256", "--timeout", "1", "--max-total-time",
                              "60",  "--no-minimize",   NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "a crash (exit 1), got %d:\n%s", r.exit_code, r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        *ret_kind = sf_crash_field(out, id, "kind");
        *ret_message = sf_crash_field(out, id, "message");
        free(id);
}

/* A memory blow-up slower than the timeout (320 MiB in some 2.5 s) is
 * `oom`, with the resident size seen, not a hang. */
Test(deaths, a_slow_memory_blowup_past_the_timeout_is_kind_oom, .timeout = 300)
{
        char *kind, *message;
        grow_death("M", &kind, &message);
        cr_expect_str_eq(kind, "oom", "message: %s", message);
        cr_expect(strstr(message, "MB seen, limit 256 MB"), "%s", message);
        free(kind);
        free(message);
}

/* An infinite loop that allocates nothing is still a hang. */
Test(deaths, a_hang_without_allocations_is_still_kind_timeout, .timeout = 300)
{
        char *kind, *message;
        grow_death("T", &kind, &message);
        cr_expect_str_eq(kind, "timeout", "message: %s", message);
        free(kind);
        free(message);
}
