/*
 * `snapfuzz run plain.so --sanitizer-target asan.so`: the workers fuzz the
 * plain build, one more worker runs seeds, new corpus entries and sampled
 * fuzzing inputs on the AddressSanitizer/UBSan build (engine/sanq.h).
 *
 * The "sanitizer-only" set (tests/targets/san_only.c) has one bug per
 * target that the plain build survives: each must be stored, with its
 * sanitizer kind, verified on the sanitizer build; its input must not
 * crash the plain build (so no run of the plain build alone could have
 * found it); and the plain build fuzzed alone reaches the bug's code
 * without storing anything. Bad values of the options: exit 2, one line.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

typedef struct SanCase {
        const char *name; /* tests/targets/san_only_NAME{,_asan}.so */
        const char *kind; /* crash.json's kind */
        const char *what; /* in crash.json's message */
} SanCase;

static const SanCase san_cases[] = {
    {"heap_read", "asan", "heap-buffer-overflow"}, {"heap_write", "asan", "heap-buffer-overflow"},
    {"uaf", "asan", "heap-use-after-free"},        {"stack", "asan", "stack-buffer-overflow"},
    {"global", "asan", "global-buffer-overflow"},  {"overflow", "ubsan", "signed integer overflow"},
    {"shift", "ubsan", "shift exponent"},          {"leak", "leak", "LeakSanitizer"},
};
#define N_SAN_CASES (sizeof(san_cases) / sizeof(san_cases[0]))

static const char *san_target(const char *name, bool asan, char *buf, size_t cap)
{
        char var[128];
        snprintf(var, sizeof(var), "san_only_%s%s", name, asan ? "_asan" : "");
        snprintf(buf, cap, "%s", sf_target(var));
        return buf;
}

static cJSON *load_stats(const char *out)
{
        char path[4200];
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out);
        uint8_t *text = sf_read(path, &len);
        cr_assert_not_null(text, "%s exists", path);
        cJSON *j = cJSON_ParseWithLength((const char *)text, len);
        cr_assert_not_null(j, "%s is JSON", path);
        free(text);
        return j;
}

static double stat_num(const cJSON *stats, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(stats, name);
        cr_assert(cJSON_IsNumber(v), "stats.json has %s", name);
        return v->valuedouble;
}

static int case_numbers[N_SAN_CASES];

ParameterizedTestParameters(split, sanitizer_only_bug_found)
{
        for (size_t i = 0; i < N_SAN_CASES; i++)
                case_numbers[i] = (int)i;
        return cr_make_param_array(int, case_numbers, N_SAN_CASES);
}

ParameterizedTest(int *number, split, sanitizer_only_bug_found, .timeout = 180)
{
        const SanCase *sc = &san_cases[*number];
        char plain[4096], asan[4096], real_asan[4096], input[4400];
        san_target(sc->name, false, plain, sizeof(plain));
        san_target(sc->name, true, asan, sizeof(asan));
        cr_assert_not_null(realpath(asan, real_asan));
        char *out = sf_tmpdir();
        const char *args[] = {"run",       plain, "--sanitizer-target", asan, "--out",       out,
                              "--workers", "1",   "--max-total-time",   "60", "--no-screen", NULL};
        SfRun r;
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "%s: the split run found the bug (exit 1):\n%s", sc->name,
                     r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        char *message = sf_crash_field(out, id, "message");
        char *target = sf_crash_field(out, id, "target");
        cr_assert_str_eq(kind, sc->kind, "%s: kind %s", sc->name, kind);
        cr_assert(strstr(message, sc->what), "%s: message '%s' names %s", sc->name, message,
                  sc->what);
        /* Verified, minimized and replayed on the build it crashed. */
        cr_assert_str_eq(target, real_asan, "%s: crash.json's target", sc->name);
        cJSON *stats = load_stats(out);
        cr_assert_geq(stat_num(stats, "sanitizer_checked"), 1);
        cr_assert_geq(stat_num(stats, "sanitizer_seeds"), 1, "the seeds were checked");
        cJSON_Delete(stats);
        cr_assert(strstr(r.err, "the sanitizer build"), "the summary says what it checked:\n%s",
                  r.err);

        /* The stored input crashes the sanitizer build and not the plain one. */
        snprintf(input, sizeof(input), "%s/crashes/%s/input", out, id);
        const char *on_asan[] = {"run", asan, input, NULL};
        const char *on_plain[] = {"run", plain, input, NULL};
        SfRun ra, rp;
        sf_run(&ra, 60, on_asan);
        sf_run(&rp, 60, on_plain);
        cr_assert_eq(ra.exit_code, 1, "%s: the input crashes the sanitizer build:\n%s%s", sc->name,
                     ra.out, ra.err);
        cr_assert_eq(rp.exit_code, 0, "%s: the input does not crash the plain build:\n%s%s",
                     sc->name, rp.out, rp.err);
        sf_run_free(&ra);
        sf_run_free(&rp);
        free(kind);
        free(message);
        free(target);
        free(id);
        sf_run_free(&r);
        free(out);
}

/* Fuzzing the plain build alone reaches the bug's code (an input with the
 * magic joins the corpus) and stores nothing: the bug is the sanitizer's. */
Test(split, plain_build_alone_misses_it, .timeout = 120)
{
        char plain[4096];
        san_target("heap_read", false, plain, sizeof(plain));
        char *out = sf_tmpdir();
        const char *args[] = {
            "run", plain,         "--out",  out, "--workers", "1", "--max-total-time",
            "5",   "--no-screen", "--seed", "7", NULL};
        SfRun r;
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "nothing found (exit 0):\n%s", r.err);
        cr_assert_eq(sf_count_crashes(out), 0);
        char *grep;
        int st = sf_shell(&grep, "grep -l -r 'SAN!' '%s/corpus'", out);
        cr_assert_eq(st, 0, "an input with the magic is in the corpus:\n%s", grep);
        free(grep);
        sf_run_free(&r);
        free(out);
}

/* With --keep-going the sanitizer build meets its bug again and again (new
 * corpus entries, samples): one id, counted, one line. Two seeds reach the
 * bug, so it is met at least twice whatever the fuzzing finds in 5 s. */
Test(split, a_sanitizer_crash_seen_again_keeps_its_id, .timeout = 120)
{
        char plain[4096], asan[4096], seed[4400];
        san_target("heap_read", false, plain, sizeof(plain));
        san_target("heap_read", true, asan, sizeof(asan));
        char *out = sf_tmpdir();
        char *seeds = sf_tmpdir();
        const char *const bugs[] = {"SAN!\x01", "SAN!\x02 and more"};
        for (int i = 0; i < 2; i++) {
                snprintf(seed, sizeof(seed), "%s/bug%d", seeds, i);
                FILE *f = fopen(seed, "w");
                cr_assert_not_null(f);
                fputs(bugs[i], f);
                fclose(f);
        }
        const char *args[] = {
            "run",         plain,       seeds, "--sanitizer-target", asan, "--out",
            out,           "--workers", "1",   "--max-total-time",   "5",  "--keep-going",
            "--no-screen", NULL};
        SfRun r;
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 1, "crash found:\n%s", r.err);
        cr_assert_eq(sf_count_crashes(out), 1, "one id:\n%s", r.err);
        char *id = sf_only_crash(out);
        char path[4400];
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        size_t len;
        uint8_t *text = sf_read(path, &len);
        cr_assert_not_null(text);
        cJSON *j = cJSON_ParseWithLength((const char *)text, len);
        cr_assert_not_null(j);
        const cJSON *count = cJSON_GetObjectItemCaseSensitive(j, "count");
        cr_assert(cJSON_IsNumber(count) && count->valuedouble >= 2,
                  "stored again under its id:\n%s", (const char *)text);
        cJSON_Delete(j);
        free(text);
        free(id);
        sf_run_free(&r);
        free(out);
        free(seeds);
}

/* A seed that crashes the sanitizer build is caught by it even when the
 * fuzzing workers run nothing but that seed (--runs 1). */
Test(split, seeds_are_checked, .timeout = 120)
{
        char plain[4096], asan[4096], seed[4400];
        san_target("uaf", false, plain, sizeof(plain));
        san_target("uaf", true, asan, sizeof(asan));
        char *out = sf_tmpdir();
        char *seeds = sf_tmpdir();
        snprintf(seed, sizeof(seed), "%s/bug", seeds);
        FILE *f = fopen(seed, "w");
        cr_assert_not_null(f);
        fputs("SAN!\x01", f);
        fclose(f);
        const char *args[] = {
            "run", plain,    seeds, "--sanitizer-target", asan, "--out", out, "--workers",
            "1",   "--runs", "1",   "--no-screen",        NULL};
        SfRun r;
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 1, "the seed's bug is found:\n%s", r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_assert_str_eq(kind, "asan");
        cJSON *stats = load_stats(out);
        cr_assert_eq(stat_num(stats, "execs"), 1, "the plain build ran the one seed only");
        cr_assert_eq(stat_num(stats, "sanitizer_seeds"), 1);
        cJSON_Delete(stats);
        free(kind);
        free(id);
        sf_run_free(&r);
        free(seeds);
        free(out);
}

/* A run where the sanitizer build finds nothing: it checks the seeds, new
 * corpus entries and samples of the fuzzing, within its share of the time,
 * and the status lines count what it checked. */
Test(split, sanitizer_worker_keeps_its_share, .timeout = 120)
{
        char plain[4096], asan[4096];
        san_target("none", false, plain, sizeof(plain));
        san_target("none", true, asan, sizeof(asan));
        char *out = sf_tmpdir();
        const char *args[] = {"run",
                              plain,
                              "--sanitizer-target",
                              asan,
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              "6",
                              "--no-screen",
                              "--sanitizer-share",
                              "5",
                              "--status-every",
                              "1",
                              NULL};
        SfRun r;
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "nothing found:\n%s", r.err);
        cr_assert(strstr(r.err, "sanitizer-checked"), "the status line counts:\n%s", r.err);
        cJSON *stats = load_stats(out);
        double elapsed = stat_num(stats, "elapsed_s");
        double busy = stat_num(stats, "sanitizer_busy_s");
        cr_assert_geq(stat_num(stats, "sanitizer_seeds"), 1);
        cr_assert_geq(stat_num(stats, "sanitizer_corpus"), 4, "the magic's steps were checked");
        cr_assert_gt(stat_num(stats, "sanitizer_samples"), 0, "fuzzing inputs were sampled");
        cr_assert_eq(stat_num(stats, "sanitizer_checked"),
                     stat_num(stats, "sanitizer_seeds") + stat_num(stats, "sanitizer_corpus") +
                         stat_num(stats, "sanitizer_samples"));
        /* 5% of one worker's time, one second's allowance, one batch over. */
        cr_assert_leq(busy, 0.05 * elapsed + 1.0 + 0.5, "busy %.2f s of %.2f s", busy, elapsed);
        cr_assert_gt(stat_num(stats, "execs"), 10 * stat_num(stats, "sanitizer_checked"),
                     "the plain build ran far more");
        cJSON_Delete(stats);
        sf_run_free(&r);
        free(out);
}

/* The child of @parent whose command line holds "--target" then @target,
 * or 0. */
static pid_t worker_of(pid_t parent, const char *target)
{
        DIR *d = opendir("/proc");
        cr_assert_not_null(d);
        struct dirent *e;
        pid_t found = 0;
        while (!found && (e = readdir(d)) != NULL) {
                char path[300], buf[8192];
                pid_t pid = (pid_t)atoi(e->d_name);
                if (pid <= 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
                FILE *f = fopen(path, "r");
                int ppid = 0;
                if (!f)
                        continue;
                if (fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) != 1)
                        ppid = 0;
                fclose(f);
                if (ppid != parent)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
                f = fopen(path, "r");
                if (!f)
                        continue;
                size_t n = fread(buf, 1, sizeof(buf) - 1, f);
                fclose(f);
                for (size_t i = 0; i + 1 < n; i += strlen(buf + i) + 1)
                        if (strcmp(buf + i, "--target") == 0 && i + 9 < n &&
                            strcmp(buf + i + 9, target) == 0)
                                found = pid;
        }
        closedir(d);
        return found;
}

/* The sanitizer worker killed from outside is replaced, and checking goes
 * on. */
Test(split, a_killed_sanitizer_worker_is_replaced, .timeout = 120)
{
        char plain[4096], asan[4096], real_asan[4096];
        san_target("none", false, plain, sizeof(plain));
        san_target("none", true, asan, sizeof(asan));
        cr_assert_not_null(realpath(asan, real_asan));
        char *dir = sf_tmpdir();
        char out[4200];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {
            "run",       plain, "--sanitizer-target", asan, "--out",       out,
            "--workers", "1",   "--max-total-time",   "8",  "--no-screen", "--status-every",
            "1",         NULL};
        pid_t run = sf_start(dir, args);
        pid_t w = 0;
        for (int i = 0; i < 100 && !w; i++) {
                usleep(50000);
                w = worker_of(run, real_asan);
        }
        cr_assert_gt(w, 0, "the sanitizer worker runs");
        sleep(2);
        cJSON *before = load_stats(out);
        double checked = stat_num(before, "sanitizer_checked");
        cJSON_Delete(before);
        cr_assert_eq(kill(w, SIGKILL), 0);
        int code = sf_wait(run, 60);
        char err_path[4300];
        snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
        size_t len;
        char *err = (char *)sf_read(err_path, &len);
        cr_assert_not_null(err);
        cr_assert_eq(code, 0, "nothing found, no error:\n%.*s", (int)len, err);
        cr_assert(strstr(err, "starting a new one"), "restarted:\n%.*s", (int)len, err);
        cJSON *after = load_stats(out);
        cr_assert_gt(stat_num(after, "sanitizer_checked"), checked,
                     "checking went on after the kill");
        cJSON_Delete(after);
        free(err);
        free(dir);
}

typedef struct BadCase {
        const char *label;
        const char *opts[4]; /* after "run PLAIN" */
        const char *says;    /* in the one line */
} BadCase;

/* Targets by name are resolved in the test: "@plain", "@asan", "@noentry". */
static const BadCase bad_cases[] = {
    {"no sanitizer", {"--sanitizer-target", "@plain2"}, "has no AddressSanitizer or UBSan"},
    {"the target itself", {"--sanitizer-target", "@plain"}, "is the target itself"},
    {"missing file", {"--sanitizer-target", "/nonexistent/asan.so"}, "--sanitizer-target"},
    {"no entry point", {"--sanitizer-target", "@noentry"}, "LLVMFuzzerTestOneInput"},
    {"share 0", {"--sanitizer-target", "@asan", "--sanitizer-share", "0"}, "--sanitizer-share"},
    {"share 101", {"--sanitizer-target", "@asan", "--sanitizer-share", "101"}, "--sanitizer-share"},
    {"share alone", {"--sanitizer-share", "20"}, "needs --sanitizer-target"},
    {"files", {"--sanitizer-target", "@asan", "@file"}, "is for fuzzing"},
};
#define N_BAD_CASES (sizeof(bad_cases) / sizeof(bad_cases[0]))

static int bad_numbers[N_BAD_CASES];

ParameterizedTestParameters(split, bad_option_one_line_exit_2)
{
        for (size_t i = 0; i < N_BAD_CASES; i++)
                bad_numbers[i] = (int)i;
        return cr_make_param_array(int, bad_numbers, N_BAD_CASES);
}

ParameterizedTest(int *number, split, bad_option_one_line_exit_2, .timeout = 60)
{
        const BadCase *bc = &bad_cases[*number];
        char plain[4096], plain2[4096], asan[4096], file[4400];
        san_target("heap_read", false, plain, sizeof(plain));
        san_target("heap_write", false, plain2, sizeof(plain2));
        san_target("heap_read", true, asan, sizeof(asan));
        char *out = sf_tmpdir();
        snprintf(file, sizeof(file), "%s/input", out);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f);
        fputs("x", f);
        fclose(f);
        const char *args[16] = {"run", plain};
        int n = 2;
        for (int i = 0; i < 4 && bc->opts[i]; i++) {
                const char *o = bc->opts[i];
                if (strcmp(o, "@plain") == 0)
                        o = plain;
                else if (strcmp(o, "@plain2") == 0)
                        o = plain2;
                else if (strcmp(o, "@asan") == 0)
                        o = asan;
                else if (strcmp(o, "@noentry") == 0)
                        o = sf_target("no_entry_asan");
                else if (strcmp(o, "@file") == 0)
                        o = file;
                args[n++] = o;
        }
        char outdir[4200];
        snprintf(outdir, sizeof(outdir), "%s/out", out);
        args[n++] = "--out";
        args[n++] = outdir;
        args[n++] = "--max-total-time";
        args[n++] = "5";
        args[n] = NULL;
        SfRun r;
        sf_run(&r, 30, args);
        cr_assert_eq(r.exit_code, 2, "%s: exit 2:\n%s", bc->label, r.err);
        cr_assert(strstr(r.err, bc->says), "%s: says '%s':\n%s", bc->label, bc->says, r.err);
        /* One line: the error, nothing before it but the start-up lines
         * of a run that got as far as loading the targets. */
        int errors = 0;
        for (const char *p = r.err; (p = strstr(p, "error:")) != NULL; p++)
                errors++;
        cr_assert_eq(errors, 1, "%s: one error line:\n%s", bc->label, r.err);
        sf_run_free(&r);
        free(out);
}
