/*
 * A bug behind one comparison against a constant longer than the
 * comparison table keeps of an operand (CMPTABLE_MEM_MAX, 32 bytes): a
 * 60-byte memcmp, or with CMP_LONG_STRNCMP a 48-byte strncmp. No branch
 * tells a half-matching input from a random one, so input-to-state has to
 * write the whole constant; it can only do so when each window of it is
 * recorded, not just the first. The bug is an abort().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef CMP_LONG_STRNCMP
#define LONG_KEY "strncmp-window|ABCDEFGHIJKLMNOPQRSTUVWXYZ/tail-end"
#define LONG_LEN 48u
#else
#define LONG_KEY "memcmp-window|0123456789|abcdefghijklmnopqrstuvwxyz|end-of-key"
#define LONG_LEN 60u
#endif

_Static_assert(sizeof(LONG_KEY) > LONG_LEN, "the key holds LONG_LEN bytes");

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < LONG_LEN)
                return 0;
#ifdef CMP_LONG_STRNCMP
        if (strncmp((const char *)data, LONG_KEY, LONG_LEN) == 0)
                abort();
#else
        if (memcmp(data, LONG_KEY, LONG_LEN) == 0)
                abort();
#endif
        return 0;
}
