/*
 * Histories of state-dependent crashes (recovery/histmin.h). A trial is a
 * seed-list batch in a runner forked for it from the verification
 * worker's snapshot: the same load, sandbox, limits and loop as fuzzing,
 * with nothing a fuzzing runner carries between batches. Invariants: the
 * execution that crashes is the last of every list tried, and the list
 * kept is always one the oracle accepted (or the full list, which the
 * caller checked), so running out of budget at any point leaves a list
 * that crashes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "recovery/histmin.h"
#include "recovery/replay.h"

#include "snapfuzz/banned.h"

void histseq_init(HistSeq *s)
{
        memset(s, 0, sizeof(*s));
}

void histseq_deinit(HistSeq *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->data[i]);
        free(s->data);
        free(s->len);
        free(s->iter);
        free(s->again);
        histseq_init(s);
}

static int histseq_grow(HistSeq *s)
{
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint8_t **data = realloc(s->data, cap * sizeof(*data));
        if (data)
                s->data = data;
        size_t *len = realloc(s->len, cap * sizeof(*len));
        if (len)
                s->len = len;
        uint64_t *iter = realloc(s->iter, cap * sizeof(*iter));
        if (iter)
                s->iter = iter;
        uint32_t *again = realloc(s->again, cap * sizeof(*again));
        if (again)
                s->again = again;
        if (!data || !len || !iter || !again)
                return -ENOMEM;
        s->cap = cap;
        return 0;
}

int histseq_add(HistSeq *s, const uint8_t *data, size_t len, uint64_t iter, uint32_t again)
{
        if (s->n == s->cap && histseq_grow(s) < 0)
                return -ENOMEM;
        uint8_t *copy = malloc(len ? len : 1);
        if (!copy)
                return -ENOMEM;
        memcpy(copy, data, len);
        s->data[s->n] = copy;
        s->len[s->n] = len;
        s->iter[s->n] = iter;
        s->again[s->n] = again;
        s->n++;
        return 0;
}

typedef struct Collect {
        HistSeq *seq;
        const RecordHeader *h;
        size_t bytes; /* as a list, so far */
        int err;
} Collect;

/* Appends one execution, unless the list would outgrow HISTSEQ_MAX_BYTES. */
static int collect_add(Collect *c, const uint8_t *data, size_t len, uint64_t k, uint32_t again)
{
        c->bytes += 4 + len;
        if (c->bytes > HISTSEQ_MAX_BYTES)
                return -E2BIG;
        return histseq_add(c->seq, data, len, k, again);
}

static int collect_one(void *ctx, uint64_t k, const uint8_t *data, size_t len)
{
        Collect *c = ctx;
        const RecordHeader *h = c->h;
        uint32_t again = 0;
        c->err = collect_add(c, data, len, k, 0);
        /* The runs again follow at once, in the order the runner noted
         * them (an iteration listed twice ran three times). */
        for (uint32_t i = 0; c->err == 0 && i < h->n_reruns && i < RECORD_MAX_RERUNS; i++)
                if (h->reruns[i] == k)
                        c->err = collect_add(c, data, len, k, ++again);
        return c->err != 0;
}

int histseq_collect(const void *record, const RecordLayout *l, uint64_t first, uint64_t last,
                    HistSeq *ret)
{
        Collect c = {.seq = ret, .h = record};
        uint8_t *buf = malloc(l->max_len);
        if (!buf)
                return -ENOMEM;
        int r = replay_range(record, l, first, last, collect_one, &c, buf);
        free(buf);
        if (r == 0 && c.err)
                r = c.err;
        if (r == 0 && (ret->n == 0 || ret->iter[ret->n - 1] != last))
                r = -(int)RECORD_BAD_COUNT; /* the batch ended before @last */
        return r;
}

size_t histseq_packed_len(const HistSeq *s, const size_t *idx, size_t n)
{
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
                total += 4 + s->len[idx[i]];
        return total;
}

int histseq_run(Wproc *w, const HistSeq *s, const size_t *idx, size_t n, cJSON **ret)
{
        static uint64_t run_id;
        size_t total = histseq_packed_len(s, idx, n);
        if (total > wproc_layout(w)->area_len || total > UINT32_MAX)
                return -E2BIG;
        uint8_t *pack = malloc(total ? total : 1);
        if (!pack)
                return -ENOMEM;
        uint8_t *p = pack;
        for (size_t i = 0; i < n; i++) {
                uint32_t len = (uint32_t)s->len[idx[i]];
                p[0] = (uint8_t)len;
                p[1] = (uint8_t)(len >> 8);
                p[2] = (uint8_t)(len >> 16);
                p[3] = (uint8_t)(len >> 24);
                memcpy(p + 4, s->data[idx[i]], len);
                p += 4 + len;
        }
        WprocBatch b = {
            .batch_id = ++run_id,
            .mode = RECORD_MODE_SEEDS,
            .iters = n,
            .chain_len = 1,
            .base = pack,
            .base_len = total,
            .replay = 1,
            .quiet = 1,
            .fresh = 1,
        };
        int r = wproc_run_batch(w, &b, ret);
        free(pack);
        return r;
}

/* The shrink's state: the list kept (ascending indexes, the crashing
 * execution last) and a scratch list for the candidate. */
typedef struct Shrink {
        size_t *cur, *cand;
        size_t n;
        HistminOracle oracle;
        void *ctx;
        const MinimizeBudget *budget;
        int64_t started;
        HistminStats *st;
} Shrink;

/* Whether the budget lets another trial start. */
static bool shrink_may_try(Shrink *s)
{
        if (s->budget->max_trials && s->st->trials >= s->budget->max_trials) {
                s->st->stopped = MINIMIZE_STOP_MAX_TRIALS;
                return false;
        }
        if (s->budget->max_ms && clock_now_ms() - s->started >= s->budget->max_ms) {
                s->st->stopped = MINIMIZE_STOP_MAX_TIME;
                return false;
        }
        return true;
}

/* Tries the list without cur[at..at+len) (never the last execution).
 * 1 kept (the list is shorter), 0 not, negative: stop. */
static int shrink_try(Shrink *s, size_t at, size_t len)
{
        size_t m = 0;
        for (size_t i = 0; i < s->n; i++)
                if (i < at || i >= at + len)
                        s->cand[m++] = s->cur[i];
        s->st->trials++;
        int r = s->oracle(s->ctx, s->cand, m);
        if (r <= 0)
                return r;
        size_t *t = s->cur;
        s->cur = s->cand;
        s->cand = t;
        s->n = m;
        return 1;
}

/* One pass over the removable executions (all but the last) in chunks of
 * @chunk. Returns how many chunks went, or a negative value: stop. */
static long shrink_pass(Shrink *s, size_t chunk)
{
        long removed = 0;
        for (size_t at = 0; at + 1 < s->n;) {
                if (!shrink_may_try(s))
                        return -1;
                size_t len = s->n - 1 - at < chunk ? s->n - 1 - at : chunk;
                int r = shrink_try(s, at, len);
                if (r < 0)
                        return r;
                if (r == 0)
                        at += len;
                else
                        removed++;
        }
        return removed;
}

int histmin_shrink(size_t n, HistminOracle oracle, void *ctx, const MinimizeBudget *budget,
                   size_t **ret_idx, size_t *ret_n, HistminStats *ret_stats)
{
        Shrink s = {.n = n,
                    .oracle = oracle,
                    .ctx = ctx,
                    .budget = budget,
                    .started = clock_now_ms(),
                    .st = ret_stats};
        memset(ret_stats, 0, sizeof(*ret_stats));
        ret_stats->from_len = n;
        s.cur = malloc((n ? n : 1) * sizeof(size_t));
        s.cand = malloc((n ? n : 1) * sizeof(size_t));
        if (!s.cur || !s.cand) {
                free(s.cur);
                free(s.cand);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                s.cur[i] = i;
        size_t chunk = 1;
        while (n > 2 && chunk * 2 <= (n - 1) / 2)
                chunk *= 2;
        /* Halving chunks; at single executions, passes until one removes
         * nothing. */
        for (long r = 0; s.n > 1;) {
                r = shrink_pass(&s, chunk);
                if (r < 0 || (chunk == 1 && r == 0))
                        break;
                if (chunk > 1)
                        chunk /= 2;
        }
        free(s.cand);
        ret_stats->to_len = s.n;
        ret_stats->ms = clock_now_ms() - s.started;
        *ret_idx = s.cur;
        *ret_n = s.n;
        return 0;
}
