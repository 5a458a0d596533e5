/*
 * Option values of the snapfuzz commands (run, reproduce, minimize,
 * crashes): a bad value gets one line saying what the option takes, and
 * the command exits with SF_EXIT_USAGE.
 */
#pragma once

#include <getopt.h>
#include <stdint.h>

/* A whole number in [@min, @max] into *@ret. 0, or -EINVAL after the line. */
int cliopt_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *ret);

/* A number of seconds (fractions allowed) in [@min, @max] into *@ret. */
int cliopt_seconds(const char *opt, const char *s, double min, double max, double *ret);

/* getopt_long's ':' (a missing value) or '?' (an unknown option): prints
 * the line and returns SF_EXIT_USAGE. */
int cliopt_bad(int c, char **argv);

/* cliopt_bad for a command whose options are @opts: also tells an
 * ambiguous abbreviation (--m) from an unknown option, and names @cmd's
 * help. */
int cliopt_bad_in(int c, char **argv, const struct option *opts, const char *cmd);
