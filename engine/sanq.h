/*
 * The sanitizer build's queue (--sanitizer-target): what the worker that
 * runs the AddressSanitizer/UBSan build of the target checks, while the
 * other workers fuzz the plain build at its own speed.
 *
 * It checks, in this order: every seed (the schedule's, including inputs
 * from other instances), every input that joined the corpus (new coverage
 * of the plain build), and a sample of the fuzzing inputs: the last chain
 * of each fuzz batch that ended normally, rebuilt from its worker's replay
 * record (worker/batch.h), as long as there is room for them. Samples that
 * find no room are dropped; seeds and corpus entries never are, they wait.
 *
 * The sanitizer worker's time is bounded: a batch is handed out only while
 * the time its batches took stays under the share (a percentage) of the
 * fuzzing workers' time, plus a short allowance at the start. Inputs go as
 * seed-mode lists (RECORD_MODE_SEEDS), so a crash in the sanitizer build is
 * rebuilt by recovery from the list like any seed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/corpus.h"
#include "engine/schedule.h"
#include "snapfuzz/record.h"
#include "worker/wproc.h"

/* The time the sanitizer worker may run ahead of its share: the seeds and
 * the first finds are checked at once. */
#define SANQ_ALLOWANCE_MS 1000

typedef struct SanQueue SanQueue;

/* A queue for records of @layout whose worker may take @share_pct percent
 * of @n_workers fuzzing workers' time. 0 or -ENOMEM. */
int sanq_new(SanQueue **ret, const RecordLayout *layout, unsigned share_pct, unsigned n_workers,
             int64_t now_ms);
void sanq_free(SanQueue *q);

/* Corpus entry @i joined the corpus with new coverage: it is checked
 * after the entries before it. 0 or -ENOMEM. */
int sanq_add_entry(SanQueue *q, size_t i);

/* A plain worker's fuzz batch ended without a death: samples the inputs of
 * its last chain from the record at @region (no custom mutator: a record
 * that needs one is skipped). */
void sanq_sample(SanQueue *q, const void *region);

/* The next batch for the sanitizer worker into @ret (pointing into the
 * queue, the schedule and the corpus until the next call): 1 when there is
 * one and the share allows it at @now_ms, else 0 (the worker idles). */
int sanq_next(SanQueue *q, const Schedule *sched, const Corpus *corpus, int64_t now_ms,
              WprocBatch *ret);

/* The batch sanq_next handed out ended after @count inputs in @ms. */
void sanq_batch_done(SanQueue *q, uint64_t count, double ms);

/* Inputs the sanitizer build ran. */
uint64_t sanq_checked(const SanQueue *q);

/* "sanitizer_checked", "sanitizer_seeds", "sanitizer_corpus",
 * "sanitizer_samples", "sanitizer_samples_dropped", "sanitizer_busy_s"
 * into @stats. NULL @q: nothing. */
void sanq_add_stats(const SanQueue *q, cJSON *stats);

/* One line for the end of the run: what the sanitizer build checked. */
void sanq_summary(const SanQueue *q, const char *target);
