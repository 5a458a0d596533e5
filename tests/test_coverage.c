/*
 * coverage_scan, as the runner's loop uses it: which executions report new
 * coverage, and that every scan leaves the counters zeroed. Registered
 * counters are plain arrays standing in for a target's.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/coverage.h"

#define N_COUNTERS 203 /* not a multiple of 8: the tail is scanned byte by byte */

static uint8_t counters[N_COUNTERS];

static CoverageShared *fresh_map(void)
{
        int fd = coverage_shared_create();
        cr_assert_geq(fd, 0);
        CoverageShared *s = NULL;
        cr_assert_eq(coverage_shared_map(fd, &s), 0);
        close(fd);
        return s;
}

static void setup(void)
{
        coverage_register_counters(counters, counters + N_COUNTERS);
}

static bool all_zero(void)
{
        for (size_t i = 0; i < N_COUNTERS; i++)
                if (counters[i])
                        return false;
        return true;
}

Test(coverage, the_same_path_again_is_nothing_new_but_more_hits_are, .init = setup)
{
        CoverageShared *s = fresh_map();

        counters[10] = 1;
        counters[100] = 1;
        cr_expect_eq(coverage_scan(s), 2, "two edges seen for the first time");
        cr_expect(all_zero(), "the scan zeroes what it read");

        for (int run = 0; run < 3; run++) {
                counters[10] = 1;
                counters[100] = 1;
                cr_expect_eq(coverage_scan(s), 0, "the same hits again (run %d)", run);
        }

        counters[10] = 5; /* a loop taken more often: another bucket */
        counters[100] = 1;
        cr_expect_eq(coverage_scan(s), 1);
        counters[10] = 6; /* the same bucket as 5 */
        counters[100] = 1;
        cr_expect_eq(coverage_scan(s), 0);

        counters[N_COUNTERS - 1] = 1; /* in the tail */
        cr_expect_eq(coverage_scan(s), 1);
        cr_expect(all_zero());
        cr_expect_eq(s->edges, 3);
        coverage_shared_unmap(s);
}

Test(coverage, hits_merged_into_one_map_are_new_to_another, .init = setup)
{
        CoverageShared *a = fresh_map(), *b = fresh_map();

        counters[40] = 2;
        cr_expect_eq(coverage_scan(a), 1);
        counters[40] = 2;
        cr_expect_eq(coverage_scan(a), 0);

        /* Another run's map knows nothing of what the first one saw. */
        counters[40] = 2;
        cr_expect_eq(coverage_scan(b), 1);
        counters[40] = 2;
        cr_expect_eq(coverage_scan(b), 0);
        coverage_shared_unmap(a);
        coverage_shared_unmap(b);
}

/* The scan classifies 64 counters at a time (in vector registers where the
 * CPU has them); every hit count must land in the bucket the table gives,
 * wherever it sits: new when every other bucket was seen, not new when its
 * own was. */
static void every_hit_count_lands_in_its_bucket(void)
{
        CoverageShared *s = fresh_map();

        for (unsigned h = 1; h < 256; h++) {
                uint8_t bucket = coverage_bucket((uint8_t)h);
                for (size_t at = 0; at < N_COUNTERS; at++) {
                        s->seen[at] = (uint8_t)~bucket;
                        counters[at] = (uint8_t)h;
                        cr_assert_eq(coverage_scan(s), 1, "hits %u at %zu: other buckets seen", h,
                                     at);
                        s->seen[at] = bucket;
                        counters[at] = (uint8_t)h;
                        cr_assert_eq(coverage_scan(s), 0, "hits %u at %zu: its bucket seen", h, at);
                        cr_assert(all_zero(), "hits %u at %zu: counters zeroed", h, at);
                }
        }
        coverage_shared_unmap(s);
}

Test(coverage, every_hit_count_lands_in_its_bucket, .init = setup)
{
        every_hit_count_lands_in_its_bucket();
}

/* The same with the scan in general registers, as on a CPU without AVX2. */
Test(coverage, every_hit_count_lands_in_its_bucket_without_vectors, .init = setup)
{
        cr_assert_not(coverage_use_vectors(false));
        every_hit_count_lands_in_its_bucket();
}

/* The features of one execution, as a find hands them back: every counter
 * hit, in order, with its bucket, wherever it sits among zero blocks. */
Test(coverage, an_execution_s_features_are_listed_in_order, .init = setup)
{
        static const size_t at[] = {0, 63, 128, 130, 191, 192, N_COUNTERS - 1};
        static const uint8_t hits[] = {1, 3, 200, 2, 9, 1, 40};
        const size_t n_at = sizeof(at) / sizeof(at[0]);
        CoverageShared *s = fresh_map();
        uint32_t ids[16];
        size_t n = 0;

        for (size_t k = 0; k < n_at; k++)
                counters[at[k]] = hits[k];
        cr_expect_eq(coverage_collect(s, ids, 16, &n), n_at, "all new");
        cr_assert_eq(n, n_at);
        for (size_t k = 0; k < n_at; k++)
                cr_expect_eq(ids[k], at[k] * 8 + (unsigned)__builtin_ctz(coverage_bucket(hits[k])),
                             "feature %zu", k);
        cr_expect(all_zero(), "collect zeroes what it read");

        /* The same again: nothing new, the same list; a cap only cuts it. */
        for (size_t k = 0; k < n_at; k++)
                counters[at[k]] = hits[k];
        cr_expect_eq(coverage_collect(s, ids, 2, &n), 0);
        cr_expect_eq(n, n_at);
        cr_expect_eq(ids[1], 63 * 8 + 2);
        coverage_shared_unmap(s);
}

/* A feedback map whose writer marks the 64-counter blocks it writes (the
 * value profile's, worker/cmplog.h): after the target's counters, with a
 * short last block. */
#define N_SPARSE 200

static uint8_t sparse[N_SPARSE];
static uint64_t sparse_marks[1];

static void setup_sparse(void)
{
        coverage_register_counters(counters, counters + N_COUNTERS);
        coverage_register_sparse_features(sparse, sparse + N_SPARSE, sparse_marks);
}

Test(coverage, a_sparse_map_is_read_in_the_blocks_its_writer_marked, .init = setup_sparse)
{
        CoverageShared *s = fresh_map();

        counters[5] = 1;
        sparse[70] = 1;  /* block 1 */
        sparse[199] = 1; /* the short block 3 */
        sparse_marks[0] = 1u << 1 | 1u << 3;
        cr_expect_eq(coverage_scan(s), 3, "an edge and two features");
        cr_expect_eq(s->edges, 1, "a feedback map's counters are not edges");
        cr_expect_eq(sparse_marks[0], 0, "the marks are taken");
        cr_expect(sparse[70] == 0 && sparse[199] == 0, "the marked blocks are zeroed");

        sparse[70] = 1;
        sparse_marks[0] = 1u << 1;
        cr_expect_eq(coverage_scan(s), 0, "the same feature again is nothing new");
        sparse[70] = 4;
        sparse_marks[0] = 1u << 1;
        cr_expect_eq(coverage_scan(s), 1, "another bucket of the same counter is");

        /* An input's list of features names the map's counters after the
         * target's. */
        uint32_t ids[4];
        size_t n = 0;
        sparse[130] = 3;
        sparse_marks[0] = 1u << 2;
        cr_expect_eq(coverage_collect(s, ids, 4, &n), 1);
        cr_assert_eq(n, 1);
        cr_expect_eq(ids[0], (N_COUNTERS + 130) * 8 + (unsigned)__builtin_ctz(coverage_bucket(3)));
        cr_expect_eq(sparse_marks[0], 0);
        cr_expect_eq(sparse[130], 0);

        sparse[10] = 1;
        sparse_marks[0] = 1;
        coverage_clear();
        cr_expect(sparse[10] == 0 && sparse_marks[0] == 0, "a clear takes values and marks");
        coverage_shared_unmap(s);
}
