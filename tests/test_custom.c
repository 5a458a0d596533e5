/*
 * Custom mutators (core/custom.c): libFuzzer's dispatch (a custom mutator
 * for every step, half the steps to a custom crossover, a result of 0 or
 * over MaxSize retried with a new Seed, a single space after 100 failures),
 * LLVMFuzzerMutate drawing from the step's own PRNG and ctx, and the replay
 * of a custom batch (recovery/replay.c), which must rebuild every input the
 * runner's loop made and which plain replay must refuse.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/custom.h"
#include "recovery/replay.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

/* What the fake target functions saw. */
static unsigned calls_mutate, calls_cross, fail_first;
static unsigned seeds[256];
static size_t fake_result; /* 0: behave; else return this */

static size_t fake_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
        if (calls_mutate < 256)
                seeds[calls_mutate] = seed;
        calls_mutate++;
        if (calls_mutate <= fail_first)
                return fake_result;
        if (size < max_size)
                data[size++] = (uint8_t)seed;
        else
                data[0] ^= 1;
        return size;
}

static size_t fake_cross(const uint8_t *d1, size_t n1, const uint8_t *d2, size_t n2, uint8_t *out,
                         size_t max_out, unsigned int seed)
{
        (void)seed;
        calls_cross++;
        size_t a = n1 / 2, b = n2 / 2;
        if (a + (n2 - b) > max_out)
                return 0;
        memcpy(out, d1, a);
        memcpy(out + a, d2 + b, n2 - b);
        return a + (n2 - b);
}

/* A mutator that is all LLVMFuzzerMutate. */
static size_t builtin_only(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
        (void)seed;
        return custom_builtin_mutate(data, size, max_size);
}

static void reset(void)
{
        calls_mutate = calls_cross = fail_first = 0;
        fake_result = 0;
}

static uint8_t scratch[4096];

Test(custom, each_step_calls_the_mutator_with_a_seed_from_the_prng)
{
        CustomMutator cm = {.mutate = fake_mutate, .scratch = scratch};
        uint8_t buf[64] = "abc";
        SfPrng rng, copy;
        prng_seed(&rng, 7, 1);
        copy = rng;
        reset();
        size_t len = custom_mutate(&cm, NULL, &rng, buf, 3, sizeof(buf));
        cr_assert_eq(calls_mutate, 1);
        cr_expect_eq(seeds[0], prng_next32(&copy), "the Seed is the PRNG's next draw");
        cr_expect_eq(len, 4);
        cr_expect_eq(rng.state, copy.state, "and nothing else was drawn");
}

Test(custom, zero_or_oversized_results_are_retried_with_new_seeds)
{
        CustomMutator cm = {.mutate = fake_mutate, .scratch = scratch};
        uint8_t buf[64] = "abc";
        SfPrng rng;
        prng_seed(&rng, 8, 1);
        reset();
        fail_first = 3;
        size_t len = custom_mutate(&cm, NULL, &rng, buf, 3, sizeof(buf));
        cr_expect_eq(calls_mutate, 4);
        cr_expect_eq(len, 4);
        cr_expect_neq(seeds[0], seeds[1]);
        cr_expect_eq(buf[3], (uint8_t)seeds[3], "the fourth call's result is kept");

        reset();
        fail_first = 2;
        fake_result = sizeof(buf) + 1;
        len = custom_mutate(&cm, NULL, &rng, buf, 3, sizeof(buf));
        cr_expect_eq(calls_mutate, 3, "a length over MaxSize did not apply either");
        cr_expect_leq(len, sizeof(buf));
}

Test(custom, a_mutator_that_never_applies_leaves_a_single_space)
{
        CustomMutator cm = {.mutate = fake_mutate, .scratch = scratch};
        uint8_t buf[64] = "abcdef";
        SfPrng rng;
        prng_seed(&rng, 9, 1);
        reset();
        fail_first = 1000;
        size_t len = custom_mutate(&cm, NULL, &rng, buf, 6, sizeof(buf));
        cr_expect_eq(calls_mutate, CUSTOM_MAX_TRIES);
        cr_expect_eq(len, 1);
        cr_expect_eq(buf[0], ' ');
}

static unsigned count_crossovers(const CustomMutator *cm, const MutatorCtx *ctx, unsigned steps)
{
        uint8_t buf[256];
        SfPrng rng;
        prng_seed(&rng, 10, 1);
        reset();
        for (unsigned i = 0; i < steps; i++) {
                memcpy(buf, "0123456789", 10);
                (void)custom_mutate(cm, ctx, &rng, buf, 10, sizeof(buf));
        }
        return calls_cross;
}

Test(custom, with_a_custom_mutator_half_the_steps_are_the_crossover)
{
        CustomMutator cm = {.mutate = fake_mutate, .crossover = fake_cross, .scratch = scratch};
        MutatorCtx ctx = {.partner = (const uint8_t *)"PARTNER!", .partner_len = 8};
        unsigned n = count_crossovers(&cm, &ctx, 2000);
        cr_expect(n > 900 && n < 1100, "crossovers: %u of 2000", n);
        cr_expect_eq(calls_mutate + calls_cross, 2000, "one call per step");
}

Test(custom, a_crossover_alone_is_one_step_in_sixteen)
{
        CustomMutator cm = {.crossover = fake_cross, .scratch = scratch};
        MutatorCtx ctx = {.partner = (const uint8_t *)"PARTNER!", .partner_len = 8};
        unsigned n = count_crossovers(&cm, &ctx, 4000);
        cr_expect(n > 4000 / 16 / 2 && n < 4000 / 16 * 2, "crossovers: %u of 4000", n);
        cr_expect_eq(calls_mutate, 0);
}

Test(custom, no_partner_no_crossover)
{
        CustomMutator cm = {.mutate = fake_mutate, .crossover = fake_cross, .scratch = scratch};
        MutatorCtx ctx = {0};
        unsigned n = count_crossovers(&cm, &ctx, 500);
        cr_expect_eq(n, 0, "the crossover is not called without a partner");
        cr_expect_geq(calls_mutate, 500);
}

Test(custom, llvmfuzzermutate_draws_from_the_step_prng)
{
        CustomMutator cm = {.mutate = builtin_only, .scratch = scratch};
        uint8_t a[128], b[128], c[128];
        SfPrng r1, r2, r3;
        prng_seed(&r1, 11, 1);
        r2 = r1;
        prng_seed(&r3, 12, 1);
        size_t la = 12, lb = 12, lc = 12;
        memcpy(a, "hello, world", 12);
        memcpy(b, a, 12);
        memcpy(c, a, 12);
        int differ = 0;
        for (int i = 0; i < 50; i++) {
                la = custom_mutate(&cm, NULL, &r1, a, la, sizeof(a));
                lb = custom_mutate(&cm, NULL, &r2, b, lb, sizeof(b));
                lc = custom_mutate(&cm, NULL, &r3, c, lc, sizeof(c));
                cr_assert_eq(la, lb);
                cr_assert_arr_eq(a, b, la, "the same PRNG gives the same bytes");
                differ |= la != lc || memcmp(a, c, la) != 0;
        }
        cr_expect(differ, "another PRNG gives other bytes");
        cr_expect_eq(r1.state, r2.state);
}

Test(custom, llvmfuzzermutate_reads_the_step_ctx)
{
        CustomMutator cm = {.mutate = builtin_only, .scratch = scratch};
        static MutatorDict dict;
        uint8_t table[32];
        const uint8_t *tok[] = {(const uint8_t *)"QQQQQQQQ"};
        size_t tlen[] = {8};
        size_t n = mutator_dict_serialize(table, sizeof(table), tok, tlen, 1);
        cr_assert_eq(mutator_dict_parse(&dict, table, n), 1);
        MutatorCtx ctx = {.dict = &dict};
        SfPrng rng;
        prng_seed(&rng, 13, 1);
        int seen = 0;
        for (int i = 0; i < 400 && !seen; i++) {
                uint8_t buf[128] = "abcdefghijklmnop";
                size_t len = custom_mutate(&cm, &ctx, &rng, buf, 16, sizeof(buf));
                seen = memmem(buf, len, "QQQQQQQQ", 8) != NULL;
        }
        cr_expect(seen, "the dictionary of the step's ctx reaches LLVMFuzzerMutate");
}

Test(custom, llvmfuzzermutate_outside_a_step_still_mutates)
{
        uint8_t buf[16] = "abcdefgh";
        size_t len = custom_builtin_mutate(buf, 8, sizeof(buf));
        cr_expect(len >= 1 && len <= sizeof(buf));
        cr_expect_eq(custom_builtin_mutate(buf, 8, 0), 0);
        cr_expect_leq(custom_builtin_mutate(buf, 100, 4), 4, "Size over MaxSize is clamped");
}

#define ITERS 40u
#define CHAIN 4u

/* Runs the runner's loop (worker/runner.c) over a custom batch and keeps every
 * input it made. */
static void emulate(void *region, const RecordLayout *l, const CustomMutator *cm,
                    uint8_t inputs[][512], size_t *lens)
{
        RecordHeader *h = record_header(region);
        const uint8_t *base = record_base(region, l);
        MutatorCtx ctx = {.partner = record_partner(region, l), .partner_len = h->partner_len};
        uint8_t work[512];
        size_t len = 0;
        SfPrng rng;
        prng_seed(&rng, h->seed, h->batch_id);
        for (uint64_t k = 1; k <= ITERS; k++) {
                if ((k - 1) % CHAIN == 0) {
                        record_chain_begin(h, &rng, (k - 1) / CHAIN, 0);
                        memcpy(work, base, h->base_len);
                        len = h->base_len;
                }
                len = custom_mutate(cm, &ctx, &rng, work, len, l->max_len);
                record_exec_note(h, k, work, len);
                h->count = k;
                memcpy(inputs[k - 1], work, len);
                lens[k - 1] = len;
        }
}

Test(custom, replay_rebuilds_a_custom_batch_and_plain_replay_refuses_it)
{
        RecordLayout l;
        cr_assert_eq(record_layout(512, &l), 0);
        void *region = calloc(1, l.region_size);
        cr_assert_not_null(region);
        memcpy(record_base(region, &l), "base input", 10);
        memcpy(record_partner(region, &l), "the partner", 11);
        record_begin_batch(region, &l, 5, RECORD_MODE_FUZZ, ITERS, 99, CHAIN, 10, 11, 0);
        CustomMutator cm = {.mutate = builtin_only, .crossover = fake_cross, .scratch = scratch};
        record_set_flags(region, custom_record_flags(&cm));
        cr_assert_eq(record_header(region)->flags, RECORD_F_CUSTOM);

        static uint8_t inputs[ITERS][512];
        size_t lens[ITERS];
        reset();
        emulate(region, &l, &cm, inputs, lens);
        cr_assert_gt(calls_cross, 0, "the batch used the crossover");
        cr_assert_eq(record_validate(region, &l), RECORD_OK, "flags are sealed in the description");

        uint8_t got[512];
        size_t n;
        RecordHeader *h = record_header(region);
        for (uint64_t k = ITERS - CHAIN + 1; k <= ITERS; k++) {
                h->count = k;
                cr_assert_eq(replay_custom_at(region, &l, &cm, k, got, &n), 0);
                cr_assert_eq(n, lens[k - 1]);
                cr_assert_arr_eq(got, inputs[k - 1], n, "iteration %lu from the slot",
                                 (unsigned long)k);
        }
        h->count = ITERS;
        cr_expect_eq(record_exec_matches(h, ITERS, got, n), 1, "the note says it ran");
        got[0] ^= 1;
        cr_expect_eq(record_exec_matches(h, ITERS, got, n), 0, "other bytes did not run");
        cr_expect_eq(record_exec_matches(h, ITERS - 3, got, n), -1, "no note of older inputs");

        for (uint64_t k = 1; k <= ITERS; k++) {
                cr_assert_eq(replay_custom_from_seed(region, &l, &cm, k, got, &n), 0);
                cr_assert_eq(n, lens[k - 1]);
                cr_assert_arr_eq(got, inputs[k - 1], n, "iteration %lu from the seed",
                                 (unsigned long)k);
        }

        cr_expect_eq(replay_input(region, &l, got, &n), -(int)RECORD_NEEDS_TARGET,
                     "without the target's functions, no wrong bytes");
        cr_expect_eq(replay_input_from_seed(region, &l, ITERS, got, &n), -(int)RECORD_NEEDS_TARGET);
        CustomMutator half = {.mutate = builtin_only, .scratch = scratch};
        cr_expect_eq(replay_custom_at(region, &l, &half, ITERS, got, &n), -(int)RECORD_NEEDS_TARGET,
                     "nor with other functions than the runner's");
        free(region);
}

Test(custom, the_exec_note_tells_any_changed_byte_or_length)
{
        static uint8_t buf[1000];
        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (uint8_t)(i * 31);
        for (size_t len = 1; len <= sizeof(buf); len = len * 3 + 1) {
                uint64_t want = record_exec_check(buf, len);
                cr_expect_neq(record_exec_check(buf, len - 1), want, "length %zu", len);
                for (size_t i = 0; i < len; i++) {
                        buf[i] ^= 0x10;
                        cr_assert_neq(record_exec_check(buf, len), want, "byte %zu of %zu", i, len);
                        buf[i] ^= 0x10;
                }
        }
}
