/*
 * Two bugs behind one-byte gates, for --keep-going: 'A' writes to an
 * unmapped address, 'B' aborts. Each is hit again and again once found
 * (every mutation that keeps the first byte), so a run sees thousands of
 * deaths of two crash ids.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noinline)) static void bug_a(void)
{
        *(volatile int *)(uintptr_t)0x48 = 1;
}

__attribute__((noinline)) static void bug_b(void)
{
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 0 && data[0] == 'A')
                bug_a();
        if (size > 0 && data[0] == 'B')
                bug_b();
        return 0;
}
