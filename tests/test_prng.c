/*
 * The PRNG is the part of the replay record that everything else is rebuilt
 * from: these tests pin its sequence to the PCG32 reference and check the
 * properties recovery relies on (same state, same future).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "snapfuzz/prng.h"

#include "snapfuzz/banned.h"

Test(prng, matches_pcg32_reference)
{
        /* The first outputs of the reference pcg32-demo after
         * pcg32_srandom(42, 54). */
        static const uint32_t expected[] = {
            0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e,
        };
        SfPrng r;

        prng_seed(&r, 42, 54);
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
                cr_expect_eq(prng_next32(&r), expected[i], "output %zu", i);
}

Test(prng, same_seed_and_stream_give_same_sequence)
{
        SfPrng a, b;

        prng_seed(&a, 0x1234, 7);
        prng_seed(&b, 0x1234, 7);
        for (int i = 0; i < 10000; i++)
                cr_assert_eq(prng_next32(&a), prng_next32(&b), "diverged at %d", i);
}

Test(prng, different_streams_differ)
{
        SfPrng a, b;
        int same = 0;

        prng_seed(&a, 99, 1);
        prng_seed(&b, 99, 2);
        for (int i = 0; i < 1000; i++)
                same += prng_next32(&a) == prng_next32(&b);
        /* Unrelated 32-bit streams agree by chance about once in 2^32 draws. */
        cr_expect_leq(same, 2);
}

Test(prng, different_seeds_differ)
{
        SfPrng a, b;
        int same = 0;

        prng_seed(&a, 1, 5);
        prng_seed(&b, 2, 5);
        for (int i = 0; i < 1000; i++)
                same += prng_next32(&a) == prng_next32(&b);
        cr_expect_leq(same, 2);
}

Test(prng, stream_increment_is_odd)
{
        static const uint64_t streams[] = {0, 1, 2, UINT64_MAX, UINT64_C(1) << 63};
        SfPrng r;

        for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
                prng_seed(&r, 3, streams[i]);
                cr_expect_eq(r.inc & 1, 1, "stream %zu", i);
        }
}

Test(prng, saved_state_continues_identically)
{
        SfPrng r, saved;
        uint32_t first[64], again[64];

        prng_seed(&r, 2024, 11);
        for (int i = 0; i < 37; i++)
                (void)prng_next32(&r);
        /* A copy of the struct, as the replay record keeps it. */
        memcpy(&saved, &r, sizeof(saved));
        for (int i = 0; i < 64; i++)
                first[i] = prng_next32(&r);
        memcpy(&r, &saved, sizeof(r));
        for (int i = 0; i < 64; i++)
                again[i] = prng_next32(&r);
        cr_assert_arr_eq(first, again, sizeof(first));
}

Test(prng, next64_is_two_next32_high_first)
{
        SfPrng a, b;

        prng_seed(&a, 5, 6);
        prng_seed(&b, 5, 6);
        for (int i = 0; i < 100; i++) {
                uint64_t hi = prng_next32(&b);
                uint64_t lo = prng_next32(&b);
                cr_assert_eq(prng_next64(&a), (hi << 32) | lo);
        }
}

Test(prng, below_stays_in_range)
{
        static const uint32_t bounds[] = {
            1, 2, 3, 7, 10, 255, 256, 1000, 65537, 0x7fffffff, 0x80000001, UINT32_MAX,
        };
        SfPrng r;

        prng_seed(&r, 77, 3);
        for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++)
                for (int i = 0; i < 20000; i++)
                        cr_assert_lt(prng_below(&r, bounds[b]), bounds[b], "bound %u", bounds[b]);
}

Test(prng, below_zero_and_one_return_zero)
{
        SfPrng r;

        prng_seed(&r, 8, 8);
        for (int i = 0; i < 100; i++) {
                cr_assert_eq(prng_below(&r, 0), 0);
                cr_assert_eq(prng_below(&r, 1), 0);
        }
}

Test(prng, below_hits_every_value_for_small_bound)
{
        for (uint32_t bound = 2; bound <= 33; bound++) {
                unsigned hits[33] = {0};
                SfPrng r;

                prng_seed(&r, bound, 1);
                for (uint32_t i = 0; i < bound * 200; i++)
                        hits[prng_below(&r, bound)]++;
                for (uint32_t v = 0; v < bound; v++) {
                        /* 200 expected per value; a fair generator stays
                         * far from these limits. */
                        cr_expect_gt(hits[v], 100, "bound %u value %u: %u hits", bound, v, hits[v]);
                        cr_expect_lt(hits[v], 300, "bound %u value %u: %u hits", bound, v, hits[v]);
                }
        }
}

Test(prng, one_in_rate)
{
        SfPrng r;
        int hits = 0;

        prng_seed(&r, 123, 4);
        cr_expect(prng_one_in(&r, 0));
        cr_expect(prng_one_in(&r, 1));
        for (int i = 0; i < 40000; i++)
                hits += prng_one_in(&r, 4);
        cr_expect(hits > 9000 && hits < 11000, "%d hits of 40000 for one in 4", hits);
}
