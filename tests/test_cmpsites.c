/*
 * Removing the calls to idle comparison hooks (worker/cmpsites.c): on
 * targets built by clang and by gcc, with and without the PLT, the calls
 * to __sanitizer_cov_trace_const_cmp1 are gone and the target computes
 * what it computed; the calls to the hooks that record or count (trace_cmp1,
 * const_cmp4) stay; with the value profile, const_cmp1's stay too.
 *
 * This executable defines the hooks the targets bind to (exported), each
 * counting its calls. Criterion runs every test in a process of its own,
 * so each loads and patches a fresh copy of its target.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/cmpsites.h"

#define HOOK __attribute__((visibility("default"), used))

static unsigned calls_cmp1, calls_const1, calls_const4, calls_other;

HOOK void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b);
HOOK void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b)
{
        (void)a, (void)b;
        calls_cmp1++;
}

HOOK void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b);
HOOK void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b)
{
        (void)a, (void)b;
        calls_const1++;
}

HOOK void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b);
HOOK void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b)
{
        (void)a, (void)b;
        calls_const4++;
}

HOOK void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b);
HOOK void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b)
{
        (void)a, (void)b;
        calls_other++;
}

HOOK void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b);
HOOK void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b)
{
        (void)a, (void)b;
        calls_other++;
}

HOOK void __sanitizer_cov_trace_pc(void);
HOOK void __sanitizer_cov_trace_pc(void)
{
}

HOOK void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop);
HOOK void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
        (void)start, (void)stop;
}

HOOK void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end);
HOOK void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end)
{
        (void)beg, (void)end;
}

typedef unsigned (*RunFn)(const uint8_t *, size_t);

static const uint8_t input[] = "<<a>>bbMAGIC>";

static void *load(const char *name, RunFn *ret_run)
{
        char var[64];
        snprintf(var, sizeof(var), "SF_TARGET_%s", name);
        const char *path = getenv(var);
        cr_assert(path, "%s is not set", var);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        cr_assert(h, "dlopen: %s", dlerror());
        *ret_run = (RunFn)dlsym(h, "cmp_sites_run");
        cr_assert(*ret_run);
        return h;
}

static void reset(void)
{
        calls_cmp1 = calls_const1 = calls_const4 = calls_other = 0;
}

/* Runs @name's function before and after patching (@value_profile), and
 * checks which calls are gone. */
static void check_target(const char *name, bool value_profile)
{
        RunFn run;
        void *h = load(name, &run);

        unsigned before = run(input, sizeof(input) - 1);
        unsigned cmp1 = calls_cmp1, const1 = calls_const1, const4 = calls_const4;
        cr_assert_gt(const1, 0, "%s compares bytes with constants", name);
        cr_assert_gt(cmp1, 0);
        cr_assert_gt(const4, 0);

        unsigned removed = 0;
        cr_assert_eq(cmpsites_patch_idle(h, value_profile, &removed), 0);
        reset();
        cr_expect_eq(run(input, sizeof(input) - 1), before, "%s computes the same", name);
        cr_expect_eq(calls_cmp1, cmp1, "trace_cmp1 feeds the equal-comparison features");
        cr_expect_eq(calls_const4, const4, "const_cmp4 records");
        if (value_profile) {
                cr_expect_eq(removed, 0);
                cr_expect_eq(calls_const1, const1, "the value profile needs const_cmp1");
        } else {
                cr_expect_gt(removed, 0, "%s: calls removed", name);
                cr_expect_eq(calls_const1, 0, "%s: no const_cmp1 call is left", name);
        }
        dlclose(h);
}

Test(cmpsites, clang_calls_through_the_plt)
{
        check_target("cmp_sites", false);
}

Test(cmpsites, gcc_calls_through_the_plt)
{
        check_target("cmp_sites_gcc", false);
}

Test(cmpsites, gcc_calls_through_the_got)
{
        check_target("cmp_sites_gcc_noplt", false);
}

Test(cmpsites, the_value_profile_keeps_every_call)
{
        check_target("cmp_sites", true);
}

/* Patching twice (a worker that loads the target again) removes nothing
 * more and breaks nothing. */
Test(cmpsites, patching_again_changes_nothing)
{
        RunFn run;
        void *h = load("cmp_sites", &run);
        unsigned before = run(input, sizeof(input) - 1), n1 = 0, n2 = 0;
        cr_assert_eq(cmpsites_patch_idle(h, false, &n1), 0);
        cr_assert_eq(cmpsites_patch_idle(h, false, &n2), 0);
        cr_expect_gt(n1, 0);
        cr_expect_eq(n2, 0);
        cr_expect_eq(run(input, sizeof(input) - 1), before);
}
