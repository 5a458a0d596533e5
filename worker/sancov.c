/*
 * What the snapfuzz executable exports to a target built with
 * -fsanitize=fuzzer-no-link (or any -fsanitize-coverage= subset): the
 * SanitizerCoverage callbacks, the thread-local __sancov_lowest_stack, and
 * LLVMFuzzerMutate for custom mutators. Everything else in snapfuzz is
 * built with hidden visibility, so these are the only symbols a target can
 * bind to, and nothing of ours can interpose on a target's own names (but
 * the memcmp family of worker/cmphooks.c, on purpose).
 *
 * The comparison callbacks (trace-cmp, switch, div, gep) and the
 * interposed memcmp family are in worker/cmphooks.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "core/coverage.h"
#include "core/custom.h"
#include "snapfuzz/snapfuzz.h" /* LLVMFuzzerMutate's prototype, as harnesses see it */

#include "snapfuzz/banned.h"

#define SF_EXPORT __attribute__((visibility("default")))

/* __sancov_lowest_stack, the thread-local variable stack-depth code writes,
 * is defined in worker/stackdepth.c, where the runner reads it: anything
 * that links the runner has it, with or without these callbacks. */

SF_EXPORT void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
SF_EXPORT void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
        coverage_register_counters(start, stop);
}

SF_EXPORT void __sanitizer_cov_pcs_init(const uintptr_t *start, const uintptr_t *stop);
SF_EXPORT void __sanitizer_cov_pcs_init(const uintptr_t *start, const uintptr_t *stop)
{
        coverage_register_pcs(start, stop);
}

SF_EXPORT void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop);
SF_EXPORT void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
{
        coverage_register_guards(start, stop);
}

SF_EXPORT void __sanitizer_cov_trace_pc_guard(uint32_t *guard);
SF_EXPORT void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
        uint8_t *c = &coverage_guard_counters[*guard];
        /* Saturate instead of wrapping, so 256 hits never look like 0. */
        *c += *c != 255;
}

/* gcc's -fsanitize-coverage=trace-pc (clang's too): a call at the start of
 * every basic block, with no counter of its own. The block is its return
 * address, as an offset from the target's load address (the same in
 * every worker), hashed into the trace-pc map; the counter is the edge
 * from the previous block, AFL's way: this block's hash XOR half the
 * previous one's, so A->B and B->A differ. tracepc_prev is thread-local and
 * not reset between executions: the first edge of an input comes from
 * where the previous one ended (the harness's return, nearly always the
 * same block) or, in a new runner, from the snapshot's last block. The map
 * is registered when the target references this function
 * (worker/worker.c); the cost is a hash and a counter update per block
 * (bench/results/tracepc-2026-11-26.md). */
static __thread uint32_t tracepc_prev;

SF_EXPORT void __sanitizer_cov_trace_pc(void);
SF_EXPORT void __sanitizer_cov_trace_pc(void)
{
        uintptr_t off = (uintptr_t)__builtin_return_address(0) - coverage_tracepc_base;
        uint32_t h = (uint32_t)(((uint64_t)off * UINT64_C(0x9e3779b97f4a7c15)) >>
                                (64 - COVERAGE_TRACEPC_BITS));
        uint8_t *c = &coverage_tracepc_counters[h ^ tracepc_prev];
        tracepc_prev = h >> 1;
        *c += *c != 255;
}

/* -fsanitize-coverage=inline-bool-flag: one byte per edge set to 1, which
 * the scan reads as a hit count of one. */
SF_EXPORT void __sanitizer_cov_bool_flag_init(uint8_t *start, uint8_t *stop);
SF_EXPORT void __sanitizer_cov_bool_flag_init(uint8_t *start, uint8_t *stop)
{
        coverage_register_counters(start, stop);
}

SF_EXPORT void __sanitizer_cov_trace_pc_indir(uintptr_t callee);
SF_EXPORT void __sanitizer_cov_trace_pc_indir(uintptr_t callee)
{
        (void)callee;
}

/* A custom mutator's way to snapfuzz's own mutations: the PRNG and ctx of
 * the step in progress (core/custom.c), so that it is replayed too. */
SF_EXPORT size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
        return custom_builtin_mutate(data, size, max_size);
}
