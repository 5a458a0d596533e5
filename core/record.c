/*
 * The replay record's layout and integrity checks (the layout itself and
 * the invariant are described in include/snapfuzz/record.h). The worker
 * seals a batch with two checksums before the runner forks; recovery
 * re-computes them, so an input is never rebuilt from a record that a wild
 * write in the target scribbled on.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/hash.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

static size_t align_up(size_t v, size_t a)
{
        return (v + a - 1) / a * a;
}

int record_layout(size_t max_len, RecordLayout *ret)
{
        RecordLayout l;

        if (max_len == 0 || max_len > RECORD_MAX_LEN_LIMIT)
                return -EINVAL;
        l.max_len = max_len;
        l.area_len = max_len > RECORD_AREA_MIN ? max_len : RECORD_AREA_MIN;
        l.base_off = RECORD_DEATH_OFFSET + RECORD_DEATH_SIZE;
        l.partner_off = l.base_off + align_up(l.area_len, 64);
        l.table_off = l.partner_off + align_up(l.area_len, 64);
        /* The runner makes base, partner and table read-only and keeps
         * writing the comparison tables, so those start on a page. */
        l.cmp_off = align_up(l.table_off + RECORD_TABLE_BYTES, 4096);
        l.record_size = align_up(l.cmp_off + RECORD_CMP_TABLES * sizeof(CmpTable), 4096);
        l.finds_off = l.record_size;
        l.find_slot_size = sizeof(RecordFindSlot) + align_up(max_len, 64);
        l.tokens_off =
            align_up(l.finds_off + sizeof(RecordFinds) + RECORD_FINDS_SLOTS * l.find_slot_size, 64);
        l.features_off = align_up(l.tokens_off + sizeof(RecordTokens), 64);
        l.best_off = align_up(l.features_off + RECORD_FINDS_SLOTS * sizeof(RecordFindFeatures), 64);
        l.region_size = align_up(l.best_off + sizeof(RecordBaseBest), 4096);
        *ret = l;
        return 0;
}

uint64_t record_slot_check(const SfPrng *rng, uint64_t chain, uint64_t cmp_gen)
{
        uint64_t h = hash64_mix(UINT64_C(0x534c4f54), rng->state);
        h = hash64_mix(h, rng->inc);
        h = hash64_mix(h, chain);
        return hash64_mix(h, cmp_gen);
}

uint64_t record_cmp_check(const CmpTable *t, uint64_t batch_id)
{
        /* Counts beyond the arrays are hashed as they are (so they fail)
         * but never used to read past the table. */
        size_t ni = t->n_int < CMPTABLE_INTS ? t->n_int : CMPTABLE_INTS;
        size_t nm = t->n_mem < CMPTABLE_MEMS ? t->n_mem : CMPTABLE_MEMS;
        uint64_t h = hash64_mix(UINT64_C(0x434d5054), batch_id);
        h = hash64_mix(h, ((uint64_t)t->gen << 32) | t->pad);
        h = hash64_mix(h, ((uint64_t)t->n_int << 32) | t->n_mem);
        h = hash64_mix(h, t->chain);
        h = hash64_mix(h, hash64(t->ints, ni * sizeof(CmpIntEntry), 4));
        return hash64_mix(h, hash64(t->mems, nm * sizeof(CmpMemEntry), 5));
}

uint64_t record_exec_check(const uint8_t *data, size_t len)
{
        return hash64_lanes(data, len, UINT64_C(0x45584543));
}

uint64_t record_desc_check(const RecordHeader *h)
{
        /* Everything from magic up to payload_check: the description. */
        return hash64(h, offsetof(RecordHeader, desc_check), UINT64_C(0x44455343));
}

uint64_t record_payload_check(const void *region, const RecordLayout *l, const RecordHeader *h)
{
        const uint8_t *r = region;
        uint64_t c = hash64(r + l->base_off, h->base_len, 1);
        c = hash64_mix(c, hash64(r + l->partner_off, h->partner_len, 2));
        return hash64_mix(c, hash64(r + l->table_off, h->table_len, 3));
}

void record_begin_batch(void *region, const RecordLayout *l, uint64_t batch_id, RecordMode mode,
                        uint64_t iters, uint64_t seed, uint32_t chain_len, uint32_t base_len,
                        uint32_t partner_len, uint32_t table_len)
{
        RecordHeader *h = record_header(region);

        memset(h, 0, sizeof(*h));
        h->magic = RECORD_MAGIC;
        h->version = RECORD_VERSION;
        h->header_size = sizeof(RecordHeader);
        h->batch_id = batch_id;
        h->iters = iters;
        h->seed = seed;
        h->mode = mode;
        h->chain_len = chain_len ? chain_len : 1;
        h->max_len = (uint32_t)l->max_len;
        h->base_len = base_len;
        h->partner_len = partner_len;
        h->table_len = table_len;
        h->mutator_version = MUTATOR_VERSION;
        h->payload_check = record_payload_check(region, l, h);
        h->desc_check = record_desc_check(h);
        h->cmp_gens = 0;
        memset(record_death(region), 0, sizeof(RecordDeath));
        record_finds(region, l)->capacity = RECORD_FINDS_SLOTS;
        record_finds(region, l)->used = 0;
        record_tokens(region, l)->capacity = RECORD_TOKEN_SLOTS;
        record_tokens(region, l)->used = 0;
}

void record_set_mutation(void *region, uint32_t len_limit, const uint8_t *weights)
{
        RecordHeader *h = record_header(region);

        h->len_limit = len_limit;
        if (weights)
                memcpy(h->op_weights, weights, sizeof(h->op_weights));
        else
                memset(h->op_weights, 0, sizeof(h->op_weights));
        h->desc_check = record_desc_check(h);
}

/* One list: the whole area as one entry, or RECORD_F_PACKED's entries. */
static int record_pack(const uint8_t *area, size_t area_len, bool packed, size_t max_len,
                       RecordPack *ret)
{
        ret->n = 0;
        if (!packed) {
                /* One input: no longer than max_len, as any input. */
                if (area_len > max_len)
                        return -1;
                ret->off[0] = 0;
                ret->len[0] = (uint32_t)area_len;
                ret->n = 1;
                return 0;
        }
        /* The entries must fill the area exactly. */
        size_t cursor = 0, end = 0;
        uint64_t at = 1;
        const uint8_t *entry;
        uint32_t n;
        for (uint64_t k = 1; record_seed_at(area, area_len, k, &cursor, &at, &entry, &n) == 0;
             k++) {
                if (ret->n == RECORD_PACK_MAX || n > max_len)
                        return -1;
                ret->off[ret->n] = (uint32_t)(entry - area);
                ret->len[ret->n++] = n;
                end = (size_t)(entry - area) + n;
        }
        return end == area_len ? 0 : -1;
}

int record_inputs(const void *region, const RecordLayout *l, RecordInputs *ret)
{
        const RecordHeader *h = region;
        bool packed = (h->flags & RECORD_F_PACKED) != 0;

        ret->base_area = (const uint8_t *)region + l->base_off;
        ret->partner_area = (const uint8_t *)region + l->partner_off;
        if (record_pack(ret->base_area, h->base_len, packed, l->max_len, &ret->bases) < 0 ||
            ret->bases.n == 0)
                return -1;
        if (h->partner_len == 0) {
                ret->partners.n = 0;
                return 0;
        }
        return record_pack(ret->partner_area, h->partner_len, packed, l->max_len, &ret->partners);
}

void record_set_flags(void *region, uint32_t flags)
{
        RecordHeader *h = record_header(region);
        h->flags = flags;
        h->desc_check = record_desc_check(h);
}

RecordProblem record_chain_cmp(const void *region, const RecordLayout *l, const RecordChainSlot *s,
                               const CmpTable **ret)
{
        const RecordHeader *h = region;

        *ret = NULL;
        if (s->cmp_gen == 0)
                return RECORD_OK;
        if (s->cmp_gen > h->cmp_gens || s->cmp_gen > RECORD_CMP_TABLES)
                return RECORD_BAD_CMP;
        const CmpTable *t = record_cmp((void *)region, l, s->cmp_gen);
        if (t->gen != s->cmp_gen || t->chain > s->chain ||
            t->check != record_cmp_check(t, h->batch_id))
                return RECORD_BAD_CMP;
        *ret = t;
        return RECORD_OK;
}

RecordProblem record_cmp_index(const void *region, const RecordLayout *l, RecordCmpIndex *ret)
{
        const RecordHeader *h = region;
        uint32_t n = h->cmp_gens;

        ret->n = 0;
        if (n > RECORD_CMP_TABLES)
                return RECORD_BAD_CMP;
        for (uint32_t g = 1; g <= n; g++) {
                const CmpTable *t = record_cmp((void *)region, l, g);
                if (t->gen != g || t->check != record_cmp_check(t, h->batch_id) ||
                    (g > 1 && t->chain <= ret->tables[g - 2]->chain))
                        return RECORD_BAD_CMP;
                ret->tables[g - 1] = t;
        }
        ret->n = n;
        return RECORD_OK;
}

const CmpTable *record_cmp_lookup(const RecordCmpIndex *ix, uint64_t chain)
{
        for (uint32_t g = ix->n; g > 0; g--)
                if (ix->tables[g - 1]->chain <= chain)
                        return ix->tables[g - 1];
        return NULL;
}

RecordProblem record_validate(const void *region, const RecordLayout *l)
{
        const RecordHeader *h = region;

        if (h->magic != RECORD_MAGIC)
                return RECORD_BAD_MAGIC;
        if (h->version != RECORD_VERSION || h->header_size != sizeof(RecordHeader))
                return RECORD_BAD_VERSION;
        /* The checksum first: a scribbled description is corruption, while
         * a record from another mutator has a valid checksum. */
        if (h->desc_check != record_desc_check(h))
                return RECORD_BAD_DESC;
        if (h->mutator_version != MUTATOR_VERSION)
                return RECORD_BAD_VERSION;
        if (h->max_len != l->max_len || h->base_len > l->area_len || h->partner_len > l->area_len ||
            (h->mode == RECORD_MODE_EXEC && h->base_len > l->max_len) ||
            h->table_len > RECORD_TABLE_BYTES || h->chain_len == 0 ||
            (h->mode != RECORD_MODE_EXEC && h->mode != RECORD_MODE_FUZZ &&
             h->mode != RECORD_MODE_SEEDS))
                return RECORD_BAD_DESC;
        if (h->payload_check != record_payload_check(region, l, h))
                return RECORD_BAD_PAYLOAD;
        if (h->mode == RECORD_MODE_FUZZ) {
                RecordInputs in;
                if (record_inputs(region, l, &in) < 0)
                        return RECORD_BAD_DESC;
        }

        uint64_t count = __atomic_load_n(&h->count, __ATOMIC_ACQUIRE);
        if (count == 0)
                return RECORD_NO_INPUT;
        if (count > h->iters)
                return RECORD_BAD_COUNT;
        if (h->mode == RECORD_MODE_FUZZ) {
                uint64_t chain = (count - 1) / h->chain_len;
                const RecordChainSlot *s = &h->slot[chain & 1];
                const CmpTable *t;
                if (s->chain != chain ||
                    s->check != record_slot_check(&s->rng, s->chain, s->cmp_gen))
                        return RECORD_BAD_SLOT;
                if (record_chain_cmp(region, l, s, &t) != RECORD_OK)
                        return RECORD_BAD_CMP;
        }
        return RECORD_OK;
}

const char *record_problem_str(RecordProblem p)
{
        switch (p) {
        case RECORD_OK:
                return "ok";
        case RECORD_BAD_MAGIC:
                return "the record has no valid magic number (overwritten?)";
        case RECORD_BAD_VERSION:
                return "the record was written by another record layout or mutator version";
        case RECORD_BAD_DESC:
                return "the batch description fails its checksum (scribbled on by the target?)";
        case RECORD_BAD_PAYLOAD:
                return "the base input or mutation table changed during the batch "
                       "(scribbled on by the target?)";
        case RECORD_BAD_SLOT:
                return "the PRNG slot of the running chain fails its checksum";
        case RECORD_NO_INPUT:
                return "the runner died before it ran any input";
        case RECORD_BAD_COUNT:
                return "the iteration count is beyond the batch";
        case RECORD_BAD_CMP:
                return "a comparison table fails its checksum (scribbled on by the target?)";
        case RECORD_NEEDS_TARGET:
                return "the inputs were made by the target's custom mutator: they can only be "
                       "rebuilt where the target is loaded";
        }
        return "unknown problem";
}
