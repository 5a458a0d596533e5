/*
 * The fork server. This is the one module that forks without exec: a runner
 * must start from the exact state the target's initialization left (that
 * is the snapshot, and what makes a runner's death cost one fork instead of
 * a process start). A runner child may touch only the shared record, the
 * coverage map, and memory inherited copy-on-write; it must not use the
 * worker's pipes, which it closes before running any target code.
 *
 * Per batch the worker seals the record, hands it to the runner that waits
 * for one (a plain fuzz batch, worker/runner.h) or forks a runner, and
 * supervises it with a pidfd: it watches the record's count for hangs (--timeout) and the
 * runner's resident memory (--rss-limit-mb), asks for a stack dump before
 * killing, and reports either "done" (with the inputs that found coverage,
 * left in the record's finds area) or "died" (with the cause and the
 * symbolized stack) to whoever started it. Its command line and every
 * message it reads or writes go through worker/proto.h. What the runners
 * print comes through a pipe: its tail is kept for the "died" report in
 * every case, and the rest goes where --target-output says
 * (worker/outsink.h). A runner out of time whose memory races toward the
 * RSS limit is given the time to reach it, and is then out of memory
 * rather than a hang (worker_rss_grace_ms).
 *
 * A batch is a short list of phases (worker_run_batch): write it into the
 * record, get a runner (the waiting one, or a fresh fork), watch it one
 * poll tick at a time until it is done or gone, settle what is left of it,
 * and report.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "worker/runner.h"
#include "worker/selfbind.h"
#include "worker/worker.h"
#include "worker/cmplog.h"
#include "worker/cmpsites.h"
#include "worker/outsink.h"
#include "worker/stackdepth.h"
#include "core/coverage.h"
#include "core/elfcheck.h"
#include "core/msg.h"
#include "worker/proto.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervisor.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"
#include "snapfuzz/target.h"

#include "snapfuzz/banned.h"

#define WORKER_TICK_MS 20
#define WORKER_RSS_EVERY_MS 100
#define WORKER_DUMP_GRACE_MS 1000
/* The longest a runner out of time may take to reach the RSS limit and be
 * reported `oom` (worker_rss_grace_ms). */
#define WORKER_OOM_GRACE_MAX_MS 10000
#define WORKER_OUTPUT_TAIL 16384
#define WORKER_OUTPUT_REPORT 4096 /* what the "output" field keeps */
#define WORKER_REPORT_MAX 8192
/* How long rebuilding one input with a custom mutator may take (it may
 * replay a whole batch's mutations from its seed). */
#define WORKER_REBUILD_MS 30000

typedef struct Worker {
        WorkerArgs args; /* the command line, as wproc.c built it */
        void *region;
        RecordLayout layout;
        CoverageShared *coverage;
        Sandbox *sandbox;
        TargetTestOneInput test;
        CustomMutator custom; /* the target's custom mutator and crossover */
        bool has_custom;
        void *handle;
        MsgReader reader;
        int stopping;
        /* The last bytes the runner wrote to stdout/stderr, for the report. */
        char out_tail[WORKER_OUTPUT_TAIL];
        size_t out_len;
        int quiet;    /* this batch's output is kept for the report only */
        Outsink sink; /* where the rest of the output goes (--target-output) */
        bool leaks;   /* LeakSanitizer is loaded and its allocation hooks count */
        /* The runner, between fork and reaping: during a batch, and
         * between batches while it waits for the next (pid 0: none). */
        struct {
                pid_t pid;
                int pidfd, out_fd, ctl_fd;
                SandboxSupervisor *sup;
        } run;
} Worker;

/* Tells whoever started us what went wrong (@what a PROTO_WHAT_*). */
static void worker_send_error(Worker *w, const char *what, const char *message)
{
        cJSON *m;
        if (proto_error_build(what, message, &m) < 0)
                return;
        (void)msg_send(w->args.evt_fd, m);
        cJSON_Delete(m);
}

/* The target's calls to what it defines itself go to its own code
 * (worker/selfbind.h). A failure is said, not fatal: the target then runs
 * as the dynamic linker bound it. */
static void worker_selfbind(Worker *w)
{
        unsigned rebound = 0;
        int r = selfbind_apply(w->handle, &rebound);
        if (r < 0)
                fprintf(stderr,
                        "snapfuzz: warning: %s: cannot bind the target to its own symbols: %s\n",
                        w->args.target, strerror(-r));
}

static void worker_send_pong(Worker *w)
{
        cJSON *p = proto_msg_new(PROTO_PONG);
        if (p)
                (void)msg_send(w->args.evt_fd, p);
        cJSON_Delete(p);
}

static WorkerBuiltin builtin;
static bool builtin_set;

void worker_builtin_set(const WorkerBuiltin *b)
{
        builtin_set = b && b->test;
        if (builtin_set)
                builtin = *b;
}

const WorkerBuiltin *worker_builtin_get(void)
{
        return builtin_set ? &builtin : NULL;
}

/* The executable's own target (PROTO_TARGET_SELF): nothing to load or to
 * rebind (the static linker bound the harness to its own symbols). Its
 * LLVMFuzzerInitialize gets the executable's path as argv[0]. */
/* Comparison call sites are filed relative to the module that holds the
 * harness (worker/cmplog.h), before LLVMFuzzerInitialize compares
 * anything. */
static void worker_file_sites(TargetTestOneInput test)
{
        Dl_info info;
        if (dladdr((void *)test, &info) && info.dli_fbase)
                cmplog_set_base((uintptr_t)info.dli_fbase);
}

/* libFuzzer's extra counters: a target may define uint8_t arrays in a
 * section of this name, its own coverage signal (a table lookup, a state
 * machine's states), which libFuzzer reads as features and zeroes before
 * every input. They are registered as features too (coverage_clear zeroes
 * them): unregistered, a target that asserts they start at zero crashed
 * on its second input. The section is found in the object's file, since
 * the linker defines its bounds only for code that references them. */
#define WORKER_EXTRA_COUNTERS "__libfuzzer_extra_counters"

static void worker_extra_counters(const char *path, struct link_map *lm)
{
        uint64_t addr, size;
        Dl_info info;
        struct link_map *first = NULL, *last = NULL;

        if (!lm || elf_find_section(path, WORKER_EXTRA_COUNTERS, &addr, &size) < 0 || size == 0)
                return;
        uint8_t *start = (uint8_t *)(lm->l_addr + (uintptr_t)addr);
        /* Both ends must be inside the object as loaded: the file could
         * have changed since, and its headers are not to be trusted. */
        if (!dladdr1(start, &info, (void **)&first, RTLD_DL_LINKMAP) ||
            !dladdr1(start + size - 1, &info, (void **)&last, RTLD_DL_LINKMAP) || first != lm ||
            last != lm)
                return;
        coverage_register_features(start, start + size);
}

static int worker_load_builtin(Worker *w)
{
        static char exe[4096];
        static char *argv_store[2];
        if (!builtin_set) {
                worker_send_error(w, PROTO_WHAT_ENTRY,
                                  "this executable has no built-in target (it is not a "
                                  "libFuzzer drop-in binary)");
                return -ENOENT;
        }
        w->test = builtin.test;
        void *self = dlopen(NULL, RTLD_NOW);
        struct link_map *lm = NULL;
        if (self && dlinfo(self, RTLD_DI_LINKMAP, &lm) == 0)
                worker_extra_counters("/proc/self/exe", lm);
        worker_file_sites(w->test);
        w->custom.mutate = builtin.mutate;
        w->custom.crossover = builtin.crossover;
        w->has_custom = builtin.mutate || builtin.crossover;
        if (builtin.init) {
                ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
                exe[n > 0 ? n : 0] = 0;
                argv_store[0] = exe;
                int argc = 1;
                char **argv = argv_store;
                builtin.init(&argc, &argv);
        }
        return 0;
}

/* dlopen's complaint, with a hint when the target needs a sanitizer or
 * coverage callback snapfuzz does not define (a flavour of
 * -fsanitize-coverage it has no feedback for). */
static void worker_send_load_error(Worker *w, const char *e)
{
        char msg[1024];
        if (!e)
                e = "dlopen failed";
        if (strstr(e, "undefined symbol: __sanitizer_") ||
            strstr(e, "undefined symbol: __sancov")) {
                snprintf(msg, sizeof(msg),
                         "%s; snapfuzz provides SanitizerCoverage's " TARGET_COVERAGE_KINDS
                         ": build the harness with clang " TARGET_CFLAGS_CLANG
                         " or gcc " TARGET_CFLAGS_GCC " (see snapfuzz cflags)",
                         e);
                e = msg;
        }
        worker_send_error(w, PROTO_WHAT_LOAD, e);
}

/* gcc's trace-pc instrumentation has no counters to register: when the
 * target calls __sanitizer_cov_trace_pc, the trace-pc map becomes its
 * counters, with code offsets taken from the target's load address. */
static void worker_tracepc(Worker *w)
{
        struct link_map *lm = NULL;
        if (!selfbind_references(w->handle, "__sanitizer_cov_trace_pc"))
                return;
        if (dlinfo(w->handle, RTLD_DI_LINKMAP, &lm) == 0 && lm)
                coverage_register_tracepc((uintptr_t)lm->l_addr);
}

/* Loads the target and runs its LLVMFuzzerInitialize. 0, or a negative
 * errno after telling whoever started us (-ENOEXEC: dlopen failed;
 * -ENOENT: no LLVMFuzzerTestOneInput). */
static int worker_load(Worker *w)
{
        char msg[1024];
        struct link_map *lm = NULL;

        if (strcmp(w->args.target, PROTO_TARGET_SELF) == 0)
                return worker_load_builtin(w);
        w->handle = dlopen(w->args.target, RTLD_NOW | RTLD_LOCAL);
        if (!w->handle) {
                worker_send_load_error(w, dlerror());
                return -ENOEXEC;
        }
        worker_selfbind(w);
        worker_tracepc(w);
        if (dlinfo(w->handle, RTLD_DI_LINKMAP, &lm) == 0)
                worker_extra_counters(w->args.target, lm);
        w->test = (TargetTestOneInput)dlsym(w->handle, TARGET_SYM_TEST);
        if (!w->test) {
                snprintf(msg, sizeof(msg), "%s does not export %s", w->args.target,
                         TARGET_SYM_TEST);
                worker_send_error(w, PROTO_WHAT_ENTRY, msg);
                return -ENOENT;
        }
        worker_file_sites(w->test);
        w->has_custom = custom_lookup(w->handle, &w->custom);
        TargetInitialize init = (TargetInitialize)dlsym(w->handle, TARGET_SYM_INIT);
        if (init) {
                static char *argv_store[2];
                argv_store[0] = (char *)w->args.target;
                int argc = 1;
                char **argv = argv_store;
                init(&argc, &argv);
        }
        return 0;
}

/* Resolves one frame to module, offset and symbol (dladdr works here: the
 * runner was a fork of this process, with the same mappings). */
static cJSON *worker_frame_json(uint64_t pc)
{
        cJSON *f = cJSON_CreateObject();
        char hex[32];
        Dl_info info;

        if (!f)
                return NULL;
        snprintf(hex, sizeof(hex), "0x%" PRIx64, pc);
        cJSON_AddStringToObject(f, "pc", hex);
        if (dladdr((void *)(uintptr_t)pc, &info) && info.dli_fname) {
                const char *slash = strrchr(info.dli_fname, '/');
                cJSON_AddStringToObject(f, "module", slash ? slash + 1 : info.dli_fname);
                cJSON_AddStringToObject(f, "path", info.dli_fname);
                snprintf(hex, sizeof(hex), "0x%" PRIxPTR,
                         (uintptr_t)pc - (uintptr_t)info.dli_fbase);
                cJSON_AddStringToObject(f, "offset", hex);
                if (info.dli_sname) {
                        cJSON_AddStringToObject(f, "symbol", info.dli_sname);
                        snprintf(hex, sizeof(hex), "0x%" PRIxPTR,
                                 (uintptr_t)pc - (uintptr_t)info.dli_saddr);
                        cJSON_AddStringToObject(f, "symoff", hex);
                }
        }
        return f;
}

/* One frame line of a sanitizer stack, "    #N 0xPC in ...": true with its
 * PC in @pc; false for any other line (the blank one after the stack). */
static bool worker_parse_frame(const char *line, unsigned long long *pc)
{
        char *end;

        while (*line == ' ' || *line == '\t')
                line++;
        if (*line++ != '#' || *line < '0' || *line > '9')
                return false;
        errno = 0;
        (void)strtoul(line, &end, 10);
        if (errno || *end != ' ')
                return false;
        line = end + 1;
        if (line[0] != '0' || line[1] != 'x')
                return false;
        *pc = strtoull(line + 2, &end, 16);
        return errno == 0 && end != line + 2;
}

/* The stack that allocated the first leak of a LeakSanitizer report
 * ("Direct leak of ... allocated from:" and its "#n 0xpc" lines): the
 * runner was a fork of this process, so the addresses mean the same here. */
static void worker_add_leak_frames(const Worker *w, cJSON *frames)
{
        const char *out = w->out_tail, *end = w->out_tail + w->out_len;
        const char *p = memmem(out, w->out_len, "Direct leak of", 14);

        if (!p)
                p = memmem(out, w->out_len, "Indirect leak of", 16);
        if (!p)
                return;
        p = memchr(p, '\n', (size_t)(end - p));
        while (p && p < end) {
                const char *line = p + 1;
                const char *eol = memchr(line, '\n', (size_t)(end - line));
                char buf[128];
                size_t n;
                unsigned long long pc;

                if (!eol)
                        eol = end;
                n = (size_t)(eol - line) < sizeof(buf) - 1 ? (size_t)(eol - line) : sizeof(buf) - 1;
                memcpy(buf, line, n);
                buf[n] = 0;
                if (!worker_parse_frame(buf, &pc))
                        break; /* the blank line after the stack */
                cJSON_AddItemToArray(frames, worker_frame_json((uint64_t)pc));
                p = eol;
        }
}

static void worker_add_death(const Worker *w, cJSON *m, const RecordDeath *d)
{
        if (d->valid != RECORD_DEATH_VALID)
                return;
        cJSON *j = cJSON_AddObjectToObject(m, "death");
        char hex[32];

        if (!j)
                return;
        cJSON_AddNumberToObject(j, "signal", d->signal);
        cJSON_AddNumberToObject(j, "code", d->code);
        cJSON_AddNumberToObject(j, "reason", d->reason);
        cJSON_AddNumberToObject(j, "count", (double)d->count);
        snprintf(hex, sizeof(hex), "0x%" PRIx64, d->addr);
        cJSON_AddStringToObject(j, "addr", hex);
        if (d->flags & RECORD_DEATH_F_STACK_OVERFLOW)
                cJSON_AddBoolToObject(j, "stack_overflow", 1);
        if (d->syscall_nr >= 0) {
                const char *name = sandbox_syscall_name(d->syscall_nr);
                const char *group = sandbox_syscall_group(d->syscall_nr);
                cJSON_AddNumberToObject(j, "syscall", d->syscall_nr);
                cJSON_AddStringToObject(j, "syscall_name", name ? name : "unknown");
                if (group)
                        cJSON_AddStringToObject(j, "syscall_group", group);
                cJSON *args = cJSON_AddArrayToObject(j, "syscall_args");
                for (int i = 0; args && i < 6; i++) {
                        snprintf(hex, sizeof(hex), "0x%" PRIx64, d->syscall_args[i]);
                        cJSON_AddItemToArray(args, cJSON_CreateString(hex));
                }
        }
        cJSON *frames = cJSON_AddArrayToObject(j, "frames");
        if (!frames)
                return;
        /* A leak's stack is where the memory was allocated, not where the
         * runner noticed. */
        if (d->reason == RECORD_DEATH_LEAK) {
                worker_add_leak_frames(w, frames);
                return;
        }
        /* The exact faulting instruction first, then the stack unwound
         * through the signal frame. The frames before the faulting one are
         * the handler's own and say nothing about the crash. */
        uint32_t n = d->nframes < RECORD_MAX_FRAMES ? d->nframes : RECORD_MAX_FRAMES;
        uint32_t first = 0;
        if (d->pc) {
                cJSON_AddItemToArray(frames, worker_frame_json(d->pc));
                for (uint32_t i = 0; i < n; i++)
                        if (d->frames[i] == d->pc) {
                                first = i + 1;
                                break;
                        }
        }
        for (uint32_t i = first; i < n; i++)
                cJSON_AddItemToArray(frames, worker_frame_json(d->frames[i]));
}

static long worker_rss_mb(pid_t pid)
{
        char path[64], buf[128];
        snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        /* statm: "size resident shared ...", in pages. */
        char *end;
        errno = 0;
        (void)strtoul(buf, &end, 10);
        if (errno || end == buf || *end != ' ')
                return -1;
        const char *res = end + 1;
        unsigned long resident = strtoul(res, &end, 10);
        if (errno || end == res)
                return -1;
        return (long)(resident * (unsigned long)sysconf(_SC_PAGESIZE) / (1024 * 1024));
}

typedef enum KillReason {
        KILL_NONE,
        KILL_TIMEOUT,
        KILL_OOM,
        KILL_STOP,
} KillReason;

static const char *kill_reason_str(KillReason r)
{
        switch (r) {
        case KILL_TIMEOUT:
                return "timeout";
        case KILL_OOM:
                return "oom";
        case KILL_STOP:
                return "stopped";
        case KILL_NONE:
                break;
        }
        return "crash";
}

/* Handles a command that arrives while a runner is alive: only "stop",
 * "ping" and "quiet_refusal" make sense then. Returns 1 when the batch must
 * be abandoned. */
static int worker_command_during_batch(Worker *w)
{
        for (;;) {
                cJSON *m = NULL;
                int r = msg_read(&w->reader, &m);
                if (r == 0)
                        return 0;
                if (r < 0) {
                        w->stopping = 1;
                        return 1;
                }
                if (proto_is(m, PROTO_STOP))
                        w->stopping = 1;
                else if (proto_is(m, PROTO_PING))
                        worker_send_pong(w);
                else if (proto_is(m, PROTO_QUIET_REFUSAL))
                        (void)sandbox_quiet(w->sandbox,
                                            cJSON_GetObjectItemCaseSensitive(m, "refusal"));
                cJSON_Delete(m);
                if (w->stopping)
                        return 1;
        }
}

/* Drains the runner's output pipe: hands it to the sink (--target-output:
 * shown as libFuzzer shows a target's output, logged or dropped) and keeps
 * the tail for the crash report, whatever the sink does with it. The
 * runner writes into a pipe rather than our stderr because its file-size
 * limit is 0: writing to a stderr that is a regular file would kill it.
 * Returns 1 when the pipe is empty for now, 0 at its end (or on a read
 * error: either way there is nothing more to read). */
static int worker_drain_output(Worker *w, int fd)
{
        char buf[4096];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n == 0 ? 0 : (errno == EAGAIN ? 1 : 0);
                if (!w->quiet)
                        outsink_write(&w->sink, buf, (size_t)n);
                size_t k = (size_t)n;
                _Static_assert(sizeof(buf) <= WORKER_OUTPUT_TAIL, "a read fits the tail");
                if (w->out_len + k > WORKER_OUTPUT_TAIL) {
                        size_t drop = w->out_len + k - WORKER_OUTPUT_TAIL;
                        memmove(w->out_tail, w->out_tail + drop, w->out_len - drop);
                        w->out_len -= drop;
                }
                memcpy(w->out_tail + w->out_len, buf, k);
                w->out_len += k;
        }
}

/* Copies @len bytes as a JSON-safe string: bytes outside printable ASCII
 * (but newlines and tabs) become '?'. */
static void worker_add_text(cJSON *m, const char *key, const char *src, size_t len)
{
        char text[WORKER_OUTPUT_TAIL + 1];
        if (len > WORKER_OUTPUT_TAIL)
                len = WORKER_OUTPUT_TAIL;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)src[i];
                text[i] = (ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f)) ? (char)ch : '?';
        }
        text[len] = '\0';
        cJSON_AddStringToObject(m, key, text);
}

/* The start of a sanitizer's report in the output, if any. */
static const char *worker_find_report(const char *out, size_t len)
{
        static const char *const markers[] = {
            "ERROR: AddressSanitizer",
            "ERROR: LeakSanitizer",
            "ERROR: MemorySanitizer",
            "ERROR: ThreadSanitizer",
            "runtime error: ",
            "ERROR: HWAddressSanitizer",
            "ERROR: snapfuzz: malloc-limit",
            "ERROR: UndefinedBehaviorSanitizer",
        };
        const char *first = NULL;
        for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
                const char *p = memmem(out, len, markers[i], strlen(markers[i]));
                if (p && (!first || p < first))
                        first = p;
        }
        if (!first)
                return NULL;
        /* Back up to the start of the line ("==1234==ERROR: ..." or
         * "file.c:12:3: runtime error: ..."). */
        while (first > out && first[-1] != '\n')
                first--;
        return first;
}

/* The last bytes the target printed, and the sanitizer report in them. */
static void worker_add_output(Worker *w, cJSON *m)
{
        if (!w->out_len)
                return;
        size_t keep = w->out_len < WORKER_OUTPUT_REPORT ? w->out_len : WORKER_OUTPUT_REPORT;
        worker_add_text(m, "output", w->out_tail + w->out_len - keep, keep);
        const char *rep = worker_find_report(w->out_tail, w->out_len);
        if (rep) {
                size_t n = (size_t)(w->out_tail + w->out_len - rep);
                worker_add_text(m, "sanitizer_report", rep,
                                n < WORKER_REPORT_MAX ? n : WORKER_REPORT_MAX);
        }
}

/* The supervisor's reports (log mode, refusals of a named path) go to
 * whoever started us as "sandbox" events. */
static void worker_on_sandbox_event(void *userdata, const cJSON *event)
{
        Worker *w = userdata;
        cJSON *m = proto_msg_new(PROTO_SANDBOX);
        const cJSON *field;

        if (!m)
                return;
        cJSON_ArrayForEach(field, event)
            cJSON_AddItemToObject(m, field->string, cJSON_Duplicate(field, 1));
        (void)msg_send(w->args.evt_fd, m);
        cJSON_Delete(m);
}

/* Writes the batch a "fuzz" command describes (proto_batch_parse has
 * checked it against the layout) into the record. */
static void worker_begin_batch(Worker *w, const ProtoBatch *b)
{
        RecordHeader *h = record_header(w->region);
        uint8_t none[MUTATOR_WEIGHTS] = {0};

        record_begin_batch(w->region, &w->layout, b->batch_id, b->mode, b->iters, b->seed,
                           b->chain_len, b->base_len, b->partner_len, b->table_len);
        record_set_mutation(w->region, b->len_limit, b->has_weights ? b->op_weights : none);
        h->first_exec = b->first;
        h->batch_flags = b->replay ? RECORD_BATCH_REPLAY : 0;
        if (w->leaks && b->leak_watch)
                h->batch_flags |= RECORD_BATCH_LEAK_WATCH;
        if (w->leaks && b->leak_check)
                h->batch_flags |= RECORD_BATCH_LEAK_CHECK;
        /* A history replay runs the dead runner's doubled iterations again. */
        h->n_reruns = b->n_reruns;
        memcpy(h->reruns, b->reruns, b->n_reruns * sizeof(h->reruns[0]));
        /* A history replay brings the comparison tables of the batch it
         * replays (already in place, like the payload). */
        h->cmp_gens = b->cmp_gens;
        /* Mutations call the target's custom mutator: the record says so,
         * so that only a process that loaded the target replays them. */
        uint32_t flags = 0;
        if (b->mode == RECORD_MODE_FUZZ && w->has_custom)
                flags |= custom_record_flags(&w->custom);
        if (b->mode == RECORD_MODE_FUZZ && b->packed)
                flags |= RECORD_F_PACKED;
        if (flags)
                record_set_flags(w->region, flags);
}

/* A "rebuild" command: the record in the region is another runner's,
 * copied there whole (wproc_rebuild); only what the runner reports back
 * is reset. */
static void worker_begin_rebuild(Worker *w)
{
        RecordHeader *h = record_header(w->region);
        memset(record_death(w->region), 0, sizeof(RecordDeath));
        record_finds(w->region, &w->layout)->capacity = RECORD_FINDS_SLOTS;
        record_finds(w->region, &w->layout)->used = 0;
        h->runner_state = RECORD_RUNNER_IDLE;
        h->new_features = 0;
        h->batch_flags = 0; /* the rebuild runs no leak checks, collects nothing */
}

/* The runner is reaped: what watched it goes. */
static void worker_runner_gone(Worker *w)
{
        sandbox_supervisor_free(w->run.sup);
        if (w->run.pidfd >= 0)
                close(w->run.pidfd);
        if (w->run.out_fd >= 0) {
                (void)worker_drain_output(w, w->run.out_fd);
                close(w->run.out_fd);
        }
        if (w->run.ctl_fd >= 0)
                close(w->run.ctl_fd);
        w->run.pid = 0;
        w->run.sup = NULL;
        w->run.pidfd = w->run.out_fd = w->run.ctl_fd = -1;
}

/* Ends a runner that is not running a batch (or must not go on). */
static void worker_retire_runner(Worker *w)
{
        if (w->run.pid <= 0)
                return;
        kill(-w->run.pid, SIGKILL);
        kill(w->run.pid, SIGKILL);
        int status;
        while (waitpid(w->run.pid, &status, 0) < 0 && errno == EINTR)
                ;
        worker_runner_gone(w);
}

/* Hands the batch now in the record to the waiting runner. False when it
 * is gone or cannot be told (the caller retires it and forks anew). */
static bool worker_runner_go(Worker *w)
{
        struct pollfd p = {.fd = w->run.pidfd, .events = POLLIN};
        if (w->run.ctl_fd < 0 || poll(&p, 1, 0) != 0)
                return false; /* ended while it waited */
        char c = RUNNER_CTL_GO;
        return write(w->run.ctl_fd, &c, 1) == 1;
}

/* The control socket of a runner that may take more than one batch (no
 * rebuild, a --runner-lifetime): both ends in @ctl, the runner's kept above
 * 2 (its 1 and 2 are its output); {-1, -1} when there is none. */
static void worker_runner_socket(const Worker *w, int rebuild, int ctl[2])
{
        ctl[0] = ctl[1] = -1;
        if (rebuild || w->args.runner_lifetime_ms == 0 ||
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0) {
                ctl[0] = ctl[1] = -1;
                return;
        }
        if (ctl[1] <= STDERR_FILENO) {
                int fd = fcntl(ctl[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
                close(ctl[1]);
                ctl[1] = fd;
        }
        if (ctl[1] < 0) {
                close(ctl[0]);
                ctl[0] = -1;
                return;
        }
        fcntl(ctl[0], F_SETFL, O_NONBLOCK);
}

/* Forks a runner for the batch in the record (worker/runner.h), with its
 * output pipe, control socket and sandbox supervisor. 0, or a negative
 * errno after telling whoever started us. */
static int worker_fork_runner(Worker *w, int rebuild)
{
        int out_pipe[2], ctl[2];
        SandboxSupervisor *sup = NULL;
        int r;

        if (pipe2(out_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                r = -errno;
                worker_send_error(w, PROTO_WHAT_INTERNAL, "cannot create the runner's output pipe");
                return r;
        }
        worker_runner_socket(w, rebuild, ctl);
        /* The runner's seccomp notifications (process creation, policy
         * directories, log mode) are ours to answer. */
        if (sandbox_supervisor_new(&sup, w->sandbox) < 0) {
                r = -EIO;
                worker_send_error(w, PROTO_WHAT_SANDBOX, "cannot set up the sandbox's supervisor");
                goto err_pipes;
        }

        int close_fds[] = {w->args.cmd_fd, w->args.evt_fd, w->args.shm_fd,
                           w->args.cov_fd, out_pipe[0],    ctl[0]};
        RunnerArgs ra = {
            .region = w->region,
            .layout = &w->layout,
            .coverage = w->coverage,
            .sandbox = w->sandbox,
            .test = w->test,
            .worker_pid = getpid(),
            .close_fds = close_fds,
            .n_close_fds = 6,
            .output_fd = out_pipe[1],
            .ctl_fd = ctl[1],
            .close_fd_mask = w->args.close_fd_mask,
            .lifetime_ns = (uint64_t)w->args.runner_lifetime_ms * 1000000u,
            .max_batches = w->args.runner_batches,
            .custom = w->has_custom ? &w->custom : NULL,
            .rebuild = rebuild,
            .confirm = w->args.sanitizer_confirm,
        };
        pid_t pid = fork();
        if (pid < 0) {
                r = -errno;
                worker_send_error(w, PROTO_WHAT_FORK, strerror(-r));
                goto err_supervisor;
        }
        if (pid == 0)
                runner_main(&ra);
        close(out_pipe[1]);
        if (ctl[1] >= 0)
                close(ctl[1]);
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        sandbox_supervisor_started(sup, pid, pidfd);
        w->run.pid = pid;
        w->run.pidfd = pidfd;
        w->run.out_fd = out_pipe[0];
        w->run.ctl_fd = ctl[0];
        w->run.sup = sup;
        return 0;

err_supervisor:
        sandbox_supervisor_free(sup);
err_pipes:
        close(out_pipe[0]);
        close(out_pipe[1]);
        if (ctl[0] >= 0) {
                close(ctl[0]);
                close(ctl[1]);
        }
        return r;
}

/* One batch's watch over its runner: which runner, and what was seen. */
typedef struct BatchWatch {
        pid_t pid;
        int pidfd;
        /* What the loop polls: out_fd is -1 once at end of file and ctl_fd
         * once closed (poll ignores a negative fd); w->run keeps the
         * descriptors to close. */
        int out_fd, ctl_fd;
        SandboxSupervisor *sup;
        bool forked;        /* the runner was forked for this batch */
        int64_t started_ns; /* when the runner was handed the batch */
        KillReason kill_reason;
        int64_t kill_deadline; /* SIGKILL after the stack dump's grace */
        uint64_t last_count;
        int64_t last_progress, next_rss; /* ms */
        /* The last two resident sizes seen (MB) and when (ms), for how fast
         * it grows; the largest one; and the end of a timeout's grace for
         * a runner that is on its way over the RSS limit (0: none). */
        long rss[2];
        int64_t rss_ms[2];
        long rss_max;
        int64_t grace_until;
        int status; /* the runner's wait status, once reaped */
        bool ended; /* the runner is gone (reaped) */
        bool done;  /* the batch ended and the runner waits for another */
} BatchWatch;

/* Gets a runner to run the batch now in the record: the one that waits for
 * a batch when @reuse_ok and the batch is a plain fuzz batch
 * (runner_batch_may_share) and it is still there; otherwise it goes, and a
 * fresh one is forked. Starts @bw's watch. 0 or a negative errno. */
static int worker_batch_start(Worker *w, BatchWatch *bw, int rebuild, bool reuse_ok,
                              bool leak_check)
{
        bool reuse = reuse_ok && runner_batch_may_share(record_header(w->region));
        if (w->run.pid > 0 && (!reuse || !worker_runner_go(w)))
                worker_retire_runner(w);
        *bw = (BatchWatch){.kill_reason = KILL_NONE};
        bw->started_ns = clock_now_ns();
        bw->forked = w->run.pid == 0;
        if (bw->forked) {
                int r = worker_fork_runner(w, rebuild);
                if (r < 0)
                        return r;
        }
        bw->pid = w->run.pid;
        bw->pidfd = w->run.pidfd;
        bw->out_fd = w->run.out_fd;
        bw->ctl_fd = w->run.ctl_fd;
        bw->sup = w->run.sup;
        if (leak_check)
                sandbox_supervisor_allow_leak_check(bw->sup);
        bw->last_progress = clock_now_ms();
        bw->next_rss = bw->last_progress + WORKER_RSS_EVERY_MS;
        return 0;
}

/* The runner wrote on its control socket. The batch ran to its end and the
 * runner waits for the next: one byte, RUNNER_CTL_DONE, and a record that
 * says so. Anything else ends the runner. True when the batch is done. */
static bool worker_watch_ctl(Worker *w, BatchWatch *bw)
{
        char c[8];
        ssize_t n = read(bw->ctl_fd, c, sizeof(c));
        uint32_t st = record_header(w->region)->runner_state;

        if (n == 1 && c[0] == RUNNER_CTL_DONE && bw->kill_reason == KILL_NONE &&
            (st == RECORD_RUNNER_DONE || st == RECORD_RUNNER_FULL)) {
                if (bw->out_fd >= 0 && !worker_drain_output(w, bw->out_fd))
                        bw->out_fd = -1;
                bw->done = true;
                return true;
        }
        if (n <= 0 && !(n < 0 && errno == EAGAIN))
                bw->ctl_fd = -1; /* closed: the runner is exiting */
        else
                kill(bw->pid, SIGKILL);
        return false;
}

/* Reaps the runner if it has ended. True when it has. */
static bool worker_watch_reaped(BatchWatch *bw)
{
        siginfo_t info = {0};

        if (waitid(P_PID, (id_t)bw->pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            info.si_pid != bw->pid)
                return false;
        /* Anything the target left in the runner's process group goes with
         * it (killed before the runner is reaped, so the group id cannot be
         * reused). */
        kill(-bw->pid, SIGKILL);
        waitpid(bw->pid, &bw->status, 0);
        bw->ended = true;
        return true;
}

/* A resident size seen: the last two are kept, for the growth rate. */
static void worker_rss_sample(BatchWatch *bw, long rss, int64_t now)
{
        if (rss < 0)
                return;
        bw->rss[0] = bw->rss[1];
        bw->rss_ms[0] = bw->rss_ms[1];
        bw->rss[1] = rss;
        bw->rss_ms[1] = now;
        if (rss > bw->rss_max)
                bw->rss_max = rss;
}

/*
 * How long a runner whose time ran out may go on to reach the RSS limit
 * (ms), or 0 when it is a hang: its resident size grows at a rate that
 * gets it over --rss-limit-mb within WORKER_OOM_GRACE_MAX_MS. It gets
 * half as long again as that takes, and a tick (worker_watch_limits): over
 * the limit it is `oom`, otherwise `timeout`. A hang that allocates
 * nothing, or too little to matter, is killed at its timeout as before.
 * The rate is measured from the last sample at least WORKER_RSS_EVERY_MS
 * / 2 old to a fresh one. Measured with tests/targets/grow.c (4 MiB every
 * 30 ms) under --rss-limit-mb 256 --timeout 1: 97-129 MB and 100-117 MB/s
 * when the second runs out, over the limit some 1.3 s later.
 */
static int64_t worker_rss_grace_ms(const Worker *w, BatchWatch *bw, int64_t now)
{
        long rss = worker_rss_mb(bw->pid);
        int j = now - bw->rss_ms[1] >= WORKER_RSS_EVERY_MS / 2 ? 1 : 0;
        if (rss < 0 || bw->rss_ms[j] == 0 || now <= bw->rss_ms[j])
                return 0;
        double mb_per_ms = (double)(rss - bw->rss[j]) / (double)(now - bw->rss_ms[j]);
        worker_rss_sample(bw, rss, now);
        if (mb_per_ms <= 0)
                return 0;
        double to_limit = (double)((long)w->args.rss_limit_mb - rss) / mb_per_ms;
        if (to_limit > WORKER_OOM_GRACE_MAX_MS)
                return 0;
        return (int64_t)(to_limit * 1.5) + WORKER_TICK_MS;
}

/* The limits a running runner must keep: progress within --timeout (a
 * rebuild within WORKER_REBUILD_MS) and --rss-limit-mb. A runner over one
 * is asked for a stack dump, then killed after WORKER_DUMP_GRACE_MS. A
 * runner out of time while its memory races toward the RSS limit gets the
 * time it needs to reach it (worker_rss_grace_ms), its memory watched
 * every tick meanwhile. */
static void worker_watch_limits(Worker *w, BatchWatch *bw)
{
        const RecordHeader *h = record_header(w->region);
        int64_t now = clock_now_ms();

        if (bw->kill_reason != KILL_NONE) {
                if (now >= bw->kill_deadline)
                        kill(bw->pid, SIGKILL);
                return;
        }
        /* Memory first: a runner over the RSS limit is out of memory
         * however long it took to get there (on a loaded machine the
         * worker may wake after the timeout has passed too). */
        if (w->args.rss_limit_mb && (now >= bw->next_rss || bw->grace_until)) {
                bw->next_rss = now + WORKER_RSS_EVERY_MS;
                long rss = worker_rss_mb(bw->pid);
                if (!bw->grace_until || now - bw->rss_ms[1] >= WORKER_RSS_EVERY_MS)
                        worker_rss_sample(bw, rss, now);
                if (rss > bw->rss_max)
                        bw->rss_max = rss;
                if (rss > (long)w->args.rss_limit_mb)
                        bw->kill_reason = KILL_OOM;
        }
        uint64_t count = __atomic_load_n(&h->count, __ATOMIC_RELAXED);
        if (count != bw->last_count) {
                bw->last_count = count;
                bw->last_progress = now;
                bw->grace_until = 0;
        } else if (bw->kill_reason == KILL_NONE && h->runner_state == RECORD_RUNNER_RUNNING &&
                   now - bw->last_progress >= (int64_t)w->args.timeout_ms) {
                int64_t grace = 0;
                if (!bw->grace_until && w->args.rss_limit_mb)
                        grace = worker_rss_grace_ms(w, bw, now);
                if (grace > 0)
                        bw->grace_until = now + grace;
                else if (!bw->grace_until || now >= bw->grace_until)
                        bw->kill_reason = KILL_TIMEOUT;
        }
        if (bw->kill_reason == KILL_NONE && h->runner_state == RECORD_RUNNER_REBUILDING &&
            now - bw->started_ns / 1000000 >= WORKER_REBUILD_MS)
                bw->kill_reason = KILL_TIMEOUT;
        if (bw->kill_reason != KILL_NONE) {
                kill(bw->pid, RUNNER_SIGNAL_DUMP);
                bw->kill_deadline = now + WORKER_DUMP_GRACE_MS;
        }
}

/* One round of the watch: waits up to WORKER_TICK_MS for the runner's end,
 * a command, its output, its sandbox supervisor or its control socket, and
 * acts on what came. True when the watch is over: the batch is done and the
 * runner waits for another, the runner is reaped, or poll failed. */
static bool worker_watch_step(Worker *w, BatchWatch *bw)
{
        struct pollfd p[5] = {
            {.fd = bw->pidfd, .events = POLLIN},
            {.fd = w->args.cmd_fd, .events = POLLIN},
            {.fd = bw->out_fd, .events = POLLIN},
            {.fd = sandbox_supervisor_fd(bw->sup), .events = POLLIN},
            {.fd = bw->ctl_fd, .events = POLLIN},
        };
        int pr = poll(p, 5, WORKER_TICK_MS);
        if (pr < 0 && errno != EINTR)
                return true;
        if (pr > 0 && (p[2].revents & (POLLIN | POLLHUP)) && !worker_drain_output(w, bw->out_fd))
                bw->out_fd = -1; /* end of file */
        if (pr > 0 && p[3].revents)
                (void)sandbox_supervisor_dispatch(bw->sup, worker_on_sandbox_event, w);
        if (pr > 0 && p[4].revents && worker_watch_ctl(w, bw))
                return true;
        if (worker_watch_reaped(bw))
                return true;
        if (pr > 0 && (p[1].revents & (POLLIN | POLLHUP)) && bw->kill_reason == KILL_NONE &&
            worker_command_during_batch(w)) {
                bw->kill_reason = KILL_STOP;
                kill(bw->pid, SIGKILL);
                return false;
        }
        worker_watch_limits(w, bw);
        return false;
}

/* After the watch: a reaped runner's leftovers go; a runner that is not
 * one to keep (a failed poll, a closed output) is ended. */
static void worker_batch_settle(Worker *w, const BatchWatch *bw)
{
        if (bw->ended)
                worker_runner_gone(w);
        else if (!bw->done || bw->out_fd < 0)
                worker_retire_runner(w);
}

/* A runner that was dying while it waited (killed from outside: its exit
 * takes a millisecond or more, and its socket and pidfd say nothing until
 * it is done) never started this batch: no input of it ran, and the batch
 * may go to a fresh runner. */
static bool worker_batch_never_started(Worker *w, const BatchWatch *bw)
{
        const RecordHeader *h = record_header(w->region);
        return bw->ended && !bw->forked && bw->kill_reason == KILL_NONE &&
               h->runner_state == RECORD_RUNNER_IDLE && h->count == 0;
}

/* A death the memory watch saw: the largest resident size seen (MB), the
 * limit, and whether it got there after its timeout (a blow-up, not a
 * hang). */
static void worker_add_rss(const Worker *w, const BatchWatch *bw, cJSON *m)
{
        if (!w->args.rss_limit_mb || bw->rss_max <= 0 ||
            (bw->kill_reason != KILL_OOM && bw->kill_reason != KILL_TIMEOUT))
                return;
        cJSON_AddNumberToObject(m, "rss_mb", (double)bw->rss_max);
        cJSON_AddNumberToObject(m, "rss_limit_mb", w->args.rss_limit_mb);
        if (bw->kill_reason == KILL_OOM && bw->grace_until)
                cJSON_AddBoolToObject(m, "after_timeout", 1);
}

/* Tells whoever started us how the batch ended: "done", or "died" with the
 * cause, the symbolized stack, the target's last output and the sandbox.
 * 0 or a negative errno (-EPERM: the runner could not set up its sandbox,
 * reported as an error instead). */
static int worker_report_end(Worker *w, const BatchWatch *bw)
{
        const RecordHeader *h = record_header(w->region);
        double elapsed = (double)(clock_now_ns() - bw->started_ns) / 1e6;
        RecordFinds *finds = record_finds(w->region, &w->layout);
        uint32_t n_finds = __atomic_load_n(&finds->used, __ATOMIC_ACQUIRE);
        uint32_t state = h->runner_state;
        int status = bw->status;
        cJSON *m;

        if (n_finds > RECORD_FINDS_SLOTS)
                n_finds = RECORD_FINDS_SLOTS;
        bool clean = bw->kill_reason == KILL_NONE &&
                     (bw->done || (bw->ended && WIFEXITED(status) &&
                                   WEXITSTATUS(status) == RUNNER_EXIT_DONE)) &&
                     (state == RECORD_RUNNER_DONE || state == RECORD_RUNNER_FULL);
        if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_SETUP &&
            state == RECORD_RUNNER_STARTING) {
                worker_send_error(w, PROTO_WHAT_SANDBOX, "the runner could not set up its sandbox");
                return -EPERM;
        }
        ProtoEnd end = {
            .died = !clean,
            .batch_id = h->batch_id,
            .count = __atomic_load_n(&h->count, __ATOMIC_RELAXED),
            .iters = h->iters,
            .finds = n_finds,
            .new_features = h->new_features,
            .elapsed_ms = elapsed,
            .forked = bw->forked,
            .loop_ms = clean ? (double)h->loop_ns / 1e6 : 0,
            .reason = kill_reason_str(bw->kill_reason),
            .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
            .exit_code = !WIFSIGNALED(status) && WIFEXITED(status) ? WEXITSTATUS(status) : -1,
            .runner_state = state,
        };
        int r = proto_end_build(&end, &m);
        if (r < 0)
                return r;
        if (!clean) {
                worker_add_death(w, m, record_death(w->region));
                sandbox_describe_refusal(w->sandbox, cJSON_GetObjectItemCaseSensitive(m, "death"));
                worker_add_output(w, m);
                worker_add_rss(w, bw, m);
                /* What confined the runner, for crash.json and reproduce. */
                cJSON_AddItemToObject(m, "sandbox", sandbox_describe(w->sandbox));
        }
        r = msg_send(w->args.evt_fd, m);
        cJSON_Delete(m);
        return r;
}

/* Runs one batch: the "fuzz" command @b, or (@rebuild non-zero, @b all
 * zero) a rebuild of kind @rebuild, whose record is already in place. 0 or a negative errno
 * (-EPIPE: whoever started us is gone). */
static int worker_run_batch(Worker *w, const ProtoBatch *b, int rebuild)
{
        bool retried = false;
        BatchWatch bw;
        int r;

        if (rebuild)
                worker_begin_rebuild(w);
        else
                worker_begin_batch(w, b);
        bool leak_check = (record_header(w->region)->batch_flags & RECORD_BATCH_LEAK_CHECK) != 0;
        w->out_len = 0;
        w->quiet = b->quiet;
        for (;;) {
                r = worker_batch_start(w, &bw, rebuild, !retried && !rebuild && !b->fresh,
                                       leak_check);
                if (r < 0)
                        return r;
                while (!worker_watch_step(w, &bw))
                        ;
                worker_batch_settle(w, &bw);
                /* A batch that never started goes to a fresh runner, once. */
                if (retried || !worker_batch_never_started(w, &bw))
                        break;
                retried = true;
                memset(record_death(w->region), 0, sizeof(RecordDeath));
        }
        outsink_notice(&w->sink, false);
        return worker_report_end(w, &bw);
}

/* One command between batches. 0 or a negative errno (-EPIPE: whoever
 * started us is gone; -EPROTO: the command made no sense, and we said so). */
static int worker_command(Worker *w, const cJSON *m)
{
        ProtoBatch b;
        uint32_t how;

        if (proto_is(m, PROTO_FUZZ)) {
                if (proto_batch_parse(m, &w->layout, &b) < 0)
                        goto bad_command;
                return worker_run_batch(w, &b, 0);
        }
        if (proto_is(m, PROTO_REBUILD)) {
                if (proto_rebuild_parse(m, &how) < 0)
                        goto bad_command;
                /* A rebuild's record is already in place: no batch to
                 * write, nothing to show, never a fresh-runner request. */
                static const ProtoBatch none;
                return worker_run_batch(w, &none, (int)how);
        }
        if (proto_is(m, PROTO_PING)) {
                worker_send_pong(w);
                return 0;
        }
        if (proto_is(m, PROTO_STOP)) {
                w->stopping = 1;
                return 0;
        }
        if (proto_is(m, PROTO_QUIET_REFUSAL)) {
                /* A refusal the coordinator has had reported. */
                (void)sandbox_quiet(w->sandbox, cJSON_GetObjectItemCaseSensitive(m, "refusal"));
                return 0;
        }
        worker_send_error(w, PROTO_WHAT_PROTOCOL, "unknown command");
        return 0;

bad_command:
        worker_send_error(w, PROTO_WHAT_PROTOCOL, "bad batch parameters");
        return -EPROTO;
}

/* Takes commands until told to stop or whoever started us goes. 0, or
 * -EPROTO (a broken pipe, a malformed message). */
static int worker_serve(Worker *w)
{
        for (;;) {
                cJSON *m = NULL;
                int r = msg_recv(&w->reader, &m, -1);
                if (r < 0)
                        return r == -EPIPE ? 0 : -EPROTO;
                if (r == 0)
                        continue;
                r = worker_command(w, m);
                cJSON_Delete(m);
                if (r == -EPIPE || w->stopping)
                        return 0;
        }
}

/* Maps the shared record and coverage map and creates the sandbox, before
 * the target is loaded. 0 or a negative errno, after telling whoever
 * started us. */
static int worker_setup(Worker *w)
{
        char err[512];
        SandboxMode mode = SANDBOX_STRICT;
        int r;

        w->region = mmap(NULL, w->layout.region_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                         w->args.shm_fd, 0);
        if (w->region == MAP_FAILED) {
                r = -errno;
                worker_send_error(w, PROTO_WHAT_INTERNAL, "cannot map the shared record");
                return r;
        }
        r = coverage_shared_map(w->args.cov_fd, &w->coverage);
        if (r < 0) {
                worker_send_error(w, PROTO_WHAT_INTERNAL, "cannot map the coverage map");
                return r;
        }
        runner_prepare();
        if (w->args.sandbox)
                (void)sandbox_mode_parse(w->args.sandbox, &mode); /* checked by proto_args_parse */
        SandboxOptions so = {
            .mode = mode,
            .policy_json = w->args.sandbox_policy,
            .memory_limit_mb = w->args.rss_limit_mb,
            .leak_check = w->args.detect_leaks,
        };
        r = sandbox_new_with(&w->sandbox, &so, err, sizeof(err));
        if (r < 0)
                worker_send_error(w, PROTO_WHAT_SANDBOX, err);
        return r;
}

/* The target's calls to comparison hooks that do nothing in this run are
 * removed (worker/cmpsites.h). A failure is said, not fatal: the calls
 * left in place still reach the hooks. */
static void worker_cmpsites(Worker *w)
{
        unsigned patched = 0;
        if (!w->handle)
                return;
        int r = cmpsites_patch_idle(w->handle, w->args.value_profile, &patched);
        if (r < 0)
                fprintf(stderr,
                        "snapfuzz: warning: %s: cannot remove the calls to idle comparison "
                        "hooks: %s\n",
                        w->args.target, strerror(-r));
}

/* After the target's initialization, which runs with the worker's full
 * view of the host (files, network): the sandbox is made ready for the
 * runners. 0 or a negative errno, after telling whoever started us. */
static int worker_prepare(Worker *w)
{
        char err[512];

        w->leaks = w->args.detect_leaks && runner_leaks_prepare();
        int r = sandbox_prepare(w->sandbox);
        if (r < 0) {
                snprintf(err, sizeof(err), "cannot prepare the sandbox: %s", strerror(-r));
                worker_send_error(w, PROTO_WHAT_SANDBOX, err);
                return r;
        }
        if (w->args.value_profile)
                cmplog_value_profile_enable();
        cmplog_eq_enable();
        worker_cmpsites(w);
        stackdepth_enable();
        if (w->coverage->counters == 0)
                w->coverage->counters = coverage_counters();
        return 0;
}

static int worker_say_hello(Worker *w)
{
        ProtoHello h = {
            .pid = getpid(),
            .counters = coverage_counters(),
            .target_counters = coverage_target_counters(),
            .custom_mutator = w->custom.mutate != NULL,
            .custom_crossover = w->custom.crossover != NULL,
            /* Leak checks need LeakSanitizer and a sandbox that lets it work. */
            .leaks = w->leaks && sandbox_can_check_leaks(w->sandbox),
        };
        cJSON *m;
        int r = proto_hello_build(&h, &m);
        if (r < 0)
                return r;
        cJSON_AddItemToObject(m, "sandbox", sandbox_describe(w->sandbox));
        r = msg_send(w->args.evt_fd, m);
        cJSON_Delete(m);
        return r;
}

int worker_main(int argc, char **argv)
{
        Worker w = {0};
        char err[512];
        int r;
        w.run.pidfd = w.run.out_fd = w.run.ctl_fd = -1;

        /* The worker lives exactly as long as whoever started it; Ctrl-C is
         * the coordinator's to handle. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);

        /* Nobody to tell but stderr: without its arguments the worker
         * does not know its event pipe. */
        r = proto_args_parse(argc, argv, 0, &w.args, err, sizeof(err));
        if (r == 0 && record_layout(w.args.max_len, &w.layout) < 0) {
                snprintf(err, sizeof(err), "no record layout for --max-len %zu", w.args.max_len);
                r = -EINVAL;
        }
        if (r < 0) {
                fprintf(stderr, "snapfuzz: error: __worker: %s\n", err);
                return WORKER_EXIT_PROTOCOL;
        }
        if (w.args.timeout_ms == 0)
                w.args.timeout_ms = 1000;
        msg_reader_init(&w.reader, w.args.cmd_fd);
        OutsinkMode out_mode = OUTSINK_PASS;
        (void)outsink_mode_parse(w.args.target_output, &out_mode); /* checked by proto_args_parse */
        outsink_init(&w.sink, out_mode, w.args.output_log, STDERR_FILENO);

        if (worker_setup(&w) < 0)
                return WORKER_EXIT_INTERNAL;
        if (worker_load(&w) < 0)
                return WORKER_EXIT_LOAD;
        if (worker_prepare(&w) < 0)
                return WORKER_EXIT_INTERNAL;
        if (worker_say_hello(&w) < 0)
                return WORKER_EXIT_PROTOCOL;
        r = worker_serve(&w);
        outsink_deinit(&w.sink);
        return r < 0 ? WORKER_EXIT_PROTOCOL : WORKER_EXIT_OK;
}
