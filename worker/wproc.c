/*
 * Spawning: the pipes and the memfd are created close-on-exec; in the child,
 * every inherited descriptor is marked close-on-exec and only the four the
 * worker needs are passed, by number, on its command line. A worker that
 * dies before saying hello is diagnosed from its wait status, so a target
 * whose constructor crashes gets one clear line, not a protocol error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/coverage.h"
#include "core/msg.h"
#include "core/sanitizer.h"
#include "worker/proto.h"
#include "worker/wproc.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

struct Wproc {
        pid_t pid;
        int cmd_fd; /* we write */
        int evt_fd; /* we read */
        int shm_fd;
        int cov_fd;
        int own_cov;
        void *region;
        RecordLayout layout;
        MsgReader reader;
        size_t counters;
        size_t target_counters;
        bool leaks;
        int exited;
        int status;
        unsigned init_timeout_ms;
        int64_t launched_ms;
};

static void close_inherited(int keep[], int n)
{
#ifdef SYS_close_range
        /* CLOSE_RANGE_CLOEXEC: everything else disappears at exec. */
        if (syscall(SYS_close_range, 3, ~0u, 4u) == 0)
                goto keep_fds;
#endif
        for (int fd = 3; fd < 1024; fd++)
                fcntl(fd, F_SETFD, FD_CLOEXEC);
#ifdef SYS_close_range
keep_fds:
#endif
        for (int i = 0; i < n; i++)
                fcntl(keep[i], F_SETFD, 0);
}

static const char *signal_name(int sig)
{
        const char *d = sigabbrev_np(sig);
        return d ? d : "?";
}

static void describe_exit(int status, char *err, size_t errlen)
{
        if (WIFSIGNALED(status))
                snprintf(err, errlen,
                         "the target crashed while loading or in LLVMFuzzerInitialize "
                         "(signal SIG%s); fix its initialization, then run again",
                         signal_name(WTERMSIG(status)));
        else if (WIFEXITED(status))
                snprintf(err, errlen,
                         "the target exited with status %d while loading or in "
                         "LLVMFuzzerInitialize; fix its initialization, then run again",
                         WEXITSTATUS(status));
        else
                snprintf(err, errlen, "the worker stopped while starting");
}

/* A Wproc with its shared record (a memfd, mapped here) and coverage map,
 * and no process yet. 0, or a negative errno with @err written. */
static int wproc_new(Wproc **ret, const WprocConfig *cfg, char *err, size_t errlen)
{
        Wproc *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->pid = -1;
        w->shm_fd = w->cov_fd = w->cmd_fd = w->evt_fd = -1;
        r = record_layout(cfg->max_len, &w->layout);
        if (r < 0) {
                snprintf(err, errlen, "bad maximum input length %zu", cfg->max_len);
                goto err_free;
        }
        w->shm_fd = memfd_create("snapfuzz-record", MFD_CLOEXEC);
        if (w->shm_fd < 0 || ftruncate(w->shm_fd, (off_t)w->layout.region_size) < 0) {
                r = errno ? -errno : -EIO;
                snprintf(err, errlen, "cannot create shared memory: %s", strerror(-r));
                goto err_free;
        }
        w->region =
            mmap(NULL, w->layout.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, w->shm_fd, 0);
        if (w->region == MAP_FAILED) {
                w->region = NULL;
                r = errno ? -errno : -EIO;
                snprintf(err, errlen, "cannot map shared memory: %s", strerror(-r));
                goto err_free;
        }
        if (cfg->cov_fd >= 0) {
                w->cov_fd = cfg->cov_fd;
        } else {
                w->cov_fd = coverage_shared_create();
                w->own_cov = 1;
                if (w->cov_fd < 0) {
                        r = w->cov_fd;
                        snprintf(err, errlen, "cannot create the coverage map: %s", strerror(-r));
                        goto err_free;
                }
        }
        *ret = w;
        return 0;

err_free:
        wproc_free(w);
        return r < 0 ? r : -EIO; /* never success without *ret */
}

/* The forked child: keeps only the worker's four descriptors and becomes
 * the worker, with the environment @envp (sanitizer_env). Only
 * async-signal-safe calls: the coordinator may have other threads (its
 * corpus writer), and a lock one of them held at the fork stays held here.
 * Never returns. */
static _Noreturn void wproc_child(const WorkerArgs *args, const WprocConfig *cfg,
                                  const ProtoArgv *argv, char **envp)
{
        int keep[] = {args->cmd_fd, args->evt_fd, args->shm_fd, args->cov_fd};
        sigset_t none;

        /* Ctrl-C is the coordinator's: the worker ignores SIGINT from its
         * first instruction (an ignored signal stays ignored across
         * execve), before the coordinator's mask, which may hold a SIGINT
         * back, is lifted. Otherwise a Ctrl-C in the first moments of a run
         * killed a worker still starting, and the run ended with "every
         * worker has stopped" instead of as interrupted. */
        signal(SIGINT, SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        close_inherited(keep, 4);
        execve(cfg->exe ? cfg->exe : "/proc/self/exe", argv->argv, envp);
        _exit(WORKER_EXIT_INTERNAL);
}

/* A built-in target's sanitizers are this executable's: its runtime is
 * linked in (found by name, as the ASan and UBSan runtimes export their
 * entry points), so nothing is preloaded, but the options the sandbox
 * depends on still go into the worker's environment. */
static int wproc_builtin_sanitizers(SanitizerInfo *ret)
{
        *ret = (SanitizerInfo){
            .asan = dlsym(RTLD_DEFAULT, "__asan_init") != NULL,
            .ubsan = dlsym(RTLD_DEFAULT, "__ubsan_handle_add_overflow") != NULL,
            .msan = dlsym(RTLD_DEFAULT, "__msan_init") != NULL,
        };
        return 0;
}

/* Forks the worker @args describes into w->pid, its environment built
 * before the fork (sanitizer_env: the child only execs). Returns 0, or a
 * negative errno after a line in @err. */
static int wproc_fork(Wproc *w, const WorkerArgs *args, const ProtoArgv *argv,
                      const SanitizerInfo *san, const WprocConfig *cfg, char *err, size_t errlen)
{
        char **envp =
            sanitizer_env(san, cfg->malloc_limit_mb, args->detect_leaks, args->sanitizer_confirm);
        if (!envp) {
                snprintf(err, errlen, "cannot build a worker's environment: %s", strerror(ENOMEM));
                return -ENOMEM;
        }
        w->pid = fork();
        if (w->pid == 0)
                wproc_child(args, cfg, argv, envp);
        int fork_errno = errno;
        sanitizer_env_free(envp);
        if (w->pid < 0) {
                int r = fork_errno ? -fork_errno : -EIO;
                snprintf(err, errlen, "cannot fork a worker: %s", strerror(-r));
                return r;
        }
        return 0;
}

int wproc_launch(Wproc **ret, const WprocConfig *cfg, char *err, size_t errlen)
{
        int cmd[2] = {-1, -1}, evt[2] = {-1, -1};
        SanitizerInfo san;
        ProtoArgv argv;
        Wproc *w = NULL;
        int r;

        r = wproc_new(&w, cfg, err, errlen);
        if (r < 0 || !w)
                return r < 0 ? r : -ENOMEM;
        r = cfg->builtin ? wproc_builtin_sanitizers(&san)
                         : sanitizer_detect(cfg->target, &san, err, errlen);
        if (r < 0) {
                r = WPROC_ERR_LOAD;
                goto err_free;
        }
        /* Leaks are looked for in targets built with AddressSanitizer (its
         * LeakSanitizer); a sanitizer build of snapfuzz itself does not
         * make a plain target one. */
        bool leaks = cfg->detect_leaks && san.asan;
        if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(evt, O_CLOEXEC) < 0) {
                r = errno ? -errno : -EIO;
                snprintf(err, errlen, "cannot create pipes: %s", strerror(-r));
                goto err_pipes;
        }
        WorkerArgs args = {
            .target = cfg->builtin ? PROTO_TARGET_SELF : cfg->target,
            .cmd_fd = cmd[0],
            .evt_fd = evt[1],
            .shm_fd = w->shm_fd,
            .cov_fd = w->cov_fd,
            .max_len = cfg->max_len,
            .timeout_ms = cfg->timeout_ms,
            .rss_limit_mb = cfg->rss_limit_mb,
            .sandbox = cfg->sandbox,
            .sandbox_policy = cfg->sandbox_policy,
            .value_profile = cfg->value_profile,
            .detect_leaks = leaks,
            .runner_lifetime_ms = cfg->runner_lifetime_ms,
            .runner_batches = cfg->runner_batches,
            .target_output = cfg->target_output,
            .output_log = cfg->output_log,
            .close_fd_mask = cfg->close_fd_mask,
            .sanitizer_confirm = cfg->sanitizer_confirm && (san.asan || san.ubsan),
        };
        r = proto_args_build(&args, &argv);
        if (r < 0) {
                snprintf(err, errlen, "bad worker settings (sandbox mode %s)",
                         cfg->sandbox ? cfg->sandbox : "strict");
                goto err_pipes;
        }
        r = wproc_fork(w, &args, &argv, &san, cfg, err, errlen);
        if (r < 0)
                goto err_pipes;
        close(cmd[0]);
        close(evt[1]);
        w->cmd_fd = cmd[1];
        w->evt_fd = evt[0];
        w->init_timeout_ms = cfg->init_timeout_ms ? cfg->init_timeout_ms : 120000;
        w->launched_ms = clock_now_ms();
        msg_reader_init(&w->reader, w->evt_fd);
        *ret = w;
        return 0;

err_pipes:
        for (int i = 0; i < 2; i++) {
                if (cmd[i] >= 0)
                        close(cmd[i]);
                if (evt[i] >= 0)
                        close(evt[i]);
        }
err_free:
        wproc_free(w);
        return r < 0 ? r : -EIO; /* never success without *ret */
}

/* The worker's first message: its hello, or the error that stopped it. */
static int wproc_take_hello(Wproc *w, const cJSON *m, char *err, size_t errlen)
{
        ProtoHello hello;
        const char *what, *message;

        if (proto_is(m, PROTO_HELLO)) {
                if (proto_hello_parse(m, &hello) < 0) {
                        snprintf(err, errlen, "the worker's hello is malformed");
                        return -EPROTO;
                }
                w->counters = (size_t)hello.counters;
                w->target_counters = (size_t)hello.target_counters;
                w->leaks = hello.leaks;
                return 0;
        }
        if (proto_error_parse(m, &what, &message) < 0) {
                snprintf(err, errlen, "the worker failed to start");
                return -EPROTO;
        }
        snprintf(err, errlen, "%s", message);
        return strcmp(what, PROTO_WHAT_LOAD) == 0 || strcmp(what, PROTO_WHAT_ENTRY) == 0
                   ? WPROC_ERR_LOAD
                   : -EPROTO;
}

int wproc_await_hello(Wproc *w, char *err, size_t errlen)
{
        cJSON *hello = NULL;
        unsigned init_ms = w->init_timeout_ms;
        int64_t left = w->launched_ms + (int64_t)init_ms - clock_now_ms();
        /* One look even past the deadline: the hello may be waiting in the
         * pipe of a worker awaited after slower ones. */
        int r = msg_recv(&w->reader, &hello, left > 1 ? (int)left : 1);
        if (r <= 0) {
                if (r == 0) {
                        snprintf(err, errlen, "the target did not finish initializing within %u s",
                                 init_ms / 1000);
                        return WPROC_ERR_TIMEOUT;
                }
                int status = 0;
                waitpid(w->pid, &status, 0);
                w->pid = -1;
                if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_PROTOCOL) {
                        /* Not the target's fault: the worker said why on
                         * stderr (worker_main). */
                        snprintf(err, errlen, "the worker rejected its command line");
                        return -EPROTO;
                }
                if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_INTERNAL)
                        snprintf(err, errlen, "the worker could not start");
                else
                        describe_exit(status, err, errlen);
                return WPROC_ERR_CRASHED;
        }
        r = wproc_take_hello(w, hello, err, errlen);
        cJSON_Delete(hello);
        return r;
}

int wproc_spawn(Wproc **ret, const WprocConfig *cfg, char *err, size_t errlen)
{
        Wproc *w;
        int r = wproc_launch(&w, cfg, err, errlen);
        if (r < 0)
                return r;
        r = wproc_await_hello(w, err, errlen);
        if (r < 0) {
                wproc_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

static int wait_exit(pid_t pid, int ms, int *status)
{
        for (int waited = 0; waited <= ms; waited += 10) {
                pid_t p = waitpid(pid, status, WNOHANG);
                if (p == pid || (p < 0 && errno == ECHILD))
                        return 1;
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
        return 0;
}

void wproc_free(Wproc *w)
{
        if (!w)
                return;
        if (w->pid > 0 && !w->exited) {
                int status;
                cJSON *stop = proto_msg_new(PROTO_STOP);
                if (stop && w->cmd_fd >= 0)
                        (void)msg_send(w->cmd_fd, stop);
                cJSON_Delete(stop);
                if (w->cmd_fd >= 0) {
                        close(w->cmd_fd);
                        w->cmd_fd = -1;
                }
                /* A worker ignores SIGINT (Ctrl-C is the coordinator's), so
                 * the escalation is stop, then SIGTERM, then SIGKILL. */
                if (!wait_exit(w->pid, 2000, &status)) {
                        kill(w->pid, SIGTERM);
                        if (!wait_exit(w->pid, 500, &status)) {
                                kill(w->pid, SIGKILL);
                                waitpid(w->pid, &status, 0);
                        }
                }
        }
        if (w->cmd_fd >= 0)
                close(w->cmd_fd);
        if (w->evt_fd >= 0)
                close(w->evt_fd);
        msg_reader_deinit(&w->reader);
        if (w->region)
                munmap(w->region, w->layout.region_size);
        if (w->shm_fd >= 0)
                close(w->shm_fd);
        if (w->own_cov && w->cov_fd >= 0)
                close(w->cov_fd);
        free(w);
}

void *wproc_region(Wproc *w)
{
        return w->region;
}

const RecordLayout *wproc_layout(const Wproc *w)
{
        return &w->layout;
}

int wproc_evt_fd(const Wproc *w)
{
        return w->evt_fd;
}

pid_t wproc_pid(const Wproc *w)
{
        return w->pid;
}

size_t wproc_counters(const Wproc *w)
{
        return w->counters;
}

size_t wproc_target_counters(const Wproc *w)
{
        return w->target_counters;
}

bool wproc_leaks(const Wproc *w)
{
        return w->leaks;
}

int wproc_send(Wproc *w, const cJSON *m)
{
        return msg_send(w->cmd_fd, m);
}

int wproc_send_batch(Wproc *w, const WprocBatch *b)
{
        if (b->base_len > w->layout.area_len || b->partner_len > w->layout.area_len ||
            b->table_len > RECORD_TABLE_BYTES || b->cmp_gens > RECORD_CMP_TABLES ||
            (b->cmp_gens && !b->cmp))
                return -EINVAL;
        if (b->base_len)
                memcpy(record_base(w->region, &w->layout), b->base, b->base_len);
        if (b->partner_len)
                memcpy(record_partner(w->region, &w->layout), b->partner, b->partner_len);
        if (b->table_len)
                memcpy(record_table(w->region, &w->layout), b->table, b->table_len);
        if (b->cmp_gens)
                memcpy(record_cmp(w->region, &w->layout, 1), b->cmp,
                       b->cmp_gens * sizeof(CmpTable));
        RecordBaseBest *best = record_base_best(w->region, &w->layout);
        best->n = b->base_best && b->base_best->n <= RECORD_PACK_MAX ? b->base_best->n : 0;
        if (best->n)
                memcpy(best->base, b->base_best->base, best->n * sizeof(best->base[0]));

        ProtoBatch pb = {
            .batch_id = b->batch_id,
            .mode = b->mode,
            .iters = b->iters,
            .seed = b->seed,
            .chain_len = b->chain_len,
            .base_len = (uint32_t)b->base_len,
            .partner_len = (uint32_t)b->partner_len,
            .table_len = (uint32_t)b->table_len,
            .first = b->first,
            .cmp_gens = b->cmp_gens,
            .len_limit = b->len_limit,
            .has_weights = b->op_weights != NULL,
            .n_reruns = b->n_reruns < RECORD_MAX_RERUNS ? b->n_reruns : RECORD_MAX_RERUNS,
            .replay = b->replay,
            .leak_watch = b->leak_watch,
            .leak_check = b->leak_check,
            .quiet = b->quiet,
            .fresh = b->fresh,
            .packed = b->packed,
        };
        if (b->op_weights)
                memcpy(pb.op_weights, b->op_weights, MUTATOR_WEIGHTS);
        if (pb.n_reruns)
                memcpy(pb.reruns, b->reruns, pb.n_reruns * sizeof(pb.reruns[0]));
        cJSON *m;
        int r = proto_batch_build(&pb, &m);
        if (r < 0)
                return r;
        r = msg_send(w->cmd_fd, m);
        cJSON_Delete(m);
        return r;
}

int wproc_read(Wproc *w, cJSON **ret)
{
        return msg_read(&w->reader, ret);
}

int wproc_recv(Wproc *w, cJSON **ret, int timeout_ms)
{
        return msg_recv(&w->reader, ret, timeout_ms);
}

/* One input, unmodified, in a fresh runner; one batch id sequence for all
 * such runs of this process. */
static int exec_one(Wproc *w, const uint8_t *data, size_t len, int quiet, int leak_check,
                    cJSON **ret)
{
        static uint64_t exec_id;
        WprocBatch b = {
            .batch_id = ++exec_id,
            .mode = RECORD_MODE_EXEC,
            .iters = 1,
            .chain_len = 1,
            .base = data,
            .base_len = len,
            .replay = 1,
            .quiet = quiet,
            .leak_check = leak_check,
        };
        return wproc_run_batch(w, &b, ret);
}

int wproc_exec(Wproc *w, const uint8_t *data, size_t len, cJSON **ret)
{
        return exec_one(w, data, len, 0, 0, ret);
}

int wproc_exec_quiet(Wproc *w, const uint8_t *data, size_t len, cJSON **ret)
{
        return exec_one(w, data, len, 1, 0, ret);
}

int wproc_exec_leak_check(Wproc *w, const uint8_t *data, size_t len, int quiet, cJSON **ret)
{
        return exec_one(w, data, len, quiet, 1, ret);
}

/* Waits for the runner's "done" or "died" event: 0, -EPROTO for a
 * malformed one, -EIO when the worker reports an error instead. */
static int wproc_wait_end(Wproc *w, cJSON **ret)
{
        for (;;) {
                cJSON *m = NULL;
                ProtoEnd end;
                int r = wproc_recv(w, &m, -1);
                if (r < 0)
                        return r;
                if (proto_is(m, PROTO_DONE) || proto_is(m, PROTO_DIED)) {
                        if (proto_end_parse(m, &end) < 0) {
                                cJSON_Delete(m);
                                return -EPROTO;
                        }
                        *ret = m;
                        return 0;
                }
                if (proto_is(m, PROTO_ERROR)) {
                        cJSON_Delete(m);
                        return -EIO;
                }
                cJSON_Delete(m); /* a stray pong, or a sandbox event */
        }
}

int wproc_run_batch(Wproc *w, const WprocBatch *b, cJSON **ret)
{
        int r = wproc_send_batch(w, b);
        if (r < 0)
                return r;
        return wproc_wait_end(w, ret);
}

int wproc_rebuild(Wproc *w, const void *record, uint32_t how, uint8_t *ret, size_t *ret_len,
                  cJSON **ret_event)
{
        memcpy(w->region, record, w->layout.record_size);
        cJSON *m;
        int r = proto_rebuild_build(how, &m);
        if (r < 0)
                return r;
        r = msg_send(w->cmd_fd, m);
        cJSON_Delete(m);
        if (r < 0)
                return r;
        cJSON *ev = NULL;
        r = wproc_wait_end(w, &ev);
        if (r < 0)
                return r;
        const RecordFinds *f = record_finds(w->region, &w->layout);
        const RecordFindSlot *s = record_find_slot(w->region, &w->layout, 0);
        if (!proto_is(ev, PROTO_DONE) || __atomic_load_n(&f->used, __ATOMIC_ACQUIRE) < 1 ||
            s->len > w->layout.max_len || s->flags != how) {
                *ret_event = ev;
                return 1;
        }
        cJSON_Delete(ev);
        memcpy(ret, s + 1, s->len);
        *ret_len = s->len;
        return 0;
}

int wproc_reap(Wproc *w)
{
        if (w->exited)
                return w->status;
        if (w->pid > 0 && waitpid(w->pid, &w->status, WNOHANG) == w->pid) {
                w->exited = 1;
                return w->status;
        }
        return -1;
}
