/*
 * End to end: the real snapfuzz binary on the bundled targets finds each
 * planted bug, stores the exact input (an independent loader crashes on
 * it), and `snapfuzz reproduce` replays it. Plus the ways a runner can die
 * that the bundled parsers do not cover: exit(), SIGKILL from the target
 * itself, and a blocked escape attempt.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapfuzz/record.h"
#include "tests/sfrun.h"

typedef struct Found {
        char *dir;
        char *out;
        char *id;
        char input[512];
} Found;

/* Fuzzes @target until it crashes, from the seed corpus @seeds (a folder
 * of fuzz_targets/seeds) or from nothing (NULL). */
static Found fuzz_from_until_crash(const char *target, const char *seeds, const char *timeout)
{
        Found f = {.dir = sf_tmpdir()};
        f.out = malloc(strlen(f.dir) + 8);
        snprintf(f.out, strlen(f.dir) + 8, "%s/out", f.dir);
        char seed_dir[512];
        snprintf(seed_dir, sizeof(seed_dir), "%s/%s", sf_env("SF_SEEDS"), seeds ? seeds : "");
        SfRun r;
        const char *args[] = {"run",
                              target,
                              "--out",
                              f.out,
                              "--workers",
                              "1",
                              "--timeout",
                              timeout,
                              "--max-total-time",
                              "150",
                              "--seed",
                              "7",
                              seeds ? seed_dir : NULL,
                              NULL};
        sf_run(&r, 240, args);
        cr_assert_eq(r.exit_code, 1, "expected exit 1 (crash found), got %d; stderr:\n%s",
                     r.exit_code, r.err);
        cr_assert(strstr(r.err, "stored in"), "no crash line in:\n%s", r.err);
        sf_run_free(&r);
        f.id = sf_only_crash(f.out);
        snprintf(f.input, sizeof(f.input), "%s/crashes/%s/input", f.out, f.id);
        struct stat st;
        cr_assert_eq(stat(f.input, &st), 0, "no stored input %s", f.input);
        return f;
}

static Found fuzz_until_crash(const char *target, const char *timeout)
{
        return fuzz_from_until_crash(target, NULL, timeout);
}

static void expect_field(const Found *f, const char *field, const char *want)
{
        char *v = sf_crash_field(f->out, f->id, field);
        cr_expect_str_eq(v, want, "crash.json %s", field);
        free(v);
}

static void expect_reproduce(const Found *f, const char *kind)
{
        SfRun r;
        const char *args[] = {"reproduce", f->id, "--out", f->out, NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 1, "reproduce should exit 1 (still crashes); stderr:\n%s", r.err);
        char want[64];
        snprintf(want, sizeof(want), "REPRODUCED: %s", kind);
        cr_expect(strstr(r.out, want), "reproduce output lacks '%s':\n%s", want, r.out);
        sf_run_free(&r);
}

Test(integration, tlv_parser_out_of_bounds_write_is_found_stored_and_reproduced, .timeout = 300)
{
        const char *target = sf_target("tlv_parser");
        Found f = fuzz_until_crash(target, "1");
        expect_field(&f, "kind", "segv");
        expect_field(&f, "reproduced", "true");
        int st = sf_plainrun(target, f.input, 10);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
                  "the stored input must crash an independent loader with SIGSEGV (status %d)", st);
        expect_reproduce(&f, "segv");
}

Test(integration, ini_parser_abort_is_found_stored_and_reproduced, .timeout = 300)
{
        const char *target = sf_target("ini_parser");
        Found f = fuzz_until_crash(target, "1");
        expect_field(&f, "kind", "abort");
        int st = sf_plainrun(target, f.input, 10);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
                  "the stored input must abort an independent loader (status %d)", st);
        expect_reproduce(&f, "abort");
}

Test(integration, png_chunks_hang_is_found_as_timeout_and_reproduced, .timeout = 300)
{
        /* From its seeds: from nothing the hang takes 20 to 90 s to find
         * (a PNG signature, then a tEXt chunk), too long a wait here. */
        const char *target = sf_target("png_chunks");
        Found f = fuzz_from_until_crash(target, "png_chunks", "0.5");
        expect_field(&f, "kind", "timeout");
        expect_field(&f, "reproduced", "true");
        /* plainrun runs under alarm(3): a hang dies by SIGALRM. */
        int st = sf_plainrun(target, f.input, 3);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM,
                  "the stored input must hang an independent loader (status %d)", st);
        expect_reproduce(&f, "timeout");
}

Test(integration, target_calling_exit_is_kind_exit, .timeout = 200)
{
        const char *target = sf_target("exits");
        Found f = fuzz_until_crash(target, "1");
        expect_field(&f, "kind", "exit");
        expect_field(&f, "exit_status", "3");
        size_t len;
        uint8_t *in = sf_read(f.input, &len);
        cr_assert(len >= 1 && in[0] == 'X', "the recovered input starts with the gate byte");
        free(in);
        expect_reproduce(&f, "exit");
}

Test(integration, sigkill_from_the_target_is_kind_killed_with_its_input, .timeout = 200)
{
        const char *target = sf_target("sigkill_self");
        Found f = fuzz_until_crash(target, "1");
        expect_field(&f, "kind", "killed");
        expect_field(&f, "signal_name", "SIGKILL");
        size_t len;
        uint8_t *in = sf_read(f.input, &len);
        cr_assert(len >= 1 && in[0] == 'K', "the recovered input starts with 'K'");
        free(in);
        expect_reproduce(&f, "killed");
}

static void escape_is_blocked(const char *target_name, const char *syscall)
{
        char *dir = sf_tmpdir();
        char file[512];
        snprintf(file, sizeof(file), "%s/escaped", dir);
        setenv("SNAPFUZZ_TEST_ESCAPE_FILE", file, 1);
        Found f = fuzz_until_crash(sf_target(target_name), "1");
        expect_field(&f, "kind", "sandbox");
        char *msg = sf_crash_field(f.out, f.id, "message");
        cr_expect(strstr(msg, syscall), "the report names %s: %s", syscall, msg);
        free(msg);
        struct stat st;
        cr_expect_neq(stat(file, &st), 0, "the file the target tried to create must not exist");
        expect_reproduce(&f, "sandbox");
}

Test(integration, sandbox_blocks_execve_and_names_it, .timeout = 200)
{
        escape_is_blocked("sandbox_escape_exec", "execve");
}

Test(integration, sandbox_blocks_fork_and_names_it, .timeout = 200)
{
        escape_is_blocked("sandbox_escape_fork", "clone");
}

Test(integration, sandbox_blocks_file_creation_and_names_it, .timeout = 200)
{
        escape_is_blocked("sandbox_escape_open", "open");
}

Test(integration, a_crashing_seed_is_reported_from_the_warm_up_pass, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char seeds[512], out[512], path[600];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        mkdir(seeds, 0755);
        snprintf(path, sizeof(path), "%s/boom", seeds);
        FILE *fp = fopen(path, "wb");
        fputs("X crashes at once", fp);
        fclose(fp);
        SfRun r;
        const char *args[] = {"run", sf_target("exits"), seeds,     "--out", out, "--workers",
                              "1",   "--runs",           "1000000", NULL};
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        char *rec = sf_crash_field(out, id, "record");
        cr_expect(strstr(rec, "\"mode\":\"seeds\""), "the seed ran unmutated: %s", rec);
        cr_expect(strstr(rec, "\"iteration\":1"), "%s", rec);
        free(rec);
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *in = sf_read(path, &len);
        cr_expect_eq(len, strlen("X crashes at once"));
        cr_expect_arr_eq(in, "X crashes at once", len, "the stored input is the seed itself");
        free(in);
}

Test(integration, many_seeds_run_in_few_runners_and_the_crashing_one_is_found, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char seeds[512], out[512], path[700];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        mkdir(seeds, 0755);
        /* 300 harmless seeds, and one that exits, in the middle by name. */
        for (int i = 0; i < 300; i++) {
                snprintf(path, sizeof(path), "%s/seed-%03d", seeds, i);
                FILE *fp = fopen(path, "wb");
                fprintf(fp, i == 150 ? "X marks seed %d" : "harmless seed %d", i);
                fclose(fp);
        }
        SfRun r;
        const char *args[] = {"run", sf_target("exits"), seeds,     "--out", out, "--workers",
                              "1",   "--runs",           "1000000", NULL};
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *in = sf_read(path, &len);
        cr_expect_eq(len, strlen("X marks seed 150"));
        cr_expect_arr_eq(in, "X marks seed 150", len, "the crashing seed, byte for byte");
        char *rec = sf_crash_field(out, id, "record");
        cr_expect(strstr(rec, "\"mode\":\"seeds\""), "%s", rec);
        /* Each seed comes back with its features in a find slot, so a
         * runner runs at most RECORD_FINDS_SLOTS of them: seed 151 is in
         * the third runner's list. */
        char want[32];
        snprintf(want, sizeof(want), "\"iteration\":%u", 150 % RECORD_FINDS_SLOTS + 1);
        cr_expect(strstr(rec, want), "seed 151 in a list of %u: %s", RECORD_FINDS_SLOTS, rec);
        free(rec);
        free(in);
}

/* A seed whose tail the target never reads is reduced: inputs that reach
 * what the seed was the best input for, in fewer bytes, join the corpus
 * (and are written to OUT/corpus), each shorter than the last, down to a
 * few bytes. */
Test(integration, a_seed_with_a_tail_the_target_ignores_is_reduced, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char seeds[512], out[512], path[800];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        cr_assert_eq(mkdir(seeds, 0755), 0);
        snprintf(path, sizeof(path), "%s/long", seeds);
        FILE *fp = fopen(path, "wb");
        cr_assert_not_null(fp);
        fputs("SNAP", fp);
        for (int i = 0; i < 2000; i++)
                fputc('x', fp);
        fclose(fp);
        SfRun r;
        const char *args[] = {"run", sf_target("prefix"), seeds, "--out", out, "--workers",
                              "1",   "--max-total-time",  "5",   NULL};
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "stderr:\n%s", r.err);
        sf_run_free(&r);

        snprintf(path, sizeof(path), "%s/stats.json", out);
        size_t len;
        char *stats = (char *)sf_read(path, &len);
        cr_assert_not_null(stats);
        const char *at = strstr(stats, "\"corpus_reduced\":");
        cr_assert_not_null(at, "%s", stats);
        long reduced = strtol(at + strlen("\"corpus_reduced\":"), NULL, 10);
        cr_expect_geq(reduced, 1, "%s", stats);
        free(stats);

        /* The shortest input in OUT/corpus that starts like the seed. */
        snprintf(path, sizeof(path), "%s/corpus", out);
        DIR *d = opendir(path);
        cr_assert_not_null(d);
        size_t shortest = SIZE_MAX;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char file[1100];
                snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
                uint8_t *in = sf_read(file, &len);
                if (in && len >= 4 && memcmp(in, "SNAP", 4) == 0 && len < shortest)
                        shortest = len;
                free(in);
        }
        closedir(d);
        cr_expect_leq(shortest, 64, "the 2004-byte seed came down to %zu bytes", shortest);
}

/* A harness with its own cJSON_Version and its own rand (names the
 * snapfuzz executable's libraries export): its calls reach its own code,
 * or it aborts at the first input (tests/targets/ownsyms.c). */
Test(integration, a_harness_calls_its_own_copies_of_names_snapfuzz_links, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *args[] = {
            "run", sf_target("ownsyms"), "--out", out, "--workers", "1", "--runs", "20000", NULL};
        sf_run(&r, 100, args);
        cr_expect_eq(r.exit_code, 0, "the harness ran its own code; stderr:\n%s", r.err);
        cr_expect_eq(sf_count_crashes(out), 0);
        sf_run_free(&r);
}
