/*
 * libFuzzer's command line, read as libFuzzer reads it:
 * `./fuzzer [-flag=value ...] [CORPUS_DIR ... | FILE ...]`. Every flag is
 * `-name=value`; an argument that does not start with '-' is an input (a
 * corpus directory or a file to run once); `--anything` is ignored (with
 * libFuzzer's one INFO line); a name libFuzzer does not know is warned
 * about and ignored. The flags snapfuzz maps are fields of LfFlags; the
 * other names libFuzzer knows are accepted and have no effect.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

typedef struct LfFlags {
        long verbosity;
        long seed; /* 0: from the clock */
        long runs; /* -1: no limit; 0: the seeds only */
        long max_len;
        long keep_seed;
        long timeout; /* seconds */
        long error_exitcode;
        long timeout_exitcode;
        long max_total_time;
        long help;
        long fork;
        long jobs;
        long workers;
        long merge;
        long minimize_crash;
        long cleanse_crash;
        long use_value_profile;
        long reduce_inputs;
        long print_final_stats;
        long close_fd_mask;
        long detect_leaks;
        long rss_limit_mb;
        long malloc_limit_mb; /* 0: the RSS limit */
        long ignore_remaining_args;
        long create_missing_dirs;
        const char *dict;
        const char *artifact_prefix;
        const char *exact_artifact_path;
        const char *merge_control_file;
        /* snapfuzz's own (libFuzzer warns about them as unknown flags): */
        const char *snapfuzz_sandbox; /* strict (default), log or off */
        const char *snapfuzz_out;     /* the engine's working directory, kept */
        const char *snapfuzz_sandbox_policy;
        const char *snapfuzz_sync_dir;  /* snapfuzz run's --sync-dir */
        const char *snapfuzz_sync_name; /* snapfuzz run's --name */
        long snapfuzz_sync_every;       /* snapfuzz run's --sync-every (0: its default) */
        /* The inputs, in order (pointers into argv). */
        char **inputs;
        int n_inputs;
} LfFlags;

/* Reads @argv[1..@argc-1] into @ret (defaults first; @ret->inputs is
 * allocated, free it with lfflags_deinit). Prints libFuzzer's INFO and
 * WARNING lines for ignored and unknown flags. Returns 0, or -EINVAL after
 * one "ERROR: ..." line for a value that is not a number, or -ENOMEM. */
int lfflags_parse(int argc, char **argv, LfFlags *ret);
void lfflags_deinit(LfFlags *f);

/* -help=1: the flags and what snapfuzz does with each. */
void lfflags_help(const char *prog);
