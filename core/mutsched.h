/*
 * How the coordinator steers mutation between batches: a length limit that
 * starts small and grows while coverage stalls (libFuzzer's -len_control),
 * and operator weights learned from which operators produced finds. Both are
 * handed to each fuzz batch and frozen into its replay record
 * (record_set_mutation), so a batch's inputs stay a function of its record.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

/* Stalled executions per step of the length limit, times log2(limit):
 * libFuzzer's 100. It was 1000, scaled for a loop that runs more inputs a
 * second, but the limit is what a campaign's executions are spent under,
 * not its seconds: on a deeply nesting target the inputs grow only as fast
 * as the limit, and at 1000 snapfuzz needed ten times libFuzzer's
 * executions to nest 2500 deep (bench/results/depth-2026-12-07.md). */
#define MUTSCHED_LEN_STALL 100u
/* The lowest weight an operator keeps, out of 255: every operator stays
 * in the draw, so one that starts paying off again is noticed. */
#define MUTSCHED_MIN_WEIGHT 16u

typedef struct MutSched {
        size_t max_len;   /* the run's --max-len */
        size_t len_limit; /* the current limit */
        uint64_t stalled; /* executions since the last find or step */
        /* Decayed figures per operator: applications and finds. */
        double applied[MUTATOR_WEIGHTS];
        double found[MUTATOR_WEIGHTS];
        uint8_t weights[MUTATOR_WEIGHTS]; /* what the next batch gets */
} MutSched;

/* Starts the limit at max(4, @longest_seed) (at most @max_len) and every
 * operator alike. */
void mutsched_init(MutSched *s, size_t max_len, size_t longest_seed);

/* Learns from a finished fuzz batch: its record header (the runner's
 * operator figures), how many inputs it ran and the iteration (1-based) of
 * its last input with new coverage, 0 when none had any. Updates the limit
 * and the weights. */
void mutsched_batch_done(MutSched *s, const RecordHeader *h, uint64_t execs, uint64_t last_find);
