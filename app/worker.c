/*
 * The fork server. This is the one module that forks without exec: a runner
 * must start from the exact state the target's initialization left (that
 * is the snapshot, and what makes a runner's death cost one fork instead of
 * a process start). A runner child may touch only the shared record, the
 * coverage map, and memory inherited copy-on-write; it must not use the
 * worker's pipes, which it closes before running any target code.
 *
 * Per batch the worker seals the record, hands it to the runner that waits
 * for one (a plain fuzz batch, app/runner.h) or forks a runner, and
 * supervises it with a pidfd: it watches the record's count for hangs (--timeout) and the
 * runner's resident memory (--rss-limit-mb), asks for a stack dump before
 * killing, and reports either "done" (with the inputs that found coverage,
 * left in the record's finds area) or "died" (with the cause and the
 * symbolized stack) to whoever started it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
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
#include "app/runner.h"
#include "app/worker.h"
#include "core/cmplog.h"
#include "core/coverage.h"
#include "core/msg.h"
#include "core/wproc.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervisor.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"
#include "snapfuzz/target.h"

#include "snapfuzz/banned.h"

#define WORKER_TICK_MS 20
#define WORKER_RSS_EVERY_MS 100
#define WORKER_DUMP_GRACE_MS 1000
#define WORKER_OUTPUT_TAIL 16384
#define WORKER_OUTPUT_REPORT 4096 /* what the "output" field keeps */
#define WORKER_REPORT_MAX 8192
/* How long rebuilding one input with a custom mutator may take (it may
 * replay a whole batch's mutations from its seed). */
#define WORKER_REBUILD_MS 30000

typedef struct Worker {
        WprocConfig cfg;
        SandboxMode sandbox_mode;
        int cmd_fd, evt_fd, shm_fd, cov_fd;
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
        int quiet;  /* this batch's output is kept for the report only */
        bool leaks; /* LeakSanitizer is loaded and its allocation hooks count */
        /* The runner, between fork and reaping: during a batch, and
         * between batches while it waits for the next (pid 0: none). */
        struct {
                pid_t pid;
                int pidfd, out_fd, ctl_fd;
                SandboxSupervisor *sup;
        } run;
} Worker;

static void worker_send_error(Worker *w, const char *what, const char *message)
{
        cJSON *m = msg_new("error");
        if (!m)
                return;
        cJSON_AddStringToObject(m, "what", what);
        cJSON_AddStringToObject(m, "message", message);
        (void)msg_send(w->evt_fd, m);
        cJSON_Delete(m);
}

static int worker_load(Worker *w)
{
        char msg[1024];

        w->handle = dlopen(w->cfg.target, RTLD_NOW | RTLD_LOCAL);
        if (!w->handle) {
                const char *e = dlerror();
                worker_send_error(w, "load", e ? e : "dlopen failed");
                return -ENOEXEC;
        }
        w->test = (TargetTestOneInput)dlsym(w->handle, TARGET_SYM_TEST);
        if (!w->test) {
                snprintf(msg, sizeof(msg), "%s does not export %s", w->cfg.target, TARGET_SYM_TEST);
                worker_send_error(w, "entry", msg);
                return -ENOENT;
        }
        w->has_custom = custom_lookup(w->handle, &w->custom);
        TargetInitialize init = (TargetInitialize)dlsym(w->handle, TARGET_SYM_INIT);
        if (init) {
                static char *argv_store[2];
                argv_store[0] = (char *)w->cfg.target;
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
                unsigned idx;
                unsigned long long pc;

                if (!eol)
                        eol = end;
                n = (size_t)(eol - line) < sizeof(buf) - 1 ? (size_t)(eol - line) : sizeof(buf) - 1;
                memcpy(buf, line, n);
                buf[n] = 0;
                if (sscanf(buf, " #%u 0x%llx", &idx, &pc) != 2)
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
        unsigned long size, resident;
        if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
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

/* Handles a command that arrives while a runner is alive: only "stop" and
 * "ping" make sense then. Returns 1 when the batch must be abandoned. */
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
                const char *type = msg_str(m, "type", "");
                if (strcmp(type, "stop") == 0)
                        w->stopping = 1;
                else if (strcmp(type, "ping") == 0) {
                        cJSON *p = msg_new("pong");
                        if (p)
                                (void)msg_send(w->evt_fd, p);
                        cJSON_Delete(p);
                }
                cJSON_Delete(m);
                if (w->stopping)
                        return 1;
        }
}

/* Drains the runner's output pipe: forwards it to our stderr (as libFuzzer
 * shows a target's output) and keeps the tail for the crash report. The
 * runner writes into a pipe rather than our stderr because its file-size
 * limit is 0: writing to a stderr that is a regular file would kill it. */
static int worker_drain_output(Worker *w, int fd)
{
        char buf[4096];
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n == 0 ? 0 : (errno == EAGAIN ? 1 : 0);
                if (!w->quiet) {
                        ssize_t wr = write(STDERR_FILENO, buf, (size_t)n);
                        (void)wr;
                }
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
            "ERROR: AddressSanitizer",       "ERROR: LeakSanitizer", "ERROR: MemorySanitizer",
            "ERROR: ThreadSanitizer",        "runtime error: ",      "ERROR: HWAddressSanitizer",
            "ERROR: snapfuzz: malloc-limit",
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
        cJSON *m = msg_new("sandbox");
        const cJSON *field;

        if (!m)
                return;
        cJSON_ArrayForEach(field, event)
            cJSON_AddItemToObject(m, field->string, cJSON_Duplicate(field, 1));
        (void)msg_send(w->evt_fd, m);
        cJSON_Delete(m);
}

/* Writes the batch a "fuzz" command describes into the record. */
static int worker_begin_batch(Worker *w, const cJSON *cmd)
{
        RecordHeader *h = record_header(w->region);
        uint64_t iters = (uint64_t)msg_int(cmd, "iters", 1);
        const char *seed_s = msg_str(cmd, "seed", "0");
        uint64_t seed = strtoull(seed_s, NULL, 16);
        int64_t base_len = msg_int(cmd, "base_len", 0);
        int64_t partner_len = msg_int(cmd, "partner_len", 0);
        int64_t table_len = msg_int(cmd, "table_len", 0);
        int64_t chain_len = msg_int(cmd, "chain_len", 4);
        const char *mode_s = msg_str(cmd, "mode", "fuzz");
        RecordMode mode = strcmp(mode_s, "exec") == 0    ? RECORD_MODE_EXEC
                          : strcmp(mode_s, "seeds") == 0 ? RECORD_MODE_SEEDS
                                                         : RECORD_MODE_FUZZ;

        if (iters == 0 || base_len < 0 || (uint64_t)base_len > w->layout.area_len ||
            partner_len < 0 || (uint64_t)partner_len > w->layout.area_len || table_len < 0 ||
            table_len > RECORD_TABLE_BYTES || chain_len <= 0 || chain_len > 1024) {
                worker_send_error(w, "protocol", "bad batch parameters");
                return -EPROTO;
        }
        record_begin_batch(w->region, &w->layout, (uint64_t)msg_int(cmd, "batch_id", 0), mode,
                           iters, seed, (uint32_t)chain_len, (uint32_t)base_len,
                           (uint32_t)partner_len, (uint32_t)table_len);
        uint8_t weights[MUTATOR_WEIGHTS] = {0};
        const char *hex = msg_str(cmd, "op_weights", "");
        for (unsigned i = 0; i < MUTATOR_WEIGHTS && hex[2 * i] && hex[2 * i + 1]; i++) {
                char byte[3] = {hex[2 * i], hex[2 * i + 1], 0};
                weights[i] = (uint8_t)strtoul(byte, NULL, 16);
        }
        int64_t len_limit = msg_int(cmd, "len_limit", 0);
        record_set_mutation(
            w->region,
            len_limit > 0 && (uint64_t)len_limit <= w->layout.max_len ? (uint32_t)len_limit : 0,
            weights);
        h->first_exec = (uint64_t)msg_int(cmd, "first", 1);
        h->batch_flags = msg_bool(cmd, "replay", 0) ? RECORD_BATCH_REPLAY : 0;
        bool leak_check = w->leaks && msg_bool(cmd, "leak_check", 0);
        if (w->leaks && msg_bool(cmd, "leak_watch", 0))
                h->batch_flags |= RECORD_BATCH_LEAK_WATCH;
        if (leak_check)
                h->batch_flags |= RECORD_BATCH_LEAK_CHECK;
        /* A history replay runs the dead runner's doubled iterations again. */
        h->n_reruns = 0;
        const cJSON *reruns = cJSON_GetObjectItemCaseSensitive(cmd, "reruns");
        const cJSON *rr;
        cJSON_ArrayForEach(rr, reruns)
        {
                if (h->n_reruns < RECORD_MAX_RERUNS && cJSON_IsNumber(rr))
                        h->reruns[h->n_reruns++] = (uint64_t)rr->valuedouble;
        }
        /* A history replay brings the comparison tables of the batch it
         * replays (already in place, like the payload). */
        int64_t cmp_gens = msg_int(cmd, "cmp_gens", 0);
        h->cmp_gens = cmp_gens > 0 && cmp_gens <= RECORD_CMP_TABLES ? (uint32_t)cmp_gens : 0;
        /* Mutations call the target's custom mutator: the record says so,
         * so that only a process that loaded the target replays them. */
        uint32_t flags = 0;
        if (mode == RECORD_MODE_FUZZ && w->has_custom)
                flags |= custom_record_flags(&w->custom);
        if (mode == RECORD_MODE_FUZZ && msg_bool(cmd, "packed", 0))
                flags |= RECORD_F_PACKED;
        if (flags)
                record_set_flags(w->region, flags);
        return 0;
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

/* Forks a runner for the batch in the record (app/runner.h), with its
 * output pipe, control socket and sandbox supervisor. */
static int worker_fork_runner(Worker *w, int rebuild)
{
        int out_pipe[2], ctl[2] = {-1, -1};
        if (pipe2(out_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
                worker_send_error(w, "internal", "cannot create the runner's output pipe");
                return -errno;
        }
        /* A rebuild runs one batch; a batch that may be followed by more
         * gets the control socket, kept above 2 (the runner's 1 and 2 are
         * its output). */
        if (!rebuild && w->cfg.runner_lifetime_ms > 0 &&
            socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == 0 &&
            ctl[1] <= STDERR_FILENO) {
                int fd = fcntl(ctl[1], F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
                close(ctl[1]);
                ctl[1] = fd;
        }
        if (ctl[0] >= 0 && ctl[1] < 0) {
                close(ctl[0]);
                ctl[0] = -1;
        }
        if (ctl[0] >= 0)
                fcntl(ctl[0], F_SETFL, O_NONBLOCK);

        /* The runner's seccomp notifications (process creation, policy
         * directories, log mode) are ours to answer. */
        SandboxSupervisor *sup = NULL;
        if (sandbox_supervisor_new(&sup, w->sandbox) < 0) {
                close(out_pipe[0]);
                close(out_pipe[1]);
                if (ctl[0] >= 0) {
                        close(ctl[0]);
                        close(ctl[1]);
                }
                worker_send_error(w, "sandbox", "cannot set up the sandbox's supervisor");
                return -EIO;
        }

        int close_fds[] = {w->cmd_fd, w->evt_fd, w->shm_fd, w->cov_fd, out_pipe[0], ctl[0]};
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
            .lifetime_ns = (uint64_t)w->cfg.runner_lifetime_ms * 1000000u,
            .custom = w->has_custom ? &w->custom : NULL,
            .rebuild = rebuild,
        };
        pid_t pid = fork();
        if (pid < 0) {
                int e = errno;
                close(out_pipe[0]);
                close(out_pipe[1]);
                if (ctl[0] >= 0) {
                        close(ctl[0]);
                        close(ctl[1]);
                }
                sandbox_supervisor_free(sup);
                worker_send_error(w, "fork", strerror(e));
                return -e;
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
}

static int worker_run_batch(Worker *w, const cJSON *cmd)
{
        RecordHeader *h = record_header(w->region);
        int rebuild = 0;
        if (strcmp(msg_str(cmd, "type", ""), "rebuild") == 0)
                rebuild = strcmp(msg_str(cmd, "from", "slot"), "seed") == 0 ? RECORD_REBUILT_SEED
                                                                            : RECORD_REBUILT_SLOT;
        if (rebuild) {
                worker_begin_rebuild(w);
        } else {
                int r = worker_begin_batch(w, cmd);
                if (r < 0)
                        return r;
        }
        bool leak_check = (h->batch_flags & RECORD_BATCH_LEAK_CHECK) != 0;
        w->out_len = 0;
        w->quiet = msg_bool(cmd, "quiet", 0);

        /* A runner that waits for a batch takes this one if it is a plain
         * fuzz batch (runner_batch_may_share) and it is still there;
         * otherwise it goes, and a fresh one is forked. */
        bool retried = false;
retry:;
        bool reuse =
            !retried && !rebuild && !msg_bool(cmd, "fresh", 0) && runner_batch_may_share(h);
        if (w->run.pid > 0 && (!reuse || !worker_runner_go(w)))
                worker_retire_runner(w);
        int64_t started_ns = clock_now_ns(), started = started_ns / 1000000;
        bool forked = w->run.pid == 0;
        if (forked) {
                int r = worker_fork_runner(w, rebuild);
                if (r < 0)
                        return r;
        }
        pid_t pid = w->run.pid;
        int pidfd = w->run.pidfd, out_fd = w->run.out_fd, ctl_fd = w->run.ctl_fd;
        SandboxSupervisor *sup = w->run.sup;
        if (leak_check)
                sandbox_supervisor_allow_leak_check(sup);

        KillReason kill_reason = KILL_NONE;
        int64_t kill_deadline = 0;
        uint64_t last_count = 0;
        int64_t last_progress = clock_now_ms();
        int64_t next_rss = last_progress + WORKER_RSS_EVERY_MS;
        int status = 0;
        bool ended = false; /* the runner is gone (reaped) */
        bool done = false;  /* the batch ended and the runner waits for another */

        for (;;) {
                struct pollfd p[5] = {
                    {.fd = pidfd, .events = POLLIN},
                    {.fd = w->cmd_fd, .events = POLLIN},
                    {.fd = out_fd, .events = POLLIN},
                    {.fd = sandbox_supervisor_fd(sup), .events = POLLIN},
                    {.fd = ctl_fd, .events = POLLIN},
                };
                int pr = poll(p, 5, WORKER_TICK_MS);
                if (pr < 0 && errno != EINTR)
                        break;
                if (pr > 0 && (p[2].revents & (POLLIN | POLLHUP)) &&
                    !worker_drain_output(w, out_fd))
                        out_fd = -1; /* end of file: poll ignores a negative fd */
                if (pr > 0 && p[3].revents)
                        (void)sandbox_supervisor_dispatch(sup, worker_on_sandbox_event, w);
                if (pr > 0 && p[4].revents) {
                        /* The batch ran to its end and the runner waits for
                         * the next: one byte, RUNNER_CTL_DONE, and a record
                         * that says so. Anything else ends the runner. */
                        char c[8];
                        ssize_t n = read(ctl_fd, c, sizeof(c));
                        uint32_t st = h->runner_state;
                        if (n == 1 && c[0] == RUNNER_CTL_DONE && kill_reason == KILL_NONE &&
                            (st == RECORD_RUNNER_DONE || st == RECORD_RUNNER_FULL)) {
                                if (out_fd >= 0 && !worker_drain_output(w, out_fd))
                                        out_fd = -1;
                                done = true;
                                break;
                        }
                        if (n <= 0 && !(n < 0 && errno == EAGAIN))
                                ctl_fd = -1; /* closed: the runner is exiting */
                        else
                                kill(pid, SIGKILL);
                }
                siginfo_t info = {0};
                if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    info.si_pid == pid) {
                        /* Anything the target left in the runner's process
                         * group goes with it (killed before the runner is
                         * reaped, so the group id cannot be reused). */
                        kill(-pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        ended = true;
                        break;
                }
                if (pr > 0 && (p[1].revents & (POLLIN | POLLHUP)) && kill_reason == KILL_NONE &&
                    worker_command_during_batch(w)) {
                        kill_reason = KILL_STOP;
                        kill(pid, SIGKILL);
                        continue;
                }
                int64_t now = clock_now_ms();
                if (kill_reason != KILL_NONE) {
                        if (now >= kill_deadline)
                                kill(pid, SIGKILL);
                        continue;
                }
                /* Memory first: a runner over the RSS limit is out of memory
                 * however long it took to get there (on a loaded machine the
                 * worker may wake after the timeout has passed too). */
                if (w->cfg.rss_limit_mb && now >= next_rss) {
                        next_rss = now + WORKER_RSS_EVERY_MS;
                        long rss = worker_rss_mb(pid);
                        if (rss > (long)w->cfg.rss_limit_mb)
                                kill_reason = KILL_OOM;
                }
                uint64_t count = __atomic_load_n(&h->count, __ATOMIC_RELAXED);
                if (count != last_count) {
                        last_count = count;
                        last_progress = now;
                } else if (kill_reason == KILL_NONE && h->runner_state == RECORD_RUNNER_RUNNING &&
                           now - last_progress >= (int64_t)w->cfg.timeout_ms) {
                        kill_reason = KILL_TIMEOUT;
                }
                if (kill_reason == KILL_NONE && h->runner_state == RECORD_RUNNER_REBUILDING &&
                    now - started >= WORKER_REBUILD_MS)
                        kill_reason = KILL_TIMEOUT;
                if (kill_reason != KILL_NONE) {
                        kill(pid, RUNNER_SIGNAL_DUMP);
                        kill_deadline = now + WORKER_DUMP_GRACE_MS;
                }
        }
        /* out_fd is what the loop polls (-1 once at end of file);
         * w->run.out_fd stays the descriptor to close. */
        if (ended)
                worker_runner_gone(w);
        else if (!done || out_fd < 0)
                worker_retire_runner(w); /* not one to keep: a failed poll, a closed output */
        /* A runner that was dying while it waited (killed from outside:
         * its exit takes a millisecond or more, and its socket and pidfd
         * say nothing until it is done) never started this batch: no input
         * of it ran. The batch goes to a fresh runner, once. */
        if (ended && !forked && !retried && kill_reason == KILL_NONE &&
            h->runner_state == RECORD_RUNNER_IDLE && h->count == 0) {
                retried = true;
                memset(record_death(w->region), 0, sizeof(RecordDeath));
                goto retry;
        }

        double elapsed = (double)(clock_now_ns() - started_ns) / 1e6;
        RecordFinds *finds = record_finds(w->region, &w->layout);
        uint32_t n_finds = __atomic_load_n(&finds->used, __ATOMIC_ACQUIRE);
        if (n_finds > RECORD_FINDS_SLOTS)
                n_finds = RECORD_FINDS_SLOTS;
        uint32_t state = h->runner_state;
        int clean =
            kill_reason == KILL_NONE &&
            (done || (ended && WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_DONE)) &&
            (state == RECORD_RUNNER_DONE || state == RECORD_RUNNER_FULL);
        if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_SETUP &&
            state == RECORD_RUNNER_STARTING) {
                worker_send_error(w, "sandbox", "the runner could not set up its sandbox");
                return -EPERM;
        }

        cJSON *m = msg_new(clean ? "done" : "died");
        if (!m)
                return -ENOMEM;
        cJSON_AddNumberToObject(m, "batch_id", (double)h->batch_id);
        cJSON_AddNumberToObject(m, "count", (double)__atomic_load_n(&h->count, __ATOMIC_RELAXED));
        cJSON_AddNumberToObject(m, "iters", (double)h->iters);
        cJSON_AddNumberToObject(m, "finds", n_finds);
        cJSON_AddNumberToObject(m, "new_features", (double)h->new_features);
        cJSON_AddNumberToObject(m, "elapsed_ms", elapsed);
        cJSON_AddBoolToObject(m, "forked", forked);
        if (clean)
                cJSON_AddNumberToObject(m, "loop_ms", (double)h->loop_ns / 1e6);
        if (!clean) {
                cJSON_AddStringToObject(m, "reason", kill_reason_str(kill_reason));
                if (WIFSIGNALED(status)) {
                        cJSON_AddNumberToObject(m, "signal", WTERMSIG(status));
                } else if (WIFEXITED(status)) {
                        cJSON_AddNumberToObject(m, "exit_code", WEXITSTATUS(status));
                }
                cJSON_AddNumberToObject(m, "runner_state", state);
                worker_add_death(w, m, record_death(w->region));
                worker_add_output(w, m);
                /* What confined the runner, for crash.json and reproduce. */
                cJSON_AddItemToObject(m, "sandbox", sandbox_describe(w->sandbox));
        }
        int r = msg_send(w->evt_fd, m);
        cJSON_Delete(m);
        return r;
}

static int worker_parse_args(Worker *w, int argc, char **argv)
{
        static const struct option opts[] = {
            {"target", required_argument, NULL, 't'},
            {"cmd-fd", required_argument, NULL, 'c'},
            {"evt-fd", required_argument, NULL, 'e'},
            {"shm-fd", required_argument, NULL, 's'},
            {"cov-fd", required_argument, NULL, 'v'},
            {"max-len", required_argument, NULL, 'm'},
            {"timeout-ms", required_argument, NULL, 'T'},
            {"rss-limit-mb", required_argument, NULL, 'r'},
            {"sandbox", required_argument, NULL, 'x'},
            {"sandbox-policy", required_argument, NULL, 'p'},
            {"value-profile", required_argument, NULL, 'V'},
            {"detect-leaks", required_argument, NULL, 'L'},
            {"runner-lifetime-ms", required_argument, NULL, 'R'},
            {0},
        };
        int c;
        w->cmd_fd = w->evt_fd = w->shm_fd = w->cov_fd = -1;
        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 't':
                        w->cfg.target = optarg;
                        break;
                case 'c':
                        w->cmd_fd = atoi(optarg);
                        break;
                case 'e':
                        w->evt_fd = atoi(optarg);
                        break;
                case 's':
                        w->shm_fd = atoi(optarg);
                        break;
                case 'v':
                        w->cov_fd = atoi(optarg);
                        break;
                case 'm':
                        w->cfg.max_len = strtoul(optarg, NULL, 10);
                        break;
                case 'T':
                        w->cfg.timeout_ms = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        w->cfg.rss_limit_mb = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                case 'x':
                        w->cfg.sandbox = optarg;
                        if (sandbox_mode_parse(optarg, &w->sandbox_mode) < 0)
                                return -EINVAL;
                        break;
                case 'p':
                        w->cfg.sandbox_policy = optarg;
                        break;
                case 'V':
                        w->cfg.value_profile = strcmp(optarg, "1") == 0;
                        break;
                case 'L':
                        w->cfg.detect_leaks = strcmp(optarg, "1") == 0;
                        break;
                case 'R':
                        w->cfg.runner_lifetime_ms = (unsigned)strtoul(optarg, NULL, 10);
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (!w->cfg.target || w->cmd_fd < 0 || w->evt_fd < 0 || w->shm_fd < 0 || w->cov_fd < 0 ||
            record_layout(w->cfg.max_len, &w->layout) < 0)
                return -EINVAL;
        if (w->cfg.timeout_ms == 0)
                w->cfg.timeout_ms = 1000;
        return 0;
}

int worker_main(int argc, char **argv)
{
        Worker w = {0};
        int r;
        w.run.pidfd = w.run.out_fd = w.run.ctl_fd = -1;

        /* The worker lives exactly as long as whoever started it; Ctrl-C is
         * the coordinator's to handle. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);

        if (worker_parse_args(&w, argc, argv) < 0)
                return WORKER_EXIT_PROTOCOL;
        msg_reader_init(&w.reader, w.cmd_fd);

        w.region =
            mmap(NULL, w.layout.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, w.shm_fd, 0);
        if (w.region == MAP_FAILED) {
                worker_send_error(&w, "internal", "cannot map the shared record");
                return WORKER_EXIT_INTERNAL;
        }
        if (coverage_shared_map(w.cov_fd, &w.coverage) < 0) {
                worker_send_error(&w, "internal", "cannot map the coverage map");
                return WORKER_EXIT_INTERNAL;
        }
        runner_prepare();
        char err[512];
        SandboxOptions so = {
            .mode = w.sandbox_mode,
            .policy_json = w.cfg.sandbox_policy,
            .memory_limit_mb = w.cfg.rss_limit_mb,
            .leak_check = w.cfg.detect_leaks,
        };
        r = sandbox_new_with(&w.sandbox, &so, err, sizeof(err));
        if (r < 0) {
                worker_send_error(&w, "sandbox", err);
                return WORKER_EXIT_INTERNAL;
        }

        if (worker_load(&w) < 0)
                return WORKER_EXIT_LOAD;
        w.leaks = w.cfg.detect_leaks && runner_leaks_prepare();
        /* After the target's initialization, which runs with the worker's
         * full view of the host (files, network). */
        r = sandbox_prepare(w.sandbox);
        if (r < 0) {
                snprintf(err, sizeof(err), "cannot prepare the sandbox: %s", strerror(-r));
                worker_send_error(&w, "sandbox", err);
                return WORKER_EXIT_INTERNAL;
        }
        cmplog_eq_enable();
        if (w.cfg.value_profile)
                cmplog_value_profile_enable();

        if (w.coverage->counters == 0)
                w.coverage->counters = coverage_counters();

        cJSON *hello = msg_new("hello");
        if (!hello)
                return WORKER_EXIT_INTERNAL;
        cJSON_AddNumberToObject(hello, "pid", getpid());
        cJSON_AddNumberToObject(hello, "counters", (double)coverage_counters());
        if (w.custom.mutate)
                cJSON_AddBoolToObject(hello, "custom_mutator", 1);
        if (w.custom.crossover)
                cJSON_AddBoolToObject(hello, "custom_crossover", 1);
        cJSON_AddItemToObject(hello, "sandbox", sandbox_describe(w.sandbox));
        /* Leak checks need LeakSanitizer and a sandbox that lets it work. */
        cJSON_AddBoolToObject(hello, "leaks", w.leaks && sandbox_can_check_leaks(w.sandbox));
        r = msg_send(w.evt_fd, hello);
        cJSON_Delete(hello);
        if (r < 0)
                return WORKER_EXIT_PROTOCOL;

        for (;;) {
                cJSON *m = NULL;
                r = msg_recv(&w.reader, &m, -1);
                if (r < 0)
                        return r == -EPIPE ? WORKER_EXIT_OK : WORKER_EXIT_PROTOCOL;
                if (r == 0)
                        continue;
                const char *type = msg_str(m, "type", "");
                if (strcmp(type, "fuzz") == 0 || strcmp(type, "rebuild") == 0) {
                        r = worker_run_batch(&w, m);
                        if (r == -EPIPE) {
                                cJSON_Delete(m);
                                return WORKER_EXIT_OK;
                        }
                } else if (strcmp(type, "ping") == 0) {
                        cJSON *p = msg_new("pong");
                        if (p)
                                (void)msg_send(w.evt_fd, p);
                        cJSON_Delete(p);
                } else if (strcmp(type, "stop") == 0) {
                        w.stopping = 1;
                } else {
                        worker_send_error(&w, "protocol", "unknown command");
                }
                cJSON_Delete(m);
                if (w.stopping)
                        return WORKER_EXIT_OK;
        }
}
