/*
 * Dictionaries: sets of byte strings (tokens) that the dictionary mutations
 * insert into inputs. A dictionary comes from a file a person wrote
 * (`--dict FILE`) or from the automatic dictionary snapfuzz keeps in
 * OUT/autodict (comparison operands that led to new coverage). Both use the
 * libFuzzer/AFL dictionary format, so either file works with either tool:
 *
 *     # a comment; blank lines are ignored
 *     "GIF89a"
 *     kw_header="\x89PNG\x0d\x0a"
 *     quote="say \"hi\"\\"
 *
 * One token per line: the value in double quotes, optionally after a name
 * (AFL writes name="..." and name@level="...", libFuzzer kw="..."; any
 * text before the first '"' is taken as the name and not used). The value
 * runs to the last '"', which ends the line; in it, \\, \" and \xNN are
 * escapes and every other byte stands for itself. A token is
 * 1..MUTATOR_DICT_MAX_TOKEN bytes. A line that cannot be used (no closing
 * quote, an unknown escape, an empty or too long value, more tokens than
 * a dictionary holds) is skipped and reported, never fatal: every
 * dictionary libFuzzer or AFL++ accepts is accepted.
 *
 * The coordinator serializes its dictionaries into each batch's table area
 * (include/snapfuzz/mutator.h), which is part of the replay record.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct Dict Dict;

/* What a parse skipped: how many lines, the first one's 1-based number
 * and reason (for a message "FILE:LINE: MESSAGE"), and the numbers of the
 * next DICT_SKIP_LINES. */
#define DICT_SKIP_LINES 8u
typedef struct DictError {
        unsigned skipped;
        unsigned line;
        char message[160];
        unsigned more[DICT_SKIP_LINES];
} DictError;

int dict_new(Dict **ret);
void dict_free(Dict *d);

/* Adds a token unless the same bytes are already in. Returns 1 when added,
 * 0 for a duplicate, -EINVAL for an empty or too long token, -ENOSPC when
 * the dictionary holds MUTATOR_DICT_MAX_ENTRIES tokens, -ENOMEM. */
int dict_add(Dict *d, const uint8_t *tok, size_t len);

size_t dict_size(const Dict *d);
const uint8_t *dict_get(const Dict *d, size_t i, size_t *ret_len);
/* True when the dictionary holds exactly these bytes. */
int dict_contains(const Dict *d, const uint8_t *tok, size_t len);

/* Parses dictionary text (not NUL-terminated; @len bytes) into @d. Lines
 * that cannot be used are skipped and described in *ret_err (skipped 0:
 * none). Returns 0 or -ENOMEM. */
int dict_parse(Dict *d, const char *text, size_t len, DictError *ret_err);

/* Reads and parses a dictionary file, or reads a dictionary directory
 * (AFL++'s other form: one raw token per file, in name order). Returns 0
 * (with what was skipped in *ret_err), -errno when it cannot be read, or
 * -ENOMEM. */
int dict_load(Dict *d, int dirfd, const char *path, DictError *ret_err);

/* Describes what @err skipped in one line, "LINE: REASON; the token is
 * skipped (N more lines skipped: L1 L2 ...)", for a message prefixed with
 * the file's name. Returns its length (0 when nothing was skipped). */
size_t dict_skipped_describe(const DictError *err, char *buf, size_t cap);

/* Writes @d in the dictionary format (a comment line @comment first, when
 * not NULL), atomically, to @name under @dirfd. Returns 0 or -errno. */
int dict_save(const Dict *d, int dirfd, const char *name, const char *comment);

/* Formats one token as a quoted value ("..." with \xNN, \\ and \" escapes)
 * into @buf (capacity @cap, at least 4 * len + 3). Returns the length. */
size_t dict_quote(const uint8_t *tok, size_t len, char *buf, size_t cap);

/* Serializes the tokens of @n dictionaries, in order and without
 * duplicates, into a table area of @cap bytes (mutator_dict_serialize's
 * format). Returns the bytes used, terminator included. */
size_t dict_serialize(const Dict *const *dicts, size_t n, uint8_t *table, size_t cap);
