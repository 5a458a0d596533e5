/*
 * The batch schedule (engine/schedule.h): every seed runs before the first
 * fuzz batch, a seed batch that ends early puts back what it did not
 * reach, a budget cuts batches, and fuzz batches pack several corpus
 * entries whose lists are what the record replays.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/schedule.h"

static CorpusSeed *make_seeds(size_t n, size_t len)
{
        CorpusSeed *s = calloc(n, sizeof(*s));
        cr_assert(s);
        for (size_t i = 0; i < n; i++) {
                s[i].len = len;
                s[i].data = malloc(len ? len : 1);
                cr_assert(s[i].data);
                memset(s[i].data, (int)('a' + i % 26), len);
        }
        return s;
}

static RecordLayout layout_of(size_t max_len)
{
        RecordLayout l;
        cr_assert_eq(record_layout(max_len, &l), 0);
        return l;
}

/* Counts the entries of a seed list (record_seed_at's format). */
static size_t list_entries(const uint8_t *list, size_t len)
{
        size_t n = 0, at = 0;
        while (at + 4 <= len) {
                uint32_t l = (uint32_t)list[at] | (uint32_t)list[at + 1] << 8 |
                             (uint32_t)list[at + 2] << 16 | (uint32_t)list[at + 3] << 24;
                at += 4 + l;
                n++;
        }
        cr_assert_eq(at, len, "the list ends on an entry");
        return n;
}

Test(schedule, every_seed_runs_before_the_first_fuzz_batch)
{
        RecordLayout l = layout_of(4096);
        size_t n = 3 * RECORD_FINDS_SLOTS + 5;
        CorpusSeed *seeds = make_seeds(n, 16);
        Schedule *s;
        Corpus *corpus;
        cr_assert_eq(schedule_new(&s, &l, 1, &seeds, n, 1), 0);
        cr_assert_null(seeds, "the schedule took the seeds");
        cr_assert_eq(corpus_new(&corpus, NULL), 0);

        SchedulePlan p = {0};
        WprocBatch b;
        size_t run = 0;
        while (schedule_seeds_left(s)) {
                schedule_next(s, corpus, NULL, 0, 0, &p, &b);
                cr_assert_eq(b.mode, RECORD_MODE_SEEDS);
                cr_assert(p.seed_batch);
                cr_assert_eq(p.seed_lo, run, "seed batches follow each other");
                cr_assert_eq(list_entries(b.base, b.base_len), b.iters);
                cr_assert_leq(b.iters, RECORD_FINDS_SLOTS);
                run += b.iters;
                schedule_batch_done(s, corpus, &p, NULL, b.iters, 1, 0);
        }
        cr_expect_eq(run, n, "each seed ran once");
        cr_assert_eq(corpus_add(corpus, (const uint8_t *)"x", 1, false), 1);
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        cr_expect_eq(b.mode, RECORD_MODE_FUZZ);
        cr_expect(!p.seed_batch);
        corpus_free(corpus);
        schedule_free(s);
}

Test(schedule, a_seed_batch_that_ends_early_puts_back_the_seeds_it_did_not_reach)
{
        RecordLayout l = layout_of(4096);
        CorpusSeed *seeds = make_seeds(10, 8);
        Schedule *s;
        Corpus *corpus;
        cr_assert_eq(schedule_new(&s, &l, 2, &seeds, 10, 1), 0);
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        SchedulePlan p = {0};
        WprocBatch b;
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        cr_assert_eq(b.iters, 10);
        /* Seed 4 crashed: seeds 5..10 are run again, not lost. */
        schedule_batch_done(s, corpus, &p, NULL, 4, 1, 0);
        cr_assert(schedule_seeds_left(s));
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        cr_expect_eq(p.seed_lo, 4);
        cr_expect_eq(b.iters, 6);
        cr_expect_eq(b.base[4], 'e', "the batch starts at the fifth seed");
        corpus_free(corpus);
        schedule_free(s);
}

Test(schedule, a_budget_cuts_the_batch)
{
        RecordLayout l = layout_of(4096);
        CorpusSeed *seeds = make_seeds(1, 8);
        Schedule *s;
        Corpus *corpus;
        cr_assert_eq(schedule_new(&s, &l, 3, &seeds, 1, 1), 0);
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        cr_assert_eq(corpus_add(corpus, (const uint8_t *)"abc", 3, false), 1);
        SchedulePlan p = {0};
        WprocBatch b;
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        schedule_batch_done(s, corpus, &p, NULL, 1, 1, 0);
        schedule_next(s, corpus, NULL, 0, 7, &p, &b);
        cr_expect_eq(b.mode, RECORD_MODE_FUZZ);
        cr_expect_eq(b.iters, 7);
        cr_expect_eq(p.iters, 7, "the plan knows the cut length");
        corpus_free(corpus);
        schedule_free(s);
}

Test(schedule, a_seed_longer_than_the_base_area_runs_alone)
{
        RecordLayout l = layout_of(RECORD_MAX_LEN_LIMIT);
        size_t big = l.area_len; /* with its 4-byte length, more than the area */
        CorpusSeed *seeds = make_seeds(2, big);
        Schedule *s;
        Corpus *corpus;
        cr_assert_eq(schedule_new(&s, &l, 4, &seeds, 2, 1), 0);
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        SchedulePlan p = {0};
        WprocBatch b;
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        cr_expect_eq(b.mode, RECORD_MODE_EXEC);
        cr_expect_eq(b.iters, 1);
        cr_expect_eq(b.base_len, big);
        corpus_free(corpus);
        schedule_free(s);
}

Test(schedule, a_long_fuzz_batch_packs_several_entries_and_their_partners)
{
        RecordLayout l = layout_of(4096);
        CorpusSeed *seeds = make_seeds(1, 4);
        Schedule *s;
        Corpus *corpus;
        cr_assert_eq(schedule_new(&s, &l, 5, &seeds, 1, 1), 0);
        cr_assert_eq(corpus_new(&corpus, NULL), 0);
        for (int i = 0; i < 50; i++) {
                uint8_t in[8] = {(uint8_t)i, 1, 2, 3, 4, 5, 6, 7};
                cr_assert_eq(corpus_add(corpus, in, sizeof(in), false), 1);
        }
        SchedulePlan p = {0};
        WprocBatch b;
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        schedule_batch_done(s, corpus, &p, NULL, 1, 1, 0);
        /* A fast worker: 1000 executions a millisecond, a 20 ms batch. */
        p.rate = 1000;
        schedule_next(s, corpus, NULL, 0, 0, &p, &b);
        cr_assert_eq(b.mode, RECORD_MODE_FUZZ);
        cr_expect_gt(p.n_bases, 1, "%u bases", p.n_bases);
        cr_expect(b.packed);
        cr_expect_eq(list_entries(b.base, b.base_len), p.n_bases);
        cr_expect_eq(list_entries(b.partner, b.partner_len), p.n_bases);
        cr_assert_not_null(b.base_best);
        cr_expect_eq(b.base_best->n, p.n_bases);
        /* Each chain's find belongs to the base its chain mutated. */
        for (uint64_t k = 1; k <= 4 * p.n_bases; k++)
                cr_expect_eq(schedule_find_base(&p, k),
                             p.bases[(k - 1) / SCHEDULE_CHAIN_LEN % p.n_bases]);
        corpus_free(corpus);
        schedule_free(s);
}
