/*
 * The libFuzzer drop-in (fuzzer/, libsnapfuzz-fuzzer.a) from the outside:
 * real harness binaries linked with it in one compiler line
 * (tests/dropin/meson.build), driven with libFuzzer's command line, checked
 * by what libFuzzer's users look at: the log lines, the artifact files,
 * the output corpus and the exit status.
 *
 * The fuzzing tests are random: each prints its -seed, and SF_TEST_SEED
 * replays one.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfrun.h"

static const char *dropin(const char *name)
{
        char var[128];
        snprintf(var, sizeof(var), "SF_DROPIN_%s", name);
        return sf_env(var);
}

static unsigned test_seed(void)
{
        const char *s = getenv("SF_TEST_SEED");
        unsigned seed = s && *s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)getpid() * 2654435761u;
        seed = seed ? seed : 1;
        fprintf(stderr, "test_dropin: -seed=%u (replay with SF_TEST_SEED=%u)\n", seed, seed);
        return seed;
}

/* The one file in @dir whose name starts with @prefix (NULL when none or
 * several). The caller frees it. */
static char *only_file(const char *dir, const char *prefix)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        char *found = NULL;
        int n = 0;
        cr_assert_not_null(d, "%s", dir);
        while ((e = readdir(d)))
                if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
                        n++;
                        free(found);
                        found = malloc(strlen(dir) + strlen(e->d_name) + 2);
                        sprintf(found, "%s/%s", dir, e->d_name);
                }
        closedir(d);
        if (n != 1) {
                free(found);
                return NULL;
        }
        return found;
}

static int count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;
        if (!d)
                return -1;
        while ((e = readdir(d)))
                n += e->d_name[0] != '.';
        closedir(d);
        return n;
}

/* The artifact of a run: the one PREFIX-file in @dir, named by the SHA-1
 * of its content (libFuzzer's naming), whose content starts with @start. */
static void check_artifact(const char *dir, const char *prefix, const char *start)
{
        char *path = only_file(dir, prefix);
        cr_assert_not_null(path, "no single %s* artifact in %s", prefix, dir);
        char sha[41];
        sf_sha1sum(path, sha);
        cr_expect_str_eq(strrchr(path, '/') + 1 + strlen(prefix), sha,
                         "the artifact %s is not named by its SHA-1", path);
        size_t len;
        uint8_t *data = sf_read(path, &len);
        cr_assert_not_null(data);
        cr_expect(len >= strlen(start) && memcmp(data, start, strlen(start)) == 0,
                  "the artifact %s does not start with %s", path, start);
        free(data);
        free(path);
}

/* Fuzzes binary @name into @dir/corpus (created) with artifacts in @dir/
 * and the engine's work directory under @dir/tmp (TMPDIR), plus @extra
 * flags (NULL-terminated, at most 4). */
static void fuzz(SfRun *r, const char *name, const char *dir, const char *const *extra)
{
        char corpus[PATH_MAX], prefix[PATH_MAX], tmp[PATH_MAX], seed[32];
        snprintf(corpus, sizeof(corpus), "%s/corpus", dir);
        snprintf(prefix, sizeof(prefix), "-artifact_prefix=%s/", dir);
        snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
        snprintf(seed, sizeof(seed), "-seed=%u", test_seed());
        cr_assert_eq(mkdir(corpus, 0755), 0);
        cr_assert_eq(mkdir(tmp, 0755), 0);
        setenv("TMPDIR", tmp, 1);
        const char *args[12] = {corpus, prefix, seed, "-max_total_time=150"};
        int n = 4;
        for (int i = 0; extra && extra[i] && n < 11; i++)
                args[n++] = extra[i];
        sf_run_exe(r, 240, dropin(name), args);
        unsetenv("TMPDIR");
}

Test(dropin, a_plain_build_fuzzes_to_its_bug_as_libfuzzer_would)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "magic_plain", dir, NULL);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "INFO: Seed: "), "%s", r.err);
        cr_expect(strstr(r.err, "INFO: Loaded 1 modules   ("), "%s", r.err);
        cr_expect(strstr(r.err, "\tINITED cov: "), "%s", r.err);
        cr_expect(strstr(r.err, "\tNEW    cov: "), "%s", r.err);
        cr_expect(strstr(r.err, "ERROR: libFuzzer: deadly signal"), "%s", r.err);
        char want[PATH_MAX];
        snprintf(want, sizeof(want), "artifact_prefix='%s/'; Test unit written to %s/crash-", dir,
                 dir);
        cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
        check_artifact(dir, "crash-", "SNAPDROP");
        /* New inputs went to the first corpus directory, named by SHA-1. */
        char corpus[PATH_MAX], tmp[PATH_MAX];
        snprintf(corpus, sizeof(corpus), "%s/corpus", dir);
        cr_expect_gt(count_entries(corpus), 0);
        /* The engine's work directory is gone once the artifact is out. */
        snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
        cr_expect_eq(count_entries(tmp), 0, "the work directory was left in %s", tmp);
        sf_run_free(&r);
        free(dir);
}

Test(dropin, an_asan_build_reports_the_sanitizer_bug_and_exits_as_asan)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "magic_asan", dir, NULL);
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: AddressSanitizer: heap-buffer-overflow"), "%s", r.err);
        check_artifact(dir, "crash-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_ubsan_build_finds_its_overflow)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "magic_ubsan", dir, NULL);
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "runtime error: signed integer overflow"), "%s", r.err);
        check_artifact(dir, "crash-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_leak_is_a_leak_artifact_with_leaksanitizers_report)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "leak_asan", dir, NULL);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: LeakSanitizer: detected memory leaks"), "%s", r.err);
        check_artifact(dir, "leak-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_timeout_is_a_timeout_artifact_and_libfuzzers_timeout_status)
{
        char *dir = sf_tmpdir();
        const char *extra[] = {"-timeout=1", NULL};
        SfRun r;
        fuzz(&r, "hang_plain", dir, extra);
        cr_expect_eq(r.exit_code, 70, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: libFuzzer: timeout"), "%s", r.err);
        check_artifact(dir, "timeout-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, memory_over_the_rss_limit_is_an_oom_artifact_and_status_71)
{
        char *dir = sf_tmpdir();
        const char *extra[] = {"-rss_limit_mb=128", NULL};
        SfRun r;
        fuzz(&r, "oom_plain", dir, extra);
        cr_expect_eq(r.exit_code, 71, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: libFuzzer: out-of-memory"), "%s", r.err);
        check_artifact(dir, "oom-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_cxx_harness_links_with_clangxx_and_fuzzes)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "cxx_asan", dir, NULL);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        check_artifact(dir, "crash-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_harness_with_its_own_main_calls_the_driver)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "own_main", dir, NULL);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        check_artifact(dir, "crash-", "SNAPDROP");
        sf_run_free(&r);
        free(dir);
}

/* The harness's vendored cJSON, seccomp_init and rand are what it calls,
 * and the engine's are the engine's (tests/dropin/ownsyms.c). */
Test(dropin, the_harness_and_the_engine_each_keep_their_own_symbols)
{
        char *dir = sf_tmpdir();
        SfRun r;
        fuzz(&r, "ownsyms", dir, NULL);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        check_artifact(dir, "crash-", "ow");
        sf_run_free(&r);
        free(dir);
}

Test(dropin, a_sandbox_escape_is_still_stopped_and_reported)
{
        char *dir = sf_tmpdir();
        char escaped[PATH_MAX];
        snprintf(escaped, sizeof(escaped), "%s/escaped", dir);
        setenv("SNAPFUZZ_TEST_ESCAPE_FILE", escaped, 1);
        SfRun r;
        fuzz(&r, "escape_open", dir, NULL);
        unsetenv("SNAPFUZZ_TEST_ESCAPE_FILE");
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "sandbox"), "%s", r.err);
        cr_expect_eq(access(escaped, F_OK), -1, "the target created %s", escaped);
        check_artifact(dir, "crash-", "O");
        sf_run_free(&r);
        free(dir);
}

/* crash.json names the executable, and the recovery helper's verification
 * worker (the same binary, exec'd) reproduced the crash. */
Test(dropin, the_crash_record_names_the_binary_and_was_verified)
{
        char *dir = sf_tmpdir();
        char work[PATH_MAX], flag[PATH_MAX + 32], exe[PATH_MAX];
        snprintf(work, sizeof(work), "%s/work", dir);
        snprintf(flag, sizeof(flag), "-snapfuzz_out=%s", work);
        const char *extra[] = {flag, NULL};
        SfRun r;
        fuzz(&r, "magic_plain", dir, extra);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        char *id = sf_only_crash(work);
        char *target = sf_crash_field(work, id, "target");
        cr_assert_not_null(realpath(dropin("magic_plain"), exe));
        cr_expect_str_eq(target, exe);
        char *kind = sf_crash_field(work, id, "kind");
        cr_expect_str_eq(kind, "ill");
        free(kind);
        free(target);
        free(id);
        sf_run_free(&r);
        free(dir);
}

/* OSS-Fuzz's bad_build_check runs `-seed=1337 -runs=4` and wants "Done 4 runs". */
Test(dropin, runs_n_runs_exactly_n_inputs)
{
        SfRun r;
        const char *args[] = {"-seed=1337", "-runs=4", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "\tDONE   cov: "), "%s", r.err);
        cr_expect(strstr(r.err, "Done 4 runs in "), "%s", r.err);
        sf_run_free(&r);
        /* An ASan build: no LeakSanitizer report of the engine's own memory
         * at exit (which would make the status 23). */
        sf_run_exe(&r, 60, dropin("magic_asan"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect_null(strstr(r.err, "LeakSanitizer"), "%s", r.err);
        cr_expect(strstr(r.err, "Done 4 runs in "), "%s", r.err);
        sf_run_free(&r);
}

/* libFuzzer's -seed=N with one worker replays the same run: the same
 * inputs reach the corpus, and the planted bug (behind a memcmp the
 * comparison feedback solves, filed by call site in a binary whose load
 * address changes every run) is the same artifact. */
Test(dropin, the_same_seed_makes_the_same_corpus_and_artifact, .timeout = 240)
{
        char *listing[2], *found[2], seed[32];
        snprintf(seed, sizeof(seed), "-seed=%u", test_seed());
        for (int i = 0; i < 2; i++) {
                char *dir = sf_tmpdir();
                char corpus[PATH_MAX], prefix[PATH_MAX];
                snprintf(corpus, sizeof(corpus), "%s/corpus", dir);
                snprintf(prefix, sizeof(prefix), "-artifact_prefix=%s/", dir);
                cr_assert_eq(mkdir(corpus, 0755), 0);
                SfRun r;
                const char *args[] = {corpus, prefix, seed, "-runs=3000000", NULL};
                sf_run_exe(&r, 200, dropin("magic_plain"), args);
                cr_assert(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 77,
                          "exit %d, stderr:\n%s", r.exit_code, r.err);
                sf_run_free(&r);
                listing[i] = sf_dir_listing(corpus);
                found[i] = only_file(dir, "crash-");
        }
        cr_expect_str_eq(listing[0], listing[1], "the two runs' corpora differ");
        cr_assert_not_null(found[0], "the first run did not find the bug");
        cr_assert_not_null(found[1], "the second run did not find the bug");
        cr_expect_str_eq(strrchr(found[0], '/'), strrchr(found[1], '/'),
                         "the two runs wrote different artifacts");
        for (int i = 0; i < 2; i++) {
                free(listing[i]);
                free(found[i]);
        }
}

Test(dropin, runs_zero_runs_the_seeds_and_stops)
{
        char *dir = sf_tmpdir();
        for (int i = 0; i < 3; i++) {
                char p[PATH_MAX];
                snprintf(p, sizeof(p), "%s/seed%d", dir, i);
                FILE *f = fopen(p, "w");
                cr_assert_not_null(f);
                fprintf(f, "seed number %d", i);
                fclose(f);
        }
        SfRun r;
        const char *args[] = {dir, "-runs=0", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "INFO:        3 files found in"), "%s", r.err);
        cr_expect(strstr(r.err, "#3\tINITED cov: "), "%s", r.err);
        cr_expect(strstr(r.err, "Done 3 runs in "), "%s", r.err);
        sf_run_free(&r);
        free(dir);
}

static char *write_input(const char *dir, const char *name, const char *content)
{
        char *p = malloc(PATH_MAX);
        snprintf(p, PATH_MAX, "%s/%s", dir, name);
        FILE *f = fopen(p, "w");
        cr_assert_not_null(f);
        fputs(content, f);
        fclose(f);
        return p;
}

Test(dropin, input_files_are_run_once_each_as_libfuzzer_does)
{
        char *dir = sf_tmpdir();
        char *ok = write_input(dir, "ok", "hello");
        char *bad = write_input(dir, "bad", "SNAPDROP!");
        SfRun r;
        const char *args[] = {ok, NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "Running: "), "%s", r.err);
        cr_expect(strstr(r.err, "Executed "), "%s", r.err);
        cr_expect(strstr(r.err, "NOTE: fuzzing was not performed"), "%s", r.err);
        sf_run_free(&r);
        /* ClusterFuzz's reproduce: -runs=100 on a crash file exits non-zero. */
        const char *args2[] = {"-runs=100", bad, NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args2);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: libFuzzer: deadly signal"), "%s", r.err);
        sf_run_free(&r);
        const char *args3[] = {bad, NULL};
        sf_run_exe(&r, 60, dropin("magic_asan"), args3);
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: AddressSanitizer: heap-buffer-overflow"), "%s", r.err);
        sf_run_free(&r);
        free(ok);
        free(bad);
        free(dir);
}

/* The drop-in's memcmp is weak: AddressSanitizer's interceptor stays, and
 * reports a memcmp that reads 8 bytes of a 1-byte input (ours would stop
 * at the first difference, unseen by ASan). */
Test(dropin, asan_keeps_its_own_memcmp_interceptor)
{
        char *dir = sf_tmpdir();
        char *m = write_input(dir, "m", "M");
        SfRun r;
        const char *args[] = {m, NULL};
        sf_run_exe(&r, 60, dropin("memcmp_asan"), args);
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "READ of size 8"), "%s", r.err);
        sf_run_free(&r);
        free(m);
        free(dir);
}

/* ClusterFuzz sets ASAN_OPTIONS; they reach the runners (here, one that
 * makes ASan print a SCARINESS line in its report). */
Test(dropin, asan_options_from_the_environment_reach_the_runners)
{
        char *dir = sf_tmpdir();
        setenv("ASAN_OPTIONS", "print_scariness=1", 1);
        SfRun r;
        fuzz(&r, "magic_asan", dir, NULL);
        unsetenv("ASAN_OPTIONS");
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "SCARINESS: "), "%s", r.err);
        sf_run_free(&r);
        free(dir);
}

Test(dropin, flags_are_read_as_libfuzzer_reads_them)
{
        SfRun r;
        const char *args[] = {"-no_such_flag=3",      "--also=1", "-reload=0", "-runs=2",
                              "-print_final_stats=1", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "WARNING: unrecognized flag '-no_such_flag=3'; use -help=1"), "%s",
                  r.err);
        cr_expect(strstr(r.err, "INFO: libFuzzer ignores flags that start with '--'"), "%s", r.err);
        cr_expect_null(strstr(r.err, "'-reload=0'"), "a libFuzzer flag was called unknown");
        cr_expect(strstr(r.err, "Done 2 runs in "), "%s", r.err);
        cr_expect(strstr(r.err, "stat::number_of_executed_units: 2"), "%s", r.err);
        sf_run_free(&r);
}

Test(dropin, bad_input_gets_one_line_and_libfuzzers_error_status)
{
        SfRun r;
        const char *missing[] = {"/nonexistent/corpus", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), missing);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.err, "ERROR: The required directory \"/nonexistent/corpus\" does "
                                "not exist"),
                  "%s", r.err);
        sf_run_free(&r);
        const char *bad_value[] = {"-runs=many", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), bad_value);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.err, "ERROR: -runs takes a whole number, not 'many'"), "%s", r.err);
        sf_run_free(&r);
        char *dir = sf_tmpdir();
        char *fine = write_input(dir, "fine", "hello");
        const char *not_crashing[] = {"-minimize_crash=1", "-runs=10", fine, NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), not_crashing);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.err, "did not crash"), "%s", r.err);
        sf_run_free(&r);
        free(fine);
        const char *merge_one[] = {"-merge=1", dir, NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), merge_one);
        cr_expect_eq(r.exit_code, 0, "libFuzzer exits 0 here:\n%s", r.err);
        cr_expect(strstr(r.err, "INFO: Merge requires two or more corpus dirs"), "%s", r.err);
        sf_run_free(&r);
        free(dir);
}

/* -merge=1 as ClusterFuzz runs it: the 2nd directory into the 1st, with a
 * control file, and the MERGE-OUTER line its stats parser reads. */
Test(dropin, merge_puts_the_inputs_with_new_coverage_into_the_first_directory, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char in[600], out[600], mcf[600], kept[700];
        snprintf(in, sizeof(in), "%s/in", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(mcf, sizeof(mcf), "-merge_control_file=%s/mcf", dir);
        cr_assert_eq(mkdir(in, 0755), 0);
        cr_assert_eq(mkdir(out, 0755), 0);
        free(write_input(in, "a", "hello"));
        free(write_input(in, "b", "hello"));         /* the same bytes: kept once */
        free(write_input(in, "c", "longer than 8")); /* reaches the memcmp */
        SfRun r;
        const char *args[] = {"-merge=1", mcf, out, in, NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "%s", r.err);
        unsigned files = 0;
        unsigned long long ft = 0, edges = 0;
        const char *line = strstr(r.err, "MERGE-OUTER: ");
        while (line && strstr(line + 1, "MERGE-OUTER: "))
                line = strstr(line + 1, "MERGE-OUTER: ");
        cr_assert(line && sscanf(line,
                                 "MERGE-OUTER: %u new files with %llu new features added; "
                                 "%llu new coverage edges",
                                 &files, &ft, &edges) == 3,
                  "%s", r.err);
        cr_expect_eq(files, 2, "one file per path:\n%s", r.err);
        cr_expect_gt(ft, 0);
        cr_expect_gt(edges, 0);
        sf_run_free(&r);
        /* Named by the SHA-1 of its bytes, as libFuzzer names them. */
        snprintf(kept, sizeof(kept), "%s/aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d", out);
        struct stat st;
        cr_expect_eq(stat(kept, &st), 0, "%s holds the file of \"hello\"", out);
        /* Merging again adds nothing. */
        sf_run_exe(&r, 60, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "%s", r.err);
        cr_expect(strstr(r.err, "MERGE-OUTER: 0 new files"), "%s", r.err);
        sf_run_free(&r);
        free(dir);
}

/* OSS-Fuzz's bad_build_check greps for libFuzzer's line. */
Test(dropin, a_binary_without_coverage_is_refused_with_libfuzzers_words)
{
        SfRun r;
        const char *args[] = {"-seed=1337", "-runs=4", NULL};
        sf_run_exe(&r, 60, dropin("nocov"), args);
        cr_expect_eq(r.exit_code, 1, "exit %d, stderr:\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "ERROR: no interesting inputs were found. Is the code "
                                "instrumented for coverage?"),
                  "%s", r.err);
        sf_run_free(&r);
}

Test(dropin, exact_artifact_path_names_the_one_artifact)
{
        char *dir = sf_tmpdir();
        char exact[PATH_MAX], flag[PATH_MAX + 32];
        snprintf(exact, sizeof(exact), "%s/the-crash", dir);
        snprintf(flag, sizeof(flag), "-exact_artifact_path=%s", exact);
        const char *extra[] = {flag, NULL};
        SfRun r;
        fuzz(&r, "magic_plain", dir, extra);
        cr_expect_eq(r.exit_code, 77, "exit %d, stderr:\n%s", r.exit_code, r.err);
        size_t len;
        uint8_t *data = sf_read(exact, &len);
        cr_assert_not_null(data, "no %s", exact);
        cr_expect(len >= 8 && memcmp(data, "SNAPDROP", 8) == 0);
        cr_expect_null(only_file(dir, "crash-"));
        free(data);
        sf_run_free(&r);
        free(dir);
}

/* ClusterFuzz's minimize task: -minimize_crash=1 -runs=N -exact_artifact_path. */
Test(dropin, minimize_crash_writes_a_smaller_input_that_crashes_the_same_way)
{
        char *dir = sf_tmpdir();
        char *crash =
            write_input(dir, "crash", "SNAPDROP and a long tail that the bug does not need");
        char out[PATH_MAX], flag[PATH_MAX + 32];
        snprintf(out, sizeof(out), "%s/minimized", dir);
        snprintf(flag, sizeof(flag), "-exact_artifact_path=%s", out);
        SfRun r;
        const char *args[] = {"-minimize_crash=1", "-runs=300", flag, crash, NULL};
        sf_run_exe(&r, 120, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        size_t len;
        uint8_t *data = sf_read(out, &len);
        cr_assert_not_null(data, "no %s:\n%s", out, r.err);
        cr_expect(len == 8 && memcmp(data, "SNAPDROP", 8) == 0, "minimized to %zu bytes", len);
        free(data);
        sf_run_free(&r);
        /* The original is untouched. */
        data = sf_read(crash, &len);
        cr_expect_eq(len, strlen("SNAPDROP and a long tail that the bug does not need"));
        free(data);
        free(crash);
        free(dir);
}

Test(dropin, cleanse_crash_replaces_the_bytes_the_crash_does_not_need)
{
        char *dir = sf_tmpdir();
        char *crash = write_input(dir, "crash", "SNAPDROPabc");
        char out[PATH_MAX], flag[PATH_MAX + 32];
        snprintf(out, sizeof(out), "%s/cleansed", dir);
        snprintf(flag, sizeof(flag), "-exact_artifact_path=%s", out);
        SfRun r;
        const char *args[] = {"-cleanse_crash=1", flag, crash, NULL};
        sf_run_exe(&r, 120, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 0, "exit %d, stderr:\n%s", r.exit_code, r.err);
        size_t len;
        uint8_t *data = sf_read(out, &len);
        cr_assert_not_null(data, "no %s:\n%s", out, r.err);
        cr_expect(len == 11 && memcmp(data, "SNAPDROP   ", 11) == 0, "cleansed to '%.*s'", (int)len,
                  (const char *)data);
        free(data);
        sf_run_free(&r);
        free(crash);
        free(dir);
}

/* AFL++-style sync through the drop-in's flags: a peer's queue entry (the
 * planted bug's magic) is imported and crashes the target, and the
 * instance's own finds are exported to DIR/NAME/queue. */
Test(dropin, sync_flags_import_a_peers_find_and_export_their_own, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char sync[600], peerq[700], corpus[600], prefix[620], mine[700], a_dir[620], a_name[64];
        snprintf(sync, sizeof(sync), "%s/sync", dir);
        snprintf(peerq, sizeof(peerq), "%s/sync/peer/queue", dir);
        snprintf(corpus, sizeof(corpus), "%s/corpus", dir);
        snprintf(prefix, sizeof(prefix), "-artifact_prefix=%s/", dir);
        snprintf(a_dir, sizeof(a_dir), "-snapfuzz_sync_dir=%s", sync);
        snprintf(a_name, sizeof(a_name), "-snapfuzz_sync_name=me");
        cr_assert_eq(mkdir(sync, 0755), 0);
        snprintf(mine, sizeof(mine), "%s/sync/peer", dir);
        cr_assert_eq(mkdir(mine, 0755), 0);
        cr_assert_eq(mkdir(peerq, 0755), 0);
        cr_assert_eq(mkdir(corpus, 0755), 0);
        char *entry = write_input(peerq, "id:000000,orig:magic", "SNAPDROPxx");
        /* A peer's file younger than a second is taken for half-written. */
        struct timespec old[2] = {{.tv_sec = time(NULL) - 10}, {.tv_sec = time(NULL) - 10}};
        cr_assert_eq(utimensat(AT_FDCWD, entry, old, 0), 0);
        SfRun r;
        const char *args[] = {corpus, a_dir, a_name, "-max_total_time=60", prefix, NULL};
        sf_run_exe(&r, 90, dropin("magic_plain"), args);
        cr_expect_eq(r.exit_code, 77, "the peer's input crashes the target:\n%s", r.err);
        /* sha1("SNAPDROPxx"): the artifact is the peer's input itself. */
        cr_expect(strstr(r.err, "crash-e0c7cdea3947b98a7286460907d856da8cad4a69"), "%s", r.err);
        sf_run_free(&r);
        snprintf(mine, sizeof(mine), "%s/sync/me/queue", dir);
        DIR *d = opendir(mine);
        cr_assert_not_null(d, "no queue of its own in %s", sync);
        int exported = 0;
        for (struct dirent *e; (e = readdir(d));)
                exported += strncmp(e->d_name, "id:", 3) == 0;
        closedir(d);
        cr_expect_gt(exported, 0, "its finds are in %s", mine);
        const char *bad[] = {corpus, a_dir, "-runs=10", NULL};
        sf_run_exe(&r, 60, dropin("magic_plain"), bad);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.err, "ERROR: -snapfuzz_sync_dir needs -snapfuzz_sync_name"), "%s",
                  r.err);
        sf_run_free(&r);
        free(entry);
        free(dir);
}
