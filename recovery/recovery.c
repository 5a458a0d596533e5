/*
 * One job at a time, in the order the coordinator sends them. The
 * verification worker is loaded as soon as the coordinator's workers have
 * loaded the target (so the first crash is verified as fast as later
 * ones) and started again if it goes away.
 * Verification runs the rebuilt bytes exactly once, with the run's timeout
 * and memory limit, in a runner forked from the snapshot: the same code
 * path as fuzzing and as `snapfuzz reproduce`.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/sanitizer.h"
#include "worker/wproc.h"
#include "worker/proto.h"
#include "recovery/classify.h"
#include "recovery/histmin.h"
#include "recovery/minimize.h"
#include "recovery/recovery.h"
#include "recovery/replay.h"
#include "recovery/sanstack.h"
#include "recovery/symbolize.h"

#include "snapfuzz/banned.h"

static void add_hex(cJSON *j, const char *key, uint64_t v)
{
        char hex[24];
        snprintf(hex, sizeof(hex), "0x%016" PRIx64, v);
        cJSON_AddStringToObject(j, key, hex);
}

/* The chain of the record's last iteration: where its PRNG started, the
 * comparison table it read, the corpus entry it mutated. */
static void record_json_chain(const void *region, const RecordLayout *l, cJSON *slot)
{
        const RecordHeader *h = region;
        uint64_t chain = (h->count - 1) / h->chain_len;
        const RecordChainSlot *s = &h->slot[chain & 1];
        char sha[SHA1_HEX_LEN];
        if (!slot)
                return;
        cJSON_AddNumberToObject(slot, "index", (double)s->chain);
        cJSON_AddNumberToObject(slot, "step", (double)((h->count - 1) % h->chain_len));
        add_hex(slot, "rng_state", s->rng.state);
        add_hex(slot, "rng_inc", s->rng.inc);
        /* The comparison table the chain's mutations read (0: none); its
         * entries are in the record. */
        cJSON_AddNumberToObject(slot, "cmp_gen", (double)s->cmp_gen);
        /* The corpus entry the chain mutated: its file in OUT/corpus is
         * named by this hash. */
        RecordInputs *in = malloc(sizeof(*in));
        if (in && record_inputs(region, l, in) == 0) {
                const uint8_t *base, *partner;
                size_t base_len, partner_len;
                record_inputs_chain(in, chain, &base, &base_len, &partner, &partner_len);
                cJSON_AddNumberToObject(slot, "base", (double)(chain % in->bases.n));
                sha1_hex(base, base_len, sha);
                cJSON_AddStringToObject(slot, "base_sha1", sha);
        }
        free(in);
}

/* The replay record as it stood at the death, for the report: everything
 * needed to rebuild the input by hand. */
static cJSON *record_json(const void *region, const RecordLayout *l)
{
        const RecordHeader *h = region;
        char sha[SHA1_HEX_LEN];
        cJSON *j = cJSON_CreateObject();
        if (!j)
                return NULL;
        cJSON_AddNumberToObject(j, "version", h->version);
        cJSON_AddNumberToObject(j, "mutator_version", h->mutator_version);
        cJSON_AddNumberToObject(j, "batch_id", (double)h->batch_id);
        cJSON_AddStringToObject(j, "mode", record_mode_name((RecordMode)h->mode));
        cJSON_AddNumberToObject(j, "iteration", (double)h->count);
        cJSON_AddNumberToObject(j, "iters", (double)h->iters);
        add_hex(j, "seed", h->seed);
        cJSON_AddNumberToObject(j, "chain_len", h->chain_len);
        cJSON_AddNumberToObject(j, "max_len", h->max_len);
        cJSON_AddNumberToObject(j, "base_len", h->base_len);
        sha1_hex(record_base((void *)region, l), h->base_len, sha);
        cJSON_AddStringToObject(j, "base_sha1", sha);
        cJSON_AddNumberToObject(j, "partner_len", h->partner_len);
        cJSON_AddNumberToObject(j, "table_len", h->table_len);
        if (h->mode == RECORD_MODE_FUZZ) {
                /* How the batch mutated: both are part of the replay. */
                char hex[2 * MUTATOR_WEIGHTS + 1];
                for (unsigned i = 0; i < MUTATOR_WEIGHTS; i++)
                        snprintf(hex + 2 * i, 3, "%02x", h->op_weights[i]);
                cJSON_AddNumberToObject(j, "len_limit", h->len_limit);
                cJSON_AddStringToObject(j, "op_weights", hex);
                /* A batch over a list of corpus entries (RECORD_F_PACKED). */
                cJSON_AddBoolToObject(j, "packed", (h->flags & RECORD_F_PACKED) != 0);
        }
        /* Its mutations called the target's (so the target rebuilds them). */
        if (h->flags & RECORD_F_CUSTOM_MUTATOR)
                cJSON_AddBoolToObject(j, "custom_mutator", 1);
        if (h->flags & RECORD_F_CUSTOM_CROSSOVER)
                cJSON_AddBoolToObject(j, "custom_crossover", 1);
        /* Iterations the runner ran again right after their first run (a
         * find, for its features; a leak suspect): part of its history. */
        if (h->n_reruns) {
                cJSON *list = cJSON_AddArrayToObject(j, "reruns");
                for (uint32_t i = 0; list && i < h->n_reruns && i < RECORD_MAX_RERUNS; i++)
                        cJSON_AddItemToArray(list, cJSON_CreateNumber((double)h->reruns[i]));
        }
        if (h->mode == RECORD_MODE_FUZZ && h->count)
                record_json_chain(region, l, cJSON_AddObjectToObject(j, "chain"));
        return j;
}

typedef struct Helper {
        const RecoveryConfig *cfg;
        int64_t out_failed_ms; /* when OUT/crashes last refused a crash */
        Wproc *verifier;
        /* The target has AddressSanitizer or UBSan and is loaded from a
         * file (the drop-in's built-in targets report through their own
         * runtime): crashes are confirmed with the sanitizer's report, in
         * a worker of their own (WprocConfig.sanitizer_confirm). */
        bool confirms;
        Wproc *confirmer;
        uint8_t *buf;
        RecordLayout layout;
        /* A new crash (its input is in buf) to minimize once its "stored"
         * event has been sent. */
        bool minimize_pending;
        Classification minimize_want;
        size_t minimize_len;
        bool minimize_confirmed; /* its trials run in the confirmation worker */
        /* SNAPFUZZ_HELPER_FAULT (for tests/test_faults.c): the helper
         * kills itself, "after-store": once the first attempt of a job has
         * stored its crash, before it answers (the one moment of a job a
         * test cannot reach from outside); "on-recover": as each job
         * starts (a job no helper survives). */
        bool fault_after_store, fault_on_recover;
} Helper;

/* helper_rebuild's outcome when there is no input. */
#define HELPER_NOT_REBUILT 1

/* A worker of the run's target under the run's limits and sandbox, whose
 * inputs (and a list of them) may be @max_len long. @log (@logcap bytes)
 * holds the output log's path for as long as @ret is used. */
static void helper_wproc_config(const Helper *hp, size_t max_len, char *log, size_t logcap,
                                WprocConfig *ret)
{
        /* The target's output: logged to OUT/logs/recovery.log (or
         * dropped with --target-output discard), never shown. NULL mode:
         * shown, as before (a helper with no run configuration). */
        const char *mode = hp->cfg->target_output;
        if (mode && strcmp(mode, "discard") != 0) {
                mode = "log";
                snprintf(log, logcap, "%s/logs/recovery.log", hp->cfg->out_dir);
        }
        *ret = (WprocConfig){
            .target_output = mode,
            .output_log = mode && strcmp(mode, "log") == 0 ? log : NULL,
            .close_fd_mask = hp->cfg->close_fd_mask,
            .target = hp->cfg->target,
            .builtin = hp->cfg->builtin,
            .max_len = max_len,
            .timeout_ms = hp->cfg->timeout_ms,
            .rss_limit_mb = hp->cfg->rss_limit_mb,
            .malloc_limit_mb = hp->cfg->malloc_limit_mb,
            .sandbox = hp->cfg->sandbox,
            .sandbox_policy = hp->cfg->sandbox_policy,
            .cov_fd = -1,
            .detect_leaks = hp->cfg->detect_leaks,
        };
}

/* Starts the verification worker if it is not running. */
static int helper_start_verifier(Helper *hp)
{
        char err[512];
        if (hp->verifier)
                return 0;
        WprocConfig wc;
        char log[4200];
        helper_wproc_config(hp, hp->cfg->max_len, log, sizeof(log), &wc);
        int r = wproc_spawn(&hp->verifier, &wc, err, sizeof(err));
        if (r < 0)
                log_warn("recovery: cannot start the verification worker: %s", err);
        return r;
}

/* Starts the confirmation worker if it is not running: the verification
 * worker's target, limits and sandbox, with the sanitizer's report on. */
static int helper_start_confirmer(Helper *hp)
{
        char err[512];
        if (hp->confirmer)
                return 0;
        WprocConfig wc;
        char log[4200];
        helper_wproc_config(hp, hp->cfg->max_len, log, sizeof(log), &wc);
        wc.sanitizer_confirm = true;
        wc.detect_leaks = false;
        int r = wproc_spawn(&hp->confirmer, &wc, err, sizeof(err));
        if (r < 0)
                log_warn("recovery: cannot start the sanitizer confirmation worker: %s", err);
        return r;
}

/* Runs @data in a fresh runner of the verification worker; with @leak, the
 * runner ends with a LeakSanitizer check. */
static int helper_verify(Helper *hp, const uint8_t *data, size_t len, bool leak, cJSON **ret)
{
        for (int attempt = 0; attempt < 2; attempt++) {
                int r = helper_start_verifier(hp);
                if (r < 0)
                        return r;
                r = leak ? wproc_exec_leak_check(hp->verifier, data, len, 0, ret)
                         : wproc_exec(hp->verifier, data, len, ret);
                if (r == 0)
                        return 0;
                wproc_free(hp->verifier);
                hp->verifier = NULL;
        }
        return -EIO;
}

#define HELPER_HISTORY_PROBES 24
#define HELPER_HISTORY_BUDGET_MS 30000
/* Trials a history's shrink may take (its time is --minimize-time). */
#define HELPER_HISTMIN_TRIALS 4096

/* Re-runs iterations @first..count of the dead runner's batch in a fresh
 * runner. Returns true when it dies the same way at the same iteration. */
static bool helper_history_crashes(Helper *hp, const void *job, uint64_t first,
                                   const Classification *want, cJSON **ret_died)
{
        const RecordHeader *h = job;
        WprocBatch b;
        cJSON *ev = NULL;
        replay_history_batch(job, &hp->layout, first, h->count, &b);
        if (!hp->verifier || wproc_run_batch(hp->verifier, &b, &ev) < 0) {
                cJSON_Delete(ev);
                return false;
        }
        bool same = false;
        if (proto_is(ev, PROTO_DIED) && (uint64_t)msg_int(ev, "count", 0) == h->count) {
                Classification c;
                classify_death(ev, &c);
                same = c.is_crash && strcmp(c.kind, want->kind) == 0;
        }
        if (same && ret_died) {
                cJSON_Delete(*ret_died);
                *ret_died = ev;
        } else {
                cJSON_Delete(ev);
        }
        return same;
}

/* How many more times the runner ran iteration @k right after its first
 * run (a find's second run, a leak suspect's). */
static unsigned reruns_of(const RecordHeader *h, uint64_t k)
{
        unsigned n = 0;
        for (uint32_t i = 0; i < h->n_reruns && i < RECORD_MAX_RERUNS; i++)
                n += h->reruns[i] == k;
        return n;
}

/* A crash that the last input alone does not reproduce may need what ran
 * before it in the same runner (a table that fills up, a leaked counter).
 * The runner's history in its batch is a function of the record, so it can
 * be replayed (what earlier batches of a runner that took several left
 * behind is not: --runner-lifetime-ms 0 makes every batch a fresh runner): first all of it, then
 * shorter and shorter suffixes, to find the shortest one that still crashes. Returns the first
 * iteration of that suffix, or 0 when even the whole history does not
 * crash. */
static uint64_t helper_find_history(Helper *hp, const void *job, const Classification *want,
                                    cJSON **ret_died, unsigned *ret_probes)
{
        const RecordHeader *h = job;
        int64_t deadline = clock_now_ms() + HELPER_HISTORY_BUDGET_MS;
        *ret_probes = 1;
        if (!helper_history_crashes(hp, job, 1, want, ret_died))
                return 0;
        /* crash(lo) holds, crash(hi) does not (hi is the input alone, or
         * with the runs again that followed it: tried first, as the
         * shortest history there is). */
        uint64_t lo = 1, hi = h->count;
        if (hi > 1 && reruns_of(h, hi)) {
                (*ret_probes)++;
                if (helper_history_crashes(hp, job, hi, want, ret_died))
                        return hi;
        }
        while (hi - lo > 1 && *ret_probes < HELPER_HISTORY_PROBES && clock_now_ms() < deadline) {
                uint64_t mid = lo + (hi - lo) / 2;
                (*ret_probes)++;
                if (helper_history_crashes(hp, job, mid, want, ret_died))
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

/* A state-dependent crash's sequence/ files: the executions kept, in
 * order, "sequence/00000001" onwards. Points into Job.hist. */
typedef struct SequenceFiles {
        CrashFile *files;
        char (*names)[32];
        size_t n;
} SequenceFiles;

static void sequence_free(SequenceFiles *s)
{
        free(s->files);
        free(s->names);
}

/* Rebuilds the input the dead runner was running into hp->buf. A batch
 * whose mutations called the target's custom mutator is replayed where the
 * target is loaded, in a sandboxed runner of the verification worker
 * (wproc_rebuild), and the result is checked against the record's note of
 * what ran. Returns 0, or HELPER_NOT_REBUILT with the record's problem in
 * @ret_problem and a sentence in @why when the record alone does not say
 * what went wrong. */
static int helper_rebuild(Helper *hp, const void *job, size_t *ret_len, uint32_t *ret_how,
                          RecordProblem *ret_problem, char *why, size_t whylen)
{
        const RecordHeader *h = job;
        RecordProblem p;
        *ret_problem = RECORD_NEEDS_TARGET;
        if (h->mode != RECORD_MODE_FUZZ || !(h->flags & RECORD_F_CUSTOM)) {
                /* replay.c's convention: a negative RecordProblem. */
                int r = replay_input(job, &hp->layout, hp->buf, ret_len);
                *ret_problem = (RecordProblem)-r;
                return r < 0 ? HELPER_NOT_REBUILT : 0;
        }
        p = record_validate(job, &hp->layout);
        if (p != RECORD_OK && p != RECORD_BAD_SLOT) {
                *ret_problem = p;
                return HELPER_NOT_REBUILT;
        }

        unsigned long long k = (unsigned long long)h->count;
        int r = 0;
        int match = 0;
        /* From the chain's slot; when that is not what ran, the whole batch
         * from its seed in a fresh runner, which also replays whatever state
         * the mutator kept since the runner's fork. */
        for (uint32_t how = RECORD_REBUILT_SLOT; how <= RECORD_REBUILT_SEED && r == 0; how++) {
                cJSON *ev = NULL;
                r = helper_start_verifier(hp);
                if (r == 0)
                        r = wproc_rebuild(hp->verifier, job, how, hp->buf, ret_len, &ev);
                if (r > 0 && proto_is(ev, PROTO_DIED)) {
                        Classification c;
                        classify_death(ev, &c);
                        snprintf(why, whylen,
                                 "the target's custom mutator died (%s: %s) while rebuilding the "
                                 "input of iteration %llu in the verification worker",
                                 c.kind, c.message, k);
                } else if (r > 0) {
                        snprintf(why, whylen,
                                 "the input of iteration %llu could not be rebuilt with the "
                                 "target's custom mutator (the record does not replay)",
                                 k);
                } else if (r < 0) {
                        snprintf(why, whylen,
                                 "the input of iteration %llu needs the target's custom mutator, "
                                 "and the verification worker that would rebuild it failed: %s",
                                 k, strerror(r < -1000 ? EIO : -r));
                        wproc_free(hp->verifier);
                        hp->verifier = NULL;
                }
                cJSON_Delete(ev);
                if (r != 0)
                        return HELPER_NOT_REBUILT;
                /* 1: the record's note says it ran; -1: no note to check
                 * (verification is the only judge then). */
                match = record_exec_matches(h, h->count, hp->buf, *ret_len);
                *ret_how = how;
                if (match != 0)
                        return 0;
        }
        snprintf(why, whylen,
                 "the target's custom mutator is not deterministic: replaying iteration %llu "
                 "with the same Seed values gave other bytes (%zu) than the runner executed "
                 "(%llu), from the chain and from the batch's seed alike. "
                 "LLVMFuzzerCustomMutator and LLVMFuzzerCustomCrossOver must return the same "
                 "output for the same Data, Size, MaxSize and Seed, as libFuzzer requires; "
                 "nothing was stored rather than a wrong input",
                 k, *ret_len, (unsigned long long)h->exec[h->count & 1].len);
        return HELPER_NOT_REBUILT;
}

/* One job as it goes through its phases (helper_job). */
typedef struct Job {
        const cJSON *cmd;
        const void *record; /* the dead runner's record, in the shared job area */
        const RecordHeader *h;
        cJSON *died; /* the worker's event; for a confirmed leak, the check's */
        int64_t died_at, started, rebuilt, verified, confirmed, symbolized;
        size_t len;           /* of the rebuilt input, in Helper.buf */
        uint32_t rebuilt_how; /* RECORD_REBUILT_* when rebuilt in a runner, else 0 */
        bool no_input;        /* the runner died before its first input */
        Classification c;     /* of the death */
        bool suspect;         /* a leak suspect, not (yet) a crash */
        cJSON *verify;        /* the verification's event */
        Classification vc;    /* of the verification */
        bool reproduced;
        cJSON *owned_died;
        /* A state-dependent crash: the first iteration of the shortest
         * history that crashes (0: the input crashes alone), and the runs
         * it took to find it. */
        uint64_t history_first;
        unsigned history_probes;
        /* Its executions (hist) and the subsequence of them that still
         * crashes (hist_keep, hist_n; all of them when not shrunk, and then
         * hist_note says why). */
        HistSeq hist;
        size_t *hist_keep;
        size_t hist_n;
        HistminStats hist_stats;
        bool hist_shrunk;
        const char *hist_note;
        char hist_why[160];
        size_t hist_bytes;  /* the whole history as a list of inputs */
        const cJSON *death; /* the stack the report shows */
        /* The sanitizer confirmation (job_confirm): its event when the
         * input crashed there with a sanitizer's report, the crash as
         * fuzzing saw it (found), and why there is none (confirm_note,
         * NULL when none was tried). */
        cJSON *confirm;
        Classification found;
        const char *confirm_note;
        bool is_new;
        char why[768];         /* why the job is lost */
        char rescued_to[4096]; /* stored here, not in OUT (job_store_rescue) */
        bool write_error;      /* lost because nothing could be written */
} Job;

/* A job's outcomes other than "stored" (positive results of its phases). */
#define JOB_LOST 1      /* the input cannot be rebuilt; Job.why says why */
#define JOB_DISMISSED 2 /* a leak suspect whose memory is all reachable */

/* Phase 1: the input, from the record, into hp->buf. 0 or JOB_LOST. */
static int job_rebuild(Helper *hp, Job *j)
{
        RecordProblem p;
        int r = helper_rebuild(hp, j->record, &j->len, &j->rebuilt_how, &p, j->why, sizeof(j->why));
        j->rebuilt = clock_now_ms();
        if (r == 0)
                return 0;
        if (!j->why[0])
                snprintf(j->why, sizeof(j->why), "%s", record_problem_str(p));
        /* Dying before the first input is no crash of the target's (a kill
         * during start-up). */
        j->no_input = p == RECORD_NO_INPUT;
        return JOB_LOST;
}

/* A trial of a history's shrink: executions @idx[0..n) of the job's
 * history, in order, in one fresh runner; 1 when the last one dies the
 * way the job's crash did. */
typedef struct HistTrial {
        Helper *hp;
        Job *j;
        Wproc **w; /* the verification worker, or one whose list holds the history */
} HistTrial;

static int history_trial(void *ctx, const size_t *idx, size_t n)
{
        HistTrial *t = ctx;
        cJSON *ev = NULL;
        if (!*t->w)
                return -EIO;
        int r = histseq_run(*t->w, &t->j->hist, idx, n, &ev);
        if (r == 0 && proto_is(ev, PROTO_DIED) && (uint64_t)msg_int(ev, "count", 0) == n) {
                Classification c;
                classify_death(ev, &c);
                r = c.is_crash && strcmp(c.kind, t->j->c.kind) == 0;
        }
        cJSON_Delete(ev);
        if (r < 0 && r != -E2BIG && r != -ENOMEM) {
                /* The worker is gone or confused: the next job starts a
                 * new one (helper_start_verifier); this shrink stops. */
                wproc_free(*t->w);
                *t->w = NULL;
                t->j->hist_note = "the verification worker failed during the shrink";
        }
        return r;
}

/* A history longer, as a list, than the verification worker's runners
 * hold runs in a worker of its own whose inputs may be that long (up to
 * RECORD_MAX_LEN_LIMIT): the same target, limits and sandbox; only the
 * room for inputs differs, and no input is longer than it was. 0, or a
 * negative errno with Job.hist_why saying why. */
static int history_big_worker(Helper *hp, Job *j, size_t packed, Wproc **ret)
{
        char err[512];
        WprocConfig wc;
        if (packed > RECORD_MAX_LEN_LIMIT) {
                snprintf(j->hist_why, sizeof(j->hist_why),
                         "the history takes %zu bytes as a list of inputs, more than a runner's "
                         "list holds (%u)",
                         packed, RECORD_MAX_LEN_LIMIT);
                return -E2BIG;
        }
        char log[4200];
        helper_wproc_config(hp, packed, log, sizeof(log), &wc);
        int r = wproc_spawn(ret, &wc, err, sizeof(err));
        if (r < 0)
                snprintf(j->hist_why, sizeof(j->hist_why),
                         "no worker for a %zu-byte list of inputs: %.100s", packed, err);
        return r;
}

/* Shrinks the history of a state-dependent crash (iterations
 * history_first..count, their runs again included) to a subsequence that
 * still crashes the same way, for --minimize-time at most (the shortest
 * list found when it runs out). Without a shrink the list is all of it,
 * and hist_note says why. */
static void job_shrink_history(Helper *hp, Job *j)
{
        const RecordHeader *h = j->h;
        if (h->flags & RECORD_F_CUSTOM) {
                j->hist_note = "a custom mutator's inputs are rebuilt only in a runner: the "
                               "record replays them";
                return;
        }
        int r = histseq_collect(j->record, &hp->layout, j->history_first, h->count, &j->hist);
        if (r < 0) {
                j->hist_note = r == -E2BIG ? "its inputs take more than 64 MiB: the record "
                                             "replays them"
                                           : "its inputs could not be rebuilt from the record";
                histseq_deinit(&j->hist);
                return;
        }
        j->hist_keep = malloc(j->hist.n * sizeof(size_t));
        if (!j->hist_keep) {
                histseq_deinit(&j->hist);
                j->hist_note = "out of memory";
                return;
        }
        for (size_t i = 0; i < j->hist.n; i++)
                j->hist_keep[i] = i;
        j->hist_n = j->hist.n;
        if (hp->cfg->minimize_ms == 0) {
                j->hist_note = "minimization is off (--minimize-time 0)";
                return;
        }
        Wproc *big = NULL;
        HistTrial t = {.hp = hp, .j = j, .w = &hp->verifier};
        size_t packed = histseq_packed_len(&j->hist, j->hist_keep, j->hist_n);
        j->hist_bytes = packed;
        if (packed > hp->layout.area_len) {
                if (history_big_worker(hp, j, packed, &big) < 0) {
                        j->hist_note = j->hist_why;
                        return;
                }
                t.w = &big;
        }
        if (history_trial(&t, j->hist_keep, j->hist_n) != 1) {
                if (!j->hist_note)
                        j->hist_note =
                            "run as a list of inputs, the history did not crash the same way";
                wproc_free(big);
                return;
        }
        MinimizeBudget b = {.max_trials = HELPER_HISTMIN_TRIALS, .max_ms = hp->cfg->minimize_ms};
        size_t *keep, n;
        if (histmin_shrink(j->hist.n, history_trial, &t, &b, &keep, &n, &j->hist_stats) == 0) {
                free(j->hist_keep);
                j->hist_keep = keep;
                j->hist_n = n;
                j->hist_shrunk = true;
        }
        wproc_free(big);
}

/*
 * Phase 2: the input runs again in a fresh runner. A leak suspect is a
 * leak only if LeakSanitizer, run after the input, finds memory nothing
 * points to; then the check's report is the crash (kind, message, where
 * the memory was allocated). A crash the input does not reproduce alone is
 * looked for in the runner's history; a SIGKILL from outside depends on
 * nothing the target did, so it is not. 0 or JOB_DISMISSED.
 */
static int job_verify(Helper *hp, Job *j)
{
        if (helper_verify(hp, hp->buf, j->len, j->suspect, &j->verify) == 0 &&
            proto_is(j->verify, PROTO_DIED)) {
                classify_death(j->verify, &j->vc);
                j->reproduced = j->vc.is_crash;
        }
        if (j->suspect) {
                if (!j->reproduced || strcmp(j->vc.kind, "leak") != 0)
                        return JOB_DISMISSED;
                j->owned_died = cJSON_Duplicate(j->verify, 1);
                if (j->owned_died)
                        j->died = j->owned_died;
                j->c = j->vc;
        }
        const RecordHeader *h = j->h;
        if (!j->reproduced && j->c.is_crash && strcmp(j->c.kind, "killed") != 0 &&
            (h->mode == RECORD_MODE_FUZZ || h->mode == RECORD_MODE_SEEDS) &&
            (h->count > 1 || reruns_of(h, h->count))) {
                j->history_first =
                    helper_find_history(hp, j->record, &j->c, &j->verify, &j->history_probes);
                if (j->history_first) {
                        j->reproduced = true;
                        classify_death(j->verify, &j->vc);
                        job_shrink_history(hp, j);
                }
        }
        j->verified = clock_now_ms();
        return 0;
}

/* The deaths the runner's handler caught where the sanitizer said
 * nothing (a read past the input stopped by the guard page is a SEGV
 * there). A crash the sanitizer reported while fuzzing keeps that report:
 * run again from a heap buffer it could read differently (an input read
 * past its end by a memcpy into a heap block is memcpy-param-overlap
 * there), and its id would change from one version to the next. */
static bool job_wants_confirmation(const Helper *hp, const Job *j)
{
        static const char *const kinds[] = {"segv", "bus", "fpe", "stack-overflow", NULL};
        if (!hp->confirms || !j->reproduced || j->history_first || j->suspect)
                return false;
        for (int i = 0; kinds[i]; i++)
                if (strcmp(j->c.kind, kinds[i]) == 0)
                        return true;
        return false;
}

/*
 * Phase 2b, for a target built with AddressSanitizer or UBSan: the input
 * runs once more, in the confirmation worker (a fresh runner, the same
 * sandbox and limits, WprocConfig.sanitizer_confirm), from a heap buffer
 * of its exact length and with the sanitizer's fault handlers on. When it
 * dies there with the sanitizer's report, that report names the crash
 * (job_symbolize); when it does not, the crash stays as verified and
 * Job.confirm_note says why. Never loses the crash.
 */
static void job_confirm(Helper *hp, Job *j)
{
        cJSON *ev = NULL;
        j->confirmed = j->verified;
        if (!job_wants_confirmation(hp, j))
                return;
        int r = helper_start_confirmer(hp);
        if (r == 0)
                r = wproc_exec(hp->confirmer, hp->buf, j->len, &ev);
        if (r < 0) {
                wproc_free(hp->confirmer);
                hp->confirmer = NULL;
                j->confirm_note = "the confirmation worker failed; the crash is stored as "
                                  "fuzzing found it";
        } else if (!proto_is(ev, PROTO_DIED)) {
                j->confirm_note = "the input ran to completion from an exact-size heap buffer "
                                  "with the sanitizer's handlers on; the crash is stored as "
                                  "fuzzing found it";
        } else if (!msg_str(ev, "sanitizer_report", NULL)) {
                j->confirm_note = "the input crashed again but the sanitizer printed no report; "
                                  "the crash is stored as fuzzing found it";
        } else {
                j->confirm = ev;
                ev = NULL;
        }
        cJSON_Delete(ev);
        j->confirmed = clock_now_ms();
}

/* Phase 3: names from debug info make signatures survive rebuilds and
 * reports readable; symbolizing happens here, outside the sandbox, once the
 * input is safe, and the signature is taken again with them. The stack is
 * the original death's; when that has none (a SIGKILL leaves no chance to
 * unwind) and verification reproduced the same kind, the verification's. */
static void job_symbolize(Job *j)
{
        j->found = j->c;
        if (j->confirm) {
                /* The sanitizer's report names the crash, and the
                 * confirmation's stack is the one it printed. */
                cJSON *cd = cJSON_GetObjectItemCaseSensitive(j->confirm, "death");
                symbolize_frames(cJSON_GetObjectItemCaseSensitive(cd, "frames"), true);
                classify_death(j->confirm, &j->c);
                j->death = cd;
                j->symbolized = clock_now_ms();
                return;
        }
        cJSON *death = cJSON_GetObjectItemCaseSensitive(j->died, "death");
        if (!death && j->reproduced && strcmp(j->vc.kind, j->c.kind) == 0)
                death = cJSON_GetObjectItemCaseSensitive(j->verify, "death");
        symbolize_frames(cJSON_GetObjectItemCaseSensitive(death, "frames"), true);
        classify_death(j->died, &j->c);
        j->death = death;
        j->symbolized = clock_now_ms();
}

/* The report's account of the death: kind, signal or status, stack, what
 * the target printed last. */
static void report_add_death(Helper *hp, const Job *j, cJSON *report)
{
        char sha[SHA1_HEX_LEN];
        sha1_hex(hp->buf, j->len, sha);
        cJSON_AddStringToObject(report, "id", j->c.id);
        cJSON_AddStringToObject(report, "kind", j->c.kind);
        cJSON_AddStringToObject(report, "message", j->c.message);
        cJSON_AddStringToObject(report, "signature", j->c.signature);
        /* false: no symbolizer, so the signature names frames by
         * module+offset (recovery/symbolize.h). */
        cJSON_AddBoolToObject(report, "symbolized", symbolize_available());
        if (cJSON_GetObjectItemCaseSensitive(j->died, "signal")) {
                int sig = (int)msg_int(j->died, "signal", 0);
                const char *abbrev = sigabbrev_np(sig);
                char name[32];
                snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
                cJSON_AddNumberToObject(report, "signal", sig);
                cJSON_AddStringToObject(report, "signal_name", name);
        }
        /* A leak's runner ended itself after the check: no status of the
         * target's. */
        if (cJSON_GetObjectItemCaseSensitive(j->died, "exit_code") &&
            strcmp(j->c.kind, "leak") != 0)
                cJSON_AddNumberToObject(report, "exit_status",
                                        (double)msg_int(j->died, "exit_code", 0));
        cJSON_AddStringToObject(report, "target", hp->cfg->target);
        cJSON_AddNumberToObject(report, "input_len", (double)j->len);
        cJSON_AddStringToObject(report, "input_sha1", sha);
        cJSON_AddBoolToObject(report, "reproduced", j->reproduced);
        if (j->reproduced && strcmp(j->vc.kind, j->c.kind) != 0)
                cJSON_AddStringToObject(report, "reproduced_kind", j->vc.kind);
        if (j->death)
                cJSON_AddItemToObject(report, "stack", cJSON_Duplicate(j->death, 1));
        /* What the target printed last before it died (assertion messages,
         * sanitizer reports). */
        const char *output = msg_str(j->confirm ? j->confirm : j->died, "output", NULL);
        if (!output && j->reproduced)
                output = msg_str(j->verify, "output", NULL);
        if (output)
                cJSON_AddStringToObject(report, "output", output);
        cJSON_AddItemToObject(report, "record", record_json(j->record, &hp->layout));
}

/* The name of a crash's sanitizer report file, next to its input. */
#define SANITIZER_REPORT_FILE "sanitizer.txt"

/* The sanitizer's report the crash has (the confirmation's, else the one
 * fuzzing or verification caught), or NULL. */
static const char *job_sanitizer_report(const Job *j)
{
        if (j->confirm)
                return msg_str(j->confirm, "sanitizer_report", NULL);
        const char *rep = msg_str(j->died, "sanitizer_report", NULL);
        if (!rep && j->reproduced)
                rep = msg_str(j->verify, "sanitizer_report", NULL);
        return rep;
}

/* The report's "sanitizer" object, for a target built with a sanitizer:
 * the bug type, whether the confirmation gave it (and how fuzzing saw the
 * crash, or why there was no confirmation), and the report file, whose
 * text (its stacks symbolized, sanstack.h; malloc'd) goes into
 * *@ret_text. */
static void report_add_sanitizer(const Helper *hp, const Job *j, cJSON *report, char **ret_text,
                                 size_t *ret_len)
{
        const char *rep = job_sanitizer_report(j);
        *ret_text = NULL;
        *ret_len = 0;
        if (!hp->confirms || (!rep && !j->confirm_note))
                return;
        cJSON *san = cJSON_AddObjectToObject(report, "sanitizer");
        if (!san)
                return;
        if (j->c.bug_type[0])
                cJSON_AddStringToObject(san, "bug_type", j->c.bug_type);
        cJSON_AddBoolToObject(san, "confirmed", j->confirm != NULL);
        if (j->confirm) {
                cJSON *found = cJSON_AddObjectToObject(san, "found_as");
                if (found) {
                        cJSON_AddStringToObject(found, "kind", j->found.kind);
                        cJSON_AddStringToObject(found, "message", j->found.message);
                }
        } else {
                cJSON_AddStringToObject(san, "note",
                                        j->confirm_note ? j->confirm_note
                                        : j->history_first
                                            ? "a crash that needs its runner's history is not "
                                              "confirmed; the report is the one fuzzing caught"
                                            : "the sanitizer reported the crash while fuzzing; the "
                                              "report is that one");
        }
        FILE *f = rep ? open_memstream(ret_text, ret_len) : NULL;
        if (!f)
                return;
        bool ok = sanstack_put_text(f, rep, true) == 0;
        if (fclose(f) == 0 && ok && *ret_len) {
                cJSON_AddStringToObject(san, "report", SANITIZER_REPORT_FILE);
                return;
        }
        free(*ret_text);
        *ret_text = NULL;
        *ret_len = 0;
}

/* How the shrink of a history went, for the report. */
static void report_add_shrink(const Job *j, cJSON *st)
{
        cJSON *m = cJSON_AddObjectToObject(st, "minimize");
        if (!m)
                return;
        cJSON_AddNumberToObject(m, "from_len", (double)j->hist.n);
        cJSON_AddNumberToObject(m, "to_len", (double)j->hist_n);
        /* The whole history as one runner's list of inputs (a list longer
         * than --max-len, or 64 KiB, ran in a worker with room for it). */
        if (j->hist_bytes)
                cJSON_AddNumberToObject(m, "list_bytes", (double)j->hist_bytes);
        if (!j->hist_shrunk) {
                cJSON_AddStringToObject(m, "skipped", j->hist_note ? j->hist_note : "not run");
                return;
        }
        cJSON_AddNumberToObject(m, "trials", (double)j->hist_stats.trials);
        cJSON_AddNumberToObject(m, "ms", (double)j->hist_stats.ms);
        cJSON_AddStringToObject(m, "stopped",
                                j->hist_note ? "error" : minimize_stop_str(j->hist_stats.stopped));
        if (j->hist_note)
                cJSON_AddStringToObject(m, "note", j->hist_note);
}

/* A state-dependent crash: the report says which history crashes, and
 * @seq gets the files that replay it: the record, and the executions kept
 * (the shrunk subsequence, or the whole suffix), one file each, in order.
 * 0 or -ENOMEM. */
static int report_add_history(Helper *hp, const Job *j, cJSON *report, SequenceFiles *seq)
{
        const RecordHeader *h = j->h;
        uint64_t n = h->count - j->history_first + 1, runs = n;
        for (uint64_t k = j->history_first; k <= h->count; k++)
                runs += reruns_of(h, k);
        cJSON *st = cJSON_AddObjectToObject(report, "state_dependent");
        if (!st)
                return -ENOMEM;
        cJSON_AddNumberToObject(st, "first", (double)j->history_first);
        cJSON_AddNumberToObject(st, "last", (double)h->count);
        cJSON_AddNumberToObject(st, "length", (double)n);
        /* Target calls: an input the runner ran again counts twice. */
        cJSON_AddNumberToObject(st, "executions", (double)runs);
        cJSON_AddNumberToObject(st, "probes", j->history_probes);
        cJSON_AddStringToObject(st, "how",
                                "the last input alone does not crash; the inputs of "
                                "iterations first..last, run in order in one runner, do "
                                "(those in record.reruns run again right after "
                                "themselves): 'record' replays them. sequence/ holds the "
                                "executions the crash needs (a subsequence of those), one "
                                "file each: run them in order in one process.");
        report_add_shrink(j, st);
        /* The executions, the record, and a slot for the sanitizer's
         * report (job_store). */
        seq->files = calloc(j->hist_n + 2, sizeof(CrashFile));
        seq->names = calloc(j->hist_n + 1, sizeof(seq->names[0]));
        if (!seq->files || !seq->names)
                return -ENOMEM;
        cJSON *list = cJSON_AddArrayToObject(st, "sequence");
        for (size_t i = 0; i < j->hist_n; i++) {
                size_t e = j->hist_keep[i];
                snprintf(seq->names[i], sizeof(seq->names[0]), "sequence/%08zu", i + 1);
                seq->files[i] = (CrashFile){
                    .name = seq->names[i], .data = j->hist.data[e], .len = j->hist.len[e]};
                /* Where each file came from: its iteration, and which run
                 * of it (0 the first, 1 the run again after it, ...). */
                cJSON *it = cJSON_CreateArray();
                if (it && list) {
                        cJSON_AddItemToArray(it, cJSON_CreateNumber((double)j->hist.iter[e]));
                        cJSON_AddItemToArray(it, cJSON_CreateNumber((double)j->hist.again[e]));
                        cJSON_AddItemToArray(list, it);
                } else {
                        cJSON_Delete(it);
                }
        }
        seq->n = j->hist_n;
        seq->files[seq->n] =
            (CrashFile){.name = "record", .data = j->record, .len = hp->layout.record_size};
        cJSON_AddBoolToObject(st, "sequence_files", j->hist_n > 0);
        cJSON_AddNumberToObject(st, "sequence_length", (double)j->hist_n);
        return 0;
}

/* Which class of crash this is: it reproduces from its input alone, it
 * needs its history (history_len executions, from from_len: sequence/), or
 * it did not reproduce. */
static void report_add_reproduction(const Job *j, cJSON *report)
{
        cJSON *rep = cJSON_AddObjectToObject(report, "reproduction");
        if (!rep)
                return;
        const char *cls = !j->reproduced ? "none" : j->history_first ? "history" : "alone";
        cJSON_AddStringToObject(rep, "class", cls);
        if (j->history_first) {
                cJSON_AddNumberToObject(rep, "history_len", (double)j->hist_n);
                cJSON_AddNumberToObject(rep, "from_len", (double)j->hist.n);
        }
}

/* The limits and sandbox the crash happened under (`reproduce` runs under
 * the same policy even when the policy file is gone), and what recovery
 * took. */
static void report_add_conditions(Helper *hp, const Job *j, cJSON *report)
{
        cJSON *limits = cJSON_AddObjectToObject(report, "limits");
        if (limits) {
                cJSON_AddNumberToObject(limits, "timeout_ms", hp->cfg->timeout_ms);
                cJSON_AddNumberToObject(limits, "rss_limit_mb", hp->cfg->rss_limit_mb);
                cJSON_AddNumberToObject(limits, "malloc_limit_mb", hp->cfg->malloc_limit_mb);
                cJSON_AddNumberToObject(limits, "max_len", (double)hp->cfg->max_len);
                cJSON_AddStringToObject(limits, "sandbox", hp->cfg->sandbox);
        }
        const cJSON *sandbox = cJSON_GetObjectItemCaseSensitive(j->died, "sandbox");
        if (cJSON_IsObject(sandbox))
                cJSON_AddItemToObject(report, "sandbox", cJSON_Duplicate(sandbox, 1));
        cJSON *times = cJSON_AddObjectToObject(report, "recovery");
        if (!times)
                return;
        cJSON_AddNumberToObject(times, "rebuild_ms", (double)(j->rebuilt - j->started));
        /* A custom mutator's input is rebuilt in a runner, from the chain's
         * slot or, when that did not give what ran, the seed. */
        if (j->rebuilt_how)
                cJSON_AddStringToObject(times, "rebuilt_in_runner",
                                        j->rebuilt_how == RECORD_REBUILT_SEED ? "seed" : "slot");
        cJSON_AddNumberToObject(times, "verify_ms", (double)(j->verified - j->rebuilt));
        /* The sanitizer confirmation (0 when there was none). */
        cJSON_AddNumberToObject(times, "confirm_ms", (double)(j->confirmed - j->verified));
        cJSON_AddNumberToObject(times, "symbolize_ms", (double)(j->symbolized - j->confirmed));
        cJSON_AddNumberToObject(times, "death_to_verified_ms", (double)(j->verified - j->died_at));
}

/* Whether the crash of a job done again (a helper died on it before) is
 * the one its earlier attempt stored: the same input, from the same
 * iteration of the same batch, and stored once. Then that attempt's store
 * is the answer, a new crash as it was then, not a second sighting. */
static bool job_stored_before(Helper *hp, const Job *j)
{
        cJSON *old = NULL;
        uint8_t *input = NULL;
        size_t len = 0;
        char err[256], seed[24];
        if (msg_int(j->cmd, "attempt", 1) <= 1 ||
            crashstore_load(hp->cfg->out_dir, j->c.id, &old, &input, &len, err, sizeof(err)) < 0)
                return false;
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(old, "record");
        snprintf(seed, sizeof(seed), "0x%016" PRIx64, j->h->seed);
        bool same = msg_int(old, "count", 0) == 1 && len == j->len &&
                    (len == 0 || memcmp(input, hp->buf, len) == 0) &&
                    (uint64_t)msg_num(rec, "batch_id", -1) == j->h->batch_id &&
                    (uint64_t)msg_num(rec, "iteration", -1) == j->h->count &&
                    strcmp(msg_str(rec, "seed", ""), seed) == 0;
        cJSON_Delete(old);
        free(input);
        return same;
}

/* How long a crash whose write failed waits before the second try, and
 * how long after a failure later crashes go straight to the rescue
 * directory. */
#define JOB_STORE_RETRY_MS 500
#define JOB_STORE_SPELL_MS 5000

/* OUT/crashes could not take the crash (a full disk, a directory made
 * read-only): it is tried once more, then written to the run's rescue
 * directory, ${TMPDIR:-/tmp}/snapfuzz-rescue-<coordinator pid>, the one the
 * corpus writer uses (engine/corpusw.c), so nothing rebuilt is dropped.
 * Returns 0 (Job.rescued_to says where, when not OUT) or the error. */
static int job_store_rescue(Helper *hp, Job *j, cJSON *report, const CrashFile *files,
                            size_t n_files, int first)
{
        /* One pause per failing spell, not one per crash: a campaign that
         * finds a crash a second would otherwise fall behind for good. */
        int64_t now = clock_now_ms();
        if (now - hp->out_failed_ms > JOB_STORE_SPELL_MS) {
                struct timespec pause = {0, JOB_STORE_RETRY_MS * 1000000L};
                nanosleep(&pause, NULL);
                int r = crashstore_put_files(hp->cfg->out_dir, report, hp->buf, j->len, files,
                                             n_files, &j->is_new);
                if (r == 0 || r == -ENOMEM)
                        return r;
        }
        hp->out_failed_ms = clock_now_ms();
        char crashes[4200];
        fs_rescue_dir(j->rescued_to, sizeof(j->rescued_to), (long)getppid());
        snprintf(crashes, sizeof(crashes), "%s/crashes", j->rescued_to);
        int r2 = fs_mkdir_p(crashes, 0700);
        if (r2 == 0)
                r2 = crashstore_put_files(j->rescued_to, report, hp->buf, j->len, files, n_files,
                                          &j->is_new);
        if (r2 == 0)
                return 0;
        snprintf(j->why, sizeof(j->why), "cannot write the crash to %s/crashes (%s) nor to %s (%s)",
                 hp->cfg->out_dir, strerror(-first), crashes, strerror(-r2));
        j->rescued_to[0] = 0;
        j->write_error = true;
        return r2;
}

/* Phase 4: the report and the input into OUT/crashes. 0 or a negative
 * errno (the crash is not stored; Job.why says so). A new crash that
 * reproduced alone is minimized once its answer is sent: a state-dependent
 * one needs its history, which the minimizer (one input per runner) cannot
 * shrink. */
static int job_store(Helper *hp, Job *j)
{
        SequenceFiles seq = {0};
        CrashFile *files = NULL, one;
        size_t n_files = 0;
        int r = -ENOMEM;
        cJSON *report = NULL;
        char *san_text = NULL;
        size_t san_len = 0;
        if (job_stored_before(hp, j)) {
                j->is_new = true;
                r = 0;
                goto stored;
        }
        report = cJSON_CreateObject();
        if (!report)
                goto out;
        report_add_death(hp, j, report);
        report_add_reproduction(j, report);
        report_add_sanitizer(hp, j, report, &san_text, &san_len);
        if (j->history_first && report_add_history(hp, j, report, &seq) == 0) {
                files = seq.files;
                n_files = seq.n + 1;
        }
        /* The sanitizer's report, beside the input. (A state-dependent
         * crash's list has a slot to spare after its record.) */
        if (san_text && files) {
                seq.files[n_files++] = (CrashFile){.name = SANITIZER_REPORT_FILE,
                                                   .data = (const uint8_t *)san_text,
                                                   .len = san_len};
        } else if (san_text) {
                one = (CrashFile){.name = SANITIZER_REPORT_FILE,
                                  .data = (const uint8_t *)san_text,
                                  .len = san_len};
                files = &one;
                n_files = 1;
        }
        report_add_conditions(hp, j, report);
        r = crashstore_put_files(hp->cfg->out_dir, report, hp->buf, j->len, files, n_files,
                                 &j->is_new);
        if (r < 0 && r != -ENOMEM)
                r = job_store_rescue(hp, j, report, files, n_files, r);
stored:
        /* A rescued crash is not minimized: its minimized file would go to
         * OUT, which does not take writes. */
        if (r == 0 && j->is_new && j->reproduced && !j->history_first && !j->rescued_to[0]) {
                hp->minimize_pending = true;
                hp->minimize_want = j->c;
                hp->minimize_len = j->len;
                hp->minimize_confirmed = j->confirm != NULL;
        }
out:
        if (r < 0 && !j->why[0])
                snprintf(j->why, sizeof(j->why), "cannot write the crash to %s/crashes: %s",
                         hp->cfg->out_dir, strerror(-r));
        sequence_free(&seq);
        free(san_text);
        cJSON_Delete(report);
        return r;
}

/* Phase 5: the answer for the coordinator, from the outcome @r of the
 * phases. NULL when out of memory. */
static cJSON *job_answer(const Job *j, int r, int64_t stored)
{
        const char *type = r == 0 ? "stored" : r == JOB_DISMISSED ? "dismissed" : "lost";
        cJSON *out = msg_new(type);
        if (!out)
                return NULL;
        cJSON_AddNumberToObject(out, "job", (double)msg_int(j->cmd, "job", 0));
        if (j->suspect)
                cJSON_AddBoolToObject(out, "leak_suspect", 1);
        if (r != 0) {
                if (r != JOB_DISMISSED)
                        cJSON_AddStringToObject(out, "why", j->why);
                if (j->write_error)
                        cJSON_AddBoolToObject(out, "write_error", 1);
                if (j->no_input)
                        cJSON_AddBoolToObject(out, "no_input", 1);
                return out;
        }
        cJSON_AddStringToObject(out, "id", j->c.id);
        cJSON_AddStringToObject(out, "kind", j->c.kind);
        cJSON_AddStringToObject(out, "message", j->c.message);
        cJSON_AddStringToObject(out, "signature", j->c.signature);
        cJSON_AddBoolToObject(out, "new", j->is_new);
        cJSON_AddBoolToObject(out, "reproduced", j->reproduced);
        cJSON_AddNumberToObject(out, "input_len", (double)j->len);
        cJSON_AddNumberToObject(out, "death_to_stored_ms", (double)(stored - j->died_at));
        if (j->rescued_to[0])
                cJSON_AddStringToObject(out, "rescued_to", j->rescued_to);
        return out;
}

/* One "recover" command: the phases in order, each ending the job early
 * with its outcome; the answer says which. */
static cJSON *helper_job(Helper *hp, const cJSON *cmd, void *record)
{
        Job j = {.cmd = cmd, .record = record, .h = record, .started = clock_now_ms()};
        if (hp->fault_on_recover)
                raise(SIGKILL);
        j.died = cJSON_GetObjectItemCaseSensitive(cmd, "died");
        j.died_at = msg_int(cmd, "died_at_ms", j.started);
        classify_death(j.died, &j.c);
        j.suspect = strcmp(j.c.kind, "leak-suspect") == 0;

        int r = job_rebuild(hp, &j);
        if (r == 0)
                r = job_verify(hp, &j);
        if (r == 0) {
                job_confirm(hp, &j);
                job_symbolize(&j);
                r = job_store(hp, &j);
        }
        if (r == 0 && hp->fault_after_store && msg_int(cmd, "attempt", 1) == 1)
                raise(SIGKILL);
        cJSON *out = job_answer(&j, r, clock_now_ms());
        cJSON_Delete(j.verify);
        cJSON_Delete(j.confirm);
        cJSON_Delete(j.owned_died);
        histseq_deinit(&j.hist);
        free(j.hist_keep);
        return out;
}

/* The target loads (the coordinator's workers said hello): the helper
 * loads it ahead too, in its verification worker and, for a target whose
 * crashes are confirmed with its sanitizer's report, its confirmation
 * worker, so that the first crash is stored as fast as later ones. */
static void helper_prepare(Helper *hp)
{
        if (helper_start_verifier(hp) == 0 && hp->confirms)
                (void)helper_start_confirmer(hp);
}

int recovery_main(const RecoveryConfig *cfg, int cmd_fd, int evt_fd, void *job_region)
{
        const char *fault = getenv("SNAPFUZZ_HELPER_FAULT");
        Helper hp = {.cfg = cfg,
                     .fault_after_store = fault && strcmp(fault, "after-store") == 0,
                     .fault_on_recover = fault && strcmp(fault, "on-recover") == 0};
        MsgReader reader;
        int r;

        r = record_layout(cfg->max_len, &hp.layout);
        if (r < 0) {
                log_error("recovery helper: --max-len %zu is out of range", cfg->max_len);
                return r;
        }
        SanitizerInfo san;
        char why[512];
        hp.confirms = !cfg->builtin && sanitizer_detect(cfg->target, &san, why, sizeof(why)) == 0 &&
                      (san.asan || san.ubsan);
        hp.buf = malloc(cfg->max_len ? cfg->max_len : 1);
        if (!hp.buf) {
                log_error("recovery helper: out of memory for a %zu-byte input", cfg->max_len);
                return -ENOMEM;
        }
        msg_reader_init(&reader, cmd_fd);
        for (;;) {
                cJSON *cmd = NULL;
                r = msg_recv(&reader, &cmd, -1);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                const char *type = msg_str(cmd, "type", "");
                cJSON *reply = NULL;
                if (strcmp(type, "recover") == 0)
                        reply = helper_job(&hp, cmd, job_region);
                else if (strcmp(type, "ping") == 0)
                        reply = msg_new("pong");
                else if (strcmp(type, "prepare") == 0)
                        helper_prepare(&hp);
                cJSON_Delete(cmd);
                if (reply) {
                        r = msg_send(evt_fd, reply);
                        cJSON_Delete(reply);
                        if (r < 0)
                                break;
                }
                /* After the reply, so minimization never delays a crash's
                 * report; the coordinator's next job waits in the pipe. */
                if (hp.minimize_pending) {
                        hp.minimize_pending = false;
                        /* A confirmed crash is the same crash only where
                         * the sanitizer reports it. */
                        (void)minimize_auto(hp.minimize_confirmed ? hp.confirmer : hp.verifier,
                                            cfg->out_dir, &hp.minimize_want, hp.buf,
                                            hp.minimize_len, cfg->minimize_ms);
                }
        }
        if (r != -EPIPE)
                log_error("recovery helper: cannot talk with the coordinator: %s", strerror(-r));
        msg_reader_deinit(&reader);
        wproc_free(hp.confirmer);
        wproc_free(hp.verifier);
        free(hp.buf);
        return r == -EPIPE ? 0 : r;
}
