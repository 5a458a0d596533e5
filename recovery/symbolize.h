/*
 * Symbolization outside the sandbox: module-relative frames (the "path"
 * and "offset" the worker resolved with dladdr) become function names and
 * file:line from the modules' debug info, using llvm-symbolizer
 * (SNAPFUZZ_SYMBOLIZER, else llvm-symbolizer on PATH, else
 * /usr/bin/llvm-symbolizer-N; Debian's llvm-14 package). It runs in the
 * recovery helper and in `reproduce`, never in a runner, so the sandbox
 * stays closed to process creation.
 *
 * Without a symbolizer nothing is guessed: frames keep their module and
 * offset only, signatures name them that way (recovery/classify.h), crash
 * reports say "symbolized": false, and the process says so once on stderr.
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

/* For reports only (signatures never use it): adds to each frame of
 * @frames that the code of other functions was inlined into, an "inlined"
 * array of {function, file, line}, innermost first, as a sanitizer prints
 * them (one frame number, several lines). The frame's own "function" stays
 * the function the code is in; its "file" and "line" become the line of
 * the outermost inlined call. A frame without a location yet also gets
 * the one symbolize_frames() would give it, from the same symbolizer run:
 * a report that wants both calls this alone. Returns the number of frames
 * looked up; 0 without a symbolizer. */
int symbolize_frames_inlined(cJSON *frames);

/* Whether a symbolizer can be run. The first call that finds none prints
 * one note on stderr (what is missing, how to install or name one, and
 * that signatures fall back to module+offset); later calls are silent. */
bool symbolize_available(void);
