/*
 * `snapfuzz merge TARGET.so OUT_CORPUS IN_DIR...`: the smallest set of
 * inputs with the coverage of all of them, into OUT_CORPUS (engine_merge).
 */
#pragma once

/* Parses the command's arguments (argv[0] is "merge") and merges. Returns
 * SF_EXIT_OK (merged; inputs that crashed or hung are skipped and counted,
 * not an error), SF_EXIT_USAGE (bad usage, a missing directory, a target
 * that cannot be loaded, a control file that is not one or is another
 * target's), SF_EXIT_INTERNAL. */
int merge_cmd(int argc, char **argv);
