/*
 * A bug behind comparisons that reach snapfuzz only through the
 * sanitizer's weak hooks: built with AddressSanitizer's shared runtime,
 * the target calls the runtime's memcmp and strncasecmp interceptors
 * directly (as a target whose lookup scope puts its own dependencies first
 * does), so snapfuzz's interposed functions never see these calls; the
 * interceptors call __sanitizer_weak_hook_memcmp and _strncasecmp, which
 * snapfuzz exports. The bug is an abort().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*MemcmpFn)(const void *, const void *, size_t);
typedef int (*StrncasecmpFn)(const char *, const char *, size_t);

static MemcmpFn asan_memcmp;
static StrncasecmpFn asan_strncasecmp;

__attribute__((constructor)) static void find_interceptors(void)
{
        void *rt = dlopen("libclang_rt.asan-x86_64.so", RTLD_NOW | RTLD_NOLOAD);
        if (!rt)
                abort(); /* not the build this test is about */
        asan_memcmp = (MemcmpFn)dlsym(rt, "memcmp");
        asan_strncasecmp = (StrncasecmpFn)dlsym(rt, "strncasecmp");
        if (!asan_memcmp || !asan_strncasecmp)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char buf[64];

        if (size < 24 || size >= sizeof(buf))
                return 0;
        if (asan_memcmp(data, "\xfa\xce\xb0\x0c-weak-hk", 12) != 0)
                return 0;
        memcpy(buf, data + 12, size - 12);
        buf[size - 12] = '\0';
        if (asan_strncasecmp(buf, "SANITIZED:OK", 12) == 0)
                abort();
        return 0;
}
