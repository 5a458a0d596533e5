/*
 * Running given input files once each, in this process, as libFuzzer does
 * when every operand is a file (`./fuzzer crash-1234`): ClusterFuzz's and
 * OSS-Fuzz's reproduce step. No engine, no sandbox, no fork: the target's
 * own crash, with its sanitizer's report as the sanitizer prints it, is
 * the outcome.
 */
#pragma once

#include "fuzzer/lfflags.h"
#include "snapfuzz/target.h"

/* Runs each of @f's inputs -runs times (at least once) through @test after
 * @init (may be NULL). Returns the exit status: 0 when every input ran, 1
 * when a file cannot be read; a crash ends the process (the sanitizer's
 * exit status, or -error_exitcode / -timeout_exitcode for what libFuzzer's
 * own handlers report). */
int single_run(const LfFlags *f, TargetTestOneInput test, TargetInitialize init, int *argc,
               char ***argv);
