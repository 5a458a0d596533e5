/*
 * The PRNG every mutation draws from: PCG32 (XSH-RR output, 64-bit LCG
 * state). The state is a plain struct passed by pointer so that it can be
 * copied into the replay record and restored bit for bit; nothing here reads
 * the clock, the environment or thread-local state. Two generators with the
 * same {state, inc} produce the same sequence forever.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct SfPrng {
        uint64_t state;
        uint64_t inc; /* stream selector; always odd */
} SfPrng;

#define PRNG_MULT UINT64_C(6364136223846793005)

/* Seeds @r from a seed and a stream number (any values). */
static inline uint32_t prng_next32(SfPrng *r);
static inline void prng_seed(SfPrng *r, uint64_t seed, uint64_t stream)
{
        r->state = 0;
        r->inc = (stream << 1) | 1u;
        (void)prng_next32(r);
        r->state += seed;
        (void)prng_next32(r);
}

static inline uint32_t prng_next32(SfPrng *r)
{
        uint64_t old = r->state;
        r->state = old * PRNG_MULT + r->inc;
        uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
        uint32_t rot = (uint32_t)(old >> 59);
        return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

static inline uint64_t prng_next64(SfPrng *r)
{
        uint64_t hi = prng_next32(r);
        return (hi << 32) | prng_next32(r);
}

/* Uniform in [0, bound); bound 0 returns 0. Lemire's multiply-shift with
 * rejection, so there is no modulo bias. */
static inline uint32_t prng_below(SfPrng *r, uint32_t bound)
{
        if (bound == 0)
                return 0;
        uint64_t m = (uint64_t)prng_next32(r) * bound;
        uint32_t low = (uint32_t)m;
        if (low < bound) {
                uint32_t threshold = (uint32_t)(-bound) % bound;
                while (low < threshold) {
                        m = (uint64_t)prng_next32(r) * bound;
                        low = (uint32_t)m;
                }
        }
        return (uint32_t)(m >> 32);
}

/* True once in @n draws on average; n <= 1 is always true. */
static inline bool prng_one_in(SfPrng *r, uint32_t n)
{
        return n <= 1 || prng_below(r, n) == 0;
}
