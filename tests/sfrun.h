/*
 * Helpers for integration tests: run the real `snapfuzz` binary (path in
 * $SNAPFUZZ_BIN) on real targets (paths in $SF_TARGET_<name>), capture what
 * it prints and how it exits, and look at what it left on disk.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct SfRun {
        int exit_code; /* exit status, or 128 + signal */
        char *out;     /* everything written to stdout */
        char *err;     /* everything written to stderr */
} SfRun;

/* The path in environment variable @name; fails the test when unset. */
const char *sf_env(const char *name);
/* The path of bundled or test target @name ($SF_TARGET_<name>). */
const char *sf_target(const char *name);

/* A fresh directory under /tmp. The caller frees the string. */
char *sf_tmpdir(void);

/* Runs snapfuzz with @args (NULL-terminated, without argv[0]), waits at
 * most @timeout_s seconds (then kills it and fails the test). */
void sf_run(SfRun *r, int timeout_s, const char *const *args);
/* The same for another executable @exe (a libFuzzer drop-in binary). */
void sf_run_exe(SfRun *r, int timeout_s, const char *exe, const char *const *args);
void sf_run_free(SfRun *r);

/* Starts snapfuzz in the background with stdout/stderr to files in @dir. */
pid_t sf_start(const char *dir, const char *const *args);
/* Waits for a started run; returns its exit code (128+sig when killed). */
int sf_wait(pid_t pid, int timeout_s);

/* The id of the only crash in @out_dir/crashes (fails the test otherwise). */
char *sf_only_crash(const char *out_dir);
/* Number of crash directories in @out_dir/crashes. */
int sf_count_crashes(const char *out_dir);

/* The whole content of a file (NULL when missing). */
uint8_t *sf_read(const char *path, size_t *ret_len);
/* A crash's crash.json field as a string ("" when missing). Caller frees. */
char *sf_crash_field(const char *out_dir, const char *id, const char *field);

/* Runs the independent plain loader (tests/plainrun.c) on @target with the
 * input in @input_path; returns its wait status. */
int sf_plainrun(const char *target, const char *input_path, int timeout_s);
/* The plain loader with @n inputs, run in order in its one process. */
int sf_plainrun_seq(const char *target, char *const *paths, int n, int timeout_s);

/* Runs the command @fmt (printf-style) with sh, its stdout and stderr
 * together into *@ret_out (the caller frees it). Returns its exit status
 * (128 + signal when killed). */
int sf_shell(char **ret_out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The SHA-1 of the file at @path in hex, by sha1sum: an implementation
 * independent of snapfuzz's own. */
void sf_sha1sum(const char *path, char hex[41]);

/* The names in @dir (content hashes for a corpus) but dot files, sorted,
 * one a line. The caller frees it. */
char *sf_dir_listing(const char *dir);
