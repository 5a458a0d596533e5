/*
 * The sanitizer build's queue (engine/sanq.h). Invariants: a seed or a
 * corpus entry is handed out exactly once, in the order it came (the seed
 * cursor and the entry list only move forward; an entry a batch did not
 * reach, because the batch ended early, is not handed out again: its batch
 * ended in a death, which recovery stores, or the run is stopping); a
 * sample is a copy, so the plain worker's record may be reused at once.
 * Nothing here reads the clock: the caller passes the time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/sanq.h"
#include "worker/batch.h"

#include "snapfuzz/banned.h"

/* Sanitizer batch ids are apart from the schedule's (engine/schedule.c
 * counts from 1), so that a record says which kind of batch it held. */
#define SANQ_BATCH_ID_BASE (UINT64_C(1) << 48) /* exact in a JSON number */

struct SanQueue {
        RecordLayout layout;
        unsigned share_pct, n_workers;
        int64_t start_ms;
        double busy_ms; /* what the sanitizer worker's batches took */
        size_t next_seed;
        uint32_t *entries; /* corpus entries to check, in the order they came */
        size_t n_entries, cap_entries, next_entry;
        uint8_t *list; /* the list of the batch handed out (area_len bytes) */
        /* Samples waiting: a list in the same format (area_len bytes). */
        uint8_t *samples;
        size_t samples_used;
        uint32_t n_samples;
        uint8_t *work; /* max_len bytes: a sample being rebuilt */
        uint64_t batch_ids;
        /* The batch in flight, by where its inputs came from. */
        uint32_t fl_seeds, fl_corpus, fl_samples;
        uint64_t checked, seeds, corpus, sampled, dropped;
};

int sanq_new(SanQueue **ret, const RecordLayout *layout, unsigned share_pct, unsigned n_workers,
             int64_t now_ms)
{
        SanQueue *q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->layout = *layout;
        q->share_pct = share_pct;
        q->n_workers = n_workers ? n_workers : 1;
        q->start_ms = now_ms;
        q->batch_ids = SANQ_BATCH_ID_BASE;
        q->list = malloc(layout->area_len);
        q->samples = malloc(layout->area_len);
        q->work = malloc(layout->max_len ? layout->max_len : 1);
        if (!q->list || !q->samples || !q->work) {
                sanq_free(q);
                return -ENOMEM;
        }
        *ret = q;
        return 0;
}

void sanq_free(SanQueue *q)
{
        if (!q)
                return;
        free(q->work);
        free(q->samples);
        free(q->list);
        free(q->entries);
        free(q);
}

/* Appends an input to a list of the queue's (area_len bytes). */
static bool list_put(const SanQueue *q, uint8_t *list, size_t *used, const uint8_t *data,
                     size_t len)
{
        return schedule_list_put(list, q->layout.area_len, used, data, len);
}

int sanq_add_entry(SanQueue *q, size_t i)
{
        if (q->n_entries == q->cap_entries) {
                size_t cap = q->cap_entries ? q->cap_entries * 2 : 256;
                uint32_t *e = realloc(q->entries, cap * sizeof(*e));
                if (!e)
                        return -ENOMEM;
                q->entries = e;
                q->cap_entries = cap;
        }
        q->entries[q->n_entries++] = (uint32_t)i;
        return 0;
}

void sanq_sample(SanQueue *q, const void *region)
{
        const RecordHeader *h = record_header((void *)region); /* read only */
        if (h->mode != RECORD_MODE_FUZZ || h->count == 0 || h->chain_len == 0)
                return;
        /* The last chain: its PRNG slot is the record's, so each input is
         * a few mutations from it, not the whole batch's. */
        uint64_t last = h->count;
        uint64_t first = (last - 1) / h->chain_len * h->chain_len + 1;
        for (uint64_t k = first; k <= last; k++) {
                size_t len;
                if (q->n_samples >= RECORD_FINDS_SLOTS) {
                        q->dropped += last - k + 1;
                        return;
                }
                if (batch_rebuild(region, &q->layout, NULL, k, true, q->work, &len) < 0)
                        return; /* a custom mutator's record, or one scribbled on */
                if (!list_put(q, q->samples, &q->samples_used, q->work, len)) {
                        q->dropped++;
                        continue;
                }
                q->n_samples++;
        }
}

/* Whether the sanitizer worker is within its share of the time at @now_ms. */
static bool within_share(const SanQueue *q, int64_t now_ms)
{
        double elapsed = (double)(now_ms - q->start_ms);
        double allowed = elapsed * q->n_workers * q->share_pct / 100.0 + SANQ_ALLOWANCE_MS;
        return q->busy_ms < allowed;
}

/* An input too long for a list: a batch of its own, run as it is. */
static void exec_one(SanQueue *q, const uint8_t *data, size_t len, WprocBatch *b)
{
        b->mode = RECORD_MODE_EXEC;
        b->iters = 1;
        b->base = data;
        b->base_len = len;
}

/* Seeds, then corpus entries, into the list; 0 when there are none. A
 * single input too long for the list goes as an exec batch. */
static uint32_t take_inputs(SanQueue *q, const Schedule *sched, const Corpus *corpus, WprocBatch *b,
                            size_t *used)
{
        uint32_t n = 0;
        const CorpusSeed *sd;
        while (n < RECORD_FINDS_SLOTS && (sd = schedule_seed(sched, q->next_seed)) != NULL) {
                if (!list_put(q, q->list, used, sd->data, sd->len)) {
                        if (n == 0) {
                                q->next_seed++;
                                q->fl_seeds = 1;
                                exec_one(q, sd->data, sd->len, b);
                                return 1;
                        }
                        return n;
                }
                q->next_seed++;
                q->fl_seeds++;
                n++;
        }
        while (n < RECORD_FINDS_SLOTS && q->next_entry < q->n_entries) {
                size_t len;
                const uint8_t *data = corpus_get(corpus, q->entries[q->next_entry], &len);
                if (!list_put(q, q->list, used, data, len)) {
                        if (n == 0) {
                                q->next_entry++;
                                q->fl_corpus = 1;
                                exec_one(q, data, len, b);
                                return 1;
                        }
                        return n;
                }
                q->next_entry++;
                q->fl_corpus++;
                n++;
        }
        return n;
}

int sanq_next(SanQueue *q, const Schedule *sched, const Corpus *corpus, int64_t now_ms,
              WprocBatch *ret)
{
        if (!within_share(q, now_ms))
                return 0;
        WprocBatch b = {.batch_id = ++q->batch_ids,
                        .chain_len = SCHEDULE_CHAIN_LEN,
                        .seed = q->batch_ids,
                        .mode = RECORD_MODE_SEEDS};
        size_t used = 0;
        q->fl_seeds = q->fl_corpus = q->fl_samples = 0;
        uint32_t n = take_inputs(q, sched, corpus, &b, &used);
        if (n == 0 && q->n_samples > 0) {
                /* The samples' list becomes the batch's. */
                uint8_t *t = q->list;
                q->list = q->samples;
                q->samples = t;
                used = q->samples_used;
                n = q->n_samples;
                q->fl_samples = n;
                q->samples_used = 0;
                q->n_samples = 0;
        }
        if (n == 0) {
                q->batch_ids--;
                return 0;
        }
        if (b.mode == RECORD_MODE_SEEDS) {
                b.iters = n;
                b.base = q->list;
                b.base_len = used;
        }
        *ret = b;
        return 1;
}

void sanq_batch_done(SanQueue *q, uint64_t count, double ms)
{
        q->busy_ms += ms > 0 ? ms : 0;
        q->checked += count;
        /* What ran, by origin: seeds first, then corpus entries, as
         * take_inputs packed them. A batch that ended early (a death) puts
         * the seeds and entries it did not reach back, so that they are
         * checked by the next; the samples it did not reach are dropped. */
        uint64_t s = count < q->fl_seeds ? count : q->fl_seeds;
        count -= s;
        uint64_t c = count < q->fl_corpus ? count : q->fl_corpus;
        count -= c;
        uint64_t p = count < q->fl_samples ? count : q->fl_samples;
        q->next_seed -= q->fl_seeds - s;
        q->next_entry -= q->fl_corpus - c;
        q->dropped += q->fl_samples - p;
        q->seeds += s;
        q->corpus += c;
        q->sampled += p;
        q->fl_seeds = q->fl_corpus = q->fl_samples = 0;
}

uint64_t sanq_checked(const SanQueue *q)
{
        return q ? q->checked : 0;
}

void sanq_add_stats(const SanQueue *q, cJSON *stats)
{
        if (!q)
                return;
        cJSON_AddNumberToObject(stats, "sanitizer_checked", (double)q->checked);
        cJSON_AddNumberToObject(stats, "sanitizer_seeds", (double)q->seeds);
        cJSON_AddNumberToObject(stats, "sanitizer_corpus", (double)q->corpus);
        cJSON_AddNumberToObject(stats, "sanitizer_samples", (double)q->sampled);
        cJSON_AddNumberToObject(stats, "sanitizer_samples_dropped", (double)q->dropped);
        cJSON_AddNumberToObject(stats, "sanitizer_busy_s", q->busy_ms / 1000.0);
}

void sanq_summary(const SanQueue *q, const char *target)
{
        if (!q)
                return;
        log_info("the sanitizer build %s checked %" PRIu64 " inputs: %" PRIu64 " seeds, %" PRIu64
                 " corpus entries, %" PRIu64 " sampled fuzzing inputs (%.1f s of its time)",
                 target, q->checked, q->seeds, q->corpus, q->sampled, q->busy_ms / 1000.0);
}
