/*
 * The "sanitizer-only" test set (tests/test_split.c): bugs that a build
 * without sanitizers survives, so that only the AddressSanitizer/UBSan
 * build of the same source reports them. Built twice from this file, with
 * -DSAN_ONLY_KIND='x': plainly (-fsanitize=fuzzer-no-link) and with
 * -fsanitize=address,undefined,fuzzer-no-link -shared-libasan.
 *
 *   'R' heap-buffer-overflow read, 1 byte past a 13-byte malloc'd buffer
 *   'W' heap-buffer-overflow write, 1 byte past it
 *   'U' heap-use-after-free read
 *   'S' stack-buffer-overflow read, 1 to 4 bytes past a local array
 *   'G' global-buffer-overflow read, 1 to 4 bytes past a global array
 *   'O' signed integer overflow (UBSan)
 *   'L' shift exponent too large (UBSan)
 *   'K' a leak: 33 bytes allocated and dropped (LeakSanitizer)
 *   'N' none: the magic leads nowhere (for the share and the samples)
 *
 * The bug is behind the magic "SAN!", compared one byte at a time so that
 * each byte is new coverage. Every out-of-bounds access stays inside
 * memory the plain build owns (malloc rounds 13 bytes up to 24; a stack
 * frame and the data section are bigger than a few bytes), and every index
 * goes through a volatile, so that the compiler cannot see the undefined
 * behaviour and turn it into something that crashes the plain build.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef SAN_ONLY_KIND
#error "build with -DSAN_ONLY_KIND='R' (or W, U, S, G, O, L, K, N)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

char san_only_global[8];
char san_only_after[8]; /* what a global overflow reads in the plain build */
volatile int san_only_sink;
volatile size_t san_only_index;

__attribute__((noinline)) static void san_only_bug(const uint8_t *data, size_t size)
{
        size_t extra = size > 4 ? data[4] & 3u : 0;
        switch (SAN_ONLY_KIND) {
        case 'R':
        case 'W': {
                char *p = malloc(13);
                if (!p)
                        return;
                memset(p, 'x', 13);
                san_only_index = 13;
                if (SAN_ONLY_KIND == 'R')
                        san_only_sink = p[san_only_index];
                else
                        p[san_only_index] = 'y';
                free(p);
                break;
        }
        case 'U': {
                char *p = malloc(16);
                if (!p)
                        return;
                memset(p, 'x', 16);
                char *volatile q = p;
                free(p);
                san_only_sink = q[extra];
                break;
        }
        case 'S': {
                char buf[8];
                memcpy(buf, data, 4);
                /* Through a pointer: UBSan's bounds check would see an
                 * array index first, and this is ASan's to report. */
                const char *volatile bp = buf;
                san_only_index = 8 + extra;
                san_only_sink = bp[san_only_index];
                break;
        }
        case 'G': {
                const char *volatile gp = san_only_global;
                san_only_index = 8 + extra;
                san_only_sink = gp[san_only_index];
                break;
        }
        case 'O': {
                volatile int a = INT_MAX;
                san_only_sink = a + (int)(extra + 1);
                break;
        }
        case 'L': {
                volatile int shift = 32 + (int)extra;
                san_only_sink = 1 << shift;
                break;
        }
        case 'K': {
                char *volatile p = malloc(33);
                if (p)
                        p[0] = (char)extra;
                p = NULL;
                break;
        }
        default: /* 'N' */
                san_only_sink = (int)size;
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= 4 && data[0] == 'S')
                if (data[1] == 'A')
                        if (data[2] == 'N')
                                if (data[3] == '!')
                                        san_only_bug(data, size);
        return 0;
}
