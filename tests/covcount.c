/*
 * covcount: an independent witness of a corpus's coverage, for the merge
 * tests (tests/test_merge.c).
 *
 *     covcount TARGET.so PATH...
 *
 * Runs every file named, or found directly in a directory named, through
 * the target's LLVMFuzzerTestOneInput once, in this one process, and
 * prints "FEATURES EDGES": the (counter, hit-count bucket) pairs and the
 * counters any input reached, counted from the target's inline 8-bit
 * counters, which this program registers itself (no snapfuzz code, no
 * fork server, no sandbox). The buckets are libFuzzer's and AFL's: 1, 2,
 * 3, 4-7, 8-15, 16-31, 32-127, 128+. Inputs must not crash. Errors exit 2.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "snapfuzz/banned.h"

#define COVCOUNT_MAX_REGIONS 64

typedef int (*TestOneInput)(const uint8_t *data, size_t size);

static struct {
        uint8_t *start;
        size_t len;
} regions[COVCOUNT_MAX_REGIONS];
static size_t n_regions;
static uint8_t *seen[COVCOUNT_MAX_REGIONS];

__attribute__((visibility("default"))) void __sanitizer_cov_8bit_counters_init(uint8_t *start,
                                                                               uint8_t *stop);
void __sanitizer_cov_8bit_counters_init(uint8_t *start, uint8_t *stop)
{
        if (n_regions < COVCOUNT_MAX_REGIONS && stop > start) {
                regions[n_regions].start = start;
                regions[n_regions++].len = (size_t)(stop - start);
        }
}

static uint8_t bucket(uint8_t hits)
{
        return hits >= 128  ? 128
               : hits >= 32 ? 64
               : hits >= 16 ? 32
               : hits >= 8  ? 16
               : hits >= 4  ? 8
               : hits == 3  ? 4
               : hits == 2  ? 2
                            : 1;
}

static void run_file(TestOneInput test, const char *path)
{
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "covcount: %s cannot be read\n", path);
                exit(2);
        }
        uint8_t *data = malloc(1 << 20);
        size_t n = data ? fread(data, 1, 1 << 20, f) : 0;
        fclose(f);
        for (size_t r = 0; r < n_regions; r++)
                memset(regions[r].start, 0, regions[r].len);
        test(data, n);
        for (size_t r = 0; r < n_regions; r++)
                for (size_t i = 0; i < regions[r].len; i++)
                        if (regions[r].start[i])
                                seen[r][i] |= bucket(regions[r].start[i]);
        free(data);
}

static void run_path(TestOneInput test, const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0) {
                fprintf(stderr, "covcount: no %s\n", path);
                exit(2);
        }
        if (!S_ISDIR(st.st_mode)) {
                run_file(test, path);
                return;
        }
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                char p[4096];
                snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
                if (de->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
                        run_file(test, p);
        }
        if (d)
                closedir(d);
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: covcount TARGET.so PATH...\n");
                return 2;
        }
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        TestOneInput test = h ? (TestOneInput)dlsym(h, "LLVMFuzzerTestOneInput") : NULL;
        if (!test) {
                fprintf(stderr, "covcount: %s: %s\n", argv[1], dlerror());
                return 2;
        }
        for (size_t r = 0; r < n_regions; r++) {
                seen[r] = calloc(regions[r].len, 1);
                if (!seen[r])
                        return 2;
        }
        for (int i = 2; i < argc; i++)
                run_path(test, argv[i]);
        unsigned long features = 0, edges = 0;
        for (size_t r = 0; r < n_regions; r++)
                for (size_t i = 0; i < regions[r].len; i++) {
                        features += (unsigned long)__builtin_popcount(seen[r][i]);
                        edges += seen[r][i] != 0;
                }
        printf("%lu %lu\n", features, edges);
        return 0;
}
