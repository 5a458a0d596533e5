/*
 * The dispatch follows libFuzzer's MutationDispatcher: with a custom
 * mutator, every step is a call to it (and, with a custom crossover too,
 * half the steps are the crossover); a call that returns 0, or a length
 * over MaxSize, did not apply and the step tries again with a new Seed, up
 * to CUSTOM_MAX_TRIES times, then makes the input a single space.
 *
 * Determinism: every choice, every Seed, and every draw of LLVMFuzzerMutate
 * comes from the caller's PRNG. The only state here is the pointer to the
 * PRNG and ctx of the step in progress, set around each call into the
 * target and cleared after it, which LLVMFuzzerMutate reads.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

#include "core/custom.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

static SfPrng *custom_rng;
static const MutatorCtx *custom_ctx;

int custom_lookup(void *handle, CustomMutator *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->mutate = (TargetCustomMutator)dlsym(handle, TARGET_SYM_MUTATOR);
        ret->crossover = (TargetCustomCrossOver)dlsym(handle, TARGET_SYM_CROSSOVER);
        return ret->mutate || ret->crossover;
}

uint32_t custom_record_flags(const CustomMutator *cm)
{
        if (!cm)
                return 0;
        return (cm->mutate ? RECORD_F_CUSTOM_MUTATOR : 0) |
               (cm->crossover ? RECORD_F_CUSTOM_CROSSOVER : 0);
}

size_t custom_builtin_mutate(uint8_t *data, size_t size, size_t max_size)
{
        static SfPrng outside = {UINT64_C(0x853c49e6748fea9b), UINT64_C(0xda3e39cb94b95bdb)};
        if (max_size == 0)
                return 0;
        return mutator_mutate(custom_ctx, custom_rng ? custom_rng : &outside, data,
                              size < max_size ? size : max_size, max_size);
}

/* The target's crossover of data with the ctx's partner; 0 when it does
 * not apply (an empty input or partner, as in libFuzzer). */
static size_t custom_crossover(const CustomMutator *cm, const MutatorCtx *ctx, SfPrng *rng,
                               uint8_t *data, size_t len, size_t max_len)
{
        if (len == 0 || !ctx || !ctx->partner || ctx->partner_len == 0 || !cm->scratch)
                return 0;
        unsigned seed = prng_next32(rng);
        size_t n =
            cm->crossover(data, len, ctx->partner, ctx->partner_len, cm->scratch, max_len, seed);
        if (n == 0 || n > max_len)
                return 0;
        memcpy(data, cm->scratch, n);
        return n;
}

size_t custom_mutate(const CustomMutator *cm, const MutatorCtx *ctx, SfPrng *rng, uint8_t *data,
                     size_t len, size_t max_len)
{
        if (max_len == 0)
                return 0;
        if (len > max_len)
                len = max_len;
        custom_rng = rng;
        custom_ctx = ctx;
        size_t n = 0;
        for (unsigned i = 0; i < CUSTOM_MAX_TRIES && (n == 0 || n > max_len); i++) {
                bool cross;
                if (!cm->crossover)
                        cross = false;
                else if (cm->mutate)
                        cross = prng_below(rng, 2) == 1;
                else
                        cross = prng_one_in(rng, CUSTOM_CROSSOVER_ONE_IN);
                if (cross)
                        n = custom_crossover(cm, ctx, rng, data, len, max_len);
                else if (cm->mutate)
                        n = cm->mutate(data, len, max_len, prng_next32(rng));
                else
                        n = mutator_mutate(ctx, rng, data, len, max_len);
        }
        custom_rng = NULL;
        custom_ctx = NULL;
        if (n == 0 || n > max_len) {
                data[0] = ' ';
                n = 1;
        }
        return n;
}
