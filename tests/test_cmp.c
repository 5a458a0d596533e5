/*
 * Comparison feedback and dictionaries, end to end on the real binary:
 * bugs guarded by wide constants, memcmp and the string functions are
 * found with one worker in well under a minute; the interposed string
 * functions answer as libc does; --dict skips a line it cannot use with
 * one warning naming it and fuzzes on; the automatic dictionary is saved in the output
 * directory, in the --dict format, and reused by the next run; the value
 * profile turns how close a comparison came into coverage.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

static char *path_in(const char *dir, const char *name)
{
        size_t n = strlen(dir) + strlen(name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, name);
        return p;
}

static void write_file(const char *path, const char *text, size_t len)
{
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "cannot create %s", path);
        cr_assert_eq(fwrite(text, 1, len, f), len);
        fclose(f);
}

/* Fuzzes @target with one worker until the first crash, at most @secs
 * seconds, and returns the stored input (its length in *ret_len). */
static uint8_t *find_crash_within(const char *target, const char *seed, const char *secs,
                                  char **ret_out, size_t *ret_len)
{
        char *dir = sf_tmpdir();
        char *out = path_in(dir, "out");
        SfRun r;
        const char *args[] = {"run", sf_target(target),  "--out", out,      "--workers",
                              "1",   "--max-total-time", secs,    "--seed", seed,
                              NULL};
        sf_run(&r, atoi(secs) + 90, args);
        cr_assert_eq(r.exit_code, 1, "%s (seed %s): no crash within %s s (exit %d):\n%s", target,
                     seed, secs, r.exit_code, r.err);
        sf_run_free(&r);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "abort");
        char *crash_dir = path_in(out, "crashes");
        char *id_dir = path_in(crash_dir, id);
        char *input = path_in(id_dir, "input");
        uint8_t *data = sf_read(input, ret_len);
        cr_assert_not_null(data);
        free(input);
        free(id_dir);
        free(crash_dir);
        free(kind);
        free(id);
        free(dir);
        if (ret_out)
                *ret_out = out;
        else
                free(out);
        return data;
}

static uint8_t *find_crash(const char *target, const char *seed, char **ret_out, size_t *ret_len)
{
        return find_crash_within(target, seed, "60", ret_out, ret_len);
}

Test(cmp, a_bug_behind_32_and_64_bit_constants_and_a_memcmp_is_found, .timeout = 200)
{
        size_t len;
        uint8_t *in = find_crash("cmp_guard", "1", NULL, &len);
        cr_assert_geq(len, 20);
        cr_expect_arr_eq(in, "\x55\x1e\xed\x5e", 4, "the 32-bit constant, little-endian");
        cr_expect_arr_eq(in + 4, "\xef\xbe\xad\xde\x15\xee\xff\xc0", 8, "the 64-bit constant");
        cr_expect_arr_eq(in + 12, "SNAPFUZZ", 8, "the memcmp operand");
        free(in);
}

Test(cmp, each_kind_of_guard_alone_is_found, .timeout = 450)
{
        static const char *const targets[] = {"cmp_guard_i32", "cmp_guard_i64", "cmp_guard_memcmp"};
        for (size_t i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
                size_t len;
                free(find_crash(targets[i], "2", NULL, &len));
        }
}

Test(cmp, string_function_guards_are_found, .timeout = 200)
{
        size_t len;
        uint8_t *in = find_crash("cmp_strings", "3", NULL, &len);
        cr_assert_geq(len, 5);
        cr_expect_eq(strncasecmp((const char *)in, "snap:", 5), 0);
        cr_expect_not_null(memmem(in, len, "needle", 6));
        cr_expect_not_null(memmem(in, len, "\xde\xc0\xad\x0b", 4));
        free(in);
}

/* Each needle is found in about a second on an idle machine; without the
 * hook that records it, never (random bytes do not hold 13 or 16 chosen
 * bytes). 30 s leaves room for a loaded machine. */
Test(cmp, a_strcasestr_needle_is_found, .timeout = 150)
{
        size_t len;
        uint8_t *in = find_crash_within("cmp_strcasestr", "7", "30", NULL, &len);
        char *s = strndup((const char *)in, len);
        cr_expect_not_null(strcasestr(s, "snap-needle:case"), "%s", s);
        free(s);
        free(in);
}

Test(cmp, a_memmem_needle_is_found, .timeout = 150)
{
        size_t len;
        uint8_t *in = find_crash_within("cmp_memmem", "8", "30", NULL, &len);
        cr_expect_not_null(memmem(in, len, "\x7f\x00\xfe\x01snapMEM\x80\x81", 13));
        free(in);
}

/* A constant longer than the 32 bytes the comparison table keeps of an
 * operand: each window of it is recorded, so input-to-state writes it all
 * (about a second each on an idle machine; recorded from their start only,
 * neither was found in 60 s: once the first window matched, nothing wrote
 * the rest). */
Test(cmp, a_memcmp_or_strncmp_longer_than_the_table_keeps_is_found, .timeout = 200)
{
        static const struct {
                const char *target, *seed, *key;
                size_t len;
        } cases[] = {
            {"cmp_long", "11", "memcmp-window|0123456789|abcdefghijklmnopqrstuvwxyz|end-of-key",
             60},
            {"cmp_long_strncmp", "12", "strncmp-window|ABCDEFGHIJKLMNOPQRSTUVWXYZ/tail-end", 48},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                size_t len;
                uint8_t *in = find_crash_within(cases[i].target, cases[i].seed, "30", NULL, &len);
                cr_assert_geq(len, cases[i].len, "%s, seed %s", cases[i].target, cases[i].seed);
                cr_expect_arr_eq(in, cases[i].key, cases[i].len, "%s, seed %s", cases[i].target,
                                 cases[i].seed);
                free(in);
        }
}

/* Comparisons of the input's value plus a constant (a dense switch's range
 * check): found in 0.5-2.5 s by adding the operands' difference to a value
 * in the input; writing the operand there instead, in none of 30 s. */
Test(cmp, a_range_check_of_a_value_minus_a_constant_is_found, .timeout = 200)
{
        size_t len;
        uint32_t a, b;
        uint8_t *in = find_crash_within("cmp_offset", "13", "30", NULL, &len);
        cr_assert_geq(len, 8, "seed 13");
        memcpy(&a, in, 4);
        memcpy(&b, in + 4, 4);
        cr_expect_lt((uint32_t)(a - 0x7e57ab10u), 4u, "seed 13: the first field is a case");
        cr_expect_lt((uint32_t)(b - 0x600df00du), 2u, "seed 13: the second is in its range");
        free(in);
}

/* Eight bytes compared in a loop with sete and counted: found in 4-12 s
 * (3 M executions) on an idle machine by counting equal comparisons per
 * call site; without that, no feedback tells one more matching byte from
 * none (and libFuzzer does not find it in 60 s either). */
Test(cmp, a_branchless_byte_counting_loop_is_found, .timeout = 200)
{
        size_t len;
        uint8_t *in = find_crash_within("cmp_count", "9", "90", NULL, &len);
        cr_assert_geq(len, 8);
        cr_expect_arr_eq(in, "\x5a\x71\x37\x21\x6d\x4b\x32\x23", 8);
        free(in);
}

/* An AddressSanitizer build whose comparisons reach snapfuzz only through
 * the runtime's interceptors and the weak hooks they call. */
Test(cmp, comparisons_seen_by_sanitizer_weak_hooks_are_found, .timeout = 150)
{
        size_t len;
        uint8_t *in = find_crash_within("cmp_weak_hooks", "10", "30", NULL, &len);
        cr_assert_geq(len, 24);
        cr_expect_arr_eq(in, "\xfa\xce\xb0\x0c-weak-hk", 12);
        cr_expect_eq(strncasecmp((const char *)in + 12, "sanitized:ok", 12), 0);
        free(in);
}

/* The target traps whenever an interposed function answers otherwise than
 * a reference loop; seeds make sure equal operands are among the inputs. */
Test(cmp, interposed_string_functions_answer_as_libc_does, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char *seeds = path_in(dir, "seeds");
        char *out = path_in(dir, "out");
        static const struct {
                const char *name;
                const char *bytes;
                size_t len;
        } inputs[] = {
            {"equal",
             "\x10"
             "abcdefabcdef",
             13},
            {"case",
             "\x30"
             "HeLLo!hello!",
             13},
            {"prefix",
             "\x05"
             "abcdeabcdX",
             11},
            {"nul",
             "\x20"
             "ab\0cdab\0ce",
             11},
            {"needle",
             "\x03"
             "xxneedleyyneedle",
             17},
            {"high",
             "\x09"
             "\xff\x80\x7f\xff\x80\x7e",
             7},
        };

        cr_assert_eq(mkdir(seeds, 0755), 0);
        for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
                char *p = path_in(seeds, inputs[i].name);
                write_file(p, inputs[i].bytes, inputs[i].len);
                free(p);
        }
        SfRun r;
        const char *args[] = {"run", sf_target("hook_check"), seeds, "--out",  out, "--workers",
                              "1",   "--max-total-time",      "10",  "--seed", "4", NULL};
        sf_run(&r, 90, args);
        cr_expect_eq(r.exit_code, 0, "a hooked function answered wrongly (exit %d):\n%s",
                     r.exit_code, r.err);
        sf_run_free(&r);
        free(seeds);
        free(out);
        free(dir);
}

/* Counts the lines of @text that contain @what. */
static int lines_with(const char *text, const char *what)
{
        int n = 0;
        for (const char *p = text; (p = strstr(p, what)); p++) {
                const char *eol = strchr(p, '\n');
                n++;
                if (!eol)
                        break;
                p = eol;
        }
        return n;
}

/* Lines the peers read but snapfuzz cannot use (a 65-byte token, like
 * line 35 of libxml2's schema dictionary; an escape neither peer knows)
 * are skipped with one warning naming the file and the first line, and
 * the run goes on with the other tokens. */
Test(cmp, a_dictionary_line_snapfuzz_cannot_use_is_skipped_with_one_warning, .timeout = 90)
{
        char *dir = sf_tmpdir();
        char *out = path_in(dir, "out");
        const char *dicts = getenv("SF_TEST_DICTS");
        cr_assert_not_null(dicts);
        char *dict = path_in(dicts, "peers.dict");

        SfRun r;
        const char *args[] = {"run", sf_target("cmp_vp"), "--dict", dict,     "--out",
                              out,   "--workers",         "1",      "--runs", "20000",
                              NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 0, "exit %d:\n%s", r.exit_code, r.err);
        char want[600];
        snprintf(want, sizeof(want),
                 "snapfuzz: warning: %s:16: the value is longer than 64 bytes, the longest token "
                 "snapfuzz uses; the token is skipped (1 more line skipped: 18)",
                 dict);
        cr_expect(strstr(r.err, want), "no \"%s\" in:\n%s", want, r.err);
        cr_expect_eq(lines_with(r.err, "warning"), 1, "one warning:\n%s", r.err);
        cr_expect(strstr(r.err, "dictionary: 7 tokens from "), "%s", r.err);
        sf_run_free(&r);

        /* A file that cannot be read is still refused, before anything. */
        const char *missing[] = {
            "run", sf_target("cmp_guard"), "--dict", "/nonexistent/dict", "--out", out, NULL};
        sf_run(&r, 30, missing);
        cr_expect_eq(r.exit_code, 2);
        cr_expect(strstr(r.err, "cannot read the dictionary /nonexistent/dict"), "%s", r.err);
        sf_run_free(&r);
        free(dict);
        free(out);
        free(dir);
}

Test(cmp, the_automatic_dictionary_is_saved_and_reused, .timeout = 300)
{
        char *out;
        size_t len;
        free(find_crash("cmp_guard", "5", &out, &len));

        /* Finding the bug took comparison operands that reached new
         * coverage (passing the first guards); they were saved. */
        char *autodict = path_in(out, "autodict");
        uint8_t *text = sf_read(autodict, &len);
        cr_assert_not_null(text, "no %s", autodict);
        cr_expect_eq(text[0], '#', "a comment line first");
        cr_expect(strstr((char *)text, "\"U\\x1e\\xed^\"") ||
                      strstr((char *)text, "\"\\xef\\xbe\\xad\\xde\\x15\\xee\\xff\\xc0\""),
                  "neither guard constant in:\n%s", (char *)text);
        free(text);

        /* The next run in the same directory starts with it... */
        SfRun r;
        const char *again[] = {"run", sf_target("cmp_guard_i32"), "--out", out, "--workers",
                               "1",   "--max-total-time",         "2",     NULL};
        sf_run(&r, 60, again);
        cr_expect(strstr(r.err, "dictionary: 0 tokens from --dict, "), "%s", r.err);
        sf_run_free(&r);

        /* ...and it is a valid --dict file for another one. */
        char *dir = sf_tmpdir();
        char *other = path_in(dir, "other");
        const char *reuse[] = {
            "run", sf_target("cmp_guard_i64"), "--dict", autodict, "--out", other, "--workers",
            "1",   "--max-total-time",         "2",      NULL};
        sf_run(&r, 60, reuse);
        cr_expect_neq(r.exit_code, 2, "refused:\n%s", r.err);
        cr_expect(strstr(r.err, "tokens from "), "%s", r.err);
        sf_run_free(&r);
        free(other);
        free(dir);
        free(autodict);
        free(out);
}

/* Runs @target for @secs seconds and returns stats.json's features. */
static double features_after(const char *target, const char *secs, bool value_profile)
{
        char *dir = sf_tmpdir();
        char *out = path_in(dir, "out");
        SfRun r;
        const char *args[] = {"run",
                              sf_target(target),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              secs,
                              "--seed",
                              "6",
                              value_profile ? "--use-value-profile" : NULL,
                              NULL};
        sf_run(&r, 60, args);
        cr_assert(r.exit_code == 0 || r.exit_code == 1, "exit %d:\n%s", r.exit_code, r.err);
        sf_run_free(&r);
        char *stats = path_in(out, "stats.json");
        size_t len;
        char *text = (char *)sf_read(stats, &len);
        cr_assert_not_null(text);
        cJSON *j = cJSON_Parse(text);
        cr_assert_not_null(j);
        double f = cJSON_GetObjectItem(j, "features")->valuedouble;
        cJSON_Delete(j);
        free(text);
        free(stats);
        free(out);
        free(dir);
        return f;
}

/* cmp_vp compares a value computed from the input with a constant: plain
 * coverage sees one branch, the value profile a feature for every distance
 * the fuzzer reaches on the way. */
Test(cmp, the_value_profile_turns_comparison_distances_into_coverage, .timeout = 120)
{
        double plain = features_after("cmp_vp", "3", false);
        double vp = features_after("cmp_vp", "3", true);
        cr_expect_leq(plain, 5, "%g features without the value profile", plain);
        cr_expect_geq(vp, plain + 10, "%g features with it, %g without", vp, plain);
}
