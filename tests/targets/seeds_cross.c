/*
 * A bug that needs two seeds put together whole: the input "Qx7#Kp2!", the
 * seeds "Qx7#" and "Kp2!" (tests/targets/seeds_cross/) one after the
 * other. It is checked by a hash, so no comparison tells the fuzzer the
 * bytes. "Qx7#" keeps a path of its own (a length test), but any input
 * starting with 'K' takes the path of "Kp2!", so a shorter one ("K")
 * replaces it as a base: only a fuzzer that keeps the seed itself as a
 * crossover partner can append it whole.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h;
}

static volatile int sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        if (data[0] == 'Q' && size == 4)
                sink = 1;
        else if (data[0] == 'K')
                sink = 2;
        static const uint8_t want[] = "Qx7#Kp2!";
        if (size == 8 && fnv1a(data, 8) == fnv1a(want, 8))
                abort();
        return 0;
}
