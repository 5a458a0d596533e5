/*
 * Where a target's output goes (`snapfuzz run --target-output MODE`): the
 * worker reads what its runners write to stdout and stderr from a pipe,
 * keeps the tail for crash reports (worker.c, in every mode), and hands
 * the rest to an Outsink, which
 *   pass     shows it on the worker's stderr (the terminal), sanitized
 *            (core/termsafe.h) and rate-limited, and logs it all when it
 *            has a log file;
 *   log      appends it to a log file only;
 *   discard  drops it.
 * The log file is opened on the first byte (a quiet target leaves none)
 * and rotated at OUTSINK_LOG_CAP: PATH becomes PATH.1 (replacing the old
 * one), so a chatty target costs at most twice the cap of disk.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum OutsinkMode {
        OUTSINK_PASS,
        OUTSINK_LOG,
        OUTSINK_DISCARD,
} OutsinkMode;

/* A log file is rotated when it reaches this size. */
#define OUTSINK_LOG_CAP (16u << 20)
/* What reaches the terminal in pass mode: a burst of OUTSINK_BURST bytes,
 * then OUTSINK_RATE bytes a second (per worker); what is over is counted
 * and said in one line at most every OUTSINK_NOTICE_MS. */
#define OUTSINK_BURST (32u << 10)
#define OUTSINK_RATE (4u << 10)
#define OUTSINK_NOTICE_MS 10000

typedef struct Outsink {
        OutsinkMode mode;
        const char *log_path; /* NULL: no log (pass mode shows only) */
        int log_fd;           /* -1 until the first byte, or after a failure */
        bool log_failed;
        uint64_t log_size;
        int term_fd;   /* where pass mode shows the output (stderr) */
        double tokens; /* bytes that may be shown now */
        int64_t refilled_ms;
        bool midline; /* the last byte shown was not a newline */
        uint64_t dropped;
        int64_t noticed_ms; /* the last "not shown" line; 0: none yet */
} Outsink;

/* Parses a --target-output value. 0, or -EINVAL. */
int outsink_mode_parse(const char *s, OutsinkMode *ret);
const char *outsink_mode_name(OutsinkMode mode);

/* @log_path may be NULL; it is not copied. */
void outsink_init(Outsink *o, OutsinkMode mode, const char *log_path, int term_fd);

/* Takes @len bytes of the target's output. */
void outsink_write(Outsink *o, const void *data, size_t len);

/* Says what the rate limit dropped since the last such line, if anything
 * and if OUTSINK_NOTICE_MS have passed (@force: now). */
void outsink_notice(Outsink *o, bool force);

/* outsink_notice(force) and closes the log. */
void outsink_deinit(Outsink *o);
