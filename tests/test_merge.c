/*
 * `snapfuzz merge` and single-input runs (`snapfuzz run target.so FILE...`),
 * driven through the real binary on tests/targets/mergecov.c. Coverage is
 * judged by an independent witness, tests/covcount.c, which loads the
 * target itself and counts (edge, hit-count bucket) pairs: a merge must
 * keep exactly the coverage of its inputs, in fewer files, and no file it
 * adds may be redundant. Random corpora print their seed; replay one with
 * SF_MERGE_SEED=N.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfrun.h"
#include "snapfuzz/record.h"

static char *path_of(const char *dir, const char *name)
{
        char *p;
        cr_assert_geq(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
        char *p = path_of(dir, name);
        FILE *f = fopen(p, "wb");
        cr_assert_not_null(f, "%s", p);
        cr_assert_eq(fwrite(data, 1, len, f), len);
        fclose(f);
        free(p);
}

static char *make_dir(const char *parent, const char *name)
{
        char *p = path_of(parent, name);
        cr_assert_eq(mkdir(p, 0755), 0, "%s", p);
        return p;
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of the regular files in @dir; their number in *@ret_n. */
static char **list_names(const char *dir, size_t *ret_n)
{
        char **v = calloc(4096, sizeof(*v));
        size_t n = 0;
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "%s", dir);
        struct dirent *de;
        while ((de = readdir(d)) && n < 4096)
                if (de->d_name[0] != '.')
                        v[n++] = strdup(de->d_name);
        closedir(d);
        qsort(v, n, sizeof(*v), name_cmp);
        *ret_n = n;
        return v;
}

static size_t count_files(const char *dir)
{
        size_t n;
        char **v = list_names(dir, &n);
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
        return n;
}

/* The witness's "features edges" for @paths (NULL-terminated). */
static void covcount(const char *const *paths, unsigned long *ret_features,
                     unsigned long *ret_edges)
{
        char cmd[8192];
        int len =
            snprintf(cmd, sizeof(cmd), "'%s' '%s'", sf_env("COVCOUNT"), sf_target("mergecov"));
        for (size_t i = 0; paths[i]; i++)
                len += snprintf(cmd + len, sizeof(cmd) - (size_t)len, " '%s'", paths[i]);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        int got = fscanf(p, "%lu %lu", ret_features, ret_edges);
        cr_assert_eq(pclose(p), 0, "%s", cmd);
        cr_assert_eq(got, 2, "%s", cmd);
}

static void covcount_dir(const char *dir, unsigned long *ret_features, unsigned long *ret_edges)
{
        const char *paths[] = {dir, NULL};
        covcount(paths, ret_features, ret_edges);
}

static unsigned seed_from_env(void)
{
        const char *s = getenv("SF_MERGE_SEED");
        unsigned seed = s && *s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
        fprintf(stderr, "merge: seed %u (replay with SF_MERGE_SEED=%u)\n", seed, seed);
        return seed;
}

/* @n random inputs of the target's letters (and a few others), each
 * starting with @prefix. */
static void random_corpus(const char *dir, unsigned *seed, size_t n, const char *prefix)
{
        static const char alphabet[] = "abcdefghijklmnopxyz";
        for (size_t i = 0; i < n; i++) {
                char buf[64], name[32];
                size_t len = strlen(prefix);
                memcpy(buf, prefix, len);
                size_t extra = (size_t)rand_r(seed) % 24;
                for (size_t k = 0; k < extra; k++)
                        buf[len++] = alphabet[(size_t)rand_r(seed) % (sizeof(alphabet) - 1)];
                snprintf(name, sizeof(name), "in-%03zu", i);
                write_file(dir, name, buf, len);
        }
}

static void run_merge(SfRun *r, const char *out, const char *in, const char *ctl)
{
        const char *args[] = {"merge",   sf_target("mergecov"),         out, in,
                              "--quiet", ctl ? "--control-file" : NULL, ctl, NULL};
        sf_run(r, 120, args);
}

/* The number before @what in the merge's summary ("12 new files"). */
static long summary_number(const char *out, const char *what)
{
        const char *p = strstr(out, what);
        cr_assert_not_null(p, "'%s' in:\n%s", what, out);
        while (p > out && p[-1] == ' ')
                p--;
        while (p > out && p[-1] >= '0' && p[-1] <= '9')
                p--;
        return strtol(p, NULL, 10);
}

Test(merge, keeps_the_coverage_in_fewer_files_none_redundant, .timeout = 300)
{
        unsigned seed = seed_from_env();
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = path_of(dir, "out");
        random_corpus(in, &seed, 150, "");

        SfRun r;
        run_merge(&r, out, in, NULL);
        cr_assert_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        size_t kept = count_files(out);
        cr_expect_lt(kept, 150, "fewer files than the 150 inputs: %zu", kept);
        cr_expect_eq((long)kept, summary_number(r.out, "new files"), "%s", r.out);

        unsigned long f_in, e_in, f_out, e_out;
        covcount_dir(in, &f_in, &e_in);
        covcount_dir(out, &f_out, &e_out);
        cr_expect_eq(f_out, f_in, "features: %lu kept of %lu", f_out, f_in);
        cr_expect_eq(e_out, e_in, "edges: %lu kept of %lu", e_out, e_in);

        /* Minimal: without any one of the kept files, coverage drops. */
        size_t n;
        char **names = list_names(out, &n);
        for (size_t skip = 0; skip < n; skip++) {
                const char *paths[4096 + 1];
                size_t k = 0;
                for (size_t i = 0; i < n; i++)
                        if (i != skip)
                                paths[k++] = path_of(out, names[i]);
                paths[k] = NULL;
                unsigned long f, e;
                covcount(paths, &f, &e);
                cr_expect_lt(f, f_out, "%s is redundant: the others reach all %lu features",
                             names[skip], f_out);
                for (size_t i = 0; i < k; i++)
                        free((char *)paths[i]);
        }
        /* Named by the SHA-1 of their bytes, as libFuzzer names them. */
        char cmd[1200];
        snprintf(cmd, sizeof(cmd), "cd '%s' && sha1sum -c --quiet --status <<EOF\n", out);
        for (size_t i = 0; i < n; i++) {
                strncat(cmd, names[i], sizeof(cmd) - strlen(cmd) - 1);
                strncat(cmd, "  ", sizeof(cmd) - strlen(cmd) - 1);
                strncat(cmd, names[i], sizeof(cmd) - strlen(cmd) - 1);
                strncat(cmd, "\n", sizeof(cmd) - strlen(cmd) - 1);
                if (i >= 5)
                        break;
        }
        strncat(cmd, "EOF\n", sizeof(cmd) - strlen(cmd) - 1);
        cr_expect_eq(system(cmd), 0, "file names are their SHA-1:\n%s", cmd);
        sf_run_free(&r);
}

Test(merge, the_output_corpus_counts_first_and_stays, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = make_dir(dir, "out");
        write_file(out, "mine-ab", "ab", 2);
        write_file(out, "mine-cd", "cd", 2);
        write_file(in, "ab", "ab", 2);     /* the output corpus has these bytes */
        write_file(in, "ba", "ba", 2);     /* and these features */
        write_file(in, "dc", "dc", 2);     /* likewise */
        write_file(in, "abcd", "abcd", 4); /* new buckets: the only one to add */

        SfRun r;
        run_merge(&r, out, in, NULL);
        cr_assert_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        size_t n;
        char **names = list_names(out, &n);
        cr_expect_eq(n, 3, "mine-ab, mine-cd and abcd:\n%s", r.out);
        cr_expect_eq(summary_number(r.out, "new files"), 1, "%s", r.out);
        cr_expect(n == 3 && strcmp(names[1], "mine-ab") == 0 && strcmp(names[2], "mine-cd") == 0,
                  "the output corpus's own files stay");
        char *added = path_of(out, names[0]);
        size_t len;
        char *data = (char *)sf_read(added, &len);
        cr_expect(data && len == 4 && memcmp(data, "abcd", 4) == 0, "abcd was added");
        free(data);
        sf_run_free(&r);
}

Test(merge, a_crashing_and_a_hanging_input_are_skipped_and_counted, .timeout = 120)
{
        unsigned seed = seed_from_env();
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = path_of(dir, "out");
        random_corpus(in, &seed, 40, "");
        unsigned long f_in, e_in, f_out, e_out;
        covcount_dir(in, &f_in, &e_in); /* before the two that would stop the witness */
        write_file(in, "crash", "!Cabc", 5);
        write_file(in, "hang", "!Habc", 5);

        SfRun r;
        const char *args[] = {
            "merge", sf_target("mergecov"), out, in, "--timeout", "0.3", "--quiet", NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        cr_expect(strstr(r.out, "2 inputs skipped: 1 crashed, 1 hung"), "%s", r.out);
        covcount_dir(out, &f_out, &e_out);
        cr_expect_eq(f_out, f_in, "features: %lu kept of %lu", f_out, f_in);
        cr_expect_eq(e_out, e_in);
        size_t n;
        char **names = list_names(out, &n);
        for (size_t i = 0; i < n; i++) {
                char *p = path_of(out, names[i]);
                size_t len;
                uint8_t *data = sf_read(p, &len);
                cr_expect(!(len >= 2 && data[0] == '!'), "%s is the crash or the hang", p);
                free(data);
                free(p);
        }
        sf_run_free(&r);
}

Test(merge, an_input_with_more_features_than_a_slot_holds_keeps_them_all, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = path_of(dir, "out");
        write_file(in, "wide", "!W", 2);
        write_file(in, "a", "a", 1);
        write_file(in, "b", "bb", 2);
        unsigned long f_in, e_in, f_out, e_out;
        covcount_dir(in, &f_in, &e_in);
        cr_assert_gt(f_in, RECORD_FIND_FEATURES, "the wide input reaches 20000 functions: %lu",
                     f_in);

        SfRun r;
        run_merge(&r, out, in, NULL);
        cr_assert_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        covcount_dir(out, &f_out, &e_out);
        cr_expect_eq(f_out, f_in, "features: %lu kept of %lu\n%s", f_out, f_in, r.out);
        cr_expect_eq(e_out, e_in);
        cr_expect_gt(summary_number(r.out, "features,"), RECORD_FIND_FEATURES, "%s", r.out);
        sf_run_free(&r);
}

/* Merges @in into a fresh @out with the control file @ctl, SIGKILLed
 * after @kill_ms. */
static void merge_killed(const char *dir, const char *out, const char *in, const char *ctl,
                         int kill_ms)
{
        const char *args[] = {"merge", sf_target("mergecov"), out, in, "--control-file", ctl, NULL};
        pid_t pid = sf_start(dir, args);
        struct timespec ts = {kill_ms / 1000, (long)(kill_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
        cr_assert_eq(kill(pid, SIGKILL), 0);
        int code = sf_wait(pid, 30);
        cr_assert_eq(code, 128 + SIGKILL, "killed in the middle (exit %d)", code);
}

Test(merge, a_killed_merge_resumes_and_ends_with_the_same_result, .timeout = 300)
{
        unsigned seed = seed_from_env();
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in");
        char *out1 = path_of(dir, "out1"), *out2 = path_of(dir, "out2");
        char *ctl = path_of(dir, "control.txt");
        /* "!S": 40 ms each, so 60 inputs take 2.4 s or more. */
        random_corpus(in, &seed, 60, "!S");

        merge_killed(dir, out1, in, ctl, 1700);
        size_t len;
        char *text = (char *)sf_read(ctl, &len);
        cr_assert_not_null(text, "the control file was written before the kill");
        cr_expect(strstr(text, "\nSTARTED 0 "), "progress was kept:\n%.300s", text);
        free(text);
        cr_expect_eq(count_files(out1), 0, "nothing is written before every input ran");

        SfRun r;
        run_merge(&r, out1, in, ctl);
        cr_assert_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        long reused = summary_number(r.out, "from the control file");
        cr_expect(reused > 0 && reused < 60, "resumed, not started over: %ld reused\n%s", reused,
                  r.out);

        SfRun whole;
        run_merge(&whole, out2, in, NULL);
        cr_assert_eq(whole.exit_code, 0, "%s%s", whole.out, whole.err);
        size_t n1, n2;
        char **a = list_names(out1, &n1), **b = list_names(out2, &n2);
        cr_assert_eq(n1, n2, "the same files: %zu after the kill, %zu without", n1, n2);
        for (size_t i = 0; i < n1; i++)
                cr_expect_str_eq(a[i], b[i]);

        /* Run again: everything comes from the control file, nothing changes. */
        SfRun again;
        run_merge(&again, out1, in, ctl);
        cr_assert_eq(again.exit_code, 0);
        cr_expect_eq(summary_number(again.out, "new files"), 0, "%s", again.out);
        cr_expect_eq(count_files(out1), n1);
        sf_run_free(&r);
        sf_run_free(&whole);
        sf_run_free(&again);
}

/* The pid of @parent's child whose command line has "__worker", or 0. */
static pid_t worker_of(pid_t parent)
{
        char path[128];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
        FILE *f = fopen(path, "r");
        int child;
        pid_t found = 0;
        while (f && !found && fscanf(f, "%d", &child) == 1) {
                snprintf(path, sizeof(path), "/proc/%d/cmdline", child);
                size_t len;
                char *cmd = (char *)sf_read(path, &len);
                if (cmd && len > 9 && memmem(cmd, len, "__worker", 8))
                        found = child;
                free(cmd);
        }
        if (f)
                fclose(f);
        return found;
}

Test(merge, goes_on_when_its_worker_is_killed, .timeout = 120)
{
        unsigned seed = seed_from_env();
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = path_of(dir, "out");
        random_corpus(in, &seed, 50, "!S"); /* 40 ms each */
        unsigned long f_in, e_in, f_out, e_out;
        covcount_dir(in, &f_in, &e_in);

        const char *args[] = {"merge", sf_target("mergecov"), out, in, NULL};
        pid_t pid = sf_start(dir, args);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        pid_t worker = worker_of(pid);
        cr_assert_gt(worker, 0, "the merge has a worker");
        cr_assert_eq(kill(worker, SIGKILL), 0);
        cr_assert_eq(sf_wait(pid, 60), 0, "the merge ends well");
        char *err_path = path_of(dir, "stderr");
        size_t len;
        char *err = (char *)sf_read(err_path, &len);
        cr_expect(err && strstr(err, "the worker process was lost"), "said so:\n%s", err);
        covcount_dir(out, &f_out, &e_out);
        cr_expect_eq(f_out, f_in, "features: %lu kept of %lu", f_out, f_in);
        cr_expect_eq(e_out, e_in);
        free(err);
        free(err_path);
}

/* The control files a merge refuses, each with one line and exit 2, and
 * left as they were. */
Test(merge, control_files_that_are_not_ours_are_refused_and_left_alone, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char *in = make_dir(dir, "in"), *out = path_of(dir, "out");
        write_file(in, "a", "abc", 3);
        struct {
                const char *name, *text, *needle;
        } cases[] = {
            {"garbage",
             "\x7f"
             "ELF\x02\x01 not a control file\n",
             "is not a merge control file"},
            {"numbers", "3\n1\nx\ny\nz\nSTARTED 5 7\n", "is not a merge control file (line 6"},
            {"libfuzzer", "1\n0\nsome/file\nSTARTED 0 3\nFT 0 1 2\nCOV 0 1\n",
             "was written by libFuzzer"},
            {"other", "1 snapfuzz-merge 1 key=0123456789abcdef\n0\nsome/file\n",
             "another build of the target"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                write_file(dir, cases[i].name, cases[i].text, strlen(cases[i].text));
                char *ctl = path_of(dir, cases[i].name);
                SfRun r;
                run_merge(&r, out, in, ctl);
                cr_expect_eq(r.exit_code, 2, "%s: exit %d\n%s", cases[i].name, r.exit_code, r.err);
                cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0 &&
                              strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
                          "%s: one line:\n%s", cases[i].name, r.err);
                cr_expect(strstr(r.err, cases[i].needle), "%s: '%s' in:\n%s", cases[i].name,
                          cases[i].needle, r.err);
                size_t len;
                char *now = (char *)sf_read(ctl, &len);
                cr_expect(now && len == strlen(cases[i].text) &&
                              memcmp(now, cases[i].text, len) == 0,
                          "%s is left as it was", cases[i].name);
                free(now);
                free(ctl);
                sf_run_free(&r);
        }
        /* A control file that cannot be read (a directory). */
        char *sub = make_dir(dir, "ctl-dir");
        SfRun r;
        run_merge(&r, out, in, sub);
        cr_expect_eq(r.exit_code, 2, "exit %d\n%s", r.exit_code, r.err);
        cr_expect(strstr(r.err, "cannot be read"), "%s", r.err);
        sf_run_free(&r);
}

/* ---- single-input runs ---- */

Test(runfiles, a_crashing_file_exits_1_with_its_report_a_clean_one_0, .timeout = 120)
{
        char *dir = sf_tmpdir();
        write_file(dir, "clean", "abc", 3);
        write_file(dir, "crash", "!Cxyz", 5);
        char *clean = path_of(dir, "clean"), *crash = path_of(dir, "crash");

        SfRun r;
        const char *ok[] = {"run", sf_target("mergecov"), clean, NULL};
        sf_run(&r, 60, ok);
        cr_expect_eq(r.exit_code, 0, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        cr_expect(strstr(r.out, ": ok (3 bytes"), "%s", r.out);
        sf_run_free(&r);

        const char *bad[] = {"run", sf_target("mergecov"), clean, crash, NULL};
        sf_run(&r, 60, bad);
        cr_expect_eq(r.exit_code, 1, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        cr_expect(strstr(r.out, "crash: CRASH: abort"), "%s", r.out);
        cr_expect(strstr(r.out, "LLVMFuzzerTestOneInput"), "the stack is shown:\n%s", r.out);
        cr_expect(strstr(r.out, "ran 2 of 2 inputs: 1 crashed"), "%s", r.out);
        cr_expect(access("snapfuzz-out", F_OK) != 0 || errno == 0, "nothing written");
        sf_run_free(&r);

        /* It stops at the first crash, unless --keep-going. */
        const char *first[] = {"run", sf_target("mergecov"), crash, clean, NULL};
        sf_run(&r, 60, first);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.out, "ran 1 of 2 inputs: 1 crashed"), "%s", r.out);
        sf_run_free(&r);
        const char *all[] = {"run", sf_target("mergecov"), crash, clean,
                             crash, "--keep-going",        NULL};
        sf_run(&r, 60, all);
        cr_expect_eq(r.exit_code, 1);
        cr_expect(strstr(r.out, "ran 3 of 3 inputs: 2 crashed"), "%s", r.out);
        sf_run_free(&r);
}

Test(runfiles, a_hang_is_a_crash_and_a_missing_file_exits_2, .timeout = 120)
{
        char *dir = sf_tmpdir();
        write_file(dir, "hang", "!H", 2);
        char *hang = path_of(dir, "hang"), *missing = path_of(dir, "missing");

        SfRun r;
        const char *h[] = {"run", sf_target("mergecov"), hang, "--timeout", "0.3", NULL};
        sf_run(&r, 60, h);
        cr_expect_eq(r.exit_code, 1, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        cr_expect(strstr(r.out, "CRASH: timeout"), "%s", r.out);
        sf_run_free(&r);

        const char *m[] = {"run", sf_target("mergecov"), hang, missing, NULL};
        sf_run(&r, 60, m);
        cr_expect_eq(r.exit_code, 2, "exit %d\n%s%s", r.exit_code, r.out, r.err);
        cr_expect(strstr(r.err, "no corpus directory or input file"), "%s", r.err);
        cr_expect(!strstr(r.out, "CRASH"), "nothing ran:\n%s", r.out);
        sf_run_free(&r);
}
