/*
 * Atomicity: a new crash is written into crashes/.tmp.<id>.<pid>/ (input,
 * then crash.json, each fsynced), the directory is fsynced and renamed to
 * crashes/<id>, and crashes/ is fsynced. If another process renamed the
 * same id first, rename fails with EEXIST/ENOTEMPTY and the crash is
 * merged into the existing one instead. Nothing is ever half-written under
 * a final name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/msg.h"

#include "snapfuzz/banned.h"

bool crashstore_id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = id[i];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '_'))
                        return false;
        }
        return true;
}

void crashstore_now_iso(char *buf, size_t cap)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_json(int dirfd, const char *name, const cJSON *j)
{
        char *line;
        size_t len;
        int r = msg_format_line(j, 1, &line, &len);
        if (r < 0)
                return r;
        r = fs_write_atomic(dirfd, name, line, len);
        free(line);
        return r;
}

static void set_string(cJSON *j, const char *key, const char *value)
{
        cJSON_DeleteItemFromObjectCaseSensitive(j, key);
        cJSON_AddStringToObject(j, key, value);
}

static void set_number(cJSON *j, const char *key, double value)
{
        cJSON_DeleteItemFromObjectCaseSensitive(j, key);
        cJSON_AddNumberToObject(j, key, value);
}

/* Keeps another input of a known crash in <id>/more/<sha1>, up to
 * CRASHSTORE_MORE_INPUTS of them: different inputs for one bug help whoever
 * fixes it, and let every recovered input be checked. */
static void keep_more(int crash_fd, const uint8_t *input, size_t len)
{
        char name[SHA1_HEX_LEN];
        if (mkdirat(crash_fd, "more", 0755) < 0 && errno != EEXIST)
                return;
        int fd = openat(crash_fd, "more", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        int dup_fd = dup(fd);
        DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
        size_t n = 0;
        if (d) {
                struct dirent *de;
                while ((de = readdir(d)))
                        n += de->d_name[0] != '.';
                closedir(d);
        }
        if (n < CRASHSTORE_MORE_INPUTS) {
                sha1_hex(input, len, name);
                (void)fs_write_atomic(fd, name, input, len);
        }
        close(fd);
}

/* Bumps count and last_seen of an existing crash. */
static int merge_existing(int crashes_fd, const char *id, const cJSON *report, const uint8_t *input,
                          size_t input_len)
{
        char path[256], now[32];
        uint8_t *buf;
        size_t len;

        snprintf(path, sizeof(path), "%s/crash.json", id);
        int r = fs_read_file(crashes_fd, path, 16u << 20, &buf, &len);
        if (r < 0)
                return r;
        cJSON *old = cJSON_ParseWithLength((const char *)buf, len);
        free(buf);
        if (!old)
                return -EBADMSG;
        crashstore_now_iso(now, sizeof(now));
        set_number(old, "count", (double)msg_int(old, "count", 1) + 1);
        set_string(old, "last_seen", now);
        int dfd = openat(crashes_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                cJSON_Delete(old);
                return -errno;
        }
        r = write_json(dfd, "crash.json", old);
        /* A state-dependent crash's input does not crash alone: keeping it
         * as a further input of the bug would mislead. */
        if (r == 0 && input && !cJSON_GetObjectItemCaseSensitive(report, "state_dependent"))
                keep_more(dfd, input, input_len);
        close(dfd);
        cJSON_Delete(old);
        return r;
}

int crashstore_put(const char *out_dir, cJSON *report, const uint8_t *input, size_t len,
                   bool *ret_new)
{
        return crashstore_put_files(out_dir, report, input, len, NULL, 0, ret_new);
}

static int write_extra(int dirfd, const CrashFile *f)
{
        const char *slash = strchr(f->name, '/');
        if (!slash)
                return fs_write_atomic(dirfd, f->name, f->data, f->len);
        char sub[128];
        snprintf(sub, sizeof(sub), "%.*s", (int)(slash - f->name), f->name);
        if (mkdirat(dirfd, sub, 0755) < 0 && errno != EEXIST)
                return -errno;
        int fd = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = fs_write_atomic(fd, slash + 1, f->data, f->len);
        close(fd);
        return r;
}

/* Removes what a failed put left in its temporary directory. */
static void remove_tmp(int crashes_fd, const char *tmp, const CrashFile *files, size_t n_files)
{
        int fd = openat(crashes_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
                for (size_t i = 0; i < n_files; i++) {
                        unlinkat(fd, files[i].name, 0);
                        const char *slash = strchr(files[i].name, '/');
                        if (slash) {
                                char sub[128];
                                snprintf(sub, sizeof(sub), "%.*s", (int)(slash - files[i].name),
                                         files[i].name);
                                unlinkat(fd, sub, AT_REMOVEDIR);
                        }
                }
                unlinkat(fd, "input", 0);
                unlinkat(fd, "crash.json", 0);
                close(fd);
        }
        unlinkat(crashes_fd, tmp, AT_REMOVEDIR);
}

int crashstore_put_files(const char *out_dir, cJSON *report, const uint8_t *input, size_t len,
                         const CrashFile *files, size_t n_files, bool *ret_new)
{
        char path[4096], tmp[256], now[32];
        const char *id = msg_str(report, "id", "");
        int r, crashes_fd = -1, tmp_fd = -1;

        if (!crashstore_id_valid(id))
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/crashes", out_dir);
        r = fs_mkdir_p(path, 0755);
        if (r < 0)
                return r;
        crashes_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (crashes_fd < 0)
                return -errno;

        struct stat st;
        if (fstatat(crashes_fd, id, &st, 0) == 0) {
                r = merge_existing(crashes_fd, id, report, input, len);
                if (r == 0)
                        *ret_new = false;
                goto out;
        }

        crashstore_now_iso(now, sizeof(now));
        set_number(report, "count", 1);
        set_string(report, "first_seen", now);
        set_string(report, "last_seen", now);

        snprintf(tmp, sizeof(tmp), FS_TMP_PREFIX "%s.%ld", id, (long)getpid());
        if (mkdirat(crashes_fd, tmp, 0755) < 0 && errno != EEXIST) {
                r = -errno;
                goto out;
        }
        tmp_fd = openat(crashes_fd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tmp_fd < 0) {
                r = -errno;
                goto out_rmtmp;
        }
        r = fs_write_atomic(tmp_fd, "input", input, len);
        if (r < 0)
                goto out_rmtmp;
        for (size_t i = 0; i < n_files; i++) {
                r = write_extra(tmp_fd, &files[i]);
                if (r < 0)
                        goto out_rmtmp;
        }
        r = write_json(tmp_fd, "crash.json", report);
        if (r < 0)
                goto out_rmtmp;
        if (renameat(crashes_fd, tmp, crashes_fd, id) < 0) {
                r = -errno;
                if (r == -EEXIST || r == -ENOTEMPTY) {
                        r = merge_existing(crashes_fd, id, report, input, len);
                        if (r == 0)
                                *ret_new = false;
                }
                goto out_rmtmp;
        }
        r = fs_fsync_dir(crashes_fd);
        if (r == 0)
                *ret_new = true;
        goto out;

out_rmtmp:
        remove_tmp(crashes_fd, tmp, files, n_files);
out:
        if (tmp_fd >= 0)
                close(tmp_fd);
        close(crashes_fd);
        return r;
}

int crashstore_report_parse(const char *path, const char *text, size_t len, cJSON **ret_report,
                            char *err, size_t errlen)
{
        const char *end = NULL;
        cJSON *report = cJSON_ParseWithLengthOpts(text, len, &end, 0);
        if (!report || !cJSON_IsObject(report)) {
                size_t at = end ? (size_t)(end - text) : 0;
                snprintf(err, errlen,
                         "%s is not valid JSON (near byte %zu); the crash record is "
                         "corrupt",
                         path, at);
                cJSON_Delete(report);
                return CRASHSTORE_ERR_CORRUPT;
        }
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(report, "kind")) ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(report, "target"))) {
                snprintf(err, errlen,
                         "%s lacks the \"kind\" or \"target\" field; the crash "
                         "record is corrupt",
                         path);
                cJSON_Delete(report);
                return CRASHSTORE_ERR_CORRUPT;
        }
        *ret_report = report;
        return 0;
}

int crashstore_load(const char *out_dir, const char *id, cJSON **ret_report, uint8_t **ret_input,
                    size_t *ret_len, char *err, size_t errlen)
{
        char path[4096];
        uint8_t *json = NULL, *input = NULL;
        size_t json_len, input_len;
        struct stat st;
        int r;

        if (!crashstore_id_valid(id)) {
                snprintf(err, errlen, "'%s' is not a crash id (ids are listed in %s/crashes/)", id,
                         out_dir);
                return CRASHSTORE_ERR_NOENT;
        }
        snprintf(path, sizeof(path), "%s/crashes/%s", out_dir, id);
        if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
                snprintf(err, errlen,
                         "no crash with id %s in %s/crashes/ (use --out to name "
                         "another output directory)",
                         id, out_dir);
                return CRASHSTORE_ERR_NOENT;
        }
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out_dir, id);
        r = fs_read_file(AT_FDCWD, path, 16u << 20, &json, &json_len);
        if (r < 0) {
                snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
                return CRASHSTORE_ERR_CORRUPT;
        }
        cJSON *report = NULL;
        r = crashstore_report_parse(path, (const char *)json, json_len, &report, err, errlen);
        free(json);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out_dir, id);
        r = fs_read_file(AT_FDCWD, path, CRASHSTORE_MAX_INPUT, &input, &input_len);
        if (r < 0) {
                snprintf(err, errlen, "cannot read %s: %s", path, strerror(-r));
                cJSON_Delete(report);
                return CRASHSTORE_ERR_CORRUPT;
        }
        int64_t expect = msg_int(report, "input_len", -1);
        if (expect >= 0 && (size_t)expect != input_len) {
                snprintf(err, errlen,
                         "%s has %zu bytes but crash.json says %lld: the input is "
                         "truncated or was changed",
                         path, input_len, (long long)expect);
                cJSON_Delete(report);
                free(input);
                return CRASHSTORE_ERR_CORRUPT;
        }
        *ret_report = report;
        *ret_input = input;
        *ret_len = input_len;
        return 0;
}

/* Opens OUT/crashes/<id>/ for the functions below. */
static int open_crash_dir(const char *out_dir, const char *id)
{
        char path[4096];
        if (!crashstore_id_valid(id))
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/crashes/%s", out_dir, id);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int crashstore_put_minimized(const char *out_dir, const char *id, const uint8_t *data, size_t len)
{
        int dfd = open_crash_dir(out_dir, id);
        if (dfd < 0)
                return dfd;
        int r = fs_write_atomic(dfd, "minimized", data, len);
        close(dfd);
        return r;
}

int crashstore_load_minimized(const char *out_dir, const char *id, uint8_t **ret, size_t *ret_len)
{
        int dfd = open_crash_dir(out_dir, id);
        if (dfd < 0)
                return dfd;
        int r = fs_read_file(dfd, "minimized", CRASHSTORE_MAX_INPUT, ret, ret_len);
        close(dfd);
        return r;
}

int crashstore_update(const char *out_dir, const char *id, const cJSON *fields)
{
        uint8_t *buf;
        size_t len;
        int dfd = open_crash_dir(out_dir, id);
        if (dfd < 0)
                return dfd;
        int r = fs_read_file(dfd, "crash.json", 16u << 20, &buf, &len);
        if (r < 0)
                goto out;
        cJSON *report = cJSON_ParseWithLength((const char *)buf, len);
        free(buf);
        if (!cJSON_IsObject(report)) {
                cJSON_Delete(report);
                r = -EBADMSG;
                goto out;
        }
        const cJSON *f;
        cJSON_ArrayForEach(f, fields)
        {
                cJSON *copy = cJSON_Duplicate(f, 1);
                if (!copy) {
                        r = -ENOMEM;
                        break;
                }
                cJSON_DeleteItemFromObjectCaseSensitive(report, f->string);
                cJSON_AddItemToObject(report, f->string, copy);
        }
        if (r == 0)
                r = write_json(dfd, "crash.json", report);
        cJSON_Delete(report);
out:
        close(dfd);
        return r;
}

static int compare_ids(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int crashstore_list(const char *out_dir, char ***ret_ids, size_t *ret_n)
{
        char path[4096];
        char **ids = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        snprintf(path, sizeof(path), "%s/crashes", out_dir);
        DIR *d = opendir(path);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                if (!crashstore_id_valid(de->d_name))
                        continue; /* ".", "..", FS_TMP_PREFIX directories */
                struct stat st;
                if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        char **grown = realloc(ids, ncap * sizeof(*ids));
                        if (!grown)
                                goto err_nomem;
                        ids = grown;
                        cap = ncap;
                }
                ids[n] = strdup(de->d_name);
                if (!ids[n])
                        goto err_nomem;
                n++;
        }
        closedir(d);
        if (n)
                qsort(ids, n, sizeof(*ids), compare_ids);
        *ret_ids = ids;
        *ret_n = n;
        return 0;

err_nomem:
        closedir(d);
        crashstore_ids_free(ids, n);
        return -ENOMEM;
}

void crashstore_ids_free(char **ids, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(ids[i]);
        free(ids);
}
