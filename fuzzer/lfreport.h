/*
 * What a libFuzzer binary prints and writes while it fuzzes, made from the
 * engine's events (SfEvent): the `#N INITED/NEW/REDUCE/pulse/DONE` lines,
 * `Done N runs in M second(s)`, the stat:: lines, the crash's libFuzzer
 * report lines, and its artifact (PREFIX{crash,timeout,oom,leak}-SHA1, or
 * -exact_artifact_path) with `Test unit written to PATH`.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/engine.h"

typedef struct LfReport {
        /* Settings (set before the run). */
        const char *artifact_prefix; /* "" : the current directory */
        const char *exact_artifact_path;
        bool print_final_stats;
        int verbosity;
        long timeout_s;    /* -timeout, for the timeout report */
        long rss_limit_mb; /* -rss_limit_mb, for the out-of-memory report */
        /* What happened (read after the run). */
        char first_kind[32];  /* the first stored crash's kind, "" if none */
        bool artifact_failed; /* an artifact could not be written */
        uint64_t new_units;
        uint64_t last_execs;
        double last_elapsed_s;
        uint64_t pulse_at; /* the next exec count that prints a pulse line */
} LfReport;

/* The SfRunConfig.on_event callback; @ctx is an LfReport. */
void lfreport_event(const SfEvent *e, void *ctx);

/* The stat:: lines of -print_final_stats=1. */
void lfreport_final_stats(const LfReport *r);

/* The artifact file name for a crash of @kind (crash.json's): "timeout-",
 * "oom-", "leak-" or "crash-". */
const char *lfreport_artifact_kind(const char *kind);

/* Writes @data as an artifact: @exact if set, else @prefix + @kind_prefix +
 * sha1(@data). The path goes to @ret_path. 0 or a negative errno. */
int lfreport_write_artifact(const char *prefix, const char *exact, const char *kind_prefix,
                            const uint8_t *data, size_t len, char *ret_path, size_t cap);

/* Peak resident size of this process, in MB. */
unsigned long lfreport_rss_mb(void);
