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

int sanreport_frame(char *buf, size_t cap, int n, const cJSON *frame)
{
        char pc[80], fn[1024], file[1700], mod[1700], off[80];
        termsafe_str(pc, sizeof(pc), sanreport_stror(frame, "pc", "0x0"), 32);
        termsafe_str(fn, sizeof(fn), sanreport_stror(frame, "function", ""), 200);
        termsafe_str(file, sizeof(file), sanreport_stror(frame, "file", ""), 400);
        termsafe_str(mod, sizeof(mod), sanreport_stror(frame, "path", ""), 400);
        termsafe_str(off, sizeof(off), sanreport_stror(frame, "offset", "0x0"), 32);
        /* A name with a space would end the frame early in the parser's
         * "in FUNC FILE:LINE" form: C++ names with arguments keep theirs
         * in the module form, which has no file. */
        double line = sanreport_num(frame, "line", 0);
        if (fn[0] && file[0] && line > 0 && !strchr(fn, ' '))
                return snprintf(buf, cap, "    #%d %s in %s %s:%d", n, pc, fn, file, (int)line);
        if (!fn[0])
                termsafe_str(fn, sizeof(fn), sanreport_stror(frame, "symbol", ""), 200);
        if (fn[0])
                return snprintf(buf, cap, "    #%d %s in %s (%s+%s)", n, pc, fn, mod, off);
        return snprintf(buf, cap, "    #%d %s (%s+%s)", n, pc, mod, off);
}

/* Frame @n of a stack, with the functions inlined into it first (each a
 * line of the same number, innermost first, as sanitizers print them). */
static void sanreport_put_frame(FILE *out, int n, const cJSON *frame)
{
        char line[SANREPORT_LINE];
        const cJSON *inl = cJSON_GetObjectItemCaseSensitive(frame, "inlined");
        const cJSON *e;
        cJSON_ArrayForEach(e, inl)
        {
                char fn[1024], file[1700], pc[80];
                double ln = sanreport_num(e, "line", 0);
                termsafe_str(fn, sizeof(fn), sanreport_stror(e, "function", "??"), 200);
                termsafe_str(file, sizeof(file), sanreport_stror(e, "file", "??"), 400);
                termsafe_str(pc, sizeof(pc), sanreport_stror(frame, "pc", "0x0"), 32);
                if (strchr(fn, ' '))
                        continue;
                fprintf(out, "    #%d %s in %s %s:%d\n", n, pc, fn, file, (int)ln);
        }
        sanreport_frame(line, sizeof(line), n, frame);
        fprintf(out, "%s\n", line);
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
                sanreport_put_frame(out, n++, f);
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

/* The number of a frame line ("  #N ..."), or -1; *ret_rest (when not
 * NULL) points after the number. */
static int sanreport_frame_no(const char *line, const char **ret_rest)
{
        while (*line == ' ' || *line == '\t')
                line++;
        if (line[0] != '#' || line[1] < '0' || line[1] > '9')
                return -1;
        char *end;
        errno = 0;
        long n = strtol(line + 1, &end, 10);
        if (errno || n > INT_MAX)
                return -1;
        if (ret_rest)
                *ret_rest = end;
        return (int)n;
}

/* One unsymbolized sanitizer frame line: "#N 0xPC (PATH+0xOFF)" or
 * "#N 0xPC in FN (PATH+0xOFF)", spaces and a BuildId suffix allowed. Fills
 * a frame object (pc, path, offset) and returns its number, or -1. */
static int sanreport_parse_frame(const char *line, size_t len, cJSON **ret)
{
        char buf[SANREPORT_LINE], pc[40], path[SANREPORT_LINE / 2], off[40];
        int n;
        if (len >= sizeof(buf))
                return -1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        const char *open = strstr(buf, "(/");
        if (strstr(buf, ".c:") || strstr(buf, ".cc:") || strstr(buf, ".cpp:") || !open)
                return -1;
        const char *rest;
        if ((n = sanreport_frame_no(buf, &rest)) < 0)
                return -1;
        rest += strspn(rest, " \t");
        size_t pc_len = strcspn(rest, " \t");
        if (pc_len >= sizeof(pc) || strncmp(rest, "0x", 2))
                return -1;
        snprintf(pc, sizeof(pc), "%.*s", (int)pc_len, rest);
        const char *plus = strrchr(open, '+');
        const char *close = plus ? strchr(plus, ')') : NULL;
        if (!plus || !close || (size_t)(plus - open - 1) >= sizeof(path) ||
            (size_t)(close - plus - 1) >= sizeof(off))
                return -1;
        snprintf(path, sizeof(path), "%.*s", (int)(plus - open - 1), open + 1);
        snprintf(off, sizeof(off), "%.*s", (int)(close - plus - 1), plus + 1);
        if (path[0] != '/' || strncmp(off, "0x", 2))
                return -1;
        cJSON *f = cJSON_CreateObject();
        if (!f)
                return -1;
        cJSON_AddStringToObject(f, "pc", pc);
        cJSON_AddStringToObject(f, "path", path);
        cJSON_AddStringToObject(f, "offset", off);
        *ret = f;
        return n;
}

/* Prints one stack's lines [@from, @to) of @text: the frames the
 * symbolizer describes in "#N 0xPC in FN FILE:LINE" form, the rest as they
 * were. */
static void sanreport_put_stack(FILE *out, const char *from, const char *to)
{
        cJSON *frames = cJSON_CreateArray();
        const char *p;
        for (p = from; frames && p < to;) {
                const char *e = memchr(p, '\n', (size_t)(to - p));
                size_t len = e ? (size_t)(e - p) : (size_t)(to - p);
                cJSON *f = NULL;
                if (sanreport_parse_frame(p, len, &f) < 0)
                        f = cJSON_CreateObject();
                if (f)
                        cJSON_AddItemToArray(frames, f);
                p += len + (e ? 1 : 0);
        }
        if (frames) {
                symbolize_frames(frames, false);
                symbolize_frames_inlined(frames);
        }
        const cJSON *f = frames ? frames->child : NULL;
        bool below_entry = false;
        for (p = from; p < to; f = f ? f->next : NULL) {
                const char *e = memchr(p, '\n', (size_t)(to - p));
                size_t len = e ? (size_t)(e - p) : (size_t)(to - p);
                const char *fn = f ? sanreport_str(f, "function") : NULL;
                int n = sanreport_frame_no(p, NULL);
                if (below_entry) {
                        /* The fuzzer's own frames, below the harness's
                         * entry point: left out, as in libFuzzer's
                         * reports ClusterFuzz ignores them. */
                } else if (fn && n >= 0) {
                        sanreport_put_frame(out, n, f);
                        below_entry = !strcmp(fn, "LLVMFuzzerTestOneInput");
                } else {
                        fwrite(p, 1, len, out);
                        fputc('\n', out);
                }
                p += len + (e ? 1 : 0);
        }
        cJSON_Delete(frames);
}

int sanreport_put_text(FILE *out, const char *text)
{
        const char *p = text, *stack = NULL;
        while (*p) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                const char *rest = NULL;
                int n = sanreport_frame_no(p, &rest);
                bool frame = n >= 0 && (size_t)(rest - p) < len &&
                             !strncmp(rest + strspn(rest, " \t"), "0x", 2);
                if (frame && n == 0 && stack) {
                        sanreport_put_stack(out, stack, p);
                        stack = NULL;
                }
                if (frame && !stack)
                        stack = p;
                if (!frame) {
                        if (stack)
                                sanreport_put_stack(out, stack, p);
                        stack = NULL;
                        fwrite(p, 1, len, out);
                        fputc('\n', out);
                }
                p += len + (e ? 1 : 0);
        }
        if (stack)
                sanreport_put_stack(out, stack, p);
        fflush(out);
        return ferror(out) ? -EIO : 0;
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
                sanreport_put_text(out, san);
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
        symbolize_frames(frames, false);
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
