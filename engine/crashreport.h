/*
 * The stored crashes of an output directory, read back for reports meant
 * for machines (SARIF, JUnit: engine/sarif.h, engine/junit.h): one entry
 * per crash id, with its rule (what kind of bug it is, for code scanning),
 * its message, signature, counts, the paths of its inputs, the command
 * that reproduces it, and its symbolized stack with file:line made
 * relative to a source root. Every crash.json is untrusted: each text is
 * made valid, inert UTF-8 and bounded, numbers are range-checked, and an
 * entry that cannot be read is skipped with one line.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What kind of bug a crash is, for tools that group findings by rule. */
typedef struct CrashRule {
        const char *id;       /* "heap-buffer-overflow", "timeout", ... */
        const char *name;     /* "HeapBufferOverflow" */
        const char *brief;    /* one sentence */
        const char *full;     /* what it means */
        const char *help;     /* what to do */
        const char *level;    /* SARIF level: "error" or "warning" */
        const char *severity; /* GitHub's security-severity, "0.0".."10.0" */
} CrashRule;

/* At most this many frames of a stack are reported. */
#define CRASHREPORT_MAX_FRAMES 64

typedef struct CrashFrame {
        char *function; /* NULL when not symbolized */
        char *module;   /* "libc.so.6"; NULL when unknown */
        char *offset;   /* "0x3ab3"; NULL when unknown */
        char *file;     /* the source file, normalized; NULL when unknown */
        char *rel;      /* @file relative to the source root; NULL when outside */
        long line;      /* 0 when unknown */
        bool runtime;   /* snapfuzz, libc, a sanitizer runtime: not the target */
} CrashFrame;

typedef struct CrashEntry {
        char id[65];
        char kind[32];
        const CrashRule *rule;
        char *message;     /* the stored message, made safe */
        char *signature;   /* the stored signature, made safe */
        uint64_t sig_hash; /* hash of the stored signature (a fingerprint) */
        char *target;
        char *first_seen, *last_seen;
        int64_t count;
        int64_t input_len;
        int64_t minimized_len; /* -1: no minimized input */
        bool reproduced;
        bool state_dependent;    /* reproduction.class "history" */
        int64_t sequence_length; /* inputs in sequence/ (state-dependent) */
        char *input_path;        /* OUT/crashes/ID/input */
        char *minimized_path;    /* OUT/crashes/ID/minimized; NULL when none */
        char *reproduce;         /* "snapfuzz reproduce ID --out OUT" (shell-quoted) */
        CrashFrame *frames;      /* innermost first, as stored */
        size_t n_frames;
        int top; /* the first target frame under the source root; -1: none */
} CrashEntry;

typedef struct CrashReport {
        char *out_dir;
        char *source_root;   /* absolute, no trailing slash */
        CrashEntry *entries; /* sorted by id */
        size_t n;
        size_t skipped; /* entries that could not be read */
} CrashReport;

/* Reads every crash stored in @out_dir/crashes (none is fine: n is 0).
 * @source_root (NULL: the current directory) must be a directory. Entries
 * that cannot be read are skipped with one warning each unless @quiet.
 * Returns 0, -ENOENT when @out_dir is not a directory, -ENOTDIR when
 * @source_root is not one, -ENOMEM or another -errno (crashes/ unreadable). */
int crashreport_load(const char *out_dir, const char *source_root, bool quiet, CrashReport **ret);
/* NULL is a no-op. */
void crashreport_free(CrashReport *r);

/* The rule of a crash of @kind with @signature and @message (as stored);
 * never NULL: a kind it does not know gets the generic rule "crash". */
const CrashRule *crashreport_rule(const char *kind, const char *signature, const char *message);

/* Every rule, for listings (terminated by an entry whose id is NULL). */
extern const CrashRule crashreport_rules[];

/* The frame a report points at: the first target frame under the source
 * root, else the first frame with a file, else NULL. */
const CrashFrame *crashreport_where(const CrashEntry *e);

/* "file:line" of @f (relative to the source root when it is under it;
 * without ":line" when the line is unknown) into @buf; "" without a file. */
void crashreport_frame_place(const CrashFrame *f, char *buf, size_t cap);

/* Normalizes path @p lexically, in place: no empty or "." components, and
 * ".." removes the component before it ("/.." is "/"; a relative path
 * keeps the leading ".." it cannot remove). */
void crashreport_path_normalize(char *p);

/* "@s" quoted for a POSIX shell when it needs to be, into a malloc'd
 * string (NULL on ENOMEM). */
char *crashreport_shell_quote(const char *s);
