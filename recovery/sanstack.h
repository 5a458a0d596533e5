/*
 * A sanitizer's report with its stacks symbolized (see sanstack.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

/* Frame @n as a sanitizer prints it, from a frame object (pc, function,
 * file, line, path, offset, as symbolize_frames fills them): "    #N PC in
 * FN FILE:LINE", or "    #N PC in FN (PATH+OFF)" when there is no line,
 * or "    #N PC (PATH+OFF)". Returns snprintf's count. */
int sanstack_frame(char *buf, size_t cap, int n, const cJSON *frame);

/* Prints frame @n with the functions inlined into it first (one line
 * each, innermost first, the same number). */
void sanstack_put_frame(FILE *out, int n, const cJSON *frame);

/* Prints @text, a sanitizer's report, with every frame line the
 * symbolizer describes in its symbolized form; the frames below
 * LLVMFuzzerTestOneInput (the fuzzer's own) are left out. With
 * @target_only, frames of snapfuzz, libc and the sanitizer runtimes are
 * not looked up (their debug info is slow to load) and stay as the
 * sanitizer printed them. 0, or -EIO when @out failed. */
int sanstack_put_text(FILE *out, const char *text, bool target_only);
