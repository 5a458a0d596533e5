/*
 * One symbolizer process per call, fed every frame at once on stdin and
 * read to the end, with a deadline: a crash report is worth a few tens of
 * milliseconds, and a hung symbolizer must not hold up recovery. The
 * symbolizer can be named with SNAPFUZZ_SYMBOLIZER.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "recovery/classify.h"
#include "recovery/symbolize.h"

#include "snapfuzz/banned.h"

#define SYMBOLIZE_MAX_FRAMES 64
#define SYMBOLIZE_DEADLINE_MS 10000
#define SYMBOLIZE_OUTPUT_MAX (256 * 1024)

static int find_in_path(const char *name, char *ret, size_t cap)
{
        const char *path = getenv("PATH");
        char buf[4096];
        snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/bin:/bin");
        char *save = NULL;
        for (char *dir = strtok_r(buf, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                snprintf(ret, cap, "%s/%s", dir, name);
                if (access(ret, X_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

/* The symbolizer to run, found once per process. An explicit
 * SNAPFUZZ_SYMBOLIZER is the only one tried: a wrong path is reported, not
 * silently replaced by another symbolizer. */
static int symbolizer_state; /* 0: not looked for yet, 1: found, -1: none */
static char symbolizer_path[4096];

static int find_symbolizer(char *ret, size_t cap)
{
        const char *env = getenv("SNAPFUZZ_SYMBOLIZER");
        if (env && *env) {
                if (access(env, X_OK) < 0)
                        return -ENOENT;
                snprintf(ret, cap, "%s", env);
                return 0;
        }
        if (find_in_path("llvm-symbolizer", ret, cap) == 0)
                return 0;
        glob_t g;
        if (glob("/usr/bin/llvm-symbolizer-*", 0, NULL, &g) == 0 && g.gl_pathc) {
                snprintf(ret, cap, "%s", g.gl_pathv[g.gl_pathc - 1]);
                globfree(&g);
                return 0;
        }
        globfree(&g);
        return -ENOENT;
}

bool symbolize_available(void)
{
        if (symbolizer_state != 0)
                return symbolizer_state > 0;
        if (find_symbolizer(symbolizer_path, sizeof(symbolizer_path)) == 0) {
                symbolizer_state = 1;
                return true;
        }
        symbolizer_state = -1;
        const char *env = getenv("SNAPFUZZ_SYMBOLIZER");
        if (env && *env)
                log_warn("SNAPFUZZ_SYMBOLIZER=%s is not an executable: crashes are not "
                         "symbolized; their signatures name frames by module+offset "
                         "(crash.json: \"symbolized\": false)",
                         env);
        else
                log_warn("no llvm-symbolizer found (Debian: apt-get install llvm-14, or set "
                         "SNAPFUZZ_SYMBOLIZER): crashes are not symbolized; their signatures "
                         "name frames by module+offset (crash.json: \"symbolized\": false)");
        return false;
}

/* Runs @argv with @input on stdin; returns its stdout (NUL-terminated,
 * malloc'd) or NULL. */
static char *run_filter(char *const argv[], const char *input, size_t input_len)
{
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0)
                return NULL;
        if (pipe2(out, O_CLOEXEC) < 0) {
                close(in[0]);
                close(in[1]);
                return NULL;
        }
        pid_t pid = fork();
        if (pid < 0) {
                close(in[0]);
                close(in[1]);
                close(out[0]);
                close(out[1]);
                return NULL;
        }
        if (pid == 0) {
                dup2(in[0], STDIN_FILENO);
                dup2(out[1], STDOUT_FILENO);
                int devnull = open("/dev/null", O_WRONLY);
                if (devnull >= 0)
                        dup2(devnull, STDERR_FILENO);
                execv(argv[0], argv);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        fcntl(out[0], F_SETFL, O_NONBLOCK);

        size_t cap = 8192, len = 0, sent = 0;
        char *buf = malloc(cap);
        int64_t deadline = clock_now_ms() + SYMBOLIZE_DEADLINE_MS;
        int wfd = in[1];
        while (buf) {
                struct pollfd p[2] = {{.fd = out[0], .events = POLLIN},
                                      {.fd = wfd, .events = POLLOUT}};
                int64_t left = deadline - clock_now_ms();
                if (left <= 0 || poll(p, wfd >= 0 ? 2 : 1, (int)left) <= 0) {
                        free(buf);
                        buf = NULL;
                        break;
                }
                if (wfd >= 0 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
                        ssize_t n = write(wfd, input + sent, input_len - sent);
                        if (n > 0)
                                sent += (size_t)n;
                        if (n < 0 || sent == input_len) {
                                close(wfd);
                                wfd = -1;
                        }
                }
                if (p[0].revents & (POLLIN | POLLHUP)) {
                        if (cap - len < 4096) {
                                if (cap >= SYMBOLIZE_OUTPUT_MAX)
                                        break;
                                char *nb = realloc(buf, cap * 2);
                                if (!nb)
                                        break;
                                buf = nb;
                                cap *= 2;
                        }
                        ssize_t n = read(out[0], buf + len, cap - len - 1);
                        if (n == 0)
                                break;
                        if (n > 0)
                                len += (size_t)n;
                }
        }
        if (wfd >= 0)
                close(wfd);
        close(out[0]);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (buf)
                buf[len] = 0;
        return buf;
}

static char *next_line(char **cursor)
{
        char *s = *cursor;
        if (!s || !*s)
                return NULL;
        char *nl = strchr(s, '\n');
        if (nl) {
                *nl = 0;
                *cursor = nl + 1;
        } else {
                *cursor = s + strlen(s);
        }
        return s;
}

static void set_location(cJSON *f, const char *function, const char *fileline)
{
        if (function && strcmp(function, "??") != 0 && *function)
                cJSON_AddStringToObject(f, "function", function);
        if (!fileline || strncmp(fileline, "??", 2) == 0)
                return;
        /* "file:line:column" (llvm-symbolizer) or "file:line" (addr2line). */
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s", fileline);
        char *colon = strrchr(buf, ':');
        char *line = colon ? colon + 1 : NULL;
        if (colon) {
                *colon = 0;
                char *prev = strrchr(buf, ':');
                if (prev && strspn(prev + 1, "0123456789") == strlen(prev + 1)) {
                        *prev = 0;
                        line = prev + 1;
                }
        }
        cJSON_AddStringToObject(f, "file", buf);
        if (line) {
                /* The symbolizer's output is read as text: a line number
                 * that is no number or out of range is left out (what
                 * follows one, addr2line's " (discriminator 2)", is not). */
                char *end;
                errno = 0;
                long n = strtol(line, &end, 10);
                if (end != line && errno == 0 && n > 0 && n <= INT_MAX)
                        cJSON_AddNumberToObject(f, "line", (double)n);
        }
}

/*
 * What the symbolizer said about (module path, offset), kept for the life of
 * the process: under --keep-going the same crash comes back again and again,
 * and starting llvm-symbolizer for it each time cost the recovery helper
 * most of a core (a direct-mapped table; a collision replaces the entry).
 */
#define SYMBOLIZE_CACHE_SLOTS 1024

typedef struct SymbolizeCached {
        char *path; /* NULL: empty slot */
        unsigned long long offset;
        char *function;
        char *fileline;
} SymbolizeCached;

static SymbolizeCached symbolize_cache[SYMBOLIZE_CACHE_SLOTS];

static SymbolizeCached *cache_slot(const char *path, unsigned long long offset)
{
        uint64_t h = hash64(path, strlen(path), offset);
        return &symbolize_cache[h % SYMBOLIZE_CACHE_SLOTS];
}

static const SymbolizeCached *cache_find(const char *path, unsigned long long offset)
{
        const SymbolizeCached *c = cache_slot(path, offset);
        return c->path && c->offset == offset && strcmp(c->path, path) == 0 ? c : NULL;
}

static void cache_put(const char *path, unsigned long long offset, const char *function,
                      const char *fileline)
{
        SymbolizeCached *c = cache_slot(path, offset);
        char *p = strdup(path), *fn = strdup(function), *fl = strdup(fileline);

        if (!p || !fn || !fl) {
                free(p);
                free(fn);
                free(fl);
                return;
        }
        free(c->path);
        free(c->function);
        free(c->fileline);
        *c = (SymbolizeCached){.path = p, .offset = offset, .function = fn, .fileline = fl};
}

int symbolize_frames(cJSON *frames, bool target_only)
{
        cJSON *todo[SYMBOLIZE_MAX_FRAMES];
        unsigned long long todo_off[SYMBOLIZE_MAX_FRAMES];
        int n = 0, done = 0;
        size_t cap = 64 * 1024, len = 0;
        char *input;

        if (!cJSON_IsArray(frames))
                return 0;
        input = malloc(cap);
        if (!input)
                return 0;
        int index = 0;
        cJSON *f;
        cJSON_ArrayForEach(f, frames)
        {
                const char *path = msg_str(f, "path", NULL);
                const char *off = msg_str(f, "offset", NULL);
                int first = index++ == 0;
                if (!path || !off || n == SYMBOLIZE_MAX_FRAMES || path[0] != '/' ||
                    (target_only && classify_frame_is_runtime(f)))
                        continue;
                unsigned long long o = strtoull(off, NULL, 16);
                if (!first && o > 0)
                        o--;
                const SymbolizeCached *c = cache_find(path, o);
                if (c) {
                        set_location(f, c->function, c->fileline);
                        done++;
                        continue;
                }
                int w = snprintf(input + len, cap - len, "\"%s\" 0x%llx\n", path, o);
                if (w < 0 || (size_t)w >= cap - len)
                        break;
                len += (size_t)w;
                todo_off[n] = o;
                todo[n++] = f;
        }
        if (n == 0 || !symbolize_available()) {
                free(input);
                return done;
        }
        char *const argv[] = {symbolizer_path,
                              (char *)"--output-style=LLVM",
                              (char *)"--inlining=false",
                              (char *)"--functions=linkage",
                              (char *)"--demangle",
                              NULL};
        char *out = run_filter(argv, input, len);
        free(input);
        if (!out)
                return done;
        /* Two lines per frame, then a blank line. */
        char *cursor = out;
        for (int i = 0; i < n; i++) {
                char *function = next_line(&cursor);
                char *fileline = next_line(&cursor);
                if (!function || !fileline)
                        break;
                while (*cursor == '\n')
                        cursor++;
                set_location(todo[i], function, fileline);
                cache_put(msg_str(todo[i], "path", ""), todo_off[i], function, fileline);
                done++;
        }
        free(out);
        return done;
}

/* The most lines of inlined code one address is read with. */
#define SYMBOLIZE_INLINE_MAX 32

/* The symbolizer's answer for one address with inlining: pairs of lines
 * (function, file:line:col), innermost first, the last one the function
 * the code is in; a blank line ends it. Returns the number of pairs read
 * into @fn and @fl (pairs past @cap are read and dropped). */
static int read_inline_group(char **cursor, char *fn[], char *fl[], int cap)
{
        int n = 0;
        char *function, *fileline;
        while (**cursor && **cursor != '\n' && (function = next_line(cursor)) &&
               (fileline = next_line(cursor))) {
                if (n < cap) {
                        fn[n] = function;
                        fl[n] = fileline;
                        n++;
                } else {
                        /* The outermost pair is the one that must stay. */
                        fn[cap - 1] = function;
                        fl[cap - 1] = fileline;
                }
        }
        while (**cursor == '\n')
                (*cursor)++;
        return n;
}

/* Adds what one address's answer says to @f: for a frame no symbolizer
 * has described yet, its plain location (what symbolize_frames() would
 * give: the function the code is in, the innermost line), which is also
 * cached for it; then the inlined functions, and the line of the
 * outermost inlined call as the frame's own. */
static void add_inlined(cJSON *f, unsigned long long offset, char *fn[], char *fl[], int n)
{
        if (n == 0)
                return;
        if (!cJSON_GetObjectItemCaseSensitive(f, "function") &&
            !cJSON_GetObjectItemCaseSensitive(f, "file")) {
                set_location(f, fn[n - 1], fl[0]);
                cache_put(msg_str(f, "path", ""), offset, fn[n - 1], fl[0]);
        }
        if (n == 1)
                return;
        cJSON *inl = cJSON_AddArrayToObject(f, "inlined");
        for (int i = 0; inl && i < n - 1; i++) {
                cJSON *e = cJSON_CreateObject();
                if (!e)
                        break;
                set_location(e, fn[i], fl[i]);
                cJSON_AddItemToArray(inl, e);
        }
        /* With inlined code, the frame's own line is the call's line. */
        if (strncmp(fl[n - 1], "??", 2) != 0) {
                cJSON_DeleteItemFromObjectCaseSensitive(f, "file");
                cJSON_DeleteItemFromObjectCaseSensitive(f, "line");
                set_location(f, NULL, fl[n - 1]);
        }
}

int symbolize_frames_inlined(cJSON *frames)
{
        cJSON *todo[SYMBOLIZE_MAX_FRAMES];
        unsigned long long todo_off[SYMBOLIZE_MAX_FRAMES];
        int n = 0, index = 0;
        size_t cap = 64 * 1024, len = 0;
        cJSON *f;
        if (!cJSON_IsArray(frames) || !symbolize_available())
                return 0;
        char *input = malloc(cap);
        if (!input)
                return 0;
        cJSON_ArrayForEach(f, frames)
        {
                const char *path = msg_str(f, "path", NULL);
                const char *off = msg_str(f, "offset", NULL);
                int first = index++ == 0;
                if (!path || !off || n == SYMBOLIZE_MAX_FRAMES || path[0] != '/' ||
                    cJSON_GetObjectItemCaseSensitive(f, "inlined"))
                        continue;
                unsigned long long o = strtoull(off, NULL, 16);
                if (!first && o > 0)
                        o--;
                int w = snprintf(input + len, cap - len, "\"%s\" 0x%llx\n", path, o);
                if (w < 0 || (size_t)w >= cap - len)
                        break;
                len += (size_t)w;
                todo_off[n] = o;
                todo[n++] = f;
        }
        char *const argv[] = {symbolizer_path,           (char *)"--output-style=LLVM",
                              (char *)"--inlining=true", (char *)"--functions=linkage",
                              (char *)"--demangle",      NULL};
        char *out = n ? run_filter(argv, input, len) : NULL;
        free(input);
        if (!out)
                return 0;
        char *cursor = out;
        int done = 0;
        for (int i = 0; i < n && *cursor; i++, done++) {
                char *fn[SYMBOLIZE_INLINE_MAX], *fl[SYMBOLIZE_INLINE_MAX];
                int pairs = read_inline_group(&cursor, fn, fl, SYMBOLIZE_INLINE_MAX);
                add_inlined(todo[i], todo_off[i], fn, fl, pairs);
        }
        free(out);
        return done;
}
