/*
 * The worker: `snapfuzz __worker`, started by the coordinator, the recovery
 * helper or `reproduce` (worker/wproc.h is the other end). It loads the
 * target once and becomes the snapshot: a fork server whose runner children
 * run batches of the in-process loop.
 */
#pragma once

#include "snapfuzz/target.h"

/* A target linked into the executable itself (the libFuzzer drop-in):
 * a worker whose --target is PROTO_TARGET_SELF calls these and loads
 * nothing. */
typedef struct WorkerBuiltin {
        TargetTestOneInput test; /* required */
        TargetInitialize init;   /* the others may be NULL */
        TargetCustomMutator mutate;
        TargetCustomCrossOver crossover;
} WorkerBuiltin;

/* Registers the executable's own target (copied; NULL: none). */
void worker_builtin_set(const WorkerBuiltin *b);
/* The registered target, or NULL. */
const WorkerBuiltin *worker_builtin_get(void);

/* Entry point of `snapfuzz __worker ARGS`. Returns a WORKER_EXIT_* code. */
int worker_main(int argc, char **argv);
