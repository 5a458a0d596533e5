/*
 * The dictionaries of a run: the one the user gave (`--dict FILE`) and the
 * automatic one, OUT/autodict: byte strings that comparison operators wrote
 * into inputs that then reached new coverage. The automatic dictionary is
 * loaded when a run starts, grows while it runs, and is saved atomically in
 * the same format as --dict files, so a person can read it, edit it, or
 * hand it to another fuzzer. Both go into every fuzzing batch's table area.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/record.h"

typedef struct RunDicts RunDicts;

/* The automatic dictionary's file in the output directory. */
#define DICTS_AUTO_FILE "autodict"
/* It keeps at most this many tokens; later finds add nothing. */
#define DICTS_AUTO_MAX 1024u

/* Loads the user's dictionary (@user_path may be NULL). Lines it cannot
 * use are skipped with one warning naming the file, the first such line
 * and what is wrong with it. Returns 0, or -errno when the file cannot be
 * read (after one error line naming it) or memory runs out. */
int dicts_new(RunDicts **ret, const char *user_path);
void dicts_free(RunDicts *d);

/* Loads @out_dir/autodict, if there is one, through @outdir_fd. One that
 * cannot be read or parsed is reported and set aside (it is rewritten at
 * the next save), never fatal. */
void dicts_load_auto(RunDicts *d, int outdir_fd, const char *out_dir);

/* The table area for the next batch (mutator_dict_serialize's format);
 * *ret_len 0 when there is no token at all. Valid until the next call of a
 * function that changes @d. */
const uint8_t *dicts_table(RunDicts *d, size_t *ret_len);

/* Adds the tokens a runner left in @region's tokens area to the automatic
 * dictionary. Returns how many were new. Lengths are checked, never
 * trusted. */
size_t dicts_take_tokens(RunDicts *d, void *region, const RecordLayout *l);

/* Writes OUT/autodict if it changed since the last save. 0 or -errno. */
int dicts_save_auto(RunDicts *d);

size_t dicts_user_count(const RunDicts *d);
size_t dicts_auto_count(const RunDicts *d);
