/*
 * tracepc_bench: what gcc's -fsanitize-coverage=trace-pc costs per
 * execution under snapfuzz's callback (worker/sancov.c) and its map scan
 * (core/coverage.c), against variants, on one fixed input. Not built by
 * meson; results and the command: bench/results/tracepc-2026-11-26.md.
 *
 *     gcc -D_GNU_SOURCE -O2 -rdynamic -I. -Iinclude bench/tracepc_bench.c \
 *         build/core/libsnapfuzz_core.a -lcjson -ldl -lpthread -o tracepc_bench
 *     tracepc_bench TARGET.so VARIANT LEN
 *
 * VARIANT 0: the callback returns at once, no map (the cost of the calls
 * gcc inserts); 3: the same with the 64 Ki map registered and scanned
 * after each execution; 1: AFL-style edges, as sancov.c; 2: blocks only
 * (the PC's hash, no previous block). The input is LEN bytes of a short
 * text pattern; each execution is a call of LLVMFuzzerTestOneInput and a
 * coverage_scan, as in the runner.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core/coverage.h"

static int variant;
static __thread uint32_t prev;

void __sanitizer_cov_trace_pc(void) __attribute__((visibility("default")));
void __sanitizer_cov_trace_pc(void)
{
        if (variant == 0 || variant == 3)
                return;
        uintptr_t off = (uintptr_t)__builtin_return_address(0) - coverage_tracepc_base;
        uint32_t h = (uint32_t)(((uint64_t)off * UINT64_C(0x9e3779b97f4a7c15)) >>
                                (64 - COVERAGE_TRACEPC_BITS));
        uint8_t *c = &coverage_tracepc_counters[variant == 1 ? h ^ prev : h];
        prev = h >> 1;
        *c += *c != 255;
}

static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "usage: tracepc_bench TARGET.so VARIANT LEN\n");
                return 2;
        }
        variant = atoi(argv[2]);
        void *h = dlopen(argv[1], RTLD_NOW);
        if (!h) {
                fprintf(stderr, "%s\n", dlerror());
                return 1;
        }
        int (*test)(const uint8_t *, size_t) =
            (int (*)(const uint8_t *, size_t))dlsym(h, "LLVMFuzzerTestOneInput");
        struct link_map *lm = NULL;
        if (!test || dlinfo(h, RTLD_DI_LINKMAP, &lm) < 0)
                return 1;
        if (variant)
                coverage_register_tracepc(lm->l_addr);
        CoverageShared *shared = calloc(1, sizeof(*shared));
        size_t len = (size_t)atoi(argv[3]);
        uint8_t *in = malloc(len + 1);
        if (!shared || !in)
                return 1;
        for (size_t i = 0; i < len; i++)
                in[i] = (uint8_t) "abc 12;x\n"[i % 9];
        long n = 0;
        double t0 = now();
        while (now() - t0 < 2) {
                for (int k = 0; k < 1000; k++) {
                        test(in, len);
                        coverage_scan(shared);
                }
                n += 1000;
        }
        double dt = now() - t0;
        printf("%s variant %d len %zu: %.1f ns per execution\n", argv[1], variant, len,
               dt / (double)n * 1e9);
        return 0;
}
