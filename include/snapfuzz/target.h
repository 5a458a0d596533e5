/*
 * The target ABI: the libFuzzer conventions a harness exports, and what the
 * snapfuzz executable exports back to it (SanitizerCoverage callbacks and
 * LLVMFuzzerMutate; see worker/sancov.c).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef int (*TargetTestOneInput)(const uint8_t *data, size_t size);
typedef int (*TargetInitialize)(int *argc, char ***argv);
typedef size_t (*TargetCustomMutator)(uint8_t *data, size_t size, size_t max_size,
                                      unsigned int seed);
typedef size_t (*TargetCustomCrossOver)(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                        size_t size2, uint8_t *out, size_t max_out_size,
                                        unsigned int seed);

#define TARGET_SYM_TEST "LLVMFuzzerTestOneInput"
#define TARGET_SYM_INIT "LLVMFuzzerInitialize"
#define TARGET_SYM_MUTATOR "LLVMFuzzerCustomMutator"
#define TARGET_SYM_CROSSOVER "LLVMFuzzerCustomCrossOver"

/* LLVMFuzzerTestOneInput's return value that keeps an input out of the corpus. */
#define TARGET_REJECT (-1)

/* The instrumentation snapfuzz gives feedback for, as compiler flags for a
 * harness (`snapfuzz cflags`, the no-coverage warning, the hint for a
 * target that needs a callback snapfuzz does not define). clang's
 * fuzzer-no-link turns on inline-8bit-counters, pc-table, trace-cmp,
 * indirect-calls and stack-depth; gcc has trace-pc and trace-cmp only. */
#define TARGET_CFLAGS_CLANG "-fsanitize=fuzzer-no-link"
#define TARGET_CFLAGS_GCC "-fsanitize-coverage=trace-pc,trace-cmp"
#define TARGET_COVERAGE_KINDS                                                                      \
        "inline-8bit-counters, inline-bool-flag, trace-pc-guard, trace-pc, pc-table, trace-cmp, "  \
        "indirect-calls, stack-depth"
