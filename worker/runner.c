/*
 * The in-process loop. Replay invariant (include/snapfuzz/record.h): at
 * every instant, record->count names the input the target is running or
 * has just run, and the PRNG slot of its chain is complete, because
 *   1. the chain's slot, and the comparison table it names (frozen from
 *      the live table the target's comparisons fill, worker/cmplog.h), are
 *      written before any of its mutations (worker/batch.h makes every
 *      input, live here and frozen in recovery),
 *   2. the input is mutated in a private buffer, then copied to the buffer
 *      the target sees, and only then is count incremented, and
 *   3. the target is called with the copy, so a target that writes into its
 *      const input cannot change the next mutation's starting point (and is
 *      reported: libFuzzer's "overwrites its const input").
 * The copy lives in a memfd mapped twice: the runner writes it through a
 * writable view, the target gets a read-only view of the same pages that
 * ends exactly at a PROT_NONE guard page. A read one byte past the input
 * faults even without AddressSanitizer, and a write into the input faults
 * at the guilty instruction, which the fault handler reports as
 * overwrite-input; nothing is compared after each execution. A sanitizer
 * confirmation (RunnerArgs.confirm, the recovery helper's and reproduce's)
 * runs its inputs in a loop of its own instead, each from a heap buffer of
 * its exact length, with the sanitizer's fault handlers in place of ours,
 * so that the sanitizer reports what the guard page only stopped.
 *
 * Each input that found new coverage (and each seed) runs once more, at
 * once, so that all its features are written next to it for the
 * coordinator's scheduling (runner_find_features); that second run is part
 * of the history recovery replays.
 *
 * Fatal signals are caught on an alternate stack (so a stack overflow is
 * caught too) with SA_RESETHAND: the handler writes the death area of the
 * record (signal, fault address, the blocked syscall for SIGSYS, the
 * backtrace) and lets the signal kill the process, so the worker still sees
 * the true cause of death in the wait status.
 */
#include <errno.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "worker/runner.h"
#include "core/clock.h"
#include "worker/batch.h"
#include "worker/cmplog.h"
#include "worker/stackdepth.h"
#include "snapfuzz/mutator.h"

#include "snapfuzz/banned.h"

/* glibc's ceiling for its dynamic mmap threshold (DEFAULT_MMAP_THRESHOLD_MAX
 * on 64-bit). */
#define RUNNER_MMAP_THRESHOLD (32 * 1024 * 1024)

static RecordHeader *runner_header;
static RecordDeath *runner_death;
/* The read-only view of the input buffer: a write fault inside it is the
 * target writing into its const input. */
static uintptr_t runner_input_lo, runner_input_hi;

static void runner_record_death(int sig, siginfo_t *si, void *uctx, uint32_t reason)
{
        RecordDeath *d = runner_death;
        if (d->valid == RECORD_DEATH_VALID)
                return; /* a second fault while dying keeps the first report */
        d->signal = sig;
        d->code = si ? si->si_code : 0;
        d->addr = si ? (uint64_t)(uintptr_t)si->si_addr : 0;
        d->syscall_nr = -1;
        d->reason = reason;
        d->count = __atomic_load_n(&runner_header->count, __ATOMIC_RELAXED);
#if defined(__x86_64__)
        if (uctx) {
                const greg_t *g = ((const ucontext_t *)uctx)->uc_mcontext.gregs;
                d->pc = (uint64_t)g[REG_RIP];
                uint64_t sp = (uint64_t)g[REG_RSP];
                /* A fault within a few pages of the stack pointer is a push
                 * or a call running into the guard page. */
                if (sig == SIGSEGV && d->addr + 65536 >= sp && d->addr <= sp + 65536)
                        d->flags |= RECORD_DEATH_F_STACK_OVERFLOW;
                if (sig == SIGSYS) {
                        d->syscall_args[0] = (uint64_t)g[REG_RDI];
                        d->syscall_args[1] = (uint64_t)g[REG_RSI];
                        d->syscall_args[2] = (uint64_t)g[REG_RDX];
                        d->syscall_args[3] = (uint64_t)g[REG_R10];
                        d->syscall_args[4] = (uint64_t)g[REG_R8];
                        d->syscall_args[5] = (uint64_t)g[REG_R9];
                }
        }
#elif defined(__aarch64__)
        if (uctx) {
                const ucontext_t *u = uctx;
                d->pc = (uint64_t)u->uc_mcontext.pc;
                if (sig == SIGSYS)
                        for (int i = 0; i < 6; i++)
                                d->syscall_args[i] = (uint64_t)u->uc_mcontext.regs[i];
        }
#endif
        if (sig == SIGSYS)
                d->syscall_nr = sandbox_sigsys_syscall(si);
        void *frames[RECORD_MAX_FRAMES];
        int n = backtrace(frames, RECORD_MAX_FRAMES);
        for (int i = 0; i < n; i++)
                d->frames[i] = (uint64_t)(uintptr_t)frames[i];
        d->nframes = n > 0 ? (uint32_t)n : 0;
        __atomic_store_n(&d->valid, RECORD_DEATH_VALID, __ATOMIC_RELEASE);
}

static void runner_on_fatal(int sig, siginfo_t *si, void *uctx)
{
        uintptr_t addr = (uintptr_t)si->si_addr;
        if (sig == SIGSEGV && si->si_code == SEGV_ACCERR && addr >= runner_input_lo &&
            addr < runner_input_hi) {
                runner_record_death(sig, si, uctx, RECORD_DEATH_OVERWRITE);
                _exit(RUNNER_EXIT_OVERWRITE);
        }
        runner_record_death(sig, si, uctx, RECORD_DEATH_SIGNAL);
        /* SA_RESETHAND already restored the default action. A fault
         * re-executes and kills; a signal that was sent (abort's raise, a
         * seccomp trap that returned) must be sent again. */
        if (si->si_code <= 0 || sig == SIGSYS || sig == SIGABRT)
                raise(sig);
}

static void runner_on_dump(int sig, siginfo_t *si, void *uctx)
{
        runner_record_death(sig, si, uctx, RECORD_DEATH_STACKDUMP);
        _exit(RUNNER_EXIT_DUMPED);
}

static const int runner_fatal_signals[] = {SIGSEGV, SIGBUS,  SIGFPE,  SIGILL, SIGABRT,
                                           SIGSYS,  SIGTRAP, SIGXFSZ, SIGXCPU};

/* The faults a sanitizer's handlers report in a confirmation (its options
 * turn them on there, core/sanitizer.h). */
static bool runner_left_to_sanitizer(bool confirm, int sig)
{
        return confirm && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE);
}

static int runner_install_handlers(bool confirm)
{
        static uint8_t altstack[256 * 1024] __attribute__((aligned(64)));
        stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
        if (sigaltstack(&ss, NULL) < 0)
                return -errno;

        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
        sa.sa_sigaction = runner_on_fatal;
        for (size_t i = 0; i < sizeof(runner_fatal_signals) / sizeof(int); i++)
                if (!runner_left_to_sanitizer(confirm, runner_fatal_signals[i]) &&
                    sigaction(runner_fatal_signals[i], &sa, NULL) < 0)
                        return -errno;
        sa.sa_sigaction = runner_on_dump;
        if (sigaction(RUNNER_SIGNAL_DUMP, &sa, NULL) < 0)
                return -errno;

        /* Terminal signals belong to the coordinator, which shuts down in
         * order; the runner is also in its own process group. */
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);

        sigset_t unblock;
        sigemptyset(&unblock);
        for (size_t i = 0; i < sizeof(runner_fatal_signals) / sizeof(int); i++)
                sigaddset(&unblock, runner_fatal_signals[i]);
        sigaddset(&unblock, RUNNER_SIGNAL_DUMP);
        return sigprocmask(SIG_UNBLOCK, &unblock, NULL) < 0 ? -errno : 0;
}

/* libsnapfuzz-malloc.so's switch, when it is loaded (worker/malloc_limit.c). */
static volatile int *runner_malloc_armed;

void runner_prepare(void)
{
        runner_malloc_armed = dlsym(RTLD_DEFAULT, "snapfuzz_malloc_armed");
        /* backtrace() loads libgcc_s on first use; do it here, before any
         * sandbox, and never in a signal handler. */
        void *frames[4];
        (void)backtrace(frames, 4);
}

/*
 * Leaks, the way libFuzzer looks for them: an execution that allocates more
 * than it frees is suspect; run again, a suspect that still does is handed
 * over (the runner ends the batch, RECORD_DEATH_LEAK_SUSPECT), and the
 * recovery helper confirms it with LeakSanitizer in a runner of its own
 * whose sandbox lets the check stop the world (RECORD_BATCH_LEAK_CHECK).
 * The counts come from the sanitizer's allocation hooks: two increments in
 * the allocator, none in the loop.
 */
typedef int (*RunnerLeakCheckFn)(void);
typedef void (*RunnerMallocHook)(const volatile void *ptr, size_t size);
typedef void (*RunnerFreeHook)(const volatile void *ptr);
typedef int (*RunnerInstallHooksFn)(RunnerMallocHook, RunnerFreeHook);

static RunnerLeakCheckFn runner_leak_check;
static uint64_t runner_mallocs, runner_frees;

static void runner_count_malloc(const volatile void *ptr, size_t size)
{
        (void)ptr;
        (void)size;
        runner_mallocs++;
}

static void runner_count_free(const volatile void *ptr)
{
        (void)ptr;
        runner_frees++;
}

bool runner_leaks_prepare(void)
{
        RunnerInstallHooksFn install =
            (RunnerInstallHooksFn)dlsym(RTLD_DEFAULT, "__sanitizer_install_malloc_and_free_hooks");
        RunnerLeakCheckFn check =
            (RunnerLeakCheckFn)dlsym(RTLD_DEFAULT, "__lsan_do_recoverable_leak_check");

        if (!install || !check || install(runner_count_malloc, runner_count_free) == 0)
                return false;
        runner_leak_check = check;
        return true;
}

/* A suspect execution, run once more (a first call may fill caches that
 * stay reachable). Still allocating more than it frees, it ends the batch;
 * the record's count names it. What the second run covered is no input's
 * coverage. */
static void runner_leak_rerun(RecordHeader *h, TargetTestOneInput test, const uint8_t *data,
                              size_t len, uint64_t k)
{
        uint64_t m = runner_mallocs, f = runner_frees;

        h->reruns[h->n_reruns++] = k; /* history, before it happens */
        (void)test(data, len);
        coverage_clear();
        if (runner_mallocs - m > runner_frees - f) {
                runner_record_death(0, NULL, NULL, RECORD_DEATH_LEAK_SUSPECT);
                _exit(RUNNER_EXIT_LEAK);
        }
}

/* The input buffer: @ret_rw is a writable view of max_len bytes (rounded
 * up to pages), @ret_ro_end the end of a read-only view of the same pages,
 * which touches a PROT_NONE page. The same offset in both views is the same
 * byte. Returns 0 or -1. */
static int runner_map_input(size_t max_len, uint8_t **ret_rw, uint8_t **ret_ro_end)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t body = (max_len + page - 1) / page * page;
        if (body == 0)
                body = page;
        int fd = memfd_create("snapfuzz-input", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        uint8_t *rw = MAP_FAILED, *ro = MAP_FAILED;
        if (ftruncate(fd, (off_t)body) == 0)
                rw = mmap(NULL, body, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        /* Reserve the read-only view and its guard page in one piece, then
         * put the file over all but the last page. */
        if (rw != MAP_FAILED)
                ro = mmap(NULL, body + page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ro != MAP_FAILED &&
            mmap(ro, body, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
                ro = MAP_FAILED;
        close(fd);
        if (ro == MAP_FAILED)
                return -1;
        runner_input_lo = (uintptr_t)ro;
        runner_input_hi = (uintptr_t)ro + body;
        *ret_rw = rw + body;
        *ret_ro_end = ro + body;
        return 0;
}

/* The batch's operator figures, for the coordinator's weights. */
static void runner_flush_op_stats(RecordHeader *h, const MutatorTrace *trace, const uint32_t *found)
{
        memcpy(h->op_applied, trace->applied, sizeof(h->op_applied));
        memcpy(h->op_found, found, sizeof(h->op_found));
}

static void runner_push_find(void *region, const RecordLayout *l, const uint8_t *data, size_t len,
                             uint64_t iteration, uint32_t flags)
{
        RecordFinds *f = record_finds(region, l);
        uint32_t used = f->used;
        RecordFindSlot *s = record_find_slot(region, l, used);
        RecordFindFeatures *ff = record_find_features(region, l, used);
        s->len = (uint32_t)len;
        s->flags = flags;
        s->iteration = iteration;
        memcpy((uint8_t *)(s + 1), data, len);
        ff->n = 0;
        ff->complete = 0;
        __atomic_store_n(&f->used, used + 1, __ATOMIC_RELEASE);
}

/* A find runs once more, at once, and every feature it reaches is written
 * next to it for the coordinator's scheduling (core/corpus.h): the scan
 * that found it zeroed the counters as it read them. The second run is part
 * of the runner's history (noted in the reruns list before it happens, as a
 * leak suspect's is), so a history replay runs it too and a crash that
 * depends on it is rebuilt like any other; count still names the find's
 * iteration. One execution per find, nothing per iteration. */
static void runner_find_features(const RunnerArgs *a, RecordHeader *h, const uint8_t *data,
                                 size_t len, uint64_t k)
{
        uint32_t used = record_finds(a->region, a->layout)->used;
        RecordFindFeatures *ff = record_find_features(a->region, a->layout, used - 1);
        size_t n = 0;

        h->reruns[h->n_reruns++] = k; /* history, before it happens */
        coverage_clear();
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        cmplog_mode = cmplog_value_profile;
        uint64_t t0 = (uint64_t)clock_now_ns();
        const uintptr_t top = stackdepth_begin();
        (void)a->test(data, len);
        stackdepth_end(top);
        uint64_t t1 = (uint64_t)clock_now_ns();
        cmplog_mode = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);

        (void)coverage_collect(a->coverage, ff->id, RECORD_FIND_FEATURES, &n);
        ff->n = (uint32_t)(n < RECORD_FIND_FEATURES ? n : RECORD_FIND_FEATURES);
        ff->exec_ns = t1 - t0;
        __atomic_store_n(&ff->complete,
                         n <= RECORD_FIND_FEATURES ? RECORD_FEATURES_COMPLETE
                                                   : RECORD_FEATURES_TRUNCATED,
                         __ATOMIC_RELEASE);
}

__attribute__((noreturn)) static void runner_rebuild(void *region, const RecordLayout *l,
                                                     const CustomMutator *cm, int how, uint8_t *buf)
{
        RecordHeader *h = record_header(region);
        uint64_t k = __atomic_load_n(&h->count, __ATOMIC_RELAXED);
        size_t len = 0;

        h->runner_state = RECORD_RUNNER_REBUILDING;
        int r = batch_rebuild(region, l, cm, k, how != RECORD_REBUILT_SEED, buf, &len);
        if (r == 0) {
                runner_push_find(region, l, buf, len, k, (uint32_t)how);
        }
        h->runner_state = RECORD_RUNNER_DONE;
        _exit(RUNNER_EXIT_DONE);
}

/* Makes the output pipe the runner's stdout and stderr, but /dev/null the
 * stdout of a close_fd_mask with bit 1, and (for runner_close_stderr, as
 * only 1 and 2 outlive sandbox_isolate) the stdout of one with bit 2. The
 * mask that could be applied is returned (0 without /dev/null). */
static unsigned runner_output_to(const RunnerArgs *a)
{
        unsigned mask = a->close_fd_mask & 3;
        int null_fd = mask ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;

        if (a->output_fd < 0) {
                if (null_fd >= 0)
                        close(null_fd);
                return 0;
        }
        /* The pipe was non-blocking for the worker's reads; the runner's
         * writes should block rather than lose output. */
        fcntl(a->output_fd, F_SETFL, 0);
        dup2(null_fd >= 0 ? null_fd : a->output_fd, STDOUT_FILENO);
        dup2(a->output_fd, STDERR_FILENO);
        if (a->output_fd > STDERR_FILENO)
                close(a->output_fd);
        if (null_fd > STDERR_FILENO)
                close(null_fd);
        return null_fd >= 0 ? mask : 0;
}

/* After sandbox_isolate, with stdout on /dev/null and stderr on the pipe
 * (runner_output_to): bit 2 of @mask moves the pipe to a descriptor of its
 * own, where a sanitizer writes its report (__sanitizer_set_report_fd, as
 * libFuzzer does), and stderr to /dev/null; without bit 1, stdout goes
 * back to the pipe. Once per runner, never per execution. */
static void runner_close_stderr(unsigned mask)
{
        typedef void (*SetReportFd)(void *fd);

        if (!(mask & 2))
                return;
        int report = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        SetReportFd set_report = (SetReportFd)dlsym(RTLD_DEFAULT, "__sanitizer_set_report_fd");
        if (report >= 0 && set_report)
                set_report((void *)(intptr_t)report);
        dup2(STDOUT_FILENO, STDERR_FILENO);
        if (!(mask & 1) && report >= 0)
                dup2(report, STDOUT_FILENO);
}

/* Runs the batch the record describes, the first of this runner's
 * (@first_batch: applies the sandbox) or a later one. Returns true when the batch
 * ran to its end (state DONE or FULL) and the runner may take another. */
static bool runner_batch(const RunnerArgs *a, Batch *batch, uint8_t *work, uint8_t *write_end,
                         uint8_t *exec_end, bool first_batch);
static bool runner_confirm_batch(const RunnerArgs *a, Batch *batch, uint8_t *work,
                                 bool first_batch);

void runner_main(const RunnerArgs *a)
{
        void *region = a->region;
        const RecordLayout *l = a->layout;
        RecordHeader *h = record_header(region);

        runner_header = h;
        runner_death = record_death(region);
        h->runner_pid = getpid();
        h->runner_state = RECORD_RUNNER_STARTING;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->worker_pid)
                _exit(RUNNER_EXIT_SETUP);
        setpgid(0, 0);
        for (int i = 0; i < a->n_close_fds; i++)
                if (a->close_fds[i] >= 0)
                        close(a->close_fds[i]);
        unsigned mask = runner_output_to(a);
        /* Namespaces' empty root, no capabilities, no descriptors but ours. */
        if (sandbox_isolate(a->sandbox, a->ctl_fd) < 0)
                _exit(RUNNER_EXIT_SETUP);
        runner_close_stderr(mask);

        uint8_t *write_end, *exec_end;
        uint8_t *work = malloc(l->max_len);
        Batch *batch = malloc(sizeof(*batch));
        if (runner_map_input(l->max_len, &write_end, &exec_end) < 0 || !work || !batch ||
            runner_install_handlers(a->confirm) < 0)
                _exit(RUNNER_EXIT_SETUP);

        /* The batch's inputs and table are read-only for the target: a
         * wild write into them faults here instead of silently changing
         * what recovery would replay. (The comparison tables after them
         * are the runner's to write; their checksums catch scribbles.) */
        if (mprotect((uint8_t *)region + l->base_off, l->cmp_off - l->base_off, PROT_READ) < 0)
                _exit(RUNNER_EXIT_SETUP);

        /* A long-lived process's malloc settles: glibc raises its mmap
         * threshold to the largest block freed, and keeps that much at the
         * top of its heap, so a target that allocates a big buffer per
         * input stops faulting in fresh pages. A runner lives a fraction
         * of a second and would start over each time: begin where it would
         * settle. (AddressSanitizer's allocator ignores this.) */
        mallopt(M_MMAP_THRESHOLD, RUNNER_MMAP_THRESHOLD);
        mallopt(M_TRIM_THRESHOLD, 2 * RUNNER_MMAP_THRESHOLD);

        /* Batches, until one may not be followed by another in this
         * process, the runner has lived a->lifetime_ns (run
         * a->max_batches, when that is set), or the worker
         * says no more (anything but RUNNER_CTL_GO, or end of file). */
        const pid_t pid = h->runner_pid;
        const uint64_t born = (uint64_t)clock_now_ns();
        unsigned batches = 0;
        for (bool first = true;; first = false) {
                if (!first) {
                        h->runner_pid = pid;
                        h->runner_state = RECORD_RUNNER_RUNNING;
                }
                bool more = a->confirm ? runner_confirm_batch(a, batch, work, first)
                                       : runner_batch(a, batch, work, write_end, exec_end, first);
                batches++;
                bool aged = a->max_batches ? batches >= a->max_batches
                                           : (uint64_t)clock_now_ns() - born >= a->lifetime_ns;
                if (!more || a->ctl_fd < 0 || aged)
                        _exit(RUNNER_EXIT_DONE);
                char c = RUNNER_CTL_DONE;
                if (write(a->ctl_fd, &c, 1) != 1 || read(a->ctl_fd, &c, 1) != 1 ||
                    c != RUNNER_CTL_GO)
                        _exit(RUNNER_EXIT_DONE);
        }
}

/* One batch as the runner runs it: its inputs (worker/batch.h) and what the
 * runner does besides running them. */
typedef struct RunnerBatch {
        const RunnerArgs *a;
        RecordHeader *h;
        Batch *in;
        CustomMutator cm; /* the target's, with a scratch buffer of ours */
        uint64_t first;   /* the first iteration executed (history replays start later) */
        bool fuzz;
        bool collect;     /* finds are handed back (not a history replay) */
        bool replaying;   /* a history replay: runs the dead runner's reruns */
        bool watch_leaks; /* RECORD_BATCH_LEAK_WATCH, until the history is full */
        bool check_leaks; /* RECORD_BATCH_LEAK_CHECK */
        bool full;        /* the finds area filled up */
        uint32_t next_rerun, leak_reruns;
        uint64_t added; /* features found */
        uint32_t op_found[MUTATOR_WEIGHTS];
        /* Reductions (runner_reduction_chain). */
        const RecordBaseBest *best;
        const uint32_t *want;
        uint32_t n_want;
        uint32_t *short_len;
        uint32_t shortest[RECORD_PACK_MAX];
} RunnerBatch;

/* Reads the batch's description and flags into @rb and positions its
 * inputs before iteration 1; on the runner's first batch, applies the
 * sandbox (and, for a rebuild, rebuilds instead of running the batch). */
static void runner_batch_setup(RunnerBatch *rb, const RunnerArgs *a, Batch *in, uint8_t *work,
                               bool first_batch)
{
        RecordHeader *h = record_header(a->region);

        memset(rb, 0, offsetof(RunnerBatch, shortest));
        rb->a = a;
        rb->h = h;
        rb->in = in;
        rb->fuzz = h->mode == RECORD_MODE_FUZZ;
        rb->first = h->first_exec > 1 ? h->first_exec : 1;
        rb->replaying = (h->batch_flags & RECORD_BATCH_REPLAY) != 0;
        rb->collect = !rb->replaying;
        /* A fuzzing runner decides which iterations run twice (leak
         * suspects) and notes them; a history replay runs the ones the dead
         * runner noted. */
        rb->watch_leaks =
            !rb->replaying && (h->batch_flags & RECORD_BATCH_LEAK_WATCH) && runner_leak_check;
        if (!rb->replaying)
                h->n_reruns = 0;
        else if (h->n_reruns > RECORD_MAX_RERUNS)
                h->n_reruns = RECORD_MAX_RERUNS;
        rb->check_leaks = (h->batch_flags & RECORD_BATCH_LEAK_CHECK) && runner_leak_check;

        /* The target's custom mutator, for a batch that the worker says
         * uses it; its crossover writes into a scratch buffer of ours. */
        const CustomMutator *custom = NULL;
        if (a->custom && ((h->flags & RECORD_F_CUSTOM) || a->rebuild)) {
                rb->cm = *a->custom;
                rb->cm.scratch = malloc(a->layout->max_len);
                if (!rb->cm.scratch)
                        _exit(RUNNER_EXIT_SETUP);
                custom = &rb->cm;
        }
        /* (A rebuild runs no batch: a record it cannot replay leaves the
         * finds area empty, runner_rebuild.) */
        if ((batch_init(in, a->region, a->layout, work, &cmplog_live, custom) < 0 ||
             batch_start_seed(in) < 0) &&
            !a->rebuild)
                _exit(RUNNER_EXIT_SETUP);

        /* Whatever the target's initialization touched is not coverage of
         * any input. */
        coverage_clear();
        cmplog_clear();

        if (first_batch) {
                if ((rb->check_leaks ? sandbox_apply_leak_check(a->sandbox)
                                     : sandbox_apply(a->sandbox)) < 0)
                        _exit(RUNNER_EXIT_SETUP);
                h->runner_state = RECORD_RUNNER_RUNNING;
                /* From here on, allocations are the target's: hold them to
                 * --malloc-limit-mb. */
                if (runner_malloc_armed)
                        *runner_malloc_armed = 1;
                if (a->rebuild)
                        runner_rebuild(a->region, a->layout, custom, a->rebuild, work);
        }

        /* Reductions: an input an eighth shorter than its chain's base
         * (or than the last reduction of it in this batch) that reaches
         * every feature the base is the best input for, and nothing new,
         * is handed back (RECORD_FIND_F_SMALLER); a load per such feature,
         * for such shorter inputs only. Each reduction is a corpus entry
         * and a file, so a byte at a time would be thousands of them (19k
         * in 150 s on expat): by eighths, a 4 KiB input is down to a few
         * bytes in some 60. */
        rb->best = record_base_best(a->region, a->layout);
        if (!rb->fuzz || !rb->collect || rb->best->n != in->inputs.bases.n)
                rb->best = NULL;
        for (uint32_t j = 0; rb->best && j < rb->best->n; j++)
                rb->shortest[j] = in->inputs.bases.len[j];
}

/* At the start of chain @chain: the features its base is the best input
 * for, which a shorter input must reach to stand in for it. */
static void runner_reduction_chain(RunnerBatch *rb, uint64_t chain)
{
        uint32_t j = (uint32_t)(chain % rb->best->n);
        rb->want = rb->best->base[j].id;
        rb->n_want = rb->best->base[j].n <= RECORD_BASE_BEST ? rb->best->base[j].n : 0;
        rb->short_len = rb->n_want ? &rb->shortest[j] : NULL;
}

/* A history replay runs iteration @k again as often as the dead runner's
 * history says (a find that was also a leak suspect ran three times). */
static void runner_replay_reruns(RunnerBatch *rb, const uint8_t *data, size_t len, uint64_t k)
{
        const RecordHeader *h = rb->h;
        while (rb->next_rerun < h->n_reruns && h->reruns[rb->next_rerun] < k)
                rb->next_rerun++;
        for (; rb->next_rerun < h->n_reruns && h->reruns[rb->next_rerun] == k; rb->next_rerun++)
                (void)rb->a->test(data, len);
}

/* Hands iteration @k's input back (new coverage @nf, a reduction, or a
 * seed), and runs it again for its features. Returns false when the finds
 * area is full. */
static bool runner_hand_back(RunnerBatch *rb, const uint8_t *data, size_t len, uint64_t k,
                             size_t nf, bool smaller)
{
        const RunnerArgs *a = rb->a;
        uint32_t flags = nf ? 0 : smaller ? RECORD_FIND_F_SMALLER : RECORD_FIND_F_KNOWN;

        rb->added += nf;
        rb->h->new_features = rb->added;
        runner_push_find(a->region, a->layout, rb->in->work, len, k, flags);
        if (smaller) {
                *rb->short_len = (uint32_t)len;
        } else if (rb->fuzz) {
                cmplog_push_tokens(a->region, a->layout, &rb->in->trace);
                for (uint32_t ops = rb->in->trace.ops; ops; ops &= ops - 1)
                        rb->op_found[__builtin_ctz(ops)]++;
        }
        runner_find_features(a, rb->h, data, len, k);
        return record_finds(a->region, a->layout)->used < RECORD_FINDS_SLOTS;
}

/* The end of a batch that ran: a leak check, the figures for the
 * coordinator, the state. */
static bool runner_batch_finish(RunnerBatch *rb, uint64_t loop_start)
{
        RecordHeader *h = rb->h;

        /* LeakSanitizer prints its report to stderr, the worker's pipe. */
        if (rb->check_leaks && runner_leak_check()) {
                runner_record_death(0, NULL, NULL, RECORD_DEATH_LEAK);
                _exit(RUNNER_EXIT_LEAK);
        }
        runner_flush_op_stats(h, &rb->in->trace, rb->op_found);
        h->loop_ns = (uint64_t)clock_now_ns() - loop_start;
        h->runner_state = rb->full ? RECORD_RUNNER_FULL : RECORD_RUNNER_DONE;
        /* The custom mutator's scratch buffer is this batch's (a runner
         * that runs several batches would leak one per batch). */
        free(rb->cm.scratch);
        rb->cm.scratch = NULL;
        return runner_batch_may_share(h);
}

/* The loop: per iteration, the input (worker/batch.h), count, the target,
 * the coverage scan; everything rarer is a call. */
static bool runner_batch(const RunnerArgs *a, Batch *batch, uint8_t *work, uint8_t *write_end,
                         uint8_t *exec_end, bool first_batch)
{
        RunnerBatch rb;
        runner_batch_setup(&rb, a, batch, work, first_batch);
        RecordHeader *h = rb.h;
        const uint64_t iters = h->iters;

        const uint64_t loop_start = (uint64_t)clock_now_ns();
        for (uint64_t k = 1; k <= iters; k++) {
                int made = batch_next(batch);
                if (__builtin_expect(made != BATCH_STEP, 0)) {
                        if (made == BATCH_END)
                                break; /* the seed list ended: the batch is done */
                        if (rb.best)
                                runner_reduction_chain(&rb, batch->chain);
                }
                if (__builtin_expect(k < rb.first, 0))
                        continue; /* replaying history: only the mutations */
                const size_t len = batch->len;
                memcpy(write_end - len, batch->work, len);
                const uint8_t *data = exec_end - len;

                __atomic_store_n(&h->count, k, __ATOMIC_RELAXED);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                cmplog_record_left = CMPLOG_RECORD_BUDGET;
                cmplog_mode = cmplog_value_profile |
                              (made == BATCH_CHAIN && batch->records_cmps ? CMPLOG_RECORD : 0);
                const uint64_t mallocs = rb.watch_leaks ? runner_mallocs : 0;
                const uint64_t frees = rb.watch_leaks ? runner_frees : 0;
                const uintptr_t top = stackdepth_begin();
                int rc = a->test(data, len);
                stackdepth_end(top);
                cmplog_mode = 0;
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                bool suspect = rb.watch_leaks && runner_mallocs - mallocs > runner_frees - frees;
                if (__builtin_expect(suspect, 0) && rb.leak_reruns == RECORD_LEAK_RERUNS) {
                        /* The history has no room for more: stop watching. */
                        rb.watch_leaks = false;
                        suspect = false;
                }
                if (__builtin_expect(rb.replaying && rb.next_rerun < h->n_reruns, 0))
                        runner_replay_reruns(&rb, data, len, k);
                if (rc == TARGET_REJECT) {
                        coverage_clear();
                } else {
                        bool smaller = rb.short_len && len + (*rb.short_len >> 3) < *rb.short_len &&
                                       coverage_reaches(rb.want, rb.n_want);
                        size_t nf = coverage_scan(a->coverage);
                        smaller = smaller && nf == 0;
                        /* Every seed is handed back, new coverage or not, so
                         * that its features are known (a resumed run rebuilds
                         * them). */
                        if (__builtin_expect(nf != 0 || !rb.fuzz || smaller, 0) && rb.collect &&
                            !runner_hand_back(&rb, data, len, k, nf, smaller)) {
                                rb.full = true;
                                break;
                        }
                }
                if (__builtin_expect(suspect, 0)) {
                        rb.leak_reruns++;
                        runner_leak_rerun(h, a->test, data, len, k);
                }
        }
        return runner_batch_finish(&rb, loop_start);
}

/* A sanitizer confirmation's batch (RunnerArgs.confirm): each input runs
 * from a heap buffer of exactly its length, so that AddressSanitizer's
 * redzone, not the guard page, stops a read past its end and names it
 * (heap-buffer-overflow, and how far past which region). Nothing is
 * collected: no finds, no features, no leak watch; a history replay still
 * runs its reruns. A loop of its own: the fuzzing loop above pays nothing
 * for it. */
static bool runner_confirm_batch(const RunnerArgs *a, Batch *batch, uint8_t *work, bool first_batch)
{
        RunnerBatch rb;
        runner_batch_setup(&rb, a, batch, work, first_batch);
        RecordHeader *h = rb.h;

        const uint64_t loop_start = (uint64_t)clock_now_ns();
        for (uint64_t k = 1; k <= h->iters; k++) {
                if (batch_next(batch) == BATCH_END)
                        break;
                if (k < rb.first)
                        continue;
                const size_t len = batch->len;
                uint8_t *data = malloc(len);
                if (len && !data)
                        _exit(RUNNER_EXIT_SETUP);
                if (len)
                        memcpy(data, batch->work, len);
                __atomic_store_n(&h->count, k, __ATOMIC_RELAXED);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                (void)a->test(data, len);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                if (rb.replaying && rb.next_rerun < h->n_reruns)
                        runner_replay_reruns(&rb, data, len, k);
                free(data);
                coverage_clear();
        }
        return runner_batch_finish(&rb, loop_start);
}
