/*
 * The merge control file (engine/merge.c): which inputs a merge runs, in
 * which order, and what each one did, so that a merge killed at any moment
 * goes on where it stopped. The format is libFuzzer's -merge_control_file
 * (FuzzerMerge.cpp), which libFuzzer can read back:
 *
 *     N snapfuzz-merge 1 key=<16 hex>   the number of inputs; libFuzzer
 *                                       reads the number and ignores the rest
 *     M                                 how many of them are the output corpus's
 *     <path>                            N lines, one input each, in run order
 *     STARTED <i> <size> [<failure>]    input i ran (size: the bytes run)
 *     FT <i> <feature>...               its features, when it ran to its end
 *
 * An input with a STARTED line and no FT line failed (crash, timeout, oom,
 * unreadable: the optional word, which libFuzzer ignores). STARTED lines
 * come in order from 0, so what was run is a prefix of the list. The key
 * says what the features are features of (the target's bytes and the
 * options that change them); a file without it was written by libFuzzer
 * (its features are libFuzzer's, not ours). libFuzzer's COV lines are
 * accepted and ignored.
 *
 * Everything in a control file is untrusted: the parser checks every
 * number and the order of the lines, and says which line is wrong.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most inputs one control file may list (libFuzzer's limit). */
#define MERGECTL_MAX_INPUTS 10000000u

typedef enum MergeCtlState {
        MERGECTL_NOT_RUN = 0,
        MERGECTL_DONE = 1,   /* ran to its end: features known */
        MERGECTL_FAILED = 2, /* crashed, hung, ran out of memory, unreadable */
} MergeCtlState;

typedef struct MergeCtlEntry {
        char *name;
        uint64_t size; /* the bytes run (an input longer than max_len is cut) */
        MergeCtlState state;
        char failure[16]; /* MERGECTL_FAILED: "crash", "timeout", "oom", ... or "" */
        uint32_t n_ft;
        uint32_t *ft; /* sorted, no duplicates */
} MergeCtlEntry;

typedef struct MergeCtl {
        bool ours;    /* written by snapfuzz (it has a key) */
        uint64_t key; /* what the features are of (ours) */
        size_t n, m;  /* inputs; of which the output corpus's (the first m) */
        size_t done;  /* inputs run: entries [0, done) */
        MergeCtlEntry *e;
} MergeCtl;

/* Parses a control file's @len bytes. Returns 0 with *@ret filled (free
 * it with mergectl_deinit), -EINVAL with one line saying what and where in
 * @err when it is not a control file, or -ENOMEM. */
int mergectl_parse(const char *text, size_t len, MergeCtl *ret, char *err, size_t errlen);

/* Writes @c (entries [0, c->done) with their results) to @path
 * atomically: a temporary file next to it, fsync, rename. 0 or -errno. */
int mergectl_write(const char *path, const MergeCtl *c);

void mergectl_deinit(MergeCtl *c);
