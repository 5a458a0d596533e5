/*
 * Known crashes a person chose to live with for now: OUT/quarantine.json,
 * a list of crash ids (with the signature each had and why). A quarantined
 * crash is kept in the crash store and counted when it is found again, but
 * it does not stop `snapfuzz run` and does not fail `snapfuzz regress`.
 * The file is untrusted input (a CI cache, a commit from someone else):
 * it is checked whole before it is used, and a bad one is refused with one
 * line, never half-used.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define QUARANTINE_FILE "quarantine.json"
/* Limits on what the file may hold. */
#define QUARANTINE_MAX_BYTES (1u << 20)
#define QUARANTINE_MAX_ENTRIES 4096u
#define QUARANTINE_MAX_REASON 1024u
#define QUARANTINE_MAX_SIGNATURE 767u

typedef struct Quarantine Quarantine;

/*
 * Loads @out_dir/quarantine.json. A missing file is an empty list. Returns
 * 0, -EBADMSG (not JSON, a field of the wrong type or size, too many
 * entries, too big) with one line for a person in @err, -ENOMEM, or
 * another -errno (unreadable) with its line.
 */
int quarantine_load(const char *out_dir, Quarantine **ret, char *err, size_t errlen);
/* The checks of quarantine_load on the file's text (@len bytes, not
 * NUL-terminated; @path names it in the line). */
int quarantine_parse(const char *path, const char *text, size_t len, Quarantine **ret, char *err,
                     size_t errlen);
/* NULL is a no-op. */
void quarantine_free(Quarantine *q);

size_t quarantine_count(const Quarantine *q);

/* Whether crash @id, or any crash of signature @signature (NULL or "":
 * the id alone), is quarantined. Returns the reason ("" when none was
 * given) or NULL. @q NULL holds nothing. */
const char *quarantine_find(const Quarantine *q, const char *id, const char *signature);

/* Adds crash @id (its signature, a reason; either may be NULL) or updates
 * its entry. 0, -EINVAL (not a crash id, text too long), -E2BIG (the list
 * is full), -ENOMEM. */
int quarantine_add(Quarantine *q, const char *id, const char *signature, const char *reason);
/* Removes crash @id: 0, or -ENOENT when it is not quarantined. */
int quarantine_remove(Quarantine *q, const char *id);

/* @q as the file's text (malloc'd, with a final newline). 0 or -ENOMEM. */
int quarantine_format(const Quarantine *q, char **ret, size_t *ret_len);
/* Writes @q to @out_dir/quarantine.json atomically. 0 or -errno. */
int quarantine_save(const Quarantine *q, const char *out_dir);
