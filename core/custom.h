/*
 * Custom mutators: the libFuzzer conventions LLVMFuzzerCustomMutator and
 * LLVMFuzzerCustomCrossOver, dispatched as libFuzzer does, and the body of
 * LLVMFuzzerMutate, which a custom mutator calls to get snapfuzz's own
 * mutations.
 *
 * One mutation step (custom_mutate) is a function of the input, the PRNG,
 * the MutatorCtx and the target's functions: the Seed given to the target
 * is drawn from the PRNG, and LLVMFuzzerMutate draws from the same PRNG
 * while the target's function runs. So, for a target whose custom mutator
 * is deterministic given its Seed (libFuzzer requires that too), replaying
 * the record's PRNG through the same calls rebuilds every input; only it
 * must happen where the target is loaded (see recovery/replay.h).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"
#include "snapfuzz/target.h"

/* libFuzzer's bound: a step tries this many mutators (each may return 0,
 * "did not apply") before it gives up and makes the input one space. */
#define CUSTOM_MAX_TRIES 100u
/* With a custom crossover but no custom mutator, one step in this many is
 * the crossover and the others are snapfuzz's own mutations (libFuzzer
 * picks it as one of its 14 mutators). With both, half and half. */
#define CUSTOM_CROSSOVER_ONE_IN 16u

typedef struct CustomMutator {
        TargetCustomMutator mutate;      /* NULL: snapfuzz's mutator instead */
        TargetCustomCrossOver crossover; /* NULL: none */
        uint8_t *scratch;                /* max_len bytes: the crossover's output */
} CustomMutator;

/* Looks the two functions up in a loaded target (dlopen handle). Returns
 * 0 when it exports neither. */
int custom_lookup(void *handle, CustomMutator *ret);

/* The RECORD_F_CUSTOM_* flags for a batch mutated by @cm. */
uint32_t custom_record_flags(const CustomMutator *cm);

/* One mutation step, the custom counterpart of mutator_mutate(): picks the
 * target's mutator, its crossover (with the ctx's partner as Data2) or
 * snapfuzz's mutator, retries a pick that returns 0 or more than @max_len,
 * up to CUSTOM_MAX_TRIES. @data has @max_len bytes of room. Returns the new
 * length, 1..max_len (0 when max_len is 0). */
size_t custom_mutate(const CustomMutator *cm, const MutatorCtx *ctx, SfPrng *rng, uint8_t *data,
                     size_t len, size_t max_len);

/* LLVMFuzzerMutate: snapfuzz's mutator, drawing from the PRNG and reading
 * the ctx of the custom_mutate() call in progress, so that what a custom
 * mutator does with it is replayed too. Outside such a call (from
 * LLVMFuzzerTestOneInput or LLVMFuzzerInitialize) it uses a fixed PRNG of
 * its own and no ctx. */
size_t custom_builtin_mutate(uint8_t *data, size_t size, size_t max_size);
