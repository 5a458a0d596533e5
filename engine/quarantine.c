/*
 * OUT/quarantine.json, read and written whole:
 *
 *   {"version": 1, "quarantined": [
 *     {"id": "9a74042773df6cf3", "signature": "segv|...", "reason": "...",
 *      "at": "2026-11-26T13:00:00Z"}]}
 *
 * Invariants: an entry's id has the shape of a crash id (so it can never
 * name a path outside OUT/crashes); every text is bounded (QUARANTINE_*);
 * a file with anything wrong is refused whole, with one line naming the
 * field, and the list in memory is then untouched; the file is only ever
 * replaced atomically (core/fsutil.h), so a reader sees the old list or
 * the new one. Unknown fields are ignored (a newer snapfuzz may add some).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "engine/quarantine.h"

#include "snapfuzz/banned.h"

typedef struct QuarantineEntry {
        char id[65];
        char *signature; /* "" when unknown */
        char *reason;    /* "" when none was given */
        char at[40];
} QuarantineEntry;

struct Quarantine {
        QuarantineEntry *v;
        size_t n, cap;
};

static void entry_deinit(QuarantineEntry *e)
{
        free(e->signature);
        free(e->reason);
}

void quarantine_free(Quarantine *q)
{
        if (!q)
                return;
        for (size_t i = 0; i < q->n; i++)
                entry_deinit(&q->v[i]);
        free(q->v);
        free(q);
}

size_t quarantine_count(const Quarantine *q)
{
        return q ? q->n : 0;
}

/* A free slot at the end of @q->v. 0, -E2BIG or -ENOMEM. */
static int grow(Quarantine *q)
{
        if (q->n == QUARANTINE_MAX_ENTRIES)
                return -E2BIG;
        if (q->n < q->cap)
                return 0;
        size_t cap = q->cap ? q->cap * 2 : 8;
        QuarantineEntry *v = realloc(q->v, cap * sizeof(*v));
        if (!v)
                return -ENOMEM;
        q->v = v;
        q->cap = cap;
        return 0;
}

/* An optional string field of at most @max bytes: 0 (absent: ""), or -1. */
static int opt_text(const cJSON *item, const char *key, size_t max, const char **ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, key);
        *ret = "";
        if (!v)
                return 0;
        if (!cJSON_IsString(v) || strlen(v->valuestring) > max)
                return -1;
        *ret = v->valuestring;
        return 0;
}

/* Entry @i of the file into @q, or -EBADMSG with the field named in @err. */
static int take_entry(Quarantine *q, const cJSON *item, size_t i, const char *path, char *err,
                      size_t errlen)
{
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
        const char *sig = "", *reason = "", *at = "";
        const char *what = NULL;

        if (!cJSON_IsObject(item))
                what = "must be an object";
        else if (!cJSON_IsString(id) || !crashstore_id_valid(id->valuestring))
                what = ".id must be a crash id (as `snapfuzz crashes` lists them)";
        else if (opt_text(item, "signature", QUARANTINE_MAX_SIGNATURE, &sig) < 0)
                what = ".signature must be a string of at most 767 bytes";
        else if (opt_text(item, "reason", QUARANTINE_MAX_REASON, &reason) < 0)
                what = ".reason must be a string of at most 1024 bytes";
        else if (opt_text(item, "at", 39, &at) < 0)
                what = ".at must be a short string (a UTC time)";
        if (what) {
                snprintf(err, errlen, "%s: quarantined[%zu]%s; fix the file or delete it", path, i,
                         what);
                return -EBADMSG;
        }
        int r = quarantine_add(q, id->valuestring, sig, reason);
        if (r == 0 && at[0])
                snprintf(q->v[q->n - 1].at, sizeof(q->v[0].at), "%s", at);
        return r;
}

/* The parsed file into @q. 0, -EBADMSG with a line, -ENOMEM. */
static int take_list(Quarantine *q, const cJSON *root, const char *path, char *err, size_t errlen)
{
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "quarantined");
        const cJSON *item;
        size_t i = 0;

        if (!cJSON_IsObject(root) || !cJSON_IsArray(list)) {
                snprintf(err, errlen,
                         "%s: not a quarantine list (a JSON object with an array "
                         "\"quarantined\"); fix the file or delete it",
                         path);
                return -EBADMSG;
        }
        if ((size_t)cJSON_GetArraySize(list) > QUARANTINE_MAX_ENTRIES) {
                snprintf(err, errlen, "%s: more than %u quarantined crashes; fix the file", path,
                         QUARANTINE_MAX_ENTRIES);
                return -EBADMSG;
        }
        cJSON_ArrayForEach(item, list)
        {
                int r = take_entry(q, item, i++, path, err, errlen);
                if (r == -ENOMEM)
                        snprintf(err, errlen, "out of memory reading %s", path);
                if (r < 0)
                        return r == -ENOMEM ? r : -EBADMSG;
        }
        return 0;
}

/* Makes the line in @err inert: it may quote a path from the command line. */
static void inert(char *err, size_t errlen)
{
        char *raw = strdup(err);
        if (raw) {
                termsafe_str(err, errlen, raw, errlen);
                free(raw);
        }
}

int quarantine_parse(const char *path, const char *text, size_t len, Quarantine **ret, char *err,
                     size_t errlen)
{
        cJSON *root = NULL;
        int r;

        *ret = NULL;
        Quarantine *q = calloc(1, sizeof(*q));
        if (!q) {
                snprintf(err, errlen, "out of memory reading %s", path);
                return -ENOMEM;
        }
        if (len > QUARANTINE_MAX_BYTES) {
                snprintf(err, errlen, "%s is larger than %u bytes; fix the file or delete it", path,
                         QUARANTINE_MAX_BYTES);
                r = -EBADMSG;
                goto fail;
        }
        root = cJSON_ParseWithLength(text, len);
        if (!root) {
                snprintf(err, errlen, "%s is not valid JSON; fix the file or delete it", path);
                r = -EBADMSG;
                goto fail;
        }
        r = take_list(q, root, path, err, errlen);
        if (r < 0)
                goto fail;
        cJSON_Delete(root);
        *ret = q;
        return 0;

fail:
        cJSON_Delete(root);
        quarantine_free(q);
        inert(err, errlen);
        return r;
}

int quarantine_load(const char *out_dir, Quarantine **ret, char *err, size_t errlen)
{
        char path[4200];
        uint8_t *text = NULL;
        size_t len = 0;

        *ret = NULL;
        snprintf(path, sizeof(path), "%s/%s", out_dir, QUARANTINE_FILE);
        int r = fs_read_file(AT_FDCWD, path, QUARANTINE_MAX_BYTES, &text, &len);
        if (r == -ENOENT)
                return quarantine_parse(path, "{\"quarantined\": []}", 19, ret, err, errlen);
        if (r == -EFBIG) {
                snprintf(err, errlen, "%s is larger than %u bytes; fix the file or delete it", path,
                         QUARANTINE_MAX_BYTES);
                inert(err, errlen);
                return -EBADMSG;
        }
        if (r < 0) {
                snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
                inert(err, errlen);
                return r;
        }
        r = quarantine_parse(path, (const char *)text, len, ret, err, errlen);
        free(text);
        return r;
}

static QuarantineEntry *find_id(const Quarantine *q, const char *id)
{
        for (size_t i = 0; q && i < q->n; i++)
                if (strcmp(q->v[i].id, id) == 0)
                        return &q->v[i];
        return NULL;
}

const char *quarantine_find(const Quarantine *q, const char *id, const char *signature)
{
        const QuarantineEntry *e = id ? find_id(q, id) : NULL;
        if (e)
                return e->reason;
        if (!signature || !signature[0])
                return NULL;
        for (size_t i = 0; q && i < q->n; i++)
                if (q->v[i].signature[0] && strcmp(q->v[i].signature, signature) == 0)
                        return q->v[i].reason;
        return NULL;
}

int quarantine_add(Quarantine *q, const char *id, const char *signature, const char *reason)
{
        signature = signature ? signature : "";
        reason = reason ? reason : "";
        if (!crashstore_id_valid(id) || strlen(id) >= sizeof(q->v[0].id) ||
            strlen(signature) > QUARANTINE_MAX_SIGNATURE || strlen(reason) > QUARANTINE_MAX_REASON)
                return -EINVAL;
        char *sig = strdup(signature), *why = strdup(reason);
        int r = sig && why ? 0 : -ENOMEM;
        QuarantineEntry *e = find_id(q, id);
        if (r == 0 && !e)
                r = grow(q);
        if (r < 0) {
                free(sig);
                free(why);
                return r;
        }
        if (e) {
                entry_deinit(e);
        } else {
                e = &q->v[q->n++];
                memset(e, 0, sizeof(*e));
                snprintf(e->id, sizeof(e->id), "%s", id);
        }
        e->signature = sig;
        e->reason = why;
        crashstore_now_iso(e->at, sizeof(e->at));
        return 0;
}

int quarantine_remove(Quarantine *q, const char *id)
{
        QuarantineEntry *e = find_id(q, id);
        if (!e)
                return -ENOENT;
        entry_deinit(e);
        size_t i = (size_t)(e - q->v);
        memmove(e, e + 1, (q->n - i - 1) * sizeof(*e));
        q->n--;
        return 0;
}

/* @q as the file's JSON, or NULL when out of memory. */
static cJSON *to_json(const Quarantine *q)
{
        cJSON *root = cJSON_CreateObject();
        cJSON *list = cJSON_AddArrayToObject(root, "quarantined");
        if (!root || !list || !cJSON_AddNumberToObject(root, "version", 1))
                goto fail;
        for (size_t i = 0; i < q->n; i++) {
                const QuarantineEntry *e = &q->v[i];
                cJSON *item = cJSON_CreateObject();
                if (!item || !cJSON_AddItemToArray(list, item) ||
                    !cJSON_AddStringToObject(item, "id", e->id) ||
                    !cJSON_AddStringToObject(item, "signature", e->signature) ||
                    !cJSON_AddStringToObject(item, "reason", e->reason) ||
                    !cJSON_AddStringToObject(item, "at", e->at))
                        goto fail;
        }
        return root;
fail:
        cJSON_Delete(root);
        return NULL;
}

int quarantine_format(const Quarantine *q, char **ret, size_t *ret_len)
{
        cJSON *root = to_json(q);
        if (!root)
                return -ENOMEM;
        int r = msg_format_line(root, 1, ret, ret_len);
        cJSON_Delete(root);
        return r;
}

int quarantine_save(const Quarantine *q, const char *out_dir)
{
        char *text;
        size_t len;

        int r = quarantine_format(q, &text, &len);
        if (r < 0)
                return r;
        int dirfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                r = -errno;
                free(text);
                return r;
        }
        r = fs_write_atomic(dirfd, QUARANTINE_FILE, text, len);
        close(dirfd);
        free(text);
        return r;
}
