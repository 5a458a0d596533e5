/*
 * Files the way snapfuzz writes them: atomically (temporary file in the
 * same directory, fsync, rename, fsync of the directory), so a process
 * killed at any instant leaves either the old file or the new one, never a
 * half-written one. Temporary names start with ".tmp." and are swept by
 * fs_sweep_tmp() when an output directory is reopened.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FS_TMP_PREFIX ".tmp."
/* Room for the temporary name of any file name fs_write_tmp accepts. */
#define FS_TMP_NAME_MAX 512

/* Writes @len bytes to @name under @dirfd atomically. Returns 0 or -errno. */
int fs_write_atomic(int dirfd, const char *name, const void *data, size_t len);

/* fs_write_atomic without the final fsync of the directory, for writers of
 * many files that fsync it once for all of them (core/writeq.h): the file
 * is complete and durable under its name once fs_fsync_dir(@dirfd) has
 * returned. Returns 0 or -errno. */
int fs_write_atomic_file(int dirfd, const char *name, const void *data, size_t len);

/* The two halves of an atomic write, for writers of many files that make
 * them durable at once (syncfs) rather than one fsync each: writes @data
 * to a new temporary file next to @name, fsynced when @sync, and returns
 * its name in @tmp; fs_commit_tmp then renames it to @name (and removes it
 * if that fails). Neither fsyncs the directory. Return 0 or -errno. */
int fs_write_tmp(int dirfd, const char *name, const void *data, size_t len, bool sync, char *tmp,
                 size_t tmp_size);
int fs_commit_tmp(int dirfd, const char *tmp, const char *name);

/* Reads a whole regular file (at most @max bytes; -EFBIG beyond) into a
 * malloc'd buffer (NUL-terminated for convenience, not counted in the
 * length). Returns 0 or -errno (-EISDIR, -EINVAL for any other kind of
 * file, a FIFO included: never waits for a writer). */
int fs_read_file(int dirfd, const char *path, size_t max, uint8_t **ret, size_t *ret_len);

/* mkdir -p. Returns 0 or -errno. */
int fs_mkdir_p(const char *path, mode_t mode);

int fs_fsync_dir(int dirfd);

/* Removes leftover temporary files (FS_TMP_PREFIX*) in @dirfd. */
void fs_sweep_tmp(int dirfd);

/* Removes leftover temporary files in @dirfd and in each of its
 * subdirectories (one level: OUT/crashes/<id>/). */
void fs_sweep_tmp_tree(int dirfd);

/* Takes the exclusive lock of a directory: a lock file @name under @dirfd
 * (created if missing) locked with flock, so that the kernel releases it
 * when the holder dies, however it dies; the file holds the holder's pid
 * as text. Returns 0 and the lock's descriptor in *@ret_fd (close it to
 * release), or -EBUSY with the holder's pid in *@ret_holder (0 if it has
 * not written it yet), or another -errno. */
int fs_lock_dir(int dirfd, const char *name, int *ret_fd, pid_t *ret_holder);

/* Whether a live process holds the lock fs_lock_dir takes. Returns 1 (held,
 * its pid in *@ret_holder), 0 (free or no lock file) or -errno. */
int fs_lock_probe(int dirfd, const char *name, pid_t *ret_holder);

/* The rescue directory of the run whose coordinator is @pid:
 * ${TMPDIR:-/tmp}/snapfuzz-rescue-<pid>, where what the output directory
 * will not take goes (engine/corpusw.c, recovery/recovery.c). */
void fs_rescue_dir(char *buf, size_t cap, long pid);

/* Writes all of @len bytes to @fd, retrying on EINTR and short writes. */
int fs_write_all(int fd, const void *data, size_t len);
