/*
 * The corpus's scheduling: an input whose features smaller (or as small and
 * faster) inputs all reach is no longer picked, inputs that reach rare
 * features get more energy, the favoured set is a cover smaller than the
 * active one, batches that find nothing lower an input's energy, and picks
 * follow energy. Plus what it had before: content addressing and the files
 * under the corpus directory.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/corpus.h"

/* Adds an input of @len bytes (distinct per @tag) with features @ids. */
static size_t add(Corpus *c, uint8_t tag, size_t len, const uint32_t *ids, size_t n,
                  uint64_t exec_ns, bool complete)
{
        uint8_t buf[256];
        cr_assert(len >= 1 && len <= sizeof(buf));
        memset(buf, tag, len);
        cr_assert_eq(corpus_add(c, buf, len, true), 1, "input %u not added", tag);
        size_t i = corpus_size(c) - 1;
        cr_assert_eq(corpus_set_features(c, i, ids, n, complete, exec_ns), 0);
        return i;
}

static Corpus *mem_corpus(void)
{
        Corpus *c;
        cr_assert_eq(corpus_new(&c, NULL), 0);
        return c;
}

/* How often each entry is picked in @draws picks. */
static void pick_counts(Corpus *c, unsigned draws, unsigned *counts)
{
        SfPrng rng;
        prng_seed(&rng, 42, 7);
        memset(counts, 0, corpus_size(c) * sizeof(unsigned));
        for (unsigned k = 0; k < draws; k++) {
                size_t i = corpus_schedule(c, &rng);
                cr_assert_lt(i, corpus_size(c));
                counts[i]++;
        }
}

Test(corpus, an_input_covered_by_a_smaller_one_is_never_picked)
{
        Corpus *c = mem_corpus();
        const uint32_t big[] = {8, 16, 24};
        const uint32_t small[] = {8, 16, 24, 33};
        size_t a = add(c, 'a', 100, big, 3, 1000, true);
        cr_expect(corpus_is_active(c, a), "alone, it is the best input for its features");
        size_t b = add(c, 'b', 20, small, 4, 1000, true);
        cr_expect_not(corpus_is_active(c, a), "every feature of A has the smaller B");
        cr_expect(corpus_is_active(c, b));
        cr_expect_eq(corpus_active_count(c), 1);
        cr_expect_eq(corpus_size(c), 2, "superseded entries stay in the corpus");
        cr_expect_eq(corpus_energy(c, a), 0);

        unsigned counts[2];
        pick_counts(c, 2000, counts);
        cr_expect_eq(counts[a], 0, "the superseded input was picked %u times", counts[a]);
        cr_expect_eq(counts[b], 2000);
        SfPrng rng;
        prng_seed(&rng, 1, 1);
        for (int k = 0; k < 200; k++)
                cr_expect_eq(corpus_pick_partner(c, &rng), b, "partners come from active entries");
        corpus_free(c);
}

/* The engine removes the file of every entry listed here: an entry is
 * listed once, when better inputs hold all of its features, and never
 * while it is still the best for one. */
Test(corpus, an_input_whose_every_feature_has_a_better_one_is_listed_once)
{
        Corpus *c = mem_corpus();
        const uint32_t ab[] = {1, 2}, a1[] = {1, 7}, a2[] = {2}, partial[] = {1, 2};
        uint32_t gone[8];
        size_t big = add(c, 'a', 100, ab, 2, 1000, true);
        size_t open = add(c, 'o', 120, partial, 2, 1000, false);
        size_t b = add(c, 'b', 50, a1, 2, 1000, true);
        cr_expect_eq(corpus_take_superseded(c, gone, 8), 0, "A is still the best for feature 2");
        size_t cc = add(c, 'c', 40, a2, 1, 1000, true);
        cr_assert_eq(corpus_take_superseded(c, gone, 8), 1);
        cr_expect_eq(gone[0], big, "A, whose two features have shorter inputs now");
        cr_expect_not(corpus_is_active(c, big));
        cr_expect(corpus_is_active(c, open), "features not all known: never superseded");
        (void)add(c, 'd', 10, ab, 2, 1000, true);
        cr_assert_eq(corpus_take_superseded(c, gone, 8), 1, "A is not listed again");
        cr_expect_eq(gone[0], cc, "C: D is shorter for feature 2");
        cr_expect(corpus_is_active(c, b), "B keeps feature 7 of its own");
        corpus_free(c);
}

Test(corpus, a_feature_of_its_own_keeps_a_larger_input)
{
        Corpus *c = mem_corpus();
        const uint32_t big[] = {8, 16, 24, 99};
        const uint32_t small[] = {8, 16, 24};
        size_t a = add(c, 'a', 100, big, 4, 1000, true);
        size_t b = add(c, 'b', 20, small, 3, 1000, true);
        cr_expect(corpus_is_active(c, a), "A alone reaches feature 99");
        cr_expect(corpus_is_active(c, b));
        cr_expect_eq(corpus_active_count(c), 2);
        corpus_free(c);
}

Test(corpus, equal_size_the_faster_input_wins)
{
        Corpus *c = mem_corpus();
        const uint32_t f[] = {5, 6};
        size_t slow = add(c, 's', 10, f, 2, 5000, true);
        size_t fast = add(c, 'f', 10, f, 2, 1000, true);
        cr_expect_not(corpus_is_active(c, slow));
        cr_expect(corpus_is_active(c, fast));
        /* And with the same speed too, the older input stays. */
        size_t same = add(c, 'x', 10, f, 2, 1000, true);
        cr_expect_not(corpus_is_active(c, same));
        cr_expect(corpus_is_active(c, fast));
        corpus_free(c);
}

Test(corpus, inputs_with_unknown_or_truncated_features_are_never_superseded)
{
        Corpus *c = mem_corpus();
        uint8_t raw[64];
        memset(raw, 'u', sizeof(raw));
        cr_assert_eq(corpus_add(c, raw, sizeof(raw), false), 1);
        size_t unknown = 0;
        const uint32_t f[] = {1, 2};
        size_t partial = add(c, 'p', 50, f, 2, 1000, false);
        size_t best = add(c, 'b', 5, f, 2, 10, true);
        cr_expect(corpus_is_active(c, unknown), "no features known: kept");
        cr_expect(corpus_is_active(c, partial), "only some features known: kept");
        cr_expect(corpus_is_active(c, best));
        cr_expect_gt(corpus_energy(c, unknown), 0);
        corpus_free(c);
}

Test(corpus, rare_features_get_more_energy)
{
        /* B and C differ only in that B alone reaches feature 10, while C's
         * own feature 11 is also reached by D: same length, same speed,
         * both favoured. */
        Corpus *c = mem_corpus();
        const uint32_t fa[] = {1, 2};
        const uint32_t fb[] = {1, 2, 3, 10};
        const uint32_t fc[] = {1, 2, 3, 11};
        const uint32_t fd[] = {1, 2, 4, 11};
        size_t a = add(c, 'a', 8, fa, 2, 100, true);
        size_t b = add(c, 'b', 16, fb, 4, 100, true);
        size_t cc = add(c, 'c', 16, fc, 4, 100, true);
        size_t d = add(c, 'd', 16, fd, 4, 100, true);
        for (size_t i = 0; i < 4; i++)
                cr_assert(corpus_is_active(c, i), "entry %zu", i);
        cr_expect(corpus_is_favored(c, b));
        cr_expect(corpus_is_favored(c, cc));
        cr_expect_gt(corpus_energy(c, b), corpus_energy(c, cc) * 1.1, "B %f, C %f",
                     corpus_energy(c, b), corpus_energy(c, cc));

        unsigned counts[4];
        pick_counts(c, 20000, counts);
        cr_expect_gt(counts[b], counts[cc] * 11 / 10, "B picked %u times, C %u", counts[b],
                     counts[cc]);
        (void)a;
        (void)d;
        corpus_free(c);
}

Test(corpus, small_and_fast_inputs_get_more_energy)
{
        Corpus *c = mem_corpus();
        const uint32_t f1[] = {1}, f2[] = {2}, f3[] = {3};
        size_t small = add(c, 's', 10, f1, 1, 1000, true);
        size_t large = add(c, 'l', 200, f2, 1, 1000, true);
        size_t slow = add(c, 'w', 10, f3, 1, 100000, true);
        cr_expect_gt(corpus_energy(c, small), 1.5 * corpus_energy(c, large));
        cr_expect_gt(corpus_energy(c, small), 2 * corpus_energy(c, slow));
        corpus_free(c);
}

Test(corpus, the_favoured_set_is_a_smaller_cover)
{
        /* A is best for 1 and 2, B for 3, C for 4 and 5: all active. Going
         * through the features in order, A covers 1..3 and C covers 4..5,
         * so B is active but not favoured. */
        Corpus *c = mem_corpus();
        const uint32_t fa[] = {1, 2, 3};
        const uint32_t fb[] = {3, 4};
        const uint32_t fc[] = {4, 5};
        size_t a = add(c, 'a', 10, fa, 3, 100, true);
        size_t b = add(c, 'b', 5, fb, 2, 100, true);
        size_t cc = add(c, 'c', 3, fc, 2, 100, true);
        cr_expect_eq(corpus_active_count(c), 3);
        cr_expect_eq(corpus_favored_count(c), 2);
        cr_expect(corpus_is_favored(c, a));
        cr_expect_not(corpus_is_favored(c, b));
        cr_expect(corpus_is_favored(c, cc));
        cr_expect_gt(corpus_energy(c, a), corpus_energy(c, b));
        corpus_free(c);
}

Test(corpus, fruitless_batches_lower_energy_and_a_find_restores_it)
{
        Corpus *c = mem_corpus();
        const uint32_t f1[] = {1}, f2[] = {2};
        size_t x = add(c, 'x', 10, f1, 1, 100, true);
        size_t y = add(c, 'y', 10, f2, 1, 100, true);
        double fresh = corpus_energy(c, x);
        cr_expect_eq(fresh, corpus_energy(c, y));
        corpus_note_batch(c, x, 100000, 1);
        double after_find = corpus_energy(c, x);
        cr_expect_lt(after_find, fresh, "the bonus of an input never fuzzed is gone");
        for (int k = 0; k < 20; k++)
                corpus_note_batch(c, x, 100000, 0);
        double tired = corpus_energy(c, x);
        cr_expect_lt(tired, after_find / 4, "20 fruitless batches: %f against %f", tired,
                     after_find);
        cr_expect_gt(tired, 0, "never to zero");

        unsigned counts[2];
        pick_counts(c, 10000, counts);
        cr_expect_gt(counts[y], 10 * counts[x], "x %u, y %u", counts[x], counts[y]);

        corpus_note_batch(c, x, 100000, 2);
        cr_expect_eq(corpus_energy(c, x), after_find);
        corpus_free(c);
}

Test(corpus, picks_follow_energy)
{
        Corpus *c = mem_corpus();
        const uint32_t f1[] = {1}, f2[] = {2}, f3[] = {3};
        add(c, 'a', 10, f1, 1, 100, true);
        add(c, 'b', 100, f2, 1, 100, true);
        add(c, 'c', 40, f3, 1, 400, true);
        double e[3], total = 0;
        for (size_t i = 0; i < 3; i++)
                total += e[i] = corpus_energy(c, i);
        unsigned counts[3];
        pick_counts(c, 30000, counts);
        for (size_t i = 0; i < 3; i++) {
                double want = 30000 * e[i] / total;
                cr_expect(counts[i] > want * 0.9 && counts[i] < want * 1.1,
                          "entry %zu: %u picks, %f expected", i, counts[i], want);
        }
        corpus_free(c);
}

Test(corpus, duplicates_are_stored_once_and_known_inputs_are_not_written)
{
        char dir[] = "/tmp/sf-corpus-XXXXXX";
        cr_assert(mkdtemp(dir));
        Corpus *c;
        cr_assert_eq(corpus_new(&c, dir), 0);
        const uint8_t a[] = "abc", b[] = "seed";
        cr_expect_eq(corpus_add(c, a, 3, true), 1);
        cr_expect_eq(corpus_add(c, a, 3, true), 0);
        cr_expect_eq(corpus_add(c, b, 4, false), 1);
        cr_expect_eq(corpus_size(c), 2);
        corpus_free(c);

        DIR *d = opendir(dir);
        cr_assert(d);
        struct dirent *de;
        int files = 0;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.') {
                        files++;
                        char p[512];
                        snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
                        unlink(p);
                }
        closedir(d);
        rmdir(dir);
        cr_expect_eq(files, 1, "only the persisted input is a file");
}

Test(corpus, a_shorter_form_takes_over_its_base_and_supersedes_it)
{
        Corpus *c = mem_corpus();
        const uint32_t f[] = {3, 4, 5}, g[] = {9};
        size_t base = add(c, 'b', 200, f, 3, 100, true);
        size_t other = add(c, 'o', 10, g, 1, 100, true);
        /* What an input must reach to stand in for the base. */
        uint32_t ids[16];
        cr_assert_eq(corpus_best_features(c, base, ids, 16), 3);
        cr_expect(ids[0] == 3 && ids[1] == 4 && ids[2] == 5);
        cr_expect_eq(corpus_best_features(c, base, ids, 2), 0, "more than the runner checks");
        for (int k = 0; k < 20; k++)
                corpus_note_batch(c, base, 100000, 0);
        double tired = corpus_energy(c, base);

        /* The runner hands back a 10-byte input that reaches them. */
        uint8_t buf[10];
        memset(buf, 's', sizeof(buf));
        cr_assert_eq(corpus_add(c, buf, sizeof(buf), true), 1);
        size_t shorter = corpus_size(c) - 1;
        corpus_inherit(c, shorter, base);
        cr_assert_eq(corpus_set_features(c, shorter, f, 3, true, 100), 0);
        cr_expect_eq(corpus_best_features(c, base, ids, 16), 0, "the base is the best for none");
        cr_expect_eq(corpus_best_features(c, shorter, ids, 16), 3);

        cr_expect_not(corpus_is_active(c, base), "every feature has a shorter input now");
        cr_expect(corpus_is_active(c, shorter));
        /* Not picked as a new entry would be: it carries the base's 20
         * fruitless batches (the same length and speed as `other`, which
         * has none, it gets well under its energy). */
        cr_expect_lt(corpus_energy(c, shorter), corpus_energy(c, other) / 4,
                     "inherited %f, fresh %f (base was %f)", corpus_energy(c, shorter),
                     corpus_energy(c, other), tired);
        corpus_free(c);
}

Test(corpus, a_superseded_seed_is_still_a_crossover_partner_but_not_a_base)
{
        Corpus *c = mem_corpus();
        const uint32_t f[] = {8, 16};
        size_t seed = add(c, 's', 50, f, 2, 1000, true);
        cr_assert_eq(corpus_mark_seed(c, seed), 0);
        size_t shorter = add(c, 't', 5, f, 2, 1000, true);
        cr_expect_not(corpus_is_active(c, seed), "the shorter input supersedes the seed");

        unsigned counts[2];
        pick_counts(c, 1000, counts);
        cr_expect_eq(counts[seed], 0, "a superseded seed is no base");
        SfPrng rng;
        prng_seed(&rng, 3, 3);
        unsigned as_partner = 0;
        for (int k = 0; k < 1000; k++)
                as_partner += corpus_pick_partner(c, &rng) == seed;
        cr_expect_gt(as_partner, 300, "the seed is a partner in %u of 1000 picks", as_partner);
        cr_expect_lt(as_partner, 700);
        (void)shorter;
        corpus_free(c);
}

Test(corpus, keep_seeds_keeps_a_seed_a_base)
{
        Corpus *c = mem_corpus();
        corpus_set_keep_seeds(c, true);
        const uint32_t f[] = {8, 16};
        size_t seed = add(c, 's', 50, f, 2, 1000, true);
        cr_assert_eq(corpus_mark_seed(c, seed), 0);
        add(c, 't', 5, f, 2, 1000, true);
        cr_expect(corpus_is_active(c, seed), "a kept seed is never superseded");
        unsigned counts[2];
        pick_counts(c, 1000, counts);
        cr_expect_gt(counts[seed], 100, "a kept seed is picked as a base (%u of 1000)",
                     counts[seed]);
        corpus_free(c);
}

/* Applies a cover's choice as the coordinator does (cover_disk). */
static void apply_cover(Corpus *c, const uint8_t *want)
{
        for (size_t i = 0; i < corpus_size(c); i++)
                if (want[i] != CORPUS_COVER_NONE)
                        corpus_mark_on_disk(c, i, want[i] == CORPUS_COVER_IN);
}

Test(corpus, the_files_kept_are_a_small_cover_and_come_back_when_needed)
{
        Corpus *c = mem_corpus();
        const uint32_t fa[] = {1, 2}, fb[] = {3}, fc[] = {1, 2, 3, 4}, fd[] = {5}, fe[] = {6},
                       ff[] = {1, 3, 3}, fg[] = {4};
        size_t a = add(c, 'a', 4, fa, 2, 100, true);
        size_t b = add(c, 'b', 5, fb, 1, 100, true);
        size_t l = add(c, 'c', 40, fc, 4, 100, true); /* reaches all of them, and 4 */
        size_t d = add(c, 'd', 8, fd, 1, 100, false); /* features not all known */
        size_t e = add(c, 'e', 6, fe, 1, 100, true);  /* never had a file (a seed's) */
        size_t f = add(c, 'f', 50, ff, 3, 100, true); /* superseded by a and b */
        for (size_t i = 0; i < corpus_size(c); i++)
                if (i != e)
                        corpus_mark_on_disk(c, i, true);
        cr_assert_not(corpus_is_active(c, f));

        uint8_t want[8];
        cr_expect_eq(corpus_disk_cover(c, want), 2, "the long input and the unknown one");
        cr_expect_eq(want[l], CORPUS_COVER_IN);
        cr_expect_eq(want[d], CORPUS_COVER_IN, "nothing can stand in for unknown features");
        cr_expect_eq(want[a], CORPUS_COVER_OUT, "the long input reaches 1 and 2 too");
        cr_expect_eq(want[b], CORPUS_COVER_OUT, "the long input reaches 3 too");
        cr_expect_eq(want[e], CORPUS_COVER_NONE, "a file is never made for a seed's input");
        cr_expect_eq(want[f], CORPUS_COVER_NONE, "a superseded input's file is already gone");
        cr_expect(corpus_is_active(c, a) && corpus_is_active(c, b),
                  "inputs without files stay in the schedule");
        apply_cover(c, want);

        /* A shorter input takes 4 from the long one, which then holds
         * nothing: the short ones must hold 1, 2 and 3 again. */
        size_t g = add(c, 'g', 10, fg, 1, 100, true);
        corpus_mark_on_disk(c, g, true);
        cr_assert_not(corpus_is_active(c, l));
        cr_expect_eq(corpus_disk_cover(c, want), 4);
        cr_expect_eq(want[a], CORPUS_COVER_IN, "back: nothing else on disk reaches 1 and 2");
        cr_expect_eq(want[b], CORPUS_COVER_IN);
        cr_expect_eq(want[g], CORPUS_COVER_IN);
        cr_expect_eq(want[l], CORPUS_COVER_NONE);
        corpus_free(c);
}
