/*
 * Messages for people: one line each, on stderr, prefixed "snapfuzz: ".
 * Library code reports through these and returns an error; only main()
 * decides to exit.
 */
#pragma once

#include <stdbool.h>

void log_set_quiet(bool quiet);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
