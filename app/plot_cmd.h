/*
 * `snapfuzz plot`: pictures of a campaign's coverage, speed and crashes
 * over time, from OUT/plot_data (engine/plotdata.h), drawn by gnuplot.
 */
#pragma once

#include <stddef.h>

#include "engine/plotdata.h"

/* Parses the command's arguments (argv[0] is "plot") and writes the
 * picture. Returns SF_EXIT_OK, SF_EXIT_USAGE (bad usage; no, an empty or a
 * garbage plot_data; gnuplot not installed) or SF_EXIT_INTERNAL (gnuplot
 * failed on the script, the picture could not be written). */
int plot_cmd(int argc, char **argv);

/* The gnuplot script that draws @rows (@n of them, @n >= 1) as a picture
 * of @format ("png" or "svg") titled @title, written to gnuplot's standard
 * output. A malloc'd string, or NULL when out of memory. */
char *plot_script(const PlotRow *rows, size_t n, const char *format, const char *title);
