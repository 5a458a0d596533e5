/*
 * The main loop is a short list of phases, repeated until the run is over:
 *   dispatch   give every idle worker a batch (a seed to run as is, or a
 *              corpus entry to mutate), and the helper its next job
 *   wait       poll the signalfd, the helper and every worker
 *   collect    take finds into the corpus, dead runners' records into the
 *              recovery queue, stored crashes into the tally
 *   report     the screen or status line (engine/screen.h), and every
 *              status period stats.json and a line of plot_data
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
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "engine/coordinator.h"
#include "engine/corpusw.h"
#include "engine/ciout.h"
#include "engine/crashtally.h"
#include "engine/dicts.h"
#include "engine/helperq.h"
#include "engine/plotdata.h"
#include "engine/quarantine.h"
#include "engine/instrcheck.h"
#include "engine/sandboxlog.h"
#include "engine/sanq.h"
#include "engine/schedule.h"
#include "engine/screen.h"
#include "engine/sync.h"
#include "core/corpus.h"
#include "core/coverage.h"
#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "worker/wproc.h"
#include "worker/proto.h"
#include "core/writeq.h"
#include "recovery/classify.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

typedef struct Slot {
        Wproc *w;
        bool alive;
        bool busy;
        SchedulePlan plan; /* its batch, and its speed */
        int64_t busy_since;
        uint64_t seen_count; /* the record's count when check_stuck last saw it move */
        int64_t moved_ms;
        unsigned restarts;
        uint64_t execs; /* executions its batches ran, for the screen */
        bool san;       /* runs the sanitizer build's checks (engine/sanq.h) */
} Slot;

#define COORD_MAX_RESTARTS 5
/* A deterministic run's stand-in for an execution's time (find_work_ns):
 * COORD_WORK_BASE_NS for the call, plus COORD_WORK_EDGE_NS for each time
 * an edge of the target ran, as far as the hit-count buckets tell
 * (coord_bucket_hits: a bucket's typical count). */
#define COORD_WORK_BASE_NS 500
#define COORD_WORK_EDGE_NS 4
#define COORD_LEAK_DISMISSALS 1000
/* --sanitizer-share's default, in percent of the fuzzing workers' time. */
#define COORD_SANITIZER_SHARE 10
/* Recovery jobs waiting for the helper above which a death whose stack was
 * already queued for recovery is counted, not recovered again. */
#define COORD_BACKLOG 8
#define COORD_DEATH_KEYS 4096
/* How long after a crash is stored (beyond its minimization budget) the
 * --sarif/--junit reports are rewritten with each status line. */
#define COORD_CI_REFRESH_MS 10000

/* The corpus figures of SfEvent are counted again whenever the corpus
 * changed; above COORD_FIGURES_CHEAP entries, at most every
 * COORD_FIGURES_MS (a storm of finds in one batch then reports them once). */
#define COORD_FIGURES_CHEAP 10000
#define COORD_FIGURES_MS 100

typedef struct Coordinator {
        SfRunConfig *cfg;
        RecordLayout layout;
        Slot *slots;
        unsigned n_slots;
        Corpus *corpus;
        CorpusWriter *corpus_w; /* writes new entries into OUT/corpus off the loop */
        Sync *sync;             /* --sync-dir: inputs from and to other instances */
        RunDicts *dicts;
        int cov_fd;
        CoverageShared *cov;

        HelperQueue *helperq; /* the recovery helper and its jobs */
        /* --sanitizer-target: the queue of its worker (the last slot), and
         * the recovery helper that verifies its crashes on that build. */
        SanQueue *sanq;
        HelperQueue *san_helperq;
        struct stat san_st; /* the sanitizer build's file, as for target_st */

        int sigfd;
        /* The seeds read at start, until the schedule takes them. */
        CorpusSeed *seeds;
        size_t n_seeds, n_resumed;
        Schedule *sched;
        uint64_t reduced;       /* inputs handed back as a shorter form of their base */
        uint64_t files_removed; /* files of OUT/corpus removed after a reduction */
        uint64_t files_written; /* files of OUT/corpus written by this run */
        /* The output corpus kept as `snapfuzz merge` would leave it
         * (cover_disk): when it was last chosen, the files written and
         * removed until then, and the files it took out or put back. */
        int64_t cover_ms;
        uint64_t cover_changes, covered_out, covered_in;

        /* Executions done, and those planned by the batches in flight:
         * --runs counts what ran, and plans no more than is left. */
        uint64_t execs, in_flight;
        uint64_t batches_ended, runners_forked;
        uint64_t events; /* messages read from workers */
        int64_t start_ms, last_status_ms;
        uint64_t deaths, stored, unique, lost;
        uint64_t rescued;  /* of the stored, those in the rescue directory */
        CrashTally *tally; /* stored crashes by id: one line each, then counts */
        /* Deaths by stack (kind and the exact module offsets of its frames),
         * for the backlog rule: an open-addressing set of hashes. */
        uint64_t death_keys[COORD_DEATH_KEYS];
        unsigned n_death_keys;
        uint64_t duplicates_skipped;
        int crash_pending;
        /* Leak suspects (runner.c): confirmed or dismissed by the helper.
         * Watching stops after COORD_LEAK_DISMISSALS dismissals, as
         * libFuzzer stops after 1000 unconfirmed checks. */
        bool leak_watch;
        uint64_t leak_suspects, leak_dismissed;
        unsigned leak_pending; /* suspects queued or with the helper */
        bool stopping, interrupted, internal_error;
        bool fresh_runners; /* a crash did not reproduce from its batch: no more reuse */
        /* --sarif/--junit: rewritten at each status line until then (a
         * crash seen again, a minimization that ends after the store). */
        int64_t ci_refresh_until_ms;
        SandboxLog *sandbox_log; /* the workers' "sandbox" events */
        int outdir_fd;
        int lock_fd; /* OUT/.lock, held for the whole run (fs_lock_dir) */
        /* The target file as it was when the run started (check_target). */
        struct stat target_st;
        int64_t target_checked_ms;
        bool target_changed;
        bool deterministic; /* SfRunConfig.deterministic: the same inputs every run */
        bool inited;        /* every seed has run (SF_EVENT_INITED was sent) */
        /* The active corpus entries and their size, for events (counted
         * at most every COORD_FIGURES_MS). */
        size_t fig_entries, fig_size; /* fig_size: corpus_size when counted */
        uint64_t fig_bytes;
        int64_t fig_ms;
        int64_t started_at; /* wall clock, seconds since the epoch */
        /* OUT/quarantine.json, read at start: stored crashes it holds do
         * not stop the run or make it fail (quarantined counts them; held
         * has one entry per id, for one line each). */
        Quarantine *quarantine;
        CrashTally *held;
        uint64_t quarantined;
        /* What the screen and plot_data show beyond the counts above. */
        Screen *screen;
        PlotData *plot;
        uint64_t timeouts, ooms; /* runner deaths of those kinds */
        uint64_t edges_seen;
        int64_t new_edge_ms; /* when the edges last grew; -1: never */
        long rss_mb;         /* the largest runner's resident size, last looked at */
        ScreenCrash last_crash;
} Coordinator;

/* User and system time of the process or the calling thread. */
static double rusage_seconds(int who)
{
        struct rusage ru;
        if (getrusage(who, &ru) < 0)
                return 0;
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* stats.json's active and favoured entries. While the run goes on, as they
 * stand: a recompute forced on the clock would change a seeded run's picks.
 * The last report (@status neither "running" nor "starting") recomputes. */
static void corpus_figures(Coordinator *c, const char *status, size_t *active, size_t *favored)
{
        if (strcmp(status, "running") == 0 || strcmp(status, "starting") == 0) {
                corpus_report_counts(c->corpus, active, favored);
                return;
        }
        *active = corpus_active_count(c->corpus);
        *favored = corpus_favored_count(c->corpus);
}

/* stats.json, rewritten atomically. Over 80 lines: one flat list of
 * fields, each one line, in the order README's "Output directory" gives. */
static int write_stats(Coordinator *c, const char *status)
{
        double secs = (double)(clock_now_ms() - c->start_ms) / 1000.0;
        char seed[24];
        cJSON *j = cJSON_CreateObject();
        if (!j)
                return -ENOMEM;
        snprintf(seed, sizeof(seed), "%" PRIu64, c->cfg->seed);
        cJSON_AddStringToObject(j, "status", status);
        /* Who writes this file, since when, and when it last did: a reader
         * (snapfuzz status) tells a live campaign from a killed one by the
         * lock, and a stale heartbeat shows when it stopped. */
        cJSON_AddNumberToObject(j, "pid", (double)getpid());
        cJSON_AddNumberToObject(j, "started_at", (double)c->started_at);
        cJSON_AddNumberToObject(j, "updated_at", (double)time(NULL));
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
                cJSON_AddNumberToObject(
                    j, "batch_ms", c->sched ? schedule_batch_ms(c->sched, &c->slots[0].plan) : 0);
                cJSON_AddNumberToObject(j, "batch_overhead_ms", c->slots[0].plan.overhead_ms);
        }
        /* Batches that ended, and the runner processes that ran them
         * (--runner-lifetime-ms). */
        cJSON_AddNumberToObject(j, "batches", (double)c->batches_ended);
        cJSON_AddNumberToObject(j, "runners_forked", (double)c->runners_forked);
        bool legacy = c->sched && schedule_legacy(c->sched);
        if (c->corpus && !legacy) {
                size_t active, favored;
                corpus_figures(c, status, &active, &favored);
                cJSON_AddNumberToObject(j, "corpus_active", (double)active);
                cJSON_AddNumberToObject(j, "corpus_favored", (double)favored);
        }
        cJSON_AddStringToObject(j, "schedule", legacy ? "legacy" : "energy");
        /* Inputs that took a corpus entry's exact path in fewer bytes. */
        cJSON_AddNumberToObject(j, "corpus_reduced", (double)c->reduced);
        cJSON_AddNumberToObject(j, "corpus_files_removed", (double)c->files_removed);
        /* Of those, files other files cover (cover_disk), and files it
         * wrote back. */
        cJSON_AddNumberToObject(j, "corpus_files_covered", (double)c->covered_out);
        cJSON_AddNumberToObject(j, "corpus_files_restored", (double)c->covered_in);
        /* What OUT/corpus holds once every write is done. */
        cJSON_AddNumberToObject(j, "corpus_files",
                                (double)(c->n_resumed + c->files_written - c->files_removed));
        cJSON_AddNumberToObject(j, "autodict", c->dicts ? (double)dicts_auto_count(c->dicts) : 0);
        cJSON_AddNumberToObject(j, "runner_deaths", (double)c->deaths);
        cJSON_AddNumberToObject(j, "crashes", (double)c->stored);
        cJSON_AddNumberToObject(j, "unique_crashes", (double)c->unique);
        cJSON_AddNumberToObject(j, "inputs_lost", (double)c->lost);
        /* What the screen shows beyond the counts: runner deaths by
         * timeout and by memory, when the coverage last grew (seconds
         * into the run; -1: not yet) and the largest runner's memory. */
        cJSON_AddNumberToObject(j, "timeouts", (double)c->timeouts);
        cJSON_AddNumberToObject(j, "ooms", (double)c->ooms);
        cJSON_AddNumberToObject(j, "last_new_edge_s",
                                c->new_edge_ms < 0 ? -1
                                                   : (double)(c->new_edge_ms - c->start_ms) / 1000);
        cJSON_AddNumberToObject(j, "rss_mb", (double)c->rss_mb);
        cJSON_AddNumberToObject(j, "crashes_rescued", (double)c->rescued);
        cJSON_AddNumberToObject(j, "duplicate_deaths_skipped", (double)c->duplicates_skipped);
        cJSON_AddNumberToObject(j, "leak_suspects", (double)c->leak_suspects);
        cJSON_AddNumberToObject(j, "leak_suspects_dismissed", (double)c->leak_dismissed);
        cJSON_AddNumberToObject(j, "workers", c->n_slots - (c->sanq && c->n_slots));
        if (c->sched)
                cJSON_AddNumberToObject(j, "len_limit",
                                        (double)schedule_mutsched(c->sched)->len_limit);
        /* What the coordinator itself costs: its own CPU time (not the
         * workers' or the helper's) against the messages it handled, the
         * figure that says how many workers one coordinator can serve;
         * the event loop's share apart from the corpus writer thread's. */
        cJSON_AddNumberToObject(j, "coordinator_cpu_s", rusage_seconds(RUSAGE_SELF));
        cJSON_AddNumberToObject(j, "coordinator_loop_cpu_s", rusage_seconds(RUSAGE_THREAD));
        cJSON_AddNumberToObject(j, "worker_events", (double)c->events);
        cJSON_AddStringToObject(j, "seed", seed);
        sandboxlog_add_stats(c->sandbox_log, j);
        if (c->corpus_w)
                corpusw_add_stats(c->corpus_w, j);
        if (c->sync)
                sync_add_stats(c->sync, j);
        helperq_add_stats(c->helperq, j);
        if (c->sanq) {
                cJSON_AddStringToObject(j, "sanitizer_target", c->cfg->sanitizer_abs);
                sanq_add_stats(c->sanq, j);
        }
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

/* A front end's progress report (SfRunConfig.on_event): @e's type and
 * specific fields are set, the figures are filled in here. */
static void emit(Coordinator *c, SfEvent *e)
{
        if (!c->cfg->on_event)
                return;
        int64_t now = clock_now_ms();
        size_t size = c->corpus ? corpus_size(c->corpus) : 0;
        bool changed = size != c->fig_size || e->type == SF_EVENT_INITED ||
                       e->type == SF_EVENT_DONE || e->type == SF_EVENT_PULSE;
        if (c->corpus && changed &&
            (size <= COORD_FIGURES_CHEAP || now - c->fig_ms >= COORD_FIGURES_MS)) {
                bool legacy = !c->sched || schedule_legacy(c->sched);
                size_t n = 0, len;
                uint64_t bytes = 0;
                for (size_t i = 0; i < size; i++) {
                        if (!legacy && !corpus_is_active(c->corpus, i))
                                continue;
                        (void)corpus_get(c->corpus, i, &len);
                        bytes += len;
                        n++;
                }
                c->fig_entries = n;
                c->fig_size = size;
                c->fig_bytes = bytes;
                c->fig_ms = now;
        }
        e->execs = c->execs;
        e->edges = c->cov ? c->cov->edges : 0;
        e->features = c->cov ? c->cov->features : 0;
        e->corpus = c->fig_entries;
        e->corpus_bytes = c->fig_bytes;
        e->elapsed_s = (double)(clock_now_ms() - c->start_ms) / 1000.0;
        c->cfg->on_event(e, c->cfg->event_ctx);
}

/* --- the recovery helper --- */

/* The recovery helper of @target (the run's, or --sanitizer-target's): a
 * crash is verified, minimized and stored on the build it happened in. */
static int helper_start(Coordinator *c, HelperQueue **ret, const char *target)
{
        HelperQueueConfig hc = {
            .record_size = c->layout.record_size,
            .recovery =
                {
                    .target = target,
                    .builtin = c->cfg->builtin_target,
                    .out_dir = c->cfg->out_dir,
                    .max_len = c->layout.max_len,
                    .timeout_ms = c->cfg->timeout_ms,
                    .rss_limit_mb = c->cfg->rss_limit_mb,
                    .malloc_limit_mb = c->cfg->malloc_limit_mb,
                    .sandbox = c->cfg->sandbox,
                    .minimize_ms = c->cfg->minimize_ms,
                    .sandbox_policy = c->cfg->sandbox_policy,
                    .detect_leaks = c->cfg->detect_leaks,
                    .target_output = c->cfg->target_output,
                    .close_fd_mask = c->cfg->close_fd_mask,
                },
        };
        return helperq_new(ret, &hc);
}

/* A crash the helper could not write to OUT/crashes, stored in the rescue
 * directory instead: said every time, with where it is. */
static void helper_rescued(Coordinator *c, const cJSON *m)
{
        const char *where = msg_str(m, "rescued_to", NULL);
        if (!where)
                return;
        c->rescued++;
        log_warn("crash %s could not be written to %s/crashes: it is in %s/crashes/%s instead",
                 msg_str(m, "id", "?"), c->cfg->out_dir, where, msg_str(m, "id", "?"));
}

/* --sarif, --junit: the reports of the crash store (engine/ciout.h),
 * rewritten whole each time, so that a CI job killed at any moment has
 * them as of the last new crash. Unreadable crash directories are named
 * once, at the end. A write that fails at the start stops the run before
 * it begins (returns the error); later, it is a warning, and at the end an
 * internal error. */
static int write_ci_reports(Coordinator *c, bool start, bool final)
{
        const SfRunConfig *cfg = c->cfg;
        if (!cfg->sarif_path && !cfg->junit_path)
                return 0;
        CiOutConfig o = {.out_dir = cfg->out_dir,
                         .sarif_path = cfg->sarif_path,
                         .junit_path = cfg->junit_path,
                         .source_root = cfg->source_root,
                         .quiet = !final};
        char err[1024];
        int r = ciout_write(&o, NULL, err, sizeof(err));
        if (r < 0 && start)
                log_error("%s", err);
        else if (r < 0 && final)
                log_error("%s; the crashes are stored all the same (snapfuzz report writes it "
                          "again)",
                          err);
        else if (r < 0)
                log_warn("%s; trying again at the next crash and at the end", err);
        if (r < 0 && final)
                c->internal_error = true;
        return r;
}

/* OUT/quarantine.json, once the output directory is there. A list that
 * is not valid is refused before anything runs (-EINVAL after a line). */
static int quarantine_open(Coordinator *c)
{
        char err[1024];
        int r = quarantine_load(c->cfg->out_dir, &c->quarantine, err, sizeof(err));
        if (r == 0)
                r = crashtally_new(&c->held);
        if (r == -ENOMEM)
                log_error("out of memory");
        else if (r < 0)
                log_error("%s", err);
        if (r == 0 && quarantine_count(c->quarantine))
                log_info("%zu known crashes are quarantined (%s/%s): found again, they are "
                         "counted and fuzzing goes on",
                         quarantine_count(c->quarantine), c->cfg->out_dir, QUARANTINE_FILE);
        return r == -EBADMSG ? -EINVAL : r;
}

/* Whether the stored crash @m is quarantined: then it is counted (one line
 * the first time in this run), and it neither stops the run nor fails it. */
static bool quarantine_holds(Coordinator *c, const cJSON *m)
{
        const char *id = msg_str(m, "id", "?");
        const char *why = quarantine_find(c->quarantine, id, msg_str(m, "signature", NULL));
        if (!why)
                return false;
        c->quarantined++;
        if (crashtally_add(c->held, id, "", "") == 1) {
                char shown[1200]; /* the reason is the file's: made inert */
                termsafe_str(shown, sizeof(shown), why, 200);
                log_info("crash %s is quarantined%s%s%s: counted, fuzzing goes on", id,
                         why[0] ? " (" : "", shown, why[0] ? ")" : "");
        }
        return true;
}

/* The helper stored crash @m (in OUT or the rescue directory): counts,
 * the screen, the front end's event, one line per id, the CI reports, and
 * whether the run stops. */
static void helper_stored(Coordinator *c, const cJSON *m)
{
        bool is_new = msg_bool(m, "new", 0);
        c->stored++;
        if (is_new)
                c->unique++;
        screen_crash_set(&c->last_crash, msg_str(m, "id", "?"), msg_str(m, "kind", "?"),
                         msg_str(m, "message", ""),
                         (double)(clock_now_ms() - c->start_ms) / 1000.0);
        helper_rescued(c, m);
        /* One line per id; a crash seen again is counted (the
         * status line, the summary). */
        char crash_dir[4200];
        snprintf(crash_dir, sizeof(crash_dir), "%s/crashes/%s",
                 msg_str(m, "rescued_to", c->cfg->out_dir), msg_str(m, "id", "?"));
        emit(c, &(SfEvent){.type = SF_EVENT_CRASH,
                           .crash_id = msg_str(m, "id", "?"),
                           .crash_kind = msg_str(m, "kind", "?"),
                           .crash_message = msg_str(m, "message", ""),
                           .crash_dir = crash_dir,
                           .crash_new = is_new});
        if (crashtally_add(c->tally, msg_str(m, "id", "?"), msg_str(m, "kind", "?"),
                           msg_str(m, "message", "")) != 0)
                log_info("crash %s: %s (%s)%s, input %" PRId64 " bytes, %s, stored in "
                         "%s/crashes/%s (%" PRId64 " ms after the death)",
                         msg_str(m, "id", "?"), msg_str(m, "kind", "?"), msg_str(m, "message", ""),
                         is_new ? "" : " [seen before]", msg_int(m, "input_len", 0),
                         msg_bool(m, "reproduced", 0) ? "reproduced" : "did not reproduce",
                         c->cfg->out_dir, msg_str(m, "id", "?"),
                         msg_int(m, "death_to_stored_ms", 0));
        if (is_new)
                (void)write_ci_reports(c, false, false);
        c->ci_refresh_until_ms =
            clock_now_ms() + (int64_t)c->cfg->minimize_ms + COORD_CI_REFRESH_MS;
        /* A crash that its batch's history does not reproduce may
         * need what earlier batches of the same runner left behind
         * (worker/runner.h): from now on, every batch gets a fresh
         * runner, so that the next one is stored with its whole
         * history. A kill from outside depends on nothing. */
        if (!msg_bool(m, "reproduced", 0) && c->cfg->runner_lifetime_ms > 0 && !c->fresh_runners &&
            strcmp(msg_str(m, "kind", ""), "killed") != 0) {
                c->fresh_runners = true;
                log_warn("crash %s did not reproduce from its batch: the target may keep "
                         "state from a runner's earlier batches; from now on every batch "
                         "runs in a fresh runner (--runner-lifetime-ms 0 does so from the "
                         "start)",
                         msg_str(m, "id", "?"));
        }
        if (!c->cfg->keep_going && !quarantine_holds(c, m))
                c->stopping = true;
}

static void helper_event(Coordinator *c, cJSON *m)
{
        const char *type = msg_str(m, "type", "");
        bool suspect = msg_bool(m, "leak_suspect", 0);
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
                helper_stored(c, m);
        } else if (strcmp(type, "lost") == 0 && suspect) {
                /* Not a crash: nothing was lost but a check. */
                log_warn("a leak suspect's input could not be rebuilt: %s", msg_str(m, "why", "?"));
        } else if (strcmp(type, "lost") == 0 && msg_bool(m, "write_error", 0)) {
                /* Rebuilt, but neither OUT nor the rescue directory took it:
                 * fuzzing on would only find more to lose. */
                c->lost++;
                log_error("a crash was found but nothing can be written: %s; stopping",
                          msg_str(m, "why", "?"));
                c->internal_error = true;
                c->stopping = true;
        } else if (strcmp(type, "lost") == 0) {
                c->lost++;
                log_warn("a runner died but its input could not be rebuilt: %s",
                         msg_str(m, "why", "?"));
                /* A crash happened all the same: a CI run must not pass. */
                if (!c->cfg->keep_going && !msg_bool(m, "no_input", 0))
                        c->stopping = true;
        }
}

/* The helper's answers. When it cannot be kept running, the crashes still
 * queued are counted lost and the run stops. */
static void helper_collect(Coordinator *c, HelperQueue *q)
{
        for (;;) {
                cJSON *m = NULL;
                int t = helperq_read(q, &m);
                if (t == -ECHILD) {
                        unsigned n = helperq_abandon(q);
                        c->lost += n;
                        c->crash_pending = 0;
                        c->leak_pending = 0;
                        if (n)
                                log_error("%u crash%s queued for recovery %s lost", n,
                                          n == 1 ? "" : "es", n == 1 ? "is" : "are");
                        c->internal_error = true;
                        c->stopping = true;
                }
                if (t <= 0)
                        break;
                helper_event(c, m);
                cJSON_Delete(m);
        }
}

/* --- workers --- */

static int spawn_slot(Coordinator *c, Slot *s, char *err, size_t errlen);
static void restart_slot(Coordinator *c, Slot *s, const char *why);

/* A slot's batch is over: its planned iterations are no longer in flight. */
static void slot_idle(Coordinator *c, Slot *s)
{
        if (s->busy && !s->san)
                c->in_flight -= s->plan.iters <= c->in_flight ? s->plan.iters : c->in_flight;
        s->busy = false;
}

/* How often the output corpus's files are chosen again (cover_disk), at
 * most: the choice goes through every feature of every entry (some 10 ms
 * for sqlite3's 3000 entries of 2000 features). */
#define COORD_COVER_MS 30000

/*
 * OUT/corpus as `snapfuzz merge` would leave it (corpus_disk_cover): every
 * COORD_COVER_MS while files come and go, and at the end (@last), the files
 * of entries whose features other files all reach leave it, and an entry
 * that became needed again gets its file back. Every entry stays in the
 * schedule; a run resumed from the directory reaches every feature this
 * one reached. Without it a fast run keeps nearly every find (sqlite3: each
 * file the only best input of some hit-count feature, 26% more files than
 * libFuzzer's at the same features). Not with --no-reduce (libFuzzer's
 * -reduce_inputs=0 deletes nothing) nor the legacy schedule.
 */
static void cover_disk(Coordinator *c, bool last)
{
        if (!c->corpus || !c->corpus_w || c->cfg->no_reduce || schedule_legacy(c->sched))
                return;
        uint64_t changes = c->files_written + c->files_removed;
        int64_t now = clock_now_ms();
        if (changes == c->cover_changes || (!last && now - c->cover_ms < COORD_COVER_MS))
                return;
        size_t n = corpus_size(c->corpus);
        uint8_t *want = malloc(n ? n : 1);
        if (!want || corpus_disk_cover(c->corpus, want) < 0) {
                free(want);
                return; /* out of memory: the files stay as they are */
        }
        /* The files it wants back are queued before the ones that go (the
         * queue keeps that order), so a run killed in between leaves a
         * file too many, never one too few; if one cannot even be queued,
         * none goes this time. */
        bool all_in = true;
        for (size_t i = 0; i < n; i++) {
                if (want[i] != CORPUS_COVER_IN || corpus_on_disk(c->corpus, i))
                        continue;
                size_t len;
                const uint8_t *data = corpus_get(c->corpus, i, &len);
                if (corpusw_put(c->corpus_w, data, len) < 0) {
                        all_in = false;
                        continue;
                }
                corpus_mark_on_disk(c->corpus, i, true);
                c->files_written++;
                c->covered_in++;
        }
        for (size_t i = 0; i < n && all_in; i++) {
                if (want[i] != CORPUS_COVER_OUT || !corpus_on_disk(c->corpus, i))
                        continue;
                size_t len;
                const uint8_t *data = corpus_get(c->corpus, i, &len);
                corpusw_remove(c->corpus_w, data, len);
                corpus_mark_on_disk(c->corpus, i, false);
                c->files_removed++;
                c->covered_out++;
        }
        free(want);
        c->cover_ms = now;
        c->cover_changes = c->files_written + c->files_removed;
}

/* A seed batch's find @i (the seed at @iteration of its batch): a seed
 * for the corpus, and a file of OUT/corpus when it was resumed from there. */
static void take_seed(Coordinator *c, const SchedulePlan *p, uint64_t iteration, size_t i)
{
        if (corpus_mark_seed(c->corpus, i) < 0)
                log_warn("out of memory: a seed is not kept as a crossover partner");
        size_t seed = p->seed_lo + (iteration ? (size_t)iteration - 1 : 0);
        if (seed < c->n_resumed)
                corpus_mark_on_disk(c->corpus, i, true);
}

/* Corpus entry @base is no longer the best input for anything it reached
 * (a shorter form of it, or better inputs for each of its features, came
 * since): its file leaves OUT/corpus, as libFuzzer deletes an input that is
 * no longer the smallest for any feature, so the output corpus is what the
 * schedule uses. The user's own corpus directories are never touched. */
static void drop_replaced(Coordinator *c, size_t base)
{
        if (corpus_is_active(c->corpus, base) || !corpus_on_disk(c->corpus, base))
                return;
        size_t len;
        const uint8_t *data = corpus_get(c->corpus, base, &len);
        corpusw_remove(c->corpus_w, data, len);
        corpus_mark_on_disk(c->corpus, base, false);
        c->files_removed++;
}

/* The instance a seed batch's find at @iteration was imported from, or
 * NULL (one of the run's own inputs). */
static const char *import_origin(const Coordinator *c, const SchedulePlan *p, uint64_t iteration)
{
        if (!c->sync || !p->seed_batch)
                return NULL;
        size_t seed = p->seed_lo + (iteration ? (size_t)iteration - 1 : 0);
        return sync_seed_origin(c->sync, c->sched, seed);
}

/* What an input costs to run, from its features alone: in a deterministic
 * run the clock may not steer anything, so the scheduler's execution time
 * (an entry's energy, which entry is best for a feature, a batch's length)
 * is estimated from how often the input ran each edge of the target. Ids of
 * snapfuzz's own feedback maps (registered after the target's counters)
 * are not edges. A loop's count past 128 is not told apart, so long loops
 * are underestimated; the order of inputs by cost mostly holds. */
static uint64_t find_work_ns(const Coordinator *c, const RecordFindFeatures *ff)
{
        static const uint32_t coord_bucket_hits[8] = {1, 2, 3, 6, 12, 24, 80, 192};
        uint64_t counters = c->cov->counters, hits = 0;
        for (uint32_t i = 0; i < ff->n && i < RECORD_FIND_FEATURES; i++)
                if (ff->id[i] / 8 < counters)
                        hits += coord_bucket_hits[ff->id[i] & 7];
        return COORD_WORK_BASE_NS + COORD_WORK_EDGE_NS * hits;
}

static void take_finds(Coordinator *c, Slot *s)
{
        void *region = wproc_region(s->w);
        RecordFinds *f = record_finds(region, &c->layout);
        uint32_t used = __atomic_load_n(&f->used, __ATOMIC_ACQUIRE);
        if (used > RECORD_FINDS_SLOTS)
                used = RECORD_FINDS_SLOTS;
        bool legacy = schedule_legacy(c->sched);
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
                /* An input from another instance joins only if it adds
                 * coverage (engine/sync.h). */
                const char *peer = import_origin(c, &s->plan, fs->iteration);
                if (peer && known)
                        continue;
                size_t base = known ? SIZE_MAX : schedule_find_base(&s->plan, fs->iteration);
                if (base != SIZE_MAX && !smaller)
                        s->plan.base_finds[(fs->iteration - 1) / SCHEDULE_CHAIN_LEN %
                                           s->plan.n_bases]++;
                if ((known || smaller) && legacy)
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
                if (r == 1 && s->plan.seed_batch && !peer)
                        take_seed(c, &s->plan, fs->iteration, i_new);
                if (r == 1 && !legacy && ff->n <= RECORD_FIND_FEATURES && features &&
                    corpus_set_features(c->corpus, i_new, ff->id, ff->n,
                                        complete == RECORD_FEATURES_COMPLETE,
                                        c->deterministic ? find_work_ns(c, ff) : ff->exec_ns) < 0)
                        log_warn("out of memory: an input is scheduled without its features");
                /* On disk in the background: a find storm must not stall
                 * the loop for two fsyncs per entry. */
                /* (A seed resumed from OUT/corpus has its file already.) */
                if (r == 1 && !known && !corpus_on_disk(c->corpus, i_new) &&
                    corpusw_put(c->corpus_w, data, fs->len) == 0) {
                        corpus_mark_on_disk(c->corpus, i_new, true);
                        c->files_written++;
                }
                /* Seeds are the sanitizer build's already (sanq's seed
                 * cursor); new coverage of the fuzzing is checked too. */
                if (r == 1 && !known && !s->plan.seed_batch && c->sanq &&
                    sanq_add_entry(c->sanq, i_new) < 0)
                        log_warn("out of memory: an input is not checked by the sanitizer build");
                if (r == 1 && !known && !s->plan.seed_batch)
                        emit(c, &(SfEvent){.type = smaller ? SF_EVENT_REDUCE : SF_EVENT_NEW,
                                           .data = data,
                                           .len = fs->len});
                if (r == 1 && !known && c->sync)
                        sync_export(c->sync, data, fs->len, peer);
                if (r == 1 && peer)
                        sync_note_kept(c->sync);
                if (r == 1 && smaller && base != SIZE_MAX)
                        drop_replaced(c, base);
                /* Entries better inputs took every feature from leave the
                 * output corpus too (not with --no-reduce: libFuzzer's
                 * -reduce_inputs=0 deletes nothing). */
                uint32_t gone[64];
                size_t n_gone;
                while ((n_gone = corpus_take_superseded(c->corpus, gone, 64)) > 0)
                        for (size_t g = 0; g < n_gone && !c->cfg->no_reduce; g++)
                                drop_replaced(c, gone[g]);
        }
        if (used)
                (void)dicts_take_tokens(c->dicts, region, &c->layout);
}

/* The dead runner's record is copied now, before its worker gets another
 * batch (helperq_put). */
static void queue_death(Coordinator *c, Slot *s, cJSON *died, bool leak_suspect)
{
        int r = helperq_put(s->san ? c->san_helperq : c->helperq, wproc_region(s->w), died,
                            clock_now_ms(), leak_suspect ? HELPERQ_LEAK_SUSPECT : 0);
        if (leak_suspect)
                c->leak_suspects++;
        else
                c->deaths++;
        if (r < 0 && leak_suspect)
                return; /* a check not made: nothing is lost */
        if (r < 0) {
                c->lost++;
                log_error("a crash's input is lost: %s",
                          r == -ECHILD ? "the recovery helper is not running"
                                       : "out of memory to queue it for recovery");
                c->internal_error = true;
                return;
        }
        if (leak_suspect)
                c->leak_pending++;
        else
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
/* How the file at @path changed since @was: "deleted", "replaced" or NULL. */
static const char *file_change(const char *path, const struct stat *was)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return "deleted";
        if (st.st_dev != was->st_dev || st.st_ino != was->st_ino || st.st_size != was->st_size ||
            st.st_mtim.tv_sec != was->st_mtim.tv_sec || st.st_mtim.tv_nsec != was->st_mtim.tv_nsec)
                return "replaced";
        return NULL;
}

/*
 * The target file is watched: workers run the build they loaded, but a
 * file replaced in place changes the pages they have mapped under them,
 * and the recovery helper verifies a crash in a fresh worker that loads
 * whatever the file is now. Either way a death after a change says nothing
 * about the target that was fuzzed: the run stops with one line instead of
 * storing a false crash. Returns whether the file is as it was.
 */
static bool check_target(Coordinator *c)
{
        if (c->target_changed)
                return false;
        c->target_checked_ms = clock_now_ms();
        const char *name = c->cfg->target;
        const char *how = file_change(c->cfg->target_abs, &c->target_st);
        if (!how && c->sanq) {
                name = c->cfg->sanitizer_target;
                how = file_change(c->cfg->sanitizer_abs, &c->san_st);
        }
        if (!how)
                return true;
        log_error("the target %s was %s while fuzzing; stopping (what was found before is "
                  "stored). Run again to fuzz the new build.",
                  name, how);
        c->target_changed = true;
        c->stopping = true;
        return false;
}

/* Every quarter of a second, from the main loop. */
static void watch_target(Coordinator *c)
{
        if (clock_now_ms() - c->target_checked_ms >= 250)
                (void)check_target(c);
}

/*
 * A runner died of a sandbox refusal: its class is counted, and from now on
 * the workers refuse it with an error instead of dying of it (every worker
 * the first time, else the one whose runner died: a restarted worker). The
 * call is still refused; a refusal that repeats costs a runner once.
 */
static void quiet_refusal(Coordinator *c, Slot *s, const cJSON *died)
{
        bool first = false;
        cJSON *cmd = sandboxlog_refusal(c->sandbox_log, died, &first);

        if (!cmd)
                return;
        for (unsigned i = 0; i < c->n_slots; i++)
                if (c->slots[i].alive && c->slots[i].w && (first || &c->slots[i] == s))
                        (void)wproc_send(c->slots[i].w, cmd);
        cJSON_Delete(cmd);
}

static void take_death(Coordinator *c, Slot *s, cJSON *m)
{
        Classification cl;
        uint64_t key;

        if (!check_target(c))
                return; /* not a crash of the build that was fuzzed */

        classify_death(m, &cl);
        if (!cl.is_crash)
                return;
        c->timeouts += strcmp(cl.kind, "timeout") == 0;
        c->ooms += strcmp(cl.kind, "oom") == 0;
        if (strcmp(cl.kind, "sandbox") == 0)
                quiet_refusal(c, s, m);
        if (strcmp(cl.kind, "leak-suspect") == 0) {
                queue_death(c, s, m, true);
                return;
        }
        bool keyed = death_key(m, &cl, &key);
        bool seen = keyed && death_key_seen(c, key);
        if (seen && helperq_waiting(s->san ? c->san_helperq : c->helperq) >= COORD_BACKLOG) {
                c->deaths++;
                c->duplicates_skipped++;
                return;
        }
        queue_death(c, s, m, false);
}

/* A fuzzing worker's batch ended ("done" or "died" @m): its executions,
 * its finds, the schedule, a sample for the sanitizer build, the death. */
static void fuzz_batch_ended(Coordinator *c, Slot *s, cJSON *m, bool died)
{
        uint64_t count = (uint64_t)msg_int(m, "count", 0);
        double ms = msg_num(m, "elapsed_ms", 0);
        c->execs += count;
        s->execs += count;
        slot_idle(c, s);
        /* A worker that ran a batch is healthy: the restart budget
         * is for workers that fail over and over, not for kills
         * from outside spread over a long campaign. */
        s->restarts = 0;
        c->batches_ended++;
        c->runners_forked += msg_bool(m, "forked", 0);
        take_finds(c, s);
        schedule_batch_done(c->sched, c->corpus, &s->plan, record_header(wproc_region(s->w)), count,
                            ms, msg_num(m, "loop_ms", 0));
        /* The reference design's "modified input" check: the base
         * and partner are read-only to runners, so a change means
         * memory was scribbled on outside the target's reach. */
        bool intact = record_validate(wproc_region(s->w), &c->layout) != RECORD_BAD_PAYLOAD;
        if (!intact)
                log_warn("worker %d: the batch's input changed in shared memory during "
                         "the batch",
                         (int)wproc_pid(s->w));
        if (c->sanq && intact && !died)
                sanq_sample(c->sanq, wproc_region(s->w));
        if (died)
                take_death(c, s, m);
}

/* The sanitizer worker's batch ended: what it checked. Its finds are not
 * taken (its coverage is another build's); a death goes to its own helper,
 * which verifies the crash on the sanitizer build. */
static void san_batch_ended(Coordinator *c, Slot *s, cJSON *m, bool died)
{
        uint64_t count = (uint64_t)msg_int(m, "count", 0);
        s->execs += count;
        slot_idle(c, s);
        s->restarts = 0;
        sanq_batch_done(c->sanq, count, msg_num(m, "elapsed_ms", 0));
        if (died)
                take_death(c, s, m);
}

static void worker_event(Coordinator *c, Slot *s, cJSON *m)
{
        const char *type = msg_str(m, "type", "");
        bool died = strcmp(type, PROTO_DIED) == 0;
        if (died || strcmp(type, PROTO_DONE) == 0) {
                if (s->san)
                        san_batch_ended(c, s, m, died);
                else
                        fuzz_batch_ended(c, s, m, died);
        } else if (strcmp(type, PROTO_SANDBOX) == 0) {
                sandboxlog_event(c->sandbox_log, m);
        } else if (strcmp(type, PROTO_ERROR) == 0) {
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
        if (s->busy) {
                /* No "done" will come: what its runner counted ran. */
                uint64_t count =
                    __atomic_load_n(&record_header(wproc_region(s->w))->count, __ATOMIC_RELAXED);
                if (s->san)
                        sanq_batch_done(c->sanq, count, 0);
                else
                        c->execs += count;
                s->execs += count;
                slot_idle(c, s);
        }
        wproc_free(s->w);
        s->w = NULL;
        s->alive = false;
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
                slot_idle(c, s);
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
                double expected = s->plan.rate > 0 ? (double)s->plan.iters / s->plan.rate : 0;
                int64_t allowed =
                    30000 + (int64_t)(expected * 20) + 3 * (int64_t)c->cfg->timeout_ms + 5000;
                if (now - since > allowed)
                        restart_slot(c, s, "stopped answering");
        }
}

/* The sanitizer worker's next batch, when there is something to check
 * and its share of the time allows (else it idles). */
static void dispatch_san(Coordinator *c, Slot *s)
{
        WprocBatch b;
        if (!sanq_next(c->sanq, c->sched, c->corpus, clock_now_ms(), &b))
                return;
        b.fresh = c->fresh_runners;
        /* Leaks are the sanitizer build's to find, as dispatch_one watches
         * them in a run of an ASan target. */
        b.leak_watch = c->leak_watch && c->leak_pending == 0 && wproc_leaks(s->w);
        if (wproc_send_batch(s->w, &b) < 0) {
                /* Died between two batches: replaced, as when its pipe
                 * closes (an idle worker's death may be seen here first). */
                worker_gone(c, s);
                return;
        }
        s->plan = (SchedulePlan){.iters = b.iters};
        s->busy = true;
        s->busy_since = clock_now_ms();
        s->seen_count = 0;
}

static void dispatch_one(Coordinator *c, Slot *s)
{
        uint64_t max_iters = 0;
        if (c->cfg->runs) {
                uint64_t planned = c->execs + c->in_flight;
                if (planned >= c->cfg->runs)
                        return;
                max_iters = c->cfg->runs - planned;
        }
        size_t table_len;
        const uint8_t *table = dicts_table(c->dicts, &table_len);
        WprocBatch b;
        schedule_next(c->sched, c->corpus, table, table_len, max_iters, &s->plan, &b);
        /* One suspect at a time: while the helper checks one, batches run
         * without watching, so a real leak does not flood the queue with
         * copies of itself. */
        b.leak_watch = c->leak_watch && c->leak_pending == 0 && wproc_leaks(s->w);
        b.fresh = c->fresh_runners;
        /* --no-reduce: without the bases' features, a runner hands back no
         * shorter form of its base. */
        if (c->cfg->no_reduce)
                b.base_best = NULL;
        if (wproc_send_batch(s->w, &b) < 0) {
                /* Died between two batches: replaced, as when its pipe
                 * closes (an idle worker's death may be seen here first). */
                worker_gone(c, s);
                return;
        }
        c->in_flight += b.iters;
        s->busy = true;
        s->busy_since = clock_now_ms();
        s->seen_count = 0;
}

/* Without --keep-going no batch starts while a death is being recovered:
 * it may end the run. Once a quarantined crash has been met, its deaths are
 * expected again and again, and the workers go on meanwhile (a crash that
 * is not quarantined still stops the run when it is stored, a few batches
 * later; what those batches find is stored too). */
static bool crash_hold(const Coordinator *c)
{
        return !c->cfg->keep_going && c->crash_pending > 0 && c->quarantined == 0;
}

static void dispatch(Coordinator *c)
{
        if (c->stopping || crash_hold(c))
                return;
        /* libFuzzer's -runs=0: the seeds, and nothing after them. */
        if (c->cfg->seeds_only && !schedule_seeds_left(c->sched))
                return;
        for (unsigned i = 0; i < c->n_slots; i++) {
                Slot *s = &c->slots[i];
                if (s->alive && !s->busy && s->san)
                        dispatch_san(c, s);
                else if (s->alive && !s->busy)
                        dispatch_one(c, s);
        }
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

/* Once every seed batch has ended: SF_EVENT_INITED, and the end of a
 * seeds-only run. */
static void check_inited(Coordinator *c)
{
        if (c->inited || schedule_seeds_left(c->sched))
                return;
        for (unsigned i = 0; i < c->n_slots; i++)
                if (c->slots[i].alive && c->slots[i].busy && c->slots[i].plan.seed_batch)
                        return;
        c->inited = true;
        emit(c, &(SfEvent){.type = SF_EVENT_INITED});
        if (c->cfg->seeds_only)
                c->stopping = true;
}

static void check_limits(Coordinator *c)
{
        check_inited(c);
        if (c->cfg->max_total_time_s &&
            clock_now_ms() - c->start_ms >= (int64_t)c->cfg->max_total_time_s * 1000)
                c->stopping = true;
        if (c->cfg->runs && c->execs >= c->cfg->runs && !any_busy(c))
                c->stopping = true;
}

static void stop_busy_workers(Coordinator *c)
{
        cJSON *m = msg_new(PROTO_STOP);
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
        struct pollfd pfd[3 + 257];
        Slot *owner[3 + 257];
        nfds_t n = 0;

        pfd[n] = (struct pollfd){.fd = c->sigfd, .events = POLLIN};
        owner[n++] = NULL;
        pfd[n] = (struct pollfd){.fd = helperq_fd(c->helperq), .events = POLLIN};
        owner[n++] = NULL;
        /* -1 without --sanitizer-target: poll skips it. */
        pfd[n] = (struct pollfd){.fd = helperq_fd(c->san_helperq), .events = POLLIN};
        owner[n++] = NULL;
        for (unsigned i = 0; i < c->n_slots && n < 3 + 257; i++) {
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
        if (pfd[1].revents)
                helper_collect(c, c->helperq);
        if (pfd[2].revents)
                helper_collect(c, c->san_helperq);
        for (nfds_t i = 3; i < n; i++) {
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

/* One campaign per output directory: two would lose each other's counts
 * and files. The kernel drops the lock when the holder dies, so a killed
 * run never leaves a stale one. */
static int lock_outdir(Coordinator *c)
{
        pid_t holder = 0;
        int r = fs_lock_dir(c->outdir_fd, ".lock", &c->lock_fd, &holder);
        if (r == -EBUSY) {
                log_error("the output directory %s is in use by another snapfuzz run (pid %ld); "
                          "wait for it to end, stop it, or choose another with --out",
                          c->cfg->out_dir, (long)holder);
                return r;
        }
        if (r < 0) {
                log_error("cannot lock the output directory %s: %s; choose another with --out",
                          c->cfg->out_dir, strerror(-r));
                return -EINVAL;
        }
        return 0;
}

static void sweep_subdir(Coordinator *c, const char *name)
{
        int fd = openat(c->outdir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        fs_sweep_tmp_tree(fd);
        close(fd);
}

static int prepare_outdir(Coordinator *c)
{
        int r = fs_mkdir_p(c->cfg->out_dir, 0755);
        if (r < 0) {
                log_error("cannot create the output directory %s: %s; choose another with "
                          "--out",
                          c->cfg->out_dir, strerror(-r));
                return -EINVAL;
        }
        c->outdir_fd = open(c->cfg->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->outdir_fd < 0) {
                log_error("cannot open the output directory %s: %s; choose another with --out",
                          c->cfg->out_dir, strerror(errno));
                return -EINVAL;
        }
        r = lock_outdir(c);
        if (r < 0)
                return r;
        /* A killed run's half-written files (never under a final name)
         * are ours to remove now that no other run can be writing. */
        fs_sweep_tmp(c->outdir_fd);
        char path[4096];
        snprintf(path, sizeof(path), "%s/crashes", c->cfg->out_dir);
        r = fs_mkdir_p(path, 0755);
        if (r == 0)
                sweep_subdir(c, "crashes");
        sweep_subdir(c, "corpus");
        /* The target's output (--target-output, worker/outsink.h). */
        snprintf(path, sizeof(path), "%s/logs", c->cfg->out_dir);
        if (r == 0 && strcmp(c->cfg->target_output, "discard") != 0)
                r = fs_mkdir_p(path, 0755);
        if (r == 0)
                r = write_stats(c, "starting");
        if (r < 0) {
                log_error("cannot write into the output directory %s: %s; choose another "
                          "with --out",
                          c->cfg->out_dir, strerror(-r));
                return -EINVAL;
        }
        return 0;
}

/* Where new corpus entries go: OUT/corpus, or the front end's directory
 * (SfRunConfig.corpus_out). */
static void corpus_out_dir(const Coordinator *c, char *buf, size_t cap)
{
        if (c->cfg->corpus_out)
                snprintf(buf, cap, "%s", c->cfg->corpus_out);
        else
                snprintf(buf, cap, "%s/corpus", c->cfg->out_dir);
}

static int load_seeds(Coordinator *c)
{
        char path[4096];
        size_t truncated = 0;
        size_t cap = c->cfg->max_len ? c->cfg->max_len : RECORD_MAX_LEN_LIMIT;

        /* A front end's own output corpus is one of its corpus_dirs: read
         * as seeds (never removed), not resumed from OUT/corpus. */
        snprintf(path, sizeof(path), "%s/corpus", c->cfg->out_dir);
        int r = c->cfg->corpus_out ? -ENOENT
                                   : corpus_read_dir(path, cap, &c->seeds, &c->n_seeds, &truncated);
        if (r < 0 && r != -ENOENT) {
                log_error("cannot read %s: %s", path, strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        size_t resumed = c->n_seeds;
        for (int i = 0; i < c->cfg->n_corpus_dirs; i++) {
                r = corpus_read_dir(c->cfg->corpus_dirs[i], cap, &c->seeds, &c->n_seeds,
                                    &truncated);
                if (r < 0) {
                        log_error("cannot read the corpus directory %s: %s", c->cfg->corpus_dirs[i],
                                  strerror(-r));
                        return r == -ENOMEM ? r : -EINVAL;
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
                if (!c->seeds) {
                        log_error("out of memory");
                        return -ENOMEM;
                }
                c->n_seeds = 1;
        }
        c->n_resumed = resumed;
        return 0;
}

/* A deterministic run's runners live as many batches as the lifetime holds
 * at the batches' planned length, not a time: the target's state between
 * inputs (a cache, a counter) must not depend on how fast they ran. 0: by
 * the clock. */
static unsigned runner_batches(const Coordinator *c)
{
        if (!c->deterministic || c->cfg->runner_lifetime_ms == 0 || !c->sched)
                return 0;
        double n = (double)c->cfg->runner_lifetime_ms /
                   schedule_batch_ms(c->sched, &(SchedulePlan){.rate = 0});
        return n < 1 ? 1 : n > 1e6 ? 1000000u : (unsigned)n;
}

/* The settings of fuzzing slot @i's worker; its log's path goes into @log. */
static WprocConfig fuzz_worker_config(const Coordinator *c, size_t i, char *log, size_t cap)
{
        bool logs = strcmp(c->cfg->target_output, "discard") != 0;
        if (logs)
                snprintf(log, cap, "%s/logs/worker-%zu.log", c->cfg->out_dir, i + 1);
        return (WprocConfig){
            .target_output = c->cfg->target_output,
            .output_log = logs ? log : NULL,
            .close_fd_mask = c->cfg->close_fd_mask,
            /* bench/scale.sh puts a simulated worker here (bench/simworker.c)
             * to load the real coordinator with more workers than cores. */
            .exe = getenv("SNAPFUZZ_WORKER_EXE"),
            .target = c->cfg->target_abs,
            .builtin = c->cfg->builtin_target,
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
            .runner_batches = runner_batches(c),
        };
}

/* The settings of slot @i's worker; its log's path goes into @log. The
 * slot after the fuzzing workers' runs the sanitizer build: with a
 * coverage map of its own (its counters are another build's) and its own
 * log, OUT/logs/worker-sanitizer.log. */
static WprocConfig worker_config(const Coordinator *c, size_t i, char *log, size_t cap)
{
        WprocConfig wc = fuzz_worker_config(c, i, log, cap);
        if (i < c->cfg->workers)
                return wc;
        if (wc.output_log)
                snprintf(log, cap, "%s/logs/worker-sanitizer.log", c->cfg->out_dir);
        wc.target = c->cfg->sanitizer_abs;
        wc.cov_fd = -1;
        wc.value_profile = false;
        return wc;
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
        char log[4200];
        WprocConfig wc = worker_config(c, (size_t)(s - c->slots), log, sizeof(log));
        int r = wproc_spawn(&s->w, &wc, err, errlen);
        if (r < 0)
                return r;
        slot_ready(s);
        return 0;
}

/* Waits for a worker's hello as wproc_await_hello does, but gives up at
 * once on SIGINT, SIGTERM or SIGHUP: a target whose initialization hangs
 * must not hold Ctrl-C for the initialization timeout. Returns what
 * wproc_await_hello returns, or -EINTR after a signal. */
static int await_hello(Coordinator *c, Wproc *w, char *err, size_t errlen)
{
        int64_t give_up = clock_now_ms() + 125000; /* past wproc's own timeout */
        while (clock_now_ms() < give_up) {
                struct pollfd pfd[2] = {{.fd = c->sigfd, .events = POLLIN},
                                        {.fd = wproc_evt_fd(w), .events = POLLIN}};
                if (poll(pfd, 2, 200) < 0 && errno != EINTR)
                        break;
                if (pfd[0].revents) {
                        handle_signal(c);
                        snprintf(err, errlen, "stopped while the target was initializing");
                        return -EINTR;
                }
                if (pfd[1].revents)
                        break;
        }
        return wproc_await_hello(w, err, errlen);
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

        unsigned n = c->cfg->workers + (c->sanq != NULL);
        c->slots = calloc(n, sizeof(Slot));
        if (!c->slots) {
                log_error("out of memory");
                return -ENOMEM;
        }
        for (; launched < n; launched++) {
                c->slots[launched].san = launched == c->cfg->workers;
                char log[4200];
                WprocConfig wc = worker_config(c, launched, log, sizeof(log));
                r = wproc_launch(&c->slots[launched].w, &wc, err, sizeof(err));
                if (r < 0)
                        goto err_launched;
        }
        for (; c->n_slots < launched; c->n_slots++) {
                Slot *s = &c->slots[c->n_slots];
                r = await_hello(c, s->w, err, sizeof(err));
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
        if (r == -EINTR)
                return r;
        log_error("%s: %s",
                  c->n_slots == c->cfg->workers ? c->cfg->sanitizer_target : c->cfg->target, err);
        /* A target that cannot be loaded or initialized is the user's to
         * fix, like a file that is not one. */
        return r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED || r == WPROC_ERR_TIMEOUT ? -ENOEXEC
               : r < 0                                                                 ? r
                                                                                       : -EIO;
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
        while ((helperq_pending(c->helperq) > 0 && helperq_fd(c->helperq) >= 0) ||
               (helperq_pending(c->san_helperq) > 0 && helperq_fd(c->san_helperq) >= 0)) {
                helperq_dispatch(c->helperq);
                helperq_dispatch(c->san_helperq);
                loop_once(c);
        }
        for (unsigned i = 0; i < c->n_slots; i++)
                wproc_free(c->slots[i].w);
        helperq_stop(c->helperq);
        helperq_stop(c->san_helperq);
}

/* The schedule (which takes the seeds) and the corpus, in memory and
 * under the output directory. Returns 0 or a negative errno after one line
 * for a person. */
static int plan_run(Coordinator *c)
{
        SfRunConfig *cfg = c->cfg;
        int r;

        size_t n_seeds = c->n_seeds;
        r = schedule_new(&c->sched, &c->layout, cfg->seed, &c->seeds, n_seeds, cfg->workers);
        if (r < 0) {
                log_error("cannot plan the run: %s", strerror(-r));
                return r;
        }
        c->n_seeds = 0; /* the schedule owns them */
        /* A deterministic run (a seed and one worker): nothing that steers
         * the run may come from the clock, so batch lengths and energies
         * follow the inputs' estimated work (find_work_ns). */
        c->deterministic = cfg->deterministic || cfg->reproducible;
        schedule_set_deterministic(c->sched, c->deterministic);
        char corpus_dir[4096];
        corpus_out_dir(c, corpus_dir, sizeof(corpus_dir));
        r = corpus_new(&c->corpus, corpus_dir);
        if (r < 0) {
                log_error("cannot create %s: %s; choose another output directory with --out",
                          corpus_dir, strerror(-r));
                return r == -ENOMEM ? r : -EINVAL;
        }
        corpus_set_keep_seeds(c->corpus, cfg->keep_seeds);
        return 0;
}

/* Everything a run needs before any process starts: the dictionaries (a
 * malformed one is refused before the output directory is touched), the
 * output directory, the seeds, the schedule, the corpus and the coverage
 * map. Returns 0 or a negative errno after one line for a person. */
static int coordinator_init(Coordinator *c)
{
        SfRunConfig *cfg = c->cfg;
        int r;

        c->start_ms = clock_now_ms();
        c->started_at = (int64_t)time(NULL);
        c->cover_ms = c->start_ms;
        c->cover_changes = UINT64_MAX; /* a resumed directory is chosen once too */
        if (!cfg->target_output)
                cfg->target_output = "log";
        if (!cfg->seed_set) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                cfg->seed =
                    (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
        }
        r = dicts_new(&c->dicts, cfg->dict_path);
        if (r == 0)
                r = crashtally_new(&c->tally);
        if (r < 0)
                return r;
        r = prepare_outdir(c);
        if (r == 0)
                r = quarantine_open(c);
        if (r < 0)
                return r;
        dicts_load_auto(c->dicts, c->outdir_fd, cfg->out_dir);
        r = load_seeds(c);
        if (r < 0)
                return r;
        r = write_ci_reports(c, true, false);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        r = record_layout(cfg->max_len, &c->layout);
        if (r < 0) {
                log_error("--max-len %zu is out of range", cfg->max_len);
                return -EINVAL;
        }
        r = plan_run(c);
        if (r < 0)
                return r;
        if (stat(cfg->target_abs, &c->target_st) < 0) {
                int r2 = -errno;
                log_error("%s: %s", cfg->target, strerror(errno));
                return r2;
        }
        if (cfg->sanitizer_target) {
                if (stat(cfg->sanitizer_abs, &c->san_st) < 0) {
                        int r2 = -errno;
                        log_error("%s: %s", cfg->sanitizer_target, strerror(errno));
                        return r2;
                }
                r = sanq_new(&c->sanq, &c->layout,
                             cfg->sanitizer_share ? cfg->sanitizer_share : COORD_SANITIZER_SHARE,
                             cfg->workers, c->start_ms);
                if (r < 0) {
                        log_error("out of memory");
                        return r;
                }
        }
        c->cov_fd = coverage_shared_create();
        if (c->cov_fd < 0 || coverage_shared_map(c->cov_fd, &c->cov) < 0) {
                log_error("cannot create the shared coverage map");
                return c->cov_fd < 0 ? c->cov_fd : -ENOMEM;
        }
        return 0;
}

/* --sync-dir: the thread that exchanges inputs with other instances. */
static int start_sync(Coordinator *c)
{
        SfRunConfig *cfg = c->cfg;
        if (!cfg->sync_dir)
                return 0;
        SyncConfig sc = {.dir = cfg->sync_dir,
                         .name = cfg->sync_name,
                         .max_len = cfg->max_len,
                         .every_s = cfg->sync_every_s};
        int r = sync_new(&c->sync, &sc);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        return 0;
}

/* The sync phase: inputs from other instances into the schedule. */
static void sync_step(Coordinator *c)
{
        bool seeds_busy = false;
        if (!c->sync)
                return;
        for (unsigned i = 0; i < c->n_slots; i++)
                seeds_busy |= c->slots[i].alive && c->slots[i].busy && c->slots[i].plan.seed_batch;
        sync_phase(c->sync, c->sched, seeds_busy);
}

/* Comparison call sites are filed by their offset in the harness's
 * module (worker/cmplog.h), so a deterministic run is the same with
 * address space randomization. Sites in other modules, and targets
 * whose own behaviour follows addresses, need one layout:
 * --reproducible gives every process of the run (each is started
 * after this) the same one. */
static void one_address_layout(void)
{
        int persona = personality(0xffffffff);
        if (persona < 0 || personality((unsigned long)persona | ADDR_NO_RANDOMIZE) < 0)
                log_warn("cannot turn address space randomization off (%s): the run "
                         "may not be reproducible",
                         strerror(errno));
}

/* The run's first lines: the target, the workers and the seed, what the
 * sanitizer build checks, the seeds, where the target's output goes, the
 * dictionaries. */
static void log_start(const Coordinator *c)
{
        const SfRunConfig *cfg = c->cfg;
        log_info("%s: %" PRIu64 " coverage counters, %u workers, seed %" PRIu64 "%s, sandbox %s%s",
                 cfg->target, (uint64_t)wproc_counters(c->slots[0].w), cfg->workers, cfg->seed,
                 c->deterministic ? " (reproducible)" : "", cfg->sandbox,
                 cfg->sandbox_policy ? " with a policy file" : "");
        if (c->sanq)
                log_info("%s: one more worker checks the seeds, every new corpus entry and a "
                         "sample of the fuzzing inputs with it, for at most %u%% of the "
                         "fuzzing workers' time",
                         cfg->sanitizer_target,
                         cfg->sanitizer_share ? cfg->sanitizer_share : COORD_SANITIZER_SHARE);
        log_info("%zu seed inputs (%zu resumed from %s/corpus), max input length %zu",
                 schedule_n_seeds(c->sched), c->n_resumed, cfg->out_dir, cfg->max_len);
        if (strcmp(cfg->target_output, "log") == 0)
                log_info("the target's output goes to %s/logs/worker-N.log (--target-output pass "
                         "shows it here)",
                         cfg->out_dir);
        if (cfg->dict_path || dicts_auto_count(c->dicts))
                log_info("dictionary: %zu tokens from %s, %zu from %s/" DICTS_AUTO_FILE,
                         dicts_user_count(c->dicts), cfg->dict_path ? cfg->dict_path : "--dict",
                         dicts_auto_count(c->dicts), cfg->out_dir);
}

/* The processes: the signalfd (before any fork, so that every child
 * inherits the mask), the recovery helper, the corpus writer thread and
 * the workers. Returns 0 or a negative errno after one line; whatever was
 * started is stopped by coordinator_finish. */
static int coordinator_start(Coordinator *c)
{
        SfRunConfig *cfg = c->cfg;
        int r;

        if (cfg->reproducible)
                one_address_layout();

        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        c->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);

        r = helper_start(c, &c->helperq, cfg->target_abs);
        if (r == 0 && c->sanq)
                r = helper_start(c, &c->san_helperq, cfg->sanitizer_abs);
        if (r < 0) {
                log_error("cannot start the recovery helper: %s", strerror(-r));
                return r;
        }
        /* After the helper's fork and the signal mask: the writer thread
         * is the coordinator's alone and never takes a signal. */
        char corpus_dir[4096];
        corpus_out_dir(c, corpus_dir, sizeof(corpus_dir));
        r = corpusw_new(&c->corpus_w, corpus_dir);
        if (r < 0)
                return r;
        r = start_sync(c);
        if (r < 0)
                return r;
        /* Nothing is printed before the target is known to load, so that a
         * bad target gets exactly one line. */
        r = start_workers(c);
        if (r == 0)
                r = instrcheck_run(cfg, wproc_target_counters(c->slots[0].w));
        if (r < 0)
                return r;
        (void)sandboxlog_new(&c->sandbox_log); /* without it, events are only printed */
        log_start(c);
        helperq_prepare(c->helperq);
        if (c->san_helperq)
                helperq_prepare(c->san_helperq);
        c->last_status_ms = clock_now_ms();
        /* Last: the live screen takes the terminal's bottom lines below
         * the lines above. Without plot_data the run goes on. */
        r = screen_new(&c->screen, cfg->on_event ? SF_DISPLAY_QUIET : cfg->display,
                       cfg->status_every_s, STDERR_FILENO);
        if (r < 0)
                return r;
        r = plotdata_open(&c->plot, c->outdir_fd);
        if (r < 0)
                log_warn("cannot write %s/" PLOTDATA_FILE ": %s; the run goes on without it",
                         cfg->out_dir, strerror(-r));
        return 0;
}

/* The snapshot the screen and plot_data show; @ws holds one entry per
 * worker slot. The memory figure is the largest runner's (or, between
 * runners, worker's) resident size, looked at when @workers_up (after
 * shutdown_all the last one seen stays). */
static void figures(Coordinator *c, ScreenFigures *f, ScreenWorker *ws, bool workers_up)
{
        long rss = -1;
        for (unsigned i = 0; i < c->n_slots; i++) {
                Slot *s = &c->slots[i];
                ws[i] = (ScreenWorker){.execs = s->execs, .alive = s->alive};
                if (!workers_up || !s->alive || !s->w)
                        continue;
                pid_t runner = record_header(wproc_region(s->w))->runner_pid;
                long mb = runner > 0 ? screen_proc_rss_mb(runner) : -1;
                if (mb < 0)
                        mb = screen_proc_rss_mb(wproc_pid(s->w));
                if (mb > rss)
                        rss = mb;
        }
        if (rss >= 0)
                c->rss_mb = rss;
        *f = (ScreenFigures){
            .elapsed_s = (double)(clock_now_ms() - c->start_ms) / 1000.0,
            .execs = c->execs,
            .edges = c->cov ? c->cov->edges : 0,
            .features = c->cov ? c->cov->features : 0,
            .last_new_edge_s =
                c->new_edge_ms < 0 ? -1 : (double)(c->new_edge_ms - c->start_ms) / 1000.0,
            .corpus = c->corpus ? corpus_size(c->corpus) : 0,
            .crashes = c->stored,
            .unique = c->tally ? crashtally_unique(c->tally) : 0,
            .timeouts = c->timeouts,
            .ooms = c->ooms,
            .lost = c->lost,
            .rss_mb = c->rss_mb,
            .rss_limit_mb = c->cfg->rss_limit_mb,
            .target = c->cfg->target,
            .sandbox = c->cfg->sandbox,
            .sandbox_policy = c->cfg->sandbox_policy != NULL,
            .out_dir = c->cfg->out_dir,
            .n_workers = c->n_slots,
            .workers = ws,
            .last_crash = &c->last_crash,
            .sanitizer = c->sanq != NULL,
            .sanitizer_checked = sanq_checked(c->sanq),
        };
}

/* The screen when it is due (a redraw a second on a terminal, else the
 * status line); every status period stats.json, a line of plot_data and
 * the automatic dictionary. */
static void report(Coordinator *c)
{
        static ScreenWorker ws[256];
        ScreenFigures f;
        int64_t now = clock_now_ms();
        if (c->cov && c->cov->edges != c->edges_seen) {
                c->edges_seen = c->cov->edges;
                c->new_edge_ms = now;
        }
        bool periodic = now - c->last_status_ms >= (int64_t)c->cfg->status_every_s * 1000;
        bool due = screen_due(c->screen, now);
        if (!periodic && !due)
                return;
        figures(c, &f, ws, true);
        if (due && !c->cfg->on_event)
                screen_update(c->screen, &f, now);
        if (!periodic)
                return;
        c->last_status_ms = now;
        cover_disk(c, false);
        emit(c, &(SfEvent){.type = SF_EVENT_PULSE});
        (void)write_stats(c, "running");
        if (c->plot)
                (void)plotdata_append(c->plot, &f, c->unique);
        if (now <= c->ci_refresh_until_ms)
                (void)write_ci_reports(c, false, false);
        save_autodict(c);
}

static void check_alive(Coordinator *c)
{
        if (alive_count(c) != 0 || !check_target(c))
                return;
        log_error("every worker has stopped; see the messages above");
        c->internal_error = true;
        c->stopping = true;
}

static void check_writer(Coordinator *c)
{
        if (corpusw_check(c->corpus_w))
                return;
        c->internal_error = true;
        c->stopping = true;
}

/* Stops what coordinator_start started (each part only if it was), flushes
 * the corpus writer, and says what the run stored. */
static void coordinator_finish(Coordinator *c, bool started)
{
        shutdown_all(c);
        if (!started) {
                /* Interrupted while starting (awaiting the workers'
                 * hellos): stats.json says "starting", and a reader
                 * would take the run for killed. Only a run that holds
                 * the directory's lock gets this far with a signal. */
                if (c->interrupted)
                        (void)write_stats(c, "interrupted");
                return;
        }
        cover_disk(c, true);
        if (corpusw_finish(c->corpus_w) < 0)
                c->internal_error = true;
        sync_finish(c->sync, c->sched);
        save_autodict(c);
        static ScreenWorker ws[256];
        ScreenFigures f;
        figures(c, &f, ws, false);
        /* --quiet: the summary is what it still shows. */
        log_set_quiet(false);
        if (!c->cfg->on_event)
                screen_end(c->screen, &f);
        if (c->plot)
                (void)plotdata_append(c->plot, &f, c->unique);
        sanq_summary(c->sanq, c->cfg->sanitizer_target);
        crashtally_summary(c->tally);
        sandboxlog_summary(c->sandbox_log);
        (void)write_stats(c, c->interrupted ? "interrupted" : "done");
        (void)write_ci_reports(c, false, true);
        if (c->stored) {
                char out[1024];
                screen_shell_quote(out, sizeof(out), c->cfg->out_dir);
                log_info("%" PRIu64 " crash%s stored (%" PRIu64 " new); replay %s with: "
                         "snapfuzz reproduce %s --out %s%s",
                         c->stored, c->stored == 1 ? "" : "es", c->unique,
                         c->stored == 1 ? "it" : "the last", c->last_crash.id, out,
                         crashtally_unique(c->tally) > 1 ? " (snapfuzz crashes lists them all)"
                                                         : "");
        }
        if (c->quarantined)
                log_info("%" PRIu64 " of them quarantined (%s/%s): known, they do not fail the run",
                         c->quarantined, c->cfg->out_dir, QUARANTINE_FILE);
        if (c->rescued)
                log_warn("%" PRIu64 " of them could not be written to %s/crashes and are in the "
                         "rescue directory named above",
                         c->rescued, c->cfg->out_dir);
        if (c->lost)
                log_warn("%" PRIu64 " crash%s could not be rebuilt or written (see the warnings "
                         "above)",
                         c->lost, c->lost == 1 ? "" : "es");
        if (!c->stored && !c->lost)
                log_info("no crash found");
        emit(c, &(SfEvent){.type = SF_EVENT_DONE});
}

static void coordinator_deinit(Coordinator *c)
{
        sync_free(c->sync);
        plotdata_free(c->plot);
        screen_free(c->screen);
        corpusw_free(c->corpus_w);
        corpus_free(c->corpus);
        schedule_free(c->sched);
        corpus_seeds_free(c->seeds, c->n_seeds);
        free(c->slots);
        coverage_shared_unmap(c->cov);
        if (c->cov_fd >= 0)
                close(c->cov_fd);
        sandboxlog_free(c->sandbox_log);
        dicts_free(c->dicts);
        crashtally_free(c->tally);
        crashtally_free(c->held);
        quarantine_free(c->quarantine);
        if (c->sigfd >= 0)
                close(c->sigfd);
        if (c->outdir_fd >= 0)
                close(c->outdir_fd);
        if (c->lock_fd >= 0)
                close(c->lock_fd);
        helperq_free(c->helperq);
        helperq_free(c->san_helperq);
        sanq_free(c->sanq);
}

int coordinator_run(SfRunConfig *cfg)
{
        Coordinator c = {.cfg = cfg,
                         .sigfd = -1,
                         .outdir_fd = -1,
                         .cov_fd = -1,
                         .lock_fd = -1,
                         .leak_watch = cfg->detect_leaks,
                         .new_edge_ms = -1,
                         .rss_mb = -1};

        log_set_quiet(cfg->display == SF_DISPLAY_QUIET);
        int r = coordinator_init(&c);
        if (r == 0)
                r = coordinator_start(&c);
        while (r == 0 && !c.stopping) {
                dispatch(&c);
                helperq_dispatch(c.helperq);
                helperq_dispatch(c.san_helperq);
                loop_once(&c);
                check_limits(&c);
                check_stuck(&c);
                check_alive(&c);
                check_writer(&c);
                watch_target(&c);
                sync_step(&c);
                report(&c);
        }
        coordinator_finish(&c, r == 0);
        coordinator_deinit(&c);
        if (r == -EINTR && c.interrupted) {
                log_info("no crash found");
                return ENGINE_RUN_CLEAN;
        }
        if (r < 0)
                return r;
        /* Quarantined crashes are known: only others fail the run. */
        if (c.stored > c.quarantined || c.lost)
                return ENGINE_RUN_CRASHED;
        if (c.target_changed)
                return -ESTALE;
        return c.internal_error ? -EIO : ENGINE_RUN_CLEAN;
}
