/*
 * Replay: rebuilds, from a replay record alone, the exact bytes a runner
 * passed to the target (the invariant in include/snapfuzz/record.h).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/record.h"

/* Rebuilds the input of iteration @k (1..count) of the batch in @region
 * into @ret (capacity l->max_len). The iteration that `count` names is
 * rebuilt from its chain's PRNG slot; any other iteration by replaying the
 * batch from its seed. Returns 0, or a negative RecordProblem when the
 * record cannot be trusted. */
int replay_input_at(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                    size_t *ret_len);

/* The input that was running when the runner died: iteration `count`. */
int replay_input(const void *region, const RecordLayout *l, uint8_t *ret, size_t *ret_len);

/* Rebuilds iteration @k by replaying every mutation from the batch's seed,
 * ignoring the chain slots. Exposed so tests can check both paths agree.
 * Only iterations of chains before the first that read a comparison table
 * can be rebuilt this way; the others give -RECORD_NO_CMP. */
int replay_input_from_seed(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                           size_t *ret_len);
