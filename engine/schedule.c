/*
 * Batch scheduling (engine/schedule.h). Invariants:
 *   - every seed runs once before the first fuzz batch is planned; a seed
 *     batch that ended early puts its unreached seeds back
 *     (schedule_batch_done), so every seed's features are known;
 *   - a fuzz batch's lists of bases and partners are written into the
 *     record by wproc_send_batch, so whatever was picked replays;
 *   - nothing here reads the clock: a batch's length follows the worker's
 *     measured speed, which the caller reports.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/schedule.h"

#include "snapfuzz/banned.h"

/* Executions a fuzz batch gives each corpus entry it mutates (pack_bases):
 * 256 rather than 1024 spreads a batch over four times as many entries; on
 * expat, 10 min: 3038 branches against 3000 (one run each, seed 1), and
 * 3004, 3009 against 2954-3003 before the 64 KiB areas
 * (bench/results/pack-2026-11-21.md). Can be set at build time. */
#ifndef COORD_EXECS_PER_BASE
#define COORD_EXECS_PER_BASE 256
#endif
/* How long a fuzz batch lasts (batch_ms). A batch's finds are scheduled
 * only once it ends, so short is better: SCHEDULE_BATCH_MS (with
 * pack_bases, 12-16% more branches of expat and libxml2 at 2 minutes than
 * 300 ms batches of one entry; bench/results/pack-2026-11-21.md). Each
 * batch costs a fork, a seccomp filter and an exit, and on a core shared
 * with the coordinator its corpus writes: a worker whose batches cost more
 * than SCHEDULE_BATCH_MS / SCHEDULE_OVERHEAD_SHARE beyond their loop (a
 * large target's page tables, say) gets longer ones. And the coordinator
 * handles at most some 400 batches a second:
 * SCHEDULE_BATCH_MS_PER_WORKER per worker. */
#define SCHEDULE_BATCH_MS 20.0
#define SCHEDULE_OVERHEAD_SHARE 5.0
#define SCHEDULE_BATCH_MS_PER_WORKER 2.5
#define SCHEDULE_MAX_BATCH_MS 1000.0
#define SCHEDULE_MIN_ITERS 64
#define SCHEDULE_MAX_ITERS (1u << 20)
/* A decoder's inputs differ a thousandfold in speed: the last batch's rate,
 * applied to bases that are much slower, made batches of tens of seconds
 * (libjpeg-turbo, once runners stopped paying a fork per batch), whose
 * finds wait that long to be scheduled. The bases' own execution times
 * (measured when they were found) cap the batch at
 * SCHEDULE_SLOW_SLACK x its length, and at least SCHEDULE_MIN_SLOW_ITERS. */
#define SCHEDULE_SLOW_SLACK 2.0
#define SCHEDULE_MIN_SLOW_ITERS (2 * SCHEDULE_CHAIN_LEN)

/* Seeds of a batch that ended before its last one (the finds area filled
 * up, or a seed crashed): run again from where it stopped. */
typedef struct SeedRange {
        size_t lo, hi;
} SeedRange;

struct Schedule {
        RecordLayout layout;
        unsigned n_workers;
        SfPrng rng;
        bool legacy; /* SNAPFUZZ_SCHEDULE=legacy: the scheduler before energy */
        uint64_t batch_ids;
        bool deterministic; /* batch lengths from the bases' work, not the clock */

        CorpusSeed *seeds;
        size_t n_seeds, next_seed;
        SeedRange *redo;
        size_t n_redo, cap_redo;

        /* The seed list of a warm-up batch, or a fuzz batch's bases and
         * partners (area_len bytes each). */
        uint8_t *seed_pack;
        uint8_t *partner_pack;
        RecordBaseBest pack_best; /* what a fuzz batch's bases are the best for */
        MutSched mutsched;        /* length limit and operator weights of fuzz batches */
};

int schedule_new(Schedule **ret, const RecordLayout *layout, uint64_t seed, CorpusSeed **seeds,
                 size_t n_seeds, unsigned n_workers)
{
        Schedule *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->seed_pack = malloc(layout->area_len);
        if (!s->seed_pack)
                goto err_free;
        s->partner_pack = malloc(layout->area_len);
        if (!s->partner_pack)
                goto err_seed_pack;

        s->layout = *layout;
        s->n_workers = n_workers ? n_workers : 1;
        prng_seed(&s->rng, seed, 0x636f6f7264ULL);
        const char *legacy = getenv("SNAPFUZZ_SCHEDULE");
        s->legacy = legacy && strcmp(legacy, "legacy") == 0;
        s->seeds = *seeds;
        s->n_seeds = n_seeds;
        *seeds = NULL;
        size_t longest = 0;
        for (size_t i = 0; i < n_seeds; i++)
                if (s->seeds[i].len > longest)
                        longest = s->seeds[i].len;
        mutsched_init(&s->mutsched, layout->max_len, longest);
        *ret = s;
        return 0;

err_seed_pack:
        free(s->seed_pack);
err_free:
        free(s);
        return -ENOMEM;
}

void schedule_free(Schedule *s)
{
        if (!s)
                return;
        corpus_seeds_free(s->seeds, s->n_seeds);
        free(s->redo);
        free(s->partner_pack);
        free(s->seed_pack);
        free(s);
}

void schedule_set_deterministic(Schedule *s, bool on)
{
        s->deterministic = on;
}

bool schedule_seeds_left(const Schedule *s)
{
        return s->n_redo > 0 || s->next_seed < s->n_seeds;
}

size_t schedule_n_seeds(const Schedule *s)
{
        return s->n_seeds;
}

int schedule_add_seeds(Schedule *s, CorpusSeed *seeds, size_t n)
{
        CorpusSeed *all = realloc(s->seeds, (s->n_seeds + n) * sizeof(CorpusSeed));
        if (!all)
                return -ENOMEM;
        memcpy(all + s->n_seeds, seeds, n * sizeof(CorpusSeed));
        s->seeds = all;
        s->n_seeds += n;
        free(seeds);
        return 0;
}

const CorpusSeed *schedule_seed(const Schedule *s, size_t i)
{
        return i < s->n_seeds ? &s->seeds[i] : NULL;
}

bool schedule_legacy(const Schedule *s)
{
        return s->legacy;
}

const MutSched *schedule_mutsched(const Schedule *s)
{
        return &s->mutsched;
}

/* The seeds still to run, as a range [*lo, *hi) of s->seeds. */
static void seeds_next(const Schedule *s, size_t *lo, size_t *hi)
{
        if (s->n_redo) {
                *lo = s->redo[s->n_redo - 1].lo;
                *hi = s->redo[s->n_redo - 1].hi;
        } else {
                *lo = s->next_seed;
                *hi = s->n_seeds;
        }
}

/* Marks the seeds before @upto of the range seeds_next() gave as taken. */
static void seeds_take(Schedule *s, size_t upto)
{
        if (s->n_redo) {
                SeedRange *r = &s->redo[s->n_redo - 1];
                r->lo = upto;
                if (r->lo >= r->hi)
                        s->n_redo--;
        } else {
                s->next_seed = upto;
        }
}

/* A seed batch that ended before its last seed (the finds area filled up,
 * or seed @count crashed) leaves the seeds after @count to run again, so
 * that every seed runs and its features are known. A batch that died
 * before its first seed is not retried. */
static void seeds_requeue(Schedule *s, const SchedulePlan *p, uint64_t count)
{
        if (count == 0 || count >= p->seed_hi - p->seed_lo)
                return;
        if (s->n_redo == 0 && s->next_seed == p->seed_hi) {
                /* Nothing was dispatched after it: simply go back. */
                s->next_seed = p->seed_lo + (size_t)count;
                return;
        }
        if (s->n_redo == s->cap_redo) {
                size_t cap = s->cap_redo ? s->cap_redo * 2 : 16;
                SeedRange *r = realloc(s->redo, cap * sizeof(SeedRange));
                if (!r) {
                        log_warn("out of memory: %zu seeds are not run",
                                 p->seed_hi - p->seed_lo - (size_t)count);
                        return;
                }
                s->redo = r;
                s->cap_redo = cap;
        }
        s->redo[s->n_redo++] = (SeedRange){p->seed_lo + (size_t)count, p->seed_hi};
}

static double batch_ms(const Schedule *s, const SchedulePlan *p)
{
        double ms = SCHEDULE_BATCH_MS;
        if (s->deterministic)
                return ms;
        if (ms < SCHEDULE_BATCH_MS_PER_WORKER * s->n_workers)
                ms = SCHEDULE_BATCH_MS_PER_WORKER * s->n_workers;
        if (ms < SCHEDULE_OVERHEAD_SHARE * p->overhead_ms)
                ms = SCHEDULE_OVERHEAD_SHARE * p->overhead_ms;
        return ms < SCHEDULE_MAX_BATCH_MS ? ms : SCHEDULE_MAX_BATCH_MS;
}

double schedule_batch_ms(const Schedule *s, const SchedulePlan *plan)
{
        return batch_ms(s, plan);
}

bool schedule_list_put(uint8_t *list, size_t cap, size_t *used, const uint8_t *data, size_t len)
{
        if (len > cap || *used + 4 > cap - len)
                return false;
        uint8_t *p = list + *used;
        p[0] = (uint8_t)len;
        p[1] = (uint8_t)(len >> 8);
        p[2] = (uint8_t)(len >> 16);
        p[3] = (uint8_t)(len >> 24);
        if (len)
                memcpy(p + 4, data, len);
        *used += 4 + len;
        return true;
}

/* Adds corpus entry @i as base number p->n_bases of the batch. */
static void pack_base(Schedule *s, Corpus *corpus, SchedulePlan *p, size_t i)
{
        s->pack_best.base[p->n_bases].n = (uint32_t)corpus_best_features(
            corpus, i, s->pack_best.base[p->n_bases].id, RECORD_BASE_BEST);
        p->base_finds[p->n_bases] = 0;
        p->bases[p->n_bases++] = i;
}

/*
 * A fuzz batch's inputs. A runner's batch lasts 20 ms or more, which on a
 * fast target is 10^4 executions: spent on one corpus entry, a corpus of
 * thousands would mostly wait its turn. So the batch mutates a list of
 * entries, each picked by energy for about COORD_EXECS_PER_BASE executions
 * (as many as the record's base area holds), and as many crossover
 * partners, picked uniformly (RECORD_F_PACKED). A batch too short for two
 * bases, or whose first pick fills the area alone, mutates one entry as
 * before. Both lists go into the record (wproc_send_batch), so the batch
 * replays whatever was chosen.
 */
static void pack_bases(Schedule *s, Corpus *corpus, SchedulePlan *p, WprocBatch *b)
{
        uint64_t want = b->iters / COORD_EXECS_PER_BASE;
        if (want > RECORD_PACK_MAX)
                want = RECORD_PACK_MAX;
        if (want < 1)
                want = 1;
        size_t picks[RECORD_PACK_MAX], used = 0, len;
        corpus_schedule_many(corpus, &s->rng, picks, want);
        const uint8_t *data = corpus_get(corpus, picks[0], &b->base_len);
        p->n_bases = 0;
        pack_base(s, corpus, p, picks[0]);
        s->pack_best.n = 1;
        b->base_best = &s->pack_best;
        if (want < 2 ||
            !schedule_list_put(s->seed_pack, s->layout.area_len, &used, data, b->base_len)) {
                b->base = data;
                size_t partner = corpus_pick_partner(corpus, &s->rng);
                b->partner = corpus_get(corpus, partner, &b->partner_len);
                return;
        }
        while (p->n_bases < want) {
                size_t i = picks[p->n_bases];
                data = corpus_get(corpus, i, &len);
                if (!schedule_list_put(s->seed_pack, s->layout.area_len, &used, data, len))
                        break;
                pack_base(s, corpus, p, i);
        }
        s->pack_best.n = p->n_bases;
        b->base = s->seed_pack;
        b->base_len = used;
        used = 0;
        for (unsigned k = 0; k < p->n_bases; k++) {
                size_t i = corpus_pick_partner(corpus, &s->rng);
                data = corpus_get(corpus, i, &len);
                if (!schedule_list_put(s->partner_pack, s->layout.area_len, &used, data, len))
                        break;
        }
        b->partner = s->partner_pack;
        b->partner_len = used;
        b->packed = 1;
}

static void cap_by_bases(const Schedule *s, Corpus *corpus, const SchedulePlan *p, WprocBatch *b)
{
        double sum = 0;
        unsigned known = 0;
        for (unsigned i = 0; i < p->n_bases; i++) {
                uint64_t ns = corpus_exec_ns(corpus, p->bases[i]);
                if (ns) {
                        sum += (double)ns;
                        known++;
                }
        }
        if (!known)
                return;
        double cap = batch_ms(s, p) * 1e6 * SCHEDULE_SLOW_SLACK / (sum / known);
        if (cap < SCHEDULE_MIN_SLOW_ITERS)
                cap = SCHEDULE_MIN_SLOW_ITERS;
        if ((double)b->iters > cap)
                b->iters = (uint64_t)cap;
}

static const uint8_t schedule_empty[1];

/* A batch of seeds: a seed as long as the record's base alone, else the
 * warm-up pass, as many seeds as the base holds, one per iteration. */
static void plan_seeds(Schedule *s, SchedulePlan *p, WprocBatch *b)
{
        size_t lo, hi;
        seeds_next(s, &lo, &hi);
        p->seed_batch = true;
        p->seed_lo = lo;
        if (s->seeds[lo].len + 4 > s->layout.area_len) {
                const CorpusSeed *sd = &s->seeds[lo];
                seeds_take(s, lo + 1);
                p->seed_hi = lo + 1;
                b->mode = RECORD_MODE_EXEC;
                b->iters = 1;
                b->base = sd->data ? sd->data : schedule_empty;
                b->base_len = sd->len;
                return;
        }
        size_t used = 0, next = lo;
        b->mode = RECORD_MODE_SEEDS;
        b->iters = 0;
        /* Every seed comes back with its features in a find slot, so a
         * batch runs at most as many as there are slots. */
        while (next < hi && next - lo < RECORD_FINDS_SLOTS &&
               schedule_list_put(s->seed_pack, s->layout.area_len, &used, s->seeds[next].data,
                                 s->seeds[next].len)) {
                next++;
                b->iters++;
        }
        seeds_take(s, next);
        p->seed_hi = next;
        b->base = s->seed_pack;
        b->base_len = used;
}

/* A fuzz batch of about batch_ms() at the worker's speed. */
static void plan_fuzz(Schedule *s, Corpus *corpus, const uint8_t *table, size_t table_len,
                      SchedulePlan *p, WprocBatch *b)
{
        size_t n = corpus_size(corpus);
        p->seed_batch = false;
        p->seed_lo = p->seed_hi = 0;
        b->mode = RECORD_MODE_FUZZ;
        b->base = schedule_empty;
        if (n && s->legacy) {
                size_t i = corpus_pick(corpus, &s->rng);
                b->base = corpus_get(corpus, i, &b->base_len);
                size_t partner = prng_below(&s->rng, (uint32_t)n);
                b->partner = corpus_get(corpus, partner, &b->partner_len);
        }
        double want = p->rate > 0 ? p->rate * batch_ms(s, p) : 256;
        if (want < SCHEDULE_MIN_ITERS)
                want = SCHEDULE_MIN_ITERS;
        if (want > SCHEDULE_MAX_ITERS)
                want = SCHEDULE_MAX_ITERS;
        b->iters = s->deterministic ? SCHEDULE_DET_ITERS : (uint64_t)want;
        if (n && !s->legacy) {
                pack_bases(s, corpus, p, b);
                cap_by_bases(s, corpus, p, b);
        }
        b->table = table;
        b->table_len = table_len;
        b->len_limit = (uint32_t)s->mutsched.len_limit;
        b->op_weights = s->mutsched.weights;
}

void schedule_next(Schedule *s, Corpus *corpus, const uint8_t *table, size_t table_len,
                   uint64_t max_iters, SchedulePlan *plan, WprocBatch *ret)
{
        WprocBatch b = {.batch_id = ++s->batch_ids, .chain_len = SCHEDULE_CHAIN_LEN};
        SchedulePlan p = *plan;

        b.seed = prng_next64(&s->rng);
        p.n_bases = 0;
        if (schedule_seeds_left(s))
                plan_seeds(s, &p, &b);
        else
                plan_fuzz(s, corpus, table, table_len, &p, &b);
        /* Seeds a cut batch does not reach are put back when it ends
         * (schedule_batch_done), like those of a batch that ended early. */
        if (max_iters && b.iters > max_iters)
                b.iters = max_iters;
        *plan = p;
        plan->iters = b.iters;
        *ret = b;
}

size_t schedule_find_base(const SchedulePlan *plan, uint64_t iteration)
{
        if (plan->seed_batch || !plan->n_bases || iteration == 0)
                return SIZE_MAX;
        return plan->bases[(iteration - 1) / SCHEDULE_CHAIN_LEN % plan->n_bases];
}

/* The iteration of the batch's last input with new coverage (its find
 * slots are still in the record @h heads), 0 when none had any. */
static uint64_t batch_last_find(const Schedule *s, const RecordHeader *h)
{
        if (!h->new_features)
                return 0;
        void *region = (void *)(uintptr_t)h;
        const RecordFinds *f = record_finds(region, &s->layout);
        uint32_t used = __atomic_load_n(&f->used, __ATOMIC_ACQUIRE);
        if (used > RECORD_FINDS_SLOTS)
                used = RECORD_FINDS_SLOTS;
        uint64_t last = 0;
        for (uint32_t i = 0; i < used; i++) {
                const RecordFindSlot *fs = record_find_slot(region, &s->layout, i);
                if (!(fs->flags & (RECORD_FIND_F_KNOWN | RECORD_FIND_F_SMALLER)) &&
                    fs->iteration > last)
                        last = fs->iteration;
        }
        return last ? last : 1;
}

void schedule_batch_done(Schedule *s, Corpus *corpus, SchedulePlan *plan, const RecordHeader *h,
                         uint64_t count, double ms, double loop_ms)
{
        if (plan->seed_batch) {
                seeds_requeue(s, plan, count);
                return;
        }
        if (count > 0)
                plan->rate = (double)count / (ms > 0.01 ? ms : 0.01);
        if (loop_ms > 0 && ms >= loop_ms)
                plan->overhead_ms = plan->overhead_ms > 0
                                        ? 0.8 * plan->overhead_ms + 0.2 * (ms - loop_ms)
                                        : ms - loop_ms;
        mutsched_batch_done(&s->mutsched, h, count, batch_last_find(s, h));
        for (unsigned i = 0; i < plan->n_bases; i++)
                corpus_note_batch(corpus, plan->bases[i], count / plan->n_bases,
                                  plan->base_finds[i]);
}
