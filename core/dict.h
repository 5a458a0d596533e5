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
 * One token per line: an optional name (letters, digits and '_', optionally
 * with AFL's "@level"), '=', and the value in double quotes, where \\, \"
 * and \xNN are the only escapes and every other byte must be printable
 * ASCII or a tab. A token is 1..MUTATOR_DICT_MAX_TOKEN bytes.
 *
 * The coordinator serializes its dictionaries into each batch's table area
 * (include/snapfuzz/mutator.h), which is part of the replay record.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct Dict Dict;

/* Why a dictionary file was refused: the 1-based line and what is wrong
 * with it, for a message "FILE:LINE: MESSAGE". */
typedef struct DictError {
        unsigned line;
        char message[160];
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

/* Parses dictionary text (not NUL-terminated; @len bytes) into @d. Returns
 * 0, -EINVAL with *ret_err describing the first malformed line (the tokens
 * of the lines before it are added), -ENOSPC (more tokens than a dictionary
 * holds, with *ret_err naming the line) or -ENOMEM. */
int dict_parse(Dict *d, const char *text, size_t len, DictError *ret_err);

/* Reads and parses a dictionary file. Returns 0, -errno when it cannot be
 * read (ret_err->line is 0), or dict_parse's errors. */
int dict_load(Dict *d, int dirfd, const char *path, DictError *ret_err);

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
