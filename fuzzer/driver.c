/*
 * The libFuzzer drop-in's driver: the harness binary itself is the target.
 * LLVMFuzzerRunDriver registers the harness's functions with the engine
 * (engine_target_builtin: its workers, exec'd as `/proc/self/exe __worker
 * --target :self ...`, and the recovery helper's verification worker call
 * them and load nothing), then either becomes such a worker, runs given
 * files once (fuzzer/single.h), or fuzzes with libFuzzer's flags mapped
 * onto SfRunConfig and the engine's events printed as libFuzzer's lines
 * (fuzzer/lfreport.h).
 *
 * Choices, and why:
 * - The engine's working directory (crash records, logs, stats.json, its
 *   lock) is $TMPDIR/snapfuzz-fuzzer.PID (/tmp without TMPDIR): libFuzzer
 *   writes nothing but the output corpus and artifacts, and tools that
 *   drive it (ClusterFuzz) list the artifact directory. It is removed at
 *   exit once every crash has its artifact; -snapfuzz_out=DIR keeps it in
 *   DIR instead (`snapfuzz crashes --out DIR` reads it).
 * - New inputs go to the first corpus directory, named by SHA-1 as
 *   libFuzzer names them; its files are seeds and are never removed.
 * - One worker unless -jobs, -workers or -fork ask for more: a libFuzzer
 *   binary is one process, and ClusterFuzz runs one per core.
 * - Crashes are stored unminimized (libFuzzer writes what it found; its
 *   -minimize_crash is a separate run), so the run ends at once.
 * - The target's output is shown ("pass"), as a libFuzzer binary shows it,
 *   so a sanitizer's report reaches the log that tools parse.
 * - In the coordinator of a sanitizer build, the engine's own memory is
 *   not the target's: LeakSanitizer is told to ignore the allocations of
 *   the coordinator's thread (__lsan_disable, weak: absent without a
 *   sanitizer), so its check at exit reports nothing of the engine's (the
 *   engine frees the rest before engine_run returns). A single-input run
 *   keeps LeakSanitizer on: the target's leaks are its findings there.
 *   ASAN_OPTIONS from the environment reach the workers unchanged (the
 *   options the sandbox needs are appended, core/sanitizer.h).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/coverage.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "fuzzer/cjsonbind.h"
#include "fuzzer/crashmin.h"
#include "fuzzer/driver.h"
#include "fuzzer/lfdict.h"
#include "fuzzer/lfflags.h"
#include "fuzzer/lfreport.h"
#include "fuzzer/sandrun.h"
#include "fuzzer/single.h"
#include "sandbox/policyfile.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/engine.h"

#include "snapfuzz/banned.h"

/* libFuzzer's exit statuses beyond the two flags (FuzzerOptions.h). */
#define LF_OOM_EXITCODE 71
/* What a sanitizer's report ends the process with by default. */
#define LF_SANITIZER_EXITCODE 1

/* The harness's optional functions (weak: NULL when it has none). */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
extern size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
                                      unsigned int seed) __attribute__((weak));
extern size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                        uint8_t *out, size_t max_out, unsigned int seed)
    __attribute__((weak));
/* LeakSanitizer's interface, when the binary has it. */
extern void __lsan_disable(void) __attribute__((weak));

/* Tools check for it to tell a libFuzzer binary (as libFuzzer defines it). */
__attribute__((used, visibility("default"))) void __libfuzzer_is_present(void);
__attribute__((used, visibility("default"))) void __libfuzzer_is_present(void)
{
}

typedef struct Driver {
        LfFlags flags;
        SfRunConfig cfg;
        LfReport report;
        char work[PATH_MAX];
        bool work_owned; /* ours to remove at the end */
        char *policy;
} Driver;

static bool is_dir(const char *p)
{
        struct stat st;
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
        struct stat st;
        return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* libFuzzer's ValidateDirectoryExists: 0, or 1 after its line. */
static int need_dir(const char *path, bool create)
{
        if (!*path) {
                fprintf(stderr, "ERROR: Provided directory path is an empty string\n");
                return 1;
        }
        if (is_dir(path))
                return 0;
        if (create && fs_mkdir_p(path, 0755) == 0)
                return 0;
        fprintf(stderr, "ERROR: The required directory \"%s\" does not exist\n", path);
        return 1;
}

static size_t count_files(const char *dir)
{
        size_t n = 0;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
                n += e->d_name[0] != '.';
        if (d)
                closedir(d);
        return n;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path) < 0 ? -1 : 0;
}

/* The exit status of a run that found @kind (crash.json's kind). */
static int crash_exit_status(const LfFlags *f, const char *kind)
{
        if (strcmp(kind, "timeout") == 0)
                return (int)f->timeout_exitcode;
        if (strcmp(kind, "oom") == 0)
                return LF_OOM_EXITCODE;
        if (strcmp(kind, "asan") == 0 || strcmp(kind, "ubsan") == 0 ||
            strcmp(kind, "stack-overflow") == 0)
                return LF_SANITIZER_EXITCODE;
        return (int)f->error_exitcode;
}

/* The paths: corpus directories, artifact prefix, the working directory.
 * 0, or 1 after libFuzzer's line. */
static int driver_paths(Driver *d)
{
        LfFlags *f = &d->flags;
        for (int i = 0; i < f->n_inputs; i++) {
                if (i == 0 && need_dir(f->inputs[0], f->create_missing_dirs))
                        return 1;
                if (!is_dir(f->inputs[i])) {
                        fprintf(stderr,
                                "ERROR: %s is not a directory (give either corpus "
                                "directories or input files)\n",
                                f->inputs[i]);
                        return 1;
                }
        }
        const char *ap = f->artifact_prefix ? f->artifact_prefix : "";
        if (*ap) {
                char dir[PATH_MAX];
                const char *slash = strrchr(ap, '/');
                snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - ap) + 1 : 1,
                         slash ? ap : ".");
                if (need_dir(dir, f->create_missing_dirs))
                        return 1;
        }
        if (f->snapfuzz_out) {
                snprintf(d->work, sizeof(d->work), "%s", f->snapfuzz_out);
        } else {
                const char *tmp = getenv("TMPDIR");
                snprintf(d->work, sizeof(d->work), "%s/snapfuzz-fuzzer.%d",
                         tmp && *tmp ? tmp : "/tmp", (int)getpid());
                d->work_owned = true;
        }
        return 0;
}

/* libFuzzer's flags onto the engine's configuration. 0, or 1 after a line. */
static int driver_config(Driver *d, const char *argv0)
{
        LfFlags *f = &d->flags;
        SfRunConfig *c = &d->cfg;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long n = f->workers > 0 ? f->workers : f->fork > 0 ? f->fork : 0;
        if (!n && f->jobs > 0)
                n = f->jobs < cores / 2 ? f->jobs : (cores / 2 > 0 ? cores / 2 : 1);
        *c = (SfRunConfig){
            .target = argv0,
            .builtin_target = true,
            .corpus_dirs = f->inputs,
            .n_corpus_dirs = f->n_inputs,
            .corpus_out = f->n_inputs ? f->inputs[0] : NULL,
            .out_dir = d->work,
            .workers = n > 0 ? (unsigned)(n < 256 ? n : 256) : 1,
            .max_total_time_s = f->max_total_time > 0 ? (uint64_t)f->max_total_time : 0,
            .runs = f->runs > 0 ? (uint64_t)f->runs : 0,
            .seeds_only = f->runs == 0,
            /* libFuzzer: a timeout of 0 or less is none; a day is ours. */
            .timeout_ms =
                f->timeout > 0 && f->timeout < 86400 ? (unsigned)f->timeout * 1000 : 86400u * 1000,
            .rss_limit_mb = f->rss_limit_mb > 0 ? (unsigned)f->rss_limit_mb : 0,
            .malloc_limit_mb = f->malloc_limit_mb > 0 ? (unsigned)f->malloc_limit_mb
                               : f->rss_limit_mb > 0  ? (unsigned)f->rss_limit_mb
                                                      : 0,
            .seed = (uint64_t)(uint32_t)f->seed,
            .seed_set = true,
            /* -seed=N with one worker replays the same inputs. */
            .deterministic = f->seed != 0 && n <= 1,
            .max_len = f->max_len > 0 ? (size_t)f->max_len : 0,
            .sandbox = f->snapfuzz_sandbox ? f->snapfuzz_sandbox : "strict",
            .status_every_s = 1,
            .dict_path = f->dict,
            .value_profile = f->use_value_profile > 0,
            .detect_leaks = f->detect_leaks > 0,
            .runner_lifetime_ms = 500,
            .keep_seeds = f->keep_seed > 0,
            .no_reduce = f->reduce_inputs == 0,
            .target_output = "pass",
            .close_fd_mask = (unsigned)(f->close_fd_mask & 3),
            .on_event = lfreport_event,
            .event_ctx = &d->report,
        };
        /* AFL++-style sync, as snapfuzz run's --sync-dir/--name. */
        if (f->snapfuzz_sync_dir || f->snapfuzz_sync_name) {
                if (!f->snapfuzz_sync_dir || !f->snapfuzz_sync_name ||
                    !engine_sync_name_valid(f->snapfuzz_sync_name)) {
                        fprintf(stderr, "ERROR: -snapfuzz_sync_dir needs -snapfuzz_sync_name=NAME "
                                        "(1-64 of A-Z a-z 0-9 _ . -, not starting with '.')\n");
                        return 1;
                }
                c->sync_dir = f->snapfuzz_sync_dir;
                c->sync_name = f->snapfuzz_sync_name;
                c->sync_every_s = f->snapfuzz_sync_every > 0 && f->snapfuzz_sync_every < 86400
                                      ? (unsigned)f->snapfuzz_sync_every
                                      : 0;
        }
        SandboxMode m;
        if (sandbox_mode_parse(c->sandbox, &m) < 0) {
                fprintf(stderr, "ERROR: -snapfuzz_sandbox takes strict, log or off, not '%s'\n",
                        c->sandbox);
                return 1;
        }
        if (!realpath("/proc/self/exe", c->target_abs)) {
                fprintf(stderr, "ERROR: cannot resolve /proc/self/exe: %s\n", strerror(errno));
                return 1;
        }
        if (f->snapfuzz_sandbox_policy) {
                char err[1024];
                if (sandbox_policy_load(f->snapfuzz_sandbox_policy, &d->policy, err, sizeof(err)) <
                    0) {
                        fprintf(stderr, "ERROR: %s\n", err);
                        return 1;
                }
                c->sandbox_policy = d->policy;
        }
        return 0;
}

/* The INFO lines libFuzzer prints before it fuzzes. */
static void driver_banner(const Driver *d)
{
        const LfFlags *f = &d->flags;
        fprintf(stderr, "INFO: Seed: %u\n", (unsigned)d->cfg.seed);
        size_t n = coverage_counters();
        fprintf(stderr, "INFO: Loaded 1 modules   (%zu inline 8-bit counters): %zu\n", n, n);
        if (!f->n_inputs)
                fprintf(stderr, "INFO: A corpus is not provided, starting from an empty "
                                "corpus\n");
        for (int i = 0; i < f->n_inputs; i++)
                fprintf(stderr, "INFO: %8zu files found in %s\n", count_files(f->inputs[i]),
                        f->inputs[i]);
        fprintf(stderr, "INFO: snapfuzz engine, %u worker%s, sandbox %s, work directory %s\n",
                d->cfg.workers, d->cfg.workers == 1 ? "" : "s", d->cfg.sandbox, d->work);
}

/* Fuzzing: the engine's run, reported as libFuzzer reports. Returns the
 * exit status. */
static int driver_fuzz(Driver *d, const char *argv0)
{
        LfFlags *f = &d->flags;
        int r = driver_paths(d);
        if (r == 0)
                r = driver_config(d, argv0);
        if (r)
                return r;
        if (f->seed == 0) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                d->cfg.seed = (uint32_t)(ts.tv_nsec ^ ts.tv_sec ^ getpid()) | 1;
        }
        d->report = (LfReport){
            .artifact_prefix = f->artifact_prefix ? f->artifact_prefix : "",
            .exact_artifact_path = f->exact_artifact_path,
            .print_final_stats = f->print_final_stats > 0,
            .verbosity = (int)f->verbosity,
            .timeout_s = f->timeout,
            .rss_limit_mb = f->rss_limit_mb,
        };
        if (f->verbosity)
                driver_banner(d);
        /* libFuzzer's words, which OSS-Fuzz's bad_build_check looks for: a
         * binary without coverage counters cannot be fuzzed. */
        if (coverage_counters() == 0) {
                fprintf(stderr, "ERROR: no interesting inputs were found. Is the code "
                                "instrumented for coverage? Exiting.\n");
                return 1;
        }
        log_set_quiet(f->verbosity < 2);
        if (__lsan_disable)
                __lsan_disable();
        r = engine_run(&d->cfg);
        if (f->verbosity && r == ENGINE_RUN_CLEAN)
                fprintf(stderr, "Done %llu runs in %llu second(s)\n",
                        (unsigned long long)d->report.last_execs,
                        (unsigned long long)d->report.last_elapsed_s);
        lfreport_final_stats(&d->report);
        if (d->work_owned && !d->report.artifact_failed && r >= 0)
                nftw(d->work, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        else if (d->work_owned && r >= 0)
                fprintf(stderr, "INFO: snapfuzz kept its work directory %s\n", d->work);
        if (r == ENGINE_RUN_CRASHED)
                return d->report.first_kind[0] ? crash_exit_status(f, d->report.first_kind)
                                               : (int)f->error_exitcode;
        return r < 0 ? 1 : 0;
}

/* -merge=1: libFuzzer's corpus merge, by the engine's (engine_merge): the
 * 2nd, 3rd, ... directories into the 1st, resumable with
 * -merge_control_file (a control file that is not one of ours is replaced,
 * as libFuzzer replaces one it cannot use). Prints libFuzzer's MERGE-OUTER
 * lines, the last of which ClusterFuzz reads its figures from. Returns the
 * exit status. */
static int driver_merge(Driver *d, const char *argv0)
{
        LfFlags *f = &d->flags;
        if (f->n_inputs < 2) {
                fprintf(stderr, "INFO: Merge requires two or more corpus dirs\n");
                return 0;
        }
        int r = driver_paths(d);
        if (r == 0)
                r = driver_config(d, argv0);
        if (r)
                return r;
        log_set_quiet(f->verbosity < 2);
        SfMergeConfig mc = {
            .run = &d->cfg,
            .out_corpus = f->inputs[0],
            .in_dirs = f->inputs + 1,
            .n_in_dirs = f->n_inputs - 1,
            .control_file = f->merge_control_file,
            .replace_bad_control = true,
            .quiet = f->verbosity < 2,
        };
        SfMergeResult res = {0};
        r = engine_merge(&mc, &res);
        fprintf(stderr,
                "MERGE-OUTER: %zu files, %zu in the initial corpus, %zu processed earlier\n",
                res.inputs, res.in_out_corpus, res.reused);
        if (r < 0) {
                fprintf(stderr, "ERROR: the merge failed: %s\n", strerror(-r));
                return 1;
        }
        if (res.crashed || res.timeouts || res.ooms)
                fprintf(stderr,
                        "INFO: %zu inputs crashed, %zu timed out, %zu ran out of memory: "
                        "not merged\n",
                        res.crashed, res.timeouts, res.ooms);
        fprintf(stderr,
                "MERGE-OUTER: %zu new files with %llu new features added; %llu new coverage "
                "edges\n",
                res.added, (unsigned long long)res.new_features, (unsigned long long)res.new_edges);
        return 0;
}

/* Whether every operand is a file: libFuzzer then runs them, it does not
 * fuzz. */
static bool all_files(const LfFlags *f)
{
        if (f->n_inputs == 0)
                return false;
        for (int i = 0; i < f->n_inputs; i++)
                if (!is_file(f->inputs[i]))
                        return false;
        return true;
}

static int driver_main(int *argc, char ***argv, LfUserCallback cb)
{
        Driver d = {0};
        int r = lfflags_parse(*argc, *argv, &d.flags) < 0 ? 1 : 0;
        if (r)
                return r;
        if (d.flags.dict && d.flags.help <= 0) {
                size_t entries;
                if (lfdict_check(d.flags.dict, &entries) != 0) {
                        lfflags_deinit(&d.flags);
                        return 1;
                }
                if (d.flags.verbosity > 0)
                        fprintf(stderr, "Dictionary: %zu entries\n", entries);
        }
        if (d.flags.help > 0)
                lfflags_help((*argv)[0]);
        else {
                if (d.flags.merge > 0)
                        r = driver_merge(&d, (*argv)[0]);
                else if (d.flags.minimize_crash > 0)
                        r = crashmin_minimize(&d.flags, *argc, *argv);
                else if (d.flags.cleanse_crash > 0)
                        r = crashmin_cleanse(&d.flags, *argc, *argv);
                else if (all_files(&d.flags) && (r = sandrun_check(&d.flags, (*argv)[0])) == 0)
                        r = single_run(&d.flags, cb, LLVMFuzzerInitialize, argc, argv);
                else if (!all_files(&d.flags))
                        r = driver_fuzz(&d, (*argv)[0]);
        }
        lfflags_deinit(&d.flags);
        free(d.policy);
        return r;
}

__attribute__((visibility("default"))) int LLVMFuzzerRunDriver(int *argc, char ***argv,
                                                               LfUserCallback cb)
{
        char err[512];
        if (cjsonbind_load(err, sizeof(err)) < 0) {
                fprintf(stderr, "ERROR: snapfuzz: %s\n", err);
                return 1;
        }
        SfBuiltinTarget t = {
            .test = cb,
            .init = LLVMFuzzerInitialize,
            .mutate = LLVMFuzzerCustomMutator,
            .crossover = LLVMFuzzerCustomCrossOver,
        };
        engine_target_builtin(&t);
        if (*argc >= 2 && strcmp((*argv)[1], "__worker") == 0)
                return engine_worker_main(*argc - 1, *argv + 1);
        /* As in `snapfuzz run`: a peer that went away is an EPIPE. */
        signal(SIGPIPE, SIG_IGN);
        int r = driver_main(argc, argv, cb);
        fflush(stdout);
        fflush(stderr);
        return r;
}
