/*
 * A test target for the minimizer: it aborts when the input contains the
 * six bytes "FUZZ!!" anywhere, and returns 0 otherwise. Whatever surrounds
 * the sequence is irrelevant to the crash, so a minimizer must shrink any
 * crashing input to exactly those six bytes. Built with -DMAGIC6_HANG it
 * hangs instead of aborting (a crash of kind timeout).
 */
#define _GNU_SOURCE /* memmem */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (memmem(data, size, "FUZZ!!", 6)) {
#ifdef MAGIC6_HANG
                for (volatile int spin = 1; spin;)
                        ;
#endif
                abort();
        }
        return 0;
}
