/*
 * The live comparison table and its freezing into the replay record (the
 * rules are in worker/cmplog.h and include/snapfuzz/record.h).
 *
 * Ordering is what keeps recovery exact: a frozen table is complete, gen,
 * chain and checksum included, before cmp_gens counts it and the chain
 * slot names it, and those are written before count enters the chain. A
 * table is never written again during its batch. Compiler barriers suffice
 * between these writes: only the runner writes them, and readers look only
 * after the runner is gone.
 */
#include <string.h>

#include "worker/cmplog.h"
#include "core/coverage.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

CmpLog cmplog_live;
int cmplog_mode;
uint32_t cmplog_record_left;
uintptr_t cmplog_pc_base;
int cmplog_value_profile;
uint8_t cmplog_vp_map[CMPLOG_VP_COUNTERS] __attribute__((aligned(64)));
uint64_t cmplog_vp_touched[(1u << CMPLOG_VP_SITE_BITS) / 64u];
uint8_t cmplog_eq_map[CMPLOG_EQ_COUNTERS];
static bool cmplog_eq_enabled;

void cmplog_eq_enable(void)
{
        if (cmplog_eq_enabled)
                return;
        coverage_register_features(cmplog_eq_map, cmplog_eq_map + CMPLOG_EQ_COUNTERS);
        cmplog_eq_enabled = true;
}

void cmplog_value_profile_enable(void)
{
        if (cmplog_value_profile)
                return;
        coverage_register_sparse_features(cmplog_vp_map, cmplog_vp_map + CMPLOG_VP_COUNTERS,
                                          cmplog_vp_touched);
        cmplog_value_profile = CMPLOG_VALUE_PROFILE;
}

void cmplog_clear(void)
{
        memset(&cmplog_live, 0, sizeof(cmplog_live));
}

size_t cmplog_freeze(const CmpLog *live, CmpTable *ret, uint32_t gen, uint64_t chain,
                     uint64_t batch_id)
{
        uint32_t ni = 0, nm = 0;

        for (size_t i = 0; i < CMPTABLE_INTS; i++)
                if (live->ints[i].width)
                        ret->ints[ni++] = live->ints[i];
        for (size_t i = 0; i < CMPTABLE_MEMS; i++) {
                const CmpMemEntry *e = &live->mems[i];
                /* The live table is in the target's reach; lengths are
                 * clamped rather than trusted. */
                size_t la = e->len_a < CMPTABLE_MEM_MAX ? e->len_a : CMPTABLE_MEM_MAX;
                size_t lb = e->len_b < CMPTABLE_MEM_MAX ? e->len_b : CMPTABLE_MEM_MAX;
                if (!lb)
                        continue;
                /* Only the bytes in use are copied, and the rest zeroed, so
                 * the table is the same whatever the slot held before. */
                CmpMemEntry *d = &ret->mems[nm++];
                d->len_a = (uint8_t)la;
                d->len_b = (uint8_t)lb;
                d->flags = e->flags;
                d->pad = 0;
                memcpy(d->a, e->a, la);
                memset(d->a + la, 0, CMPTABLE_MEM_MAX - la);
                memcpy(d->b, e->b, lb);
                memset(d->b + lb, 0, CMPTABLE_MEM_MAX - lb);
        }
        ret->n_int = ni;
        ret->n_mem = nm;
        ret->gen = gen;
        ret->pad = 0;
        ret->chain = chain;
        ret->check = record_cmp_check(ret, batch_id);
        return ni + nm;
}

void cmplog_freezer_init(CmpFreezer *f, void *region, const RecordLayout *l)
{
        const RecordHeader *h = record_header(region);

        f->region = region;
        f->layout = l;
        f->given = (h->batch_flags & RECORD_BATCH_REPLAY) != 0;
        f->gen = 0;
        f->next_chain = 1;
        f->table = NULL;
        f->index.n = 0;
        /* Tables that do not check out are not used: the replay then runs
         * other inputs than the original, which the helper sees. */
        if (f->given && record_cmp_index(region, l, &f->index) != RECORD_OK)
                f->index.n = 0;
}

const CmpTable *cmplog_chain_begin(CmpFreezer *f, const CmpLog *live, uint64_t chain,
                                   uint64_t *ret_gen)
{
        if (f->given) {
                const CmpTable *t = record_cmp_lookup(&f->index, chain);
                *ret_gen = t ? t->gen : 0;
                return t;
        }
        if (chain >= f->next_chain && f->gen < RECORD_CMP_TABLES) {
                RecordHeader *h = record_header(f->region);
                uint32_t gen = f->gen + 1;
                CmpTable *t = record_cmp(f->region, f->layout, gen);

                f->next_chain = 2 * chain;
                if (cmplog_freeze(live, t, gen, chain, h->batch_id) > 0) {
                        __atomic_signal_fence(__ATOMIC_RELEASE);
                        h->cmp_gens = gen;
                        __atomic_signal_fence(__ATOMIC_RELEASE);
                        f->gen = gen;
                        f->table = t;
                }
        }
        *ret_gen = f->gen;
        return f->table;
}

bool cmplog_chain_records(const CmpFreezer *f, uint64_t chain)
{
        return !f->given && f->gen < RECORD_CMP_TABLES &&
               (chain % CMPLOG_RECORD_EVERY == 0 || chain + CMPLOG_RECORD_CHAINS >= f->next_chain);
}

void cmplog_push_tokens(void *region, const RecordLayout *l, const MutatorTrace *trace)
{
        RecordTokens *toks = record_tokens(region, l);
        uint32_t n = trace->n < MUTATOR_TRACE_MAX ? trace->n : MUTATOR_TRACE_MAX;

        for (uint32_t i = 0; i < n; i++) {
                uint32_t used = toks->used;
                size_t len = trace->len[i];
                bool seen = false;

                if (used >= RECORD_TOKEN_SLOTS)
                        return;
                if (len == 0 || len > RECORD_TOKEN_MAX)
                        continue;
                for (uint32_t j = 0; j < used && !seen; j++)
                        seen = toks->token[j].len == len &&
                               memcmp(toks->token[j].data, trace->bytes[i], len) == 0;
                if (seen)
                        continue;
                RecordToken *t = &toks->token[used];
                t->len = (uint32_t)len;
                t->pad = 0;
                memcpy(t->data, trace->bytes[i], len);
                __atomic_store_n(&toks->used, used + 1, __ATOMIC_RELEASE);
        }
}

void cmplog_set_base(uintptr_t base)
{
        cmplog_pc_base = base;
}
