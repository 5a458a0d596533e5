/*
 * Symbolization outside the sandbox: module-relative frames (the "path"
 * and "offset" the worker resolved with dladdr) become function names and
 * file:line from the modules' debug info, using llvm-symbolizer, or
 * addr2line when it is missing. It runs in the recovery helper and in
 * `reproduce`, never in a runner, so the sandbox stays closed to process
 * creation.
 */
#pragma once

#include <cjson/cJSON.h>

#include <stdbool.h>

/* Adds "function", "file" and "line" to each frame of @frames (a JSON
 * array as in a "died" event's death.frames) that debug info describes;
 * with @target_only, only frames outside snapfuzz, libc and the sanitizer
 * runtimes (the ones signatures use: libc's debug info is slow to load).
 * Frames after the first are return addresses, looked up one byte earlier
 * so that they land in the call. Returns the number of frames symbolized;
 * 0 when no symbolizer is installed. */
int symbolize_frames(cJSON *frames, bool target_only);
