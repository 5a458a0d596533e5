/*
 * `snapfuzz reproduce ID`: replays a stored crash once, through the same
 * worker, runner and sandbox code as fuzzing, and prints a report.
 */
#pragma once

#include "recovery/crashconf.h"

typedef struct ReproduceConfig {
        const char *id;
        const char *out_dir;
        CrashconfTrust trust; /* what the command line says over crash.json */
} ReproduceConfig;

/* Outcomes of reproduce_run. */
enum {
        REPRODUCE_FIXED = 0,   /* the input no longer crashes */
        REPRODUCE_CRASHES = 1, /* it still crashes */
};

/* Returns a REPRODUCE_* outcome, or a negative errno after one line:
 * -EBADMSG for a bad id or a corrupt or refused record, -ENOEXEC for a
 * target that cannot be loaded, another for snapfuzz's own failures. */
int reproduce_run(const ReproduceConfig *cfg);
