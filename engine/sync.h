/*
 * AFL++-style sync directories (`snapfuzz run --sync-dir DIR --name NAME`):
 * instances that share DIR, on one machine or on several over a network
 * filesystem, exchange the inputs that add coverage, in the layout AFL++
 * uses, so that afl-fuzz -M/-S instances take part in the same campaign.
 *
 *   DIR/NAME/queue/id:NNNNNN,...  what this instance found (or took from a
 *                                 peer and kept), numbered from 0 without
 *                                 gaps, never removed: AFL++ finds a peer's
 *                                 new files by the next id it expects
 *   DIR/NAME/.synced/PEER         the next id of PEER's queue to look at
 *                                 (four bytes, host order, as AFL++ writes
 *                                 it), written once those before it ran
 *   DIR/NAME/.lock                one instance per name
 *
 * A background thread does all the filesystem work (a scan of a slow or
 * hung network filesystem never stalls the event loop): every few seconds
 * it reads the peers' new queue files into an inbox; the coordinator's sync
 * phase hands them to the schedule as seeds, so they run in workers like
 * any seed, and only those that add coverage join the corpus (and are
 * exported in turn, as AFL++ exports what it imports).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/schedule.h"

/* Default seconds between two scans of the peers (--sync-every). */
#define SYNC_EVERY_S_DEFAULT 30
/* A peer's file changed less than this long ago may still be written
 * (afl-fuzz writes its queue files in place): it is read at a later scan. */
#define SYNC_SETTLE_MS 1000
/* Longest instance name (AFL++ allows 24; ours may be longer, but a name
 * afl-fuzz takes with -M/-S must fit its limit). */
#define SYNC_NAME_MAX 64

typedef struct Sync Sync;

typedef struct SyncConfig {
        const char *dir;  /* the sync directory, shared by every instance */
        const char *name; /* this instance's directory in it */
        size_t max_len;   /* a peer's longer file is skipped */
        unsigned every_s; /* seconds between scans */
} SyncConfig;

/* Whether @name is a name for an instance: 1 to SYNC_NAME_MAX characters
 * of [A-Za-z0-9_.-], not starting with a dot. */
bool sync_name_valid(const char *name);

/*
 * Takes DIR/NAME (creating what is missing), reads what the last run with
 * this name left (the ids in its queue, the progress of each peer) and
 * starts the thread, whose first scan is at once. A sync directory that
 * cannot be reached or written is said once and retried: fuzzing goes on.
 * Returns 0, -EINVAL for an invalid name, -EBUSY when a live instance holds
 * the name (both after one line for a person), or -ENOMEM.
 */
int sync_new(Sync **ret, const SyncConfig *cfg);

/* Stops the thread after one more try of what is still to be written
 * (waiting SYNC_STOP_MS at most: a hung filesystem does not hold the exit)
 * and frees. NULL is a no-op. */
void sync_free(Sync *s);

/*
 * The coordinator's sync phase: hands the inputs the thread read to
 * @sched as seeds (after the ones it has), and, once none of those handed
 * out is still to run (@seed_batches_busy false and no seed left), lets the
 * thread record the peers' progress. Cheap when there is nothing to do.
 */
void sync_phase(Sync *s, Schedule *sched, bool seed_batches_busy);

/* The peer seed @seed_index of @sched was read from, or NULL when it is
 * one of the run's own seeds. */
const char *sync_seed_origin(const Sync *s, const Schedule *sched, size_t seed_index);

/* An input joined the corpus: it goes into DIR/NAME/queue (a copy, written
 * by the thread; an input already there is skipped). @peer: the peer it
 * came from, or NULL for the run's own. */
void sync_export(Sync *s, const uint8_t *data, size_t len, const char *peer);

/* An imported input ran and added coverage (it joined the corpus). */
void sync_note_kept(Sync *s);

/* At the end: exports what is held, records the progress, and prints one
 * summary line. */
void sync_finish(Sync *s, Schedule *sched);

/* stats.json: the sync_* figures. */
void sync_add_stats(Sync *s, cJSON *stats);
