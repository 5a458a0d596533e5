/*
 * libsnapfuzz-malloc.so: preloaded into workers of targets built without a
 * sanitizer, it stops a single allocation larger than --malloc-limit-mb
 * (the case an RSS limit sees too late, or never: a huge malloc that is
 * only partly touched). It wraps the allocation entry points and forwards
 * to glibc's own (__libc_malloc and friends), so free() stays glibc's and
 * nothing else changes. Sanitizer targets use their runtime's
 * max_allocation_size_mb instead (core/sanitizer.c); this library is never
 * loaded with one.
 *
 * It is armed by the runner after the target's initialization, so a
 * target may allocate what it likes in LLVMFuzzerInitialize. Over the
 * limit it prints a report line that triage reads ("ERROR: snapfuzz:
 * malloc-limit") and aborts, so the runner records the stack of the
 * allocation.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SF_EXPORT __attribute__((visibility("default")))

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

/* Set to 1 by the runner once the target is initialized. */
SF_EXPORT volatile int snapfuzz_malloc_armed;
static size_t limit;

__attribute__((constructor)) static void malloc_limit_init(void)
{
        const char *s = getenv("SNAPFUZZ_MALLOC_LIMIT_MB");
        unsigned long long mb = s ? strtoull(s, NULL, 10) : 0;
        limit = mb ? (size_t)(mb << 20) : SIZE_MAX;
}

static void over_limit(const char *what, size_t size)
{
        char line[160];
        int n = snprintf(line, sizeof(line),
                         "==snapfuzz== ERROR: snapfuzz: malloc-limit: %s of %zu bytes is over "
                         "--malloc-limit-mb %zu\n",
                         what, size, limit >> 20);
        if (n > 0) {
                ssize_t w = write(STDERR_FILENO, line, (size_t)n);
                (void)w;
        }
        abort();
}

static inline void check(const char *what, size_t size)
{
        if (__builtin_expect(size > limit, 0) && snapfuzz_malloc_armed)
                over_limit(what, size);
}

SF_EXPORT void *malloc(size_t size)
{
        check("malloc", size);
        return __libc_malloc(size);
}

SF_EXPORT void *calloc(size_t n, size_t size)
{
        size_t total;
        if (!__builtin_mul_overflow(n, size, &total))
                check("calloc", total);
        return __libc_calloc(n, size);
}

SF_EXPORT void *realloc(void *p, size_t size)
{
        check("realloc", size);
        return __libc_realloc(p, size);
}

SF_EXPORT void *memalign(size_t align, size_t size)
{
        check("memalign", size);
        return __libc_memalign(align, size);
}

SF_EXPORT void *aligned_alloc(size_t align, size_t size)
{
        check("aligned_alloc", size);
        return __libc_memalign(align, size);
}

SF_EXPORT int posix_memalign(void **ret, size_t align, size_t size)
{
        if (align < sizeof(void *) || (align & (align - 1)))
                return EINVAL;
        check("posix_memalign", size);
        void *p = __libc_memalign(align, size);
        if (!p)
                return ENOMEM;
        *ret = p;
        return 0;
}
