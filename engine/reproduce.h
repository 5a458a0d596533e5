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

/* Returns SF_EXIT_CRASH when it still crashes, SF_EXIT_OK when it no longer
 * does, SF_EXIT_USAGE for a bad id, a corrupt or refused record, SF_EXIT_INTERNAL. */
int reproduce_run(const ReproduceConfig *cfg);
