/*
 * Comparison feedback from the target: the SanitizerCoverage trace-cmp
 * family (cmp, const_cmp, switch, div, gep; gcc's cmpf and cmpd), the
 * byte-string functions a target compares with (memcmp, bcmp, strcmp,
 * strncmp, strcasecmp, strncasecmp, strstr, strcasestr, memmem: the
 * functions libFuzzer intercepts), and the sanitizers' __sanitizer_weak_hook_* callbacks for
 * the same functions, all exported from the snapfuzz executable so that a
 * dlopen()ed target (and a sanitizer runtime) binds to them. Each writes
 * the operands into the live comparison table (worker/cmplog.h); mutations
 * read it only once frozen into the replay record. A one-byte trace_cmp
 * whose operands are equal also counts toward the equal-comparison
 * features (cmplog_eq()), on every input.
 *
 * The callbacks run on every comparison the target makes: a load and a
 * branch when the runner is not recording (most inputs), one hashed slot
 * write when it is; no lock, no allocation, no syscall. One-byte
 * comparisons are not recorded for input-to-state (only the value profile
 * sees them): random bytes and the interesting-value operators find those,
 * and a tokenizer's character tests would crowd out the wide constants
 * that input-to-state mutations exist for.
 *
 * The string functions interpose on libc's for every object in the process
 * (the executable comes first in symbol lookup), snapfuzz's own code and its
 * libraries included. So each returns exactly what the next definition
 * returns (libc's, or a sanitizer runtime's interceptor when one is
 * preloaded, which keeps its checks), and records only while the runner
 * has the target running (cmplog_mode), only when the operands differ
 * (equal operands teach nothing), and reading no byte the real function
 * could not read. libc's internal calls do not go through these. When
 * the next definition is a sanitizer's interceptor, it calls our weak hook
 * for the same comparison; hooks_inside makes the hook leave it to the
 * interposer, so a comparison is recorded once. The weak hooks record the
 * calls that reach the interceptor without passing ours (a target whose
 * lookup scope puts its own dependencies first).
 *
 * This file is built with -fno-builtin (see worker/meson.build): the compiler
 * must not turn a loop here into a call to the very function being
 * defined.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "worker/cmplog.h"

#define SF_EXPORT __attribute__((visibility("default")))
#define CALLER_PC() ((uintptr_t)__builtin_return_address(0))

/* --- trace-cmp ---------------------------------------------------------- */

/* The hooks' fast path is a load of cmplog_mode, a branch and a return:
 * a tokenizer makes a comparison per byte, so the cost of the hook when
 * nothing records (most executions) is what a target pays. Everything
 * else (the caller's address, the operands' bookkeeping) happens out of
 * line, so the fast path needs no stack frame and no saved register. */
static __attribute__((noinline, cold)) void cmp1_slow(uintptr_t pc, uint8_t a, uint8_t b)
{
        cmplog_vp(pc, (unsigned)__builtin_popcount((unsigned)(a ^ b)));
}

static __attribute__((noinline, cold)) void cmp_eq_slow(uintptr_t pc)
{
        cmplog_eq(pc);
}

static __attribute__((noinline, cold)) void cmp_int_slow(uintptr_t pc, uint64_t a, uint64_t b,
                                                         unsigned width, unsigned flags)
{
        cmplog_int(pc, a, b, width, flags);
}

/* One-byte comparisons only feed the value profile, and, when both
 * operands are computed, the equal-comparison counts (cmplog_eq()). So
 * without the value profile const_cmp1 does nothing on any input (nor do
 * gep, cmpf and cmpd below): the worker removes a dlopen()ed target's
 * calls to them before the first runner (worker/cmpsites.c), and these
 * definitions serve the targets it cannot patch. */
SF_EXPORT void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b);
SF_EXPORT void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b)
{
        if (__builtin_expect(a == b, 0))
                cmp_eq_slow(CALLER_PC());
        if (__builtin_expect(cmplog_mode & CMPLOG_VALUE_PROFILE, 0))
                cmp1_slow(CALLER_PC(), a, b);
}

SF_EXPORT void __sanitizer_cov_trace_const_cmp1(uint8_t c, uint8_t v);
SF_EXPORT void __sanitizer_cov_trace_const_cmp1(uint8_t c, uint8_t v)
{
        if (__builtin_expect(cmplog_mode & CMPLOG_VALUE_PROFILE, 0))
                cmp1_slow(CALLER_PC(), v, c);
}

/* For trace_cmp both operands may come from the input; for const_cmp the
 * first argument is the compile-time constant. */
#define SF_CMP(bytes, type)                                                                        \
        SF_EXPORT void __sanitizer_cov_trace_cmp##bytes(type a, type b);                           \
        SF_EXPORT void __sanitizer_cov_trace_cmp##bytes(type a, type b)                            \
        {                                                                                          \
                if (__builtin_expect(cmplog_mode != 0, 0))                                         \
                        cmp_int_slow(CALLER_PC(), a, b, bytes, 0);                                 \
        }                                                                                          \
        SF_EXPORT void __sanitizer_cov_trace_const_cmp##bytes(type c, type v);                     \
        SF_EXPORT void __sanitizer_cov_trace_const_cmp##bytes(type c, type v)                      \
        {                                                                                          \
                if (__builtin_expect(cmplog_mode != 0, 0))                                         \
                        cmp_int_slow(CALLER_PC(), v, c, bytes, CMPTABLE_F_CONST);                  \
        }

SF_CMP(2, uint16_t)
SF_CMP(4, uint32_t)
SF_CMP(8, uint64_t)

/* gcc's trace-cmp also reports floating-point comparisons (clang's does
 * not): accepted, so such a target loads, and not recorded: input-to-state
 * replacement works on the input's integer bytes. */
SF_EXPORT void __sanitizer_cov_trace_cmpf(float a, float b);
SF_EXPORT void __sanitizer_cov_trace_cmpf(float a, float b)
{
        (void)a;
        (void)b;
}

SF_EXPORT void __sanitizer_cov_trace_cmpd(double a, double b);
SF_EXPORT void __sanitizer_cov_trace_cmpd(double a, double b)
{
        (void)a;
        (void)b;
}

/* cases[0] is the number of cases, cases[1] the width of @val in bits, and
 * the case values follow. One case is recorded per call, a different one
 * each time, so a switch reached often enough fills a slot per case
 * without costing a loop over all of them on every call. */
static __attribute__((noinline, cold)) void switch_slow(uintptr_t pc, uint64_t val,
                                                        const uint64_t *cases)
{
        uint64_t n = cases[0];
        unsigned width = (unsigned)(cases[1] / 8);

        if (n == 0 || width > 8)
                return;
        uint64_t i = cmplog_live.switch_turn++ % n;
        if (width >= 2)
                cmplog_int(pc + i, val, cases[2 + i], width, CMPTABLE_F_CONST);
        else if (cmplog_mode & CMPLOG_VALUE_PROFILE)
                cmplog_vp(pc + i, (unsigned)__builtin_popcountll(val ^ cases[2 + i]));
}

/* A tokenizer's switch runs once a byte: like the comparisons' hooks, the
 * fast path reads nothing but cmplog_mode (not the case table) and needs
 * no stack frame. */
SF_EXPORT void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases);
SF_EXPORT void __sanitizer_cov_trace_switch(uint64_t val, uint64_t *cases)
{
        if (__builtin_expect(cmplog_mode != 0, 0))
                switch_slow(CALLER_PC(), val, cases);
}

/* A divisor the input controls is one comparison away from zero. */
SF_EXPORT void __sanitizer_cov_trace_div4(uint32_t val);
SF_EXPORT void __sanitizer_cov_trace_div4(uint32_t val)
{
        if (__builtin_expect(cmplog_mode != 0, 0))
                cmp_int_slow(CALLER_PC(), val, 0, 4, CMPTABLE_F_CONST);
}

SF_EXPORT void __sanitizer_cov_trace_div8(uint64_t val);
SF_EXPORT void __sanitizer_cov_trace_div8(uint64_t val)
{
        if (__builtin_expect(cmplog_mode != 0, 0))
                cmp_int_slow(CALLER_PC(), val, 0, 8, CMPTABLE_F_CONST);
}

/* An array index: writing 0 over it is what the interesting-value
 * operators already do, so it only feeds the value profile. */
SF_EXPORT void __sanitizer_cov_trace_gep(uintptr_t idx);
SF_EXPORT void __sanitizer_cov_trace_gep(uintptr_t idx)
{
        if (__builtin_expect(cmplog_mode & CMPLOG_VALUE_PROFILE, 0)) {
                unsigned d = (unsigned)__builtin_popcountll(idx);
                cmplog_vp(CALLER_PC(), d > 63 ? 63 : d);
        }
}

/* --- the byte-string functions ---------------------------------------- */

typedef int (*MemcmpFn)(const void *, const void *, size_t);
typedef int (*StrcmpFn)(const char *, const char *);
typedef int (*StrncmpFn)(const char *, const char *, size_t);
typedef char *(*StrstrFn)(const char *, const char *);
typedef void *(*MemmemFn)(const void *, size_t, const void *, size_t);

static struct {
        MemcmpFn memcmp, bcmp;
        StrcmpFn strcmp, strcasecmp;
        StrncmpFn strncmp, strncasecmp;
        StrstrFn strstr, strcasestr;
        MemmemFn memmem;
} real;

/* Non-zero while one of our interposers calls the next definition: a
 * sanitizer's interceptor then calls our weak hook for the same
 * comparison, which must not be counted twice. */
static __thread int hooks_inside;

/* Plain versions, used only until the real ones are resolved (a library's
 * constructor may compare strings before ours runs) or if one cannot be. */
static int plain_memcmp(const void *a, const void *b, size_t n)
{
        const uint8_t *p = a, *q = b;
        for (size_t i = 0; i < n; i++)
                if (p[i] != q[i])
                        return p[i] < q[i] ? -1 : 1;
        return 0;
}

static inline uint8_t lower(uint8_t c)
{
        return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

static int plain_strncmp_case(const char *a, const char *b, size_t n, int fold)
{
        const uint8_t *p = (const uint8_t *)a, *q = (const uint8_t *)b;
        for (size_t i = 0; i < n; i++) {
                uint8_t x = fold ? lower(p[i]) : p[i];
                uint8_t y = fold ? lower(q[i]) : q[i];
                if (x != y)
                        return x < y ? -1 : 1;
                if (!x)
                        break;
        }
        return 0;
}

static int plain_strcmp(const char *a, const char *b)
{
        return plain_strncmp_case(a, b, SIZE_MAX, 0);
}

static int plain_strcasecmp(const char *a, const char *b)
{
        return plain_strncmp_case(a, b, SIZE_MAX, 1);
}

static int plain_strncmp(const char *a, const char *b, size_t n)
{
        return plain_strncmp_case(a, b, n, 0);
}

static int plain_strncasecmp(const char *a, const char *b, size_t n)
{
        return plain_strncmp_case(a, b, n, 1);
}

static void *plain_memmem(const void *h, size_t hl, const void *n, size_t nl)
{
        const uint8_t *p = h;
        if (nl == 0)
                return (void *)h;
        for (size_t i = 0; i + nl <= hl; i++)
                if (plain_memcmp(p + i, n, nl) == 0)
                        return (void *)(p + i);
        return NULL;
}

static char *plain_strstr(const char *h, const char *n)
{
        size_t hl = 0, nl = 0;
        while (h[hl])
                hl++;
        while (n[nl])
                nl++;
        return plain_memmem(h, hl, n, nl);
}

static char *plain_strcasestr(const char *h, const char *n)
{
        size_t nl = 0;
        while (n[nl])
                nl++;
        for (; *h; h++)
                if (plain_strncmp_case(h, n, nl, 1) == 0)
                        return (char *)h;
        return nl == 0 ? (char *)h : NULL;
}

/* The next definition of each function after ours: libc's, or a preloaded
 * sanitizer runtime's interceptor. Runs before main, in the executable's
 * constructors (after those of the libraries it links). */
__attribute__((constructor)) static void cmphooks_resolve(void)
{
        real.memcmp = (MemcmpFn)dlsym(RTLD_NEXT, "memcmp");
        real.bcmp = (MemcmpFn)dlsym(RTLD_NEXT, "bcmp");
        real.strcmp = (StrcmpFn)dlsym(RTLD_NEXT, "strcmp");
        real.strcasecmp = (StrcmpFn)dlsym(RTLD_NEXT, "strcasecmp");
        real.strncmp = (StrncmpFn)dlsym(RTLD_NEXT, "strncmp");
        real.strncasecmp = (StrncmpFn)dlsym(RTLD_NEXT, "strncasecmp");
        real.strstr = (StrstrFn)dlsym(RTLD_NEXT, "strstr");
        real.strcasestr = (StrstrFn)dlsym(RTLD_NEXT, "strcasestr");
        real.memmem = (MemmemFn)dlsym(RTLD_NEXT, "memmem");
}

/* The length of the C string @s, at most @max: never reads past its NUL. */
static inline size_t bounded_strlen(const char *s, size_t max)
{
        size_t n = 0;
        while (n < max && s[n])
                n++;
        return n;
}

static inline size_t min_size(size_t a, size_t b)
{
        return a < b ? a : b;
}

/* The value profile's distance for byte strings: how many leading bytes
 * match, at most 63 (and, for C strings, up to the end of the string). */
static unsigned common_prefix(const uint8_t *a, const uint8_t *b, size_t n, int strings)
{
        size_t i = 0;
        while (i < n && i < 63 && a[i] == b[i] && (!strings || a[i]))
                i++;
        return (unsigned)i;
}

/* Operands longer than the table keeps are recorded a window of
 * CMPTABLE_MEM_MAX bytes at a time (the last one ending at their end),
 * each window in which they differ, up to CMPLOG_MEM_WINDOWS of them. Every
 * window's bytes are in the input as it is, so input-to-state finds each
 * one, and a chain that writes them one after the other writes the whole
 * constant. Recorded from their start only, a 64-byte memcmp showed
 * forever the first 32 bytes, and once those matched (no new coverage:
 * the comparison still fails) nothing ever wrote the rest. */
#define CMPLOG_MEM_WINDOWS 4u

static void record_windows(uintptr_t pc, const uint8_t *a, size_t la, const uint8_t *b, size_t lb,
                           unsigned flags)
{
        size_t n = la > lb ? la : lb;

        for (size_t at = 0, w = 0; at < n && w < CMPLOG_MEM_WINDOWS; at += CMPTABLE_MEM_MAX, w++) {
                if (at && at + CMPTABLE_MEM_MAX > n && n >= CMPTABLE_MEM_MAX && la == lb)
                        at = n - CMPTABLE_MEM_MAX;
                size_t wa = at < la ? min_size(la - at, CMPTABLE_MEM_MAX) : 0;
                size_t wb = at < lb ? min_size(lb - at, CMPTABLE_MEM_MAX) : 0;
                if (at && (wa == 0 || wb == 0))
                        break;
                if (wa == wb && plain_memcmp(a + at, b + at, wa) == 0)
                        continue;
                cmplog_mem(pc, a + at, wa, b + at, wb, flags);
        }
}

static void record_bytes(uintptr_t pc, const void *a, const void *b, size_t n)
{
        if (cmplog_mode & CMPLOG_VALUE_PROFILE)
                cmplog_vp(pc, common_prefix(a, b, n, 0));
        n = min_size(n, CMPLOG_MEM_WINDOWS * CMPTABLE_MEM_MAX);
        record_windows(pc, a, n, b, n, 0);
}

/* Strings are recorded without their NUL, up to @n bytes. */
static void record_strings(uintptr_t pc, const char *a, const char *b, size_t n)
{
        if (cmplog_mode & CMPLOG_VALUE_PROFILE)
                cmplog_vp(pc, common_prefix((const uint8_t *)a, (const uint8_t *)b, n, 1));
        n = min_size(n, CMPLOG_MEM_WINDOWS * CMPTABLE_MEM_MAX);
        record_windows(pc, (const uint8_t *)a, bounded_strlen(a, n), (const uint8_t *)b,
                       bounded_strlen(b, n), CMPTABLE_F_STRING);
}

static void record_needle(uintptr_t pc, const void *needle, size_t n)
{
        cmplog_mem(pc, NULL, 0, needle, min_size(n, CMPTABLE_MEM_MAX), CMPTABLE_F_TOKEN);
}

/* Each interposer calls the next definition directly when nothing
 * records (the target is not running, or runs without comparison
 * feedback); otherwise it marks the call as ours (hooks_inside) so that a
 * sanitizer interceptor's weak hook leaves it to us, and records what the
 * answer says the operands were. */
#define CALL_NEXT(fn, plain, ...) (real.fn ? real.fn(__VA_ARGS__) : plain(__VA_ARGS__))
#define CALL_OURS(ret, fn, plain, ...)                                                             \
        do {                                                                                       \
                hooks_inside++;                                                                    \
                ret = CALL_NEXT(fn, plain, __VA_ARGS__);                                           \
                hooks_inside--;                                                                    \
        } while (0)

SF_EXPORT int memcmp(const void *a, const void *b, size_t n)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(memcmp, plain_memcmp, a, b, n);
        CALL_OURS(r, memcmp, plain_memcmp, a, b, n);
        if (r != 0)
                record_bytes(CALLER_PC(), a, b, n);
        return r;
}

SF_EXPORT int bcmp(const void *a, const void *b, size_t n)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(bcmp, plain_memcmp, a, b, n);
        CALL_OURS(r, bcmp, plain_memcmp, a, b, n);
        if (r != 0)
                record_bytes(CALLER_PC(), a, b, n);
        return r;
}

SF_EXPORT int strcmp(const char *a, const char *b)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strcmp, plain_strcmp, a, b);
        CALL_OURS(r, strcmp, plain_strcmp, a, b);
        if (r != 0)
                record_strings(CALLER_PC(), a, b, SIZE_MAX);
        return r;
}

SF_EXPORT int strcasecmp(const char *a, const char *b)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strcasecmp, plain_strcasecmp, a, b);
        CALL_OURS(r, strcasecmp, plain_strcasecmp, a, b);
        if (r != 0)
                record_strings(CALLER_PC(), a, b, SIZE_MAX);
        return r;
}

SF_EXPORT int strncmp(const char *a, const char *b, size_t n)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strncmp, plain_strncmp, a, b, n);
        CALL_OURS(r, strncmp, plain_strncmp, a, b, n);
        if (r != 0)
                record_strings(CALLER_PC(), a, b, n);
        return r;
}

SF_EXPORT int strncasecmp(const char *a, const char *b, size_t n)
{
        int r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strncasecmp, plain_strncasecmp, a, b, n);
        CALL_OURS(r, strncasecmp, plain_strncasecmp, a, b, n);
        if (r != 0)
                record_strings(CALLER_PC(), a, b, n);
        return r;
}

SF_EXPORT char *strstr(const char *h, const char *n)
{
        char *r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strstr, plain_strstr, h, n);
        CALL_OURS(r, strstr, plain_strstr, h, n);
        if (!r)
                record_needle(CALLER_PC(), n, bounded_strlen(n, CMPTABLE_MEM_MAX));
        return r;
}

SF_EXPORT char *strcasestr(const char *h, const char *n)
{
        char *r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(strcasestr, plain_strcasestr, h, n);
        CALL_OURS(r, strcasestr, plain_strcasestr, h, n);
        if (!r)
                record_needle(CALLER_PC(), n, bounded_strlen(n, CMPTABLE_MEM_MAX));
        return r;
}

SF_EXPORT void *memmem(const void *h, size_t hl, const void *n, size_t nl)
{
        void *r;
        if (__builtin_expect(!cmplog_mode, 1))
                return CALL_NEXT(memmem, plain_memmem, h, hl, n, nl);
        CALL_OURS(r, memmem, plain_memmem, h, hl, n, nl);
        if (!r)
                record_needle(CALLER_PC(), n, nl);
        return r;
}

/* --- the sanitizers' weak hooks ----------------------------------------- */

/* A sanitizer runtime's interceptors (AddressSanitizer, MemorySanitizer,
 * ...) call these after the intercepted function, with its caller's
 * address and its answer, when something defines them: the comparisons
 * that reach the interceptor without passing ours (a call bound to the
 * runtime directly) still feed snapfuzz. The ones that passed ours are
 * already recorded (hooks_inside). */
#define WEAK_HOOK_SKIP() (__builtin_expect(!cmplog_mode, 1) || hooks_inside)

SF_EXPORT void __sanitizer_weak_hook_memcmp(void *pc, const void *a, const void *b, size_t n,
                                            int result);
SF_EXPORT void __sanitizer_weak_hook_memcmp(void *pc, const void *a, const void *b, size_t n,
                                            int result)
{
        if (WEAK_HOOK_SKIP() || result == 0)
                return;
        record_bytes((uintptr_t)pc, a, b, n);
}

SF_EXPORT void __sanitizer_weak_hook_strncmp(void *pc, const char *a, const char *b, size_t n,
                                             int result);
SF_EXPORT void __sanitizer_weak_hook_strncmp(void *pc, const char *a, const char *b, size_t n,
                                             int result)
{
        if (WEAK_HOOK_SKIP() || result == 0)
                return;
        record_strings((uintptr_t)pc, a, b, n);
}

SF_EXPORT void __sanitizer_weak_hook_strncasecmp(void *pc, const char *a, const char *b, size_t n,
                                                 int result);
SF_EXPORT void __sanitizer_weak_hook_strncasecmp(void *pc, const char *a, const char *b, size_t n,
                                                 int result)
{
        if (WEAK_HOOK_SKIP() || result == 0)
                return;
        record_strings((uintptr_t)pc, a, b, n);
}

SF_EXPORT void __sanitizer_weak_hook_strcmp(void *pc, const char *a, const char *b, int result);
SF_EXPORT void __sanitizer_weak_hook_strcmp(void *pc, const char *a, const char *b, int result)
{
        if (WEAK_HOOK_SKIP() || result == 0)
                return;
        record_strings((uintptr_t)pc, a, b, SIZE_MAX);
}

SF_EXPORT void __sanitizer_weak_hook_strcasecmp(void *pc, const char *a, const char *b, int result);
SF_EXPORT void __sanitizer_weak_hook_strcasecmp(void *pc, const char *a, const char *b, int result)
{
        if (WEAK_HOOK_SKIP() || result == 0)
                return;
        record_strings((uintptr_t)pc, a, b, SIZE_MAX);
}

SF_EXPORT void __sanitizer_weak_hook_strstr(void *pc, const char *h, const char *n, char *result);
SF_EXPORT void __sanitizer_weak_hook_strstr(void *pc, const char *h, const char *n, char *result)
{
        (void)h;
        if (WEAK_HOOK_SKIP() || result)
                return;
        record_needle((uintptr_t)pc, n, bounded_strlen(n, CMPTABLE_MEM_MAX));
}

SF_EXPORT void __sanitizer_weak_hook_strcasestr(void *pc, const char *h, const char *n,
                                                char *result);
SF_EXPORT void __sanitizer_weak_hook_strcasestr(void *pc, const char *h, const char *n,
                                                char *result)
{
        (void)h;
        if (WEAK_HOOK_SKIP() || result)
                return;
        record_needle((uintptr_t)pc, n, bounded_strlen(n, CMPTABLE_MEM_MAX));
}

SF_EXPORT void __sanitizer_weak_hook_memmem(void *pc, const void *h, size_t hl, const void *n,
                                            size_t nl, void *result);
SF_EXPORT void __sanitizer_weak_hook_memmem(void *pc, const void *h, size_t hl, const void *n,
                                            size_t nl, void *result)
{
        (void)h;
        (void)hl;
        if (WEAK_HOOK_SKIP() || result)
                return;
        record_needle((uintptr_t)pc, n, nl);
}
