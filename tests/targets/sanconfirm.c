/*
 * A test target for sanitizer confirmations (tests/test_sanconfirm.c):
 * built with a sanitizer and -DSANCONFIRM_BUG='x', it has one bug behind a
 * three-byte magic (cmp-guided fuzzing finds it in well under a second):
 *
 *   'R' "FUZ": reads the byte after the input (AddressSanitizer:
 *       heap-buffer-overflow, READ of size 1, 0 bytes after the input)
 *   'N' "NUL": writes through a NULL pointer (AddressSanitizer: SEGV on
 *       unknown address 0x000000000000, a WRITE)
 *   'O' "OVF": a signed integer overflow (UBSan: runtime error: signed
 *       integer overflow)
 *
 * Any other input returns 0.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int *volatile sanconfirm_null;
volatile int sanconfirm_sink;
volatile int sanconfirm_max = INT_MAX;

#if SANCONFIRM_BUG == 'R'
#define SANCONFIRM_MAGIC "FUZ"
#elif SANCONFIRM_BUG == 'N'
#define SANCONFIRM_MAGIC "NUL"
#else
#define SANCONFIRM_MAGIC "OVF"
#endif

__attribute__((noinline)) static void sanconfirm_bug(const uint8_t *data, size_t size)
{
        switch (SANCONFIRM_BUG) {
        case 'R':
                sanconfirm_sink = data[size]; /* one byte past the input */
                break;
        case 'N':
                *sanconfirm_null = 1;
                break;
        case 'O':
                sanconfirm_sink = sanconfirm_max + (int)data[0];
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *m = SANCONFIRM_MAGIC;
        if (size == 3 && data[0] == m[0] && data[1] == m[1] && data[2] == m[2])
                sanconfirm_bug(data, size);
        return 0;
}
