/*
 * A test target for timeouts that know about memory: an input that starts
 * with 'M' allocates and touches memory slowly, 4 MiB every 30 ms (some
 * 130 MiB a second, 320 MiB in all, then it stays big), so that under
 * --rss-limit-mb 256 --timeout 1 its time runs out before its memory
 * does; one that starts with 'T' loops for ever without allocating (a
 * real hang). Anything else returns at once.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GROW_STEP ((size_t)4 << 20)
#define GROW_STEPS 80

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

char *volatile grow_sink[GROW_STEPS];
volatile unsigned long grow_spin;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        if (data[0] == 'M') {
                for (int i = 0; i < GROW_STEPS; i++) {
                        char *p = malloc(GROW_STEP);
                        if (!p)
                                abort();
                        memset(p, 1, GROW_STEP);
                        grow_sink[i] = p;
                        usleep(30000);
                }
                for (;;)
                        usleep(100000);
        }
        if (data[0] == 'T')
                for (;;)
                        grow_spin++;
        return 0;
}
