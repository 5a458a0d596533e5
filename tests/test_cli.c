/*
 * Bad input never crashes snapfuzz: each case gets one clear line on
 * stderr saying what is wrong, and the documented exit code (2 for usage
 * and input errors). Plus the life cycle a user sees: Ctrl-C, resuming
 * from an output directory, the status line and stats.json.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
        expect_usage_error(a7, "no corpus directory or input file /nonexistent-corpus-dir");
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
        /* Every command's own help, with examples, by -h or --help. */
        static const char *const cmds[] = {"run", "reproduce", "status", "minimize", "crashes"};
        for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
                for (int longform = 0; longform < 2; longform++) {
                        const char *a[] = {cmds[i], longform ? "--help" : "-h", NULL};
                        sf_run(&r, 10, a);
                        cr_expect_eq(r.exit_code, 0, "%s %s: %s", a[0], a[1], r.err);
                        cr_expect(strstr(r.out, "usage: snapfuzz "), "%s %s", a[0], a[1]);
                        cr_expect(strstr(r.out, "example"), "%s %s:\n%s", a[0], a[1], r.out);
                        sf_run_free(&r);
                }
        }
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
        /* The files it kept: entries replaced by shorter ones left. */
        int corpus = (int)cJSON_GetObjectItem(st, "corpus_files")->valuedouble;
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
 * runners that takes. The files are a cover of what the first run reached
 * (engine/coordinator.c, cover_disk): running them alone reaches every
 * feature again. */
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
        int features1 = (int)cJSON_GetObjectItem(st, "features")->valuedouble;
        int entries1 = (int)cJSON_GetObjectItem(st, "corpus")->valuedouble;
        int files1 = (int)cJSON_GetObjectItem(st, "corpus_files")->valuedouble;
        cJSON_Delete(st);
        int files = count_files(corpus_dir);
        cr_expect_eq(files, files1, "stats.json's corpus_files is what the directory holds");
        cr_expect_lt(files, entries1, "the files are fewer than the entries (%d)", entries1);
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
        int features2 = (int)cJSON_GetObjectItem(st, "features")->valuedouble;
        int files2 = (int)cJSON_GetObjectItem(st, "corpus_files")->valuedouble;
        cJSON_Delete(st);
        cr_expect_eq(corpus, files, "every file is scheduled again");
        cr_expect_geq(features2, features1,
                      "the files alone reach every feature of the first run: %d of %d", features2,
                      features1);
        int left = count_files(corpus_dir);
        cr_expect(left >= 1 && left <= files, "the files stay a cover: %d of %d", left, files);
        cr_expect_eq(left, files2, "stats.json's corpus_files is what the directory holds");
        cr_expect(favored >= 1 && favored <= active2 && active2 <= corpus,
                  "favoured %d, active %d, corpus %d", favored, active2, corpus);
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

/* --runs counts executions, not planned batch iterations: batches that end
 * early (a full finds area, a seed list) leave their unrun iterations to
 * later batches, and the last batches are cut to what is left. */
Test(lifecycle, runs_n_executes_exactly_n_inputs, .timeout = 240)
{
        static const char *const runs[] = {"1", "777", "50000", "100000"};
        static const char *const workers[] = {"1", "2"};
        for (size_t w = 0; w < 2; w++) {
                for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
                        char *dir = sf_tmpdir();
                        char out[512];
                        snprintf(out, sizeof(out), "%s/out", dir);
                        SfRun r;
                        const char *args[] = {"run",       sf_target("recorder"),
                                              "--out",     out,
                                              "--workers", workers[w],
                                              "--runs",    runs[i],
                                              NULL};
                        sf_run(&r, 120, args);
                        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
                        sf_run_free(&r);
                        cJSON *st = read_stats(out);
                        double execs = cJSON_GetObjectItem(st, "execs")->valuedouble;
                        cr_expect_eq(execs, strtod(runs[i], NULL),
                                     "--runs %s with %s workers executed %.0f inputs", runs[i],
                                     workers[w], execs);
                        cJSON_Delete(st);
                }
        }
}

/* Polls for @path to exist, up to @ms. */
static bool wait_for_file(const char *path, int ms)
{
        for (int t = 0; t < ms; t += 50) {
                if (access(path, F_OK) == 0)
                        return true;
                usleep(50000);
        }
        return false;
}

Test(lifecycle, a_second_run_on_a_busy_output_directory_is_refused, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512], stats[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        const char *args[] = {"run", sf_target("recorder"), "--out", out, "--workers", "1", NULL};
        pid_t pid = sf_start(dir, args);
        cr_assert(wait_for_file(stats, 30000), "the first run starts");

        SfRun r;
        sf_run(&r, 60, args);
        char want[64];
        snprintf(want, sizeof(want), "in use by another snapfuzz run (pid %d)", (int)pid);
        cr_expect_eq(r.exit_code, 2, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, want), "names the holder:\n%s", r.err);
        sf_run_free(&r);

        const char *st[] = {"status", out, NULL};
        sf_run(&r, 30, st);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.out, "running (pid"), "status of a live run:\n%s", r.out);
        sf_run_free(&r);

        kill(-pid, SIGINT);
        cr_expect_eq(sf_wait(pid, 30), 0);
        sf_run(&r, 30, st);
        cr_expect(strstr(r.out, "state        interrupted"), "status of a finished run:\n%s",
                  r.out);
        sf_run_free(&r);
}

Test(lifecycle, a_killed_run_is_reported_stopped_and_the_next_one_cleans_up, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512], stats[600], crashdir[600], leftover[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        const char *args[] = {"run", sf_target("recorder"), "--out", out, "--workers",
                              "1",   "--status-every",      "1",     NULL};
        pid_t pid = sf_start(dir, args);
        cr_assert(wait_for_file(stats, 30000), "the run starts");
        sleep(2); /* a "running" stats.json */
        kill(-pid, SIGKILL);
        sf_wait(pid, 30);

        SfRun r;
        const char *st[] = {"status", "--out", out, NULL};
        sf_run(&r, 30, st);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.out, "stopped without finishing"), "never 'running' once dead:\n%s",
                  r.out);
        sf_run_free(&r);

        /* What a SIGKILL can leave: a temporary file in a crash's folder. */
        snprintf(crashdir, sizeof(crashdir), "%s/crashes/0123456789abcdef", out);
        cr_assert_eq(mkdir(crashdir, 0755), 0);
        snprintf(leftover, sizeof(leftover), "%s/.tmp.crash.json.999.1", crashdir);
        int fd = open(leftover, O_WRONLY | O_CREAT, 0644);
        cr_assert_geq(fd, 0);
        close(fd);
        const char *again[] = {"run", sf_target("recorder"), "--out", out, "--runs", "1000", NULL};
        sf_run(&r, 60, again);
        cr_expect_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "resumed from"), "%s", r.err);
        sf_run_free(&r);
        cr_expect_neq(access(leftover, F_OK), 0, "the leftover temporary file was removed");
}

Test(lifecycle, status_of_a_directory_without_a_campaign_is_a_usage_error)
{
        char *dir = sf_tmpdir();
        SfRun r;
        const char *st[] = {"status", dir, NULL};
        sf_run(&r, 30, st);
        cr_expect_eq(r.exit_code, 2, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "stats.json"), "%s", r.err);
        sf_run_free(&r);
}

Test(lifecycle, ctrl_c_stops_a_hanging_initialization_at_once, .timeout = 60)
{
        char *dir = sf_tmpdir();
        char out[512], path[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run", sf_target("init_hang"), "--out", out, "--workers", "2", NULL};
        pid_t pid = sf_start(dir, args);
        sleep(2);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        kill(-pid, SIGINT);
        int code = sf_wait(pid, 30);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        cr_expect_lt(secs, 5.0, "stopped %.1f s after Ctrl-C; stderr:\n%s", secs, err);
        cr_expect_eq(code, 0, "an interrupted run with no crash exits 0; stderr:\n%s", err);
        cr_expect(strstr(err, "SIGINT received"), "%s", err);
        free(err);
        /* The campaign says it was interrupted, not killed. */
        SfRun r;
        const char *st[] = {"status", out, NULL};
        sf_run(&r, 30, st);
        cr_expect(strstr(r.out, "state        interrupted"),
                  "status of a run interrupted while "
                  "starting:\n%s",
                  r.out);
        sf_run_free(&r);
}

/* Copies @from to @to (a target the test may then change under a run). */
static void copy_file(const char *from, const char *to)
{
        size_t len;
        uint8_t *data = sf_read(from, &len);
        int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
        cr_assert_geq(fd, 0, "cannot write %s", to);
        cr_assert_eq(write(fd, data, len), (ssize_t)len);
        close(fd);
        free(data);
}

/* A target changed under a run: overwritten in place (@replace) or
 * deleted. The run stops with one line and exit 2, and stores no crash. */
static void run_with_changing_target(bool replace)
{
        char *dir = sf_tmpdir();
        char out[512], target[600], stats[600], path[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        snprintf(target, sizeof(target), "%s/target.so", dir);
        copy_file(sf_target("recorder"), target);
        const char *args[] = {"run", target, "--out", out, "--workers", "2", NULL};
        pid_t pid = sf_start(dir, args);
        cr_assert(wait_for_file(stats, 30000), "the run starts");
        sleep(1);
        if (replace)
                copy_file(sf_target("tlv_parser"), target); /* same inode, new bytes */
        else
                cr_assert_eq(unlink(target), 0);
        int code = sf_wait(pid, 60);
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        cr_expect_eq(code, 2, "stderr:\n%s", err);
        cr_expect(strstr(err, replace ? "was replaced while fuzzing" : "was deleted while fuzzing"),
                  "%s", err);
        cr_expect_eq(sf_count_crashes(out), 0, "no false crash stored; stderr:\n%s", err);
        free(err);
}

Test(lifecycle, a_target_overwritten_during_the_run_stops_it_without_a_false_crash, .timeout = 120)
{
        run_with_changing_target(true);
}

Test(lifecycle, a_target_deleted_during_the_run_stops_it_with_a_clear_line, .timeout = 120)
{
        run_with_changing_target(false);
}

/* --seed with one worker is enough: the second run also turns address
 * space randomization off (--reproducible), so the two runs' processes have
 * different layouts, and comparison call sites must still be filed alike. */
Test(reproducible, a_seeded_one_worker_run_makes_the_same_inputs_every_time, .timeout = 240)
{
        char *listing[2], *crash[2];
        size_t crash_len[2];
        for (int i = 0; i < 2; i++) {
                char *dir = sf_tmpdir();
                char out[512], corpus[600], input[700];
                snprintf(out, sizeof(out), "%s/out", dir);
                snprintf(corpus, sizeof(corpus), "%s/corpus", out);
                SfRun r;
                /* ini_parser's planted assertion is found in a few hundred
                 * thousand executions; the inputs before it, the crash and
                 * its input must be the same in both runs. */
                const char *args[] = {"run",
                                      sf_target("ini_parser"),
                                      "--out",
                                      out,
                                      "--seed",
                                      "4242",
                                      "--workers",
                                      "1",
                                      "--runs",
                                      "2000000",
                                      i == 1 ? "--reproducible" : NULL,
                                      NULL};
                sf_run(&r, 120, args);
                cr_assert_eq(r.exit_code, 1, "stderr:\n%s", r.err);
                cr_expect(strstr(r.err, "(reproducible)"), "%s", r.err);
                sf_run_free(&r);
                listing[i] = sf_dir_listing(corpus);
                crash[i] = sf_only_crash(out);
                snprintf(input, sizeof(input), "%s/crashes/%s/input", out, crash[i]);
                free(sf_read(input, &crash_len[i])); /* the crash's input exists */
                char *bytes = (char *)sf_read(input, &crash_len[i]);
                free(crash[i]);
                crash[i] = bytes;
        }
        cr_expect_gt(strlen(listing[0]), 41 * 10, "the run found some inputs");
        cr_expect_str_eq(listing[0], listing[1], "the two runs' corpora differ");
        cr_assert_eq(crash_len[0], crash_len[1], "crash inputs of %zu and %zu bytes", crash_len[0],
                     crash_len[1]);
        cr_expect_eq(memcmp(crash[0], crash[1], crash_len[0]), 0, "the crash inputs differ");
        for (int i = 0; i < 2; i++) {
                free(listing[i]);
                free(crash[i]);
        }
}

/* A target whose coverage follows how many inputs its process ran before
 * (tests/targets/stateful.c), with stats.json written every second: three
 * seeded runs find the same inputs. Runners live a number of batches, not
 * a time, and the periodic report does not recompute the schedule's
 * energies at a moment the clock chose (each made two runs of three
 * differ by some 40,000 corpus files). */
Test(reproducible, a_target_with_state_between_inputs_gets_the_same_inputs_every_time,
     .timeout = 240)
{
        char *listing[3];
        for (int i = 0; i < 3; i++) {
                char *dir = sf_tmpdir();
                char out[512], corpus[600];
                snprintf(out, sizeof(out), "%s/out", dir);
                snprintf(corpus, sizeof(corpus), "%s/corpus", out);
                SfRun r;
                const char *args[] = {"run",
                                      sf_target("stateful"),
                                      "--out",
                                      out,
                                      "--seed",
                                      "5",
                                      "--workers",
                                      "1",
                                      "--runs",
                                      "1500000",
                                      "--status-every",
                                      "1",
                                      NULL};
                sf_run(&r, 120, args);
                cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
                cr_expect(strstr(r.err, "(reproducible)"), "%s", r.err);
                sf_run_free(&r);
                listing[i] = sf_dir_listing(corpus);
        }
        cr_expect_gt(strlen(listing[0]), 41 * 1000, "the run found inputs");
        for (int i = 1; i < 3; i++)
                cr_expect(strcmp(listing[0], listing[i]) == 0,
                          "run %d's corpus differs from run 1's", i + 1);
        for (int i = 0; i < 3; i++)
                free(listing[i]);
}

/* OUT/corpus removed under a running campaign: every write there fails.
 * The new inputs are kept, then written to a rescue directory named on
 * screen; none is lost and the run goes on to its budget. */
Test(faults, corpus_inputs_survive_an_unwritable_corpus_directory, .timeout = 180)
{
        char *dir = sf_tmpdir();
        char out[512], corpus[600], stats[600], rescue[700], path[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(corpus, sizeof(corpus), "%s/corpus", out);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        setenv("TMPDIR", dir, 1);
        const char *args[] = {"run", sf_target("recorder"), "--out", out, "--workers",
                              "1",   "--max-total-time",    "25",    NULL};
        pid_t pid = sf_start(dir, args);
        unsetenv("TMPDIR");
        cr_assert(wait_for_file(stats, 30000), "the run starts");
        sleep(1);
        char cmd[800];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s' 2>/dev/null", corpus);
        /* The writer may add a file while rm empties the directory. */
        for (int i = 0; i < 50 && access(corpus, F_OK) == 0; i++)
                (void)system(cmd);
        cr_assert_neq(access(corpus, F_OK), 0, "%s is gone", corpus);
        int code = sf_wait(pid, 120);
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        snprintf(rescue, sizeof(rescue), "%s/snapfuzz-rescue-%d/corpus", dir, (int)pid);
        cr_expect_eq(code, 0, "the run went on to its budget; stderr:\n%s", err);
        cr_expect(strstr(err, "kept in memory"), "%s", err);
        cr_expect(strstr(err, rescue), "the rescue directory is named:\n%s", err);
        cr_expect_gt(count_files(rescue), 0, "new inputs are in %s", rescue);
        cJSON *st = read_stats(out);
        cr_expect_eq(cJSON_GetObjectItem(st, "corpus_lost")->valuedouble, 0);
        cJSON_Delete(st);
        free(err);
}

static double stat_num(cJSON *st, const char *key)
{
        cJSON *v = cJSON_GetObjectItem(st, key);
        cr_assert(cJSON_IsNumber(v), "stats.json has no number %s", key);
        return v->valuedouble;
}

Test(corpus, an_input_replaced_by_a_shorter_one_leaves_the_output_corpus, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512], corpus[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(corpus, sizeof(corpus), "%s/corpus", out);
        SfRun r;
        const char *args[] = {
            "run",    sf_target("ini_parser"), "--out", out, "--workers", "1", "--runs",
            "400000", "--keep-going",          NULL};
        sf_run(&r, 100, args);
        cr_assert_lt(r.exit_code, 2, "stderr:\n%s", r.err);
        sf_run_free(&r);
        cJSON *st = read_stats(out);
        cr_expect_gt(stat_num(st, "corpus_reduced"), 0, "reductions happened");
        cr_expect_gt(stat_num(st, "corpus_files_removed"), 0, "replaced files were removed");
        cr_expect_eq(count_files(corpus), (int)stat_num(st, "corpus_files"),
                     "OUT/corpus holds exactly the files the run kept");
        cJSON_Delete(st);
}

Test(corpus, no_reduce_keeps_no_shorter_forms, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {
            "run",    sf_target("recorder"), "--out", out, "--workers", "1", "--runs",
            "300000", "--no-reduce",         NULL};
        sf_run(&r, 100, args);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);
        cJSON *st = read_stats(out);
        cr_expect_eq(stat_num(st, "corpus_reduced"), 0);
        cr_expect_eq(stat_num(st, "corpus_files_removed"), 0);
        cJSON_Delete(st);
}

/* Two short seeds appended whole (tests/targets/seeds_cross.c): a seed
 * replaced as a base by a shorter input stays a crossover partner. */
Test(corpus, a_bug_that_needs_two_seeds_put_together_is_found, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512], seeds[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seeds, sizeof(seeds), "%s/../../tests/targets/seeds_cross", sf_env("SF_SEEDS"));
        SfRun r;
        const char *args[] = {"run", sf_target("seeds_cross"), seeds, "--out", out, "--workers",
                              "1",   "--max-total-time",       "60",  NULL};
        sf_run(&r, 100, args);
        cr_expect_eq(r.exit_code, 1, "found within 60 s; stderr:\n%s", r.err);
        sf_run_free(&r);
}
