/*
 * OUT/plot_data: the campaign's figures over time, one line per status
 * period (AFL++'s plot_data is the model), for `snapfuzz plot` and for
 * anyone's own tools. A header line starting with '#', then lines of
 * comma-separated numbers in the order of PLOTDATA_HEADER.
 *
 * The file is a log: appended, never rewritten. A run that resumes an
 * output directory goes on appending, its time, executions and crash
 * counts continuing from the last line; a line torn by a kill is cut off
 * when the next run opens the file, and readers skip any line that does
 * not parse (plotdata_parse_line).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "engine/screen.h"

#define PLOTDATA_FILE "plot_data"
#define PLOTDATA_HEADER                                                                            \
        "# relative_time, execs, execs_per_sec, edges, features, corpus, unique_crashes, "         \
        "crashes, timeouts, ooms, rss_mb"
#define PLOTDATA_FIELDS 11

/* One line of plot_data. */
typedef struct PlotRow {
        double t; /* seconds since the first run on this output directory began */
        uint64_t execs;
        double execs_per_sec; /* since the line before (or the run's start) */
        uint64_t edges, features, corpus;
        uint64_t unique_crashes; /* new crash ids */
        uint64_t crashes;        /* crashes stored */
        uint64_t timeouts, ooms; /* runner deaths of those kinds */
        int64_t rss_mb;          /* the largest runner's resident size; -1: unknown */
} PlotRow;

typedef struct PlotData PlotData;

/* Opens OUT/plot_data in directory @dirfd for appending: a torn last line
 * is cut off, the header written into an empty file, and the last line
 * read for the figures this run continues from. 0 or a negative errno. */
int plotdata_open(PlotData **ret, int dirfd);
void plotdata_free(PlotData *p);

/* Appends the line of snapshot @f (this run's figures; @new_ids the crash
 * ids this run found first). 0 or a negative errno (a failed write; the
 * next call tries again). */
int plotdata_append(PlotData *p, const ScreenFigures *f, uint64_t new_ids);

/* Parses one line (@len bytes, without its newline) into @ret. 0, or
 * -EINVAL when it is a comment, the header, or not PLOTDATA_FIELDS numbers
 * (a torn line, garbage). */
int plotdata_parse_line(const char *line, size_t len, PlotRow *ret);
