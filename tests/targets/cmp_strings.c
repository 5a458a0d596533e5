/*
 * A bug behind the byte-string functions snapfuzz interposes: a
 * case-insensitive prefix (strncasecmp), a needle anywhere (strstr), a
 * binary magic anywhere (memmem) and an exact field (strcmp), checked in
 * that order. Each passed check is new coverage; the operands the hooks
 * record are what gets the fuzzer through each. The bug is an abort().
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char buf[128];
        const char *colon;

        if (size == 0 || size >= sizeof(buf))
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (strncasecmp(buf, "snap:", 5) != 0)
                return 0;
        if (!strstr(buf + 5, "needle"))
                return 0;
        if (!memmem(data, size, "\xde\xc0\xad\x0b", 4))
                return 0;
        colon = strchr(buf + 5, ':');
        if (!colon || strcmp(colon + 1, "end") != 0)
                return 0;
        abort();
}
