/*
 * Every file is read (and its length checked) before the worker starts, so
 * a missing or unreadable file is a usage error before anything runs, as
 * the command line promises. Each execution gets a runner forked for it
 * (wproc_exec): state left by one input never reaches the next, and a
 * crash costs one fork. With leak detection on (and a target that has
 * LeakSanitizer) each input is checked after it returns, as libFuzzer's
 * RunOneTest does. The verdict comes from the runner's death alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/termsafe.h"
#include "engine/reproduce.h"
#include "engine/runinputs.h"
#include "worker/proto.h"
#include "worker/wproc.h"

#include "snapfuzz/banned.h"

typedef struct Input {
        uint8_t *data;
        size_t len;
        bool cut; /* longer than max_len */
} Input;

/* Reads every file; the longest length in *@ret_max. 0 or -errno after a
 * line. */
static int read_inputs(const SfRunConfig *cfg, char *const *files, int n, Input *in,
                       size_t *ret_max)
{
        size_t limit = cfg->max_len ? cfg->max_len : RECORD_MAX_LEN_LIMIT;
        char shown[TERMSAFE_BUF];
        *ret_max = 1;
        for (int i = 0; i < n; i++) {
                struct stat st;
                int r = stat(files[i], &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? -EISDIR : 0;
                if (r == 0 && !cfg->max_len && (uint64_t)st.st_size > limit)
                        r = -EFBIG;
                if (r == 0)
                        r = fs_read_file(AT_FDCWD, files[i], (size_t)st.st_size + limit,
                                         &in[i].data, &in[i].len);
                if (r < 0) {
                        termsafe_str(shown, sizeof(shown), files[i], 512);
                        if (r == -EFBIG)
                                log_error("%s is longer than %u bytes, the longest input snapfuzz "
                                          "runs; give --max-len N to run its first N bytes",
                                          shown, RECORD_MAX_LEN_LIMIT);
                        else
                                log_error("%s: %s", shown, strerror(-r));
                        return r;
                }
                in[i].cut = in[i].len > limit;
                if (in[i].cut)
                        in[i].len = limit;
                if (in[i].len > *ret_max)
                        *ret_max = in[i].len;
        }
        return 0;
}

/* Runs one input once: 1 when it crashed (after its report), 0 when not,
 * or wproc's error. */
static int run_once(Wproc *w, const SfRunConfig *cfg, const char *file, const Input *in)
{
        cJSON *ev = NULL;
        char shown[TERMSAFE_BUF];
        int64_t t0 = clock_now_ms();
        int r = cfg->detect_leaks && wproc_leaks(w)
                    ? wproc_exec_leak_check(w, in->data, in->len, 0, &ev)
                    : wproc_exec(w, in->data, in->len, &ev);
        if (r < 0) {
                log_error("the worker failed while running %s: %s",
                          termsafe_str(shown, sizeof(shown), file, 512), strerror(-r));
                return r;
        }
        termsafe_str(shown, sizeof(shown), file, 512);
        if (!proto_is(ev, PROTO_DIED)) {
                printf("%s: ok (%zu bytes, %lld ms)\n", shown, in->len,
                       (long long)(clock_now_ms() - t0));
                cJSON_Delete(ev);
                return 0;
        }
        Classification c;
        printf("%s: CRASH: ", shown);
        reproduce_print_death(ev, &c);
        cJSON_Delete(ev);
        return 1;
}

/* The worker for @cfg's target, with room for @max_len bytes. */
static int start_worker(const SfRunConfig *cfg, size_t max_len, Wproc **ret)
{
        char err[1024], shown[TERMSAFE_BUF];
        WprocConfig wc = {
            .target = cfg->target_abs,
            .max_len = max_len,
            .timeout_ms = cfg->timeout_ms,
            .rss_limit_mb = cfg->rss_limit_mb,
            .malloc_limit_mb = cfg->malloc_limit_mb,
            .sandbox = cfg->sandbox ? cfg->sandbox : "strict",
            .cov_fd = -1,
            .detect_leaks = cfg->detect_leaks,
            .sandbox_policy = cfg->sandbox_policy,
            .close_fd_mask = cfg->close_fd_mask,
        };
        int r = wproc_spawn(ret, &wc, err, sizeof(err));
        if (r < 0) {
                log_error("%s: %s", termsafe_str(shown, sizeof(shown), cfg->target, 512), err);
                return r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED || r == WPROC_ERR_TIMEOUT
                           ? -ENOEXEC
                           : r;
        }
        return 0;
}

int runinputs_run(const SfRunConfig *cfg, char *const *files, int n_files)
{
        Input *in = calloc(n_files > 0 ? (size_t)n_files : 1, sizeof(*in));
        Wproc *w = NULL;
        size_t max_len, crashed = 0, ran = 0;
        uint64_t runs = cfg->runs > 1 ? cfg->runs : 1;

        if (!in)
                return -ENOMEM;
        int r = read_inputs(cfg, files, n_files, in, &max_len);
        if (r == 0)
                r = start_worker(cfg, max_len, &w);
        if (r == 0)
                printf("running %d input%s %llu time%s each (sandbox %s)\n", n_files,
                       n_files == 1 ? "" : "s", (unsigned long long)runs, runs == 1 ? "" : "s",
                       cfg->sandbox ? cfg->sandbox : "strict");
        for (int i = 0; r == 0 && i < n_files && (!crashed || cfg->keep_going); i++) {
                if (in[i].cut)
                        log_warn("%s: only its first %zu bytes run (--max-len)", files[i],
                                 in[i].len);
                int c = 0;
                for (uint64_t k = 0; c == 0 && k < runs; k++)
                        c = run_once(w, cfg, files[i], &in[i]);
                if (c < 0)
                        r = c;
                crashed += c == 1;
                ran++;
        }
        if (r == 0)
                printf("ran %zu of %d input%s: %zu crashed\n", ran, n_files,
                       n_files == 1 ? "" : "s", crashed);
        wproc_free(w);
        for (int i = 0; i < n_files; i++)
                free(in[i].data);
        free(in);
        if (r < 0)
                return r;
        return crashed ? ENGINE_RUN_CRASHED : ENGINE_RUN_CLEAN;
}
