/*
 * Single-input runs (every operand a file: how ClusterFuzz reproduces,
 * `-runs=100 TESTCASE`) and snapfuzz's sandbox. libFuzzer runs the inputs
 * in its own process, and so does the drop-in (fuzzer/single.c: the
 * sanitizer sees a heap copy of the input and reports with its own exit
 * status); but a crash only the sandbox sees during fuzzing (a blocked
 * execve, an open outside the policy) would not reproduce that way: the
 * call would simply succeed. So each input first runs once in a runner of
 * a worker of this binary, under the sandbox, as during fuzzing; a
 * sandbox violation there is the run's crash, reported in the shape
 * ClusterFuzz buckets (fuzzer/sanreport.h).
 */
#pragma once

#include "fuzzer/lfflags.h"

/* Runs each of @f->inputs once in a sandboxed runner (nothing when
 * -snapfuzz_sandbox=off). Returns 0 when the sandbox refused nothing (the
 * caller then runs the inputs as libFuzzer does), or the process's exit
 * status after the report of the first input the sandbox stopped
 * (-error_exitcode), or 1 after one line when the inputs cannot be read or
 * the worker cannot start. @prog names the binary in messages. */
int sandrun_check(const LfFlags *f, const char *prog);
