/*
 * The SanitizerCoverage callbacks an instrumented target binds to, as
 * no-ops with the signatures of compiler-rt's
 * sanitizer_coverage_interface.inc, for programs that load a target without
 * snapfuzz: tests/plainrun.c and bench/bare_loop.c. Link with -rdynamic so
 * that dlopen() resolves the target's references against them.
 */
#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/banned.h"

#define SANCOV_NOOP_EXPORT __attribute__((visibility("default"), used))

SANCOV_NOOP_EXPORT void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
SANCOV_NOOP_EXPORT void __sanitizer_cov_bool_flag_init(uint8_t *start, uint8_t *stop);
SANCOV_NOOP_EXPORT void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_pc_guard(uint32_t *guard);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_pc(void);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_pc_indir(uintptr_t callee);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmp1(uint8_t arg1, uint8_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmp2(uint16_t arg1, uint16_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmp4(uint32_t arg1, uint32_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmp8(uint64_t arg1, uint64_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_const_cmp1(uint8_t arg1, uint8_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_const_cmp2(uint16_t arg1, uint16_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_const_cmp4(uint32_t arg1, uint32_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_const_cmp8(uint64_t arg1, uint64_t arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_div4(uint32_t val);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_div8(uint64_t val);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_gep(uintptr_t idx);
/* gcc's trace-cmp only: floating-point comparisons. */
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmpf(float arg1, float arg2);
SANCOV_NOOP_EXPORT void __sanitizer_cov_trace_cmpd(double arg1, double arg2);

/* What a custom mutator calls; plainrun never mutates, so it is never
 * called, but a target that references it must load. */
SANCOV_NOOP_EXPORT size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size)
{
        (void)data;
        return size < max_size ? size : max_size;
}

/* Written by -fsanitize-coverage=stack-depth code in the target; never read here. */
SANCOV_NOOP_EXPORT __thread uintptr_t __sancov_lowest_stack;

#ifndef SANCOV_NOOP_OWN_COUNTERS /* tests/covcount.c keeps the counters */
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
}
#endif

void __sanitizer_cov_bool_flag_init(uint8_t *start, uint8_t *stop)
{
}

void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end)
{
}

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
{
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
}

void __sanitizer_cov_trace_pc(void)
{
}

void __sanitizer_cov_trace_pc_indir(uintptr_t callee)
{
}

void __sanitizer_cov_trace_cmp1(uint8_t arg1, uint8_t arg2)
{
}

void __sanitizer_cov_trace_cmp2(uint16_t arg1, uint16_t arg2)
{
}

void __sanitizer_cov_trace_cmp4(uint32_t arg1, uint32_t arg2)
{
}

void __sanitizer_cov_trace_cmp8(uint64_t arg1, uint64_t arg2)
{
}

void __sanitizer_cov_trace_const_cmp1(uint8_t arg1, uint8_t arg2)
{
}

void __sanitizer_cov_trace_const_cmp2(uint16_t arg1, uint16_t arg2)
{
}

void __sanitizer_cov_trace_const_cmp4(uint32_t arg1, uint32_t arg2)
{
}

void __sanitizer_cov_trace_const_cmp8(uint64_t arg1, uint64_t arg2)
{
}

void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases)
{
}

void __sanitizer_cov_trace_div4(uint32_t val)
{
}

void __sanitizer_cov_trace_div8(uint64_t val)
{
}

void __sanitizer_cov_trace_gep(uintptr_t idx)
{
}

void __sanitizer_cov_trace_cmpf(float arg1, float arg2)
{
}

void __sanitizer_cov_trace_cmpd(double arg1, double arg2)
{
}
