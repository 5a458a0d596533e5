/*
 * The sanitizer build's queue (engine/sanq.h): seeds, then new corpus
 * entries, each handed out once and in order; what a batch that ended
 * early did not reach comes again; and no batch is handed out beyond the
 * share of the time.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sanq.h"

static RecordLayout layout_of(size_t max_len)
{
        RecordLayout l;
        cr_assert_eq(record_layout(max_len, &l), 0);
        return l;
}

/* @n seeds of 8 bytes, seed i filled with 'a' + i % 26. */
static Schedule *schedule_of(const RecordLayout *l, size_t n)
{
        CorpusSeed *seeds = calloc(n, sizeof(*seeds));
        cr_assert(seeds);
        for (size_t i = 0; i < n; i++) {
                seeds[i].len = 8;
                seeds[i].data = malloc(8);
                cr_assert(seeds[i].data);
                memset(seeds[i].data, (int)('a' + i % 26), 8);
        }
        Schedule *s;
        cr_assert_eq(schedule_new(&s, l, 1, &seeds, n, 1), 0);
        return s;
}

/* The first byte of each entry of a list (record_seed_at's format). */
static size_t list_firsts(const WprocBatch *b, char *ret, size_t cap)
{
        size_t n = 0, at = 0;
        cr_assert_eq(b->mode, RECORD_MODE_SEEDS);
        while (at + 4 <= b->base_len && n < cap) {
                const uint8_t *p = b->base + at;
                uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                               (uint32_t)p[3] << 24;
                ret[n++] = len ? (char)p[4] : '-';
                at += 4 + len;
        }
        cr_assert_eq(at, b->base_len, "the list ends on an entry");
        cr_assert_eq(n, b->iters, "one iteration per entry");
        return n;
}

Test(sanq, seeds_then_corpus_entries_each_once)
{
        RecordLayout l = layout_of(4096);
        Schedule *s = schedule_of(&l, RECORD_FINDS_SLOTS + 2);
        Corpus *corpus;
        SanQueue *q;
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        cr_assert_eq(sanq_new(&q, &l, 100, 1, 0), 0);
        cr_assert_eq(corpus_add(corpus, (const uint8_t *)"XYZ", 3, false), 1);
        cr_assert_eq(corpus_add(corpus, (const uint8_t *)"QRS", 3, false), 1);
        cr_assert_eq(sanq_add_entry(q, 1), 0);
        cr_assert_eq(sanq_add_entry(q, 0), 0);

        WprocBatch b;
        char firsts[RECORD_FINDS_SLOTS + 8];
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 1);
        cr_assert_eq(list_firsts(&b, firsts, sizeof(firsts)), RECORD_FINDS_SLOTS,
                     "a list holds at most one input per find slot");
        cr_assert_eq(firsts[0], 'a');
        sanq_batch_done(q, b.iters, 1);
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 1);
        cr_assert_eq(list_firsts(&b, firsts, sizeof(firsts)), 4);
        /* The last two seeds, then the entries in the order they came. */
        cr_assert_eq(memcmp(firsts, "mnQX", 4), 0, "%.4s", firsts);
        sanq_batch_done(q, b.iters, 1);
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 0, "nothing left: the worker idles");
        cr_assert_eq(sanq_checked(q), RECORD_FINDS_SLOTS + 4);
        sanq_free(q);
        corpus_free(corpus);
        schedule_free(s);
}

Test(sanq, what_an_early_end_missed_comes_again)
{
        RecordLayout l = layout_of(4096);
        Schedule *s = schedule_of(&l, 3);
        Corpus *corpus;
        SanQueue *q;
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        cr_assert_eq(sanq_new(&q, &l, 100, 1, 0), 0);
        cr_assert_eq(corpus_add(corpus, (const uint8_t *)"XYZ", 3, false), 1);
        cr_assert_eq(sanq_add_entry(q, 0), 0);

        WprocBatch b;
        char firsts[8];
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 1);
        cr_assert_eq(list_firsts(&b, firsts, sizeof(firsts)), 4);
        sanq_batch_done(q, 2, 1); /* the second seed died */
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 1);
        cr_assert_eq(list_firsts(&b, firsts, sizeof(firsts)), 2);
        cr_assert_eq(memcmp(firsts, "cX", 2), 0, "%.2s", firsts);
        sanq_batch_done(q, 2, 1);
        cr_assert_eq(sanq_next(q, s, corpus, 0, &b), 0);
        cr_assert_eq(sanq_checked(q), 4);
        sanq_free(q);
        corpus_free(corpus);
        schedule_free(s);
}

Test(sanq, no_batch_beyond_the_share)
{
        RecordLayout l = layout_of(4096);
        Schedule *s = schedule_of(&l, 3 * RECORD_FINDS_SLOTS);
        Corpus *corpus;
        SanQueue *q;
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        /* 10% of two workers' time: 200 ms a second, after the allowance. */
        cr_assert_eq(sanq_new(&q, &l, 10, 2, 1000), 0);

        WprocBatch b;
        cr_assert_eq(sanq_next(q, s, corpus, 1000, &b), 1, "the allowance at the start");
        sanq_batch_done(q, b.iters, SANQ_ALLOWANCE_MS + 1000);
        cr_assert_eq(sanq_next(q, s, corpus, 1000 + 4900, &b), 0, "1980 ms allowed, 2000 used");
        cr_assert_eq(sanq_next(q, s, corpus, 1000 + 5100, &b), 1, "2020 ms allowed");
        sanq_free(q);
        corpus_free(corpus);
        schedule_free(s);
}
