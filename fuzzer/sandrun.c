/*
 * The sandbox check before single-input runs (see sandrun.h). One worker
 * of this binary is started (the harness is the executable's own target,
 * WprocConfig.builtin) with the command line's limits and sandbox mode;
 * each input is one wproc_exec_quiet: a fresh runner forked from the
 * worker's snapshot, under the seccomp filter, whose death the worker
 * records with the stack. Only a death the engine classifies as `sandbox`
 * (recovery/classify.h) counts here; it is reported by fuzzer/sanreport.c
 * from a crash record made of the death, so the report is the one the
 * fuzzing path prints for the same crash. Every other ending is left to
 * the in-process run that follows, which sees it as libFuzzer would.
 *
 * Invariants: inputs are read once, before the worker starts; nothing the
 * target prints in the check is shown unless the sandbox stopped it; the
 * worker is stopped before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/msg.h"
#include "fuzzer/sandrun.h"
#include "fuzzer/sanreport.h"
#include "recovery/classify.h"
#include "worker/proto.h"
#include "worker/wproc.h"

#include "snapfuzz/banned.h"

typedef struct SandrunInput {
        uint8_t *data;
        size_t len;
} SandrunInput;

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
        wc->close_fd_mask = (unsigned)f->close_fd_mask;
}

/* Reports the sandbox's stop of @path (@died, classified @c). */
static void sandrun_report(const WprocConfig *wc, const char *path, const cJSON *died,
                           const Classification *c)
{
        const char *output = msg_str(died, "output", NULL);
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
        cJSON *crash = cJSON_CreateObject();
        cJSON *limits = cJSON_AddObjectToObject(crash, "limits");
        fprintf(stderr, "Running: %s\n", path);
        if (output)
                fputs(output, stderr);
        if (!crash || !limits) {
                cJSON_Delete(crash);
                fprintf(stderr, "==%d== ERROR: libFuzzer: deadly signal\nsnapfuzz: sandbox: %s\n",
                        (int)getpid(), c->message);
                return;
        }
        cJSON_AddStringToObject(crash, "kind", c->kind);
        cJSON_AddStringToObject(crash, "message", c->message);
        cJSON_AddNumberToObject(limits, "timeout_ms", wc->timeout_ms);
        cJSON_AddNumberToObject(limits, "rss_limit_mb", wc->rss_limit_mb);
        if (death)
                cJSON_AddItemToObject(crash, "stack", cJSON_Duplicate(death, 1));
        sanreport_symbolize(crash);
        sanreport_write(stderr, crash, (int)getpid());
        cJSON_Delete(crash);
}

/* One input in a sandboxed runner: 1 when the sandbox stopped it (after
 * the report), 0 otherwise, or a negative errno from the worker. */
static int sandrun_one(const WprocConfig *wc, Wproc *w, const char *path, const SandrunInput *in)
{
        cJSON *res = NULL;
        int r = wproc_exec_quiet(w, in->data, in->len, &res);
        if (r < 0)
                return r;
        r = 0;
        if (proto_is(res, PROTO_DIED)) {
                Classification c;
                classify_death(res, &c);
                if (!strcmp(c.kind, "sandbox")) {
                        sandrun_report(wc, path, res, &c);
                        r = 1;
                }
        }
        cJSON_Delete(res);
        return r;
}

int sandrun_check(const LfFlags *f, const char *prog)
{
        if (f->snapfuzz_sandbox && !strcmp(f->snapfuzz_sandbox, "off"))
                return 0;
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
        status = 0;
        for (int i = 0; i < f->n_inputs && status == 0; i++) {
                r = sandrun_one(&wc, w, f->inputs[i], &in[i]);
                if (r < 0) {
                        fprintf(stderr, "ERROR: snapfuzz: the worker failed running %s: %s\n",
                                f->inputs[i], strerror(-r));
                        status = 1;
                } else if (r > 0) {
                        status = (int)f->error_exitcode;
                }
        }
out:
        wproc_free(w);
        for (int i = 0; in && i < f->n_inputs; i++)
                free(in[i].data);
        free(in);
        return status;
}
