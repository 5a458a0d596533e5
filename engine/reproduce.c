/*
 * Reproduction reads crash.json only for what it needs to rebuild the
 * conditions (target, sandbox, limits); the verdict comes from running the
 * stored bytes again, never from the stored report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/reproduce.h"
#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "worker/wproc.h"
#include "recovery/classify.h"
#include "recovery/replay.h"
#include "recovery/symbolize.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

static void print_hexdump(const uint8_t *data, size_t len, size_t limit)
{
        size_t n = len < limit ? len : limit;
        for (size_t off = 0; off < n; off += 16) {
                printf("  %08zx ", off);
                for (size_t i = 0; i < 16; i++) {
                        if (off + i < n)
                                printf(" %02x", data[off + i]);
                        else
                                printf("   ");
                }
                printf("  |");
                for (size_t i = 0; i < 16 && off + i < n; i++) {
                        uint8_t b = data[off + i];
                        putchar(b >= 0x20 && b < 0x7f ? b : '.');
                }
                printf("|\n");
        }
        if (n < len)
                printf("  ... %zu more bytes\n", len - n);
}

static void print_stack(cJSON *death)
{
        cJSON *frames = death ? cJSON_GetObjectItemCaseSensitive(death, "frames") : NULL;
        const cJSON *f;
        int i = 0;
        symbolize_frames(frames, false);
        cJSON_ArrayForEach(f, frames)
        {
                const char *fn = msg_str(f, "function", msg_str(f, "symbol", "??"));
                const char *file = msg_str(f, "file", NULL);
                char where[1200] = "";
                if (file)
                        snprintf(where, sizeof(where), " %s:%d", file, (int)msg_int(f, "line", 0));
                printf("  #%-2d %s in %s%s (%s+%s)%s\n", i++, msg_str(f, "pc", "?"), fn, where,
                       msg_str(f, "module", "?"), msg_str(f, "offset", "?"),
                       classify_frame_is_runtime(f) ? "  [runtime]" : "");
        }
        if (i == 0)
                printf("  (no stack: the runner had no chance to unwind)\n");
}

/* A state-dependent crash is replayed from its stored record: the same
 * batch, running iterations first..last in one runner. Returns 0 and the
 * record in *ret_region (layout in *ret_layout), or an SF_EXIT_* code. */
static int load_history(const ReproduceConfig *cfg, const cJSON *st, uint8_t **ret_region,
                        RecordLayout *ret_layout)
{
        char path[4096];
        uint8_t *rec;
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/record", cfg->out_dir, cfg->id);
        int r = fs_read_file(AT_FDCWD, path, RECORD_MAX_LEN_LIMIT * 3u, &rec, &len);
        if (r < 0) {
                log_error("the crash is state-dependent but %s cannot be read (%s); the crash "
                          "record is incomplete",
                          path, strerror(-r));
                return SF_EXIT_USAGE;
        }
        const RecordHeader *h = (const RecordHeader *)rec;
        uint64_t last = (uint64_t)msg_int(st, "last", 0);
        if (len < sizeof(RecordHeader) || record_layout(h->max_len, ret_layout) < 0 ||
            len != ret_layout->record_size || record_validate(rec, ret_layout) != RECORD_OK ||
            last == 0 || last > h->iters) {
                log_error("%s is not a valid replay record; the crash record is corrupt", path);
                free(rec);
                return SF_EXIT_USAGE;
        }
        *ret_region = rec;
        return 0;
}

int reproduce_run(const ReproduceConfig *cfg)
{
        cJSON *report = NULL, *result = NULL;
        char *policy = NULL;
        uint8_t *input = NULL;
        size_t len = 0;
        char err[1024];
        Wproc *w = NULL;
        uint8_t *history = NULL;
        int code;

        int r = crashstore_load(cfg->out_dir, cfg->id, &report, &input, &len, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return SF_EXIT_USAGE;
        }
        const char *target = cfg->target ? cfg->target : msg_str(report, "target", "");
        struct stat st;
        if (stat(target, &st) < 0) {
                log_error("the target %s named in the crash record is gone (%s); point to it "
                          "with --target PATH",
                          target, strerror(errno));
                code = SF_EXIT_USAGE;
                goto out;
        }
        const cJSON *limits = cJSON_GetObjectItemCaseSensitive(report, "limits");
        int64_t max_len = msg_int(limits, "max_len", 0);
        const cJSON *state = cJSON_GetObjectItemCaseSensitive(report, "state_dependent");
        RecordLayout hl;
        if (state) {
                code = load_history(cfg, state, &history, &hl);
                if (code)
                        goto out;
                max_len = (int64_t)hl.max_len;
        }
        /* The policy in force when the crash was found travels in
         * crash.json, so the policy file need not exist any more. */
        const cJSON *sandbox = cJSON_GetObjectItemCaseSensitive(report, "sandbox");
        const cJSON *stored_policy = cJSON_GetObjectItemCaseSensitive(sandbox, "policy");
        if (cJSON_IsObject(stored_policy)) {
                policy = cJSON_PrintUnformatted(stored_policy);
                if (!policy) {
                        code = SF_EXIT_INTERNAL;
                        goto out;
                }
        }
        /* A leak shows only when LeakSanitizer checks after the input. */
        bool is_leak = strcmp(msg_str(report, "kind", ""), "leak") == 0;
        WprocConfig wc = {
            .target = target,
            .max_len = (size_t)(max_len > (int64_t)len ? max_len : (int64_t)(len ? len : 1)),
            .timeout_ms =
                cfg->timeout_ms ? cfg->timeout_ms : (unsigned)msg_int(limits, "timeout_ms", 1000),
            .rss_limit_mb = (unsigned)msg_int(limits, "rss_limit_mb", 2048),
            .malloc_limit_mb = (unsigned)msg_int(limits, "malloc_limit_mb", 0),
            .sandbox = msg_str(limits, "sandbox", "strict"),
            .sandbox_policy = policy,
            .cov_fd = -1,
            .detect_leaks = is_leak,
        };
        r = wproc_spawn(&w, &wc, err, sizeof(err));
        if (r < 0) {
                log_error("%s: %s", target, err);
                code = r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED ? SF_EXIT_USAGE
                                                                     : SF_EXIT_INTERNAL;
                goto out;
        }
        if (history) {
                WprocBatch b;
                uint64_t first = (uint64_t)msg_int(state, "first", 1);
                uint64_t last = (uint64_t)msg_int(state, "last", 1);
                printf("state-dependent: replaying %llu inputs (iterations %llu..%llu of the "
                       "batch) in one runner\n",
                       (unsigned long long)(last - first + 1), (unsigned long long)first,
                       (unsigned long long)last);
                replay_history_batch(history, &hl, first, last, &b);
                r = wproc_run_batch(w, &b, &result);
        } else if (is_leak) {
                r = wproc_exec_leak_check(w, input, len, 0, &result);
        } else {
                r = wproc_exec(w, input, len, &result);
        }
        if (r < 0) {
                log_error("the worker failed while running the input: %s", strerror(-r));
                code = SF_EXIT_INTERNAL;
                goto out;
        }

        printf("crash %s: %s\n", cfg->id, msg_str(report, "message", ""));
        printf("  target   %s\n", target);
        printf("  stored   kind %s, signature %s\n", msg_str(report, "kind", "?"),
               msg_str(report, "signature", "?"));
        printf("  input    %zu bytes (%s/crashes/%s/input)\n", len, cfg->out_dir, cfg->id);
        if (msg_int(report, "minimized_len", -1) >= 0)
                printf("  minimized %lld bytes (%s/crashes/%s/minimized)\n",
                       (long long)msg_int(report, "minimized_len", 0), cfg->out_dir, cfg->id);
        printf("  sandbox  %s%s\n", wc.sandbox,
               policy ? ", with the policy stored in crash.json" : "");
        print_hexdump(input, len, 256);

        if (strcmp(msg_str(result, "type", ""), "died") == 0) {
                Classification c;
                classify_death(result, &c);
                printf("\nREPRODUCED: %s — %s\n", c.kind, c.message);
                if (cJSON_GetObjectItemCaseSensitive(result, "signal")) {
                        int sig = (int)msg_int(result, "signal", 0);
                        const char *abbrev = sigabbrev_np(sig);
                        printf("  signal   %d (SIG%s)\n", sig, abbrev ? abbrev : "?");
                } else if (strcmp(c.kind, "leak") == 0) {
                        printf("  check    LeakSanitizer, after the input returned; the stack "
                               "is where the lost memory was allocated\n");
                } else if (cJSON_GetObjectItemCaseSensitive(result, "exit_code")) {
                        printf("  status   exit %d\n", (int)msg_int(result, "exit_code", 0));
                }
                if (strcmp(c.kind, msg_str(report, "kind", "")) != 0)
                        printf("  note     stored as %s, now %s\n", msg_str(report, "kind", "?"),
                               c.kind);
                printf("  stack:\n");
                print_stack(cJSON_GetObjectItemCaseSensitive(result, "death"));
                code = SF_EXIT_CRASH;
        } else {
                printf("\nNOT REPRODUCED: the input ran to completion; the bug looks fixed "
                       "(stored as %s)\n",
                       msg_str(report, "kind", "?"));
                code = SF_EXIT_OK;
        }
out:
        free(history);
        wproc_free(w);
        cJSON_Delete(result);
        cJSON_Delete(report);
        cJSON_free(policy);
        free(input);
        return code;
}
