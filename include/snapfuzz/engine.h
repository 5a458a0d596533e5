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

#include "snapfuzz/target.h"

/* What a front end hears of a run while it goes (SfRunConfig.on_event):
 * enough to print libFuzzer's log lines and write its artifacts. */
typedef enum SfEventType {
        SF_EVENT_INITED, /* every seed has run */
        SF_EVENT_NEW,    /* an input with new coverage joined the corpus */
        SF_EVENT_REDUCE, /* a shorter input took a corpus entry's place */
        SF_EVENT_CRASH,  /* a crash was stored (crash_* fields) */
        SF_EVENT_PULSE,  /* every status_every_s seconds: the figures */
        SF_EVENT_DONE,   /* the run is over (after the last crash event) */
} SfEventType;

typedef struct SfEvent {
        SfEventType type;
        uint64_t execs;        /* executions so far */
        uint64_t edges;        /* counters hit so far */
        uint64_t features;     /* features seen so far */
        size_t corpus;         /* corpus entries */
        uint64_t corpus_bytes; /* their total size */
        double elapsed_s;
        /* NEW and REDUCE: the input (valid during the call). */
        const uint8_t *data;
        size_t len;
        /* CRASH: the stored crash's id, kind (crash.json's), message, its
         * directory (OUT/crashes/<id>, holding `input`), whether the id is
         * new in this output directory. */
        const char *crash_id;
        const char *crash_kind;
        const char *crash_message;
        const char *crash_dir;
        bool crash_new;
} SfEvent;

typedef void (*SfEventFn)(const SfEvent *e, void *ctx);

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
        /* For front ends other than the CLI (all zero in `snapfuzz run`): */
        /* The target is this executable's own, registered with
         * engine_target_builtin(); target_abs is the executable's path
         * (crash.json, stats.json) and nothing is dlopen()ed. */
        bool builtin_target;
        /* New corpus entries go here instead of OUT/corpus, which is then
         * neither written nor resumed (libFuzzer's first corpus directory;
         * it must also be one of corpus_dirs to be read). */
        const char *corpus_out;
        bool seeds_only; /* stop once every seed has run (libFuzzer's -runs=0) */
        /* Called from the coordinator's loop; with it set, the engine
         * prints no status lines of its own (the front end reports). */
        SfEventFn on_event;
        void *event_ctx;
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

/* The functions of a target linked into the executable itself (the
 * libFuzzer drop-in), for SfRunConfig.builtin_target: its workers, the
 * recovery helper's verification worker and single-input runs call these
 * instead of loading a .so. test is required; the others may be NULL. */
typedef struct SfBuiltinTarget {
        TargetTestOneInput test;
        TargetInitialize init;
        TargetCustomMutator mutate;
        TargetCustomCrossOver crossover;
} SfBuiltinTarget;

/* Registers the executable's own target; call before engine_run or
 * engine_worker_main. @t is copied. */
void engine_target_builtin(const SfBuiltinTarget *t);

/* A string field of a stored crash's crash.json (@crash_dir is
 * OUT/crashes/<id>, as in SF_EVENT_CRASH): "output" (the target's last
 * output, with its sanitizer report), "message", "kind"... Returns 0 with
 * a malloc'd copy in *@ret, -ENOENT when the field is missing or not a
 * string, or another negative errno. */
int engine_crash_field(const char *crash_dir, const char *field, char **ret);

/* Whether a failure was caused by what the user gave (an option, a
 * target, a directory, a file, a crash record) rather than by snapfuzz or
 * the system: a front end reports the first as a usage error. */
bool engine_error_is_input(int r);
