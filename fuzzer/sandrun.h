/*
 * Single-input runs (every operand a file: how ClusterFuzz reproduces,
 * `-runs=100 TESTCASE`) inside snapfuzz's sandbox: each input runs in a
 * runner of a worker of this binary, as during fuzzing, so a crash found
 * by the sandbox (a blocked execve, an open outside the policy)
 * reproduces, and every crash is reported with its symbolized stack in
 * the shape ClusterFuzz buckets (fuzzer/sanreport.h).
 */
#pragma once

#include "fuzzer/lfflags.h"

/* Runs each of @f->inputs -runs times (at least once) with libFuzzer's
 * lines (Running:, Executed ... in N ms, the closing NOTE), stopping at
 * the first crash, which is reported. @prog names the binary in the first
 * line. Returns the process's exit status: 0 when nothing crashed;
 * -timeout_exitcode, 71 for out-of-memory, -error_exitcode for any other
 * crash; 1 when the inputs cannot be read or the worker cannot start
 * (after one line). */
int sandrun_files(const LfFlags *f, const char *prog);
