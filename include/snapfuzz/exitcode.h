/*
 * Exit codes: what `snapfuzz` returns to its caller, and what a worker
 * process returns to the coordinator. Only main() turns outcomes into one
 * of these; library code returns 0, a negative errno or a positive outcome.
 */
#pragma once

/* snapfuzz itself (documented in README.md and --help). */
enum {
        SF_EXIT_OK = 0,       /* run: budget spent, nothing found; reproduce: no longer crashes */
        SF_EXIT_CRASH = 1,    /* run: a crash was found and stored; reproduce: it still crashes */
        SF_EXIT_USAGE = 2,    /* bad option, bad target, bad crash id or file: nothing was run */
        SF_EXIT_INTERNAL = 3, /* snapfuzz itself failed (a bug or the system refused a resource) */
};

/* A worker process (`snapfuzz __worker`). Codes above 63 so that they never
 * collide with a target that calls exit() from its initializer. */
enum {
        WORKER_EXIT_OK = 0,
        WORKER_EXIT_LOAD = 64,     /* the target could not be loaded or has no entry point */
        WORKER_EXIT_PROTOCOL = 65, /* broken pipe or a malformed message from the coordinator */
        WORKER_EXIT_INTERNAL = 66, /* a resource the worker needs was refused */
};
