/*
 * The corpus writer: new corpus entries go to OUT/corpus through a write
 * queue (core/writeq.h), and none is dropped when the disk misbehaves. A
 * write that fails is held in memory and retried; if OUT/corpus stays
 * unwritable for CORPUSW_RESCUE_AFTER_MS, the entries go to a rescue
 * directory named on screen; if nothing can be written there either, the
 * run is told to stop, and the entries still in memory are counted lost.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define CORPUSW_RESCUE_AFTER_MS 10000

typedef struct CorpusWriter CorpusWriter;

/* Starts writing into @corpus_dir (OUT/corpus, which must exist). Returns
 * 0 or a negative errno after one line for a person. */
int corpusw_new(CorpusWriter **ret, const char *corpus_dir);
void corpusw_free(CorpusWriter *w);

/* Queues an entry under its content's name. Returns 0, or a negative errno
 * when it could not even be kept in memory (it is then counted lost). */
int corpusw_put(CorpusWriter *w, const uint8_t *data, size_t len);

/* Queues the removal of the file of an entry a shorter one replaced. */
void corpusw_remove(CorpusWriter *w, const uint8_t *data, size_t len);

/* From the main loop: says when writes start or stop failing, moves to the
 * rescue directory when it is time. Returns false when nothing can be
 * written anywhere and the run should stop. */
bool corpusw_check(CorpusWriter *w);

/* At the end of a run: writes what is held (to the rescue directory if
 * OUT/corpus still fails) and says what is stored, rescued and lost.
 * Returns 0, or -EIO when entries were lost. */
int corpusw_finish(CorpusWriter *w);

/* stats.json: corpus_pending, corpus_lost, corpus_rescue_dir. */
void corpusw_add_stats(CorpusWriter *w, cJSON *stats);
