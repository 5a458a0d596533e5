/*
 * Replay: recovery's entry points to the batch module (worker/batch.h), which
 * alone turns a record into inputs. A runner's PRNG starts from
 * prng_seed(seed, batch_id) and advances only through the mutations, so
 * there are two ways to rebuild iteration k: from the slot that the runner
 * saved at the start of k's chain (s+1 mutations, reading the comparison
 * table the slot names), or from the seed (every mutation of the batch up
 * to k, each chain reading the table the record says it read). The first
 * is what recovery uses; the second reaches iterations whose chain slot has
 * been overwritten, replays histories, and lets tests cross-check the
 * first.
 *
 * A batch whose record carries RECORD_F_CUSTOM_* was mutated by the
 * target's custom mutator (core/custom.h): its steps are custom_mutate()
 * with the same CustomMutator, which only a process that loaded the target
 * has; without one, such a record is refused (RECORD_NEEDS_TARGET) rather
 * than replayed to wrong bytes.
 */
#include "worker/batch.h"
#include "recovery/replay.h"

#include "snapfuzz/banned.h"

static int replay_rebuild(const void *region, const RecordLayout *l, const CustomMutator *cm,
                          uint64_t k, bool slot, uint8_t *ret, size_t *ret_len)
{
        return batch_rebuild(region, l, cm, k, slot, ret, ret_len);
}

int replay_input_from_seed(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                           size_t *ret_len)
{
        return replay_rebuild(region, l, NULL, k, false, ret, ret_len);
}

int replay_custom_from_seed(const void *region, const RecordLayout *l, const CustomMutator *cm,
                            uint64_t k, uint8_t *ret, size_t *ret_len)
{
        return replay_rebuild(region, l, cm, k, false, ret, ret_len);
}

int replay_input_at(const void *region, const RecordLayout *l, uint64_t k, uint8_t *ret,
                    size_t *ret_len)
{
        return replay_rebuild(region, l, NULL, k, true, ret, ret_len);
}

int replay_custom_at(const void *region, const RecordLayout *l, const CustomMutator *cm, uint64_t k,
                     uint8_t *ret, size_t *ret_len)
{
        return replay_rebuild(region, l, cm, k, true, ret, ret_len);
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
        Batch b;
        int r = batch_check(region, l, last);
        if (r == 0)
                r = batch_init(&b, (void *)region, l, buf, NULL, NULL);
        if (r == 0)
                r = batch_start_seed(&b);
        if (r < 0)
                return r;
        for (uint64_t k = first ? first : 1; k <= last; k++)
                if (batch_input(&b, k) == BATCH_END || fn(ctx, k, b.work, b.len))
                        break;
        return 0;
}
