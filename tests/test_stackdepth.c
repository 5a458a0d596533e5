/*
 * Stack-depth feedback end to end on the real binary: a bug that only
 * brackets nested more than 2500 deep reach (tests/targets/deep_recursion.c,
 * where edges tell nothing about depth) is found with one worker within a
 * budget, and the stored input does nest that deep. Without the feature the
 * same run finds nothing in 120 s (checked by hand; see the README).
 *
 * And the bug at exactly a nesting limit (tests/targets/nest_limit.c:
 * exactly 1000 '[' then '{', cJSON's shape), which a run of '[' as long as
 * the compared limit reaches (core/mutator.c, cmp_run).
 *
 * The runs' seed is SF_STACKDEPTH_SEED (printed), 1 by default.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sfrun.h"

static char *path_join(const char *a, const char *b, const char *c)
{
        size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s%s%s", a, b, *c ? "/" : "", c);
        return p;
}

/* The deepest nesting deep_recursion.c's parser reaches on @data. */
static unsigned nesting(const uint8_t *data, size_t len)
{
        unsigned depth = 0, deepest = 0;

        for (size_t i = 0; i < len; i++) {
                if (data[i] == '[' && ++depth > deepest)
                        deepest = depth;
                else if (data[i] == ']' && depth > 0)
                        depth--;
        }
        return deepest;
}

/* Runs @target with one worker until it crashes, within @secs seconds;
 * returns the output directory. */
static char *run_to_crash(const char *dir, const char *target, const char *secs)
{
        const char *seed = getenv("SF_STACKDEPTH_SEED");
        if (!seed || !*seed)
                seed = "1";
        fprintf(stderr, "stackdepth: %s, seed %s (replay with SF_STACKDEPTH_SEED=%s)\n", target,
                seed, seed);

        char *out = path_join(dir, "out", "");
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
                              seed,
                              "--no-minimize",
                              NULL};
        sf_run(&r, 100 + atoi(secs), args);
        cr_assert_eq(r.exit_code, 1, "no crash within %s s (exit %d):\n%s", secs, r.exit_code,
                     r.err);
        sf_run_free(&r);
        return out;
}

Test(stackdepth, a_bug_behind_deep_recursion_is_found, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char *out = run_to_crash(dir, "deep_recursion", "120");

        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "abort");
        char *crashes = path_join(out, "crashes", id);
        char *input = path_join(crashes, "input", "");
        size_t len = 0;
        uint8_t *data = sf_read(input, &len);
        cr_assert_not_null(data);
        cr_expect_gt(nesting(data, len), 2500u, "the stored input nests %u deep",
                     nesting(data, len));
        free(data);
        free(input);
        free(crashes);
        free(kind);
        free(id);
        free(out);
        free(dir);
}

Test(stackdepth, a_bug_at_exactly_a_nesting_limit_is_found, .timeout = 200)
{
        char *dir = sf_tmpdir();
        char *out = run_to_crash(dir, "nest_limit", "60");
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "abort");
        free(kind);
        free(id);
        free(out);
        free(dir);
}
