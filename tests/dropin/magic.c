/*
 * A drop-in harness (tests/test_dropin.c links it with
 * libsnapfuzz-fuzzer.a): the planted bug sits behind an 8-byte magic
 * compared with memcmp, which random mutation does not find in a test's
 * time but comparison feedback does (our memcmp without a sanitizer, the
 * sanitizer's interceptor calling our weak hook with one). What the bug is
 * depends on the build:
 *   default                a trap (SIGILL)
 *   -DDROPIN_HEAP_OVERFLOW  a read one byte past a heap copy of the input
 *                           (AddressSanitizer: heap-buffer-overflow)
 *   -DDROPIN_UB             a signed overflow (UBSan, no recovery)
 *   -DDROPIN_LEAK           64 bytes no pointer reaches (LeakSanitizer)
 *   -DDROPIN_HANG           an endless loop (a timeout)
 *   -DDROPIN_OOM            memory touched until the RSS limit stops it
 * With -DDROPIN_MEMCMP_OVERREAD, the one-byte input "M" makes memcmp read 8
 * bytes of it: AddressSanitizer's memcmp interceptor must still report that
 * (ours must not have replaced it).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile int sink;
static void *volatile kept;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef DROPIN_MEMCMP_OVERREAD
        if (size == 1 && data[0] == 'M')
                return memcmp(data, "MAGICMAG", 8) == 0;
#endif
        if (size < 8 || memcmp(data, "SNAPDROP", 8) != 0)
                return 0;
#if defined(DROPIN_HEAP_OVERFLOW)
        uint8_t *copy = malloc(size);
        memcpy(copy, data, size);
        sink = copy[size];
        free(copy);
#elif defined(DROPIN_LEAK)
        kept = malloc(64);
        memset(kept, (int)size, 64);
        kept = NULL;
#elif defined(DROPIN_HANG)
        for (;;)
                sink++;
#elif defined(DROPIN_OOM)
        for (;;) {
                char *p = malloc(1 << 20);
                memset(p, (int)size, 1 << 20);
                sink += p[size];
        }
#elif defined(DROPIN_UB)
        int big = INT_MAX - (int)(size & 1);
        sink = big + (int)data[0];
#else
        __builtin_trap();
#endif
        return 0;
}
