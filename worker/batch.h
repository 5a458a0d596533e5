/*
 * The inputs of a batch: the one place that turns a replay record into the
 * bytes of each of its iterations (the invariant in
 * include/snapfuzz/record.h). The runner drives a Batch live, one
 * iteration after the other, and recovery drives one from the record it
 * copied, to rebuild any iteration; both run the same code, so what the
 * runner executed is what recovery rebuilds.
 *
 *   live (the runner)    chains freeze the live comparison table into the
 *                        record (worker/cmplog.h) and write their PRNG slot
 *                        before their first mutation; a custom mutator's
 *                        steps are noted (record_exec_note).
 *   frozen (recovery)    writes nothing: every chain reads the table the
 *                        record says it read, starting from the batch's
 *                        seed (batch_start_seed) or from the PRNG slot of
 *                        an iteration's chain (batch_start_slot).
 *
 * A Batch is embedded (batch_init; it holds no resources, so there is no
 * deinit) and works in a buffer of its caller's, l->max_len bytes: after
 * each step, b->work[0..b->len) is the input of iteration b->k. Its layout
 * is visible because batch_next() is inline: the runner calls it once per
 * iteration, the hottest loop there is; only a chain's start is a call.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "worker/cmplog.h"
#include "core/custom.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"
#include "snapfuzz/record.h"

/* What batch_next() made. */
enum {
        BATCH_STEP = 0,  /* the next input */
        BATCH_CHAIN = 1, /* the first input of a new chain (fuzz mode) */
        BATCH_END = 2,   /* none: a seed list ended before this iteration */
};

typedef struct Batch {
        /* Read by the caller after each step. */
        uint8_t *work;      /* the input of iteration k (l->max_len bytes of room) */
        size_t len;         /* its length */
        uint64_t k;         /* the iteration work holds; 0: none yet */
        uint64_t chain;     /* fuzz mode: k's chain */
        bool records_cmps;  /* live: the chain's first input records its comparisons */
        MutatorTrace trace; /* live: what the mutations wrote (cmplog_push_tokens) */

        /* The batch's own state. */
        void *region;
        const RecordLayout *layout;
        RecordMode mode;
        uint64_t chain_len;
        uint64_t left; /* fuzz mode: steps left in k's chain */
        size_t mut_max;
        SfPrng rng;
        MutatorCtx ctx;
        const CustomMutator *custom; /* NULL: mutator_mutate() */
        const CmpLog *live;          /* the live table: a live batch; NULL: frozen */
        CmpFreezer freezer;          /* live */
        RecordCmpIndex index;        /* frozen, from the seed */
        size_t seed_cursor;          /* seed mode: record_seed_at's cursor */
        uint64_t seed_k;
        RecordInputs inputs;
        MutatorDict dict;
        MutatorPlan plan;
} Batch;

/* Reads the batch the record at @region (laid out by @l) describes: its
 * bases and partners, dictionary, operator weights and, for a record whose
 * mutations called the target's custom mutator (RECORD_F_CUSTOM_*), @cm,
 * which must provide what the record says (for any other record @cm is
 * not used). With @live, the batch is the runner's, run live: its chains
 * freeze @live into the record and write their slots. @work (l->max_len
 * bytes) is where inputs are made. Returns 0, or -RECORD_BAD_DESC (a
 * malformed list of bases) or -RECORD_NEEDS_TARGET (no or another custom
 * mutator). Positions nowhere: call batch_start_seed or batch_start_slot. */
int batch_init(Batch *b, void *region, const RecordLayout *l, uint8_t *work, const CmpLog *live,
               const CustomMutator *cm);

/* Positions @b before iteration 1: the PRNG from the record's seed, the
 * comparison tables (a frozen batch checks and indexes the record's:
 * -RECORD_BAD_CMP when one is not intact) and, for a live batch, the
 * operator counts in b->trace reset. Returns 0 or a negative RecordProblem. */
int batch_start_seed(Batch *b);

/* A frozen fuzz batch: positions @b so that the next batch_next() makes the
 * first input of iteration @k's chain (as BATCH_STEP: the chain has begun),
 * from the PRNG slot the runner saved for it (other modes: as
 * batch_start_seed). Returns 0, 1 when the slot is not that chain's or is
 * torn (start from the seed instead), or -RECORD_BAD_CMP when the table the
 * slot names is not intact. */
int batch_start_slot(Batch *b, uint64_t k);

/* The start of the chain after iteration b->k (fuzz mode; b->k is a
 * multiple of chain_len); called by batch_next(). */
void batch_chain_begin(Batch *b);

/* One custom mutation step (RECORD_F_CUSTOM_*); called by batch_next(). */
size_t batch_custom_step(Batch *b);

/* Seed mode: the next entry of the list, or BATCH_END. */
static inline int batch_seed_next(Batch *b)
{
        const RecordHeader *h = record_header(b->region);
        const uint8_t *entry;
        uint32_t n;

        if (record_seed_at(record_base(b->region, b->layout), h->base_len, b->k, &b->seed_cursor,
                           &b->seed_k, &entry, &n) < 0 ||
            n > b->layout->max_len)
                return BATCH_END;
        memcpy(b->work, entry, n);
        b->len = n;
        return BATCH_STEP;
}

/* Makes the input of the next iteration, b->k + 1, in b->work. Returns
 * BATCH_STEP, BATCH_CHAIN (its chain starts with it: a live batch has
 * written the chain's slot) or BATCH_END (b->work unchanged). Inline: the
 * runner calls it once per iteration; a chain's start is a call. */
static inline int batch_next(Batch *b)
{
        int r = BATCH_STEP;

        if (b->mode == RECORD_MODE_FUZZ) {
                if (__builtin_expect(b->left == 0, 0)) {
                        batch_chain_begin(b);
                        r = BATCH_CHAIN;
                }
                b->k++;
                b->left--;
                if (b->custom)
                        b->len = batch_custom_step(b);
                else
                        b->len = mutator_mutate(&b->ctx, &b->rng, b->work, b->len, b->mut_max);
        } else {
                b->k++;
                if (b->mode == RECORD_MODE_SEEDS)
                        r = batch_seed_next(b);
        }
        return r;
}

/* Makes the input of iteration @k (not before b->k) in b->work: a fuzz
 * batch steps through every iteration up to it, a seed list finds its k-th
 * entry, an exec batch has its base there. Returns BATCH_STEP, or BATCH_END when a seed list ends
 * before. */
int batch_input(Batch *b, uint64_t k);

/* Whether iteration @k of the record can be rebuilt: the record checks out
 * (a torn slot only rules out the slot path) and @k is in the batch.
 * Returns 0 or a negative RecordProblem. */
int batch_check(const void *region, const RecordLayout *l, uint64_t k);

/* Iteration @k (1..iters) of the frozen batch in @region, into @ret
 * (l->max_len bytes): from its chain's PRNG slot when @from_slot and the
 * slot is intact, else from the seed. @cm as batch_init. Returns 0 and the
 * length in *@ret_len, or a negative RecordProblem (the record cannot be
 * trusted, @k is outside it, -RECORD_NEEDS_TARGET). */
int batch_rebuild(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                  bool from_slot, uint8_t *ret, size_t *ret_len);
