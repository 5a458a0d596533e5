/*
 * What `snapfuzz run` shows while it runs. The coordinator hands the
 * screen a snapshot of its figures (ScreenFigures) whenever screen_due()
 * says so; the screen decides how to show them:
 *   - a live screen redrawn in place at the bottom of a terminal, when
 *     stderr is one (and TERM is not "dumb");
 *   - otherwise the status line, one every status period, in the format
 *     scripts and tests parse ("[  12.0s] execs ... crashes N (M unique)");
 *   - nothing at all with --quiet (errors, warnings and the summary only).
 * Every mode ends with the same "done [...]" line (screen_end).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapfuzz/engine.h"

/* One worker slot, as the screen shows it. */
typedef struct ScreenWorker {
        uint64_t execs; /* executions its batches ran in this run */
        bool alive;
} ScreenWorker;

/* The last crash stored: what the screen names and how to replay it. */
typedef struct ScreenCrash {
        char id[64]; /* "" until a crash is stored */
        char kind[32];
        char message[200];
        double at_s; /* seconds into the run */
} ScreenCrash;

/* One snapshot of the run. Pointers are borrowed for the call. */
typedef struct ScreenFigures {
        double elapsed_s;
        uint64_t execs;
        uint64_t edges, features;
        double last_new_edge_s; /* seconds into the run when edges last grew; <0: never */
        size_t corpus;
        uint64_t crashes, unique; /* stored, and of them new ids */
        uint64_t timeouts, ooms;  /* runner deaths of those kinds */
        uint64_t lost;
        long rss_mb; /* the largest runner's (or worker's) resident size; <0: unknown */
        unsigned rss_limit_mb;
        const char *target;
        const char *sandbox; /* "strict", "log" or "off" */
        bool sandbox_policy; /* with a policy file */
        const char *out_dir;
        unsigned n_workers;
        const ScreenWorker *workers;
        const ScreenCrash *last_crash; /* NULL or id "" : none yet */
        /* --sanitizer-target: inputs its build checked (status lines). */
        bool sanitizer;
        uint64_t sanitizer_checked;
} ScreenFigures;

typedef struct Screen Screen;

/* How many lines the live screen takes (fewer on a short terminal). */
#define SCREEN_LINES 9

/* A screen for a run whose figures go to @fd (stderr) in @display mode
 * (SF_DISPLAY_*), the status line every @every_s seconds. Whether @fd is
 * a terminal and NO_COLOR are looked at here. 0 or -ENOMEM. */
int screen_new(Screen **ret, int display, unsigned every_s, int fd);
void screen_free(Screen *s);

/* Whether a snapshot is wanted at @now_ms (a redraw or a status line). */
bool screen_due(Screen *s, int64_t now_ms);

/* Shows the snapshot @f taken at @now_ms. */
void screen_update(Screen *s, const ScreenFigures *f, int64_t now_ms);

/* Takes the live screen down, leaving its last state in the terminal's
 * text, and prints the final "done [...]" line (in every mode). */
void screen_end(Screen *s, const ScreenFigures *f);

/* Whether the live screen is in use (not lines, not quiet). */
bool screen_is_live(const Screen *s);

/*
 * The live screen's lines for @f at @now_ms, @cols columns wide at most
 * (each line is cut to @cols - 1 visible characters), with colour when
 * @colour: written into @buf (capacity @cap) separated by '\n'. Returns
 * the number of lines. Per-worker and current speeds come from the
 * previous call's snapshot. Exposed for tests (tests/test_screen.c).
 */
unsigned screen_render(Screen *s, const ScreenFigures *f, int64_t now_ms, unsigned cols,
                       bool colour, char *buf, size_t cap);

/* Remembers the crash @id of @kind (@message) stored @at_s seconds into
 * the run as the last one, each string cut to its field. */
void screen_crash_set(ScreenCrash *k, const char *id, const char *kind, const char *message,
                      double at_s);

/* The resident size of process @pid in MB, from /proc; -1 when it cannot
 * be read (gone, not ours to read). */
long screen_proc_rss_mb(pid_t pid);

/* Writes @s into @buf (capacity @cap) quoted for a POSIX shell when it
 * needs it (the reproduce command's output directory). */
void screen_shell_quote(char *buf, size_t cap, const char *s);
