/*
 * The command line of `snapfuzz merge`: options and operands are checked
 * here (every directory named exists, the target is a shared object, a
 * policy file is valid) so that bad usage costs one line and nothing runs;
 * the merge itself is the engine's (engine/merge.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cliopt.h"
#include "app/merge_cmd.h"
#include "core/elfcheck.h"
#include "core/log.h"
#include "core/termsafe.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/engine.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

static void help_merge(FILE *f)
{
        fprintf(f,
                "usage: snapfuzz merge TARGET.so OUT_CORPUS IN_DIR... [options]\n"
                "Keep the smallest set of inputs with the coverage of all of them (libFuzzer's\n"
                "-merge=1, afl-cmin): every input of OUT_CORPUS and the IN_DIRs (and their\n"
                "subdirectories) runs once in the sandbox; OUT_CORPUS's inputs count first and\n"
                "stay; of the others, those that add coverage (edges with hit-count buckets,\n"
                "stack depth), smallest first, are written into OUT_CORPUS, named by SHA-1.\n"
                "An input that crashes, hangs or runs out of memory is skipped and counted.\n"
                "  --control-file F      keep progress in F (libFuzzer's -merge_control_file):\n"
                "                        a merge killed at any moment goes on where it stopped\n"
                "                        when run again with the same F (default: a temporary\n"
                "                        file; a killed merge starts over)\n"
                "  --timeout S           an input running longer than S seconds is skipped as\n"
                "                        a hang (default 1; fractions allowed)\n"
                "  --rss-limit-mb MB     a runner over MB resident is out of memory (default\n"
                "                        2048; 0 disables)\n"
                "  --malloc-limit-mb MB  one allocation over MB is out of memory (default: the\n"
                "                        RSS limit; 0 disables)\n"
                "  --max-len BYTES       inputs are run (and kept) cut to BYTES (default 1 MiB)\n"
                "  --use-value-profile   count how close comparisons come as coverage too\n"
                "  --sandbox MODE        strict (default), log or off (see snapfuzz run --help)\n"
                "  --sandbox-policy FILE JSON rules that add syscalls to the allowlist\n"
                "  --quiet               no progress lines\n"
                "examples:\n"
                "  snapfuzz merge ./parser.so corpus/ snapfuzz-out/corpus/ more-seeds/\n"
                "  snapfuzz merge ./parser.so min/ big-corpus/ --control-file merge.txt\n"
                "  # killed? run the same command again: it resumes from merge.txt\n"
                "exit status: 0 merged (skipped inputs are counted, not errors), 2 bad usage,\n"
                "a missing directory, a target that cannot be loaded, or a control file that\n"
                "is not one (or is another target's), 3 internal error.\n");
}

enum {
        OPT_CONTROL = 1000,
        OPT_TIMEOUT,
        OPT_RSS,
        OPT_MALLOC,
        OPT_MAXLEN,
        OPT_VALUE_PROFILE,
        OPT_SANDBOX,
        OPT_SANDBOX_POLICY,
        OPT_QUIET,
        OPT_HELP,
};

static const struct option merge_opts[] = {
    {"control-file", required_argument, NULL, OPT_CONTROL},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"rss-limit-mb", required_argument, NULL, OPT_RSS},
    {"malloc-limit-mb", required_argument, NULL, OPT_MALLOC},
    {"max-len", required_argument, NULL, OPT_MAXLEN},
    {"use-value-profile", no_argument, NULL, OPT_VALUE_PROFILE},
    {"sandbox", required_argument, NULL, OPT_SANDBOX},
    {"sandbox-policy", required_argument, NULL, OPT_SANDBOX_POLICY},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {0},
};

typedef struct MergeArgs {
        SfRunConfig run;
        SfMergeConfig m;
        bool malloc_set;
        const char *policy_path;
} MergeArgs;

/* One option into @a: 0, SF_EXIT_USAGE after a line, -1 for --help (done),
 * or -ENOENT for one it does not know. */
static int merge_option(MergeArgs *a, int c)
{
        uint64_t v;
        double d;
        SandboxMode mode;

        switch (c) {
        case OPT_CONTROL:
                if (!*optarg) {
                        log_error("--control-file needs a file");
                        return SF_EXIT_USAGE;
                }
                a->m.control_file = optarg;
                return 0;
        case OPT_TIMEOUT:
                if (cliopt_seconds("--timeout", optarg, 0.01, 86400, &d) < 0)
                        return SF_EXIT_USAGE;
                a->run.timeout_ms = (unsigned)(d * 1000);
                return 0;
        case OPT_RSS:
                if (cliopt_u64("--rss-limit-mb", optarg, 0, 1u << 30, &v) < 0)
                        return SF_EXIT_USAGE;
                a->run.rss_limit_mb = (unsigned)v;
                return 0;
        case OPT_MALLOC:
                if (cliopt_u64("--malloc-limit-mb", optarg, 0, 1u << 30, &v) < 0)
                        return SF_EXIT_USAGE;
                a->run.malloc_limit_mb = (unsigned)v;
                a->malloc_set = true;
                return 0;
        case OPT_MAXLEN:
                if (cliopt_u64("--max-len", optarg, 1, RECORD_MAX_LEN_LIMIT, &v) < 0)
                        return SF_EXIT_USAGE;
                a->run.max_len = (size_t)v;
                return 0;
        case OPT_VALUE_PROFILE:
                a->run.value_profile = true;
                return 0;
        case OPT_SANDBOX:
                if (sandbox_mode_parse(optarg, &mode) < 0) {
                        log_error("--sandbox takes 'strict', 'log' or 'off', not '%s'", optarg);
                        return SF_EXIT_USAGE;
                }
                a->run.sandbox = sandbox_mode_name(mode);
                return 0;
        case OPT_SANDBOX_POLICY:
                a->policy_path = optarg;
                return 0;
        case OPT_QUIET:
                a->m.quiet = true;
                return 0;
        case 'h':
        case OPT_HELP:
                help_merge(stdout);
                return -1;
        default:
                return -ENOENT;
        }
}

/* The operands: the target, the output corpus, one input directory or
 * more (each must be one). */
static int merge_operands(MergeArgs *a, char **ops, int n)
{
        char why[512], shown[TERMSAFE_BUF];
        if (n < 3) {
                log_error("merge needs a target, an output corpus and at least one input "
                          "directory: snapfuzz merge TARGET.so OUT_CORPUS IN_DIR...");
                return SF_EXIT_USAGE;
        }
        a->run.target = ops[0];
        termsafe_str(shown, sizeof(shown), ops[0], 512);
        if (elf_check_shared_object(ops[0], why, sizeof(why)) < 0) {
                log_error("%s: %s", shown, why);
                return SF_EXIT_USAGE;
        }
        if (!realpath(ops[0], a->run.target_abs)) {
                log_error("%s: %s", shown, strerror(errno));
                return SF_EXIT_USAGE;
        }
        struct stat st;
        if (stat(ops[1], &st) == 0 && !S_ISDIR(st.st_mode)) {
                log_error("output corpus %s is not a directory",
                          termsafe_str(shown, sizeof(shown), ops[1], 512));
                return SF_EXIT_USAGE;
        }
        for (int i = 2; i < n; i++) {
                errno = 0;
                if (stat(ops[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
                        log_error("input directory %s: %s",
                                  termsafe_str(shown, sizeof(shown), ops[i], 512),
                                  errno ? strerror(errno) : "not a directory");
                        return SF_EXIT_USAGE;
                }
        }
        a->m.out_corpus = ops[1];
        a->m.in_dirs = ops + 2;
        a->m.n_in_dirs = n - 2;
        return 0;
}

/* What the merge did, on stdout. */
static void merge_summary(const SfMergeConfig *m, const SfMergeResult *s)
{
        char shown[TERMSAFE_BUF];
        termsafe_str(shown, sizeof(shown), m->out_corpus, 512);
        if (s->inputs == 0) {
                printf("merge: no inputs in the corpus directories; nothing to do\n");
                return;
        }
        printf("merge: %zu inputs (%zu in %s already), %zu run now, %zu from the control file\n",
               s->inputs, s->in_out_corpus, shown, s->inputs - s->reused, s->reused);
        printf("merge: %zu new files (%" PRIu64 " bytes) added to %s; %" PRIu64
               " features, %" PRIu64 " of them new\n",
               s->added, s->added_bytes, shown, s->features, s->new_features);
        size_t skipped = s->crashed + s->timeouts + s->ooms + s->unreadable + s->failed_before;
        if (skipped)
                printf("merge: %zu inputs skipped: %zu crashed, %zu hung, %zu out of memory, %zu "
                       "unreadable, %zu failed in an earlier run of this merge\n",
                       skipped, s->crashed, s->timeouts, s->ooms, s->unreadable, s->failed_before);
        if (s->truncated)
                printf("merge: %zu inputs longer than %zu bytes ran cut to that length\n",
                       s->truncated, s->max_len);
}

/* A bad policy is a usage error, found before anything runs. */
static int merge_policy(MergeArgs *a, char **ret_policy)
{
        char err[1024];
        *ret_policy = NULL;
        if (!a->policy_path)
                return 0;
        if (strcmp(a->run.sandbox, "off") == 0) {
                log_error("--sandbox-policy has no effect with --sandbox off");
                return SF_EXIT_USAGE;
        }
        if (sandbox_policy_load(a->policy_path, ret_policy, err, sizeof(err)) < 0 ||
            sandbox_policy_check(a->policy_path, *ret_policy, NULL, err, sizeof(err)) < 0) {
                log_error("%s", err);
                free(*ret_policy);
                *ret_policy = NULL;
                return SF_EXIT_USAGE;
        }
        a->run.sandbox_policy = *ret_policy;
        return 0;
}

int merge_cmd(int argc, char **argv)
{
        MergeArgs a = {.run = {.timeout_ms = 1000, .rss_limit_mb = 2048, .sandbox = "strict"}};
        char *policy = NULL;
        SfMergeResult res;
        int c, r;

        a.m.run = &a.run;
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", merge_opts, NULL)) != -1) {
                r = merge_option(&a, c);
                if (r == -ENOENT)
                        return cliopt_bad_in(c, argv, merge_opts, "merge");
                if (r)
                        return r < 0 ? SF_EXIT_OK : r;
        }
        if (!a.malloc_set)
                a.run.malloc_limit_mb = a.run.rss_limit_mb;
        r = merge_operands(&a, argv + optind, argc - optind);
        if (r == 0)
                r = merge_policy(&a, &policy);
        if (r)
                return r;
        r = engine_merge(&a.m, &res);
        free(policy);
        if (r >= 0) {
                merge_summary(&a.m, &res);
                return SF_EXIT_OK;
        }
        return engine_error_is_input(r) ? SF_EXIT_USAGE : SF_EXIT_INTERNAL;
}
