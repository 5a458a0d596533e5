/*
 * `snapfuzz reproduce ID`: replays a stored crash once, through the same
 * worker, runner and sandbox code as fuzzing, and prints a report.
 */
#pragma once

typedef struct ReproduceConfig {
        const char *id;
        const char *out_dir;
        const char *target;  /* overrides crash.json's target; NULL: use it */
        unsigned timeout_ms; /* 0: the crash's own */
} ReproduceConfig;

/* Returns SF_EXIT_CRASH when it still crashes, SF_EXIT_OK when it no longer
 * does, SF_EXIT_USAGE for a bad id or corrupt record, SF_EXIT_INTERNAL. */
int reproduce_run(const ReproduceConfig *cfg);
