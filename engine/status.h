/*
 * `snapfuzz status` (engine_status in include/snapfuzz/engine.h) reads
 * OUT/stats.json and probes OUT/.lock; status_report is the part that
 * turns the file's text into the report, kept apart from the files so that
 * a fuzz harness (fuzz_targets/self/stats.c) can drive it.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* Writes the status report of campaign @out_dir to @out, from stats.json's
 * @text (@len bytes, not NUL-terminated), whether the lock is @held and by
 * whom (@holder), at time @now. Returns 0, or -EBADMSG when @text is not a
 * JSON object (nothing is written). */
int status_report(FILE *out, const char *out_dir, const char *text, size_t len, int held,
                  pid_t holder, time_t now);
