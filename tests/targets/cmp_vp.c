/*
 * A bug behind a comparison input-to-state cannot solve: the compared value
 * is computed from the input (x + (x >> 7), which no input bytes hold), so
 * writing the constant into the input gets nowhere. The value profile
 * (--use-value-profile) counts how many bits the two sides differ in as
 * coverage, and the fuzzer climbs towards the constant bit by bit. The bug
 * is an abort().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t x;

        if (size < 4)
                return 0;
        memcpy(&x, data, sizeof(x));
        if (x + (x >> 7) == UINT32_C(0x12345678))
                abort();
        return 0;
}
