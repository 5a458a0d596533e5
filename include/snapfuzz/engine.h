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
        /* The same inputs in the same order on every run of one seed: batch
         * lengths and energies from the inputs' work, not the clock (needs
         * one worker; `snapfuzz run` sets it with --seed and one worker). */
        bool deterministic;
        bool reproducible; /* --reproducible: deterministic, and one address layout */
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
        /* --sync-dir, --name, --sync-every: AFL++-style exchange of inputs
         * with other instances (engine/sync.h); sync_dir NULL: none. */
        const char *sync_dir;
        const char *sync_name;
        unsigned sync_every_s; /* 0: the default */
        /* Reports for CI (engine/ciout.h), written at the start, when a new
         * crash is stored and at the end; NULL: none. */
        const char *sarif_path;  /* --sarif */
        const char *junit_path;  /* --junit */
        const char *source_root; /* --source-root; NULL: the current directory */
        int display;             /* SF_DISPLAY_*: what the run shows while it runs */
        bool require_coverage;   /* --require-coverage: a target without coverage is an error */
        /* --sanitizer-target: the same harness built with AddressSanitizer
         * and/or UBSan. One more worker runs it on the seeds, on every
         * input that joins the corpus and on a sample of the fuzzing
         * inputs (engine/sanq.h), for at most sanitizer_share percent of
         * the fuzzing workers' time; its crashes are verified on it.
         * NULL: none. */
        const char *sanitizer_target;
        char sanitizer_abs[PATH_MAX]; /* resolved */
        unsigned sanitizer_share;     /* --sanitizer-share, percent; 0: the default, 10 */
} SfRunConfig;

/* SfRunConfig.display (engine/screen.h). */
enum {
        SF_DISPLAY_AUTO = 0, /* a live screen when stderr is a terminal, else status lines */
        SF_DISPLAY_LINES,    /* a status line every status_every_s, even on a terminal */
        SF_DISPLAY_QUIET,    /* errors, warnings and the final summary only */
};

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
/* Whether @name may name an instance in a sync directory (--name): 1 to
 * 64 letters, digits, '_', '-' or '.', not starting with '.'. */
bool engine_sync_name_valid(const char *name);

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

/* ---- Single-input runs: `snapfuzz run target.so FILE...` ---- */

/* Runs each of the @n_files files once (@cfg->runs times when it is more
 * than 1) in a fresh runner under @cfg's sandbox and limits, as libFuzzer
 * runs file arguments: what @cfg's target, timeout_ms, rss_limit_mb,
 * malloc_limit_mb, max_len (0: the longest file; longer files are cut, as
 * libFuzzer's -max_len), sandbox, sandbox_policy, detect_leaks,
 * close_fd_mask, runs and keep_going (go on after a crash; default: stop
 * at the first) say; nothing is written to disk. Prints a line per input
 * and a report (kind, message, stack) per crash on stdout. Returns
 * ENGINE_RUN_CRASHED when an input crashed, ENGINE_RUN_CLEAN when none
 * did, or a negative errno after one line (-ENOENT, -EISDIR, -EACCES: a
 * file that cannot be read; -EFBIG: one over 16 MiB without max_len;
 * -ENOEXEC: a target that cannot be loaded). */
int engine_run_inputs(const SfRunConfig *cfg, char *const *files, int n_files);

/* ---- Corpus merge: `snapfuzz merge`, libFuzzer's -merge=1 ---- */

/* What a merge is asked to do. The target and how inputs run come from
 * @run: its target_abs, timeout_ms, rss_limit_mb, malloc_limit_mb, max_len
 * (0: 1 MiB, libFuzzer's merge default; longer inputs are cut to it),
 * sandbox, sandbox_policy, value_profile and close_fd_mask; nothing else of
 * it is read. */
typedef struct SfMergeConfig {
        const SfRunConfig *run;
        /* The output corpus: its inputs count first (none of them is
         * removed), the inputs chosen from @in_dirs are written into it,
         * named by the SHA-1 of their bytes. Created when missing. */
        const char *out_corpus;
        char *const *in_dirs;
        int n_in_dirs;
        /* libFuzzer's -merge_control_file: progress is kept there, so a
         * merge killed at any moment continues where it stopped when run
         * again with the same file. NULL: a temporary file, removed at the
         * end (a killed merge starts over). */
        const char *control_file;
        /* A control file that is not one (or was written for another target
         * build or other options) is replaced, as libFuzzer does, instead
         * of refused with -EINVAL (the command line's choice). */
        bool replace_bad_control;
        bool quiet; /* no progress lines on stderr (warnings and errors still) */
} SfMergeConfig;

/* What a merge did (engine_merge fills it, also when it fails midway). */
typedef struct SfMergeResult {
        size_t inputs;        /* files looked at: the output corpus's and the input dirs' */
        size_t in_out_corpus; /* of which in the output corpus already */
        size_t reused;        /* results taken from the control file, not run again */
        size_t added;         /* files written into the output corpus */
        uint64_t added_bytes;
        uint64_t features;     /* coverage features of the output corpus after the merge */
        uint64_t new_features; /* of which the added files brought */
        uint64_t edges;        /* counters reached (any hit-count bucket) after the merge */
        uint64_t new_edges;    /* of which the output corpus did not reach before */
        size_t crashed;        /* inputs that crashed (skipped) */
        size_t timeouts;       /* inputs that hung (skipped) */
        size_t ooms;           /* inputs over the memory limit (skipped) */
        size_t unreadable;     /* files that vanished or could not be read (skipped) */
        size_t failed_before;  /* inputs a killed run of this merge saw fail (skipped) */
        size_t truncated;      /* inputs longer than max_len, run and kept cut */
        size_t max_len;        /* the length inputs are cut to */
} SfMergeResult;

/* Keeps the smallest set of inputs with the coverage of all of them
 * (libFuzzer's -merge=1, afl-cmin): every input runs once in a sandboxed
 * runner; a crash or a hang skips that input (counted) and the merge goes
 * on. Features are snapfuzz's (edges with hit-count buckets, the stack
 * depth, with value_profile the comparisons'). Prints nothing on stdout:
 * the front end reports what @ret says. Returns 0, or a negative
 * errno after one line: -EINVAL (a control file that is none, or is for
 * another target, without replace_bad_control), -ENOENT/-ENOTDIR/-EACCES
 * (a directory or the control file), -ENOEXEC (the target). */
int engine_merge(const SfMergeConfig *cfg, SfMergeResult *ret);
