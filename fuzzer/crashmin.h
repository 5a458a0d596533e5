/*
 * libFuzzer's -minimize_crash=1 and -cleanse_crash=1 for the drop-in: one
 * crash input, made smaller (or made of fewer of its original bytes) one
 * trial at a time, each trial a single-input run of this same binary in a
 * fresh process (fuzzer/single.h), as libFuzzer runs itself. A trial
 * counts when it crashes the same way: a non-zero status and the same
 * crash signature (the report's SUMMARY or libFuzzer ERROR line, and
 * ASan's DEDUP_TOKEN line when ASAN_OPTIONS asks for one).
 */
#pragma once

#include "fuzzer/lfflags.h"

/* -minimize_crash=1: writes the smallest input found to
 * -exact_artifact_path, or to PREFIXminimized-from-SHA1 of the original.
 * Budget: -runs trials or -max_total_time seconds (600 when neither is
 * given, as libFuzzer). Returns the exit status: 0, or 1 after one line
 * (not one input file, an input that does not crash, a write that fails). */
int crashmin_minimize(const LfFlags *f, int argc, char **argv);

/* -cleanse_crash=1: replaces every byte it can with ' ' or 0xff while the
 * input still crashes the same way, and writes the result to
 * -exact_artifact_path (required). Returns the exit status as above. */
int crashmin_cleanse(const LfFlags *f, int argc, char **argv);
