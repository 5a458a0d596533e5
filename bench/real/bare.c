/*
 * bare: the floor a fuzzer's speed is judged against. It loads a harness
 * built for snapfuzz (the same .so, -fsanitize=fuzzer-no-link), reads a
 * corpus into memory and calls LLVMFuzzerTestOneInput over it, round after
 * round, for a given time: no mutation, no coverage scan, no process
 * around the call. The SanitizerCoverage callbacks the target binds to are
 * defined here as no-ops (the inline 8-bit counters still count, in the
 * target's own code, as they do under any fuzzer); link with -rdynamic so
 * the .so sees them.
 *
 * usage: bare TARGET.so SECONDS DIR|FILE...
 * prints: "bare: N execs in S s = R exec/s over K inputs"
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

__thread uintptr_t __sancov_lowest_stack;
void __sanitizer_cov_8bit_counters_init(uint8_t *a, uint8_t *b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_pcs_init(const uintptr_t *a, const uintptr_t *b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_pc_guard_init(uint32_t *a, uint32_t *b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_pc_guard(uint32_t *g)
{
        (void)g;
}
void __sanitizer_cov_trace_pc_indir(uintptr_t c)
{
        (void)c;
}
void __sanitizer_cov_trace_cmp1(uint8_t a, uint8_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_cmp2(uint16_t a, uint16_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_cmp4(uint32_t a, uint32_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_cmp8(uint64_t a, uint64_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_const_cmp1(uint8_t a, uint8_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_const_cmp2(uint16_t a, uint16_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_const_cmp4(uint32_t a, uint32_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_const_cmp8(uint64_t a, uint64_t b)
{
        (void)a, (void)b;
}
void __sanitizer_cov_trace_switch(uint64_t v, uint64_t *c)
{
        (void)v, (void)c;
}
void __sanitizer_cov_trace_div4(uint32_t v)
{
        (void)v;
}
void __sanitizer_cov_trace_div8(uint64_t v)
{
        (void)v;
}
void __sanitizer_cov_trace_gep(uintptr_t i)
{
        (void)i;
}
size_t LLVMFuzzerMutate(uint8_t *d, size_t s, size_t m)
{
        (void)d, (void)m;
        return s;
}

struct input {
        uint8_t *data;
        size_t size;
};

static struct input *inputs;
static size_t ninputs, cap;

static void add_file(const char *p)
{
        FILE *f = fopen(p, "rb");
        if (!f)
                return;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                fclose(f);
                return;
        }
        fclose(f);
        if (ninputs == cap) {
                cap = cap ? 2 * cap : 256;
                inputs = realloc(inputs, cap * sizeof(*inputs));
                if (!inputs)
                        abort();
        }
        inputs[ninputs++] = (struct input){buf, (size_t)n};
}

static void collect(const char *p)
{
        struct stat st;
        if (stat(p, &st) != 0)
                return;
        if (!S_ISDIR(st.st_mode)) {
                if (S_ISREG(st.st_mode))
                        add_file(p);
                return;
        }
        DIR *d = opendir(p);
        if (!d)
                return;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char buf[4096];
                snprintf(buf, sizeof(buf), "%s/%s", p, e->d_name);
                collect(buf);
        }
        closedir(d);
}

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        if (argc < 4) {
                fprintf(stderr, "usage: bare TARGET.so SECONDS DIR|FILE...\n");
                return 2;
        }
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
                fprintf(stderr, "bare: %s\n", dlerror());
                return 2;
        }
        int (*one)(const uint8_t *, size_t) =
            (int (*)(const uint8_t *, size_t))dlsym(h, "LLVMFuzzerTestOneInput");
        int (*init)(int *, char ***) = (int (*)(int *, char ***))dlsym(h, "LLVMFuzzerInitialize");
        if (!one) {
                fprintf(stderr, "bare: no LLVMFuzzerTestOneInput\n");
                return 2;
        }
        double secs = atof(argv[2]);
        for (int i = 3; i < argc; i++)
                collect(argv[i]);
        if (ninputs == 0) {
                fprintf(stderr, "bare: no inputs\n");
                return 2;
        }
        if (init)
                init(&argc, &argv);
        /* The target may keep a pointer past the call or write into its
           input; each call gets a fresh heap copy, as a fuzzer's would. */
        unsigned long long n = 0;
        double t0 = now(), t = t0;
        while (t - t0 < secs) {
                for (size_t i = 0; i < ninputs; i++) {
                        uint8_t *copy = malloc(inputs[i].size ? inputs[i].size : 1);
                        memcpy(copy, inputs[i].data, inputs[i].size);
                        one(copy, inputs[i].size);
                        free(copy);
                        n++;
                }
                t = now();
        }
        printf("bare: %llu execs in %.2f s = %.0f exec/s over %zu inputs\n", n, t - t0,
               n / (t - t0), ninputs);
        return 0;
}
