/*
 * Replay: rebuilds, from a replay record alone, the exact bytes a runner
 * passed to the target (the invariant in include/snapfuzz/record.h).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "core/custom.h"
#include "worker/wproc.h"
#include "snapfuzz/record.h"

/* Rebuilds the input of iteration @k (1..count) of the batch in @region
 * into @ret (capacity l->max_len). The iteration that `count` names is
 * rebuilt from its chain's PRNG slot; any other iteration by replaying the
 * batch from its seed. Returns 0, or a negative RecordProblem when the
 * record cannot be trusted, or -RECORD_NEEDS_TARGET when its mutations
 * called a custom mutator (RECORD_F_CUSTOM_*: use replay_custom_at). */
int replay_input_at(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                    size_t *ret_len);

/* The input that was running when the runner died: iteration `count`. */
int replay_input(const void *region, const RecordLayout *l, uint8_t *ret, size_t *ret_len);

/* Rebuilds iteration @k by replaying every mutation from the batch's seed,
 * ignoring the chain slots (each chain reads the comparison table the
 * record's tables say it read). Exposed so tests can check both paths
 * agree. */
int replay_input_from_seed(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                           size_t *ret_len);

/* replay_input_at and replay_input_from_seed for a record whose mutations
 * called the target's custom mutator: @cm must hold the same functions of
 * the same target (the record's flags are checked against it), so these run
 * only where the target is loaded, under the sandbox (the runner's
 * rebuild, worker/runner.c). For a record without RECORD_F_CUSTOM_*, @cm is
 * ignored. */
int replay_custom_at(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                     uint8_t *ret, size_t *ret_len);
int replay_custom_from_seed(const void *region, const RecordLayout *l, const CustomMutator *cm,
                            uint64_t k, uint8_t *ret, size_t *ret_len);

/* The batch that re-runs the record's history: the same seed, base, partner,
 * table and comparison tables, iterations 1..@last, executing only
 * @first..@last. Points into @region. */
void replay_history_batch(const void *region, const RecordLayout *l, uint64_t first, uint64_t last,
                          WprocBatch *ret);

/* Calls @fn with the input of every iteration @first..@last, in order, in
 * one pass from the batch's seed. Stops early when @fn returns non-zero.
 * Returns 0 or a negative RecordProblem (-RECORD_NEEDS_TARGET for a
 * record made with a custom mutator). */
int replay_range(const void *region, const RecordLayout *l, uint64_t first, uint64_t last,
                 int (*fn)(void *ctx, uint64_t k, const uint8_t *data, size_t len), void *ctx,
                 uint8_t *buf);
