/*
 * `snapfuzz minimize ID`: minimizes a stored crash on demand, with a time
 * and a trial budget, through the same worker, runner and sandbox code as
 * fuzzing, and stores the result as OUT/crashes/<id>/minimized.
 */
#pragma once

/* Parses the command's arguments (argv[0] is "minimize") and runs it.
 * Returns SF_EXIT_OK when a minimized input was stored, SF_EXIT_CRASH when
 * the stored input no longer crashes the same way (nothing stored),
 * SF_EXIT_USAGE for bad usage, a bad id, a corrupt record or a missing
 * target, SF_EXIT_INTERNAL. */
int minimize_cmd(int argc, char **argv);
