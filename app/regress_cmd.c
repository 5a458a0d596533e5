/*
 * Options of `snapfuzz regress`: where the crashes and the corpus are,
 * the corpus replay's workers and limits, and the sandbox (the options of
 * `reproduce`, which apply to the stored crashes and the corpus alike).
 * The outcome becomes the exit status in main() through regress_cmd's
 * result; nothing here runs the target.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cliopt.h"
#include "app/regress_cmd.h"
#include "core/elfcheck.h"
#include "core/log.h"
#include "engine/regress.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

static void help(void)
{
        printf("usage: snapfuzz regress TARGET.so [CORPUS_DIR...] [--out DIR] [options]\n"
               "The check for a change, in CI: replay every crash stored in OUT/crashes against\n"
               "TARGET.so (state-dependent ones through their sequence/ files), under each\n"
               "crash's stored limits, then every corpus input once (OUT/corpus and the\n"
               "CORPUS_DIRs; a crash found is stored as in `run`). Fails only on a crash that\n"
               "still reproduces or is new and is not quarantined (snapfuzz crashes\n"
               "--quarantine ID); reports crashes that no longer reproduce as fixed. Verdicts\n"
               "go to OUT/regress.json.\n"
               "  --out DIR             output directory (default ./snapfuzz-out)\n"
               "  --workers N           workers of the corpus replay (default: online cores)\n"
               "  --timeout S           hang timeout (default: each crash's own; 1 for the\n"
               "                        corpus)\n"
               "  --rss-limit-mb MB     corpus replay's memory limit (default 2048)\n"
               "  --minimize-time S     minimize a new crash for up to S seconds (default 1)\n"
               "  --sandbox MODE, --sandbox-policy FILE  the sandbox (default strict), as for\n"
               "                        run and reproduce\n"
               "  --trust-record        run stored crashes under the sandbox in crash.json\n"
               "  --junit FILE          the verdicts as JUnit XML too: a test per crash\n"
               "                        (failure: reproduced or new; skipped: quarantined)\n"
               "examples:\n"
               "  snapfuzz regress ./parser.so --out fuzz-out\n"
               "  snapfuzz regress ./parser.so seeds/ --out fuzz-out --sandbox-policy p.json\n"
               "exit status: 0 nothing reproduced (fixed and quarantined crashes are fine),\n"
               "1 a stored crash reproduced or the corpus replay found a crash, 2 bad usage or\n"
               "input (a bad quarantine list, a stored crash that cannot be replayed),\n"
               "3 internal error.\n");
}

enum {
        OPT_OUT = 1000,
        OPT_WORKERS,
        OPT_TIMEOUT,
        OPT_RSS,
        OPT_MINIMIZE_TIME,
        OPT_JUNIT,
        OPT_HELP,
};

static const struct option regress_opts[] = {
    {"out", required_argument, NULL, OPT_OUT},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"rss-limit-mb", required_argument, NULL, OPT_RSS},
    {"minimize-time", required_argument, NULL, OPT_MINIMIZE_TIME},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"help", no_argument, NULL, OPT_HELP},
    CLIOPT_SANDBOX_OPTIONS,
    {0},
};

/* One option into @cfg. 0, 1 after --help, SF_EXIT_USAGE after a line, or
 * -ENOENT for an option it does not know. */
static int take_option(RegressConfig *cfg, CliSandbox *sb, int c)
{
        uint64_t v;
        double d;

        switch (c) {
        case OPT_OUT:
                if (!*optarg) {
                        log_error("--out needs a directory");
                        return SF_EXIT_USAGE;
                }
                cfg->run.out_dir = optarg;
                return 0;
        case OPT_WORKERS:
                if (cliopt_u64("--workers", optarg, 1, 256, &v) < 0)
                        return SF_EXIT_USAGE;
                cfg->run.workers = (unsigned)v;
                return 0;
        case OPT_TIMEOUT:
                if (cliopt_seconds("--timeout", optarg, 0.01, 86400, &d) < 0)
                        return SF_EXIT_USAGE;
                cfg->run.timeout_ms = cfg->trust.timeout_ms = (unsigned)(d * 1000);
                return 0;
        case OPT_RSS:
                if (cliopt_u64("--rss-limit-mb", optarg, 0, 1u << 30, &v) < 0)
                        return SF_EXIT_USAGE;
                cfg->run.rss_limit_mb = cfg->run.malloc_limit_mb = (unsigned)v;
                return 0;
        case OPT_MINIMIZE_TIME:
                if (cliopt_seconds("--minimize-time", optarg, 0, 3600, &d) < 0)
                        return SF_EXIT_USAGE;
                cfg->run.minimize_ms = (unsigned)(d * 1000);
                return 0;
        case OPT_JUNIT:
                if (!*optarg || optarg[strlen(optarg) - 1] == '/') {
                        log_error("--junit needs a file");
                        return SF_EXIT_USAGE;
                }
                cfg->junit_path = optarg;
                return 0;
        case 'h':
        case OPT_HELP:
                help();
                return 1;
        default: {
                int r = cliopt_sandbox_take(c, optarg, &cfg->trust, sb);
                return r == 1 ? 0 : r == 0 ? -ENOENT : r;
        }
        }
}

/* The operands: the target (checked, resolved) and the corpus directories. */
static int take_operands(RegressConfig *cfg, char **operands, int n)
{
        char why[512];

        if (n < 1) {
                log_error("regress needs a target: snapfuzz regress TARGET.so [CORPUS_DIR...] "
                          "[--out DIR]");
                return SF_EXIT_USAGE;
        }
        cfg->run.target = operands[0];
        cfg->run.corpus_dirs = operands + 1;
        cfg->run.n_corpus_dirs = n - 1;
        for (int i = 1; i < n; i++) {
                struct stat st;
                if (stat(operands[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
                        log_error("corpus directory %s: %s", operands[i],
                                  errno ? strerror(errno) : "not a directory");
                        return SF_EXIT_USAGE;
                }
        }
        if (elf_check_shared_object(cfg->run.target, why, sizeof(why)) < 0) {
                log_error("%s: %s", cfg->run.target, why);
                return SF_EXIT_USAGE;
        }
        if (!realpath(cfg->run.target, cfg->run.target_abs)) {
                log_error("%s: %s", cfg->run.target, strerror(errno));
                return SF_EXIT_USAGE;
        }
        return 0;
}

static int exit_status(int r)
{
        if (r == REGRESS_PASSED)
                return SF_EXIT_OK;
        if (r == REGRESS_FAILED)
                return SF_EXIT_CRASH;
        if (r == REGRESS_UNREADABLE)
                return SF_EXIT_USAGE;
        return engine_error_is_input(r) ? SF_EXIT_USAGE : SF_EXIT_INTERNAL;
}

int regress_cmd(int argc, char **argv)
{
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        RegressConfig cfg = {.run = {
                                 .out_dir = "snapfuzz-out",
                                 .workers = cores > 0 ? (unsigned)cores : 1,
                                 .timeout_ms = 1000,
                                 .rss_limit_mb = 2048,
                                 .malloc_limit_mb = 2048,
                                 .status_every_s = 3,
                                 .minimize_ms = 1000,
                                 .detect_leaks = true,
                                 .runner_lifetime_ms = 500,
                                 .target_output = "log",
                             }};
        CliSandbox sb = {0};
        int c, r;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", regress_opts, NULL)) != -1) {
                r = take_option(&cfg, &sb, c);
                if (r == -ENOENT)
                        return cliopt_bad_in(c, argv, regress_opts, "regress");
                if (r)
                        return r == 1 ? SF_EXIT_OK : r;
        }
        r = take_operands(&cfg, argv + optind, argc - optind);
        if (r == 0)
                r = cliopt_sandbox_finish(&cfg.trust, &sb, cfg.run.out_dir);
        if (r == 0) {
                cfg.run.sandbox = cfg.trust.sandbox ? cfg.trust.sandbox : "strict";
                cfg.run.sandbox_policy = cfg.trust.policy_json;
                r = exit_status(regress_run(&cfg));
        }
        free(sb.policy_json);
        return r;
}
