/*
 * Batch scheduling: what the coordinator gives an idle worker next. First
 * the seeds (the warm-up pass: lists of seeds, one per iteration, or a seed
 * as long as the record's base alone), then fuzz batches that mutate a
 * packed list of corpus entries picked by energy, each for about
 * SCHEDULE_EXECS_PER_BASE executions, with as many crossover partners. A
 * batch lasts about SCHEDULE_BATCH_MS at the worker's measured speed.
 *
 * The schedule owns the seeds, the PRNG that picks entries and the
 * mutation schedule (core/mutsched.h); the corpus is the caller's. A
 * worker's SchedulePlan is what it was given and how fast it ran it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/corpus.h"
#include "core/mutsched.h"
#include "snapfuzz/record.h"
#include "worker/wproc.h"

/* Iterations of a chain: the PRNG slot is saved at each chain's start. Can
 * be set at build time (-D...) for A/B runs (bench/real/one.sh). */
#ifndef COORD_CHAIN_LEN
#define COORD_CHAIN_LEN 4
#endif
#define SCHEDULE_CHAIN_LEN COORD_CHAIN_LEN

/* What one worker was given, and its speed on fuzz batches. */
typedef struct SchedulePlan {
        bool seed_batch;
        size_t seed_lo, seed_hi; /* a seed batch: the seeds it runs */
        /* A fuzz batch: the corpus entries it mutates, and how many of its
         * finds each one's chains made. */
        size_t bases[RECORD_PACK_MAX];
        uint32_t base_finds[RECORD_PACK_MAX];
        unsigned n_bases;
        uint64_t iters;
        double rate;        /* executions per millisecond, from the last batch */
        double overhead_ms; /* what a batch costs beyond its loop (decaying mean) */
} SchedulePlan;

typedef struct Schedule Schedule;

/* A schedule for @n_workers workers over records of @layout, whose PRNG
 * starts from @seed. It takes the seeds (corpus_read_dir's array, at least
 * one entry): *@seeds is cleared. SNAPFUZZ_SCHEDULE=legacy in the
 * environment selects the scheduler before energy (uniform picks, no
 * packing), for comparisons. Returns 0 or -ENOMEM. */
int schedule_new(Schedule **ret, const RecordLayout *layout, uint64_t seed, CorpusSeed **seeds,
                 size_t n_seeds, unsigned n_workers);
void schedule_free(Schedule *s);

/* Batch lengths that do not follow the clock (a reproducible run: --seed
 * with one worker). The adaptive length follows the worker's measured
 * speed; a deterministic one is SCHEDULE_DET_ITERS, cut to about
 * SCHEDULE_BATCH_MS at the speed its bases' corpus_exec_ns() say, which
 * the caller then fills with a cost that is a function of the input alone
 * (the coordinator's work estimate). The sequence of batches, and so of
 * inputs, is then a function of the seed. */
#define SCHEDULE_DET_ITERS 8192u
void schedule_set_deterministic(Schedule *s, bool on);

/* The next batch for a worker: fills @ret (pointing into the schedule, the
 * corpus and @table until the next call) and @plan; at most @max_iters
 * iterations (0: no limit). */
void schedule_next(Schedule *s, Corpus *corpus, const uint8_t *table, size_t table_len,
                   uint64_t max_iters, SchedulePlan *plan, WprocBatch *ret);

/* The corpus entry whose chain made the find at @iteration of the batch
 * @plan describes, or SIZE_MAX (a seed batch, a find without a base). */
size_t schedule_find_base(const SchedulePlan *plan, uint64_t iteration);

/* A batch ended after @count executions in @ms (@loop_ms of them in the
 * runner's loop; 0: unknown): updates the worker's speed, the mutation
 * schedule and the bases' energy, and puts back the seeds a seed batch did
 * not reach. @h is the batch's record header. */
void schedule_batch_done(Schedule *s, Corpus *corpus, SchedulePlan *plan, const RecordHeader *h,
                         uint64_t count, double ms, double loop_ms);

/* How long a fuzz batch of the worker @plan describes is meant to last. */
double schedule_batch_ms(const Schedule *s, const SchedulePlan *plan);

bool schedule_seeds_left(const Schedule *s);
size_t schedule_n_seeds(const Schedule *s);

/* Appends @n seeds (inputs from other instances, engine/sync.h): they run
 * after the seeds already planned, before the next fuzz batch. Takes the
 * array and its entries; on failure (-ENOMEM) the caller keeps them. */
int schedule_add_seeds(Schedule *s, CorpusSeed *seeds, size_t n);
/* Appends @len bytes to a list of inputs (record_seed_at's format) of
 * @cap bytes filled to *@used; false when they do not fit. */
bool schedule_list_put(uint8_t *list, size_t cap, size_t *used, const uint8_t *data, size_t len);

/* Seed @i (its path is where it came from), or NULL past the last. */
const CorpusSeed *schedule_seed(const Schedule *s, size_t i);
bool schedule_legacy(const Schedule *s);
const MutSched *schedule_mutsched(const Schedule *s);
