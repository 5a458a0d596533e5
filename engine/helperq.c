/*
 * The recovery helper's client: its process, its job queue, its restarts.
 *
 * Invariants:
 * - A job owns a copy of its record, made when it is queued, and keeps it
 *   until the helper answers for it: a job the helper held when it died is
 *   redone from that copy, never from the worker's shared memory (which the
 *   worker has reused since).
 * - At most one job is in flight: the helper reads its record from the one
 *   shared job area, which is written only while no job is in flight.
 * - Every job queued ends in exactly one answer from helperq_read (the
 *   helper's, or a "lost" one after its HELPERQ_JOB_DEATHS-th death on it),
 *   or is counted by helperq_abandon: nothing is dropped without a count.
 * - Each attempt of a job has a new job number, so that an answer is never
 *   taken for the wrong attempt.
 *
 * Fork without exec. The helper is a fork of the coordinator that calls
 * recovery_main (or HelperQueueConfig.main): the only such fork besides the
 * fork server's runners (worker/). It is not re-executed (as workers are,
 * through `snapfuzz __worker`) because it needs the run's whole
 * configuration (the sandbox policy's JSON among it) and nothing of the
 * target: the fork gives it that without a command line to keep in step
 * with RecoveryConfig, and app/main.c, which would dispatch a `__helper`
 * command, is not this module's. What the child may touch:
 * - the two pipe ends passed to it and the job area; every other
 *   descriptor is closed first (close_range), so that no worker's command
 *   pipe, corpus directory or signalfd lives on in the helper; the
 *   workers' records and the coverage map stay mapped, and it never
 *   touches them;
 * - its own copy of memory: the configuration (HelperQueueConfig), and
 *   malloc: the fork gate (core/forkgate.h) holds the coordinator's
 *   corpus writer and sync threads outside their work while it forks, so
 *   no allocator lock is inherited held (glibc's malloc takes its own
 *   around fork(), but a sanitizer's, in a sanitizer build of snapfuzz or
 *   in a drop-in harness built with ASan, does not);
 * - nothing else that another thread of the coordinator may hold a lock
 *   of: the corpus writer (core/writeq.c, core/fsutil.c) takes no lock but
 *   its queue's, which the child never touches, and no stdio stream; and
 *   logging is one write(2) with no lock (core/log.c).
 * The first helper is forked before the coordinator starts its writer
 * thread; only a restart forks a multithreaded coordinator, under the rules
 * above. The helper's own verification worker is exec'd (worker/wproc.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/msg.h"
#include "engine/helperq.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

/* The helper's name in ps and /proc/PID/comm (at most 15 characters). */
#define HELPERQ_COMM "sf-recovery"
/* How long a helper whose pipe closed may take to exit before SIGKILL. */
#define HELPERQ_REAP_MS 2000

typedef struct Job {
        struct Job *next;
        uint64_t id; /* the job number of its current attempt */
        unsigned flags;
        unsigned deaths; /* of the helper while it held this job */
        int64_t died_at;
        cJSON *died;
        uint8_t record[];
} Job;

struct HelperQueue {
        HelperQueueConfig cfg;
        void *job_region;
        pid_t pid; /* 0: no helper */
        int cmd_fd, evt_fd;
        MsgReader reader;
        Job *head, *tail; /* waiting, in order */
        Job *inflight;
        unsigned n_waiting;
        cJSON *outbox; /* answers of the queue's own ("lost" jobs), in order */
        uint64_t jobs_sent;
        uint64_t restarts;
        unsigned deaths_in_a_row;
        bool prepared;
        bool gone;            /* not started again: helperq_abandon's turn */
        bool gone_unreported; /* helperq_read has not yet returned -ECHILD */
};

static void job_free(Job *j)
{
        if (!j)
                return;
        cJSON_Delete(j->died);
        free(j);
}

/* Closes every descriptor from @lo to @hi. */
static void close_fds(unsigned lo, unsigned hi)
{
        if (lo > hi)
                return;
#ifdef SYS_close_range
        if (syscall(SYS_close_range, lo, hi, 0u) == 0)
                return;
#endif
        for (unsigned fd = lo; fd <= hi && fd < 65536; fd++)
                close((int)fd);
}

/* The helper process: never returns. */
static _Noreturn void helper_child(HelperQueue *q, pid_t parent, int cmd_rd, int evt_wr)
{
        sigset_t none;
        /* Ctrl-C reaches the whole process group; the coordinator decides
         * what happens to the jobs in flight. Ignored before the mask is
         * lifted: a SIGINT the coordinator's mask held back is delivered
         * at once then, and would kill the helper. */
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(SF_EXIT_INTERNAL);
        (void)prctl(PR_SET_NAME, HELPERQ_COMM);
        unsigned a = (unsigned)(cmd_rd < evt_wr ? cmd_rd : evt_wr);
        unsigned b = (unsigned)(cmd_rd < evt_wr ? evt_wr : cmd_rd);
        close_fds(3, a - 1);
        close_fds(a + 1, b - 1);
        close_fds(b + 1, ~0u);
        int r = q->cfg.main ? q->cfg.main(q->cfg.ctx, cmd_rd, evt_wr, q->job_region)
                            : recovery_main(&q->cfg.recovery, cmd_rd, evt_wr, q->job_region);
        _exit(r < 0 ? SF_EXIT_INTERNAL : 0);
}

/* Starts a helper process. 0 or a negative errno; nothing is left behind
 * on failure. */
static int helper_spawn(HelperQueue *q)
{
        int cmd[2], evt[2], r;
        pid_t parent = getpid();

        if (pipe2(cmd, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(evt, O_CLOEXEC) < 0) {
                r = -errno;
                goto err_cmd;
        }
        pid_t pid = fork();
        if (pid < 0) {
                r = -errno;
                goto err_evt;
        }
        if (pid == 0) {
                close(cmd[1]);
                close(evt[0]);
                helper_child(q, parent, cmd[0], evt[1]);
        }
        close(cmd[0]);
        close(evt[1]);
        /* Answers are read as they come, in the coordinator's event loop. */
        (void)fcntl(evt[0], F_SETFL, O_NONBLOCK);
        q->pid = pid;
        q->cmd_fd = cmd[1];
        q->evt_fd = evt[0];
        msg_reader_init(&q->reader, q->evt_fd);
        if (q->prepared) {
                cJSON *m = msg_new("prepare");
                if (m)
                        (void)msg_send(q->cmd_fd, m);
                cJSON_Delete(m);
        }
        return 0;

err_evt:
        close(evt[0]);
        close(evt[1]);
err_cmd:
        close(cmd[0]);
        close(cmd[1]);
        return r;
}

static int reap_wait(pid_t pid, int ms, int *status)
{
        for (int waited = 0; waited <= ms; waited += 10) {
                pid_t p = waitpid(pid, status, WNOHANG);
                if (p == pid)
                        return 0;
                if (p < 0)
                        return -errno;
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
        return -ETIMEDOUT;
}

/* Reaps the helper, killed first when @kill_first, and describes how it
 * ended into @how ("was killed by signal 9", ...). */
static void helper_reap(HelperQueue *q, bool kill_first, char *how, size_t howlen)
{
        int st = 0;
        if (kill_first)
                kill(q->pid, SIGKILL);
        int r = reap_wait(q->pid, HELPERQ_REAP_MS, &st);
        if (r == -ETIMEDOUT) {
                /* Its pipe closed but it lives on: it is of no use. */
                kill(q->pid, SIGKILL);
                r = waitpid(q->pid, &st, 0) == q->pid ? 0 : -errno;
        }
        if (r < 0)
                snprintf(how, howlen, "closed its pipe");
        else if (WIFSIGNALED(st)) {
                const char *abbrev = sigabbrev_np(WTERMSIG(st));
                snprintf(how, howlen, "was killed by signal %d (SIG%s)", WTERMSIG(st),
                         abbrev ? abbrev : "?");
        } else
                snprintf(how, howlen, "exited with status %d", WEXITSTATUS(st));
        close(q->cmd_fd);
        close(q->evt_fd);
        msg_reader_deinit(&q->reader);
        q->cmd_fd = q->evt_fd = -1;
        q->pid = 0;
}

/* A job the helper died on too often: answered "lost" by the queue. */
static void job_lose(HelperQueue *q, Job *j, const char *how)
{
        char why[256];
        cJSON *m = msg_new("lost");
        snprintf(why, sizeof(why),
                 "the recovery helper died %u times while recovering it (the last time, it %s)",
                 j->deaths, how);
        if (m) {
                cJSON_AddNumberToObject(m, "job", (double)j->id);
                cJSON_AddStringToObject(m, "why", why);
                cJSON_AddNumberToObject(m, "job_deaths", j->deaths);
                if (j->flags & HELPERQ_LEAK_SUSPECT)
                        cJSON_AddBoolToObject(m, "leak_suspect", 1);
        }
        if (!m || !cJSON_AddItemToArray(q->outbox, m)) {
                /* Not even the answer fits in memory: say it here. */
                log_error("a crash's input is lost: %s", why);
                cJSON_Delete(m);
        }
        job_free(j);
}

static void queue_front(HelperQueue *q, Job *j)
{
        j->next = q->head;
        q->head = j;
        if (!q->tail)
                q->tail = j;
        q->n_waiting++;
}

/* The helper is gone (its pipe closed, @err from msg_read): reap it, put
 * its job back or lose it, and start a new one. 0, or -ECHILD when no new
 * helper is started. */
static int helper_died(HelperQueue *q, int err)
{
        char how[96];
        pid_t old = q->pid;
        unsigned limit = q->cfg.job_deaths ? q->cfg.job_deaths : HELPERQ_JOB_DEATHS;

        /* A protocol error: the helper is alive but cannot be trusted. */
        helper_reap(q, err != -EPIPE, how, sizeof(how));
        if (err != -EPIPE)
                snprintf(how, sizeof(how), "could not be read from (%s) and was stopped",
                         strerror(-err));
        q->deaths_in_a_row++;
        Job *j = q->inflight;
        q->inflight = NULL;
        if (j && ++j->deaths >= limit) {
                job_lose(q, j, how);
                j = NULL;
        } else if (j) {
                queue_front(q, j);
        }
        if (q->deaths_in_a_row >= HELPERQ_DEATHS_IN_A_ROW) {
                log_error("the recovery helper (pid %d) %s; it died %u times in a row without "
                          "finishing a job and is not started again",
                          (int)old, how, q->deaths_in_a_row);
                goto gone;
        }
        if (j)
                log_warn("the recovery helper (pid %d) %s while it %s; starting a new one, which "
                         "takes it again from its saved record",
                         (int)old, how,
                         j->flags & HELPERQ_LEAK_SUSPECT ? "checked a leak suspect"
                                                         : "recovered a crash");
        else
                log_warn("the recovery helper (pid %d) %s; starting a new one", (int)old, how);
        int r = helper_spawn(q);
        if (r < 0) {
                log_error("cannot start the recovery helper again: %s", strerror(-r));
                goto gone;
        }
        q->restarts++;
        return 0;
gone:
        q->gone = true;
        q->gone_unreported = true;
        return -ECHILD;
}

int helperq_new(HelperQueue **ret, const HelperQueueConfig *cfg)
{
        HelperQueue *q = calloc(1, sizeof(*q));
        int r = -ENOMEM;
        if (!q)
                return -ENOMEM;
        q->cfg = *cfg;
        q->cmd_fd = q->evt_fd = -1;
        q->outbox = cJSON_CreateArray();
        if (!q->outbox)
                goto err_free;
        int fd = memfd_create("snapfuzz-job", MFD_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto err_outbox;
        }
        if (ftruncate(fd, (off_t)cfg->record_size) < 0) {
                r = -errno;
                goto err_memfd;
        }
        q->job_region = mmap(NULL, cfg->record_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (q->job_region == MAP_FAILED) {
                r = -errno;
                goto err_memfd;
        }
        /* The mapping is all the helper needs, and every helper started
         * later inherits it. */
        close(fd);
        r = helper_spawn(q);
        if (r < 0)
                goto err_region;
        *ret = q;
        return 0;

err_region:
        munmap(q->job_region, cfg->record_size);
        goto err_outbox;
err_memfd:
        close(fd);
err_outbox:
        cJSON_Delete(q->outbox);
err_free:
        free(q);
        log_error("cannot start the recovery helper: %s", strerror(-r));
        return r;
}

void helperq_stop(HelperQueue *q)
{
        if (!q || q->pid <= 0)
                return;
        /* End of its commands: it finishes what it does and exits. */
        close(q->cmd_fd);
        int st;
        while (waitpid(q->pid, &st, 0) < 0 && errno == EINTR)
                ;
        close(q->evt_fd);
        msg_reader_deinit(&q->reader);
        q->cmd_fd = q->evt_fd = -1;
        q->pid = 0;
}

void helperq_free(HelperQueue *q)
{
        if (!q)
                return;
        helperq_stop(q);
        Job *j = q->head;
        while (j) {
                Job *next = j->next;
                job_free(j);
                j = next;
        }
        job_free(q->inflight);
        cJSON_Delete(q->outbox);
        munmap(q->job_region, q->cfg.record_size);
        free(q);
}

int helperq_put(HelperQueue *q, const void *record, const cJSON *died, int64_t died_at_ms,
                unsigned flags)
{
        if (q->gone)
                return -ECHILD;
        Job *j = calloc(1, sizeof(*j) + q->cfg.record_size);
        if (!j)
                return -ENOMEM;
        memcpy(j->record, record, q->cfg.record_size);
        j->died = cJSON_Duplicate(died, 1);
        if (died && !j->died) {
                free(j);
                return -ENOMEM;
        }
        j->died_at = died_at_ms;
        j->flags = flags;
        if ((flags & HELPERQ_LEAK_SUSPECT) && q->head) {
                /* A check is quick, and watching for leaks waits for it: it
                 * goes before the crashes waiting for recovery. */
                queue_front(q, j);
                return 0;
        }
        if (q->tail)
                q->tail->next = j;
        else
                q->head = j;
        q->tail = j;
        q->n_waiting++;
        return 0;
}

void helperq_dispatch(HelperQueue *q)
{
        if (!q || q->inflight || !q->head || q->pid <= 0)
                return;
        Job *j = q->head;
        q->head = j->next;
        if (!q->head)
                q->tail = NULL;
        j->next = NULL;
        q->n_waiting--;
        /* In flight from here: a failed send is a dead helper, whose closed
         * pipe helperq_read sees next, and the job is redone. */
        q->inflight = j;
        j->id = ++q->jobs_sent;
        memcpy(q->job_region, j->record, q->cfg.record_size);
        cJSON *m = msg_new("recover");
        if (m) {
                cJSON_AddNumberToObject(m, "job", (double)j->id);
                cJSON_AddNumberToObject(m, "died_at_ms", (double)j->died_at);
                /* 2 and more: a helper died on this job before. */
                cJSON_AddNumberToObject(m, "attempt", j->deaths + 1);
                if (j->died)
                        cJSON_AddItemReferenceToObject(m, "died", j->died);
                if (j->flags & HELPERQ_LEAK_SUSPECT)
                        cJSON_AddBoolToObject(m, "leak_suspect", 1);
        }
        int r = m ? msg_send(q->cmd_fd, m) : -ENOMEM;
        if (r < 0 && r != -EPIPE) {
                /* Without the command the helper would wait forever: it is
                 * ended, and the job goes round again. (-EPIPE: it is gone
                 * already.) */
                kill(q->pid, SIGKILL);
        }
        cJSON_Delete(m);
}

void helperq_prepare(HelperQueue *q)
{
        q->prepared = true;
        if (q->pid <= 0)
                return;
        cJSON *m = msg_new("prepare");
        if (m)
                (void)msg_send(q->cmd_fd, m);
        cJSON_Delete(m);
}

int helperq_fd(const HelperQueue *q)
{
        return q && q->pid > 0 ? q->evt_fd : -1;
}

/* Whether @m ends the job in flight; then the job is done, and @m says
 * whether it was a leak suspect as the job was queued. */
static bool answer_take(HelperQueue *q, cJSON *m)
{
        Job *j = q->inflight;
        if (!j || (uint64_t)msg_int(m, "job", 0) != j->id)
                return false;
        cJSON_DeleteItemFromObjectCaseSensitive(m, "leak_suspect");
        if (j->flags & HELPERQ_LEAK_SUSPECT)
                cJSON_AddBoolToObject(m, "leak_suspect", 1);
        q->inflight = NULL;
        q->deaths_in_a_row = 0;
        job_free(j);
        return true;
}

int helperq_read(HelperQueue *q, cJSON **ret)
{
        if (cJSON_GetArraySize(q->outbox) > 0) {
                *ret = cJSON_DetachItemFromArray(q->outbox, 0);
                return 1;
        }
        if (q->gone_unreported) {
                q->gone_unreported = false;
                return -ECHILD;
        }
        while (q->pid > 0) {
                cJSON *m = NULL;
                int t = msg_read(&q->reader, &m);
                if (t == 0)
                        return 0;
                if (t < 0) {
                        (void)helper_died(q, t);
                        /* Its job's "lost" answer, or -ECHILD, or 0. */
                        return helperq_read(q, ret);
                }
                if (answer_take(q, m) || !cJSON_GetObjectItemCaseSensitive(m, "job")) {
                        *ret = m;
                        return 1;
                }
                log_warn("the recovery helper answered for job %lld, which it does not hold",
                         (long long)msg_int(m, "job", 0));
                cJSON_Delete(m);
        }
        return 0;
}

unsigned helperq_abandon(HelperQueue *q)
{
        unsigned crashes = 0;
        Job *j = q->head;
        while (j) {
                Job *next = j->next;
                crashes += !(j->flags & HELPERQ_LEAK_SUSPECT);
                job_free(j);
                j = next;
        }
        q->head = q->tail = NULL;
        q->n_waiting = 0;
        if (q->inflight)
                crashes += !(q->inflight->flags & HELPERQ_LEAK_SUSPECT);
        job_free(q->inflight);
        q->inflight = NULL;
        cJSON *m;
        while ((m = cJSON_DetachItemFromArray(q->outbox, 0)) != NULL) {
                crashes += !msg_bool(m, "leak_suspect", 0);
                cJSON_Delete(m);
        }
        return crashes;
}

unsigned helperq_waiting(const HelperQueue *q)
{
        return q ? q->n_waiting : 0;
}

unsigned helperq_pending(const HelperQueue *q)
{
        if (!q)
                return 0;
        return q->n_waiting + (q->inflight != NULL) + (unsigned)cJSON_GetArraySize(q->outbox);
}

pid_t helperq_pid(const HelperQueue *q)
{
        return q ? q->pid : 0;
}

void helperq_add_stats(const HelperQueue *q, cJSON *stats)
{
        cJSON_AddNumberToObject(stats, "helper_pid", q ? (double)q->pid : 0);
        cJSON_AddNumberToObject(stats, "helper_restarts", q ? (double)q->restarts : 0);
}
