/*
 * Micro-benchmark of coverage_scan() on a target-sized counter array with a
 * fraction of counters touched per execution. Measure instructions, not
 * time (the machines are shared):
 *   cc -O2 -D_GNU_SOURCE -Iinclude -I. bench/scan_bench.c core/coverage.c -o scan_bench
 *   valgrind --tool=callgrind --toggle-collect=coverage_scan ./scan_bench 65536 0.01 200
 * (arguments: counters, fraction touched, scans, and the fraction of
 * touched counters hit once more than usual in each scan: paths that vary).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/coverage.h"
static double now(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return t.tv_sec + t.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], 0, 10) : 65536;
        double frac = argc > 2 ? atof(argv[2]) : 0.01;
        uint8_t *ctr = calloc(n, 1);
        coverage_register_counters(ctr, ctr + n);
        static CoverageShared *sh;
        sh = calloc(1, sizeof(CoverageShared));
        size_t touched = (size_t)(n * frac);
        size_t *idx = malloc(touched * sizeof(size_t));
        srand(1);
        for (size_t i = 0; i < touched; i++)
                idx[i] = (size_t)rand() % n;
        /* warm: mark seen */
        for (size_t i = 0; i < touched; i++)
                ctr[idx[i]] = 1;
        coverage_scan(sh);
        int iters = argc > 3 ? atoi(argv[3]) : 200000;
        double vary = argc > 4 ? atof(argv[4]) : 0;
        double t0 = now();
        size_t found = 0;
        for (int it = 0; it < iters; it++) {
                for (size_t i = 0; i < touched; i++)
                        ctr[idx[i]] += 1 + (vary > 0 && rand() < vary * RAND_MAX);
                found += coverage_scan(sh);
        }
        double t1 = now();
        printf("n=%zu touched=%zu: %.1f ns/scan (found %zu)\n", n, touched, (t1 - t0) / iters * 1e9,
               found);
}
