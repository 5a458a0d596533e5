/*
 * Option values of the snapfuzz commands (run, reproduce, minimize,
 * crashes): a bad value gets one line saying what the option takes, and
 * the command exits with SF_EXIT_USAGE.
 */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "recovery/crashconf.h"

/* A whole number in [@min, @max] into *@ret. 0, or -EINVAL after the line. */
int cliopt_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* A number of seconds (fractions allowed) in [@min, @max] into *@ret. */
int cliopt_seconds(const char *opt, const char *s, double min, double max, double *ret);

/* getopt_long's ':' (a missing value) or '?' (an unknown option, or an
 * ambiguous abbreviation of several of @opts, named as such): prints the
 * line, naming @cmd's help, and returns SF_EXIT_USAGE. */
int cliopt_bad_in(int c, char **argv, const struct option *opts, const char *cmd);

/*
 * The sandbox options of the commands that replay a stored crash
 * (reproduce, minimize): --sandbox MODE, --sandbox-policy FILE and
 * --trust-record. Put CLIOPT_SANDBOX_OPTIONS in the getopt_long table,
 * hand every option to cliopt_sandbox_take, then call
 * cliopt_sandbox_finish once the output directory is known.
 */
enum { CLIOPT_SANDBOX = 900, CLIOPT_SANDBOX_POLICY, CLIOPT_TRUST_RECORD };
#define CLIOPT_SANDBOX_OPTIONS                                                                     \
        {"sandbox", required_argument, NULL, CLIOPT_SANDBOX},                                      \
            {"sandbox-policy", required_argument, NULL, CLIOPT_SANDBOX_POLICY},                    \
        {                                                                                          \
                "trust-record", no_argument, NULL, CLIOPT_TRUST_RECORD                             \
        }
#define CLIOPT_SANDBOX_USAGE "[--sandbox MODE] [--sandbox-policy FILE] [--trust-record]"

typedef struct CliSandbox {
        const char *policy_path;
        char *policy_json; /* loaded by cliopt_sandbox_finish; free() it */
} CliSandbox;

/* Takes option @c (with @arg) into @t and @s: 1 when it was one of
 * CLIOPT_SANDBOX_OPTIONS, 0 when not, SF_EXIT_USAGE after a line. */
int cliopt_sandbox_take(int c, const char *arg, CrashconfTrust *t, CliSandbox *s);

/* Loads and checks the policy file (against @out_dir too). 0, or
 * SF_EXIT_USAGE after a line. */
int cliopt_sandbox_finish(CrashconfTrust *t, CliSandbox *s, const char *out_dir);
