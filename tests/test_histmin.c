/*
 * The shrink of a state-dependent crash's history (recovery/histmin.h) on
 * pure oracles standing in for a target with state: it keeps exactly what
 * the crash needs, keeps the crashing execution last, and when its budget
 * runs out still returns a list that crashes. The end-to-end behaviour on
 * a real target is in test_deaths.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "recovery/histmin.h"
#include "snapfuzz/prng.h"

/* A table of 63 keys that overflows on the 64th distinct key; keys[] is
 * the history (one key per execution). */
typedef struct Table {
        const uint8_t *keys;
        uint64_t calls;
} Table;

static int table_oracle(void *ctx, const size_t *idx, size_t n)
{
        Table *t = ctx;
        bool seen[256] = {false};
        int used = 0;
        t->calls++;
        for (size_t i = 0; i < n; i++) {
                uint8_t k = t->keys[idx[i]];
                if (seen[k])
                        continue;
                if (used == 63)
                        return i == n - 1; /* it crashes; the same way only at the end */
                seen[k] = true;
                used++;
        }
        return 0;
}

static uint64_t test_seed(void)
{
        const char *env = getenv("SF_HISTMIN_SEED");
        uint64_t seed = env ? strtoull(env, NULL, 0) : 20261126;
        cr_log_info("SF_HISTMIN_SEED=%llu", (unsigned long long)seed);
        return seed;
}

/* A history of @n keys drawn from 200, cut where the 64th distinct key
 * appears: that key is the last. Returns the length. */
static size_t table_history(uint8_t *keys, size_t n, uint64_t seed)
{
        SfPrng rng;
        bool seen[256] = {false};
        int distinct = 0;
        prng_seed(&rng, seed, 1);
        for (size_t i = 0; i < n; i++) {
                uint8_t k;
                /* Rare new keys: most of the history repeats a few. */
                do
                        k = (uint8_t)(prng_below(&rng, 8) ? prng_below(&rng, 4)
                                                          : prng_below(&rng, 200));
                while (distinct == 63 && !seen[k] && i < n / 2);
                keys[i] = k;
                if (!seen[k]) {
                        seen[k] = true;
                        if (++distinct == 64)
                                return i + 1;
                }
        }
        return 0;
}

Test(histmin, a_table_history_shrinks_to_the_64_executions_it_needs)
{
        static uint8_t keys[20000];
        size_t n = table_history(keys, sizeof(keys), test_seed());
        cr_assert_gt(n, 200, "a long history (%zu)", n);
        Table t = {.keys = keys};
        MinimizeBudget b = {0};
        HistminStats st;
        size_t *keep, m;
        cr_assert_eq(histmin_shrink(n, table_oracle, &t, &b, &keep, &m, &st), 0);
        cr_log_info("%zu executions -> %zu in %llu trials", n, m, (unsigned long long)st.trials);
        cr_expect_eq(st.trials, t.calls, "one oracle call per trial");
        cr_expect_eq(m, 64, "63 distinct keys and the 64th (got %zu)", m);
        cr_expect_eq(keep[m - 1], n - 1, "the crashing execution stays last");
        for (size_t i = 1; i < m; i++)
                cr_expect_lt(keep[i - 1], keep[i], "a subsequence, in order");
        cr_expect_eq(table_oracle(&t, keep, m), 1, "it still crashes");
        cr_expect_eq(st.stopped, MINIMIZE_STOP_DONE);
        cr_expect_eq(st.from_len, n);
        cr_expect_eq(st.to_len, m);
        free(keep);
}

Test(histmin, when_the_trials_run_out_the_shortest_crashing_list_so_far_is_kept)
{
        static uint8_t keys[20000];
        size_t n = table_history(keys, sizeof(keys), test_seed());
        Table t = {.keys = keys};
        MinimizeBudget b = {.max_trials = 12};
        HistminStats st;
        size_t *keep, m;
        cr_assert_eq(histmin_shrink(n, table_oracle, &t, &b, &keep, &m, &st), 0);
        cr_expect_eq(st.stopped, MINIMIZE_STOP_MAX_TRIALS);
        cr_expect_eq(st.trials, 12);
        cr_expect_leq(m, n);
        cr_expect_eq(keep[m - 1], n - 1);
        cr_expect_eq(table_oracle(&t, keep, m), 1, "what is kept crashes");
        free(keep);
}

/* A counter: the third 'G' aborts. */
static int third_g_oracle(void *ctx, const size_t *idx, size_t n)
{
        const char *s = ctx;
        int g = 0;
        for (size_t i = 0; i < n; i++)
                if (s[idx[i]] == 'G' && ++g == 3)
                        return i == n - 1;
        return 0;
}

Test(histmin, a_counter_history_keeps_its_three_executions)
{
        const char *s = "xxGxxxxxxxxxxGGyyyyyyyyyyyyyyyyyyyyyyyxxG";
        /* The third 'G' of this history is at index 14: the history ends there. */
        size_t n = 15;
        MinimizeBudget b = {0};
        HistminStats st;
        size_t *keep, m;
        cr_assert_eq(histmin_shrink(n, third_g_oracle, (void *)s, &b, &keep, &m, &st), 0);
        cr_expect_eq(m, 3);
        cr_expect_eq(keep[0], 2);
        cr_expect_eq(keep[1], 13);
        cr_expect_eq(keep[2], 14);
        free(keep);
}
