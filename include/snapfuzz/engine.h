/*
 * The engine's public API: what a front end calls. Two front ends link the
 * engine library (engine/, with worker/, recovery/, sandbox/ and core/
 * below it): the `snapfuzz` command line, which dlopen()s a harness .so,
 * and a libFuzzer-compatible runtime linked into the harness itself.
 *
 * Conventions (as in the rest of the tree): a function returns 0 or a
 * positive documented outcome on success, a negative errno on failure. The
 * engine prints one line for a person where an error starts (stderr,
 * "snapfuzz: error: ..."); the front end only turns the result into its
 * exit status (engine_error_is_input() says which kind of failure it was).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What `snapfuzz run` was asked to do. */
typedef struct SfRunConfig {
        const char *target;        /* as given on the command line */
        char target_abs[PATH_MAX]; /* resolved; what workers and crash.json use */
        char **corpus_dirs;
        int n_corpus_dirs;
        const char *out_dir;
        unsigned workers;
        uint64_t max_total_time_s; /* 0: no limit */
        uint64_t runs;             /* executions; 0: no limit */
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
        bool keep_seeds;             /* --keep-seeds: seeds are never superseded */
        bool no_reduce;              /* --no-reduce: no shorter forms of corpus entries */
        bool reproducible;           /* --reproducible: needs seed_set and one worker */
        /* --target-output: "log" (OUT/logs/worker-N.log), "pass" (shown,
         * sanitized and rate-limited, and logged) or "discard". */
        const char *target_output;
        unsigned close_fd_mask; /* --close-fd-mask: libFuzzer's -close_fd_mask */
        bool require_coverage;  /* --require-coverage: a target without coverage is an error */
} SfRunConfig;

/* Outcomes of engine_run. */
enum {
        ENGINE_RUN_CLEAN = 0,   /* the budget was spent (or the run interrupted); nothing found */
        ENGINE_RUN_CRASHED = 1, /* a crash was found (stored, or reported as not rebuilt) */
};

/* Fuzzes @cfg->target until the budget is spent, a crash is found (without
 * keep_going) or SIGINT/SIGTERM/SIGHUP. Fills in what @cfg derives (seed,
 * max_len). Returns an ENGINE_RUN_* outcome or a negative errno. */
int engine_run(SfRunConfig *cfg);

/* Prints what the campaign in @out_dir is doing or did (stats.json and
 * whether a live run holds the directory's lock). Returns 0 or a negative
 * errno (no such directory, no or a malformed stats.json) after a line. */
int engine_status(const char *out_dir);

/* The worker process: a front end whose argv[1] is "__worker" hands its
 * argv (from "__worker" on) here and exits with the result, a
 * WORKER_EXIT_* code (snapfuzz/exitcode.h). */
int engine_worker_main(int argc, char **argv);

/* Whether a failure was caused by what the user gave (an option, a
 * target, a directory, a file, a crash record) rather than by snapfuzz or
 * the system: a front end reports the first as a usage error. */
bool engine_error_is_input(int r);
