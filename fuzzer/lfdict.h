/*
 * The -dict file checked as libFuzzer checks it before fuzzing: every line
 * that is not blank or a '#' comment must be one token, `[name=]"value"`
 * with the escapes \\, \" and \xHH, printable bytes only. libFuzzer refuses
 * a file with any other line (ClusterFuzz looks for its
 * "ParseDictionaryFile: error in line N" message, docs/libfuzzer.md); the
 * engine's own reader, more lenient, then loads the tokens.
 */
#pragma once

#include <stddef.h>

/* lfdict_check()'s positive outcome: a line is not a token, or the file is
 * missing or empty (libFuzzer's message was printed). */
#define LFDICT_BAD 1

/* Checks the dictionary at @path; 0 with the number of tokens in
 * *ret_entries, or LFDICT_BAD after libFuzzer's line on stderr. */
int lfdict_check(const char *path, size_t *ret_entries);

/* Whether @line (@len bytes, no newline) is a blank line, a comment, or one
 * token; *ret_token tells which of the last two (1: a token). */
int lfdict_line_ok(const char *line, size_t len, int *ret_token);
