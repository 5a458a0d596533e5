/*
 * The runner: a child forked from the worker (the snapshot) that runs a
 * batch of the in-process loop under the sandbox, then exits or, for a
 * plain fuzz batch, waits for the next (RUNNER_CTL_GO). Each step of
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

/* A runner whose fuzz batch ran to its end takes the next one in the same
 * process instead of exiting: on the VMs we measure on, a fork, the
 * sandbox's setup and an exit cost 5-6 ms (their page faults cost 10-20 us
 * each), a fifth of a 25 ms batch. It writes RUNNER_CTL_DONE on its control
 * socket and waits for RUNNER_CTL_GO, by which time the worker has written
 * the next batch into the record. Every input is still a function of its
 * batch's record alone; what a longer-lived process changes is the state
 * the target carries from earlier batches, as libFuzzer's one process
 * does: the runner ends after --runner-lifetime-ms (default 500) and the
 * next batch starts from the snapshot again. */
#define RUNNER_CTL_DONE 'D'
#define RUNNER_CTL_GO 'G'

/* Whether the batch in @h is one a runner may take after others, and
 * follow with others: a plain fuzz batch. A custom mutator may keep state
 * that a rebuild from the seed replays from the fork, a leak check's
 * sandbox is not the fuzzing one, and a replay must start from the
 * snapshot. The runner asks it of the batch it ran, the worker of the one
 * it is about to hand over. */
static inline bool runner_batch_may_share(const RecordHeader *h)
{
        return h->mode == RECORD_MODE_FUZZ &&
               !(h->batch_flags & (RECORD_BATCH_REPLAY | RECORD_BATCH_LEAK_CHECK)) &&
               !(h->flags & RECORD_F_CUSTOM);
}

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
        /* libFuzzer's -close_fd_mask: 1 sends stdout to /dev/null, 2
         * stderr (a sanitizer's report still reaches output_fd), 3 both. */
        unsigned close_fd_mask;
        int ctl_fd;           /* the runner's end of the control socket, or -1: one batch */
        uint64_t lifetime_ns; /* takes no batch after this long (--runner-lifetime-ms) */
        unsigned max_batches; /* or after this many, whatever the clock says; 0: none */
        /* The target's custom mutator and crossover (scratch unused), or
         * NULL. Used for batches whose record says RECORD_F_CUSTOM_*. */
        const CustomMutator *custom;
        /* Instead of a batch, RECORD_REBUILT_SLOT or _SEED: rebuild the
         * input `count` names in the record already in the region (another
         * runner's, copied there) that way (see runner_main). */
        int rebuild;
        /* A sanitizer confirmation (WprocConfig.sanitizer_confirm): each
         * input runs from a heap buffer of exactly its length, and SIGSEGV,
         * SIGBUS and SIGFPE are left to the sanitizer's handlers, which
         * print its report before it aborts (the runner records the
         * abort). */
        bool confirm;
} RunnerArgs;

/* Runs the batch described by the record, and with a control socket the
 * batches that follow (RUNNER_CTL_GO). Never returns.
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
