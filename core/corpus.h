/*
 * The corpus: inputs that reached new coverage, kept in memory for
 * scheduling and on disk under OUT/corpus/<sha1> (content-addressed,
 * written atomically), so a later run resumes from them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Picks an entry to mutate; favours recent finds. Undefined when empty. */
size_t corpus_pick(const Corpus *c, SfPrng *rng);

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
