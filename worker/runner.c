/*
 * The in-process loop. Replay invariant (include/snapfuzz/record.h): at
 * every instant, record->count names the input the target is running or
 * has just run, and the PRNG slot of its chain is complete, because
 *   1. the chain's slot, and the comparison table it names (frozen from
 *      the live table the target's comparisons fill, worker/cmplog.h), are
 *      written before any of its mutations,
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
 * overwrite-input; nothing is compared after each execution.
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
#include "worker/cmplog.h"
#include "recovery/replay.h"
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

static int runner_install_handlers(void)
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
                if (sigaction(runner_fatal_signals[i], &sa, NULL) < 0)
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
        (void)a->test(data, len);
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

/* One step of a batch made with the target's custom mutator. What the
 * mutator's own code hit is not coverage of the input, so the counters are
 * cleared after it (as libFuzzer resets its maps before each execution);
 * the input is noted for recovery before count can name it. */
static size_t runner_custom_step(RecordHeader *h, const CustomMutator *cm, const MutatorCtx *ctx,
                                 SfPrng *rng, uint8_t *work, size_t len, size_t max_len, uint64_t k)
{
        len = custom_mutate(cm, ctx, rng, work, len, max_len);
        coverage_clear();
        record_exec_note(h, k, work, len);
        return len;
}

__attribute__((noreturn)) static void runner_rebuild(void *region, const RecordLayout *l,
                                                     const CustomMutator *cm, int how, uint8_t *buf)
{
        RecordHeader *h = record_header(region);
        uint64_t k = __atomic_load_n(&h->count, __ATOMIC_RELAXED);
        size_t len = 0;

        h->runner_state = RECORD_RUNNER_REBUILDING;
        int r = how == RECORD_REBUILT_SEED ? replay_custom_from_seed(region, l, cm, k, buf, &len)
                                           : replay_custom_at(region, l, cm, k, buf, &len);
        if (r == 0) {
                runner_push_find(region, l, buf, len, k, (uint32_t)how);
        }
        h->runner_state = RECORD_RUNNER_DONE;
        _exit(RUNNER_EXIT_DONE);
}

/* Runs the batch the record describes, the first of this runner's
 * (@first_batch: applies the sandbox) or a later one. Returns true when the batch
 * ran to its end (state DONE or FULL) and the runner may take another. */
static bool runner_batch(const RunnerArgs *a, uint8_t *work, uint8_t *write_end, uint8_t *exec_end,
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
        if (a->output_fd >= 0) {
                dup2(a->output_fd, STDOUT_FILENO);
                dup2(a->output_fd, STDERR_FILENO);
                if (a->output_fd > STDERR_FILENO)
                        close(a->output_fd);
                /* The pipe was non-blocking for the worker's reads; the
                 * runner's writes should block rather than lose output. */
                fcntl(STDOUT_FILENO, F_SETFL, 0);
        }
        /* Namespaces' empty root, no capabilities, no descriptors but ours. */
        if (sandbox_isolate(a->sandbox, a->ctl_fd) < 0)
                _exit(RUNNER_EXIT_SETUP);

        uint8_t *write_end, *exec_end;
        uint8_t *work = malloc(l->max_len);
        if (runner_map_input(l->max_len, &write_end, &exec_end) < 0 || !work ||
            runner_install_handlers() < 0)
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
         * process, the runner has lived a->lifetime_ns, or the worker
         * says no more (anything but RUNNER_CTL_GO, or end of file). */
        const pid_t pid = h->runner_pid;
        const uint64_t born = (uint64_t)clock_now_ns();
        for (bool first = true;; first = false) {
                if (!first) {
                        h->runner_pid = pid;
                        h->runner_state = RECORD_RUNNER_RUNNING;
                }
                if (!runner_batch(a, work, write_end, exec_end, first) || a->ctl_fd < 0 ||
                    (uint64_t)clock_now_ns() - born >= a->lifetime_ns)
                        _exit(RUNNER_EXIT_DONE);
                char c = RUNNER_CTL_DONE;
                if (write(a->ctl_fd, &c, 1) != 1 || read(a->ctl_fd, &c, 1) != 1 ||
                    c != RUNNER_CTL_GO)
                        _exit(RUNNER_EXIT_DONE);
        }
}

static bool runner_batch(const RunnerArgs *a, uint8_t *work, uint8_t *write_end, uint8_t *exec_end,
                         bool first_batch)
{
        void *region = a->region;
        const RecordLayout *l = a->layout;
        RecordHeader *h = record_header(region);

        const uint8_t *base = record_base(region, l);
        const size_t base_len = h->base_len;
        const size_t max_len = l->max_len;
        /* A fuzz batch's bases and partners (record_inputs_chain). */
        static RecordInputs inputs;
        if (h->mode == RECORD_MODE_FUZZ && record_inputs(region, l, &inputs) < 0)
                _exit(RUNNER_EXIT_SETUP);
        size_t mut_max = max_len;
        const uint64_t iters = h->iters;
        const uint64_t chain_len = h->chain_len;
        const int fuzz = h->mode == RECORD_MODE_FUZZ;
        const int seeds = h->mode == RECORD_MODE_SEEDS;
        size_t seed_cursor = 0;
        uint64_t seed_k = 1;
        const uint64_t first = h->first_exec > 1 ? h->first_exec : 1;
        const int collect = !(h->batch_flags & RECORD_BATCH_REPLAY);
        /* A fuzzing runner decides which iterations run twice (leak
         * suspects) and notes them; a history replay runs the ones the dead
         * runner noted. */
        const int replaying = (h->batch_flags & RECORD_BATCH_REPLAY) != 0;
        int watch_leaks =
            !replaying && (h->batch_flags & RECORD_BATCH_LEAK_WATCH) && runner_leak_check;
        uint32_t next_rerun = 0, leak_reruns = 0;
        if (!replaying)
                h->n_reruns = 0;
        else if (h->n_reruns > RECORD_MAX_RERUNS)
                h->n_reruns = RECORD_MAX_RERUNS;
        const int check_leaks = (h->batch_flags & RECORD_BATCH_LEAK_CHECK) && runner_leak_check;

        static MutatorDict dict;
        static MutatorTrace trace;
        static MutatorPlan plan;
        static uint32_t op_found[MUTATOR_WEIGHTS];
        memset(&trace, 0, sizeof(trace));
        memset(op_found, 0, sizeof(op_found));
        MutatorCtx ctx = {
            .dict = NULL,
            .trace = &trace,
            .plan = mutator_plan_init(&plan, h->op_weights) ? &plan : NULL,
        };
        CmpFreezer freezer;
        cmplog_freezer_init(&freezer, region, l);
        if (h->table_len && mutator_dict_parse(&dict, record_table(region, l), h->table_len))
                ctx.dict = &dict;

        SfPrng rng;
        prng_seed(&rng, h->seed, h->batch_id);

        /* The target's custom mutator, for a batch that the worker says
         * uses it; its crossover writes into a scratch buffer of ours. */
        CustomMutator cm = {0};
        const CustomMutator *custom = NULL;
        if (a->custom && ((h->flags & RECORD_F_CUSTOM) || a->rebuild)) {
                cm = *a->custom;
                cm.scratch = malloc(max_len);
                if (!cm.scratch)
                        _exit(RUNNER_EXIT_SETUP);
                custom = &cm;
        }

        /* Whatever the target's initialization touched is not coverage of
         * any input. */
        coverage_clear();
        cmplog_clear();

        if (first_batch) {
                if ((check_leaks ? sandbox_apply_leak_check(a->sandbox)
                                 : sandbox_apply(a->sandbox)) < 0)
                        _exit(RUNNER_EXIT_SETUP);
                h->runner_state = RECORD_RUNNER_RUNNING;
                /* From here on, allocations are the target's: hold them to
                 * --malloc-limit-mb. */
                if (runner_malloc_armed)
                        *runner_malloc_armed = 1;
                if (a->rebuild)
                        runner_rebuild(region, l, custom, a->rebuild, work);
        }

        /* Reductions: an input an eighth shorter than its chain's base
         * (or than the last reduction of it in this batch) that reaches
         * every feature the base is the best input for, and nothing new,
         * is handed back (RECORD_FIND_F_SMALLER); a load per such feature,
         * for such shorter inputs only. Each reduction is a corpus entry
         * and a file, so a byte at a time would be thousands of them (19k
         * in 150 s on expat): by eighths, a 4 KiB input is down to a few
         * bytes in some 60. */
        static uint32_t shortest[RECORD_PACK_MAX];
        const RecordBaseBest *best = record_base_best(region, l);
        if (!fuzz || !collect || best->n != inputs.bases.n)
                best = NULL;
        for (uint32_t j = 0; best && j < best->n; j++)
                shortest[j] = inputs.bases.len[j];
        const uint32_t *want = NULL;
        uint32_t n_want = 0;
        uint32_t *short_len = NULL;

        /* An exec batch's input; a list (seeds, packed bases) is copied
         * entry by entry below. */
        size_t len = base_len <= max_len ? base_len : 0;
        memcpy(work, base, len);
        uint64_t added = 0;

        int record_cmps = 0;
        int full = 0;

        const uint64_t loop_start = (uint64_t)clock_now_ns();
        for (uint64_t k = 1; k <= iters; k++) {
                if (fuzz) {
                        uint64_t idx = k - 1;
                        if (idx % chain_len == 0) {
                                uint64_t chain = idx / chain_len, cmp_gen;
                                ctx.cmp =
                                    cmplog_chain_begin(&freezer, &cmplog_live, chain, &cmp_gen);
                                record_cmps = cmplog_chain_records(&freezer, chain);
                                trace.n = 0;
                                record_chain_begin(h, &rng, chain, cmp_gen);
                                const uint8_t *cb;
                                record_inputs_chain(&inputs, chain, &cb, &len, &ctx.partner,
                                                    &ctx.partner_len);
                                memcpy(work, cb, len);
                                mut_max = record_mutation_max_len(h, l, len);
                                if (best) {
                                        uint32_t j = (uint32_t)(chain % best->n);
                                        want = best->base[j].id;
                                        n_want = best->base[j].n <= RECORD_BASE_BEST
                                                     ? best->base[j].n
                                                     : 0;
                                        short_len = n_want ? &shortest[j] : NULL;
                                }
                        }
                        if (custom)
                                len = runner_custom_step(h, custom, &ctx, &rng, work, len, mut_max,
                                                         k);
                        else
                                len = mutator_mutate(&ctx, &rng, work, len, mut_max);
                } else if (seeds) {
                        const uint8_t *entry;
                        uint32_t elen;
                        if (record_seed_at(base, base_len, k, &seed_cursor, &seed_k, &entry,
                                           &elen) < 0 ||
                            elen > max_len)
                                break; /* the list ended: the batch is done */
                        memcpy(work, entry, elen);
                        len = elen;
                }
                if (__builtin_expect(k < first, 0))
                        continue; /* replaying history: only the mutations */
                memcpy(write_end - len, work, len);
                const uint8_t *data = exec_end - len;

                __atomic_store_n(&h->count, k, __ATOMIC_RELAXED);
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                cmplog_record_left = CMPLOG_RECORD_BUDGET;
                cmplog_mode = cmplog_value_profile |
                              (record_cmps && (k - 1) % chain_len == 0 ? CMPLOG_RECORD : 0);
                const uint64_t mallocs = watch_leaks ? runner_mallocs : 0;
                const uint64_t frees = watch_leaks ? runner_frees : 0;
                int rc = a->test(data, len);
                cmplog_mode = 0;
                __atomic_signal_fence(__ATOMIC_SEQ_CST);
                int suspect = watch_leaks && runner_mallocs - mallocs > runner_frees - frees;
                if (__builtin_expect(suspect, 0) && leak_reruns == RECORD_LEAK_RERUNS) {
                        /* The history has no room for more: stop watching. */
                        watch_leaks = 0;
                        suspect = 0;
                }
                if (__builtin_expect(replaying && next_rerun < h->n_reruns, 0)) {
                        while (next_rerun < h->n_reruns && h->reruns[next_rerun] < k)
                                next_rerun++;
                        /* A find that was also a leak suspect ran three times. */
                        for (; next_rerun < h->n_reruns && h->reruns[next_rerun] == k; next_rerun++)
                                (void)a->test(data, len);
                }
                if (rc == TARGET_REJECT) {
                        coverage_clear();
                        if (__builtin_expect(suspect, 0)) {
                                leak_reruns++;
                                runner_leak_rerun(h, a->test, data, len, k);
                        }
                        continue;
                }
                int smaller = short_len && len + (*short_len >> 3) < *short_len &&
                              coverage_reaches(want, n_want);
                size_t nf = coverage_scan(a->coverage);
                smaller = smaller && nf == 0;
                /* Every seed is handed back, new coverage or not, so that
                 * its features are known (a resumed run rebuilds them). */
                if (__builtin_expect(nf != 0 || !fuzz || smaller, 0) && collect) {
                        uint32_t flags = nf        ? 0
                                         : smaller ? RECORD_FIND_F_SMALLER
                                                   : RECORD_FIND_F_KNOWN;
                        added += nf;
                        h->new_features = added;
                        runner_push_find(region, l, work, len, k, flags);
                        if (smaller) {
                                *short_len = (uint32_t)len;
                        } else if (fuzz) {
                                cmplog_push_tokens(region, l, &trace);
                                for (uint32_t ops = trace.ops; ops; ops &= ops - 1)
                                        op_found[__builtin_ctz(ops)]++;
                        }
                        runner_find_features(a, h, data, len, k);
                        if (record_finds(region, l)->used >= RECORD_FINDS_SLOTS) {
                                full = 1;
                                break;
                        }
                }
                if (__builtin_expect(suspect, 0)) {
                        leak_reruns++;
                        runner_leak_rerun(h, a->test, data, len, k);
                }
        }
        /* LeakSanitizer prints its report to stderr, the worker's pipe. */
        if (check_leaks && runner_leak_check()) {
                runner_record_death(0, NULL, NULL, RECORD_DEATH_LEAK);
                _exit(RUNNER_EXIT_LEAK);
        }
        runner_flush_op_stats(h, &trace, op_found);
        h->loop_ns = (uint64_t)clock_now_ns() - loop_start;
        h->runner_state = full ? RECORD_RUNNER_FULL : RECORD_RUNNER_DONE;
        return runner_batch_may_share(h);
}
