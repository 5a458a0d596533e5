/*
 * The drop-in's -minimize_crash=1 and -cleanse_crash=1, run as ClusterFuzz
 * runs them (docs/libfuzzer.md §4): one crashing input file, the result at
 * -exact_artifact_path. Each trial runs the binary itself on a candidate,
 * as libFuzzer does, and compares how it crashed with how the input did.
 */
#pragma once

#include "fuzzer/lfflags.h"

/* crashmin_*()'s positive outcome: the input does not crash. */
#define CRASHMIN_NO_CRASH 1
/* crashmin_*()'s positive outcome: the command line is not one input file
 * (and, to cleanse, an -exact_artifact_path); one line was printed. */
#define CRASHMIN_USAGE 2

/* Shrinks the input (@f->inputs[0]) with snapfuzz's minimizer while it
 * crashes the same way, within -runs trials or -max_total_time seconds
 * (600 s when neither is given, as libFuzzer). Writes the smallest input to
 * -exact_artifact_path, else to <prefix>minimized-from-<sha1 of the input>,
 * and prints libFuzzer's CRASH_MIN lines. @argc/@argv: the command line,
 * of which the trials keep every flag but the minimizing ones. Returns 0,
 * CRASHMIN_NO_CRASH, CRASHMIN_USAGE or a negative errno. */
int crashmin_minimize(const LfFlags *f, int argc, char **argv);

/* Replaces each byte of the input the crash does not need with ' ' or 0xff
 * (libFuzzer's CLEANSE, up to five passes), and writes the result to
 * -exact_artifact_path. Returns 0, CRASHMIN_NO_CRASH, CRASHMIN_USAGE or a
 * negative errno. */
int crashmin_cleanse(const LfFlags *f, int argc, char **argv);
