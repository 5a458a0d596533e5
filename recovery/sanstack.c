/*
 * The stacks of a sanitizer's report, symbolized outside the sandbox. A
 * runner's sanitizer prints frames unsymbolized (symbolize=0: a symbolizer
 * process is out of the sandbox's reach), "#N 0xPC (MODULE+0xOFF)"; here
 * each becomes "#N 0xPC in FUNCTION FILE:LINE", with the functions inlined
 * into it first, as the sanitizer would print them with a symbolizer.
 * Every other line passes as it is. Used by the recovery helper (the
 * sanitizer.txt of a crash), `reproduce` and the libFuzzer drop-in's
 * reports (fuzzer/sanreport.c).
 *
 * Invariants: what the symbolizer names (from the target's debug info)
 * goes through termsafe; the report's own lines are the worker's, which
 * already made them printable (worker_add_text); nothing here allocates
 * more than a line on the stack besides the frames' JSON.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/msg.h"
#include "core/termsafe.h"
#include "recovery/sanstack.h"
#include "recovery/symbolize.h"

#include "snapfuzz/banned.h"

#define SANSTACK_LINE 4096

int sanstack_frame(char *buf, size_t cap, int n, const cJSON *frame)
{
        char pc[80], fn[1024], file[1700], mod[1700], off[80];
        termsafe_str(pc, sizeof(pc), msg_str(frame, "pc", "0x0"), 32);
        termsafe_str(fn, sizeof(fn), msg_str(frame, "function", ""), 200);
        termsafe_str(file, sizeof(file), msg_str(frame, "file", ""), 400);
        termsafe_str(mod, sizeof(mod), msg_str(frame, "path", ""), 400);
        termsafe_str(off, sizeof(off), msg_str(frame, "offset", "0x0"), 32);
        /* A name with a space would end the frame early in the parser's
         * "in FUNC FILE:LINE" form: C++ names with arguments keep theirs
         * in the module form, which has no file. */
        double line = msg_num(frame, "line", 0);
        if (fn[0] && file[0] && line > 0 && !strchr(fn, ' '))
                return snprintf(buf, cap, "    #%d %s in %s %s:%d", n, pc, fn, file, (int)line);
        if (!fn[0])
                termsafe_str(fn, sizeof(fn), msg_str(frame, "symbol", ""), 200);
        if (fn[0])
                return snprintf(buf, cap, "    #%d %s in %s (%s+%s)", n, pc, fn, mod, off);
        return snprintf(buf, cap, "    #%d %s (%s+%s)", n, pc, mod, off);
}

/* Frame @n of a stack, with the functions inlined into it first (each a
 * line of the same number, innermost first, as sanitizers print them). */
void sanstack_put_frame(FILE *out, int n, const cJSON *frame)
{
        char line[SANSTACK_LINE];
        const cJSON *inl = cJSON_GetObjectItemCaseSensitive(frame, "inlined");
        const cJSON *e;
        cJSON_ArrayForEach(e, inl)
        {
                char fn[1024], file[1700], pc[80];
                double ln = msg_num(e, "line", 0);
                termsafe_str(fn, sizeof(fn), msg_str(e, "function", "??"), 200);
                termsafe_str(file, sizeof(file), msg_str(e, "file", "??"), 400);
                termsafe_str(pc, sizeof(pc), msg_str(frame, "pc", "0x0"), 32);
                if (strchr(fn, ' '))
                        continue;
                fprintf(out, "    #%d %s in %s %s:%d\n", n, pc, fn, file, (int)ln);
        }
        sanstack_frame(line, sizeof(line), n, frame);
        fprintf(out, "%s\n", line);
}

/* The number of a frame line ("  #N ..."), or -1; *ret_rest (when not
 * NULL) points after the number. */
static int sanstack_frame_no(const char *line, const char **ret_rest)
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
static int sanstack_parse_frame(const char *line, size_t len, cJSON **ret)
{
        char buf[SANSTACK_LINE], pc[40], path[SANSTACK_LINE / 2], off[40];
        int n;
        if (len >= sizeof(buf))
                return -1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        const char *open = strstr(buf, "(/");
        if (strstr(buf, ".c:") || strstr(buf, ".cc:") || strstr(buf, ".cpp:") || !open)
                return -1;
        const char *rest;
        if ((n = sanstack_frame_no(buf, &rest)) < 0)
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
        /* The module's name, as a death's frames have it: what tells the
         * target's frames from the runtime's (classify_frame_is_runtime). */
        const char *base = strrchr(path, '/');
        cJSON_AddStringToObject(f, "module", base ? base + 1 : path);
        cJSON_AddStringToObject(f, "offset", off);
        *ret = f;
        return n;
}

/* Whether the line at @p (@len bytes) is a frame line ("  #N 0x..."); its
 * number in *@ret_n. */
static bool sanstack_is_frame(const char *p, size_t len, int *ret_n)
{
        const char *rest = NULL;
        int n = sanstack_frame_no(p, &rest);
        *ret_n = n;
        return n >= 0 && (size_t)(rest - p) < len && !strncmp(rest + strspn(rest, " \t"), "0x", 2);
}

/* Every frame line of @text, parsed (an empty object for one that does not
 * parse), in order, and looked up all at once: a symbolizer process per
 * call, not per stack (a use-after-free report has three). Calls again
 * while frames are left (a call looks up 64 at most; what it found is
 * cached), a few times at most. NULL when out of memory. */
static cJSON *sanstack_lookup(const char *text, bool target_only)
{
        cJSON *frames = cJSON_CreateArray();
        int n, done = -1;
        for (const char *p = text; frames && *p;) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                cJSON *f = NULL;
                if (sanstack_is_frame(p, len, &n)) {
                        if (sanstack_parse_frame(p, len, &f) < 0)
                                f = cJSON_CreateObject();
                        if (f)
                                cJSON_AddItemToArray(frames, f);
                }
                p += len + (e ? 1 : 0);
        }
        for (int i = 0; frames && i < 4; i++) {
                int now = symbolize_frames(frames, target_only);
                if (now <= done)
                        break;
                done = now;
        }
        if (frames)
                symbolize_frames_inlined(frames);
        return frames;
}

int sanstack_put_text(FILE *out, const char *text, bool target_only)
{
        cJSON *frames = sanstack_lookup(text, target_only);
        const cJSON *f = frames ? frames->child : NULL;
        bool in_stack = false, below_entry = false;
        int n;
        for (const char *p = text; *p;) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                bool frame = sanstack_is_frame(p, len, &n);
                const cJSON *this = frame ? f : NULL;
                const char *fn = this ? msg_str(this, "function", NULL) : NULL;
                /* A stack starts at a frame line after another line, or
                 * at a frame #0. */
                if (frame && (!in_stack || n == 0))
                        below_entry = false;
                in_stack = frame;
                if (frame && f)
                        f = f->next;
                if (frame && below_entry) {
                        /* The fuzzer's own frames, below the harness's
                         * entry point: left out, as in libFuzzer's
                         * reports ClusterFuzz ignores them. */
                } else if (fn) {
                        sanstack_put_frame(out, n, this);
                        below_entry = !strcmp(fn, "LLVMFuzzerTestOneInput");
                } else {
                        fwrite(p, 1, len, out);
                        fputc('\n', out);
                }
                p += len + (e ? 1 : 0);
        }
        cJSON_Delete(frames);
        fflush(out);
        return ferror(out) ? -EIO : 0;
}
