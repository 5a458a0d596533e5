/*
 * A test target for the AddressSanitizer bug types that the SARIF and
 * JUnit reports give rules of their own (tests/test_sarif.c). Built with
 * -fsanitize=address and -DASAN_KIND='x', it has one bug, behind a
 * one-byte gate (the first byte of the input is 'x'):
 *
 *   'D' double free                 (ASan: attempting double-free)
 *   'S' stack-buffer-overflow       (a write past a local array)
 *   'G' global-buffer-overflow      (a read past a global array)
 *   'N' a NULL pointer dereference  (ASan: SEGV on unknown address 0x0...)
 *   'W' a wild pointer dereference  (ASan: SEGV on a high unmapped address)
 *
 * Any other input returns 0 after a little parsing, so the fuzzer has
 * coverage to find first.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

char asan_kinds_global[8];
int *volatile asan_kinds_null;
volatile uintptr_t asan_kinds_wild = (uintptr_t)0x7ff0deadbee0ull;
/* Where every value the bugs read goes, so that no read is optimized out. */
volatile int asan_kinds_sink;

__attribute__((noinline)) static int asan_kinds_bug(const uint8_t *data, size_t size)
{
        volatile size_t n = size + 8;
        switch (ASAN_KIND) {
        case 'D': {
                char *p = malloc(16);
                memcpy(p, data, size < 16 ? size : 16);
                free(p);
                free(p);
                return p[0];
        }
        case 'S': {
                char local[8];
                memset(local, 0, n);
                return ((volatile char *)local)[0];
        }
        case 'G':
                return ((volatile char *)asan_kinds_global)[n];
        case 'N':
                return *(volatile int *)asan_kinds_null;
        case 'W':
                return *(volatile int *)asan_kinds_wild;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= 1 && data[0] == ASAN_KIND)
                asan_kinds_sink = asan_kinds_bug(data, size);
        int sum = 0;
        for (size_t i = 0; i < size && i < 4; i++)
                sum += data[i] == 'x';
        return sum & 0;
}
