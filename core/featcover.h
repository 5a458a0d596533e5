/*
 * A small set of inputs that together reach every feature of a larger set:
 * the choice of `snapfuzz merge` (engine/merge.c) and of the files kept in
 * OUT/corpus (core/corpus.c, corpus_disk_cover), made by one piece of code.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* holders[f] of a feature reached by an input that stays whatever the
 * choice (the output corpus's own files, an input whose features are not
 * all known). */
#define FEATCOVER_PINNED UINT32_MAX

/* Candidate @i's features (ids below the holders array's length, each
 * once): *@ret_n of them. */
typedef const uint32_t *(*FeatcoverList)(const void *ctx, size_t i, uint32_t *ret_n);

/* Marks @holders[f] = FEATCOVER_PINNED for every feature of a list. */
void featcover_pin(uint32_t *holders, const uint32_t *ft, uint32_t n);

/*
 * Goes through the candidates in @order (@n of them, the preferred first:
 * the shortest, in both callers), keeping one when it reaches a feature no
 * kept one does; then, last first, drops a kept one when every feature it
 * reaches has another keeper. @holders counts, per feature, the kept
 * candidates reaching it (pinned ones stay pinned); @keep is indexed by
 * candidate and starts false. Returns how many are kept.
 */
size_t featcover_select(const size_t *order, size_t n, FeatcoverList list, const void *ctx,
                        uint32_t *holders, bool *keep);
