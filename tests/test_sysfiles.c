/*
 * The system files under the default sandbox (sandbox/sysfiles.c), through
 * the real binary: a target that does what libxml2 (iconv and its converter
 * modules) and sqlite (/dev/urandom, /dev/null) do, and reads locale and
 * time zone files, runs with no policy file and no crash, while writing to
 * those files, reading any other file, or leaving their directories with
 * ".." is still a `sandbox` crash naming openat; and such a refusal, once
 * reported, is refused with an error and counted instead of killing more
 * runners.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/sfrun.h"

TestSuite(sysfiles, .timeout = 300);

/* A seed directory in @dir holding one input, @input. */
static void make_seeds(const char *dir, const char *input, char *seeds, size_t cap)
{
        char path[700];
        FILE *f;

        snprintf(seeds, cap, "%s/seeds", dir);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        snprintf(path, sizeof(path), "%s/input", seeds);
        f = fopen(path, "w");
        cr_assert(f);
        fputs(input, f);
        fclose(f);
}

Test(sysfiles, what_libraries_read_runs_under_the_default_sandbox)
{
        char *dir = sf_tmpdir(), seeds[700], out[700], stats[800];
        SfRun r;

        make_seeds(dir, "any input", seeds, sizeof(seeds));
        snprintf(out, sizeof(out), "%s/out", dir);
        setenv("SYSTEM_FILES_VERBOSE", "1", 1);
        const char *args[] = {
            "run",  sf_target("system_files"), seeds, "--out", out, "--workers", "1", "--runs",
            "2000", "--max-total-time",        "120", NULL};
        sf_run(&r, 200, args);
        unsetenv("SYSTEM_FILES_VERBOSE");
        /* The steps this test is about work on this machine outside the
         * sandbox: iconv with a converter module, /dev/urandom, /dev/null. */
        cr_assert(strstr(r.err, "step 0 works"), "iconv_open does not work here:\n%s", r.err);
        cr_assert(strstr(r.err, "step 1 works"), "/dev/urandom cannot be read here");
        cr_assert(strstr(r.err, "step 6 works"), "/dev/null cannot be used here");
        cr_expect_eq(r.exit_code, 0, "expected no crash (exit 0), got %d; stderr:\n%s", r.exit_code,
                     r.err);
        cr_expect_not(strstr(r.err, "was refused"), "a refusal:\n%s", r.err);
        cr_expect_eq(sf_count_crashes(out), 0, "crashes were stored; stderr:\n%s", r.err);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        size_t len;
        uint8_t *text = sf_read(stats, &len);
        cr_assert(text);
        cr_expect(strstr((char *)text, "\"runner_deaths\":\t0"), "runner deaths:\n%s", text);
        cr_expect(strstr((char *)text, "\"execs\":\t2000"), "not every input ran:\n%s", text);
        free(text);
        sf_run_free(&r);
        free(dir);
}

/* What @input makes system_files_refused do is a `sandbox` crash naming
 * openat, with @path in the refusal the run prints. */
static void still_refused(const char *input, const char *path)
{
        char *dir = sf_tmpdir(), seeds[700], out[700];
        SfRun r;

        make_seeds(dir, input, seeds, sizeof(seeds));
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run", sf_target("system_files_refused"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--runs",
                              "1",   NULL};
        sf_run(&r, 120, args);
        cr_expect_eq(r.exit_code, 1, "%s: expected a crash (exit 1), got %d; stderr:\n%s", input,
                     r.exit_code, r.err);
        cr_expect(strstr(r.err, path), "%s: the refusal should name %s:\n%s", input, path, r.err);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        char *message = sf_crash_field(out, id, "message");
        cr_expect_str_eq(kind, "sandbox", "%s: kind", input);
        cr_expect(strstr(message, "the sandbox blocked syscall openat "), "%s: %s", input, message);
        free(kind);
        free(message);
        free(id);
        sf_run_free(&r);
        free(dir);
}

Test(sysfiles, writing_a_system_file_is_refused)
{
        still_refused("W", "\"/dev/urandom\") was refused: not a read-only open");
}

Test(sysfiles, creating_a_file_in_a_system_directory_is_refused)
{
        still_refused("C", "\"/usr/share/zoneinfo/snapfuzz-test\") was refused");
}

Test(sysfiles, other_files_are_refused)
{
        still_refused("S", "\"/etc/passwd\") was refused");
}

Test(sysfiles, dotdot_does_not_leave_a_system_directory)
{
        still_refused("D", "\"/usr/lib/locale/../../../etc/passwd\") was refused");
}

/* A refusal that repeats is one finding: the first kills its runner and is
 * stored, with the policy file rule that would allow it; later ones of its
 * class fail with an error, are counted, and kill no runner. */
Test(sysfiles, a_repeated_refusal_kills_one_runner_and_is_counted)
{
        char *dir = sf_tmpdir(), seeds[700], out[700], stats[800];
        const char *rule = "{\"allow\": [{\"syscall\":\"openat\",\"under\":\"/etc\"}]}";
        size_t len;
        SfRun r;

        make_seeds(dir, "S", seeds, sizeof(seeds));
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run",
                              sf_target("system_files_refused"),
                              seeds,
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--max-total-time",
                              "6",
                              NULL};
        sf_run(&r, 200, args);
        cr_expect_eq(r.exit_code, 1, "expected crashes (exit 1), got %d; stderr:\n%s", r.exit_code,
                     r.err);
        cr_expect(strstr(r.err, rule), "the rule that would allow it is not printed:\n%s", r.err);
        snprintf(stats, sizeof(stats), "%s/stats.json", out);
        uint8_t *text = sf_read(stats, &len);
        cr_assert(text);
        cJSON *j = cJSON_Parse((char *)text);
        cr_assert(j, "stats.json: %s", text);
        const cJSON *e, *found = NULL;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "sandbox_refusals"))
        {
                if (strcmp(cJSON_GetObjectItem(e, "key")->valuestring, "openat /etc read") == 0)
                        found = e;
        }
        cr_assert(found, "no class for the refused read of /etc/passwd:\n%s", text);
        double deaths = cJSON_GetObjectItem(found, "runner_deaths")->valuedouble;
        double quiet = cJSON_GetObjectItem(found, "quiet")->valuedouble;
        /* The seed runs first, and the fuzzer keeps finding 'S' inputs. */
        cr_expect_geq(deaths, 1);
        cr_expect_leq(deaths, 2, "a reported refusal went on killing runners:\n%s", text);
        /* Counts arrive every quarter second (and when a runner ends). */
        cr_expect_gt(quiet, 100, "later refusals were not counted:\n%s", text);
        cr_expect_leq(cJSON_GetObjectItem(j, "runner_deaths")->valuedouble, 10,
                      "runner deaths:\n%s", text);
        cJSON_Delete(j);
        free(text);

        /* The stored crash says what would allow it. */
        int n = sf_count_crashes(out);
        cr_expect_geq(n, 1);
        sf_run_free(&r);
        free(dir);
}
