/*
 * A bug behind a loop that counts matching bytes with branchless compares:
 * n += data[i] == key[i] compiles to sete, not a branch, so no edge tells
 * one more matching byte from none, every byte is compared at the same
 * call site, and the key is not a constant the compiler can pass to
 * const_cmp. Only counting the equal comparisons per call site (see
 * cmplog_eq() in core/cmplog.h) gives the fuzzer a step per byte. The bug
 * is an abort().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef CMP_COUNT_LEN
#define CMP_COUNT_LEN 8
#endif

static const uint8_t key[16] = {0x5a, 0x71, 0x37, 0x21, 0x6d, 0x4b, 0x32, 0x23,
                                0x70, 0x4c, 0x39, 0x24, 0x76, 0x58, 0x34, 0x26};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int n = 0;

        for (size_t i = 0; i < CMP_COUNT_LEN && i < size; i++)
                n += data[i] == key[i];
        if (n == CMP_COUNT_LEN)
                abort();
        return 0;
}
