/*
 * libFuzzer's RunIndividualFiles, with snapfuzz's confinement. One worker
 * of this binary is started (the harness is the executable's own target,
 * WprocConfig.builtin) with the command line's limits and sandbox mode;
 * each run of each input is one wproc_exec: a fresh runner forked from the
 * worker's snapshot, under the seccomp filter, whose death the worker
 * records with the stack. A death is classified as the engine classifies
 * it (recovery/classify.h) and reported by fuzzer/sanreport.c from a crash
 * record made of the death, so the report is the one the fuzzing path
 * prints for the same crash.
 *
 * Invariants: inputs are read once, before the worker starts; the first
 * crash ends the runs (libFuzzer's process would be dead); what the target
 * printed is shown after its run (the last 4 KiB of it: the worker keeps a
 * tail), a sanitizer's report whole, with its frames symbolized.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/msg.h"
#include "fuzzer/sandrun.h"
#include "fuzzer/sanreport.h"
#include "recovery/classify.h"
#include "worker/proto.h"
#include "worker/wproc.h"

#include "snapfuzz/banned.h"

#define SANDRUN_OOM_EXITCODE 71

typedef struct SandrunInput {
        uint8_t *data;
        size_t len;
} SandrunInput;

static long sandrun_ms_since(const struct timespec *t0)
{
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (long)(t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Reads every input (truncated to -max_len when it is set, as libFuzzer
 * does); the longest length goes to *ret_max. 0 or 1 after one line. */
static int sandrun_load(const LfFlags *f, SandrunInput *in, size_t *ret_max)
{
        *ret_max = 1;
        for (int i = 0; i < f->n_inputs; i++) {
                int r = fs_read_file(AT_FDCWD, f->inputs[i], 1u << 30, &in[i].data, &in[i].len);
                if (r < 0) {
                        fprintf(stderr, "ERROR: cannot read %s: %s\n", f->inputs[i], strerror(-r));
                        return 1;
                }
                if (f->max_len > 0 && in[i].len > (size_t)f->max_len)
                        in[i].len = (size_t)f->max_len;
                if (in[i].len > *ret_max)
                        *ret_max = in[i].len;
        }
        return 0;
}

static void sandrun_config(const LfFlags *f, const char *prog, size_t max_len, WprocConfig *wc)
{
        memset(wc, 0, sizeof(*wc));
        wc->builtin = true;
        wc->target = prog;
        wc->max_len = max_len;
        wc->timeout_ms = f->timeout > 0 ? (unsigned)f->timeout * 1000u : 0;
        wc->rss_limit_mb = f->rss_limit_mb > 0 ? (unsigned)f->rss_limit_mb : 0;
        wc->malloc_limit_mb =
            (unsigned)(f->malloc_limit_mb > 0 ? f->malloc_limit_mb : wc->rss_limit_mb);
        wc->sandbox = f->snapfuzz_sandbox ? f->snapfuzz_sandbox : "strict";
        wc->cov_fd = -1;
        wc->detect_leaks = f->detect_leaks > 0;
        wc->close_fd_mask = (unsigned)f->close_fd_mask;
}

static bool sandrun_is_sanitizer(const char *kind)
{
        return !strcmp(kind, "asan") || !strcmp(kind, "ubsan") || !strcmp(kind, "msan") ||
               !strcmp(kind, "leak");
}

/* Reports the death @died; returns the exit status for it. */
static int sandrun_report(const LfFlags *f, const WprocConfig *wc, const cJSON *died)
{
        Classification c;
        classify_death(died, &c);
        const char *report = msg_str(died, "sanitizer_report", NULL);
        if (sandrun_is_sanitizer(c.kind) && report) {
                /* The sanitizer's own report, its frames symbolized (it
                 * runs without a symbolizer in the sandbox). */
                fprintf(stderr, "==================================================="
                                "==============\n");
                sanreport_put_text(stderr, report);
        } else {
                const char *output = msg_str(died, "output", NULL);
                cJSON *crash = cJSON_CreateObject();
                cJSON *limits = cJSON_AddObjectToObject(crash, "limits");
                const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
                if (output)
                        fputs(output, stderr);
                if (!crash || !limits) {
                        cJSON_Delete(crash);
                        return (int)f->error_exitcode;
                }
                cJSON_AddStringToObject(crash, "kind", c.kind);
                cJSON_AddStringToObject(crash, "message", c.message);
                cJSON_AddNumberToObject(limits, "timeout_ms", wc->timeout_ms);
                cJSON_AddNumberToObject(limits, "rss_limit_mb", wc->rss_limit_mb);
                if (death)
                        cJSON_AddItemToObject(crash, "stack", cJSON_Duplicate(death, 1));
                sanreport_symbolize(crash);
                sanreport_write(stderr, crash, (int)getpid());
                cJSON_Delete(crash);
        }
        if (!strcmp(c.kind, "timeout"))
                return (int)f->timeout_exitcode;
        if (!strcmp(c.kind, "oom"))
                return SANDRUN_OOM_EXITCODE;
        return (int)f->error_exitcode;
}

/* Runs one input @runs times; 0, an exit status after a crash report, or
 * a negative errno from the worker. */
static int sandrun_one(const LfFlags *f, const WprocConfig *wc, Wproc *w, const char *path,
                       const SandrunInput *in, long runs)
{
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        fprintf(stderr, "Running: %s\n", path);
        for (long k = 0; k < runs; k++) {
                cJSON *res = NULL;
                int r = f->detect_leaks > 0 && wproc_leaks(w)
                            ? wproc_exec_leak_check(w, in->data, in->len, 1, &res)
                            : wproc_exec_quiet(w, in->data, in->len, &res);
                if (r < 0)
                        return r;
                const char *output = msg_str(res, "output", NULL);
                if (output && !proto_is(res, PROTO_DIED))
                        fputs(output, stderr);
                if (proto_is(res, PROTO_DIED)) {
                        r = sandrun_report(f, wc, res);
                        cJSON_Delete(res);
                        return r;
                }
                cJSON_Delete(res);
        }
        fprintf(stderr, "Executed %s in %ld ms\n", path, sandrun_ms_since(&t0));
        return 0;
}

int sandrun_files(const LfFlags *f, const char *prog)
{
        SandrunInput *in = calloc((size_t)f->n_inputs, sizeof(*in));
        Wproc *w = NULL;
        WprocConfig wc;
        size_t max_len;
        char err[1024];
        int status = 1;
        if (!in || sandrun_load(f, in, &max_len))
                goto out;
        sandrun_config(f, prog, max_len, &wc);
        int r = wproc_spawn(&w, &wc, err, sizeof(err));
        if (r < 0) {
                fprintf(stderr, "ERROR: snapfuzz: cannot start a worker of %s: %s\n", prog, err);
                goto out;
        }
        long runs = f->runs > 1 ? f->runs : 1;
        fprintf(stderr, "%s: Running %d inputs %ld time(s) each.\n", prog, f->n_inputs, runs);
        status = 0;
        for (int i = 0; i < f->n_inputs && status == 0; i++) {
                r = sandrun_one(f, &wc, w, f->inputs[i], &in[i], runs);
                if (r < 0) {
                        fprintf(stderr, "ERROR: snapfuzz: the worker failed running %s: %s\n",
                                f->inputs[i], strerror(-r));
                        status = 1;
                } else {
                        status = r;
                }
        }
        if (status == 0)
                fprintf(stderr, "***\n"
                                "*** NOTE: fuzzing was not performed, you have only\n"
                                "***       executed the target code on a fixed set of inputs.\n"
                                "***\n");
out:
        wproc_free(w);
        for (int i = 0; in && i < f->n_inputs; i++)
                free(in[i].data);
        free(in);
        return status;
}
