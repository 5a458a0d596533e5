/*
 * The reports come from crash.json files alone: nothing is run, and a
 * crash directory someone else wrote can only be skipped (with one line),
 * never crash this command or put control characters in its output
 * (engine/crashreport.c makes every stored text inert).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "app/cliopt.h"
#include "app/report_cmd.h"
#include "core/log.h"
#include "engine/ciout.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

static void help(void)
{
        printf(
            "usage: snapfuzz report [OUT_DIR | --out DIR] [--sarif FILE] [--junit FILE]\n"
            "                [--source-root DIR]\n"
            "Write the crashes stored in an output directory (default ./snapfuzz-out) as\n"
            "SARIF 2.1.0 (for GitHub code scanning) and/or JUnit XML (for CI test reports):\n"
            "one result or failing testcase per crash id, with its kind, message, stack,\n"
            "reproduce command and minimized input. A directory without crashes gives an\n"
            "empty SARIF run and one passing testcase. Files are written atomically.\n"
            "  --out DIR          the output directory (or give it as the operand)\n"
            "  --sarif FILE       write the SARIF log to FILE\n"
            "  --junit FILE       write the JUnit XML report to FILE\n"
            "  --source-root DIR  source file paths are made relative to DIR (uriBaseId\n"
            "                     SRCROOT); use the repository root (default: the current\n"
            "                     directory)\n"
            "examples:\n"
            "  snapfuzz report out --sarif snapfuzz.sarif\n"
            "  snapfuzz report out --sarif out.sarif --junit junit.xml --source-root ~/src/app\n"
            "  snapfuzz run ./parser.so --max-total-time 300 --sarif out.sarif  # while fuzzing\n"
            "exit status: 0 written (whether or not there are crashes), 2 bad usage or no\n"
            "such directory, 3 a report could not be written.\n");
}

typedef struct ReportArgs {
        CiOutConfig cfg;
} ReportArgs;

static int parse_args(int argc, char **argv, ReportArgs *a)
{
        enum { OPT_OUT = 1000, OPT_SARIF, OPT_JUNIT, OPT_SOURCE_ROOT, OPT_HELP };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"sarif", required_argument, NULL, OPT_SARIF},
            {"junit", required_argument, NULL, OPT_JUNIT},
            {"source-root", required_argument, NULL, OPT_SOURCE_ROOT},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        a->cfg.out_dir = optarg;
                        break;
                case OPT_SARIF:
                        a->cfg.sarif_path = optarg;
                        break;
                case OPT_JUNIT:
                        a->cfg.junit_path = optarg;
                        break;
                case OPT_SOURCE_ROOT:
                        a->cfg.source_root = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        help();
                        return -1;
                default:
                        return cliopt_bad_in(c, argv, opts, "report");
                }
        }
        if (argc - optind > 1 || (a->cfg.out_dir && argc - optind == 1)) {
                log_error("report takes one output directory: snapfuzz report [OUT_DIR] "
                          "--sarif FILE");
                return SF_EXIT_USAGE;
        }
        if (argc - optind == 1)
                a->cfg.out_dir = argv[optind];
        if (!a->cfg.out_dir)
                a->cfg.out_dir = "snapfuzz-out";
        if (!a->cfg.sarif_path && !a->cfg.junit_path) {
                log_error("report needs --sarif FILE and/or --junit FILE (see snapfuzz report "
                          "--help)");
                return SF_EXIT_USAGE;
        }
        return 0;
}

int report_cmd(int argc, char **argv)
{
        ReportArgs a = {0};
        char err[1024];
        CiOutResult res;

        int r = parse_args(argc, argv, &a);
        if (r)
                return r < 0 ? SF_EXIT_OK : r;
        const char *paths[2][2] = {{"--sarif", a.cfg.sarif_path}, {"--junit", a.cfg.junit_path}};
        for (int i = 0; i < 2; i++) {
                if (paths[i][1] && ciout_check_path(paths[i][0], paths[i][1], err, sizeof(err))) {
                        log_error("%s", err);
                        return SF_EXIT_USAGE;
                }
        }
        r = ciout_write(&a.cfg, &res, err, sizeof(err));
        if (r == -ENOENT || r == -ENOTDIR) {
                log_error("%s", err);
                return SF_EXIT_USAGE;
        }
        if (r < 0) {
                log_error("%s", err);
                return SF_EXIT_INTERNAL;
        }
        printf("%zu crash%s reported", res.crashes, res.crashes == 1 ? "" : "es");
        if (res.skipped)
                printf(" (%zu unreadable, skipped)", res.skipped);
        if (a.cfg.sarif_path)
                printf("; SARIF: %s", a.cfg.sarif_path);
        if (a.cfg.junit_path)
                printf("; JUnit: %s", a.cfg.junit_path);
        printf("\n");
        return SF_EXIT_OK;
}
