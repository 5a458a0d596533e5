/*
 * The coordinator of `snapfuzz run`: one event loop over the workers'
 * event pipes, the recovery helper's pipe and a signalfd. It owns the
 * corpus, the shared coverage map, scheduling, the status line and
 * stats.json; it hands every dead runner's record to the recovery helper.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct RunConfig {
        const char *target;        /* as given on the command line */
        char target_abs[PATH_MAX]; /* resolved; what workers and crash.json use */
        char **corpus_dirs;
        int n_corpus_dirs;
        const char *out_dir;
        unsigned workers;
        uint64_t max_total_time_s; /* 0: no limit */
        uint64_t runs;             /* 0: no limit */
        unsigned timeout_ms;
        unsigned rss_limit_mb;    /* 0: no limit */
        unsigned malloc_limit_mb; /* 0: no limit */
        uint64_t seed;
        bool seed_set;
        size_t max_len; /* 0: derive from the seeds */
        bool keep_going;
        const char *sandbox;
        const char *sandbox_policy; /* --sandbox-policy, as JSON (sandbox_policy_load), or NULL */
        unsigned status_every_s;
        const char *dict_path;       /* --dict; NULL: none */
        bool value_profile;          /* --use-value-profile */
        unsigned minimize_ms;        /* automatic minimization budget per new crash; 0: off */
        bool detect_leaks;           /* --detect-leaks */
        unsigned runner_lifetime_ms; /* --runner-lifetime-ms */
} RunConfig;

/* Runs the fuzzer. Returns an SF_EXIT_* code; prints its own diagnostics. */
int coordinator_run(RunConfig *cfg);
