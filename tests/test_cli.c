/*
 * Bad input never crashes snapfuzz: each case gets one clear line on
 * stderr saying what is wrong, and the documented exit code (2 for usage
 * and input errors). Plus the life cycle a user sees: Ctrl-C, resuming
 * from an output directory, the status line and stats.json.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "snapfuzz/record.h"
#include "tests/sfrun.h"

static int count_lines(const char *s)
{
        int n = 0;
        for (; *s; s++)
                n += *s == '\n';
        return n;
}

static void expect_usage_error(const char *const *args, const char *needle)
{
        SfRun r;
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 2, "exit code %d for bad input; stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, needle), "stderr should mention '%s':\n%s", needle, r.err);
        cr_expect_eq(count_lines(r.err), 1, "one line, got:\n%s", r.err);
        cr_expect(strstr(r.err, "snapfuzz: error: "), "prefixed: %s", r.err);
        sf_run_free(&r);
}

Test(cli, missing_target)
{
        const char *args[] = {"run", "/nonexistent/target.so", NULL};
        expect_usage_error(args, "cannot open the target");
}

Test(cli, target_that_is_not_elf)
{
        char *dir = sf_tmpdir();
        char path[512];
        snprintf(path, sizeof(path), "%s/harness.c", dir);
        FILE *f = fopen(path, "w");
        fputs("int main(void) { return 0; }\n", f);
        fclose(f);
        const char *args[] = {"run", path, NULL};
        expect_usage_error(args, "not an ELF file");
}

Test(cli, elf_executable_is_not_a_shared_object)
{
        char *dir = sf_tmpdir();
        const char *args[] = {"run", sf_env("PLAINRUN"), "--out", dir, NULL};
        expect_usage_error(args, "cannot dynamically load position-independent executable");
}

Test(cli, shared_object_without_entry_point)
{
        const char *args[] = {"run", sf_target("no_entry"), "--out", "/tmp/sf-cli-noentry", NULL};
        expect_usage_error(args, "does not export LLVMFuzzerTestOneInput");
}

Test(cli, target_whose_constructor_crashes)
{
        const char *args[] = {"run", sf_target("ctor_crash"), "--out", "/tmp/sf-cli-ctor", NULL};
        expect_usage_error(args, "crashed while loading");
}

Test(cli, target_whose_initialize_crashes)
{
        const char *args[] = {"run", sf_target("init_crash"), "--out", "/tmp/sf-cli-init", NULL};
        expect_usage_error(args, "LLVMFuzzerInitialize");
}

Test(cli, many_workers_whose_initialize_crashes_give_one_line)
{
        /* The workers load the target at the same time; when they all fail,
         * the first failure is reported once and the rest are put away. */
        const char *args[] = {"run",   sf_target("init_crash"), "--workers", "12",
                              "--out", "/tmp/sf-cli-init12",    NULL};
        expect_usage_error(args, "LLVMFuzzerInitialize");
}

Test(cli, output_directory_that_cannot_be_created)
{
        const char *args[] = {"run", sf_target("recorder"), "--out", "/etc/passwd/out", NULL};
        expect_usage_error(args, "cannot create the output directory");
}

Test(cli, bad_option_values)
{
        const char *t = sf_target("recorder");
        const char *a1[] = {"run", t, "--workers", "0", NULL};
        expect_usage_error(a1, "--workers takes a whole number");
        const char *a2[] = {"run", t, "--timeout", "soon", NULL};
        expect_usage_error(a2, "--timeout takes a number of seconds");
        const char *a3[] = {"run", t, "--runs", "-5", NULL};
        expect_usage_error(a3, "--runs takes a whole number");
        const char *a4[] = {"run", t, "--sandbox", "bogus", NULL};
        expect_usage_error(a4, "--sandbox takes 'strict', 'log' or 'off'");
        const char *a5[] = {"run", t, "--frobnicate", NULL};
        expect_usage_error(a5, "unknown option --frobnicate");
        const char *a6[] = {"run", NULL};
        expect_usage_error(a6, "run needs a target");
        const char *a7[] = {"run", t, "/nonexistent-corpus-dir", NULL};
        expect_usage_error(a7, "corpus directory /nonexistent-corpus-dir");
        const char *a8[] = {"launch", NULL};
        expect_usage_error(a8, "unknown command 'launch'");
        const char *a9[] = {"run", t, "--max-len", "0", NULL};
        expect_usage_error(a9, "--max-len takes a whole number");
}

/* `snapfuzz __worker` is internal, but a command line it cannot read
 * exactly (a bug, or a worker binary from another snapfuzz) is named, not
 * guessed at: atoi("abc") would have made it use descriptor 0. */
Test(cli, a_worker_with_a_bad_command_line_names_the_option)
{
        const char *t = sf_target("recorder");
        const char *args[] = {"__worker", "--target",  t,          "--cmd-fd", "abc",
                              "--evt-fd", "1",         "--shm-fd", "0",        "--cov-fd",
                              "0",        "--max-len", "10",       NULL};
        SfRun r;
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 65, "WORKER_EXIT_PROTOCOL, got %d; stderr:\n%s", r.exit_code,
                     r.err);
        cr_expect(strstr(r.err, "snapfuzz: error: __worker: --cmd-fd: 'abc' is not a descriptor"),
                  "stderr: %s", r.err);
        cr_expect_eq(count_lines(r.err), 1, "one line, got:\n%s", r.err);
        sf_run_free(&r);

        const char *unknown[] = {"__worker", "--target", t,   "--cmd-fd", "0", "--evt-fd",
                                 "1",        "--shm-fd", "0", "--cov-fd", "0", "--max-len",
                                 "10",       "--turbo",  "1", NULL};
        sf_run(&r, 60, unknown);
        cr_expect_eq(r.exit_code, 65, "got %d; stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "unknown option --turbo"), "stderr: %s", r.err);
        sf_run_free(&r);
}

Test(cli, reproduce_unknown_crash_id)
{
        char *dir = sf_tmpdir();
        const char *args[] = {"reproduce", "0123456789abcdef", "--out", dir, NULL};
        expect_usage_error(args, "no crash with id 0123456789abcdef");
}

Test(cli, reproduce_corrupt_crash_json)
{
        char *dir = sf_tmpdir();
        char path[512];
        snprintf(path, sizeof(path), "%s/crashes/00000000deadbeef", dir);
        char cmd[2048];
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %s && printf '{\"kind\": ' > %s/crash.json && "
                 "printf 'AAAA' > %s/input",
                 path, path, path);
        cr_assert_eq(system(cmd), 0);
        const char *args[] = {"reproduce", "00000000deadbeef", "--out", dir, NULL};
        expect_usage_error(args, "not valid JSON");
}

Test(cli, help_and_version)
{
        SfRun r;
        const char *a1[] = {"--help", NULL};
        sf_run(&r, 10, a1);
        cr_expect_eq(r.exit_code, 0);
        cr_expect(strstr(r.out, "exit status"));
        sf_run_free(&r);
        const char *a2[] = {"--version", NULL};
        sf_run(&r, 10, a2);
        cr_expect_eq(r.exit_code, 0);
        cr_expect(strstr(r.out, "snapfuzz "));
        sf_run_free(&r);
}

static cJSON *read_stats(const char *out);

/* Runs snapfuzz with @args, which must succeed, and returns OUT/stats.json. */
static cJSON *stats_of_run(const char **args, const char *out)
{
        SfRun r;
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);
        return read_stats(out);
}

static cJSON *read_stats(const char *out)
{
        char path[512];
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out);
        uint8_t *s = sf_read(path, &len);
        cr_assert_not_null(s, "no stats.json in %s", out);
        cJSON *j = cJSON_Parse((const char *)s);
        free(s);
        cr_assert_not_null(j, "stats.json is not JSON");
        return j;
}

Test(lifecycle, ctrl_c_stops_cleanly_without_a_crash, .timeout = 60)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run", sf_target("recorder"), "--out", out, "--workers",
                              "2",   "--status-every",      "1",     NULL};
        pid_t pid = sf_start(dir, args);
        sleep(3);
        /* As a terminal does: the whole process group gets SIGINT. */
        kill(-pid, SIGINT);
        int code = sf_wait(pid, 30);
        char path[600], cmd[2048];
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        cr_expect_eq(code, 0, "interrupted run with no crash exits 0; stderr:\n%s", err);
        cr_expect(strstr(err, "SIGINT received"), "%s", err);
        cr_expect(strstr(err, "done ["), "the summary is printed:\n%s", err);
        cr_expect(strstr(err, "execs"), "a status line was printed:\n%s", err);
        cr_expect_eq(sf_count_crashes(out), 0, "shutting down never records a crash");
        cJSON *st = read_stats(out);
        cr_expect_str_eq(cJSON_GetObjectItem(st, "status")->valuestring, "interrupted");
        cr_expect_gt(cJSON_GetObjectItem(st, "execs")->valuedouble, 1000);
        cJSON_Delete(st);
        snprintf(cmd, sizeof(cmd), "ls -a %s %s/corpus | grep -c '^\\.tmp\\.' || true", out, out);
        FILE *p = popen(cmd, "r");
        int tmp = -1;
        cr_assert_eq(fscanf(p, "%d", &tmp), 1);
        pclose(p);
        cr_expect_eq(tmp, 0, "no temporary files are left behind");
        free(err);
}

Test(lifecycle, a_second_run_resumes_from_the_output_directory, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {
            "run", sf_target("recorder"), "--out", out, "--workers", "1", "--runs", "200000", NULL};
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);
        cJSON *st = read_stats(out);
        int corpus = (int)cJSON_GetObjectItem(st, "corpus")->valuedouble;
        cr_expect_str_eq(cJSON_GetObjectItem(st, "status")->valuestring, "done");
        cJSON_Delete(st);
        cr_assert_gt(corpus, 1, "the first run found coverage");

        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        char want[64];
        snprintf(want, sizeof(want), "(%d resumed from", corpus);
        cr_expect(strstr(r.err, want), "the second run loads the first one's corpus:\n%s", r.err);
        sf_run_free(&r);
}

static int count_files(const char *dir)
{
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "ls -A %s | grep -vc '^\\.' || true", dir);
        FILE *p = popen(cmd, "r");
        int n = -1;
        cr_assert_eq(fscanf(p, "%d", &n), 1);
        pclose(p);
        return n;
}

/* The schedule's view of the corpus (which inputs are superseded, which
 * favoured) comes from each input's features, which a resumed run gets
 * back by running every file of OUT/corpus: all of them, however many
 * runners that takes, and nothing is deleted. */
Test(lifecycle, a_resumed_run_rebuilds_the_schedule_from_the_corpus_files, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512], corpus_dir[600], runs[32];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(corpus_dir, sizeof(corpus_dir), "%s/corpus", out);
        SfRun r;
        const char *first[] = {
            "run", sf_target("recorder"), "--out", out, "--workers", "1", "--runs", "300000", NULL};
        sf_run(&r, 60, first);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);
        cJSON *st = read_stats(out);
        cr_expect_str_eq(cJSON_GetObjectItem(st, "schedule")->valuestring, "energy");
        int active1 = (int)cJSON_GetObjectItem(st, "corpus_active")->valuedouble;
        cJSON_Delete(st);
        int files = count_files(corpus_dir);
        cr_assert_gt(files, RECORD_FINDS_SLOTS, "enough files for several seed runners: %d", files);

        /* Only the seed pass: as many executions as there are files. */
        snprintf(runs, sizeof(runs), "%d", files);
        const char *again[] = {
            "run", sf_target("recorder"), "--out", out, "--workers", "1", "--runs", runs, NULL};
        sf_run(&r, 60, again);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);
        st = read_stats(out);
        int corpus = (int)cJSON_GetObjectItem(st, "corpus")->valuedouble;
        int active2 = (int)cJSON_GetObjectItem(st, "corpus_active")->valuedouble;
        int favored = (int)cJSON_GetObjectItem(st, "corpus_favored")->valuedouble;
        cJSON_Delete(st);
        cr_expect_eq(corpus, files, "every file is scheduled again");
        cr_expect_eq(count_files(corpus_dir), files, "no file is deleted or added");
        cr_expect(favored >= 1 && favored <= active2 && active2 <= corpus,
                  "favoured %d, active %d, corpus %d", favored, active2, corpus);
        /* Equal-length inputs are ordered by their measured speed, which
         * may differ between runs; the rest is the same. */
        int slack = active1 / 10 > 2 ? active1 / 10 : 2;
        cr_expect(abs(active2 - active1) <= slack, "active: %d after the first run, %d resumed",
                  active1, active2);
}

Test(lifecycle, stats_report_what_the_coordinator_itself_costs, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {
            "run", sf_target("recorder"), "--out", out, "--workers", "2", "--runs", "300000", NULL};
        cJSON *st = stats_of_run(args, out);
        const cJSON *cpu = cJSON_GetObjectItem(st, "coordinator_cpu_s");
        const cJSON *events = cJSON_GetObjectItem(st, "worker_events");
        cr_assert(cJSON_IsNumber(cpu) && cJSON_IsNumber(events), "both figures are in stats.json");
        /* Every batch ends with one event, and a 300000-run budget takes
         * more than one batch per worker. */
        cr_expect_geq(events->valuedouble, 3);
        const cJSON *loop = cJSON_GetObjectItem(st, "coordinator_loop_cpu_s");
        cr_assert(cJSON_IsNumber(loop));
        cr_expect_leq(loop->valuedouble, cpu->valuedouble, "the loop is a part of the process");
        cr_expect_gt(cpu->valuedouble, 0);
        /* Its workers kept both cores busy for the whole run; the
         * coordinator mostly waits for them. */
        double elapsed = cJSON_GetObjectItem(st, "elapsed_s")->valuedouble;
        cr_expect_lt(cpu->valuedouble, elapsed * 0.5,
                     "the coordinator's own time (%.3f s in %.3f s), not its workers'",
                     cpu->valuedouble, elapsed);
        cJSON_Delete(st);
}

/* A runner takes batch after batch for --runner-lifetime-ms (default
 * 500), and stats.json says how many processes ran the batches; 0 gives
 * every batch a fresh runner forked from the snapshot. */
static void batches_and_runners(const char *lifetime, double *batches, double *runners)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {
            "run", sf_target("recorder"),  "--out",  out, "--workers", "1", "--max-total-time",
            "3",   "--runner-lifetime-ms", lifetime, NULL};
        cJSON *st = stats_of_run(args, out);
        const cJSON *b = cJSON_GetObjectItem(st, "batches");
        const cJSON *n = cJSON_GetObjectItem(st, "runners_forked");
        cr_assert(cJSON_IsNumber(b) && cJSON_IsNumber(n), "both figures are in stats.json");
        *batches = b->valuedouble;
        *runners = n->valuedouble;
        cJSON_Delete(st);
}

Test(lifecycle, a_runner_takes_many_batches_unless_told_otherwise, .timeout = 120)
{
        double batches, runners;
        batches_and_runners("500", &batches, &runners);
        cr_expect_geq(batches, 20, "3 s of 20 ms batches");
        cr_expect_geq(runners, 1);
        cr_expect_leq(runners * 3, batches, "%.0f runners ran %.0f batches", runners, batches);

        batches_and_runners("0", &batches, &runners);
        cr_expect_geq(batches, 10);
        cr_expect_eq(runners, batches, "--runner-lifetime-ms 0: %.0f runners for %.0f batches",
                     runners, batches);
}
