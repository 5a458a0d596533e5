/*
 * The worker: `snapfuzz __worker`, started by the coordinator, the recovery
 * helper or `reproduce` (worker/wproc.h is the other end). It loads the
 * target once and becomes the snapshot: a fork server whose runner children
 * run batches of the in-process loop.
 */
#pragma once

/* Entry point of `snapfuzz __worker ARGS`. Returns a WORKER_EXIT_* code. */
int worker_main(int argc, char **argv);
