/*
 * planted: a bug behind comparisons a coverage-only fuzzer cannot climb,
 * for the time-to-find benchmark. Compiled with -DPLANTED_GUARD=N:
 *   1  a 32-bit constant:   the first 4 bytes equal 0x5eedf00d
 *   2  a 64-bit constant:   the first 8 bytes equal 0x736e617066757a7a
 *   3  an 8-byte memcmp:    the first 8 bytes equal "CmpLoGg!"
 *   4  all three chained:   32-bit at 0, 64-bit at 4, memcmp at 12
 * Each guard is a single comparison of the whole value, so no edge rewards
 * a partial match; only comparison feedback (or luck) gets through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef PLANTED_GUARD
#define PLANTED_GUARD 4
#endif

static uint32_t load32(const uint8_t *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}
static uint64_t load64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if PLANTED_GUARD == 1
        if (size >= 4 && load32(data) == 0x5eedf00du)
                abort();
#elif PLANTED_GUARD == 2
        if (size >= 8 && load64(data) == 0x736e617066757a7aull)
                abort();
#elif PLANTED_GUARD == 3
        if (size >= 8 && memcmp(data, "CmpLoGg!", 8) == 0)
                abort();
#else
        if (size >= 20 && load32(data) == 0x5eedf00du)
                if (load64(data + 4) == 0x736e617066757a7aull)
                        if (memcmp(data + 12, "CmpLoGg!", 8) == 0)
                                abort();
#endif
        return 0;
}
