/*
 * The other end of a worker: spawns `snapfuzz __worker` on a target with
 * its own shared record (memfd) and command/event pipes, waits for its
 * hello, and sends it batches. Used by the coordinator (fuzzing workers),
 * the recovery helper (its verification worker) and `reproduce`, so that
 * fuzzing, verification and reproduction run the same load-sandbox-call
 * code.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "snapfuzz/record.h"

typedef struct WprocConfig {
        const char *exe;    /* the snapfuzz executable; NULL: /proc/self/exe */
        const char *target; /* path of the target .so (the executable's, with builtin) */
        /* The target is the executable's own (worker_builtin_set): the
         * worker is told PROTO_TARGET_SELF and loads nothing. */
        bool builtin;
        size_t max_len;
        unsigned timeout_ms;
        unsigned rss_limit_mb;    /* 0: no limit */
        unsigned malloc_limit_mb; /* one allocation larger than this is a crash; 0: none */
        const char *sandbox;      /* "strict", "log" or "off" */
        int cov_fd;               /* shared coverage map; -1: a private one */
        unsigned init_timeout_ms; /* how long loading may take; 0: 120 s */
        bool value_profile;       /* comparison distances as coverage (worker/cmplog.h) */
        bool detect_leaks;        /* LeakSanitizer checks, for targets built with it */
        /* How long a runner goes on taking fuzz batches (worker/runner.h);
         * 0: one batch per runner. */
        unsigned runner_lifetime_ms;
        unsigned runner_batches; /* WorkerArgs.runner_batches */
        /* The policy file's rules as JSON (sandbox_policy_load), or NULL. */
        const char *sandbox_policy;
        /* Where the target's output goes (worker/outsink.h): "pass" (NULL),
         * "log" or "discard"; the log file of pass and log, or NULL; and
         * libFuzzer's -close_fd_mask (1 stdout, 2 stderr, 3 both). */
        const char *target_output;
        const char *output_log;
        unsigned close_fd_mask;
        /* For a target built with AddressSanitizer or UBSan (nothing
         * otherwise): the worker's runners confirm crashes with the
         * sanitizer's own report. Each input runs from a heap buffer of its
         * exact length, not the page-guarded view fuzzing uses, so a read
         * past its end is ASan's heap-buffer-overflow; and the sanitizer
         * handles SIGSEGV, SIGBUS and SIGFPE itself ("SEGV on unknown
         * address"). Slower than fuzzing; used by the recovery helper and
         * `reproduce`. */
        bool sanitizer_confirm;
} WprocConfig;

typedef struct Wproc Wproc;

/* Why a worker could not start because of its target (the user's to fix,
 * not snapfuzz's): negative errnos that no other failure of wproc_spawn
 * returns, so a caller can tell them from a refused resource (-ENOMEM,
 * -EMFILE, ...) or a broken protocol (-EPROTO), and strerror() still says
 * something sensible. */
#define WPROC_ERR_LOAD (-ENOEXEC)      /* the target cannot be loaded / has no entry point */
#define WPROC_ERR_CRASHED (-ECHILD)    /* the target crashed or exited while initializing */
#define WPROC_ERR_TIMEOUT (-ETIMEDOUT) /* initialization did not finish in time */

/* Starts a worker and waits for its hello. Returns 0, or a WPROC_ERR_*, or
 * another negative errno (-EPROTO: the worker and this end disagree), and
 * then writes one line for a person into @err. */
int wproc_spawn(Wproc **ret, const WprocConfig *cfg, char *err, size_t errlen);

/* wproc_spawn in two halves, so that many workers load their target at the
 * same time: wproc_launch starts the process and returns at once;
 * wproc_await_hello waits for its hello (for what is left of the
 * initialization timeout, counted from the launch). Both fail as
 * wproc_spawn does; after a failed wait the caller frees the worker. */
int wproc_launch(Wproc **ret, const WprocConfig *cfg, char *err, size_t errlen);
int wproc_await_hello(Wproc *w, char *err, size_t errlen);

/* Stops the worker (a "stop" command, then SIGTERM, then SIGKILL, with a
 * grace period each) and frees everything. NULL is a no-op. */
void wproc_free(Wproc *w);

void *wproc_region(Wproc *w);
const RecordLayout *wproc_layout(const Wproc *w);
int wproc_evt_fd(const Wproc *w);
pid_t wproc_pid(const Wproc *w);
/* Whether the worker can check for leaks (its target has LeakSanitizer,
 * and --detect-leaks is on). */
bool wproc_leaks(const Wproc *w);
size_t wproc_counters(const Wproc *w);
/* The target's own coverage counters: 0 when it was built without
 * coverage instrumentation. */
size_t wproc_target_counters(const Wproc *w);

typedef struct WprocBatch {
        uint64_t batch_id;
        RecordMode mode;
        uint64_t iters;
        uint64_t seed;
        uint32_t chain_len;
        const uint8_t *base;
        size_t base_len;
        const uint8_t *partner;
        size_t partner_len;
        int packed; /* base and partner are lists of inputs (RECORD_F_PACKED) */
        /* What the bases are the best input for (RecordBaseBest), or NULL. */
        const RecordBaseBest *base_best;
        const uint8_t *table;
        size_t table_len;
        const CmpTable *cmp; /* comparison tables 1..cmp_gens, for a history replay */
        uint32_t cmp_gens;
        uint32_t len_limit;        /* record_set_mutation(); 0: none */
        const uint8_t *op_weights; /* MUTATOR_WEIGHTS bytes, or NULL: all alike */
        uint64_t first;            /* first iteration to execute (0 or 1: all) */
        int replay;                /* verification or history replay: collect no finds */
        int leak_watch;         /* an execution that allocates more than it frees ends the batch */
        const uint64_t *reruns; /* a history replay: iterations the runner ran twice */
        uint32_t n_reruns;
        int leak_check; /* a LeakSanitizer check after the (one) execution */
        int quiet;      /* keep the target's output out of the worker's stderr */
        int fresh;      /* run it in a runner forked for it, not one that ran others */
} WprocBatch;

/* Copies the batch's payload into the record and sends the command
 * (worker/proto.h). 0, -EINVAL when the payload does not fit the record's
 * areas, or msg_send's error. */
int wproc_send_batch(Wproc *w, const WprocBatch *b);
int wproc_send(Wproc *w, const cJSON *m);

/* One event: see msg_read / msg_recv. */
int wproc_read(Wproc *w, cJSON **ret);
int wproc_recv(Wproc *w, cJSON **ret, int timeout_ms);

/* Runs @data once, unmodified, in a fresh runner and returns the "done" or
 * "died" event. 0 or a negative error. */
int wproc_exec(Wproc *w, const uint8_t *data, size_t len, cJSON **ret);
/* wproc_exec() followed by a LeakSanitizer check in the same runner: a leak
 * ends it like a crash (a "died" event whose sanitizer_report is
 * LeakSanitizer's). @quiet as in wproc_exec_quiet. */
int wproc_exec_leak_check(Wproc *w, const uint8_t *data, size_t len, int quiet, cJSON **ret);

/* wproc_exec, but what the target prints is only kept for the event's
 * "output" (for the minimizer's many trials). */
int wproc_exec_quiet(Wproc *w, const uint8_t *data, size_t len, cJSON **ret);

/* Runs a batch and waits for its "done" or "died" event. 0, a send
 * error, -EPROTO for an event proto_end_parse refuses, -EIO when the
 * worker reports an error instead, or msg_recv's error. */
int wproc_run_batch(Wproc *w, const WprocBatch *b, cJSON **ret);

/* Rebuilds the input iteration `count` of @record ran (a replay record of
 * this worker's layout, from a runner of the same target) in a fresh,
 * sandboxed runner, which can call the target's custom mutator: the
 * record's own replay with the target loaded, @how RECORD_REBUILT_SLOT
 * (from the chain's PRNG slot) or RECORD_REBUILT_SEED (the batch from its
 * seed). Returns 0 with the bytes in @ret (capacity layout.max_len); 1 with
 * the runner's "done" (the record could not be replayed) or "died" event in
 * *@ret_event when nothing was rebuilt; or a negative error. */
int wproc_rebuild(Wproc *w, const void *record, uint32_t how, uint8_t *ret, size_t *ret_len,
                  cJSON **ret_event);

/* Reaps the worker if it has exited; returns its wait status or -1. */
int wproc_reap(Wproc *w);
