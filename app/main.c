/*
 * The command line: `snapfuzz run`, `snapfuzz reproduce`, `snapfuzz
 * minimize`, `snapfuzz merge`, `snapfuzz crashes`, and the internal
 * `snapfuzz __worker` that the coordinator starts. main() is the only place
 * that turns outcomes into exit codes (include/snapfuzz/exitcode.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cflags_cmd.h"
#include "app/cliopt.h"
#include "app/crashes_cmd.h"
#include "app/merge_cmd.h"
#include "app/minimize_cmd.h"
#include "app/report_cmd.h"
#include "engine/ciout.h"
#include "app/regress_cmd.h"
#include "app/plot_cmd.h"
#include "engine/reproduce.h"
#include "core/elfcheck.h"
#include "core/sanitizer.h"
#include "core/log.h"
#include "core/termsafe.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/engine.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

#ifndef SNAPFUZZ_VERSION
#define SNAPFUZZ_VERSION "unknown"
#endif

/* The commands, and where each one's options are. */
static void usage(FILE *f)
{
        fprintf(f,
                "usage: snapfuzz run TARGET.so [CORPUS_DIR...] [options]\n"
                "       snapfuzz reproduce CRASH_ID [--out DIR] [--target PATH] [--timeout S]\n"
                "                [--sandbox MODE] [--sandbox-policy FILE] [--trust-record]\n"
                "       snapfuzz minimize CRASH_ID [--out DIR] [--max-time S] [--max-trials N]\n"
                "                [--target PATH] [--timeout S] [--sandbox MODE]\n"
                "                [--sandbox-policy FILE] [--trust-record]\n"
                "       snapfuzz run TARGET.so FILE... [options]\n"
                "       snapfuzz merge TARGET.so OUT_CORPUS IN_DIR... [options]\n"
                "       snapfuzz crashes [--out DIR]\n"
                "       snapfuzz crashes [--out DIR] [--quarantine ID [--reason TEXT] |\n"
                "                --unquarantine ID]\n"
                "       snapfuzz regress TARGET.so [CORPUS_DIR...] [--out DIR] [options]\n"
                "       snapfuzz status [OUT_DIR]\n"
                "       snapfuzz report [OUT_DIR] [--sarif FILE] [--junit FILE]\n"
                "                [--source-root DIR]\n"
                "       snapfuzz plot [OUT_DIR] [--output FILE.png|FILE.svg]\n"
                "       snapfuzz cflags [--cc COMPILER] [--sanitize LIST]\n"
                "       snapfuzz --help | --version\n"
                "\n"
                "run: fuzz TARGET.so, a libFuzzer-style harness (see snapfuzz run --help).\n"
                "reproduce: run a stored crash again under its limits, in the default strict\n"
                "  sandbox: a looser sandbox stored in crash.json is used only with\n"
                "  --trust-record (or give --sandbox MODE / --sandbox-policy FILE).\n"
                "minimize: shrink a stored crash's input while it crashes the same way; writes\n"
                "  crashes/<id>/minimized (default budget --max-time 30; 0: no limit).\n"
                "run with files: run each FILE once in the sandbox and say whether it crashes.\n"
                "merge: the smallest set of inputs with the coverage of all of them, into\n"
                "  OUT_CORPUS (libFuzzer's -merge=1); resumable with --control-file F.\n"
                "crashes: list the crashes stored in an output directory.\n"
                "crashes: list the crashes stored in an output directory; quarantine one.\n"
                "regress: replay the stored crashes and the corpus against a build (CI);\n"
                "  fails only on crashes that still reproduce or are new, not quarantined.\n"
                "status: whether a campaign is running, finished or was killed, and its figures.\n"
                "report: write the stored crashes as SARIF (code scanning) and/or JUnit XML.\n"
                "plot: coverage, exec/s and crashes over time (OUT/plot_data), drawn by gnuplot.\n"
                "cflags: the compiler flags that build a harness (clang or gcc).\n"
                "Each command takes -h or --help, with examples.\n"
                "\n"
                "exit status: 0 nothing found (reproduce: no longer crashes; minimize: done),\n"
                "1 crash found (reproduce: still crashes; minimize: no longer crashes the same\n"
                "way), 2 bad usage or input, 3 internal error.\n");
}

/* Over 80 lines: one string, the option list of `snapfuzz run --help`,
 * which the man page is generated from. */
static void help_run(FILE *f)
{
        fprintf(
            f, "usage: snapfuzz run TARGET.so [CORPUS_DIR...] [options]\n"
               "       snapfuzz run TARGET.so FILE... [options]\n"
               "Fuzz TARGET.so, a libFuzzer-style harness (exports LLVMFuzzerTestOneInput),\n"
               "built with: clang -fsanitize=fuzzer-no-link -fPIC -shared -o target.so harness.c\n"
               "        or: gcc -fsanitize-coverage=trace-pc,trace-cmp -fPIC -shared -o target.so\n"
               "            harness.c (snapfuzz cflags prints these flags)\n"
               "  --out DIR             output directory (default ./snapfuzz-out): corpus/,\n"
               "                        crashes/<id>/{input,crash.json}, stats.json\n"
               "  --workers N           worker processes (default: online cores)\n"
               "  --max-total-time S    stop after S seconds (default: no limit)\n"
               "  --runs N              stop after exactly N executions (default: no limit)\n"
               "  --timeout S           an input running longer than S seconds is a hang\n"
               "                        (default 1; fractions allowed)\n"
               "  --rss-limit-mb MB     a runner over MB resident is out of memory (default\n"
               "                        2048; 0 disables)\n"
               "  --malloc-limit-mb MB  one allocation over MB is out of memory (default: the\n"
               "                        RSS limit; 0 disables)\n"
               "  --seed N              seed of the run's PRNG (default: from the clock); with\n"
               "                        --workers 1 every run of N makes the same inputs in\n"
               "                        the same order\n"
               "  --reproducible        with --seed and --workers 1: also one address layout\n"
               "                        for the run's processes (a harness spread over several\n"
               "                        instrumented libraries, or whose code follows addresses)\n"
               "  --no-reproducible     with --seed: batch lengths and energies follow the clock\n"
               "                        (runs of one seed then differ)\n"
               "  --max-len BYTES       longest input (default: max(4096, largest seed))\n"
               "  --keep-going          go on after a crash (default: stop at the first)\n"
               "                        (crashes quarantined in OUT/quarantine.json never\n"
               "                        stop or fail a run: snapfuzz crashes --quarantine ID)\n"
               "  --sandbox MODE        strict (default): a blocked syscall is a crash;\n"
               "                        log: allow, and report each syscall strict refuses once;\n"
               "                        off: no seccomp filter\n"
               "  --sandbox-policy FILE JSON rules that add syscalls to the allowlist (see\n"
               "                        README, \"The sandbox\")\n"
               "  --status-every S      status line, stats.json and plot_data period in\n"
               "                        seconds (default 3)\n"
               "  --quiet               show errors, warnings and the final summary only\n"
               "  --no-screen           status lines even on a terminal (no live screen)\n"
               "  --dict FILE           dictionary of tokens (libFuzzer/AFL format); tokens\n"
               "                        learned from comparisons go to OUT/autodict\n"
               "  --use-value-profile   count how close comparisons come as coverage\n"
               "  --minimize-time S     minimize each new crash for up to S seconds, in the\n"
               "                        recovery helper (default 1; 0 or --no-minimize: off)\n"
               "  --detect-leaks 0|1    report memory leaks of targets built with\n"
               "                        AddressSanitizer or LeakSanitizer (default 1)\n"
               "  --runner-lifetime-ms MS  how long one runner process goes on taking\n"
               "                        batches (default 500; 0: a fresh process for every\n"
               "                        batch, for targets that keep state between inputs)\n"
               "  --keep-seeds          seeds are never superseded by shorter inputs; they stay\n"
               "                        inputs to mutate (libFuzzer's -keep_seed=1)\n"
               "  --no-reduce           keep no shorter form of a corpus entry that takes its\n"
               "                        exact path (libFuzzer's -reduce_inputs=0)\n"
               "  --target-output MODE  what the target prints: log (default) appends it to\n"
               "                        OUT/logs/worker-N.log (rotated at 16 MiB); pass also\n"
               "                        shows it here, control characters escaped, at most\n"
               "                        4 KB/s per worker; discard drops it. crash.json keeps\n"
               "                        the last 4 KB of it in every mode\n"
               "  --close-fd-mask N     libFuzzer's -close_fd_mask: 1 closes the target's\n"
               "                        stdout, 2 its stderr (sanitizer reports still reach\n"
               "                        crash.json), 3 both (default 0)\n"
               "  --sync-dir DIR        exchange inputs with other instances (snapfuzz or\n"
               "                        afl-fuzz -M/-S) sharing DIR, in AFL++'s layout:\n"
               "                        finds go to DIR/NAME/queue, peers' queues are read\n"
               "  --name NAME           this instance's directory in DIR (with --sync-dir)\n"
               "  --sync-every S        seconds between two reads of the peers (default 30)\n"
               "  --sarif FILE          write the crashes as SARIF 2.1.0 (GitHub code scanning)\n"
               "                        to FILE: at the start, at each new crash, at the end\n"
               "  --junit FILE          the same as JUnit XML (one testcase per crash)\n"
               "  --source-root DIR     SARIF/JUnit source paths are relative to DIR (default:\n"
               "                        the current directory; use the repository root)\n"
               "  --require-coverage    a target built without coverage instrumentation is an\n"
               "                        error (exit 2), not a warning\n"
               "  --sanitizer-target FILE  the same harness built with AddressSanitizer/UBSan\n"
               "                        (-fsanitize=address,undefined,fuzzer-no-link\n"
               "                        -shared-libasan): the workers fuzz TARGET.so at its\n"
               "                        speed, one more worker runs the seeds, every new\n"
               "                        corpus entry and a sample of the fuzzing inputs on\n"
               "                        FILE; its crashes are verified and stored on FILE\n"
               "  --sanitizer-share PCT the sanitizer worker's time, at most PCT percent of\n"
               "                        the fuzzing workers' (default 10)\n"
               "With files instead of directories (all of them files), nothing is fuzzed:\n"
               "each FILE runs once (--runs N: N times) in a fresh sandboxed runner, as\n"
               "libFuzzer runs file arguments; a crash is classified and its report shown.\n"
               "It stops at the first crash unless --keep-going; nothing is written to disk\n"
               "(--out is not used). Mixing files and directories is a usage error.\n"
               "examples:\n"
               "  snapfuzz run ./parser.so seeds/ --max-total-time 600\n"
               "  snapfuzz run ./parser.so crash-1 crash-2 --keep-going   # still crashing?\n"
               "  snapfuzz run ./parser.so --workers 4 --dict parser.dict --keep-going\n"
               "  snapfuzz run ./parser.so --workers 1 --seed 7 --runs 1000000\n"
               "  snapfuzz run ./parser.so --max-total-time 300 --sarif out.sarif\n"
               "  snapfuzz run ./parser.so --sanitizer-target ./parser-asan.so --workers 4\n"
               "exit status: 0 nothing found, 1 a crash was found and stored (with files: an\n"
               "input crashed), 2 bad usage or input (with files: a file missing or\n"
               "unreadable), 3 internal error.\n");
}

static void help_reproduce(FILE *f)
{
        fprintf(f, "usage: snapfuzz reproduce CRASH_ID [--out DIR] [--target PATH] [--timeout S]\n"
                   "                [--sandbox MODE] [--sandbox-policy FILE] [--trust-record]\n"
                   "Run a stored crash again, once, through the same worker, runner and sandbox\n"
                   "code as fuzzing, and print its report. crash.json is untrusted: it runs in\n"
                   "the default strict sandbox unless told otherwise.\n"
                   "  --out DIR      the output directory that holds crashes/CRASH_ID (default\n"
                   "                 ./snapfuzz-out)\n"
                   "  --target PATH  run this build instead of the one crash.json names (a fix)\n"
                   "  --timeout S    the hang timeout (default: the crash's own)\n"
                   "  --sandbox MODE, --sandbox-policy FILE  the sandbox to use (replaces the\n"
                   "                 one stored in crash.json)\n"
                   "  --trust-record  use the sandbox stored in crash.json (mode and policy),\n"
                   "                 even when it is looser than strict\n"
                   "examples:\n"
                   "  snapfuzz crashes --out out        # the ids\n"
                   "  snapfuzz reproduce 9a74042773df6cf3 --out out\n"
                   "  snapfuzz reproduce 9a74042773df6cf3 --out out --target ./fixed.so\n"
                   "exit status: 0 it no longer crashes, 1 it still crashes, 2 bad usage, an\n"
                   "unknown id or a corrupt record, 3 internal error.\n");
}

static int check_target(SfRunConfig *cfg)
{
        char why[512];
        int r = elf_check_shared_object(cfg->target, why, sizeof(why));
        if (r < 0) {
                log_error("%s: %s", cfg->target, why);
                return SF_EXIT_USAGE;
        }
        if (!realpath(cfg->target, cfg->target_abs)) {
                log_error("%s: %s", cfg->target, strerror(errno));
                return SF_EXIT_USAGE;
        }
        return 0;
}

/* --sanitizer-target: a shared object like the target, not the target
 * itself, built with AddressSanitizer or UBSan (else it finds nothing the
 * target does not). Its entry point is checked when its worker loads it. */
static int check_sanitizer_target(SfRunConfig *cfg, bool files)
{
        char why[512];
        SanitizerInfo si;
        const char *path = cfg->sanitizer_target;
        if (!path) {
                if (!cfg->sanitizer_share)
                        return 0;
                log_error("--sanitizer-share needs --sanitizer-target FILE");
                return SF_EXIT_USAGE;
        }
        if (files) {
                log_error("--sanitizer-target is for fuzzing; to run files on the sanitizer build, "
                          "give it as the target: snapfuzz run %s FILE...",
                          path);
                return SF_EXIT_USAGE;
        }
        if (elf_check_shared_object(path, why, sizeof(why)) < 0) {
                log_error("--sanitizer-target %s: %s", path, why);
                return SF_EXIT_USAGE;
        }
        if (!realpath(path, cfg->sanitizer_abs)) {
                log_error("--sanitizer-target %s: %s", path, strerror(errno));
                return SF_EXIT_USAGE;
        }
        if (strcmp(cfg->sanitizer_abs, cfg->target_abs) == 0) {
                log_error("--sanitizer-target %s is the target itself: give the same harness "
                          "built with -fsanitize=address,undefined,fuzzer-no-link",
                          path);
                return SF_EXIT_USAGE;
        }
        if (sanitizer_detect(cfg->sanitizer_abs, &si, why, sizeof(why)) < 0) {
                log_error("--sanitizer-target %s: %s", path, why);
                return SF_EXIT_USAGE;
        }
        if (!si.asan && !si.ubsan) {
                log_error("--sanitizer-target %s has no AddressSanitizer or UBSan: build the "
                          "harness with -fsanitize=address,undefined,fuzzer-no-link "
                          "-shared-libasan",
                          path);
                return SF_EXIT_USAGE;
        }
        if (sanitizer_detect(cfg->target_abs, &si, why, sizeof(why)) == 0 && (si.asan || si.ubsan))
                log_warn("the target %s is built with a sanitizer too: it is fuzzed at the "
                         "sanitizer's speed (give the plain build as the target)",
                         cfg->target);
        return 0;
}

/* `snapfuzz run`'s options (enum and table, in --help's order). */
enum {
        RUN_OPT_OUT = 1000,
        RUN_OPT_WORKERS,
        RUN_OPT_TIME,
        RUN_OPT_RUNS,
        RUN_OPT_TIMEOUT,
        RUN_OPT_RSS,
        RUN_OPT_MALLOC,
        RUN_OPT_SEED,
        RUN_OPT_MAXLEN,
        RUN_OPT_KEEP,
        RUN_OPT_SANDBOX,
        RUN_OPT_SANDBOX_POLICY,
        RUN_OPT_STATUS,
        RUN_OPT_DICT,
        RUN_OPT_VALUE_PROFILE,
        RUN_OPT_MINIMIZE_TIME,
        RUN_OPT_NO_MINIMIZE,
        RUN_OPT_DETECT_LEAKS,
        RUN_OPT_RUNNER_LIFETIME,
        RUN_OPT_KEEP_SEEDS,
        RUN_OPT_NO_REDUCE,
        RUN_OPT_REPRODUCIBLE,
        RUN_OPT_NO_REPRODUCIBLE,
        RUN_OPT_TARGET_OUTPUT,
        RUN_OPT_CLOSE_FD_MASK,
        RUN_OPT_SYNC_DIR,
        RUN_OPT_SYNC_NAME,
        RUN_OPT_SYNC_EVERY,
        RUN_OPT_SARIF,
        RUN_OPT_JUNIT,
        RUN_OPT_SOURCE_ROOT,
        RUN_OPT_QUIET,
        RUN_OPT_NO_SCREEN,
        RUN_OPT_REQUIRE_COVERAGE,
        RUN_OPT_SANITIZER_TARGET,
        RUN_OPT_SANITIZER_SHARE,
        RUN_OPT_HELP,
};

static const struct option run_opts[] = {
    {"out", required_argument, NULL, RUN_OPT_OUT},
    {"workers", required_argument, NULL, RUN_OPT_WORKERS},
    {"max-total-time", required_argument, NULL, RUN_OPT_TIME},
    {"runs", required_argument, NULL, RUN_OPT_RUNS},
    {"timeout", required_argument, NULL, RUN_OPT_TIMEOUT},
    {"rss-limit-mb", required_argument, NULL, RUN_OPT_RSS},
    {"malloc-limit-mb", required_argument, NULL, RUN_OPT_MALLOC},
    {"seed", required_argument, NULL, RUN_OPT_SEED},
    {"max-len", required_argument, NULL, RUN_OPT_MAXLEN},
    {"keep-going", no_argument, NULL, RUN_OPT_KEEP},
    {"sandbox", required_argument, NULL, RUN_OPT_SANDBOX},
    {"sandbox-policy", required_argument, NULL, RUN_OPT_SANDBOX_POLICY},
    {"status-every", required_argument, NULL, RUN_OPT_STATUS},
    {"dict", required_argument, NULL, RUN_OPT_DICT},
    {"use-value-profile", no_argument, NULL, RUN_OPT_VALUE_PROFILE},
    {"minimize-time", required_argument, NULL, RUN_OPT_MINIMIZE_TIME},
    {"no-minimize", no_argument, NULL, RUN_OPT_NO_MINIMIZE},
    {"detect-leaks", required_argument, NULL, RUN_OPT_DETECT_LEAKS},
    {"runner-lifetime-ms", required_argument, NULL, RUN_OPT_RUNNER_LIFETIME},
    {"keep-seeds", no_argument, NULL, RUN_OPT_KEEP_SEEDS},
    {"no-reduce", no_argument, NULL, RUN_OPT_NO_REDUCE},
    {"reproducible", no_argument, NULL, RUN_OPT_REPRODUCIBLE},
    {"no-reproducible", no_argument, NULL, RUN_OPT_NO_REPRODUCIBLE},
    {"target-output", required_argument, NULL, RUN_OPT_TARGET_OUTPUT},
    {"close-fd-mask", required_argument, NULL, RUN_OPT_CLOSE_FD_MASK},
    {"sync-dir", required_argument, NULL, RUN_OPT_SYNC_DIR},
    {"name", required_argument, NULL, RUN_OPT_SYNC_NAME},
    {"sync-every", required_argument, NULL, RUN_OPT_SYNC_EVERY},
    {"sarif", required_argument, NULL, RUN_OPT_SARIF},
    {"junit", required_argument, NULL, RUN_OPT_JUNIT},
    {"source-root", required_argument, NULL, RUN_OPT_SOURCE_ROOT},
    {"quiet", no_argument, NULL, RUN_OPT_QUIET},
    {"no-screen", no_argument, NULL, RUN_OPT_NO_SCREEN},
    {"require-coverage", no_argument, NULL, RUN_OPT_REQUIRE_COVERAGE},
    {"sanitizer-target", required_argument, NULL, RUN_OPT_SANITIZER_TARGET},
    {"sanitizer-share", required_argument, NULL, RUN_OPT_SANITIZER_SHARE},
    {"help", no_argument, NULL, RUN_OPT_HELP},
    {0},
};

typedef struct RunArgs {
        SfRunConfig cfg;
        bool malloc_limit_set;
        bool clock_schedule; /* --no-reproducible */
        const char *policy_path;
} RunArgs;

/* --sync-dir, --name, --sync-every (engine/sync.h). */
static int run_sync_option(RunArgs *a, int c)
{
        uint64_t v;
        if (c == RUN_OPT_SYNC_EVERY) {
                if (cliopt_u64("--sync-every", optarg, 1, 86400, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.sync_every_s = (unsigned)v;
        } else if (!*optarg) {
                log_error("%s needs a value", c == RUN_OPT_SYNC_DIR ? "--sync-dir" : "--name");
                return SF_EXIT_USAGE;
        } else if (c == RUN_OPT_SYNC_DIR) {
                a->cfg.sync_dir = optarg;
        } else if (!engine_sync_name_valid(optarg)) {
                char buf[1200];
                log_error("--name %s is not a valid instance name: 1 to 64 letters, digits, '_', "
                          "'-' or '.', not starting with '.'",
                          termsafe_str(buf, sizeof(buf), optarg, 256));
                return SF_EXIT_USAGE;
        } else {
                a->cfg.sync_name = optarg;
        }
        return 0;
}

/* Both or neither: an instance in a sync directory needs a name. */
static int run_sync_check(const RunArgs *a)
{
        if (a->cfg.sync_dir && !a->cfg.sync_name) {
                log_error("--sync-dir needs --name NAME: this instance's directory in %s",
                          a->cfg.sync_dir);
                return SF_EXIT_USAGE;
        }
        if (!a->cfg.sync_dir && (a->cfg.sync_name || a->cfg.sync_every_s)) {
                log_error("--name and --sync-every need --sync-dir DIR");
                return SF_EXIT_USAGE;
        }
        return 0;
}

/* One option of `snapfuzz run` into @a. Returns 0, a positive SF_EXIT_*
 * code to exit with at once (a bad value, after its line; --help), or
 * -ENOENT for an option it does not know. Over 80 lines: one case per
 * option, a long switch, each case a few lines. */
static int run_option(RunArgs *a, int c)
{
        uint64_t v;
        double d;

        switch (c) {
        case RUN_OPT_OUT:
                if (!*optarg) {
                        log_error("--out needs a directory");
                        return SF_EXIT_USAGE;
                }
                a->cfg.out_dir = optarg;
                break;
        case RUN_OPT_WORKERS:
                if (cliopt_u64("--workers", optarg, 1, 256, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.workers = (unsigned)v;
                break;
        case RUN_OPT_TIME:
                if (cliopt_u64("--max-total-time", optarg, 0, UINT32_MAX, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.max_total_time_s = v;
                break;
        case RUN_OPT_RUNS:
                if (cliopt_u64("--runs", optarg, 0, UINT64_MAX / 2, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.runs = v;
                break;
        case RUN_OPT_TIMEOUT:
                if (cliopt_seconds("--timeout", optarg, 0.01, 86400, &d) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.timeout_ms = (unsigned)(d * 1000);
                break;
        case RUN_OPT_RSS:
                if (cliopt_u64("--rss-limit-mb", optarg, 0, 1u << 30, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.rss_limit_mb = (unsigned)v;
                break;
        case RUN_OPT_MALLOC:
                if (cliopt_u64("--malloc-limit-mb", optarg, 0, 1u << 30, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.malloc_limit_mb = (unsigned)v;
                a->malloc_limit_set = true;
                break;
        case RUN_OPT_SEED:
                if (cliopt_u64("--seed", optarg, 0, UINT64_MAX, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.seed = v;
                a->cfg.seed_set = true;
                break;
        case RUN_OPT_MAXLEN:
                if (cliopt_u64("--max-len", optarg, 1, RECORD_MAX_LEN_LIMIT, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.max_len = (size_t)v;
                break;
        case RUN_OPT_KEEP:
                a->cfg.keep_going = true;
                break;
        case RUN_OPT_SANDBOX: {
                SandboxMode m;
                if (sandbox_mode_parse(optarg, &m) < 0) {
                        log_error("--sandbox takes 'strict', 'log' or 'off', not '%s'", optarg);
                        return SF_EXIT_USAGE;
                }
                a->cfg.sandbox = sandbox_mode_name(m);
                break;
        }
        case RUN_OPT_SANDBOX_POLICY:
                a->policy_path = optarg;
                break;
        case RUN_OPT_STATUS:
                if (cliopt_u64("--status-every", optarg, 1, 3600, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.status_every_s = (unsigned)v;
                break;
        case RUN_OPT_DICT:
                if (!*optarg) {
                        log_error("--dict needs a file");
                        return SF_EXIT_USAGE;
                }
                a->cfg.dict_path = optarg;
                break;
        case RUN_OPT_VALUE_PROFILE:
                a->cfg.value_profile = true;
                break;
        case RUN_OPT_MINIMIZE_TIME:
                if (cliopt_seconds("--minimize-time", optarg, 0, 3600, &d) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.minimize_ms = (unsigned)(d * 1000);
                break;
        case RUN_OPT_NO_MINIMIZE:
                a->cfg.minimize_ms = 0;
                break;
        case RUN_OPT_DETECT_LEAKS:
                if (cliopt_u64("--detect-leaks", optarg, 0, 1, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.detect_leaks = v == 1;
                break;
        case RUN_OPT_RUNNER_LIFETIME:
                if (cliopt_u64("--runner-lifetime-ms", optarg, 0, 3600000, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.runner_lifetime_ms = (unsigned)v;
                break;
        case RUN_OPT_KEEP_SEEDS:
                a->cfg.keep_seeds = true;
                break;
        case RUN_OPT_NO_REDUCE:
                a->cfg.no_reduce = true;
                break;
        case RUN_OPT_REPRODUCIBLE:
                a->cfg.reproducible = true;
                break;
        case RUN_OPT_NO_REPRODUCIBLE:
                a->clock_schedule = true;
                break;
        case RUN_OPT_TARGET_OUTPUT:
                if (strcmp(optarg, "pass") != 0 && strcmp(optarg, "log") != 0 &&
                    strcmp(optarg, "discard") != 0) {
                        log_error("--target-output takes 'log', 'pass' or 'discard', not '%s'",
                                  optarg);
                        return SF_EXIT_USAGE;
                }
                a->cfg.target_output = optarg;
                break;
        case RUN_OPT_CLOSE_FD_MASK:
                if (cliopt_u64("--close-fd-mask", optarg, 0, 3, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.close_fd_mask = (unsigned)v;
                break;
        case RUN_OPT_SARIF:
                a->cfg.sarif_path = optarg;
                break;
        case RUN_OPT_JUNIT:
                a->cfg.junit_path = optarg;
                break;
        case RUN_OPT_SOURCE_ROOT:
                a->cfg.source_root = optarg;
                break;
        case RUN_OPT_SYNC_DIR:
        case RUN_OPT_SYNC_NAME:
        case RUN_OPT_SYNC_EVERY:
                return run_sync_option(a, c);
        case RUN_OPT_QUIET:
                a->cfg.display = SF_DISPLAY_QUIET;
                break;
        case RUN_OPT_NO_SCREEN:
                if (a->cfg.display != SF_DISPLAY_QUIET)
                        a->cfg.display = SF_DISPLAY_LINES;
                break;
        case RUN_OPT_REQUIRE_COVERAGE:
                a->cfg.require_coverage = true;
                break;
        case RUN_OPT_SANITIZER_TARGET:
                if (!*optarg) {
                        log_error("--sanitizer-target needs a file: the harness built with "
                                  "-fsanitize=address,undefined,fuzzer-no-link");
                        return SF_EXIT_USAGE;
                }
                a->cfg.sanitizer_target = optarg;
                break;
        case RUN_OPT_SANITIZER_SHARE:
                if (cliopt_u64("--sanitizer-share", optarg, 1, 100, &v) < 0)
                        return SF_EXIT_USAGE;
                a->cfg.sanitizer_share = (unsigned)v;
                break;
        case RUN_OPT_HELP:
                help_run(stdout);
                return SF_EXIT_OK;
        default:
                return -ENOENT;
        }
        return 0;
}

/* Whether the operands after the target are all files (single-input runs,
 * as libFuzzer's file arguments) rather than corpus directories: 1 files,
 * 0 directories (or none), SF_EXIT_USAGE after a line for a missing path or
 * a mix of both. */
static int run_operands_are_files(char **paths, int n)
{
        int files = 0;
        for (int i = 0; i < n; i++) {
                struct stat st;
                if (stat(paths[i], &st) < 0) {
                        char shown[TERMSAFE_BUF];
                        log_error("no corpus directory or input file %s: %s",
                                  termsafe_str(shown, sizeof(shown), paths[i], 512),
                                  strerror(errno));
                        return SF_EXIT_USAGE;
                }
                files += !S_ISDIR(st.st_mode);
        }
        if (files && files != n) {
                log_error("run takes corpus directories (to fuzz) or input files (to run each "
                          "once), not both");
                return SF_EXIT_USAGE;
        }
        return files ? 1 : 0;
}

/* The operands: the target and the corpus directories. */
static int run_operands(RunArgs *a, char **operands, int n_operands)
{
        if (n_operands < 1) {
                log_error("run needs a target: snapfuzz run TARGET.so [CORPUS_DIR...]");
                return SF_EXIT_USAGE;
        }
        a->cfg.target = operands[0];
        a->cfg.corpus_dirs = operands + 1;
        a->cfg.n_corpus_dirs = n_operands - 1;
        for (int i = 0; i < a->cfg.n_corpus_dirs; i++) {
                struct stat st;
                if (stat(a->cfg.corpus_dirs[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
                        log_error("corpus directory %s: %s", a->cfg.corpus_dirs[i],
                                  errno ? strerror(errno) : "not a directory");
                        return SF_EXIT_USAGE;
                }
        }
        return check_target(&a->cfg);
}

/* --sarif, --junit, --source-root: a path that cannot be written is a
 * usage error found before anything runs, not after the campaign. */
static int run_reports(RunArgs *a)
{
        const char *paths[2][2] = {{"--sarif", a->cfg.sarif_path}, {"--junit", a->cfg.junit_path}};
        char err[1024];
        struct stat st;
        for (int i = 0; i < 2; i++) {
                if (paths[i][1] && ciout_check_path(paths[i][0], paths[i][1], err, sizeof(err))) {
                        log_error("%s", err);
                        return SF_EXIT_USAGE;
                }
        }
        if (a->cfg.source_root && (stat(a->cfg.source_root, &st) < 0 || !S_ISDIR(st.st_mode))) {
                log_error("--source-root %s is not a directory", a->cfg.source_root);
                return SF_EXIT_USAGE;
        }
        return 0;
}

/* A bad policy is a usage error, found before anything runs. */
static int run_policy(RunArgs *a, char **ret_policy)
{
        char err[1024];
        *ret_policy = NULL;
        if (!a->policy_path)
                return 0;
        if (strcmp(a->cfg.sandbox, "off") == 0) {
                log_error("--sandbox-policy has no effect with --sandbox off");
                return SF_EXIT_USAGE;
        }
        if (sandbox_policy_load(a->policy_path, ret_policy, err, sizeof(err)) < 0 ||
            sandbox_policy_check(a->policy_path, *ret_policy, a->cfg.out_dir, err, sizeof(err)) <
                0) {
                log_error("%s", err);
                free(*ret_policy);
                *ret_policy = NULL;
                return SF_EXIT_USAGE;
        }
        a->cfg.sandbox_policy = *ret_policy;
        return 0;
}

/* The exit status of an engine result (include/snapfuzz/engine.h). */
static int exit_status(int r)
{
        if (r == ENGINE_RUN_CRASHED)
                return SF_EXIT_CRASH;
        if (r >= 0)
                return SF_EXIT_OK;
        return engine_error_is_input(r) ? SF_EXIT_USAGE : SF_EXIT_INTERNAL;
}

static int cmd_run(int argc, char **argv)
{
        RunArgs a = {.cfg = {
                         .out_dir = "snapfuzz-out",
                         .timeout_ms = 1000,
                         .rss_limit_mb = 2048,
                         .sandbox = "strict",
                         .status_every_s = 3,
                         .minimize_ms = 1000,
                         .detect_leaks = true,
                         .runner_lifetime_ms = 500,
                         .target_output = "log",
                     }};
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        a.cfg.workers = cores > 0 ? (unsigned)cores : 1;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", run_opts, NULL)) != -1) {
                if (c == 'h')
                        c = RUN_OPT_HELP;
                r = run_option(&a, c);
                if (r == -ENOENT)
                        return cliopt_bad_in(c, argv, run_opts, "run");
                if (r > 0 || c == RUN_OPT_HELP)
                        return r;
        }
        r = run_sync_check(&a);
        if (r)
                return r;
        if (a.cfg.reproducible && (!a.cfg.seed_set || a.cfg.workers != 1)) {
                log_error("--reproducible needs --seed N and --workers 1");
                return SF_EXIT_USAGE;
        }
        if (a.cfg.reproducible && a.clock_schedule) {
                log_error("--reproducible and --no-reproducible contradict each other; keep one");
                return SF_EXIT_USAGE;
        }
        /* A seed and one worker: the same inputs on every run. */
        a.cfg.deterministic = a.cfg.seed_set && a.cfg.workers == 1 && !a.clock_schedule;
        /* As libFuzzer: one allocation may not exceed the RSS limit. */
        if (!a.malloc_limit_set)
                a.cfg.malloc_limit_mb = a.cfg.rss_limit_mb;
        /* getopt_long moved the operands (target, corpus dirs) to the end. */
        int files = run_operands_are_files(argv + optind + 1, argc - optind - 1);
        if (files == SF_EXIT_USAGE)
                return files;
        if (files) {
                a.cfg.target = argv[optind];
                r = check_target(&a.cfg);
        } else {
                r = run_operands(&a, argv + optind, argc - optind);
                if (r == 0)
                        r = run_reports(&a);
        }
        if (r == 0)
                r = check_sanitizer_target(&a.cfg, files);
        if (r)
                return r;
        char *policy;
        r = run_policy(&a, &policy);
        if (r)
                return r;
        if (files)
                r = engine_run_inputs(&a.cfg, argv + optind + 1, argc - optind - 1);
        else
                r = engine_run(&a.cfg);
        free(policy);
        return exit_status(r);
}

static int cmd_reproduce(int argc, char **argv)
{
        enum { OPT_OUT = 1000, OPT_TARGET, OPT_TIMEOUT, OPT_HELP };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"target", required_argument, NULL, OPT_TARGET},
            {"timeout", required_argument, NULL, OPT_TIMEOUT},
            {"help", no_argument, NULL, OPT_HELP},
            CLIOPT_SANDBOX_OPTIONS,
            {0},
        };
        ReproduceConfig cfg = {.out_dir = "snapfuzz-out"};
        CliSandbox sb = {0};
        double d;
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        cfg.out_dir = optarg;
                        break;
                case OPT_TARGET:
                        cfg.trust.target = optarg;
                        break;
                case OPT_TIMEOUT:
                        if (cliopt_seconds("--timeout", optarg, 0.01, 86400, &d) < 0)
                                return SF_EXIT_USAGE;
                        cfg.trust.timeout_ms = (unsigned)(d * 1000);
                        break;
                case 'h':
                case OPT_HELP:
                        help_reproduce(stdout);
                        return SF_EXIT_OK;
                default:
                        r = cliopt_sandbox_take(c, optarg, &cfg.trust, &sb);
                        if (r == 0)
                                return cliopt_bad_in(c, argv, opts, "reproduce");
                        if (r != 1)
                                return r;
                }
        }
        if (argc - optind != 1) {
                log_error("reproduce needs exactly one crash id: snapfuzz reproduce ID "
                          "[--out DIR]");
                return SF_EXIT_USAGE;
        }
        cfg.id = argv[optind];
        if (cfg.trust.target) {
                char why[512];
                if (elf_check_shared_object(cfg.trust.target, why, sizeof(why)) < 0) {
                        log_error("%s: %s", cfg.trust.target, why);
                        return SF_EXIT_USAGE;
                }
        }
        r = cliopt_sandbox_finish(&cfg.trust, &sb, cfg.out_dir);
        if (r == 0)
                r = exit_status(reproduce_run(&cfg));
        free(sb.policy_json);
        return r;
}

static int cmd_status(int argc, char **argv)
{
        enum { OPT_OUT = 1000, OPT_HELP };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        const char *out_dir = NULL;
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        out_dir = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        printf("usage: snapfuzz status [OUT_DIR | --out DIR]\n"
                               "Says whether the campaign in OUT_DIR (default ./snapfuzz-out) is\n"
                               "running, finished or was killed, and its figures.\n"
                               "example: snapfuzz status snapfuzz-out\n");
                        return SF_EXIT_OK;
                default:
                        return cliopt_bad_in(c, argv, opts, "status");
                }
        }
        if (argc - optind > 1 || (out_dir && argc - optind == 1)) {
                log_error("status takes one output directory: snapfuzz status [OUT_DIR]");
                return SF_EXIT_USAGE;
        }
        if (argc - optind == 1)
                out_dir = argv[optind];
        return exit_status(engine_status(out_dir ? out_dir : "snapfuzz-out"));
}

int main(int argc, char **argv)
{
        if (argc >= 2 && strcmp(argv[1], "__worker") == 0)
                return engine_worker_main(argc - 1, argv + 1);
        if (argc < 2) {
                usage(stderr);
                return SF_EXIT_USAGE;
        }
        /* A peer that went away (a worker that failed to load, a helper that
         * died) must be an EPIPE to handle, never a SIGPIPE that kills the
         * coordinator with crashes still unstored. */
        signal(SIGPIPE, SIG_IGN);
        /* Standard output carries reports; keep it line-buffered so that a
         * pipe sees each line as it is written. */
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return SF_EXIT_OK;
        }
        if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
                printf("snapfuzz %s\n", SNAPFUZZ_VERSION);
                return SF_EXIT_OK;
        }
        if (strcmp(argv[1], "run") == 0)
                return cmd_run(argc - 1, argv + 1);
        if (strcmp(argv[1], "reproduce") == 0)
                return cmd_reproduce(argc - 1, argv + 1);
        if (strcmp(argv[1], "minimize") == 0)
                return minimize_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "merge") == 0)
                return merge_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "crashes") == 0)
                return crashes_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "status") == 0)
                return cmd_status(argc - 1, argv + 1);
        if (strcmp(argv[1], "report") == 0)
                return report_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "regress") == 0)
                return regress_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "plot") == 0)
                return plot_cmd(argc - 1, argv + 1);
        if (strcmp(argv[1], "cflags") == 0)
                return cflags_cmd(argc - 1, argv + 1);
        log_error("unknown command '%s'; see snapfuzz --help", argv[1]);
        return SF_EXIT_USAGE;
}
