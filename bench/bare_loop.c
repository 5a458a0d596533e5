/*
 * bare_loop: the bare cost of calling a target in a loop, the yardstick the
 * execution-speed benchmark (bench/execs.sh) holds snapfuzz against.
 *
 *     bare_loop TARGET.so CORPUS_DIR SECONDS
 *
 * It dlopen()s an instrumented target, calls LLVMFuzzerInitialize when the
 * target has one, loads every regular file of CORPUS_DIR into memory, and
 * calls LLVMFuzzerTestOneInput over those inputs round-robin for SECONDS of
 * wall-clock time. There is no fork, no sandbox, no mutation, no copy of the
 * input and no coverage scan: what is left is the target itself, including
 * its instrumentation (the inline 8-bit counters still increment, and the
 * comparison callbacks are still called, into the no-ops below). The result
 * is one line on stdout:
 *
 *     calls N seconds S calls_per_sec R inputs K bytes B
 *
 * An empty CORPUS_DIR runs the empty input, as a fuzzer with no seeds does.
 * Problems (usage, loading, reading) exit with BARE_EXIT_ERROR and a message
 * on stderr. The target must not crash on the corpus: build it with
 * -DSNAPFUZZ_NO_PLANTED_BUG for the bundled targets.
 *
 * As tests/plainrun.c, it is built with tests/sancov_noop.c (the
 * SanitizerCoverage callbacks an instrumented target binds to, as no-ops)
 * and linked with -rdynamic so dlopen() resolves the target's references
 * against them.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapfuzz/target.h"
#include "snapfuzz/banned.h"

#define BARE_EXIT_ERROR 2
/* Calls between two looks at the clock: cheap next to any target, and
 * frequent enough that a slow target does not overrun SECONDS by much. */
#define BARE_CLOCK_EVERY 256u

typedef struct BareInput {
        uint8_t *data;
        size_t len;
} BareInput;

static double bare_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads all of @path into an exactly sized malloc()ed buffer. Returns 0 or a negative errno. */
static int bare_read_file(const char *path, BareInput *ret)
{
        uint8_t *data = NULL;
        size_t size = 0, cap = 0;
        FILE *f;
        int r = 0;

        f = fopen(path, "rb");
        if (!f)
                return -errno;
        for (;;) {
                size_t n;

                if (size == cap) {
                        size_t ncap = cap ? cap * 2 : 4096;
                        uint8_t *p = realloc(data, ncap);

                        if (!p) {
                                r = -ENOMEM;
                                goto err_data;
                        }
                        data = p;
                        cap = ncap;
                }
                n = fread(data + size, 1, cap - size, f);
                size += n;
                if (n == 0) {
                        if (ferror(f)) {
                                r = -EIO;
                                goto err_data;
                        }
                        break;
                }
        }
        fclose(f);

        /* The exact size, as the fuzzers hand inputs over; never a zero-byte malloc. */
        if (size > 0 && size < cap) {
                uint8_t *p = realloc(data, size);

                if (p)
                        data = p;
        }
        ret->data = data;
        ret->len = size;
        return 0;

err_data:
        free(data);
        fclose(f);
        return r;
}

static void bare_inputs_free(BareInput *in, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(in[i].data);
        free(in);
}

/*
 * Loads every regular file of @dir. An empty directory gives one empty
 * input. Returns 0 or a negative errno, with the file at fault in @ret_bad.
 */
static int bare_load_dir(const char *dir, BareInput **ret_in, size_t *ret_n, const char **ret_bad)
{
        static char path[4096];
        BareInput *in = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        *ret_bad = dir;
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue; /* ., .. and temporary files of an atomic write */
                if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
                        continue;
                r = snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (r < 0 || (size_t)r >= sizeof(path)) {
                        *ret_bad = de->d_name;
                        r = -ENAMETOOLONG;
                        goto err_inputs;
                }
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 64;
                        BareInput *p = realloc(in, ncap * sizeof(*in));

                        if (!p) {
                                r = -ENOMEM;
                                goto err_inputs;
                        }
                        in = p;
                        cap = ncap;
                }
                r = bare_read_file(path, &in[n]);
                if (r < 0) {
                        *ret_bad = path;
                        goto err_inputs;
                }
                n++;
        }
        closedir(d);

        if (n == 0) {
                in = calloc(1, sizeof(*in));
                if (!in)
                        return -ENOMEM;
                n = 1;
        }
        *ret_in = in;
        *ret_n = n;
        return 0;

err_inputs:
        bare_inputs_free(in, n);
        closedir(d);
        return r;
}

int main(int argc, char **argv)
{
        static const uint8_t empty[1];
        TargetTestOneInput test_one;
        TargetInitialize init;
        BareInput *in = NULL;
        const char *bad;
        char path[4096];
        double seconds, start, now;
        uint64_t calls = 0;
        size_t n = 0, next = 0, bytes = 0;
        char *end;
        void *lib;
        int r;

        if (argc != 4) {
                fprintf(stderr, "usage: %s TARGET.so CORPUS_DIR SECONDS\n", argv[0]);
                return BARE_EXIT_ERROR;
        }
        seconds = strtod(argv[3], &end);
        if (*end != '\0' || !(seconds > 0)) {
                fprintf(stderr, "bare_loop: SECONDS must be a positive number, not '%s'\n",
                        argv[3]);
                return BARE_EXIT_ERROR;
        }

        r = bare_load_dir(argv[2], &in, &n, &bad);
        if (r < 0) {
                fprintf(stderr, "bare_loop: %s: %s\n", bad, strerror(-r));
                return BARE_EXIT_ERROR;
        }
        for (size_t i = 0; i < n; i++)
                bytes += in[i].len;

        /* A bare file name would make dlopen() search the library path. */
        r = snprintf(path, sizeof(path), "%s%s", strchr(argv[1], '/') ? "" : "./", argv[1]);
        if (r < 0 || (size_t)r >= sizeof(path)) {
                fprintf(stderr, "bare_loop: %s: path too long\n", argv[1]);
                goto err_inputs;
        }
        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
                fprintf(stderr, "bare_loop: %s\n", dlerror());
                goto err_inputs;
        }
        test_one = (TargetTestOneInput)dlsym(lib, TARGET_SYM_TEST);
        if (!test_one) {
                fprintf(stderr, "bare_loop: %s: no %s\n", argv[1], TARGET_SYM_TEST);
                goto err_inputs;
        }
        init = (TargetInitialize)dlsym(lib, TARGET_SYM_INIT);
        if (init)
                (void)init(&argc, &argv);

        start = bare_now();
        for (;;) {
                for (unsigned i = 0; i < BARE_CLOCK_EVERY; i++) {
                        const BareInput *x = &in[next];

                        /* Even an empty input comes with a valid pointer, as in libFuzzer. */
                        (void)test_one(x->len ? x->data : empty, x->len);
                        if (++next == n)
                                next = 0;
                }
                calls += BARE_CLOCK_EVERY;
                now = bare_now();
                if (now - start >= seconds)
                        break;
        }

        printf("calls %llu seconds %.3f calls_per_sec %.0f inputs %zu bytes %zu\n",
               (unsigned long long)calls, now - start, (double)calls / (now - start), n, bytes);
        bare_inputs_free(in, n);
        /* The library stays loaded: its destructors run at exit, as in a fuzzer. */
        return 0;

err_inputs:
        bare_inputs_free(in, n);
        return BARE_EXIT_ERROR;
}
