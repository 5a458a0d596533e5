/*
 * The run's dictionaries (see engine/dicts.h). The table area sent with each
 * batch is rebuilt only when a dictionary changed: the user's tokens first,
 * then the automatic ones not already among them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "engine/dicts.h"
#include "core/dict.h"
#include "core/log.h"

#include "snapfuzz/banned.h"

struct RunDicts {
        Dict *user;
        Dict *autod;
        int outdir_fd; /* -1 until dicts_load_auto */
        bool auto_dirty;
        bool table_stale;
        size_t table_len;
        uint8_t table[RECORD_TABLE_BYTES];
};

/* Warns once about the lines of @path that were skipped, if any. */
static void dicts_warn_skipped(const char *path, const DictError *err, const char *then)
{
        char what[400];

        if (dict_skipped_describe(err, what, sizeof(what)) > 0)
                log_warn("%s:%s%s", path, what, then);
}

int dicts_new(RunDicts **ret, const char *user_path)
{
        RunDicts *d = calloc(1, sizeof(*d));
        DictError err;
        int r;

        if (!d || dict_new(&d->user) < 0 || dict_new(&d->autod) < 0) {
                dicts_free(d);
                log_error("out of memory");
                return -ENOMEM;
        }
        d->outdir_fd = -1;
        d->table_stale = true;
        if (user_path) {
                r = dict_load(d->user, AT_FDCWD, user_path, &err);
                if (r < 0) {
                        log_error("cannot read the dictionary %s: %s", user_path, strerror(-r));
                        dicts_free(d);
                        return r;
                }
                dicts_warn_skipped(user_path, &err, "");
        }
        *ret = d;
        return 0;
}

void dicts_free(RunDicts *d)
{
        if (!d)
                return;
        dict_free(d->user);
        dict_free(d->autod);
        free(d);
}

void dicts_load_auto(RunDicts *d, int outdir_fd, const char *out_dir)
{
        DictError err;
        int r;

        d->outdir_fd = outdir_fd;
        r = dict_load(d->autod, outdir_fd, DICTS_AUTO_FILE, &err);
        if (r == 0 && err.skipped) {
                char path[4096];
                snprintf(path, sizeof(path), "%s/%s", out_dir, DICTS_AUTO_FILE);
                dicts_warn_skipped(path, &err, " (it is rewritten without it)");
                d->auto_dirty = true;
        }
        if (r == -ENOENT || r == 0) {
                d->table_stale = true;
                return;
        }
        log_warn("cannot read %s/%s: %s; starting a new automatic dictionary", out_dir,
                 DICTS_AUTO_FILE, strerror(-r));
        dict_free(d->autod);
        d->autod = NULL;
        if (dict_new(&d->autod) < 0)
                return;
        d->auto_dirty = true;
        d->table_stale = true;
}

const uint8_t *dicts_table(RunDicts *d, size_t *ret_len)
{
        if (d->table_stale) {
                const Dict *both[] = {d->user, d->autod};
                bool any = dict_size(d->user) || (d->autod && dict_size(d->autod));
                d->table_len = any ? dict_serialize(both, 2, d->table, sizeof(d->table)) : 0;
                d->table_stale = false;
        }
        *ret_len = d->table_len;
        return d->table;
}

size_t dicts_take_tokens(RunDicts *d, void *region, const RecordLayout *l)
{
        RecordTokens *t = record_tokens(region, l);
        uint32_t used = __atomic_load_n(&t->used, __ATOMIC_ACQUIRE);
        size_t added = 0;

        if (!d->autod)
                return 0;
        if (used > RECORD_TOKEN_SLOTS)
                used = RECORD_TOKEN_SLOTS;
        for (uint32_t i = 0; i < used && dict_size(d->autod) < DICTS_AUTO_MAX; i++) {
                const RecordToken *tok = &t->token[i];
                uint32_t len = tok->len;
                if (len == 0 || len > RECORD_TOKEN_MAX)
                        continue; /* scribbled on */
                if (dict_contains(d->user, tok->data, len))
                        continue;
                if (dict_add(d->autod, tok->data, len) == 1)
                        added++;
        }
        if (added) {
                d->auto_dirty = true;
                d->table_stale = true;
        }
        return added;
}

int dicts_save_auto(RunDicts *d)
{
        int r;

        if (!d->auto_dirty || d->outdir_fd < 0 || !d->autod)
                return 0;
        r = dict_save(d->autod, d->outdir_fd, DICTS_AUTO_FILE,
                      "snapfuzz automatic dictionary: comparison operands that led to new "
                      "coverage (libFuzzer/AFL format; usable with --dict)");
        if (r == 0)
                d->auto_dirty = false;
        return r;
}

size_t dicts_user_count(const RunDicts *d)
{
        return dict_size(d->user);
}

size_t dicts_auto_count(const RunDicts *d)
{
        return d->autod ? dict_size(d->autod) : 0;
}
