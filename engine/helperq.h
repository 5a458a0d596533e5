/*
 * The coordinator's side of the recovery helper (recovery/recovery.h): the
 * helper process, its job queue, and its restarts.
 *
 * A job is a dead runner's replay record, copied out of its worker's shared
 * memory when it is queued (the worker reuses that memory for its next
 * batch), and the worker's "died" event. The helper takes one job at a time;
 * its answer ("stored", "lost", "dismissed", ...) ends the job. When the
 * helper dies, a new one is started and the job it held is redone from the
 * saved record; a job is lost only when the helper died on it
 * HELPERQ_JOB_DEATHS times, and then it is answered "lost" like any other.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "recovery/recovery.h"

/* Deaths of the helper while one job is in flight after which that job is
 * answered "lost": a helper killed from outside twice on the same job still
 * recovers it the third time. */
#define HELPERQ_JOB_DEATHS 3
/* Deaths in a row, with no answer in between, after which the helper is not
 * started again (it cannot run at all: every job would be lost slowly). */
#define HELPERQ_DEATHS_IN_A_ROW 16

/* Runs in the helper process, which is forked without exec (see
 * engine/helperq.c): serves the jobs of @cmd_fd until it closes, answers on
 * @evt_fd, reads each job's record from @job_region. 0 or a negative errno
 * (the helper's exit status says which). */
typedef int (*HelperMainFn)(void *ctx, int cmd_fd, int evt_fd, void *job_region);

typedef struct HelperQueueConfig {
        size_t record_size; /* of every job's record (record_layout) */
        /* The helper: recovery_main(&recovery, ...) when @main is NULL (its
         * strings must outlive the queue); tests give their own. */
        RecoveryConfig recovery;
        HelperMainFn main;
        void *ctx; /* for @main; read by the child, after the fork, only */
        /* 0: HELPERQ_JOB_DEATHS (tests use fewer) */
        unsigned job_deaths;
} HelperQueueConfig;

/* helperq_stop, _dispatch, _fd, _waiting, _pending, _pid and _add_stats
 * take NULL (a run that ended before its helper started): no helper, no
 * jobs. */
typedef struct HelperQueue HelperQueue;

/* A job's flags. */
#define HELPERQ_LEAK_SUSPECT 1u /* a check, not a crash: it goes first */

/* Creates the queue and starts the helper. The caller ignores SIGPIPE (a
 * helper that died is an EPIPE to handle, as for workers). 0 or a negative errno, with one
 * line for a person logged. */
int helperq_new(HelperQueue **ret, const HelperQueueConfig *cfg);

/* Closes the helper's command pipe and waits for it to finish what it does
 * and exit; the queue's figures remain (helperq_add_stats). */
void helperq_stop(HelperQueue *q);

/* helperq_stop, then frees the queue with any job still in it. NULL is a
 * no-op. */
void helperq_free(HelperQueue *q);

/* Queues a job: copies @record_size bytes of @record and @died. 0, -ENOMEM,
 * or -ECHILD when the helper could not be kept running (helperq_read said
 * so): the job is not queued and its input is lost. */
int helperq_put(HelperQueue *q, const void *record, const cJSON *died, int64_t died_at_ms,
                unsigned flags);

/* Hands the next job to the helper when it holds none. */
void helperq_dispatch(HelperQueue *q);

/* Tells the helper (and every helper started later) that the target loads:
 * it loads its verification worker ahead. */
void helperq_prepare(HelperQueue *q);

/* The helper's event pipe, to poll for POLLIN; -1 when there is none. */
int helperq_fd(const HelperQueue *q);

/*
 * One answer of the helper, or of the queue for it: returns 1 with a
 * message in *@ret (the caller deletes it); 0 when there is none for now;
 * -ECHILD once when the helper died HELPERQ_DEATHS_IN_A_ROW times or could
 * not be started again (after that, helperq_fd is -1 and the jobs left are
 * counted by helperq_abandon). A helper's death is handled here: it is
 * reaped, its job goes back to the front of the queue, or is answered
 * {"type":"lost","job_deaths":N,...} when it was its HELPERQ_JOB_DEATHS-th,
 * and a new helper is started. An answer always carries the job's
 * "leak_suspect" flag as queued.
 */
int helperq_read(HelperQueue *q, cJSON **ret);

/* Drops every job (after helperq_read's -ECHILD) and returns how many of
 * them were crashes, not leak suspects: inputs lost. */
unsigned helperq_abandon(HelperQueue *q);

/* Jobs queued and not yet handed to the helper. */
unsigned helperq_waiting(const HelperQueue *q);
/* Jobs queued or with the helper. */
unsigned helperq_pending(const HelperQueue *q);

/* "helper_pid" (0 when there is none), "helper_restarts" into @stats. */
void helperq_add_stats(const HelperQueue *q, cJSON *stats);
pid_t helperq_pid(const HelperQueue *q);
