/*
 * plainrun: runs inputs through a target, outside snapfuzz.
 *
 *     plainrun TARGET.so INPUT_FILE...
 *
 * Several inputs run in order in the one process, each once: a
 * state-dependent crash's sequence/ files replayed without snapfuzz.
 * Tests use it as an independent witness that a stored crash input really
 * crashes the target: no fork server, no sandbox, no replay record, only
 * dlopen(), LLVMFuzzerInitialize when the target has one, and one call to
 * LLVMFuzzerTestOneInput per input. The exit status is 0 when every call returns;
 * a crashing input ends the process by the target's own signal or exit().
 * Problems of plainrun's own (usage, loading, reading) exit with
 * PLAINRUN_EXIT_ERROR and a message on stderr.
 *
 * An instrumented target needs the SanitizerCoverage callbacks from the
 * program that loads it: tests/sancov_noop.c defines every one of them as a
 * no-op, and plainrun is linked with -rdynamic so dlopen() resolves the
 * target's references against them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapfuzz/target.h"
#include "snapfuzz/banned.h"

#define PLAINRUN_EXIT_ERROR 2

/* Reads all of @path into a malloc()ed buffer. Returns 0 or a negative errno. */
static int read_file(const char *path, uint8_t **ret_data, size_t *ret_size)
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

        /*
         * Shrink to the exact size, as libFuzzer's copy is, so a target that
         * reads one byte too far reads past the allocation.
         */
        if (size > 0 && size < cap) {
                uint8_t *p = realloc(data, size);

                if (p)
                        data = p;
        }
        *ret_data = data;
        *ret_size = size;
        return 0;

err_data:
        free(data);
        fclose(f);
        return r;
}

/* The target wrote into its const input (libFuzzer reports the same). */
#define PLAINRUN_EXIT_OVERWRITE 98

int main(int argc, char **argv)
{
        TargetTestOneInput test_one;
        TargetInitialize init;
        char path[4096];
        void *lib;
        int r;

        if (argc < 3) {
                fprintf(stderr,
                        "usage: %s TARGET.so INPUT_FILE...\n"
                        "runs the inputs in order, in one process\n",
                        argv[0]);
                return PLAINRUN_EXIT_ERROR;
        }

        /* A bare file name would make dlopen() search the library path. */
        if (strchr(argv[1], '/'))
                r = snprintf(path, sizeof(path), "%s", argv[1]);
        else
                r = snprintf(path, sizeof(path), "./%s", argv[1]);
        if (r < 0 || (size_t)r >= sizeof(path)) {
                fprintf(stderr, "plainrun: %s: path too long\n", argv[1]);
                return PLAINRUN_EXIT_ERROR;
        }

        lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
                fprintf(stderr, "plainrun: %s\n", dlerror());
                return PLAINRUN_EXIT_ERROR;
        }
        test_one = (TargetTestOneInput)dlsym(lib, TARGET_SYM_TEST);
        if (!test_one) {
                fprintf(stderr, "plainrun: %s: no %s\n", argv[1], TARGET_SYM_TEST);
                return PLAINRUN_EXIT_ERROR;
        }
        init = (TargetInitialize)dlsym(lib, TARGET_SYM_INIT);
        if (init) {
                /* libFuzzer passes its own argv; the target sees plainrun's. */
                int iargc = 2;
                char **iargv = argv;
                (void)init(&iargc, &iargv);
        }

        /* Several inputs run in order in this one process: that is how a
         * state-dependent crash's sequence is replayed. */
        for (int i = 2; i < argc; i++) {
                uint8_t *data = NULL, *copy;
                size_t size = 0;
                r = read_file(argv[i], &data, &size);
                if (r < 0) {
                        fprintf(stderr, "plainrun: %s: %s\n", argv[i], strerror(-r));
                        return PLAINRUN_EXIT_ERROR;
                }
                copy = malloc(size ? size : 1);
                if (!copy)
                        return PLAINRUN_EXIT_ERROR;
                memcpy(copy, data, size);
                /* Even an empty input comes with a valid pointer, as in libFuzzer. */
                (void)test_one(data, size);
                if (memcmp(copy, data, size) != 0) {
                        fprintf(stderr, "plainrun: the target wrote into its const input\n");
                        return PLAINRUN_EXIT_OVERWRITE;
                }
                free(copy);
                free(data);
        }
        /* The library stays loaded: its destructors run at exit, as in a fuzzer. */
        return 0;
}
