/*
 * A runner's PRNG starts from prng_seed(seed, batch_id) and advances only
 * through mutator_mutate(), so there are two ways to rebuild iteration k:
 * from the slot that the runner saved at the start of k's chain (s+1
 * mutations, reading the comparison table the slot names), or from the seed
 * (every mutation of the batch up to k, each chain reading the table the
 * record says it read). The first is what recovery uses; the second
 * reaches iterations whose chain slot has been overwritten, replays
 * histories, and lets tests cross-check the first.
 *
 * A batch whose record carries RECORD_F_CUSTOM_* was mutated by the
 * target's custom mutator (core/custom.h): its steps are custom_mutate()
 * with the same CustomMutator, which only a process that loaded the target
 * has; without one, such a record is refused (RECORD_NEEDS_TARGET) rather
 * than replayed to wrong bytes.
 */
#include <string.h>

#include "recovery/replay.h"
#include "snapfuzz/mutator.h"

#include "snapfuzz/banned.h"

/* One mutation step, as the runner made it. */
static size_t replay_step(const CustomMutator *cm, const MutatorCtx *ctx, SfPrng *rng,
                          uint8_t *data, size_t len, size_t max_len)
{
        return cm ? custom_mutate(cm, ctx, rng, data, len, max_len)
                  : mutator_mutate(ctx, rng, data, len, max_len);
}

/* The custom mutator the record's steps need: NULL for a record without
 * RECORD_F_CUSTOM_*; -RECORD_NEEDS_TARGET when @cm does not provide what
 * the record says its runner had. */
static int replay_custom(const void *region, const CustomMutator *cm, const CustomMutator **ret)
{
        const RecordHeader *h = region;
        uint32_t want = h->mode == RECORD_MODE_FUZZ ? h->flags & RECORD_F_CUSTOM : 0;
        *ret = NULL;
        if (!want)
                return 0;
        if (custom_record_flags(cm) != want)
                return -(int)RECORD_NEEDS_TARGET;
        *ret = cm;
        return 0;
}

/* The mutation context the runner had: dictionary and operator weights,
 * from the record (the partner is the chain's: replay_chain). */
static void replay_ctx(const void *region, const RecordLayout *l, MutatorCtx *ctx,
                       MutatorDict *dict, MutatorPlan *plan)
{
        const RecordHeader *h = region;
        ctx->partner = NULL;
        ctx->partner_len = 0;
        ctx->dict = NULL;
        ctx->cmp = NULL;
        ctx->trace = NULL;
        ctx->plan = mutator_plan_init(plan, h->op_weights) ? plan : NULL;
        if (h->table_len && mutator_dict_parse(dict, record_table((void *)region, l), h->table_len))
                ctx->dict = dict;
}

/* The start of chain @chain: its base into @buf, its partner into @ctx.
 * Returns the base's length; *@mut_max is how long its mutations may make
 * an input. */
static size_t replay_chain(const RecordHeader *h, const RecordLayout *l, const RecordInputs *in,
                           uint64_t chain, MutatorCtx *ctx, uint8_t *buf, size_t *mut_max)
{
        const uint8_t *base;
        size_t len;
        record_inputs_chain(in, chain, &base, &len, &ctx->partner, &ctx->partner_len);
        memcpy(buf, base, len);
        *mut_max = record_mutation_max_len(h, l, len);
        return len;
}

/* Iteration @k of a seed list: its k-th entry. */
static int replay_seed(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                       size_t *ret_len)
{
        const RecordHeader *h = region;
        size_t cursor = 0;
        uint64_t at = 1;
        const uint8_t *entry;
        uint32_t len;
        if (record_seed_at(record_base((void *)region, l), h->base_len, k, &cursor, &at, &entry,
                           &len) < 0 ||
            len > l->max_len)
                return -(int)RECORD_BAD_COUNT;
        memcpy(ret, entry, len);
        *ret_len = len;
        return 0;
}

static int replay_check(const void *region, const RecordLayout *l, uint64_t k)
{
        RecordProblem p = record_validate(region, l);
        if (p != RECORD_OK && p != RECORD_BAD_SLOT)
                return -(int)p;
        const RecordHeader *h = region;
        if (k == 0 || k > h->iters)
                return -(int)RECORD_BAD_COUNT;
        return 0;
}

static int replay_from_seed(const void *region, const RecordLayout *l, const CustomMutator *cm,
                            uint64_t k, uint8_t *ret, size_t *ret_len)
{
        const RecordHeader *h = region;
        const uint8_t *base = record_base((void *)region, l);
        static MutatorDict dict;
        static MutatorPlan plan;
        MutatorCtx ctx;
        SfPrng rng;
        size_t len;

        int r = replay_check(region, l, k);
        if (r == 0)
                r = replay_custom(region, cm, &cm);
        if (r < 0)
                return r;
        if (h->mode == RECORD_MODE_SEEDS)
                return replay_seed(region, l, k, ret, ret_len);
        /* A packed list is longer than an input: each chain starts from
         * its own entry. */
        len = h->base_len <= l->max_len ? h->base_len : 0;
        memcpy(ret, base, len);
        if (h->mode == RECORD_MODE_FUZZ) {
                static RecordInputs in;
                RecordCmpIndex ix;
                if (record_inputs(region, l, &in) < 0)
                        return -(int)RECORD_BAD_DESC;
                if (record_cmp_index(region, l, &ix) != RECORD_OK)
                        return -(int)RECORD_BAD_CMP;
                replay_ctx(region, l, &ctx, &dict, &plan);
                size_t mut_max = l->max_len;
                prng_seed(&rng, h->seed, h->batch_id);
                for (uint64_t i = 0; i < k; i++) {
                        if (i % h->chain_len == 0) {
                                ctx.cmp = record_cmp_lookup(&ix, i / h->chain_len);
                                len =
                                    replay_chain(h, l, &in, i / h->chain_len, &ctx, ret, &mut_max);
                        }
                        len = replay_step(cm, &ctx, &rng, ret, len, mut_max);
                }
        }
        *ret_len = len;
        return 0;
}

int replay_input_from_seed(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                           size_t *ret_len)
{
        return replay_from_seed(region, l, NULL, k, ret, ret_len);
}

int replay_custom_from_seed(const void *region, const RecordLayout *l, const CustomMutator *cm,
                            uint64_t k, uint8_t *ret, size_t *ret_len)
{
        return replay_from_seed(region, l, cm, k, ret, ret_len);
}

static int replay_at(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                     uint8_t *ret, size_t *ret_len)
{
        const RecordHeader *h = region;
        static MutatorDict dict;
        static MutatorPlan plan;
        MutatorCtx ctx;

        int r = replay_check(region, l, k);
        if (r == 0)
                r = replay_custom(region, cm, &cm);
        if (r < 0)
                return r;
        if (h->mode == RECORD_MODE_SEEDS)
                return replay_seed(region, l, k, ret, ret_len);
        if (h->mode != RECORD_MODE_FUZZ) {
                memcpy(ret, record_base((void *)region, l), h->base_len);
                *ret_len = h->base_len;
                return 0;
        }
        uint64_t chain = (k - 1) / h->chain_len;
        uint64_t steps = (k - 1) % h->chain_len + 1;
        const RecordChainSlot *s = &h->slot[chain & 1];
        if (s->chain != chain || s->check != record_slot_check(&s->rng, s->chain, s->cmp_gen))
                return replay_from_seed(region, l, cm, k, ret, ret_len);

        static RecordInputs in;
        if (record_inputs(region, l, &in) < 0)
                return -(int)RECORD_BAD_DESC;
        SfPrng rng = s->rng;
        replay_ctx(region, l, &ctx, &dict, &plan);
        if (record_chain_cmp(region, l, s, &ctx.cmp) != RECORD_OK)
                return -(int)RECORD_BAD_CMP;
        size_t mut_max;
        size_t len = replay_chain(h, l, &in, chain, &ctx, ret, &mut_max);
        for (uint64_t i = 0; i < steps; i++)
                len = replay_step(cm, &ctx, &rng, ret, len, mut_max);
        *ret_len = len;
        return 0;
}

int replay_input_at(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                    size_t *ret_len)
{
        return replay_at(region, l, NULL, k, ret, ret_len);
}

int replay_custom_at(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                     uint8_t *ret, size_t *ret_len)
{
        return replay_at(region, l, cm, k, ret, ret_len);
}

int replay_input(const void *region, const RecordLayout *l, uint8_t *ret, size_t *ret_len)
{
        const RecordHeader *h = region;
        uint64_t count = __atomic_load_n(&h->count, __ATOMIC_ACQUIRE);
        /* A torn slot is not fatal: replay_input_at falls back to the seed. */
        return replay_input_at(region, l, count, ret, ret_len);
}

void replay_history_batch(const void *region, const RecordLayout *l, uint64_t first, uint64_t last,
                          WprocBatch *ret)
{
        const RecordHeader *h = region;
        *ret = (WprocBatch){
            .batch_id = h->batch_id,
            .mode = (RecordMode)h->mode,
            .iters = last,
            .seed = h->seed,
            .chain_len = h->chain_len,
            .base = record_base((void *)region, l),
            .base_len = h->base_len,
            .partner = record_partner((void *)region, l),
            .partner_len = h->partner_len,
            .packed = (h->flags & RECORD_F_PACKED) != 0,
            .table = record_table((void *)region, l),
            .table_len = h->table_len,
            .cmp = h->cmp_gens ? record_cmp((void *)region, l, 1) : NULL,
            .cmp_gens = h->cmp_gens <= RECORD_CMP_TABLES ? h->cmp_gens : 0,
            .len_limit = h->len_limit,
            .op_weights = h->op_weights,
            .first = first,
            .replay = 1,
            .reruns = h->reruns,
            .n_reruns = h->n_reruns <= RECORD_MAX_RERUNS ? h->n_reruns : RECORD_MAX_RERUNS,
        };
}

int replay_range(const void *region, const RecordLayout *l, uint64_t first, uint64_t last,
                 int (*fn)(void *ctx, uint64_t k, const uint8_t *data, size_t len), void *ctx,
                 uint8_t *buf)
{
        const RecordHeader *h = region;
        const uint8_t *base = record_base((void *)region, l);
        static MutatorDict dict;
        static MutatorPlan plan;
        MutatorCtx mctx;
        RecordCmpIndex ix;
        SfPrng rng;

        const CustomMutator *none;
        int r = replay_check(region, l, last);
        if (r == 0)
                r = replay_custom(region, NULL, &none);
        if (r < 0)
                return r;
        static RecordInputs in;
        if (h->mode == RECORD_MODE_FUZZ && record_inputs(region, l, &in) < 0)
                return -(int)RECORD_BAD_DESC;
        if (h->mode == RECORD_MODE_FUZZ && record_cmp_index(region, l, &ix) != RECORD_OK)
                return -(int)RECORD_BAD_CMP;
        replay_ctx(region, l, &mctx, &dict, &plan);
        size_t mut_max = l->max_len;
        prng_seed(&rng, h->seed, h->batch_id);
        size_t len = h->base_len <= l->max_len ? h->base_len : 0;
        memcpy(buf, base, len);
        for (uint64_t k = 1; k <= last; k++) {
                if (h->mode == RECORD_MODE_SEEDS) {
                        if (k < first)
                                continue;
                        if (replay_seed(region, l, k, buf, &len) < 0)
                                break;
                } else if (h->mode == RECORD_MODE_FUZZ) {
                        if ((k - 1) % h->chain_len == 0) {
                                mctx.cmp = record_cmp_lookup(&ix, (k - 1) / h->chain_len);
                                len = replay_chain(h, l, &in, (k - 1) / h->chain_len, &mctx, buf,
                                                   &mut_max);
                        }
                        len = mutator_mutate(&mctx, &rng, buf, len, mut_max);
                }
                if (k >= first && fn(ctx, k, buf, len))
                        break;
        }
        return 0;
}
