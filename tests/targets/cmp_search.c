/*
 * A bug behind a search the string hooks must see: a case-insensitive
 * substring (strcasestr, CMP_SEARCH_ONLY='C') or a binary needle anywhere
 * (memmem, CMP_SEARCH_ONLY='M'). The needles are long enough that random
 * bytes never hold them: only the needle the hook records, written into an
 * input, gets through. The bug is an abort().
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char buf[256];

        if (size == 0 || size >= sizeof(buf))
                return 0;
#if CMP_SEARCH_ONLY == 'C'
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (strcasestr(buf, "Snap-Needle:Case"))
                abort();
#elif CMP_SEARCH_ONLY == 'M'
        (void)buf;
        if (memmem(data, size, "\x7f\x00\xfe\x01snapMEM\x80\x81", 13))
                abort();
#else
#error "build with -DCMP_SEARCH_ONLY='C' or 'M'"
#endif
        return 0;
}
