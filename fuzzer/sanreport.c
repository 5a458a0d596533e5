/*
 * Crash reports for the drop-in runtime, in the text ClusterFuzz's stack
 * parser (src/clusterfuzz/stacktraces/) turns into a crash type and state.
 * The input is a crash record as the crash store keeps it (crash.json:
 * kind, message, the stored target output, the death's stack with
 * symbolized frames, the blocked syscall); the output imitates what
 * libFuzzer or the sanitizer would have printed for the same ending, so
 * that a crash found by snapfuzz gets the bucket it would get under
 * libFuzzer, and a sandbox violation (an ending libFuzzer cannot have) the
 * extra-sanitizer type ClusterFuzz already files as a security bug.
 *
 * Invariants: everything taken from the record that is not the target's
 * own sanitizer report goes through termsafe (a record is untrusted input,
 * and function names come from the target's debug info); nothing here
 * allocates more than a line on the stack; the report's first line is
 * always one of ClusterFuzz's crash start markers.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/termsafe.h"
#include "recovery/sanstack.h"
#include "recovery/symbolize.h"
#include "fuzzer/sanreport.h"

#include "snapfuzz/banned.h"

#define SANREPORT_LINE 4096
/* A crash.json larger than this is not read (the output it keeps is capped
 * well below). */
#define SANREPORT_MAX_RECORD (16u << 20)

static const char *sanreport_str(const cJSON *o, const char *key)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *sanreport_stror(const cJSON *o, const char *key, const char *dflt)
{
        const char *s = sanreport_str(o, key);
        return s ? s : dflt;
}

static double sanreport_num(const cJSON *o, const char *key, double dflt)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int sanreport_frame(char *buf, size_t cap, int n, const cJSON *frame)
{
        return sanstack_frame(buf, cap, n, frame);
}

int sanreport_put_text(FILE *out, const char *text)
{
        return sanstack_put_text(out, text, false);
}

const char *sanreport_sandbox_bug(const char *syscall)
{
        static const char *const exec_calls[] = {"execve", "execveat", NULL};
        static const char *const open_calls[] = {"open", "openat", "openat2", "creat", NULL};
        if (!syscall)
                return NULL;
        for (int i = 0; exec_calls[i]; i++)
                if (!strcmp(syscall, exec_calls[i]))
                        return "Shell injection";
        for (int i = 0; open_calls[i]; i++)
                if (!strcmp(syscall, open_calls[i]))
                        return "Arbitrary file open";
        return NULL;
}

/* The frames of the death's stack, up to and including the harness's entry
 * point; all of them when it is not among them. */
static void sanreport_frames(FILE *out, const cJSON *crash)
{
        const cJSON *stack = cJSON_GetObjectItemCaseSensitive(crash, "stack");
        const cJSON *frames = cJSON_GetObjectItemCaseSensitive(stack, "frames");
        const cJSON *f;
        int n = 0;
        cJSON_ArrayForEach(f, frames)
        {
                sanstack_put_frame(out, n++, f);
                const char *fn = sanreport_stror(f, "function", sanreport_str(f, "symbol"));
                if (fn && !strcmp(fn, "LLVMFuzzerTestOneInput"))
                        break;
        }
        if (!n)
                fprintf(out, "    (no stack: the process died before it could be read)\n");
        fprintf(out, "\n");
}

/* A libFuzzer-style report: "==PID== ERROR: libFuzzer: WHAT", the
 * frames, "SUMMARY: libFuzzer: SUMMARY". */
static void sanreport_libfuzzer(FILE *out, const cJSON *crash, int pid, const char *what,
                                const char *summary)
{
        fprintf(out, "==%d== ERROR: libFuzzer: %s\n", pid, what);
        sanreport_frames(out, crash);
        fprintf(out, "SUMMARY: libFuzzer: %s\n", summary);
}

/* The target's stored output when it holds a sanitizer's report. */
static const char *sanreport_sanitizer_output(const cJSON *crash)
{
        const char *output = sanreport_str(crash, "output");
        if (!output || !strstr(output, "Sanitizer"))
                return NULL;
        return output;
}

static void sanreport_sandbox(FILE *out, const cJSON *crash, int pid)
{
        const cJSON *stack = cJSON_GetObjectItemCaseSensitive(crash, "stack");
        const char *syscall = sanreport_str(stack, "syscall_name");
        const char *bug = sanreport_sandbox_bug(syscall);
        char msg[SANREPORT_LINE];
        if (bug)
                fprintf(out, "===BUG DETECTED: %s===\n", bug);
        termsafe_str(msg, sizeof(msg), sanreport_stror(crash, "message", "a blocked syscall"), 800);
        fprintf(out, "snapfuzz: sandbox: %s\n", msg);
        sanreport_libfuzzer(out, crash, pid, "deadly signal", "deadly signal");
}

int sanreport_write(FILE *out, const cJSON *crash, int pid)
{
        const char *kind = sanreport_stror(crash, "kind", "signal");
        const char *san = sanreport_sanitizer_output(crash);
        char what[256];
        if (san && (!strcmp(kind, "asan") || !strcmp(kind, "ubsan") || !strcmp(kind, "msan") ||
                    !strcmp(kind, "leak"))) {
                sanstack_put_text(out, san, false);
        } else if (!strcmp(kind, "sandbox")) {
                sanreport_sandbox(out, crash, pid);
        } else if (!strcmp(kind, "timeout")) {
                const cJSON *limits = cJSON_GetObjectItemCaseSensitive(crash, "limits");
                long ms = (long)sanreport_num(limits, "timeout_ms", 0);
                snprintf(what, sizeof(what), "timeout after %ld seconds", (ms + 999) / 1000);
                sanreport_libfuzzer(out, crash, pid, what, "timeout");
        } else if (!strcmp(kind, "oom")) {
                const cJSON *limits = cJSON_GetObjectItemCaseSensitive(crash, "limits");
                long mb = (long)sanreport_num(limits, "rss_limit_mb", 0);
                snprintf(what, sizeof(what), "out-of-memory (limit: %ldMb)", mb);
                sanreport_libfuzzer(out, crash, pid, what, "out-of-memory");
        } else if (!strcmp(kind, "exit")) {
                sanreport_libfuzzer(out, crash, pid, "fuzz target exited", "fuzz target exited");
        } else if (!strcmp(kind, "overwrite-input")) {
                sanreport_libfuzzer(out, crash, pid, "fuzz target overwrites its const input",
                                    "overwrites-const-input");
        } else if (!strcmp(kind, "file-size")) {
                sanreport_libfuzzer(out, crash, pid, "file size exceeded", "file size exceeded");
        } else {
                sanreport_libfuzzer(out, crash, pid, "deadly signal", "deadly signal");
        }
        fflush(out);
        return ferror(out) ? -EIO : 0;
}

/* Frames of the drop-in binary itself (its workers are this binary
 * re-executed under another argv[0], so their frames name a module without
 * a path) are looked up in this binary: the path becomes /proc/self/exe's
 * target, and every frame the symbolizer can describe gets its function
 * and file:line. */
void sanreport_symbolize(cJSON *crash)
{
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        cJSON *stack = cJSON_GetObjectItemCaseSensitive(crash, "stack");
        cJSON *frames = cJSON_GetObjectItemCaseSensitive(stack, "frames");
        cJSON *f;
        if (!cJSON_IsArray(frames) || n <= 0)
                return;
        self[n] = '\0';
        cJSON_ArrayForEach(f, frames)
        {
                const char *path = sanreport_str(f, "path");
                if (path && !strchr(path, '/')) {
                        cJSON_DeleteItemFromObjectCaseSensitive(f, "path");
                        cJSON_AddStringToObject(f, "path", self);
                }
        }
        /* One symbolizer run gives the frames' locations and what was
         * inlined into them (starting it is most of a report's time). */
        symbolize_frames_inlined(frames);
}

int sanreport_write_dir(FILE *out, const char *crash_dir, int pid)
{
        char path[4200];
        uint8_t *json = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/crash.json", crash_dir);
        int r = fs_read_file(AT_FDCWD, path, SANREPORT_MAX_RECORD, &json, &len);
        if (r < 0)
                return r;
        cJSON *crash = cJSON_ParseWithLength((const char *)json, len);
        free(json);
        if (!crash)
                return -EINVAL;
        sanreport_symbolize(crash);
        r = sanreport_write(out, crash, pid);
        cJSON_Delete(crash);
        return r;
}
