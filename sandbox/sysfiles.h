/*
 * The system files every runner may read, without a policy file: what
 * common libraries open behind a parser's back (glibc's iconv reads its
 * converter cache and loads converter modules, locales and time zones are
 * data files, sqlite reads /dev/urandom). The runner lives in an empty
 * root, so the worker opens them on its behalf (supervisor.c), read-only,
 * confined to these exact files and directories. Internal to sandbox/.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* One entry of the table: a file (exactly that path) or a directory (read-only
 * opens below it, resolved beneath it: ".." and symlinks that lead out are
 * refused). */
typedef struct SysFile {
        const char *path;
        bool dir;
        /* Also opened for writing (/dev/null only: writes go nowhere). */
        bool writable;
        const char *why;
} SysFile;

extern const SysFile sysfiles_table[];
extern const size_t sysfiles_n;

typedef struct SysFiles SysFiles;

/* Opens the table's directories that exist on this system (O_PATH), in the
 * worker, before it enters its namespaces. Missing ones are skipped: an open
 * below them fails with ENOENT. 0 or -ENOMEM. */
int sysfiles_new(SysFiles **ret);
/* NULL is a no-op. */
void sysfiles_free(SysFiles *sf);

/* What sysfiles_open() did. */
#define SYSFILES_NOT_OURS 0 /* not a path of the table: the caller decides */
#define SYSFILES_OPENED 1   /* *ret_fd is the worker's descriptor for the runner */
#define SYSFILES_REFUSED 2  /* a path of the table, but not so: *ret_why says why */

/*
 * Opens @path for the runner, as open(2) with @flags would, if the table
 * allows it. @read_only_flags are the flags besides O_RDONLY a read-only
 * open may carry (O_CLOEXEC, O_NONBLOCK, ...). Returns one of SYSFILES_*,
 * or a negative errno for the runner's call (ENOENT: a file of an allowed
 * directory that does not exist).
 */
int sysfiles_open(const SysFiles *sf, const char *path, uint64_t flags, uint64_t read_only_flags,
                  int *ret_fd, const char **ret_why);

/* The table's paths present on this system, for sandbox_describe(). */
cJSON *sysfiles_describe(const SysFiles *sf);
