/*
 * A target built twice for the regression tests: as it is (the bugs
 * below) and with -DREGRESS_FIXED (the two bugs fixed, the known one
 * left), so that `snapfuzz regress` can be checked on a crash that still
 * reproduces and on one that was fixed.
 *
 *   "BUG..."  a write through a null pointer (fixed: the input is refused)
 *   "G..."    state-dependent: aborts on the third 'G' input a runner sees
 *             (fixed: the counter wraps)
 *   "HOLD..." abort() in both builds: a known bug, to quarantine
 * Any other input returns 0.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noinline)) static void bug_null(void)
{
#ifndef REGRESS_FIXED
        *(volatile int *)(uintptr_t)0x10 = 1;
#endif
}

__attribute__((noinline)) static void bug_state(void)
{
        static int seen;
#ifndef REGRESS_FIXED
        if (++seen == 3)
                abort();
#else
        seen = (seen + 1) % 3;
#endif
}

__attribute__((noinline)) static void bug_known(void)
{
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= 3 && memcmp(data, "BUG", 3) == 0)
                bug_null();
        if (size >= 1 && data[0] == 'G')
                bug_state();
        if (size >= 4 && memcmp(data, "HOLD", 4) == 0)
                bug_known();
        return 0;
}
