/*
 * `snapfuzz cflags`: the compiler flags that build a harness snapfuzz
 * gives coverage feedback for, for clang or gcc.
 */
#pragma once

/* Parses the command's arguments (argv[0] is "cflags") and prints the
 * flags on one line. Returns SF_EXIT_OK, or SF_EXIT_USAGE after a line. */
int cflags_cmd(int argc, char **argv);
