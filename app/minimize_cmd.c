/*
 * The crash to keep is the one crash.json names: its kind and signature,
 * not whatever the input does today. Minimization starts from the stored
 * `minimized` input when there is one (so a second run continues where a
 * budget stopped the first), falling back to `input` when that one no
 * longer crashes the same way. The limits and the sandbox come from
 * crash.json through recovery/crashconf.c, exactly as for `reproduce`.
 */
#include <errno.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/cliopt.h"
#include "app/minimize_cmd.h"
#include "core/crashstore.h"
#include "core/termsafe.h"
#include "core/elfcheck.h"
#include "core/log.h"
#include "core/msg.h"
#include "engine/instrcheck.h"
#include "worker/wproc.h"
#include "recovery/classify.h"
#include "recovery/minimize.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

#define MINIMIZE_CMD_DEFAULT_S 30.0

typedef struct MinimizeCmd {
        const char *id;
        const char *out_dir;
        CrashconfTrust trust; /* what the command line says over crash.json */
        CliSandbox sandbox;
        MinimizeBudget budget;
} MinimizeCmd;

/* Over 80 lines: one case per option and the help text in one string. */
static int parse_args(int argc, char **argv, MinimizeCmd *cmd)
{
        enum { OPT_OUT = 1000, OPT_TARGET, OPT_TIMEOUT, OPT_TIME, OPT_TRIALS, OPT_HELP };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"target", required_argument, NULL, OPT_TARGET},
            {"timeout", required_argument, NULL, OPT_TIMEOUT},
            {"max-time", required_argument, NULL, OPT_TIME},
            {"max-trials", required_argument, NULL, OPT_TRIALS},
            {"help", no_argument, NULL, OPT_HELP},
            CLIOPT_SANDBOX_OPTIONS,
            {0},
        };
        double d;
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        cmd->out_dir = optarg;
                        break;
                case OPT_TARGET:
                        cmd->trust.target = optarg;
                        break;
                case OPT_TIMEOUT:
                        if (cliopt_seconds("--timeout", optarg, 0.01, 86400, &d) < 0)
                                return SF_EXIT_USAGE;
                        cmd->trust.timeout_ms = (unsigned)(d * 1000);
                        break;
                case OPT_TIME:
                        if (cliopt_seconds("--max-time", optarg, 0, 1e6, &d) < 0)
                                return SF_EXIT_USAGE;
                        cmd->budget.max_ms = (int64_t)(d * 1000);
                        break;
                case OPT_TRIALS:
                        if (cliopt_u64("--max-trials", optarg, 0, UINT64_MAX,
                                       &cmd->budget.max_trials) < 0)
                                return SF_EXIT_USAGE;
                        break;
                case 'h':
                case OPT_HELP:
                        printf(
                            "usage: snapfuzz minimize CRASH_ID [--out DIR] [--max-time S] "
                            "[--max-trials N] [--target PATH] [--timeout S] " CLIOPT_SANDBOX_USAGE
                            "\n"
                            "Shrink a stored crash's input while it crashes the same way (same\n"
                            "kind and signature); writes OUT/crashes/ID/minimized. Ctrl-C keeps\n"
                            "the best input so far.\n"
                            "  --out DIR       the output directory that holds crashes/CRASH_ID\n"
                            "                  (default ./snapfuzz-out)\n"
                            "  --max-time S    time budget (default 30; 0: none)\n"
                            "  --max-trials N  trial budget (default: none)\n"
                            "  --target PATH   minimize against this build instead of the one\n"
                            "                  crash.json names\n"
                            "  --timeout S     the hang timeout (default: the crash's own)\n"
                            "  --sandbox MODE, --sandbox-policy FILE  the sandbox to use "
                            "(replaces\n"
                            "                  the one stored in crash.json)\n"
                            "  --trust-record  use the sandbox stored in crash.json (mode and\n"
                            "                  policy), even when it is looser than strict\n"
                            "examples:\n"
                            "  snapfuzz minimize 9a74042773df6cf3 --out out\n"
                            "  snapfuzz minimize 9a74042773df6cf3 --out out --max-time 300\n"
                            "exit status: 0 a minimized input was written, 1 the stored input no\n"
                            "longer crashes the same way, 2 bad usage or record, 3 internal.\n");
                        return -1;
                default: {
                        int r = cliopt_sandbox_take(c, optarg, &cmd->trust, &cmd->sandbox);
                        if (r == 0)
                                return cliopt_bad_in(c, argv, opts, "minimize");
                        if (r != 1)
                                return r;
                }
                }
        }
        if (argc - optind != 1) {
                log_error("minimize needs exactly one crash id: snapfuzz minimize ID [--out DIR]");
                return SF_EXIT_USAGE;
        }
        cmd->id = argv[optind];
        if (cmd->trust.target) {
                char why[512];
                if (elf_check_shared_object(cmd->trust.target, why, sizeof(why)) < 0) {
                        log_error("%s: %s", cmd->trust.target, why);
                        return SF_EXIT_USAGE;
                }
        }
        return cliopt_sandbox_finish(&cmd->trust, &cmd->sandbox, cmd->out_dir);
}

static void print_hex(const uint8_t *data, size_t len, size_t limit)
{
        size_t n = len < limit ? len : limit;
        printf("  bytes    ");
        for (size_t i = 0; i < n; i++)
                printf("%02x", data[i]);
        if (n < len)
                printf("... (%zu more)", len - n);
        printf("  |");
        for (size_t i = 0; i < n; i++)
                putchar(data[i] >= 0x20 && data[i] < 0x7f ? data[i] : '.');
        printf("%s|\n", n < len ? "..." : "");
}

/* Runs the minimization from the stored minimized input when there is one,
 * else (or when it no longer crashes the same way) from the stored input. */
static int run_from_best(const MinimizeCmd *cmd, Wproc *w, const Classification *want,
                         const uint8_t *input, size_t len, uint8_t **ret, size_t *ret_len,
                         MinimizeStats *st)
{
        uint8_t *prev = NULL;
        size_t prev_len = 0;
        int r;

        if (crashstore_load_minimized(cmd->out_dir, cmd->id, &prev, &prev_len) == 0 &&
            prev_len < len) {
                printf("crash %s: starting from the stored minimized input (%zu bytes)\n", cmd->id,
                       prev_len);
                r = minimize_run(w, prev, prev_len, want, &cmd->budget, ret, ret_len, st);
                free(prev);
                if (r != MINIMIZE_NOT_REPRODUCED)
                        return r;
                printf("crash %s: the minimized input no longer crashes the same way; "
                       "starting from the input (%zu bytes)\n",
                       cmd->id, len);
        } else {
                free(prev);
        }
        return minimize_run(w, input, len, want, &cmd->budget, ret, ret_len, st);
}

/* The stored crash (through the one checked reader, recovery/crashconf.h)
 * and what a trial must reproduce: its kind and signature. 0 or an exit
 * code after one line. */
static int load_crash(const MinimizeCmd *cmd, Crashconf *conf, Classification *want)
{
        char err[1024];
        int r = crashconf_load(cmd->out_dir, cmd->id, &cmd->trust, conf, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return r == -ENOMEM ? SF_EXIT_INTERNAL : SF_EXIT_USAGE;
        }
        if (conf->note[0]) {
                if (conf->note_is_warning)
                        log_warn("%s", conf->note);
                else
                        log_info("note: %s", conf->note);
        }
        instrcheck_malloc_limit(conf->target, conf->malloc_limit_mb, conf->rss_limit_mb);
        *want = (Classification){.is_crash = true};
        snprintf(want->kind, sizeof(want->kind), "%s", conf->kind);
        snprintf(want->signature, sizeof(want->signature), "%s", conf->signature);
        snprintf(want->id, sizeof(want->id), "%s", cmd->id);
        return 0;
}

/* The worker the trials run in, under the crash's limits and sandbox. 0
 * or an exit code after one line. */
static int start_worker(const MinimizeCmd *cmd, const Crashconf *conf, const Classification *want,
                        Wproc **ret)
{
        char err[1024], shown[TERMSAFE_BUF];
        WprocConfig wc;
        crashconf_wproc_config(conf, &wc);
        if (strcmp(want->kind, "timeout") == 0)
                log_warn("crash %s is a hang: every trial that still hangs costs the timeout "
                         "(%u ms); --timeout S shortens it",
                         cmd->id, wc.timeout_ms);
        int r = wproc_spawn(ret, &wc, err, sizeof(err));
        if (r < 0) {
                log_error("%s: %s", termsafe_str(shown, sizeof(shown), conf->target, 512), err);
                return r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED ? SF_EXIT_USAGE
                                                                     : SF_EXIT_INTERNAL;
        }
        return 0;
}

/* What the minimization did, written to stdout. */
static void print_report(const MinimizeCmd *c, const Classification *want, size_t len,
                         const uint8_t *min, size_t min_len, const MinimizeStats *st)
{
        char shown[TERMSAFE_BUF];
        printf("crash %s: minimized %zu -> %zu bytes in %llu trials, %lld ms\n", c->id, len,
               min_len, (unsigned long long)st->trials, (long long)st->ms);
        printf("  kind     %s, signature %s\n", want->kind,
               termsafe_str(shown, sizeof(shown), want->signature, TERMSAFE_MAX));
        printf("  trials   %llu same crash, %llu other crash, %llu no crash\n",
               (unsigned long long)st->same, (unsigned long long)st->other_crash,
               (unsigned long long)st->no_crash);
        if (st->stopped == MINIMIZE_STOP_DONE)
                printf("  stopped  done: no chunk, byte or simplification helps any more\n");
        else if (st->stopped == MINIMIZE_STOP_INTERRUPTED)
                printf("  stopped  interrupted: the best input so far is written; run the "
                       "command again to go on\n");
        else
                printf("  stopped  %s: the budget ran out; run the command again to go on\n",
                       minimize_stop_str(st->stopped));
        printf("  written  %s/crashes/%s/minimized\n", c->out_dir, c->id);
        print_hex(min, min_len, 64);
}

/* Ctrl-C (or SIGTERM) during a minimization: the trial under way ends,
 * and the best input found so far is written and reported. */
static volatile sig_atomic_t minimize_stop;

static void minimize_on_signal(int sig)
{
        (void)sig;
        minimize_stop = 1;
}

static void minimize_catch_signals(void)
{
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = minimize_on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
}

int minimize_cmd(int argc, char **argv)
{
        MinimizeCmd cmd = {
            .out_dir = "snapfuzz-out",
            .budget = {.max_ms = (int64_t)(MINIMIZE_CMD_DEFAULT_S * 1000)},
        };
        Crashconf conf;
        uint8_t *min = NULL;
        size_t min_len = 0;
        Wproc *w = NULL;
        char shown[TERMSAFE_BUF];
        int code;

        int r = parse_args(argc, argv, &cmd);
        if (r) {
                free(cmd.sandbox.policy_json);
                return r < 0 ? SF_EXIT_OK : r;
        }
        Classification want;
        r = load_crash(&cmd, &conf, &want);
        if (r) {
                free(cmd.sandbox.policy_json);
                return r;
        }
        const uint8_t *input = conf.input;
        size_t len = conf.input_len;

        code = start_worker(&cmd, &conf, &want, &w);
        if (code)
                goto out;

        MinimizeStats stats;
        cmd.budget.stop = &minimize_stop;
        minimize_catch_signals();
        r = run_from_best(&cmd, w, &want, input, len, &min, &min_len, &stats);
        if (r == 0 && stats.stopped == MINIMIZE_STOP_INTERRUPTED && min_len >= len) {
                printf("crash %s: interrupted after %llu trials, before anything smaller was "
                       "found; nothing written\n",
                       cmd.id, (unsigned long long)stats.trials);
                code = SF_EXIT_OK;
                goto out;
        }
        if (r == MINIMIZE_NOT_REPRODUCED) {
                printf("crash %s: NOT MINIMIZED: the stored input no longer crashes as %s "
                       "(signature %s); nothing was written\n",
                       cmd.id, want.kind,
                       termsafe_str(shown, sizeof(shown), want.signature, TERMSAFE_MAX));
                if (conf.note[0] && !conf.note_is_warning)
                        printf("  note     it ran under the default strict sandbox, not the "
                               "one stored in crash.json; --trust-record uses that one\n");
                code = SF_EXIT_CRASH;
                goto out;
        }
        if (r < 0) {
                log_error("the worker failed while minimizing: %s", strerror(-r));
                code = SF_EXIT_INTERNAL;
                goto out;
        }
        r = minimize_store(cmd.out_dir, cmd.id, min, min_len, &stats, "command");
        if (r < 0) {
                log_error("cannot write %s/crashes/%s/minimized: %s", cmd.out_dir, cmd.id,
                          strerror(-r));
                code = SF_EXIT_INTERNAL;
                goto out;
        }
        print_report(&cmd, &want, len, min, min_len, &stats);
        code = SF_EXIT_OK;
out:
        wproc_free(w);
        crashconf_deinit(&conf);
        free(cmd.sandbox.policy_json);
        free(min);
        return code;
}
