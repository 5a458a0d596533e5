/*
 * `snapfuzz regress TARGET.so [CORPUS_DIR...] [--out DIR] [options]`: the
 * command line of the regression check (engine/regress.h).
 */
#pragma once

/* Parses the command's arguments (argv[0] is "regress") and runs the check.
 * Returns the exit status: SF_EXIT_OK (passed), SF_EXIT_CRASH (a crash
 * reproduced or was found), SF_EXIT_USAGE (bad usage or input, a stored
 * crash that cannot be replayed), SF_EXIT_INTERNAL. */
int regress_cmd(int argc, char **argv);
