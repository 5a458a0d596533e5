/*
 * A bug behind comparisons that random mutation practically never gets
 * through: a 32-bit constant, a 64-bit constant and an 8-byte memcmp, each
 * on its own field of the input, checked in that order. Passing a guard is
 * new coverage, so a fuzzer climbs them one at a time, and comparison
 * feedback (trace-cmp, the memcmp hook, input-to-state mutations) is what
 * gets it through each; without it the chance per input is 2^-32 or worse.
 *
 * Built whole (all three guards, chained) and with CMP_GUARD_ONLY set to
 * 'I' (the 32-bit guard alone), 'L' (the 64-bit one) or 'M' (the memcmp)
 * for benchmarks that time each kind of guard separately. The bug is an
 * abort().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GUARD32 UINT32_C(0x5eed1e55)
#define GUARD64 UINT64_C(0xc0ffee15deadbeef)
#define GUARDMEM "SNAPFUZZ"

#if !defined(CMP_GUARD_ONLY) || CMP_GUARD_ONLY == 'I'
#define WITH_I32 1
#endif
#if !defined(CMP_GUARD_ONLY) || CMP_GUARD_ONLY == 'L'
#define WITH_I64 1
#endif
#if !defined(CMP_GUARD_ONLY) || CMP_GUARD_ONLY == 'M'
#define WITH_MEM 1
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t a;
        uint64_t b;

        if (size < 20)
                return 0;
        memcpy(&a, data, sizeof(a));
        memcpy(&b, data + 4, sizeof(b));
#ifdef WITH_I32
        if (a != GUARD32)
                return 0;
#endif
#ifdef WITH_I64
        if (b != GUARD64)
                return 0;
#endif
#ifdef WITH_MEM
        if (memcmp(data + 12, GUARDMEM, 8) != 0)
                return 0;
#endif
        abort();
}
