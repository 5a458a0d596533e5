/*
 * The main loop is a short list of phases, repeated until the run is over:
 *   dispatch   give every idle worker a batch (a seed to run as is, or a
 *              corpus entry to mutate), and the helper its next job
 *   wait       poll the signalfd, the helper and every worker
 *   collect    take finds into the corpus, dead runners' records into the
 *              recovery queue, stored crashes into the tally
 *   report     the status line and stats.json, every few seconds
 * A dead runner's record is copied out of its worker's shared memory as
 * soon as the worker reports the death, before that worker gets another
 * batch, so recovery never races with fuzzing.
 *
 * Shutting down (budget spent, a crash without --keep-going, Ctrl-C) never
 * records a crash: runners killed for the stop are reported "stopped", and
 * every crash already queued is recovered and stored before exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "app/coordinator.h"
#include "app/dicts.h"
#include "app/sandboxlog.h"
#include "core/corpus.h"
#include "core/coverage.h"
#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/mutsched.h"
#include "core/wproc.h"
#include "core/writeq.h"
#include "recovery/classify.h"
#include "recovery/recovery.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

/* The two below can be set at build time (-D...) for A/B runs
 * (bench/real/one.sh). */
#ifndef COORD_CHAIN_LEN
#define COORD_CHAIN_LEN 4
#endif
/* Executions a fuzz batch gives each corpus entry it mutates (pack_bases):
 * 256 rather than 1024 spreads a batch over four times as many entries; on
 * expat, 10 min: 3038 branches against 3000 (one run each, seed 1), and
 * 3004, 3009 against 2954-3003 before the 64 KiB areas
 * (bench/results/pack-2026-11-21.md). */
#ifndef COORD_EXECS_PER_BASE
#define COORD_EXECS_PER_BASE 256
#endif
/* How long a fuzz batch lasts (batch_ms). A batch's finds are scheduled
 * only once it ends, so short is better: COORD_BATCH_MS (with pack_bases,
 * 12-16% more branches of expat and libxml2 at 2 minutes than 300 ms
 * batches of one entry; bench/results/pack-2026-11-21.md). Each batch
 * costs a fork, a seccomp filter and an exit, and on a core shared with
 * the coordinator its corpus writes: a worker whose batches cost more than
 * COORD_BATCH_MS / COORD_OVERHEAD_SHARE beyond their loop (a large
 * target's page tables, say) gets longer ones. And the coordinator handles
 * at most some 400 batches a second: COORD_BATCH_MS_PER_WORKER per
 * worker. */
#define COORD_BATCH_MS 20.0
#define COORD_OVERHEAD_SHARE 5.0
#define COORD_BATCH_MS_PER_WORKER 2.5
#define COORD_MAX_BATCH_MS 1000.0
#define COORD_MIN_ITERS 64
#define COORD_MAX_ITERS (1u << 20)

typedef struct Slot {
        Wproc *w;
        bool alive;
        bool busy;
        bool seed_batch;
        size_t seed_lo, seed_hi; /* a seed batch: the seeds it runs */
        /* A fuzz batch: the corpus entries it mutates, and how many of its
         * finds each one's chains made. */
        size_t bases[RECORD_PACK_MAX];
        uint32_t base_finds[RECORD_PACK_MAX];
        unsigned n_bases;
        uint64_t iters;
        double rate;        /* executions per millisecond, from the last batch */
        double overhead_ms; /* what a batch costs beyond its loop (decaying mean) */
        int64_t busy_since;
        uint64_t seen_count; /* the record's count when check_stuck last saw it move */
        int64_t moved_ms;
        unsigned restarts;
} Slot;

#define COORD_MAX_RESTARTS 5
#define COORD_LEAK_DISMISSALS 1000
/* Recovery jobs waiting for the helper above which a death whose stack was
 * already queued for recovery is counted, not recovered again. */
#define COORD_BACKLOG 8
#define COORD_DEATH_KEYS 4096

typedef struct Job {
        uint8_t *record;
        cJSON *died;
        bool leak_suspect; /* not a crash until the helper confirms it */
        int64_t died_at;
        struct Job *next;
} Job;

/* Seeds of a batch that ended before its last one (the finds area filled
 * up, or a seed crashed): run again from where it stopped. */
typedef struct SeedRange {
        size_t lo, hi;
} SeedRange;

typedef struct Coordinator {
        RunConfig *cfg;
        RecordLayout layout;
        Slot *slots;
        unsigned n_slots;
        Corpus *corpus;
        WriteQueue *corpus_q; /* writes new entries into OUT/corpus off the loop */
        int corpus_fd;
        RunDicts *dicts;
        int cov_fd;
        CoverageShared *cov;

        pid_t helper_pid;
        int helper_cmd, helper_evt;
        MsgReader helper_reader;
        void *job_region;
        Job *queue_head, *queue_tail;
        bool helper_busy;
        uint64_t jobs_sent;

        int sigfd;
        SfPrng rng;
        CorpusSeed *seeds;
        size_t n_seeds, next_seed, n_resumed;
        SeedRange *seed_redo;
        size_t n_seed_redo, cap_seed_redo;
        bool legacy_schedule; /* SNAPFUZZ_SCHEDULE=legacy: the scheduler before energy */
        /* The seed list of a warm-up batch, or a fuzz batch's bases
         * (area_len bytes each). */
        uint8_t *seed_pack;
        uint8_t *partner_pack;
        RecordBaseBest pack_best; /* what a fuzz batch's bases are the best for */
        uint64_t reduced;         /* inputs handed back as a shorter form of their base */

        uint64_t execs, dispatched, batch_ids;
        uint64_t batches_ended, runners_forked;
        uint64_t events; /* messages read from workers */
        int64_t start_ms, last_status_ms;
        uint64_t deaths, stored, unique, lost;
        /* Deaths by stack (kind and the exact module offsets of its frames),
         * for the backlog rule: an open-addressing set of hashes. */
        uint64_t death_keys[COORD_DEATH_KEYS];
        unsigned n_death_keys, queued;
        uint64_t duplicates_skipped;
        int crash_pending;
        /* Leak suspects (runner.c): confirmed or dismissed by the helper.
         * Watching stops after COORD_LEAK_DISMISSALS dismissals, as
         * libFuzzer stops after 1000 unconfirmed checks. */
        bool leak_watch;
        uint64_t leak_suspects, leak_dismissed;
        unsigned leak_pending; /* suspects queued or with the helper */
        bool stopping, interrupted, internal_error;
        bool fresh_runners;      /* a crash did not reproduce from its batch: no more reuse */
        SandboxLog *sandbox_log; /* the workers' "sandbox" events */
        int outdir_fd;
        MutSched mutsched; /* length limit and operator weights of fuzz batches */
} Coordinator;

static void fmt_count(char *buf, size_t cap, double v)
{
        if (v >= 1e9)
                snprintf(buf, cap, "%.2fG", v / 1e9);
        else if (v >= 1e6)
                snprintf(buf, cap, "%.2fM", v / 1e6);
        else if (v >= 1e4)
                snprintf(buf, cap, "%.1fk", v / 1e3);
        else
                snprintf(buf, cap, "%.0f", v);
}

/* User and system time of the process or the calling thread. */
static double rusage_seconds(int who)
{
        struct rusage ru;
        if (getrusage(who, &ru) < 0)
                return 0;
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double batch_ms(const Coordinator *c, const Slot *s);

static int write_stats(Coordinator *c, const char *status)
{
        double secs = (double)(clock_now_ms() - c->start_ms) / 1000.0;
        char seed[24];
        cJSON *j = cJSON_CreateObject();
        if (!j)
                return -ENOMEM;
        snprintf(seed, sizeof(seed), "%" PRIu64, c->cfg->seed);
        cJSON_AddStringToObject(j, "status", status);
        cJSON_AddStringToObject(j, "target", c->cfg->target_abs);
        cJSON_AddNumberToObject(j, "elapsed_s", secs);
        cJSON_AddNumberToObject(j, "execs", (double)c->execs);
        cJSON_AddNumberToObject(j, "execs_per_sec", secs > 0 ? (double)c->execs / secs : 0);
        cJSON_AddNumberToObject(j, "edges", c->cov ? (double)c->cov->edges : 0);
        cJSON_AddNumberToObject(j, "features", c->cov ? (double)c->cov->features : 0);
        cJSON_AddNumberToObject(j, "counters", c->cov ? (double)c->cov->counters : 0);
        cJSON_AddNumberToObject(j, "corpus", c->corpus ? (double)corpus_size(c->corpus) : 0);
        /* Fuzz batches: their length, and what each cost beyond its loop
         * (fork, sandbox, exit), as the first worker last measured them. */
        if (c->n_slots && c->slots) {
                cJSON_AddNumberToObject(j, "batch_ms", batch_ms(c, &c->slots[0]));
                cJSON_AddNumberToObject(j, "batch_overhead_ms", c->slots[0].overhead_ms);
        }
        /* Batches that ended, and the runner processes that ran them
         * (--runner-lifetime-ms). */
        cJSON_AddNumberToObject(j, "batches", (double)c->batches_ended);
        cJSON_AddNumberToObject(j, "runners_forked", (double)c->runners_forked);
        if (c->corpus && !c->legacy_schedule) {
                cJSON_AddNumberToObject(j, "corpus_active", (double)corpus_active_count(c->corpus));
                cJSON_AddNumberToObject(j, "corpus_favored",
                                        (double)corpus_favored_count(c->corpus));
        }
        cJSON_AddStringToObject(j, "schedule", c->legacy_schedule ? "legacy" : "energy");
        /* Inputs that took a corpus entry's exact path in fewer bytes. */
        cJSON_AddNumberToObject(j, "corpus_reduced", (double)c->reduced);
        cJSON_AddNumberToObject(j, "autodict", c->dicts ? (double)dicts_auto_count(c->dicts) : 0);
        cJSON_AddNumberToObject(j, "runner_deaths", (double)c->deaths);
        cJSON_AddNumberToObject(j, "crashes", (double)c->stored);
        cJSON_AddNumberToObject(j, "unique_crashes", (double)c->unique);
        cJSON_AddNumberToObject(j, "inputs_lost", (double)c->lost);
        cJSON_AddNumberToObject(j, "duplicate_deaths_skipped", (double)c->duplicates_skipped);
        cJSON_AddNumberToObject(j, "leak_suspects", (double)c->leak_suspects);
        cJSON_AddNumberToObject(j, "leak_suspects_dismissed", (double)c->leak_dismissed);
        cJSON_AddNumberToObject(j, "workers", c->n_slots);
        cJSON_AddNumberToObject(j, "len_limit", (double)c->mutsched.len_limit);
        /* What the coordinator itself costs: its own CPU time (not the
         * workers' or the helper's) against the messages it handled, the
         * figure that says how many workers one coordinator can serve;
         * the event loop's share apart from the corpus writer thread's. */
        cJSON_AddNumberToObject(j, "coordinator_cpu_s", rusage_seconds(RUSAGE_SELF));
        cJSON_AddNumberToObject(j, "coordinator_loop_cpu_s", rusage_seconds(RUSAGE_THREAD));
        cJSON_AddNumberToObject(j, "worker_events", (double)c->events);
        cJSON_AddStringToObject(j, "seed", seed);
        sandboxlog_add_stats(c->sandbox_log, j);
        char *s = cJSON_Print(j);
        cJSON_Delete(j);
        if (!s)
                return -ENOMEM;
        int r = fs_write_atomic(c->outdir_fd, "stats.json", s, strlen(s));
        cJSON_free(s);
        return r;
}

/* The automatic dictionary is saved with the status line and at the end;
 * losing a few seconds of it to a kill costs little. */
static void save_autodict(Coordinator *c)
{
        int r = dicts_save_auto(c->dicts);
        if (r < 0)
                log_warn("cannot write %s/" DICTS_AUTO_FILE ": %s", c->cfg->out_dir, strerror(-r));
}

static void print_status(Coordinator *c, const char *prefix)
{
        double secs = (double)(clock_now_ms() - c->start_ms) / 1000.0;
        char execs[32], rate[32];
        fmt_count(execs, sizeof(execs), (double)c->execs);
        fmt_count(rate, sizeof(rate), secs > 0 ? (double)c->execs / secs : 0);
        fprintf(stderr,
                "%s[%6.1fs] execs %s (%s/s)  cov %" PRIu64 " ft %" PRIu64
                "  corpus %zu  crashes %" PRIu64 " (%" PRIu64 " unique)\n",
                prefix, secs, execs, rate, c->cov->edges, c->cov->features, corpus_size(c->corpus),
                c->stored, c->unique);
}

/* --- the recovery helper --- */

static int helper_start(Coordinator *c)
{
        int cmd[2], evt[2];
        int fd = memfd_create("snapfuzz-job", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t)c->layout.record_size) < 0)
                goto err_fd;
        c->job_region =
            mmap(NULL, c->layout.record_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (c->job_region == MAP_FAILED)
                goto err_fd;
        close(fd);
        if (pipe2(cmd, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(evt, O_CLOEXEC) < 0)
                return -errno;
        c->helper_pid = fork();
        if (c->helper_pid < 0)
                return -errno;
        if (c->helper_pid == 0) {
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGINT, SIG_IGN);
                signal(SIGPIPE, SIG_IGN);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                close(cmd[1]);
                close(evt[0]);
                if (c->sigfd >= 0)
                        close(c->sigfd);
                RecoveryConfig rc = {
                    .target = c->cfg->target_abs,
                    .out_dir = c->cfg->out_dir,
                    .max_len = c->layout.max_len,
                    .timeout_ms = c->cfg->timeout_ms,
                    .rss_limit_mb = c->cfg->rss_limit_mb,
                    .malloc_limit_mb = c->cfg->malloc_limit_mb,
                    .sandbox = c->cfg->sandbox,
                    .minimize_ms = c->cfg->minimize_ms,
                    .sandbox_policy = c->cfg->sandbox_policy,
                    .detect_leaks = c->cfg->detect_leaks,
                };
                int r = recovery_main(&rc, cmd[0], evt[1], c->job_region);
                _exit(r < 0 ? SF_EXIT_INTERNAL : 0);
        }
        close(cmd[0]);
        close(evt[1]);
        c->helper_cmd = cmd[1];
        c->helper_evt = evt[0];
        msg_reader_init(&c->helper_reader, c->helper_evt);
        return 0;
err_fd:
        close(fd);
        return -errno;
}

static void helper_dispatch(Coordinator *c)
{
        if (c->helper_busy || !c->queue_head)
                return;
        Job *j = c->queue_head;
        c->queue_head = j->next;
        if (c->queued > 0)
                c->queued--;
        if (!c->queue_head)
                c->queue_tail = NULL;
        memcpy(c->job_region, j->record, c->layout.record_size);
        cJSON *m = msg_new("recover");
        if (m) {
                cJSON_AddNumberToObject(m, "job", (double)++c->jobs_sent);
                cJSON_AddNumberToObject(m, "died_at_ms", (double)j->died_at);
                cJSON_AddItemToObject(m, "died", j->died);
                j->died = NULL;
                if (j->leak_suspect)
                        cJSON_AddBoolToObject(m, "leak_suspect", 1);
                if (msg_send(c->helper_cmd, m) == 0)
                        c->helper_busy = true;
                else {
                        log_error("the recovery helper is gone; a crash could not be stored");
                        c->internal_error = true;
                }
                cJSON_Delete(m);
        }
        cJSON_Delete(j->died);
        free(j->record);
        free(j);
}

static void helper_event(Coordinator *c, cJSON *m)
{
        const char *type = msg_str(m, "type", "");
        bool suspect = msg_bool(m, "leak_suspect", 0);
        c->helper_busy = false;
        if (!suspect && c->crash_pending > 0)
                c->crash_pending--;
        if (suspect && c->leak_pending > 0)
                c->leak_pending--;
        if (strcmp(type, "dismissed") == 0) {
                /* More allocations than frees, but LeakSanitizer found
                 * every block still reachable: a cache, not a leak. */
                if (++c->leak_dismissed == COORD_LEAK_DISMISSALS && c->leak_watch) {
                        c->leak_watch = false;
                        log_warn("%d leak suspects were all reachable memory; leak detection "
                                 "is off for the rest of the run (--detect-leaks 0 avoids the "
                                 "checks)",
                                 COORD_LEAK_DISMISSALS);
                }
        } else if (strcmp(type, "stored") == 0) {
                bool is_new = msg_bool(m, "new", 0);
                c->stored++;
                if (is_new)
                        c->unique++;
                log_info("crash %s: %s (%s)%s, input %" PRId64 " bytes, %s, stored in "
                         "%s/crashes/%s (%" PRId64 " ms after the death)",
                         msg_str(m, "id", "?"), msg_str(m, "kind", "?"), msg_str(m, "message", ""),
                         is_new ? "" : " [seen before]", msg_int(m, "input_len", 0),
                         msg_bool(m, "reproduced", 0) ? "reproduced" : "did not reproduce",
                         c->cfg->out_dir, msg_str(m, "id", "?"),
                         msg_int(m, "death_to_stored_ms", 0));
                /* A crash that its batch's history does not reproduce may
                 * need what earlier batches of the same runner left behind
                 * (app/runner.h): from now on, every batch gets a fresh
                 * runner, so that the next one is stored with its whole
                 * history. A kill from outside depends on nothing. */
                if (!msg_bool(m, "reproduced", 0) && c->cfg->runner_lifetime_ms > 0 &&
                    !c->fresh_runners && strcmp(msg_str(m, "kind", ""), "killed") != 0) {
                        c->fresh_runners = true;
                        log_warn("crash %s did not reproduce from its batch: the target may keep "
                                 "state from a runner's earlier batches; from now on every batch "
                                 "runs in a fresh runner (--runner-lifetime-ms 0 does so from the "
                                 "start)",
                                 msg_str(m, "id", "?"));
                }
                if (!c->cfg->keep_going)
                        c->stopping = true;
        } else if (strcmp(type, "lost") == 0 && suspect) {
                /* Not a crash: nothing was lost but a check. */
                log_warn("a leak suspect's input could not be rebuilt: %s", msg_str(m, "why", "?"));
        } else if (strcmp(type, "lost") == 0) {
                c->lost++;
                log_warn("a runner died but its input could not be rebuilt: %s",
                         msg_str(m, "why", "?"));
                /* A crash happened all the same: a CI run must not pass. */
                if (!c->cfg->keep_going && !msg_bool(m, "no_input", 0))
                        c->stopping = true;
        }
}

/* --- workers --- */

static int spawn_slot(Coordinator *c, Slot *s, char *err, size_t errlen);
static void restart_slot(Coordinator *c, Slot *s, const char *why);
static void seeds_requeue(Coordinator *c, Slot *s, uint64_t count);

static void corpus_write_failed(Coordinator *c, int err);

static void take_finds(Coordinator *c, Slot *s)
{
        void *region = wproc_region(s->w);
        RecordFinds *f = record_finds(region, &c->layout);
        uint32_t used = __atomic_load_n(&f->used, __ATOMIC_ACQUIRE);
        if (used > RECORD_FINDS_SLOTS)
                used = RECORD_FINDS_SLOTS;
        for (uint32_t i = 0; i < used; i++) {
                RecordFindSlot *fs = record_find_slot(region, &c->layout, i);
                RecordFindFeatures *ff = record_find_features(region, &c->layout, i);
                if (fs->len > c->layout.max_len)
                        continue; /* scribbled on; never trust a length from a runner */
                /* A seed that found nothing new is there for its features:
                 * it joins the schedule, it is not written to OUT/corpus. */
                bool known = fs->flags & RECORD_FIND_F_KNOWN;
                /* A shorter form of its base (same path): an entry, not a
                 * find of the base's. */
                bool smaller = fs->flags & RECORD_FIND_F_SMALLER;
                size_t base = SIZE_MAX;
                if (!known && !s->seed_batch && s->n_bases && fs->iteration > 0)
                        base = s->bases[(fs->iteration - 1) / COORD_CHAIN_LEN % s->n_bases];
                if (base != SIZE_MAX && !smaller)
                        s->base_finds[(fs->iteration - 1) / COORD_CHAIN_LEN % s->n_bases]++;
                if ((known || smaller) && c->legacy_schedule)
                        continue;
                const uint8_t *data = (const uint8_t *)(fs + 1);
                int r = corpus_add(c->corpus, data, fs->len, false);
                uint32_t complete = __atomic_load_n(&ff->complete, __ATOMIC_ACQUIRE);
                size_t i_new = corpus_size(c->corpus) - 1;
                bool features =
                    complete == RECORD_FEATURES_COMPLETE || complete == RECORD_FEATURES_TRUNCATED;
                if (r == 1 && smaller && base != SIZE_MAX) {
                        corpus_inherit(c->corpus, i_new, base);
                        c->reduced++;
                }
                if (r == 1 && !c->legacy_schedule && ff->n <= RECORD_FIND_FEATURES && features &&
                    corpus_set_features(c->corpus, i_new, ff->id, ff->n,
                                        complete == RECORD_FEATURES_COMPLETE, ff->exec_ns) < 0)
                        log_warn("out of memory: an input is scheduled without its features");
                if (r == 1 && !known) {
                        /* On disk in the background: a find storm must not
                         * stall the loop for two fsyncs per entry. */
                        char name[SHA1_HEX_LEN];
                        sha1_hex(data, fs->len, name);
                        r = writeq_put(c->corpus_q, name, data, fs->len);
                }
                if (r < 0)
                        corpus_write_failed(c, r);
        }
        if (used)
                (void)dicts_take_tokens(c->dicts, region, &c->layout);
}

static void corpus_write_failed(Coordinator *c, int err)
{
        if (c->internal_error)
                return;
        log_error("cannot write to %s/corpus: %s", c->cfg->out_dir, strerror(-err));
        c->internal_error = true;
        c->stopping = true;
}

static void queue_death(Coordinator *c, Slot *s, cJSON *died, bool leak_suspect)
{
        Job *j = calloc(1, sizeof(*j));
        if (!j || !(j->record = malloc(c->layout.record_size))) {
                free(j);
                log_error("out of memory: a crash could not be queued for recovery");
                c->internal_error = true;
                return;
        }
        memcpy(j->record, wproc_region(s->w), c->layout.record_size);
        j->died = cJSON_Duplicate(died, 1);
        j->died_at = clock_now_ms();
        j->leak_suspect = leak_suspect;
        if (leak_suspect && c->queue_head) {
                /* A check is quick, and watching for leaks waits for it:
                 * it goes before the crashes waiting for recovery. */
                j->next = c->queue_head;
                c->queue_head = j;
        } else {
                if (c->queue_tail)
                        c->queue_tail->next = j;
                else
                        c->queue_head = j;
                c->queue_tail = j;
        }
        c->queued++;
        if (leak_suspect) {
                c->leak_suspects++;
                c->leak_pending++;
                return;
        }
        c->deaths++;
        c->crash_pending++;
}

/* A death's stack as a key: its kind and the module and offset of every
 * frame (the exact places, before symbolization). false when there is no
 * frame to tell deaths apart (a SIGKILL from outside). */
static bool death_key(const cJSON *died, const Classification *cl, uint64_t *ret)
{
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
        const cJSON *frames = cJSON_GetObjectItemCaseSensitive(death, "frames");
        uint64_t h = hash64(cl->kind, strlen(cl->kind), 0);
        int n = 0;
        const cJSON *f;

        cJSON_ArrayForEach(f, frames)
        {
                const char *module = msg_str(f, "module", "");
                const char *offset = msg_str(f, "offset", "");
                h = hash64(module, strlen(module), h);
                h = hash64(offset, strlen(offset), h);
                n++;
        }
        *ret = h | 1; /* 0 marks an empty slot */
        return n > 0;
}

/* Adds @key to the set; returns whether it was there already. A full set
 * forgets nothing and adds nothing more (every later death is recovered). */
static bool death_key_seen(Coordinator *c, uint64_t key)
{
        for (unsigned i = 0; i < COORD_DEATH_KEYS; i++) {
                uint64_t *slot = &c->death_keys[(key + i) % COORD_DEATH_KEYS];
                if (*slot == key)
                        return true;
                if (*slot == 0) {
                        if (c->n_death_keys < COORD_DEATH_KEYS * 3 / 4) {
                                *slot = key;
                                c->n_death_keys++;
                        }
                        return false;
                }
        }
        return false;
}

/*
 * Every death is recovered, unless the helper is behind (COORD_BACKLOG jobs
 * waiting) and a death with the same stack was already queued: a crash that
 * recurs under --keep-going (thousands of times a minute on some targets)
 * would otherwise keep the helper busy long after --max-total-time. Such a
 * death is counted (runner_deaths, duplicate_deaths_skipped), not stored.
 */
static void take_death(Coordinator *c, Slot *s, cJSON *m)
{
        Classification cl;
        uint64_t key;

        classify_death(m, &cl);
        if (!cl.is_crash)
                return;
        if (strcmp(cl.kind, "leak-suspect") == 0) {
                queue_death(c, s, m, true);
                return;
        }
        bool keyed = death_key(m, &cl, &key);
        bool seen = keyed && death_key_seen(c, key);
        if (seen && c->queued >= COORD_BACKLOG) {
                c->deaths++;
                c->duplicates_skipped++;
                return;
        }
        queue_death(c, s, m, false);
}

static void worker_event(Coordinator *c, Slot *s, cJSON *m)
{
        const char *type = msg_str(m, "type", "");
        if (strcmp(type, "done") == 0 || strcmp(type, "died") == 0) {
                uint64_t count = (uint64_t)msg_int(m, "count", 0);
                double ms = msg_num(m, "elapsed_ms", 0);
                c->execs += count;
                c->batches_ended++;
                c->runners_forked += msg_bool(m, "forked", 0);
                s->busy = false;
                if (!s->seed_batch && count > 0)
                        s->rate = (double)count / (ms > 0.01 ? ms : 0.01);
                double loop_ms = msg_num(m, "loop_ms", 0);
                if (!s->seed_batch && loop_ms > 0 && ms >= loop_ms)
                        s->overhead_ms = s->overhead_ms > 0
                                             ? 0.8 * s->overhead_ms + 0.2 * (ms - loop_ms)
                                             : ms - loop_ms;
                if (!s->seed_batch) {
                        const RecordHeader *h = record_header(wproc_region(s->w));
                        mutsched_batch_done(&c->mutsched, h, count, h->new_features);
                }
                take_finds(c, s);
                for (unsigned i = 0; !s->seed_batch && i < s->n_bases; i++)
                        corpus_note_batch(c->corpus, s->bases[i], count / s->n_bases,
                                          s->base_finds[i]);
                if (s->seed_batch)
                        seeds_requeue(c, s, count);
                /* The reference design's "modified input" check: the base
                 * and partner are read-only to runners, so a change means
                 * memory was scribbled on outside the target's reach. */
                if (record_validate(wproc_region(s->w), &c->layout) == RECORD_BAD_PAYLOAD)
                        log_warn("worker %d: the batch's input changed in shared memory during "
                                 "the batch",
                                 (int)wproc_pid(s->w));
                if (strcmp(type, "died") == 0)
                        take_death(c, s, m);
        } else if (strcmp(type, "sandbox") == 0) {
                sandboxlog_event(c->sandbox_log, m);
        } else if (strcmp(type, "error") == 0) {
                log_error("worker %d: %s", (int)wproc_pid(s->w), msg_str(m, "message", "?"));
                restart_slot(c, s, "reported an error");
        }
}

/* A worker that died or stopped answering is replaced, a few times at
 * most: a worker fails for its own reasons (the kernel's OOM killer, a
 * bug), never because of a target crash, which only costs a runner. */
static void restart_slot(Coordinator *c, Slot *s, const char *why)
{
        char err[1024];
        pid_t old = wproc_pid(s->w);
        wproc_free(s->w);
        s->w = NULL;
        s->alive = false;
        s->busy = false;
        if (c->stopping)
                return;
        if (s->restarts >= COORD_MAX_RESTARTS) {
                log_error("worker %d %s; it was restarted %u times already, giving up on it",
                          (int)old, why, s->restarts);
                return;
        }
        s->restarts++;
        log_warn("worker %d %s; starting a new one", (int)old, why);
        if (spawn_slot(c, s, err, sizeof(err)) < 0)
                log_error("cannot restart the worker: %s", err);
}

static void worker_gone(Coordinator *c, Slot *s)
{
        char why[128];
        int st = wproc_reap(s->w);
        if (c->stopping) {
                s->alive = false;
                s->busy = false;
                return;
        }
        if (st >= 0 && WIFEXITED(st))
                snprintf(why, sizeof(why), "exited with status %d", WEXITSTATUS(st));
        else if (st >= 0 && WIFSIGNALED(st))
                snprintf(why, sizeof(why), "died by signal %d", WTERMSIG(st));
        else
                snprintf(why, sizeof(why), "closed its pipe");
        restart_slot(c, s, why);
}

/* A batch is short by design (COORD_BATCH_MS); a worker whose batch takes
 * far longer than its measured speed and the hang timeout allow, and whose
 * record's count has not moved meanwhile, has stopped answering. A batch
 * whose inputs all happen to be slow (a decoder's large images) is long but
 * moving: the worker's own timeout deals with an input that hangs. */
static void check_stuck(Coordinator *c)
{
        int64_t now = clock_now_ms();
        for (unsigned i = 0; i < c->n_slots; i++) {
                Slot *s = &c->slots[i];
                if (!s->alive || !s->busy)
                        continue;
                uint64_t count =
                    __atomic_load_n(&record_header(wproc_region(s->w))->count, __ATOMIC_RELAXED);
                if (count != s->seen_count) {
                        s->seen_count = count;
                        s->moved_ms = now;
                }
                int64_t since = s->moved_ms > s->busy_since ? s->moved_ms : s->busy_since;
                double expected = s->rate > 0 ? (double)s->iters / s->rate : 0;
                int64_t allowed =
                    30000 + (int64_t)(expected * 20) + 3 * (int64_t)c->cfg->timeout_ms + 5000;
                if (now - since > allowed)
                        restart_slot(c, s, "stopped answering");
        }
}

static bool seeds_left(const Coordinator *c)
{
        return c->n_seed_redo > 0 || c->next_seed < c->n_seeds;
}

/* The seeds still to run, as a range [*lo, *hi) of c->seeds. */
static void seeds_next(const Coordinator *c, size_t *lo, size_t *hi)
{
        if (c->n_seed_redo) {
                *lo = c->seed_redo[c->n_seed_redo - 1].lo;
                *hi = c->seed_redo[c->n_seed_redo - 1].hi;
        } else {
                *lo = c->next_seed;
                *hi = c->n_seeds;
        }
}

/* Marks the seeds before @upto of the range seeds_next() gave as taken. */
static void seeds_take(Coordinator *c, size_t upto)
{
        if (c->n_seed_redo) {
                SeedRange *r = &c->seed_redo[c->n_seed_redo - 1];
                r->lo = upto;
                if (r->lo >= r->hi)
                        c->n_seed_redo--;
        } else {
                c->next_seed = upto;
        }
}

/* A seed batch that ended before its last seed (the finds area filled up,
 * or seed @count crashed) leaves the seeds after @count to run again, so
 * that every seed runs and its features are known. A batch that died
 * before its first seed is not retried. */
static void seeds_requeue(Coordinator *c, Slot *s, uint64_t count)
{
        if (count == 0 || count >= s->seed_hi - s->seed_lo)
                return;
        if (c->n_seed_redo == 0 && c->next_seed == s->seed_hi) {
                /* Nothing was dispatched after it: simply go back. */
                c->next_seed = s->seed_lo + (size_t)count;
                return;
        }
        if (c->n_seed_redo == c->cap_seed_redo) {
                size_t cap = c->cap_seed_redo ? c->cap_seed_redo * 2 : 16;
                SeedRange *r = realloc(c->seed_redo, cap * sizeof(SeedRange));
                if (!r) {
                        log_warn("out of memory: %zu seeds are not run",
                                 s->seed_hi - s->seed_lo - (size_t)count);
                        return;
                }
                c->seed_redo = r;
                c->cap_seed_redo = cap;
        }
        c->seed_redo[c->n_seed_redo++] = (SeedRange){s->seed_lo + (size_t)count, s->seed_hi};
}

static double batch_ms(const Coordinator *c, const Slot *s)
{
        double ms = COORD_BATCH_MS;
        if (ms < COORD_BATCH_MS_PER_WORKER * c->n_slots)
                ms = COORD_BATCH_MS_PER_WORKER * c->n_slots;
        if (ms < COORD_OVERHEAD_SHARE * s->overhead_ms)
                ms = COORD_OVERHEAD_SHARE * s->overhead_ms;
        return ms < COORD_MAX_BATCH_MS ? ms : COORD_MAX_BATCH_MS;
}

/* Appends @len bytes to a list (record_seed_at's format) of @cap bytes
 * filled to *@used; false when they do not fit. */
static bool pack_put(uint8_t *list, size_t cap, size_t *used, const uint8_t *data, size_t len)
{
        if (len > cap || *used + 4 > cap - len)
                return false;
        uint8_t *p = list + *used;
        p[0] = (uint8_t)len;
        p[1] = (uint8_t)(len >> 8);
        p[2] = (uint8_t)(len >> 16);
        p[3] = (uint8_t)(len >> 24);
        if (len)
                memcpy(p + 4, data, len);
        *used += 4 + len;
        return true;
}

/*
 * A fuzz batch's inputs. A runner's batch lasts 20 ms or more, which on a
 * fast target is 10^4 executions: spent on one corpus entry, a corpus of
 * thousands would mostly wait its turn. So the batch mutates a list of
 * entries, each picked by energy for about COORD_EXECS_PER_BASE executions
 * (as many as the record's base area holds), and as many crossover
 * partners, picked uniformly (RECORD_F_PACKED). A batch too short for two
 * bases, or whose first pick fills the area alone, mutates one entry as
 * before. Both lists go into the record (wproc_send_batch), so the batch
 * replays whatever was chosen.
 */
static void pack_bases(Coordinator *c, Slot *s, WprocBatch *b)
{
        uint64_t want = b->iters / COORD_EXECS_PER_BASE;
        if (want > RECORD_PACK_MAX)
                want = RECORD_PACK_MAX;
        if (want < 1)
                want = 1;
        size_t picks[RECORD_PACK_MAX], used = 0, len;
        corpus_schedule_many(c->corpus, &c->rng, picks, want);
        const uint8_t *data = corpus_get(c->corpus, picks[0], &b->base_len);
        s->bases[0] = picks[0];
        s->base_finds[0] = 0;
        s->n_bases = 1;
        c->pack_best.base[0].n = (uint32_t)corpus_best_features(
            c->corpus, picks[0], c->pack_best.base[0].id, RECORD_BASE_BEST);
        c->pack_best.n = 1;
        b->base_best = &c->pack_best;
        if (want < 2 || !pack_put(c->seed_pack, c->layout.area_len, &used, data, b->base_len)) {
                b->base = data;
                size_t p = corpus_pick_partner(c->corpus, &c->rng);
                b->partner = corpus_get(c->corpus, p, &b->partner_len);
                return;
        }
        while (s->n_bases < want) {
                size_t i = picks[s->n_bases];
                data = corpus_get(c->corpus, i, &len);
                if (!pack_put(c->seed_pack, c->layout.area_len, &used, data, len))
                        break;
                s->base_finds[s->n_bases] = 0;
                c->pack_best.base[s->n_bases].n = (uint32_t)corpus_best_features(
                    c->corpus, i, c->pack_best.base[s->n_bases].id, RECORD_BASE_BEST);
                s->bases[s->n_bases++] = i;
        }
        c->pack_best.n = s->n_bases;
        b->base = c->seed_pack;
        b->base_len = used;
        used = 0;
        for (unsigned k = 0; k < s->n_bases; k++) {
                size_t i = corpus_pick_partner(c->corpus, &c->rng);
                data = corpus_get(c->corpus, i, &len);
                if (!pack_put(c->partner_pack, c->layout.area_len, &used, data, len))
                        break;
        }
        b->partner = c->partner_pack;
        b->partner_len = used;
        b->packed = 1;
}

/* A decoder's inputs differ a thousandfold in speed: the last batch's rate,
 * applied to bases that are much slower, made batches of tens of seconds
 * (libjpeg-turbo, once runners stopped paying a fork per batch), whose
 * finds wait that long to be scheduled. The bases' own execution times
 * (measured when they were found) cap the batch at
 * COORD_SLOW_SLACK x its length, and at least COORD_MIN_SLOW_ITERS. */
#define COORD_SLOW_SLACK 2.0
#define COORD_MIN_SLOW_ITERS (2 * COORD_CHAIN_LEN)

static void cap_by_bases(Coordinator *c, const Slot *s, WprocBatch *b)
{
        double sum = 0;
        unsigned known = 0;
        for (unsigned i = 0; i < s->n_bases; i++) {
                uint64_t ns = corpus_exec_ns(c->corpus, s->bases[i]);
                if (ns) {
                        sum += (double)ns;
                        known++;
                }
        }
        if (!known)
                return;
        double cap = batch_ms(c, s) * 1e6 * COORD_SLOW_SLACK / (sum / known);
        if (cap < COORD_MIN_SLOW_ITERS)
                cap = COORD_MIN_SLOW_ITERS;
        if ((double)b->iters > cap)
                b->iters = (uint64_t)cap;
}

static void dispatch_one(Coordinator *c, Slot *s)
{
        WprocBatch b = {.batch_id = ++c->batch_ids, .chain_len = COORD_CHAIN_LEN};
        static const uint8_t empty[1];

        size_t seed_lo = 0, seed_hi = 0;
        b.seed = prng_next64(&c->rng);
        s->n_bases = 0;
        if (seeds_left(c))
                seeds_next(c, &seed_lo, &seed_hi);
        if (seeds_left(c) && c->seeds[seed_lo].len + 4 > c->layout.area_len) {
                /* A seed as long as the record's base runs alone. */
                CorpusSeed *sd = &c->seeds[seed_lo];
                seeds_take(c, seed_lo + 1);
                seed_hi = seed_lo + 1;
                b.mode = RECORD_MODE_EXEC;
                b.iters = 1;
                b.base = sd->data ? sd->data : empty;
                b.base_len = sd->len;
                s->seed_batch = true;
        } else if (seeds_left(c)) {
                /* The warm-up pass: as many seeds as the base holds, one per
                 * iteration of a single runner. */
                size_t used = 0, next = seed_lo;
                b.mode = RECORD_MODE_SEEDS;
                b.iters = 0;
                /* Every seed comes back with its features in a find slot,
                 * so a batch runs at most as many as there are slots. */
                while (next < seed_hi && next - seed_lo < RECORD_FINDS_SLOTS &&
                       pack_put(c->seed_pack, c->layout.area_len, &used, c->seeds[next].data,
                                c->seeds[next].len)) {
                        next++;
                        b.iters++;
                }
                seeds_take(c, next);
                seed_hi = next;
                b.base = c->seed_pack;
                b.base_len = used;
                s->seed_batch = true;
        } else {
                size_t n = corpus_size(c->corpus);
                b.mode = RECORD_MODE_FUZZ;
                b.base = empty;
                if (n && c->legacy_schedule) {
                        size_t i = corpus_pick(c->corpus, &c->rng);
                        b.base = corpus_get(c->corpus, i, &b.base_len);
                        size_t p = prng_below(&c->rng, (uint32_t)n);
                        b.partner = corpus_get(c->corpus, p, &b.partner_len);
                }
                double want = s->rate > 0 ? s->rate * batch_ms(c, s) : 256;
                if (want < COORD_MIN_ITERS)
                        want = COORD_MIN_ITERS;
                if (want > COORD_MAX_ITERS)
                        want = COORD_MAX_ITERS;
                b.iters = (uint64_t)want;
                if (n && !c->legacy_schedule) {
                        pack_bases(c, s, &b);
                        cap_by_bases(c, s, &b);
                }
                b.table = dicts_table(c->dicts, &b.table_len);
                b.len_limit = (uint32_t)c->mutsched.len_limit;
                b.op_weights = c->mutsched.weights;
                s->seed_batch = false;
        }
        if (c->cfg->runs) {
                uint64_t left = c->cfg->runs > c->dispatched ? c->cfg->runs - c->dispatched : 0;
                if (left == 0)
                        return;
                if (b.iters > left)
                        b.iters = left;
        }
        /* One suspect at a time: while the helper checks one, batches run
         * without watching, so a real leak does not flood the queue with
         * copies of itself. */
        b.leak_watch = c->leak_watch && c->leak_pending == 0 && wproc_leaks(s->w);
        b.fresh = c->fresh_runners;
        if (wproc_send_batch(s->w, &b) < 0) {
                s->alive = false;
                return;
        }
        c->dispatched += b.iters;
        s->seed_lo = seed_lo;
        s->seed_hi = seed_hi;
        s->busy = true;
        s->busy_since = clock_now_ms();
        s->seen_count = 0;
        s->iters = b.iters;
}

static void dispatch(Coordinator *c)
{
        if (c->stopping || (!c->cfg->keep_going && c->crash_pending > 0))
                return;
        for (unsigned i = 0; i < c->n_slots; i++)
                if (c->slots[i].alive && !c->slots[i].busy)
                        dispatch_one(c, &c->slots[i]);
}

static bool any_busy(const Coordinator *c)
{
        for (unsigned i = 0; i < c->n_slots; i++)
                if (c->slots[i].alive && c->slots[i].busy)
                        return true;
        return false;
}

static unsigned alive_count(const Coordinator *c)
{
        unsigned n = 0;
        for (unsigned i = 0; i < c->n_slots; i++)
                n += c->slots[i].alive;
        return n;
}

static void check_limits(Coordinator *c)
{
        if (c->cfg->max_total_time_s &&
            clock_now_ms() - c->start_ms >= (int64_t)c->cfg->max_total_time_s * 1000)
                c->stopping = true;
        if (c->cfg->runs && c->dispatched >= c->cfg->runs && !any_busy(c))
                c->stopping = true;
}

static void stop_busy_workers(Coordinator *c)
{
        cJSON *m = msg_new("stop");
        for (unsigned i = 0; m && i < c->n_slots; i++)
                if (c->slots[i].alive && c->slots[i].busy)
                        (void)wproc_send(c->slots[i].w, m);
        cJSON_Delete(m);
}

static void handle_signal(Coordinator *c)
{
        struct signalfd_siginfo si;
        while (read(c->sigfd, &si, sizeof(si)) == sizeof(si)) {
                if (!c->interrupted)
                        fprintf(stderr, "\n");
                const char *abbrev = sigabbrev_np((int)si.ssi_signo);
                log_info("SIG%s received, stopping (crashes in flight are still stored)",
                         abbrev ? abbrev : "?");
                c->interrupted = true;
                c->stopping = true;
                stop_busy_workers(c);
        }
}

static void loop_once(Coordinator *c)
{
        struct pollfd pfd[2 + 256];
        Slot *owner[2 + 256];
        nfds_t n = 0;

        pfd[n] = (struct pollfd){.fd = c->sigfd, .events = POLLIN};
        owner[n++] = NULL;
        pfd[n] = (struct pollfd){.fd = c->helper_evt, .events = POLLIN};
        owner[n++] = NULL;
        for (unsigned i = 0; i < c->n_slots && n < 2 + 256; i++) {
                if (!c->slots[i].alive)
                        continue;
                pfd[n] = (struct pollfd){.fd = wproc_evt_fd(c->slots[i].w), .events = POLLIN};
                owner[n++] = &c->slots[i];
        }
        int r = poll(pfd, n, 200);
        if (r < 0)
                return;
        if (pfd[0].revents)
                handle_signal(c);
        if (pfd[1].revents) {
                for (;;) {
                        cJSON *m = NULL;
                        int t = msg_read(&c->helper_reader, &m);
                        if (t <= 0) {
                                if (t < 0) {
                                        log_error("the recovery helper stopped unexpectedly");
                                        c->internal_error = true;
                                        c->stopping = true;
                                        c->helper_busy = false;
                                        c->helper_evt = -1;
                                }
                                break;
                        }
                        helper_event(c, m);
                        cJSON_Delete(m);
                        if (c->helper_reader.len == 0)
                                break;
                }
        }
        for (nfds_t i = 2; i < n; i++) {
                if (!pfd[i].revents)
                        continue;
                Slot *s = owner[i];
                Wproc *w = s->w;
                /* Read until the pipe is drained, or the slot's worker is
                 * replaced by a restart. */
                while (s->alive && s->w == w) {
                        cJSON *m = NULL;
                        int t = wproc_read(s->w, &m);
                        if (t < 0) {
                                worker_gone(c, s);
                                break;
                        }
                        if (t == 0)
                                break;
                        c->events++;
                        worker_event(c, s, m);
                        cJSON_Delete(m);
                }
        }
}

/* --- setup --- */

static int prepare_outdir(Coordinator *c)
{
        int r = fs_mkdir_p(c->cfg->out_dir, 0755);
        if (r < 0) {
                log_error("cannot create the output directory %s: %s; choose another with "
                          "--out",
                          c->cfg->out_dir, strerror(-r));
                return SF_EXIT_USAGE;
        }
        c->outdir_fd = open(c->cfg->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->outdir_fd < 0) {
                log_error("cannot open the output directory %s: %s", c->cfg->out_dir,
                          strerror(errno));
                return SF_EXIT_USAGE;
        }
        fs_sweep_tmp(c->outdir_fd);
        char path[4096];
        snprintf(path, sizeof(path), "%s/crashes", c->cfg->out_dir);
        r = fs_mkdir_p(path, 0755);
        if (r == 0) {
                int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        fs_sweep_tmp(fd);
                        close(fd);
                }
        }
        if (r == 0)
                r = write_stats(c, "starting");
        if (r < 0) {
                log_error("cannot write into the output directory %s: %s; choose another "
                          "with --out",
                          c->cfg->out_dir, strerror(-r));
                return SF_EXIT_USAGE;
        }
        return 0;
}

static int load_seeds(Coordinator *c)
{
        char path[4096];
        size_t truncated = 0;
        size_t cap = c->cfg->max_len ? c->cfg->max_len : RECORD_MAX_LEN_LIMIT;

        snprintf(path, sizeof(path), "%s/corpus", c->cfg->out_dir);
        int r = corpus_read_dir(path, cap, &c->seeds, &c->n_seeds, &truncated);
        if (r < 0 && r != -ENOENT) {
                log_error("cannot read %s: %s", path, strerror(-r));
                return SF_EXIT_USAGE;
        }
        size_t resumed = c->n_seeds;
        for (int i = 0; i < c->cfg->n_corpus_dirs; i++) {
                r = corpus_read_dir(c->cfg->corpus_dirs[i], cap, &c->seeds, &c->n_seeds,
                                    &truncated);
                if (r < 0) {
                        log_error("cannot read the corpus directory %s: %s", c->cfg->corpus_dirs[i],
                                  strerror(-r));
                        return SF_EXIT_USAGE;
                }
        }
        if (!c->cfg->max_len) {
                /* As libFuzzer: at least 4 KiB, or the largest seed, at most 1 MiB. */
                size_t m = 4096;
                for (size_t i = 0; i < c->n_seeds; i++)
                        if (c->seeds[i].len > m)
                                m = c->seeds[i].len;
                c->cfg->max_len = m > (1u << 20) ? (1u << 20) : m;
        }
        for (size_t i = 0; i < c->n_seeds; i++)
                if (c->seeds[i].len > c->cfg->max_len) {
                        c->seeds[i].len = c->cfg->max_len;
                        truncated++;
                }
        if (truncated)
                log_warn("%zu seed files are longer than --max-len %zu and were truncated",
                         truncated, c->cfg->max_len);
        if (c->n_seeds == 0) {
                /* Nothing to start from: the empty input is the first seed. */
                c->seeds = calloc(1, sizeof(CorpusSeed));
                if (!c->seeds)
                        return SF_EXIT_INTERNAL;
                c->n_seeds = 1;
        }
        c->n_resumed = resumed;
        return 0;
}

static WprocConfig worker_config(const Coordinator *c)
{
        return (WprocConfig){
            /* bench/scale.sh puts a simulated worker here (bench/simworker.c)
             * to load the real coordinator with more workers than cores. */
            .exe = getenv("SNAPFUZZ_WORKER_EXE"),
            .target = c->cfg->target_abs,
            .max_len = c->cfg->max_len,
            .timeout_ms = c->cfg->timeout_ms,
            .rss_limit_mb = c->cfg->rss_limit_mb,
            .malloc_limit_mb = c->cfg->malloc_limit_mb,
            .sandbox = c->cfg->sandbox,
            .sandbox_policy = c->cfg->sandbox_policy,
            .cov_fd = c->cov_fd,
            .value_profile = c->cfg->value_profile,
            .detect_leaks = c->cfg->detect_leaks,
            .runner_lifetime_ms = c->cfg->runner_lifetime_ms,
        };
}

/* A slot whose worker has said hello. */
static void slot_ready(Slot *s)
{
        fcntl(wproc_evt_fd(s->w), F_SETFL, O_NONBLOCK);
        s->alive = true;
        s->busy = false;
}

/* Restarts the worker of a slot. Returns 0 or a WPROC_ERR_* / negative
 * errno, with a message for a person in @err. */
static int spawn_slot(Coordinator *c, Slot *s, char *err, size_t errlen)
{
        WprocConfig wc = worker_config(c);
        int r = wproc_spawn(&s->w, &wc, err, errlen);
        if (r < 0)
                return r;
        slot_ready(s);
        return 0;
}

/* Every worker loads the target at the same time: started one by one, 64
 * workers would cost 64 initializations of wall time before the first
 * batch. Hellos are then awaited in order; slots become usable (n_slots)
 * only once their worker has said hello. */
static int start_workers(Coordinator *c)
{
        char err[1024];
        unsigned launched = 0;
        int r = 0;

        c->slots = calloc(c->cfg->workers, sizeof(Slot));
        if (!c->slots)
                return SF_EXIT_INTERNAL;
        WprocConfig wc = worker_config(c);
        for (; launched < c->cfg->workers; launched++) {
                r = wproc_launch(&c->slots[launched].w, &wc, err, sizeof(err));
                if (r < 0)
                        goto err_launched;
        }
        for (; c->n_slots < launched; c->n_slots++) {
                Slot *s = &c->slots[c->n_slots];
                r = wproc_await_hello(s->w, err, sizeof(err));
                if (r < 0)
                        goto err_launched;
                slot_ready(s);
        }
        return 0;

err_launched:
        /* The workers not yet counted are still loading, or failed the
         * same way: they go now rather than after a grace period each. */
        for (unsigned i = c->n_slots; i < launched; i++) {
                pid_t pid = wproc_pid(c->slots[i].w);
                if (pid > 0) /* -1 once reaped: never kill(-1) */
                        kill(pid, SIGKILL);
                wproc_free(c->slots[i].w);
                c->slots[i].w = NULL;
        }
        log_error("%s: %s", c->cfg->target, err);
        return r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED || r == WPROC_ERR_TIMEOUT
                   ? SF_EXIT_USAGE
                   : SF_EXIT_INTERNAL;
}

static void shutdown_all(Coordinator *c)
{
        int64_t deadline;

        /* Let batches in flight end (they are short), or stop them. */
        if (any_busy(c)) {
                deadline = clock_now_ms() + 2000;
                while (any_busy(c) && clock_now_ms() < deadline)
                        loop_once(c);
                stop_busy_workers(c);
                deadline = clock_now_ms() + 3000;
                while (any_busy(c) && clock_now_ms() < deadline)
                        loop_once(c);
        }
        /* Every queued crash is recovered and stored before we exit. */
        while ((c->helper_busy || c->queue_head) && c->helper_evt >= 0) {
                helper_dispatch(c);
                loop_once(c);
        }
        for (unsigned i = 0; i < c->n_slots; i++)
                wproc_free(c->slots[i].w);
        if (c->helper_pid > 0) {
                close(c->helper_cmd);
                int st;
                waitpid(c->helper_pid, &st, 0);
        }
}

int coordinator_run(RunConfig *cfg)
{
        Coordinator c = {.cfg = cfg,
                         .sigfd = -1,
                         .helper_evt = -1,
                         .outdir_fd = -1,
                         .corpus_fd = -1,
                         .leak_watch = cfg->detect_leaks};
        int r;

        c.start_ms = clock_now_ms();
        if (!cfg->seed_set) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                cfg->seed =
                    (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
        }
        prng_seed(&c.rng, cfg->seed, 0x636f6f7264ULL);
        const char *sched = getenv("SNAPFUZZ_SCHEDULE");
        c.legacy_schedule = sched && strcmp(sched, "legacy") == 0;

        /* A dictionary that cannot be read is a usage error: refused
         * before the output directory is touched. */
        r = dicts_new(&c.dicts, cfg->dict_path);
        if (r < 0)
                return r == -ENOMEM ? SF_EXIT_INTERNAL : SF_EXIT_USAGE;
        r = prepare_outdir(&c);
        if (r)
                return r;
        dicts_load_auto(c.dicts, c.outdir_fd, cfg->out_dir);
        r = load_seeds(&c);
        if (r)
                return r;
        r = record_layout(cfg->max_len, &c.layout);
        if (r < 0) {
                log_error("--max-len %zu is out of range", cfg->max_len);
                return SF_EXIT_USAGE;
        }
        c.seed_pack = malloc(c.layout.area_len);
        c.partner_pack = malloc(c.layout.area_len);
        if (!c.seed_pack || !c.partner_pack)
                return SF_EXIT_INTERNAL;
        size_t longest_seed = 0;
        for (size_t i = 0; i < c.n_seeds; i++)
                if (c.seeds[i].len > longest_seed)
                        longest_seed = c.seeds[i].len;
        mutsched_init(&c.mutsched, c.layout.max_len, longest_seed);
        char corpus_dir[4096];
        snprintf(corpus_dir, sizeof(corpus_dir), "%s/corpus", cfg->out_dir);
        r = corpus_new(&c.corpus, corpus_dir);
        if (r < 0) {
                log_error("cannot create %s: %s", corpus_dir, strerror(-r));
                return SF_EXIT_USAGE;
        }
        c.cov_fd = coverage_shared_create();
        if (c.cov_fd < 0 || coverage_shared_map(c.cov_fd, &c.cov) < 0) {
                log_error("cannot create the shared coverage map");
                return SF_EXIT_INTERNAL;
        }

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        c.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);

        r = helper_start(&c);
        if (r < 0) {
                log_error("cannot start the recovery helper: %s", strerror(-r));
                return SF_EXIT_INTERNAL;
        }
        /* After the helper's fork and the signal mask: the writer thread
         * is the coordinator's alone and never takes a signal. */
        c.corpus_fd = open(corpus_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = c.corpus_fd < 0 ? -errno : writeq_new(&c.corpus_q, c.corpus_fd);
        if (r < 0) {
                log_error("cannot open %s for writing: %s", corpus_dir, strerror(-r));
                shutdown_all(&c);
                return SF_EXIT_INTERNAL;
        }
        /* Nothing is printed before the target is known to load, so that a
         * bad target gets exactly one line. */
        int code = start_workers(&c);
        if (code) {
                shutdown_all(&c);
                return code;
        }
        (void)sandboxlog_new(&c.sandbox_log); /* without it, events are only printed */
        log_info("%s: %" PRIu64 " coverage counters, %u workers, seed %" PRIu64 ", sandbox %s%s",
                 cfg->target, (uint64_t)wproc_counters(c.slots[0].w), c.n_slots, cfg->seed,
                 cfg->sandbox, cfg->sandbox_policy ? " with a policy file" : "");
        log_info("%zu seed inputs (%zu resumed from %s/corpus), max input length %zu", c.n_seeds,
                 c.n_resumed, cfg->out_dir, cfg->max_len);
        if (cfg->dict_path || dicts_auto_count(c.dicts))
                log_info("dictionary: %zu tokens from %s, %zu from %s/" DICTS_AUTO_FILE,
                         dicts_user_count(c.dicts), cfg->dict_path ? cfg->dict_path : "--dict",
                         dicts_auto_count(c.dicts), cfg->out_dir);
        cJSON *prepare = msg_new("prepare");
        if (prepare)
                (void)msg_send(c.helper_cmd, prepare);
        cJSON_Delete(prepare);
        c.last_status_ms = clock_now_ms();
        fcntl(c.helper_evt, F_SETFL, O_NONBLOCK);

        while (!c.stopping) {
                dispatch(&c);
                helper_dispatch(&c);
                loop_once(&c);
                check_limits(&c);
                check_stuck(&c);
                if (alive_count(&c) == 0) {
                        log_error("every worker has stopped; see the messages above");
                        c.internal_error = true;
                        c.stopping = true;
                }
                r = writeq_error(c.corpus_q);
                if (r < 0)
                        corpus_write_failed(&c, r);
                int64_t now = clock_now_ms();
                if (now - c.last_status_ms >= (int64_t)cfg->status_every_s * 1000) {
                        c.last_status_ms = now;
                        print_status(&c, "");
                        (void)write_stats(&c, "running");
                        save_autodict(&c);
                }
        }
        shutdown_all(&c);
        r = writeq_flush(c.corpus_q);
        if (r < 0)
                corpus_write_failed(&c, r);
        save_autodict(&c);
        print_status(&c, "done ");
        sandboxlog_summary(c.sandbox_log);
        (void)write_stats(&c, c.interrupted ? "interrupted" : "done");
        if (c.stored)
                log_info("%" PRIu64 " crash%s stored (%" PRIu64 " new); replay one with: "
                         "snapfuzz reproduce ID --out %s",
                         c.stored, c.stored == 1 ? "" : "es", c.unique, cfg->out_dir);
        if (c.lost)
                log_warn("%" PRIu64 " crash%s could not be rebuilt (see the warnings above)",
                         c.lost, c.lost == 1 ? "" : "es");
        if (!c.stored && !c.lost)
                log_info("no crash found");

        writeq_free(c.corpus_q);
        close(c.corpus_fd);
        corpus_free(c.corpus);
        dicts_free(c.dicts);
        corpus_seeds_free(c.seeds, c.n_seeds);
        free(c.seed_redo);
        free(c.seed_pack);
        free(c.partner_pack);
        free(c.slots);
        coverage_shared_unmap(c.cov);
        sandboxlog_free(c.sandbox_log);
        if (c.stored || c.lost)
                return SF_EXIT_CRASH;
        return c.internal_error ? SF_EXIT_INTERNAL : SF_EXIT_OK;
}
