/*
 * The corpus: inputs that reached new coverage, kept in memory for
 * scheduling and on disk under OUT/corpus/<sha1> (content-addressed,
 * written atomically), so a later run resumes from them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapfuzz/prng.h"

typedef struct Corpus Corpus;

/* @dir is where new entries are persisted (created if missing); NULL keeps
 * the corpus in memory only. */
int corpus_new(Corpus **ret, const char *dir);
void corpus_free(Corpus *c);

/* Adds an input unless the same bytes are already in. Returns 1 when added,
 * 0 for a duplicate, or a negative errno (the entry is then not added). */
int corpus_add(Corpus *c, const uint8_t *data, size_t len, bool persist);

size_t corpus_size(const Corpus *c);
const uint8_t *corpus_get(const Corpus *c, size_t i, size_t *ret_len);

/* The scheduler before energy: uniform, plus a quarter of the picks from
 * the newest eighth. Kept for comparison (SNAPFUZZ_SCHEDULE=legacy).
 * Undefined when empty. */
size_t corpus_pick(const Corpus *c, SfPrng *rng);

/*
 * Scheduling by energy. Each entry may be given its coverage features (ids
 * of (counter, hit-count bucket) pairs, as the runner writes them, see
 * RecordFindFeatures). From them the corpus keeps, for every feature, the
 * best input reaching it: the shortest, then the fastest, then the oldest.
 *
 * - An entry whose features are all known and all have a better input is
 *   superseded: it is never picked again (it stays in memory; the engine
 *   removes its file from the output corpus, as libFuzzer deletes an input
 *   that is no longer the smallest for any feature).
 *   Entries whose features are unknown or truncated are never superseded.
 * - Favoured entries are a small cover of every feature, as AFL culls its
 *   queue: going through the features in the order they were first seen,
 *   one that no favoured entry reaches yet makes its best entry favoured
 *   (redone whenever the corpus changed).
 * - The energy of an active entry is the product of: how rare its features
 *   are (1 + the sum over its features of 1 / the number of active entries
 *   reaching it, at most 9), its length and its speed against the active
 *   entries' mean (each 2r/(1+r), at least 0.1), twice for a favoured one,
 *   twice before its first batch, and 4/(4+b) (at least 0.05) after b
 *   batches in a row that found nothing.
 * Picks are random in proportion to energy.
 */

/* Gives entry @i its features. @complete: @ids holds all of them (else the
 * entry is never superseded). @exec_ns: one execution's time (0: unknown).
 * Call once per entry. Returns 0 or -ENOMEM. */
int corpus_set_features(Corpus *c, size_t i, const uint32_t *ids, size_t n, bool complete,
                        uint64_t exec_ns);
/* Entries that stopped being the best input for any of their features
 * (each once, in no particular order; seeds never): up to @cap indices
 * into @ids, taken off the list. Whether one is superseded also depends on the seed rules:
 * ask corpus_is_active. */
size_t corpus_take_superseded(Corpus *c, uint32_t *ids, size_t cap);
/* Entry @i's execution time as corpus_set_features got it (0: unknown). */
uint64_t corpus_exec_ns(const Corpus *c, size_t i);

/* Picks an entry to mutate, in proportion to energy; a partner for
 * crossover, uniformly among active entries. Undefined when empty. */
size_t corpus_schedule(Corpus *c, SfPrng *rng);
/* @n picks as corpus_schedule makes them (with repeats), into @ret, for
 * one pass over the corpus. Returns @n. */
size_t corpus_schedule_many(Corpus *c, SfPrng *rng, size_t *ret, size_t n);
size_t corpus_pick_partner(Corpus *c, SfPrng *rng);

/* Feedback from a batch that mutated entry @i: @execs executions, @finds
 * inputs with new coverage. */
void corpus_note_batch(Corpus *c, size_t i, uint64_t execs, uint64_t finds);

/* The features entry @i is the best input for (ids, as the runner writes
 * them), into @ids: what an input must reach to stand in for it (a
 * reduction, RecordBaseKeys). Returns their number, or 0 when its features
 * are not all known or it is the best for more than @cap. */
size_t corpus_best_features(const Corpus *c, size_t i, uint32_t *ids, size_t cap);
/* Entry @i reaches every feature entry @from is the best for, in fewer
 * bytes (a reduction): it takes over @from's batch history, so that it is
 * not picked as a new entry would be. (Its features, once set, supersede
 * @from.) */
void corpus_inherit(Corpus *c, size_t i, size_t from);

bool corpus_is_active(Corpus *c, size_t i);
bool corpus_is_favored(Corpus *c, size_t i);
double corpus_energy(Corpus *c, size_t i);
size_t corpus_active_count(Corpus *c);
size_t corpus_favored_count(Corpus *c);
/* The same figures for a report, without changing the schedule: the
 * active entries now, the favoured ones as of the last recompute. (A
 * recompute forced by a report on the clock would change when the energies
 * are next computed, and so a seeded run's picks.) */
void corpus_report_counts(const Corpus *c, size_t *active, size_t *favored);

/* A file found in a seed directory. */
typedef struct CorpusSeed {
        char *path;
        uint8_t *data;
        size_t len;
} CorpusSeed;

/* Reads every regular file directly in @dir (sorted by name, so runs are
 * repeatable), up to @max_len bytes each (longer files are truncated and
 * counted in *ret_truncated). Appends to *seeds / *n. Returns 0 or -errno. */
int corpus_read_dir(const char *dir, size_t max_len, CorpusSeed **seeds, size_t *n,
                    size_t *ret_truncated);
void corpus_seeds_free(CorpusSeed *seeds, size_t n);

/* Marks entry @i as a seed: an input the run started from. Seeds stay
 * crossover partners (corpus_pick_partner) after shorter inputs took
 * their place as bases. Returns 0 or -ENOMEM. */
int corpus_mark_seed(Corpus *c, size_t i);

/* libFuzzer's -keep_seed=1: seeds are never superseded, they stay bases
 * with the energy of any active entry. */
void corpus_set_keep_seeds(Corpus *c, bool keep);

/* Whether a file in the output corpus holds entry @i: an entry replaced by
 * a shorter one has its file removed (as libFuzzer's REDUCE does), so the
 * output corpus holds what the schedule uses. */
void corpus_mark_on_disk(Corpus *c, size_t i, bool on_disk);
bool corpus_on_disk(const Corpus *c, size_t i);

/* What corpus_disk_cover wants of an entry's file. */
enum {
        CORPUS_COVER_NONE = 0, /* not its business: never had a file, or superseded */
        CORPUS_COVER_OUT,      /* other files cover its features: its file can go */
        CORPUS_COVER_IN,       /* a file must hold it */
};

/*
 * The files OUT/corpus needs so that a run resumed from it reaches every
 * feature its entries reach, chosen as `snapfuzz merge` chooses (and
 * libFuzzer's -merge=1): among the entries that have or had a file and are
 * active or seeds, the shortest first (more features first on a tie, then
 * the older), each kept when it reaches a feature no kept one does; then,
 * longest first, a kept one goes when every feature it reaches has another
 * keeper. An entry whose features are not all known is always kept. Sets
 * @want[i] (CORPUS_COVER_*) for every entry (@want holds corpus_size());
 * returns how many are kept, or -ENOMEM. The entries all stay in the
 * schedule: this only decides which of them have files.
 */
ssize_t corpus_disk_cover(Corpus *c, uint8_t *want);
