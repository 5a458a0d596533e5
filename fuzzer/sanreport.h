/*
 * Crash reports in the shape ClusterFuzz's stack parser buckets
 * (docs/libfuzzer.md, "Crash reports"): made from a stored crash record
 * (crash.json), printed by the drop-in before its "Test unit written to"
 * line.
 */
#pragma once

#include <stdio.h>

#include <cjson/cJSON.h>

/* The extra-sanitizer bug ClusterFuzz recognises for a syscall the sandbox
 * blocked ("Shell injection" for execve and execveat, "Arbitrary file
 * open" for the open family), or NULL when it has none for @syscall. */
const char *sanreport_sandbox_bug(const char *syscall);

/* Formats frame number @n of a crash record's stack (stack.frames[i]) as a
 * sanitizer frame line, without the newline: "    #N 0xPC in FUNC
 * FILE:LINE", "    #N 0xPC in SYMBOL (MODULE+0xOFF)" or "    #N 0xPC
 * (MODULE+0xOFF)". Returns the length written (truncated to @cap - 1). */
int sanreport_frame(char *buf, size_t cap, int n, const cJSON *frame);

/* Writes @text (a sanitizer's report) to @out with the stack frames it left
 * unsymbolized ("#N 0xPC (MODULE+0xOFF)": the sanitizer runs without a
 * symbolizer in the sandbox) described by llvm-symbolizer, as "#N 0xPC in
 * FUNC FILE:LINE"; the frames below the harness's entry point
 * (LLVMFuzzerTestOneInput: the fuzzer's own) are left out; every other line
 * unchanged. 0 or -EIO. */
int sanreport_put_text(FILE *out, const char *text);

/* Writes the report for @crash (a crash.json object) to @out, naming
 * process @pid in its ==PID== lines:
 * - a sanitizer's kind (asan, ubsan, msan, leak) with the target's output
 *   stored: that output, which is the sanitizer's own report, its frames
 *   symbolized (sanreport_put_text);
 * - sandbox: an "===BUG DETECTED: ...===" line when ClusterFuzz has a type
 *   for the syscall, a "snapfuzz: sandbox: ..." line, then a libFuzzer
 *   deadly signal report;
 * - timeout, oom, exit, overwrite-input, file-size: libFuzzer's report for
 *   that ending;
 * - every other kind: libFuzzer's deadly signal report.
 * libFuzzer's reports carry the stack's frames up to the harness's entry
 * point (the frames below it are the fuzzer's) and a SUMMARY line.
 * Returns 0, or -EIO when @out failed. */
int sanreport_write(FILE *out, const cJSON *crash, int pid);

/* Symbolizes the frames of @crash's stack that are not (frames of a module
 * named without a path, a worker of the drop-in binary, are taken to be
 * this binary's, /proc/self/exe). Without a symbolizer, nothing changes. */
void sanreport_symbolize(cJSON *crash);

/* sanreport_write for the crash stored in directory @crash_dir (its
 * crash.json), after symbolizing the frames that are not (frames of a
 * module named without a path are taken to be this binary's). Returns 0, or a negative errno when
 * the record cannot be read or parsed (nothing was written then). */
int sanreport_write_dir(FILE *out, const char *crash_dir, int pid);
