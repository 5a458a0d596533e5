/*
 * The reports for CI of an output directory: SARIF (engine/sarif.h) and
 * JUnit XML (engine/junit.h), each written atomically (a reader, or a CI
 * job killed mid-write, sees the old file or the new one, never half of
 * one). `snapfuzz run --sarif/--junit` rewrites them as crashes are found
 * and at the end; `snapfuzz report` writes them for a directory at rest.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct CiOutConfig {
        const char *out_dir;
        const char *sarif_path;  /* NULL: no SARIF */
        const char *junit_path;  /* NULL: no JUnit */
        const char *source_root; /* NULL: the current directory */
        bool quiet;              /* no line per skipped crash.json */
} CiOutConfig;

/* What was written. */
typedef struct CiOutResult {
        size_t crashes; /* results (testcases that fail) */
        size_t skipped; /* crash directories that could not be read */
} CiOutResult;

/* Writes the reports @cfg asks for. Returns 0, or a negative errno with
 * one line for a person in @err: -ENOENT (no output directory), -ENOTDIR
 * (the source root is not a directory), the error of a write, -ENOMEM. */
int ciout_write(const CiOutConfig *cfg, CiOutResult *ret, char *err, size_t errlen);

/* Checks that @path can name a report: a file name in an existing
 * directory, not a directory itself. 0, or a negative errno with one line
 * in @err. For front ends, before a long run. */
int ciout_check_path(const char *opt, const char *path, char *err, size_t errlen);
