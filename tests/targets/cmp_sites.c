/*
 * Comparisons of each kind the worker's call-site patching tells apart
 * (worker/cmpsites.c, tests/test_cmpsites.c): bytes against constants
 * (trace_const_cmp1: idle without the value profile), two computed bytes
 * (trace_cmp1: the equal-comparison features, on every input) and 32-bit
 * values against constants (trace_const_cmp4: recorded). cmp_sites_run
 * returns what the comparisons decided, so a test can see that the code
 * computes the same with the calls to idle hooks removed.
 */
#include <stddef.h>
#include <stdint.h>

__attribute__((visibility("default"))) unsigned cmp_sites_run(const uint8_t *data, size_t size);

unsigned cmp_sites_run(const uint8_t *data, size_t size)
{
        unsigned n = 0;
        uint32_t w = 0;
        for (size_t i = 0; i < size; i++) {
                if (data[i] == '<')
                        n += 1;
                if (data[i] == '>')
                        n += 2;
                if (i > 0 && data[i] == data[i - 1])
                        n += 4;
                w = w << 8 | data[i];
                if (w == 0x4d414749u) /* "MAGI" */
                        n += 100;
        }
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        return cmp_sites_run(data, size) == 0xffffffffu ? -1 : 0;
}
