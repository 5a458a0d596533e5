/*
 * The minimizer: shrinks a crashing input while the crash keeps its kind
 * and signature (the same signature is the same bug, the same crash id).
 * Rounds of two phases:
 *   1. remove chunks of decreasing size (halving, ddmin-style), then
 *      single bytes until no single byte can go, then (short inputs)
 *      windows of 2 to 16 bytes at every offset;
 *   2. simplify: text inputs byte by byte toward 0x00, '0', 'A' and ' '
 *      (simpler values first); binary inputs by zeroing blocks of
 *      decreasing size, then each byte to 0 or, by bisection, the smallest
 *      value that keeps the crash (so length fields shrink);
 * and another round while simplification changed bytes and the removal
 * that follows still finds bytes to remove.
 * Each trial runs one candidate through an oracle. The real oracle is a
 * worker (worker/wproc.h): every trial runs in a fresh runner forked from the
 * worker's snapshot, so a trial that crashes costs a fork, not a process
 * start. Nothing is cached between trials: the result is a function of the
 * input, the target and the budget alone.
 */
#pragma once

#include <signal.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "worker/wproc.h"
#include "recovery/classify.h"

/* minimize_*()'s positive outcome: the starting input does not crash the
 * way @want says (fixed, flaky, or another bug); nothing was minimized. */
#define MINIMIZE_NOT_REPRODUCED 1

/* Limits of one minimization; 0 in a field means no limit on it. A trial
 * that has started always finishes, so the time limit can be exceeded by
 * one trial (up to the timeout, for a hang). */
typedef struct MinimizeBudget {
        uint64_t max_trials;
        int64_t max_ms;
        /* Set (by a signal handler) to stop after the trial under way: the
         * best input so far is the result. NULL: never. */
        const volatile sig_atomic_t *stop;
} MinimizeBudget;

typedef enum MinimizeStop {
        MINIMIZE_STOP_DONE = 0,    /* every phase ran to its end */
        MINIMIZE_STOP_MAX_TRIALS,  /* the trial budget ran out */
        MINIMIZE_STOP_MAX_TIME,    /* the time budget ran out */
        MINIMIZE_STOP_INTERRUPTED, /* MinimizeBudget.stop was set (Ctrl-C) */
} MinimizeStop;

typedef struct MinimizeStats {
        uint64_t trials;      /* candidates run, the initial check included */
        uint64_t same;        /* trials that crashed the same way (kept) */
        uint64_t other_crash; /* trials that crashed some other way */
        uint64_t no_crash;    /* trials that ran to completion */
        int64_t ms;           /* wall time of the whole minimization */
        size_t from_len;
        size_t to_len;
        MinimizeStop stopped;
} MinimizeStats;

/* What a trial did with a candidate. */
typedef enum MinimizeVerdict {
        MINIMIZE_SAME = 1,        /* crashed with the wanted kind and signature */
        MINIMIZE_OTHER_CRASH = 2, /* crashed, but another way */
        MINIMIZE_NO_CRASH = 3,    /* ran to completion */
} MinimizeVerdict;

/* Runs one candidate; returns a MinimizeVerdict or a negative errno (which
 * ends the minimization with that error). */
typedef int (*MinimizeOracle)(void *ctx, const uint8_t *data, size_t len);

/* The algorithm, on any oracle. Checks @in first (one trial); then
 * minimizes within @b. On success (0) *ret (malloc'd, at least one byte
 * allocated) and *ret_len hold the smallest input found, which may be
 * @in itself. Returns MINIMIZE_NOT_REPRODUCED when @in is not MINIMIZE_SAME,
 * or the oracle's negative errno. @stats is filled in every case. */
int minimize_input(MinimizeOracle oracle, void *ctx, const uint8_t *in, size_t len,
                   const MinimizeBudget *b, uint8_t **ret, size_t *ret_len, MinimizeStats *stats);

/* True when @got is the crash @want names: same kind and same signature.
 * For `timeout` and `oom` only the kind counts: their stack is wherever the
 * runner happened to be when it was stopped, not the bug's location; so it
 * does when @want has no signature (a record that lacks one). */
bool minimize_same_crash(const Classification *want, const Classification *got);

/* minimize_input with worker @w as the oracle: each trial is wproc_exec()
 * then classify_death(), compared with minimize_same_crash(). */
int minimize_run(Wproc *w, const uint8_t *in, size_t len, const Classification *want,
                 const MinimizeBudget *b, uint8_t **ret, size_t *ret_len, MinimizeStats *stats);

/* "done", "max-trials" or "max-time". */
const char *minimize_stop_str(MinimizeStop s);

/* The crash.json "minimize" object for @s; @mode is "auto" (the pass after
 * recovery) or "command" (`snapfuzz minimize`). NULL on allocation failure. */
cJSON *minimize_stats_json(const MinimizeStats *s, const char *mode);

/* Stores a result: writes OUT/crashes/<id>/minimized, then adds
 * "minimized_len", "minimized_sha1" and "minimize" to crash.json (both
 * atomically, in that order, so crash.json never names a missing file).
 * Returns 0 or -errno. */
int minimize_store(const char *out_dir, const char *id, const uint8_t *data, size_t len,
                   const MinimizeStats *s, const char *mode);

/* The automatic pass of the recovery helper, run after a new crash is
 * stored and its "stored" event sent: minimizes @in (the stored input) on
 * the helper's verification worker @w within @budget_ms and stores the
 * result. Crashes of kind `timeout` are skipped (each trial that still hangs
 * costs the whole --timeout; `snapfuzz minimize ID` does them on demand),
 * and so is everything when @w is NULL or @budget_ms is 0. Logs one line.
 * Returns 0, MINIMIZE_NOT_REPRODUCED, or a negative errno. */
int minimize_auto(Wproc *w, const char *out_dir, const Classification *want, const uint8_t *in,
                  size_t len, unsigned budget_ms);
