/*
 * Atomic writes: the temporary name embeds the pid and a counter so that
 * two processes (the coordinator and the recovery helper) writing into the
 * same directory never share one, and O_EXCL makes a collision an error
 * rather than a silent overwrite. Readers never see a temporary file under
 * its final name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"

#include "snapfuzz/banned.h"

int fs_write_all(int fd, const void *data, size_t len)
{
        const uint8_t *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int fs_fsync_dir(int dirfd)
{
        return fsync(dirfd) < 0 ? -errno : 0;
}

int fs_write_tmp(int dirfd, const char *name, const void *data, size_t len, bool sync, char *tmp,
                 size_t tmp_size)
{
        /* Atomic: the coordinator's corpus writer thread and its main
         * thread both write files. */
        static unsigned long counter;
        int r, fd;

        if (strchr(name, '/'))
                return -EINVAL;
        r = snprintf(tmp, tmp_size, FS_TMP_PREFIX "%s.%ld.%lu", name, (long)getpid(),
                     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        if (r < 0 || (size_t)r >= tmp_size)
                return -ENAMETOOLONG;

        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        r = fs_write_all(fd, data, len);
        if (r == 0 && sync && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0)
                unlinkat(dirfd, tmp, 0);
        return r;
}

int fs_commit_tmp(int dirfd, const char *tmp, const char *name)
{
        if (renameat(dirfd, tmp, dirfd, name) < 0) {
                int r = -errno;
                unlinkat(dirfd, tmp, 0);
                return r;
        }
        return 0;
}

int fs_write_atomic_file(int dirfd, const char *name, const void *data, size_t len)
{
        char tmp[FS_TMP_NAME_MAX];
        int r = fs_write_tmp(dirfd, name, data, len, true, tmp, sizeof(tmp));
        return r < 0 ? r : fs_commit_tmp(dirfd, tmp, name);
}

int fs_write_atomic(int dirfd, const char *name, const void *data, size_t len)
{
        int r = fs_write_atomic_file(dirfd, name, data, len);
        return r < 0 ? r : fs_fsync_dir(dirfd);
}

int fs_read_file(int dirfd, const char *path, size_t max, uint8_t **ret, size_t *ret_len)
{
        struct stat st;
        uint8_t *buf = NULL;
        size_t len = 0;
        int r, fd;

        /* O_NONBLOCK: a FIFO put where a file belongs (a hostile crash
         * directory) must be refused below, not wait for a writer. */
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        if (!S_ISREG(st.st_mode)) {
                r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
                goto out_close;
        }
        if ((uint64_t)st.st_size > max) {
                r = -EFBIG;
                goto out_close;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out_close;
        }
        while (len < (size_t)st.st_size) {
                ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto out_free;
                }
                if (n == 0)
                        break; /* the file shrank while we read it */
                len += (size_t)n;
        }
        buf[len] = 0;
        *ret = buf;
        *ret_len = len;
        close(fd);
        return 0;

out_free:
        free(buf);
out_close:
        close(fd);
        return r;
}

int fs_mkdir_p(const char *path, mode_t mode)
{
        char buf[4096];
        size_t n = strlen(path);

        if (n == 0 || n >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, n + 1);
        for (size_t i = 1; i <= n; i++) {
                if (buf[i] != '/' && buf[i] != '\0')
                        continue;
                char saved = buf[i];
                buf[i] = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                buf[i] = saved;
        }
        struct stat st;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* @dirfd's entries from the first, through a dup of it: a dup shares the
 * directory's offset with @dirfd and with earlier dups, hence the rewind.
 * NULL when it cannot be read. */
static DIR *fs_entries(int dirfd)
{
        int fd = dup(dirfd);
        if (fd < 0)
                return NULL;
        DIR *d = fdopendir(fd);
        if (!d) {
                close(fd);
                return NULL;
        }
        rewinddir(d);
        return d;
}

void fs_sweep_tmp(int dirfd)
{
        DIR *d = fs_entries(dirfd);
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, FS_TMP_PREFIX, strlen(FS_TMP_PREFIX)) == 0)
                        unlinkat(dirfd, de->d_name, 0);
        }
        closedir(d);
}

void fs_sweep_tmp_tree(int dirfd)
{
        fs_sweep_tmp(dirfd);
        DIR *d = fs_entries(dirfd);
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                int sub =
                    openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                fs_sweep_tmp(sub);
                close(sub);
        }
        closedir(d);
}

/* The pid written in a lock file, or 0. */
static pid_t lock_holder(int fd)
{
        char buf[32];
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        long pid = strtol(buf, NULL, 10);
        return pid > 0 && pid < INT32_MAX ? (pid_t)pid : 0;
}

int fs_lock_dir(int dirfd, const char *name, int *ret_fd, pid_t *ret_holder)
{
        int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = errno == EWOULDBLOCK ? -EBUSY : -errno;
                *ret_holder = lock_holder(fd);
                close(fd);
                return r;
        }
        char pid[24];
        int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
                int r = -errno;
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

int fs_lock_probe(int dirfd, const char *name, pid_t *ret_holder)
{
        int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        int held = 0;
        if (flock(fd, LOCK_SH | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK) {
                        int r = -errno;
                        close(fd);
                        return r;
                }
                held = 1;
                *ret_holder = lock_holder(fd);
        }
        close(fd);
        return held;
}

void fs_rescue_dir(char *buf, size_t cap, long pid)
{
        const char *tmp = getenv("TMPDIR");
        snprintf(buf, cap, "%s/snapfuzz-rescue-%ld", tmp && *tmp ? tmp : "/tmp", pid);
}
