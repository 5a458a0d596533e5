/*
 * Stack-depth feedback, as libFuzzer has it: how deep the target's stack
 * went during one execution is a feature, so that an input that recurses
 * deeper than any before is kept even when it runs no new edge (a parser's
 * recursion past the 128 hits that an edge's last hit-count bucket tells
 * apart, towards a bug only a deeply nested input reaches).
 *
 * A target built with -fsanitize-coverage=stack-depth (which
 * -fsanitize=fuzzer-no-link includes) stores its frame address into the
 * thread-local __sancov_lowest_stack (exported by snapfuzz) on entry to every
 * function that calls others, whenever it is lower than the value there.
 * The runner sets it to its own frame before each execution
 * (stackdepth_begin(): one store) and afterwards turns how far below that
 * frame it went into one feature of stackdepth_map (stackdepth_end(): a
 * load, a compare, one byte written), which is registered with the
 * target's counters (coverage_register_features), so the scan, a find's
 * features, reductions and recovery treat it like any other counter. A
 * target built without stack-depth never writes the variable: its
 * executions reach no stack feature.
 *
 * The feature is a step of the depth, not the depth: eight steps per
 * power of two of the depth in 8-byte words (libFuzzer's step function),
 * so an input must go an eighth deeper than another to count as deeper,
 * and the whole of an 8 MiB stack fits in STACKDEPTH_COUNTERS steps.
 * Resetting, reading and comparing cost nothing measurable per execution
 * (bench/results/stackdepth-2026-11-26.md). It is
 * a function of the execution alone (the same input reaches the same
 * step), never read by mutations: feedback, not mutation input, so the
 * replay invariant (include/snapfuzz/record.h) is untouched.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Defined in worker/stackdepth.c, exported to the target, written by its
 * stack-depth instrumentation. */
extern __thread uintptr_t __sancov_lowest_stack;

/* Steps 0..159: eight per power of two of the depth in words up to 2^20
 * words (8 MiB); deeper is the last step. A multiple of 32 bytes, scanned
 * after every execution like the target's counters. */
#define STACKDEPTH_COUNTERS 160u
extern uint8_t stackdepth_map[STACKDEPTH_COUNTERS];

/* The step of a depth of @bytes: exact below 8 words, then eight steps per
 * power of two. */
static inline unsigned stackdepth_step(uintptr_t bytes)
{
        uintptr_t words = bytes >> 3;

        if (words < 8)
                return (unsigned)words;
        unsigned lg = 63u - (unsigned)__builtin_clzll((unsigned long long)words);
        unsigned step = (lg - 2u) * 8u + (unsigned)((words >> (lg - 3u)) & 7u);
        return step < STACKDEPTH_COUNTERS ? step : STACKDEPTH_COUNTERS - 1;
}

/* Before an execution: what the target goes below from here is its depth.
 * Returns the frame it is measured from, for stackdepth_end(). Inline, so
 * the frame is the caller's, which the target's frames are all below. */
static inline __attribute__((always_inline)) uintptr_t stackdepth_begin(void)
{
        uintptr_t top = (uintptr_t)__builtin_frame_address(0);
        __sancov_lowest_stack = top;
        return top;
}

/* After the execution that stackdepth_begin() returned @top for: marks its
 * step in stackdepth_map (nothing when it went no lower, as for a target
 * built without stack-depth). */
static inline void stackdepth_end(uintptr_t top)
{
        uintptr_t low = __sancov_lowest_stack;
        if (low < top)
                stackdepth_map[stackdepth_step(top - low)] = 1;
}

/* Registers stackdepth_map as coverage counters. Called once in a worker,
 * after the target's own counters are registered and in the same order
 * as the other feedback maps in every worker, so counter offsets agree. */
void stackdepth_enable(void);
