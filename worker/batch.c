/*
 * The inputs of a batch (worker/batch.h): iteration k (1-based) of a fuzz
 * batch belongs to chain c = (k-1) / chain_len; its input is chain c's
 * base (record_inputs_chain) with (k-1) % chain_len + 1 mutation steps
 * applied, starting from the PRNG the chain's slot saved, each step reading
 * the chain's partner, the batch's dictionary and operator weights, and the
 * comparison table the chain read; a seed batch runs entry k of its list,
 * an exec batch its base. Everything comes from the record, so the runner
 * (live) and recovery (frozen) make the same bytes.
 *
 * Invariants of a live batch, which are what lets recovery trust the
 * record at any instant: a chain's comparison table is frozen and its slot
 * written before the chain's first mutation, and both before the runner's
 * count enters the chain (batch_next() returns before the runner stores
 * count); a custom step's input is noted before count names it. A frozen
 * batch never writes into the record.
 */
#include <errno.h>
#include <string.h>

#include "worker/batch.h"
#include "core/coverage.h"

#include "snapfuzz/banned.h"

int batch_init(Batch *b, void *region, const RecordLayout *l, uint8_t *work, const CmpLog *live,
               const CustomMutator *cm)
{
        const RecordHeader *h = record_header(region);
        uint32_t want = h->mode == RECORD_MODE_FUZZ ? h->flags & RECORD_F_CUSTOM : 0;

        b->work = work;
        b->len = 0;
        b->k = 0;
        b->chain = 0;
        b->records_cmps = false;
        b->region = region;
        b->layout = l;
        b->mode = (RecordMode)h->mode;
        b->chain_len = h->chain_len;
        b->left = 0;
        b->mut_max = l->max_len;
        b->live = live;
        b->index.n = 0;
        b->custom = NULL;
        if (want) {
                if (custom_record_flags(cm) != want)
                        return -(int)RECORD_NEEDS_TARGET;
                b->custom = cm;
        }
        if (b->mode == RECORD_MODE_FUZZ &&
            (b->chain_len == 0 || record_inputs(region, l, &b->inputs) < 0))
                return -(int)RECORD_BAD_DESC;
        b->ctx = (MutatorCtx){
            .trace = live ? &b->trace : NULL,
            .plan = mutator_plan_init(&b->plan, h->op_weights) ? &b->plan : NULL,
        };
        if (h->table_len && mutator_dict_parse(&b->dict, record_table(region, l), h->table_len))
                b->ctx.dict = &b->dict;
        return 0;
}

/* Back to before iteration 1, with the PRNG @rng. */
static void batch_rewind(Batch *b, const SfPrng *rng)
{
        const RecordHeader *h = record_header(b->region);
        const RecordLayout *l = b->layout;

        b->rng = *rng;
        b->k = 0;
        b->left = 0;
        b->seed_cursor = 0;
        b->seed_k = 1;
        /* An exec batch runs this; a list (seeds, packed bases) is copied
         * entry by entry. */
        b->len = h->base_len <= l->max_len ? h->base_len : 0;
        memcpy(b->work, record_base(b->region, l), b->len);
}

int batch_start_seed(Batch *b)
{
        const RecordHeader *h = record_header(b->region);
        SfPrng rng;

        if (b->live) {
                memset(&b->trace, 0, sizeof(b->trace));
                cmplog_freezer_init(&b->freezer, b->region, b->layout);
        } else if (b->mode == RECORD_MODE_FUZZ &&
                   record_cmp_index(b->region, b->layout, &b->index) != RECORD_OK) {
                return -(int)RECORD_BAD_CMP;
        }
        prng_seed(&rng, h->seed, h->batch_id);
        batch_rewind(b, &rng);
        return 0;
}

int batch_start_slot(Batch *b, uint64_t k)
{
        const RecordHeader *h = record_header(b->region);

        if (b->mode != RECORD_MODE_FUZZ || b->live || k == 0)
                return batch_start_seed(b);
        uint64_t chain = (k - 1) / b->chain_len;
        const RecordChainSlot *s = &h->slot[chain & 1];
        if (s->chain != chain || s->check != record_slot_check(&s->rng, s->chain, s->cmp_gen))
                return 1;
        const CmpTable *cmp;
        if (record_chain_cmp(b->region, b->layout, s, &cmp) != RECORD_OK)
                return -(int)RECORD_BAD_CMP;
        batch_rewind(b, &s->rng);
        b->k = chain * b->chain_len;
        batch_chain_begin(b);
        b->ctx.cmp = cmp;
        return 0;
}

void batch_chain_begin(Batch *b)
{
        RecordHeader *h = record_header(b->region);
        uint64_t chain = b->k / b->chain_len;
        const uint8_t *base;

        if (b->live) {
                uint64_t gen;
                b->ctx.cmp = cmplog_chain_begin(&b->freezer, b->live, chain, &gen);
                b->records_cmps = cmplog_chain_records(&b->freezer, chain);
                b->trace.n = 0;
                record_chain_begin(h, &b->rng, chain, gen);
        } else {
                b->ctx.cmp = record_cmp_lookup(&b->index, chain);
        }
        b->chain = chain;
        b->left = b->chain_len;
        record_inputs_chain(&b->inputs, chain, &base, &b->len, &b->ctx.partner,
                            &b->ctx.partner_len);
        memcpy(b->work, base, b->len);
        b->mut_max = record_mutation_max_len(h, b->layout, b->len);
}

size_t batch_custom_step(Batch *b)
{
        size_t len = custom_mutate(b->custom, &b->ctx, &b->rng, b->work, b->len, b->mut_max);

        if (b->live) {
                /* What the mutator's own code hit is not coverage of the
                 * input (libFuzzer resets its maps before each execution
                 * too), and recovery must be able to tell the input
                 * rebuilt from a mutator that is not deterministic. */
                coverage_clear();
                record_exec_note(record_header(b->region), b->k, b->work, len);
        }
        return len;
}

int batch_input(Batch *b, uint64_t k)
{
        if (b->mode != RECORD_MODE_FUZZ) {
                b->k = k - 1;
                return batch_next(b);
        }
        while (b->k < k)
                if (batch_next(b) == BATCH_END)
                        return BATCH_END;
        return BATCH_STEP;
}

int batch_check(const void *region, const RecordLayout *l, uint64_t k)
{
        RecordProblem p = record_validate(region, l);
        if (p != RECORD_OK && p != RECORD_BAD_SLOT)
                return -(int)p;
        const RecordHeader *h = region;
        if (k == 0 || k > h->iters)
                return -(int)RECORD_BAD_COUNT;
        return 0;
}

int batch_rebuild(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                  bool from_slot, uint8_t *ret, size_t *ret_len)
{
        Batch b;
        int r = batch_check(region, l, k);
        if (r != 0)
                return r < 0 ? r : -EINVAL; /* batch_check returns 0 or a negative errno */
        r = batch_init(&b, (void *)region, l, ret, NULL, cm);
        if (r == 0 && from_slot)
                r = batch_start_slot(&b, k);
        if (r == 1 || (r == 0 && !from_slot))
                r = batch_start_seed(&b);
        if (r < 0)
                return r;
        if (batch_input(&b, k) == BATCH_END)
                return -(int)RECORD_BAD_COUNT;
        *ret_len = b.len;
        return 0;
}
