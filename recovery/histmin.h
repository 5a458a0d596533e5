/*
 * Histories: a state-dependent crash's inputs as a list a person can act
 * on. The shortest crashing suffix of a runner's history (recovery.c) can
 * be thousands of inputs, most of which the crash does not need; this
 * module flattens it into executions (an iteration the runner ran again, a
 * find's or a leak suspect's second run, is one more execution of the same
 * bytes), runs any subsequence of them in order in one fresh runner (a
 * RECORD_MODE_SEEDS batch: the list packed into the record's base area,
 * one entry per iteration, under the run's limits and sandbox), and
 * shrinks the list by delta debugging while the last execution still
 * crashes the same way.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "worker/wproc.h"
#include "recovery/minimize.h"
#include "snapfuzz/record.h"

/* The executions of a history, in order. */
typedef struct HistSeq {
        size_t n, cap;
        uint8_t **data;
        size_t *len;
        uint64_t *iter;  /* the batch iteration each came from */
        uint32_t *again; /* 0: its first run; i: its i-th run again */
} HistSeq;

void histseq_init(HistSeq *s);
void histseq_deinit(HistSeq *s);

/* Appends a copy of @data. 0 or -ENOMEM. */
int histseq_add(HistSeq *s, const uint8_t *data, size_t len, uint64_t iter, uint32_t again);

/* The most a history may take as a list (record_seed_at's format): a
 * list that long is never run (a runner's list holds RECORD_MAX_LEN_LIMIT)
 * and would only be written as files; beyond it the record alone stands
 * for the history. */
#define HISTSEQ_MAX_BYTES (4u * RECORD_MAX_LEN_LIMIT)

/* The executions of iterations @first..@last of the batch in @record, each
 * iteration followed by its runs again (record.reruns), into @ret (empty).
 * 0, -ENOMEM, -E2BIG (more than HISTSEQ_MAX_BYTES), or a negative
 * RecordProblem (-RECORD_NEEDS_TARGET: a custom mutator's inputs are
 * rebuilt only in a runner). */
int histseq_collect(const void *record, const RecordLayout *l, uint64_t first, uint64_t last,
                    HistSeq *ret);

/* Bytes the seed list of executions @idx[0..n) takes (record_seed_at's
 * format). */
size_t histseq_packed_len(const HistSeq *s, const size_t *idx, size_t n);

/* Runs executions @idx[0..n) of @s, in order, in one fresh runner of @w
 * (its output kept out of the worker's stderr) and returns the "done" or
 * "died" event in *@ret. 0, -E2BIG when the list does not fit the record's
 * base area, -ENOMEM, or wproc_run_batch's error. */
int histseq_run(Wproc *w, const HistSeq *s, const size_t *idx, size_t n, cJSON **ret);

/* Whether a list of executions crashes the same way: 1 yes, 0 no, negative
 * errno when it could not be run (the shrink stops, keeping what it has). */
typedef int (*HistminOracle)(void *ctx, const size_t *idx, size_t n);

typedef struct HistminStats {
        uint64_t trials;
        int64_t ms;
        size_t from_len, to_len;
        MinimizeStop stopped;
} HistminStats;

/*
 * Shrinks the list of executions 0..@n-1 (the last is the one that
 * crashes and is always kept) to a subsequence the oracle still accepts:
 * remove chunks of halving size (ddmin's complements, one chunk at a time,
 * kept when the rest still crashes), then single executions until none
 * can go. The full list is taken to crash (the caller checked). When the
 * budget runs out, the shortest list found so far is the result.
 * *@ret_idx (malloc()ed, ascending) and *@ret_n get it; 0 or -ENOMEM.
 */
int histmin_shrink(size_t n, HistminOracle oracle, void *ctx, const MinimizeBudget *budget,
                   size_t **ret_idx, size_t *ret_n, HistminStats *ret_stats);
