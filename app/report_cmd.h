/*
 * `snapfuzz report`: writes the SARIF and/or JUnit XML report of an
 * existing output directory (engine/ciout.h).
 */
#pragma once

/* Parses the command's arguments (argv[0] is "report") and writes the
 * reports. Returns SF_EXIT_OK (written; crashes found or not, and
 * unreadable crash directories skipped with a line each), SF_EXIT_USAGE
 * (bad usage, no such output directory or source root, a report path in
 * no directory), SF_EXIT_INTERNAL (a write failed). */
int report_cmd(int argc, char **argv);
