/*
 * `snapfuzz crashes`: a table of the crashes stored in an output directory.
 */
#pragma once

/* Parses the command's arguments (argv[0] is "crashes") and prints the
 * table. Returns SF_EXIT_OK (corrupt entries are listed, not fatal),
 * SF_EXIT_USAGE for bad usage or a missing output directory,
 * SF_EXIT_INTERNAL. */
int crashes_cmd(int argc, char **argv);
