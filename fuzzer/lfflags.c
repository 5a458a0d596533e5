/*
 * The flag table: each flag snapfuzz maps is one row naming its field of
 * LfFlags (a number or a string) and its default; the names libFuzzer
 * knows but snapfuzz has no use for are a list of their own, accepted
 * silently as libFuzzer accepts them. Behaviour checked against
 * libFuzzer's FuzzerDriver.cpp (ParseOneFlag, ParseFlags): only
 * `-name=value` is a flag, the first match wins, `--x` is ignored with one
 * INFO line, an unknown name gets a WARNING and is ignored, and
 * -ignore_remaining_args=1 stops the parsing. Unlike libFuzzer (which
 * reads "12abc" as 12 and "abc" as 0), a value that is not a whole number
 * is an error: a mistyped -runs must not silently fuzz forever.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzer/lfflags.h"

#include "snapfuzz/banned.h"

typedef struct LfFlagRow {
        const char *name;
        size_t num_off; /* offset of a long in LfFlags, or SIZE_MAX */
        size_t str_off; /* offset of a const char * in LfFlags, or SIZE_MAX */
        long def;
        const char *help;
} LfFlagRow;

#define NUM(n, d, h)                                                                               \
        {                                                                                          \
#n, offsetof(LfFlags, n), SIZE_MAX, d, h                                           \
        }
#define STR(n, h)                                                                                  \
        {                                                                                          \
#n, SIZE_MAX, offsetof(LfFlags, n), 0, h                                           \
        }

static const LfFlagRow rows[] = {
    NUM(verbosity, 1, "0: only errors and the crash report"),
    NUM(seed, 0, "the run's random seed; 0: from the clock"),
    NUM(runs, -1, "executions to run (-1: no limit; 0: run the seeds and stop)"),
    NUM(max_len, 0, "longest input; 0: max(4096, the largest seed)"),
    NUM(keep_seed, 0, "1: seeds stay in the corpus, never replaced by shorter inputs"),
    NUM(timeout, 1200, "an input running longer than this many seconds is a timeout"),
    NUM(error_exitcode, 77, "exit status when a crash or a leak was found"),
    NUM(timeout_exitcode, 70, "exit status when a timeout was found"),
    NUM(max_total_time, 0, "stop after this many seconds (0: no limit)"),
    NUM(help, 0, "1: print this list"),
    NUM(fork, 0, "N: fuzz with N worker processes (snapfuzz always forks its runners)"),
    NUM(jobs, 0, "N: fuzz with min(N, cores/2) worker processes in one campaign"),
    NUM(workers, 0, "worker processes (with or without -jobs)"),
    NUM(merge, 0, "1: merge the 2nd, 3rd, ... corpus into the 1st"),
    NUM(minimize_crash, 0, "1: minimize one crash input (with -runs or -max_total_time)"),
    NUM(cleanse_crash, 0, "1: replace the bytes of one crash input that do not matter"),
    NUM(use_value_profile, 0, "1: how close comparisons come counts as coverage"),
    NUM(reduce_inputs, 1, "0: keep no shorter forms of corpus inputs"),
    NUM(print_final_stats, 0, "1: print the stat:: lines at exit"),
    NUM(close_fd_mask, 0, "1: close the target's stdout, 2: its stderr, 3: both"),
    NUM(detect_leaks, 1, "1: report leaks of targets built with LeakSanitizer"),
    NUM(rss_limit_mb, 2048, "a runner above this resident size is out of memory (0: none)"),
    NUM(malloc_limit_mb, 0, "one allocation above this is out of memory (0: the RSS limit)"),
    NUM(ignore_remaining_args, 0, "1: the arguments after this one are the target's"),
    NUM(create_missing_dirs, 0, "1: create the corpus and artifact directories"),
    STR(dict, "dictionary file (libFuzzer/AFL format)"),
    STR(artifact_prefix, "crash-, timeout-, oom- and leak- files are written as PREFIXname"),
    STR(exact_artifact_path, "the one artifact is written to this path"),
    STR(merge_control_file, "the merge's control file (with -merge=1)"),
    STR(snapfuzz_sandbox, "snapfuzz: the runners' sandbox, strict (default), log or off"),
    STR(snapfuzz_sandbox_policy, "snapfuzz: a sandbox policy file (README, \"The sandbox\")"),
    STR(snapfuzz_out, "snapfuzz: keep the engine's working directory here"),
    STR(snapfuzz_sync_dir,
        "snapfuzz: share finds with instances (snapfuzz, afl-fuzz -M/-S) in this "
        "AFL++-style sync directory"),
    STR(snapfuzz_sync_name, "snapfuzz: this instance's directory in -snapfuzz_sync_dir"),
    NUM(snapfuzz_sync_every, 0, "snapfuzz: seconds between two reads of the peers (0: 30)"),
};

/* Names libFuzzer knows (FuzzerFlags.def) that change nothing here. */
static const char *const known_names[] = {
    "len_control",
    "seed_inputs",
    "cross_over",
    "cross_over_uniform_dist",
    "mutate_depth",
    "reduce_depth",
    "shuffle",
    "prefer_small",
    "exit_on_time",
    "fork_corpus_groups",
    "ignore_timeouts",
    "ignore_ooms",
    "ignore_crashes",
    "set_cover_merge",
    "stop_file",
    "merge_inner",
    "minimize_crash_internal_step",
    "features_dir",
    "mutation_graph_file",
    "use_counters",
    "use_memmem",
    "use_cmp",
    "shrink",
    "reload",
    "report_slow_units",
    "only_ascii",
    "print_pcs",
    "print_funcs",
    "print_corpus_stats",
    "print_coverage",
    "print_full_coverage",
    "dump_coverage",
    "handle_segv",
    "handle_bus",
    "handle_abrt",
    "handle_ill",
    "handle_fpe",
    "handle_int",
    "handle_term",
    "handle_trap",
    "handle_xfsz",
    "handle_usr1",
    "handle_usr2",
    "handle_winexcept",
    "purge_allocator_interval",
    "trace_malloc",
    "exit_on_src_pos",
    "exit_on_item",
    "focus_function",
    "entropic",
    "entropic_feature_frequency_threshold",
    "entropic_number_of_rarest_features",
    "entropic_scale_per_exec_time",
    "analyze_dict",
    "use_clang_coverage",
    "data_flow_trace",
    "collect_data_flow",
};

/* The value of @param if it is `-@name=value`, else NULL. */
static const char *flag_value(const char *param, const char *name)
{
        size_t n = strlen(name);
        if (param[0] != '-' || strncmp(param + 1, name, n) != 0 || param[n + 1] != '=')
                return NULL;
        return param + n + 2;
}

/* A whole number, optionally negative, nothing else. */
static int parse_long(const char *s, long *ret)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || *end || errno)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int take_flag(const char *param, LfFlags *f)
{
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                const char *v = flag_value(param, rows[i].name);
                if (!v)
                        continue;
                if (rows[i].str_off != SIZE_MAX) {
                        *(const char **)((char *)f + rows[i].str_off) = v;
                        return 0;
                }
                if (parse_long(v, (long *)((char *)f + rows[i].num_off)) < 0) {
                        fprintf(stderr, "ERROR: -%s takes a whole number, not '%s'\n", rows[i].name,
                                v);
                        return -EINVAL;
                }
                return 0;
        }
        for (size_t i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++)
                if (flag_value(param, known_names[i]))
                        return 0;
        fprintf(stderr, "\n\nWARNING: unrecognized flag '%s'; use -help=1 to list all flags\n\n",
                param);
        return 0;
}

static void set_defaults(LfFlags *f)
{
        memset(f, 0, sizeof(*f));
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                if (rows[i].num_off != SIZE_MAX)
                        *(long *)((char *)f + rows[i].num_off) = rows[i].def;
}

int lfflags_parse(int argc, char **argv, LfFlags *ret)
{
        bool dashes_said = false;
        set_defaults(ret);
        ret->inputs = calloc((size_t)(argc > 0 ? argc : 1), sizeof(char *));
        if (!ret->inputs)
                return -ENOMEM;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                if (a[0] != '-') {
                        ret->inputs[ret->n_inputs++] = argv[i];
                        continue;
                }
                if (a[1] == '-') {
                        if (!dashes_said)
                                fprintf(stderr, "INFO: libFuzzer ignores flags that start "
                                                "with '--'\n");
                        dashes_said = true;
                        continue;
                }
                int r = take_flag(a, ret);
                if (r < 0) {
                        lfflags_deinit(ret);
                        return r;
                }
                if (ret->ignore_remaining_args)
                        break;
        }
        return 0;
}

void lfflags_deinit(LfFlags *f)
{
        free(f->inputs);
        f->inputs = NULL;
        f->n_inputs = 0;
}

void lfflags_help(const char *prog)
{
        fprintf(stderr,
                "Usage:\n\n"
                "To run fuzzing pass 0 or more directories.\n"
                "%s [-flag1=val1 [-flag2=val2 ...] ] [dir1 [dir2 ...] ]\n\n"
                "To run individual tests without fuzzing pass 1 or more files:\n"
                "%s [-flag1=val1 [-flag2=val2 ...] ] file1 [file2 ...]\n\n"
                "This is a libFuzzer-compatible binary running snapfuzz's engine.\n"
                "Flags: (strictly in form -flag=value)\n",
                prog, prog);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                fprintf(stderr, " %-24s %ld\t%s\n", rows[i].name, rows[i].def, rows[i].help);
        fprintf(stderr, "Other libFuzzer flags are accepted and have no effect.\n"
                        "Flags starting with '--' are ignored.\n");
}
