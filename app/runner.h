/*
 * The runner: a child forked from the worker (the snapshot) that runs one
 * batch of the in-process loop under the sandbox, then exits. Each step of
 * the loop is: mutate, count++, call the target, scan coverage. Nothing in
 * the loop allocates or makes a syscall.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/coverage.h"
#include "core/custom.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/record.h"
#include "snapfuzz/target.h"

/* How a runner that ended on purpose says so through its exit status;
 * the worker trusts these only together with the record's runner_state or
 * death reason, since a target can call exit() with any value. */
enum {
        RUNNER_EXIT_DONE = 0,
        RUNNER_EXIT_DUMPED = 86,    /* stack dumped on the worker's request */
        RUNNER_EXIT_OVERWRITE = 87, /* the target wrote into its const input */
        RUNNER_EXIT_SETUP = 88,     /* the sandbox could not be applied */
        RUNNER_EXIT_LEAK = 89,      /* a leak, or a leak suspect (the death reason says) */
};

/* The signal the worker sends to ask a runner for its stack before it is
 * killed (timeouts, the RSS limit). */
#define RUNNER_SIGNAL_DUMP SIGUSR2

typedef struct RunnerArgs {
        void *region; /* the worker's shared record */
        const RecordLayout *layout;
        CoverageShared *coverage;
        const Sandbox *sandbox;
        TargetTestOneInput test;
        pid_t worker_pid;
        const int *close_fds; /* worker fds the target must not see */
        int n_close_fds;
        int output_fd; /* becomes the runner's stdout and stderr */
        /* The target's custom mutator and crossover (scratch unused), or
         * NULL. Used for batches whose record says RECORD_F_CUSTOM_*. */
        const CustomMutator *custom;
        /* Instead of a batch, RECORD_REBUILT_SLOT or _SEED: rebuild the
         * input `count` names in the record already in the region (another
         * runner's, copied there) that way (see runner_main). */
        int rebuild;
} RunnerArgs;

/* Runs the batch described by the record. Never returns.
 *
 * With @a->rebuild, runs no batch: under the same sandbox, rebuilds the
 * input of iteration `count` of the record in the region, with
 * replay_custom_at (RECORD_REBUILT_SLOT: from the chain's slot) or
 * replay_custom_from_seed (RECORD_REBUILT_SEED: the whole batch, which also
 * replays a mutator's state since the fork), writes it to finds slot 0,
 * whose flags say which, and exits with state DONE. A record that cannot be
 * replayed leaves the finds area empty. */
__attribute__((noreturn)) void runner_main(const RunnerArgs *a);

/* Called once in the worker before any fork: loads what the runner's signal
 * handlers need so that they never load anything themselves. */
void runner_prepare(void);

/* Called once in the worker after the target is loaded: finds
 * LeakSanitizer's interface in the process and starts counting
 * allocations and frees. Returns whether leak checks are possible. */
bool runner_leaks_prepare(void);
