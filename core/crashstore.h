/*
 * The crash store: OUT/crashes/<id>/ with `input` (the exact bytes that
 * crashed), `crash.json` (the report) and, once minimized, `minimized`.
 * A new crash directory is assembled under a temporary name and renamed
 * into place, so a reader sees a complete crash or none; a known id has its
 * crash.json rewritten (atomically) with a higher count and a new
 * last-seen time, keeps its first input, and keeps up to
 * CRASHSTORE_MORE_INPUTS further distinct inputs in more/<sha1>.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define CRASHSTORE_MAX_INPUT (64u * 1024u * 1024u)
#define CRASHSTORE_MORE_INPUTS 64u

/* Stores a crash. @report is the crash.json content (fields "id" and
 * "kind" at least); "count", "first_seen" and "last_seen" are filled in
 * here. *ret_new says whether the id was new. Returns 0 or -errno. */
int crashstore_put(const char *out_dir, cJSON *report, const uint8_t *input, size_t len,
                   bool *ret_new);

/* A further file of a new crash, written before the crash directory
 * appears. A name may hold one '/' ("sequence/000042"): the subdirectory is
 * created. */
typedef struct CrashFile {
        const char *name;
        const uint8_t *data;
        size_t len;
} CrashFile;

/* crashstore_put with further files (only written when the id is new). */
int crashstore_put_files(const char *out_dir, cJSON *report, const uint8_t *input, size_t len,
                         const CrashFile *files, size_t n_files, bool *ret_new);

/* Why a stored crash cannot be loaded (crashstore_load's results). */
#define CRASHSTORE_ERR_NOENT (-2000)   /* no such crash id */
#define CRASHSTORE_ERR_CORRUPT (-2001) /* crash.json or input missing, truncated or invalid */

/* Loads crash @id: its report and its input. On failure returns a negative
 * errno or CRASHSTORE_ERR_* and writes one line for a person into @err. */
int crashstore_load(const char *out_dir, const char *id, cJSON **ret_report, uint8_t **ret_input,
                    size_t *ret_len, char *err, size_t errlen);

/* The part of crashstore_load that reads crash.json's text (@len bytes,
 * not NUL-terminated; @path names it in messages): a JSON object with the
 * string fields "kind" and "target". Returns 0 with the report in
 * *ret_report, or CRASHSTORE_ERR_CORRUPT with one line in @err. */
int crashstore_report_parse(const char *path, const char *text, size_t len, cJSON **ret_report,
                            char *err, size_t errlen);

/* True when @id has the shape of a crash id (so it can name a directory). */
bool crashstore_id_valid(const char *id);

/* Writes the current UTC time as ISO 8601 into buf (at least 32 bytes). */
void crashstore_now_iso(char *buf, size_t cap);

/* Writes OUT/crashes/<id>/minimized atomically. 0 or -errno (-ENOENT when
 * the crash does not exist). */
int crashstore_put_minimized(const char *out_dir, const char *id, const uint8_t *data, size_t len);

/* Reads OUT/crashes/<id>/minimized. 0, -ENOENT when there is none, or
 * another -errno. */
int crashstore_load_minimized(const char *out_dir, const char *id, uint8_t **ret, size_t *ret_len);

/* Sets the top-level fields of @fields in crash <id>'s crash.json
 * (replacing fields of the same name, keeping the rest) and rewrites it
 * atomically. 0, -ENOENT, -EBADMSG when crash.json is not a JSON object, or
 * another -errno. */
int crashstore_update(const char *out_dir, const char *id, const cJSON *fields);

/* The ids of the crashes stored in @out_dir, sorted (directories whose
 * names are valid ids; temporary ones are left out). *ret_ids is NULL when
 * there are none. -ENOENT when @out_dir/crashes does not exist. Free with
 * crashstore_ids_free(). */
int crashstore_list(const char *out_dir, char ***ret_ids, size_t *ret_n);
void crashstore_ids_free(char **ids, size_t n);
