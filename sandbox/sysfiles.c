/*
 * The system files a runner may read without a policy file, and how the
 * worker opens them for it (see sysfiles.h).
 *
 * Invariants:
 * - Only paths the table names are opened: an exact file by the table's own
 *   string (never the runner's, so a path the runner rewrote after the check
 *   opens nothing else), a directory's files with openat2(RESOLVE_BENEATH |
 *   RESOLVE_NO_MAGICLINKS) from a descriptor opened at start, so ".." and
 *   symlinks that lead out fail (EXDEV) and are refused, unless the path's
 *   last component is a symlink to another path of the table, which is
 *   then opened by these same rules (at most SYSFILES_MAX_LINKS deep).
 * - Opens are read-only (O_RDONLY plus flags that change nothing about
 *   what can be done with the file), but /dev/null's, which may write:
 *   writes to it go nowhere. O_CREAT, O_TRUNC and O_APPEND are accepted
 *   there and not passed on (it exists, and is no regular file).
 * - Below a directory only regular files and directories are opened: the
 *   open itself never blocks (O_NONBLOCK until the type is known), so a FIFO
 *   cannot hang the worker.
 */
#include "sandbox/sysfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Where glibc looks for its converter modules: the multiarch directory on
 * Debian and Ubuntu, lib64 or lib elsewhere. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define SYSFILES_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define SYSFILES_MULTIARCH "aarch64-linux-gnu"
#elif defined(__i386__)
#define SYSFILES_MULTIARCH "i386-linux-gnu"
#endif

#define GCONV_WHY                                                                                  \
        "iconv_open() reads glibc's converter cache (gconv-modules.cache) and maps the module "    \
        "of an encoding a document names (libxml2's encoding declarations)"

const SysFile sysfiles_table[] = {
#ifdef SYSFILES_MULTIARCH
    {"/usr/lib/" SYSFILES_MULTIARCH "/gconv", true, false, GCONV_WHY},
#endif
    {"/usr/lib64/gconv", true, false, GCONV_WHY},
    {"/usr/lib/gconv", true, false, GCONV_WHY},
    {"/usr/lib/locale", true, false,
     "setlocale() and newlocale() read compiled locales (locale-archive, C.utf8)"},
    {"/usr/share/locale", true, false,
     "gettext's message catalogs and locale.alias, read by setlocale() and translated messages"},
    {"/usr/share/zoneinfo", true, false,
     "time zone rules, read by tzset(), localtime() and mktime() for a TZ name"},
    {"/etc/localtime", false, false, "the system's time zone, read by tzset() and localtime()"},
    {"/etc/locale.alias", false, false,
     "locale name aliases, read by setlocale() and newlocale() (Debian links "
     "/usr/share/locale/locale.alias here)"},
    {"/dev/urandom", false, false,
     "random bytes where getrandom() is not used (sqlite's randomness, OpenSSL's fallback)"},
    {"/dev/random", false, false, "random bytes, as /dev/urandom"},
    {"/dev/null", false, true,
     "an empty input and a sink: code that fills descriptors 0-2 (sqlite) or discards output"},
};

const size_t sysfiles_n = ELEMENTSOF(sysfiles_table);

/* Flags that /dev/null's open may carry besides the read-only ones. */
#define SYSFILES_SINK_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND)

/* sysfiles_open_below(): the path leads out of the directory. */
#define SYSFILES_LEFT 3

struct SysFiles {
        int fds[ELEMENTSOF(sysfiles_table)]; /* O_PATH of the directories; -1: none */
};

int sysfiles_new(SysFiles **ret)
{
        SysFiles *sf = calloc(1, sizeof(*sf));

        if (!sf)
                return -ENOMEM;
        for (size_t i = 0; i < sysfiles_n; i++)
                sf->fds[i] = sysfiles_table[i].dir
                                 ? open(sysfiles_table[i].path, O_PATH | O_DIRECTORY | O_CLOEXEC)
                                 : -1;
        *ret = sf;
        return 0;
}

void sysfiles_free(SysFiles *sf)
{
        if (!sf)
                return;
        for (size_t i = 0; i < sysfiles_n; i++)
                if (sf->fds[i] >= 0)
                        close(sf->fds[i]);
        free(sf);
}

/* The entry @path names, and (for a directory) the rest of the path below
 * it ("." for the directory itself). -1 when none does. */
static int sysfiles_find(const char *path, const char **ret_rel)
{
        for (size_t i = 0; i < sysfiles_n; i++) {
                const SysFile *e = &sysfiles_table[i];
                size_t len = strlen(e->path);

                if (strncmp(path, e->path, len) != 0)
                        continue;
                if (path[len] == '\0') {
                        *ret_rel = ".";
                        return (int)i;
                }
                if (e->dir && path[len] == '/') {
                        const char *rel = path + len;

                        while (*rel == '/')
                                rel++;
                        *ret_rel = *rel ? rel : ".";
                        return (int)i;
                }
        }
        return -1;
}

static int sysfiles_open_depth(const SysFiles *sf, const char *path, uint64_t flags,
                               uint64_t read_only_flags, int depth, int *ret_fd,
                               const char **ret_why);

/* How many symlinks between system files one open may follow. */
#define SYSFILES_MAX_LINKS 4

/*
 * @rel below directory entry @i left the directory: when its last
 * component is a symlink (its parent being beneath the directory) that
 * names another system file, that file, opened by the same rules (Debian's
 * /usr/share/locale/locale.alias is a link to /etc/locale.alias). Anything
 * else is refused.
 */
static int sysfiles_follow(const SysFiles *sf, size_t i, const char *rel, uint64_t flags,
                           uint64_t read_only_flags, int depth, int *ret_fd, const char **ret_why)
{
        struct open_how how = {
            .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        char parent[PATH_MAX], link[PATH_MAX], next[PATH_MAX];
        const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
        ssize_t n = -1;
        int pfd, len;

        *ret_why = "leaves the system directory (.. or a symlink to no system file)";
        if (depth >= SYSFILES_MAX_LINKS || strcmp(base, "..") == 0 || strcmp(base, ".") == 0)
                return SYSFILES_REFUSED;
        snprintf(parent, sizeof(parent), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
        pfd = (int)syscall(SYS_openat2, sf->fds[i], parent[0] ? parent : "/", &how, sizeof(how));
        if (pfd >= 0) {
                n = readlinkat(pfd, base, link, sizeof(link) - 1);
                close(pfd);
        }
        if (n <= 0)
                return SYSFILES_REFUSED;
        link[n] = '\0';
        if (link[0] == '/')
                len = snprintf(next, sizeof(next), "%s", link);
        else
                len = snprintf(next, sizeof(next), "%s/%s%s%s", sysfiles_table[i].path,
                               slash ? parent : "", slash ? "/" : "", link);
        if (len < 0 || (size_t)len >= sizeof(next))
                return SYSFILES_REFUSED;
        n = sysfiles_open_depth(sf, next, flags, read_only_flags, depth + 1, ret_fd, ret_why);
        return n == SYSFILES_NOT_OURS ? SYSFILES_REFUSED : (int)n;
}

/* A file below directory entry @i: regular files and directories only. */
static int sysfiles_open_below(const SysFiles *sf, size_t i, const char *rel, int flags,
                               int *ret_fd, const char **ret_why)
{
        struct open_how how = {
            .flags = (uint64_t)(flags | O_NONBLOCK),
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        struct stat st;
        int fd;

        if (sf->fds[i] < 0)
                return -ENOENT;
        fd = (int)syscall(SYS_openat2, sf->fds[i], rel, &how, sizeof(how));
        if (fd < 0) {
                if (errno == EXDEV)
                        return SYSFILES_LEFT;
                if (errno != ENOSYS)
                        return -errno;
                *ret_why = "this kernel has no openat2 to check the path";
                return SYSFILES_REFUSED;
        }
        if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
                close(fd);
                *ret_why = "not a regular file or directory";
                return SYSFILES_REFUSED;
        }
        if (!(flags & O_NONBLOCK))
                (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        *ret_fd = fd;
        return SYSFILES_OPENED;
}

int sysfiles_open(const SysFiles *sf, const char *path, uint64_t flags, uint64_t read_only_flags,
                  int *ret_fd, const char **ret_why)
{
        return sysfiles_open_depth(sf, path, flags, read_only_flags, 0, ret_fd, ret_why);
}

static int sysfiles_open_depth(const SysFiles *sf, const char *path, uint64_t flags,
                               uint64_t read_only_flags, int depth, int *ret_fd,
                               const char **ret_why)
{
        const char *rel = NULL;
        int i, fd, open_flags, r;

        if (!sf || !path)
                return SYSFILES_NOT_OURS;
        i = sysfiles_find(path, &rel);
        if (i < 0)
                return SYSFILES_NOT_OURS;
        const SysFile *e = &sysfiles_table[i];
        uint64_t may = read_only_flags | (e->writable ? SYSFILES_SINK_FLAGS : 0);

        if ((flags & ~may) || (flags & O_ACCMODE) == O_ACCMODE) {
                *ret_why = "not a read-only open of a system file";
                return SYSFILES_REFUSED;
        }
        /* What reaches the kernel: the access mode and the harmless flags
         * the runner asked for, never O_CREAT or O_TRUNC. */
        open_flags = (int)(flags & (read_only_flags | O_ACCMODE)) | O_CLOEXEC | O_NOCTTY;
        if (e->dir) {
                r = sysfiles_open_below(sf, (size_t)i, rel, open_flags, ret_fd, ret_why);
                if (r == SYSFILES_LEFT)
                        r = sysfiles_follow(sf, (size_t)i, rel, flags, read_only_flags, depth,
                                            ret_fd, ret_why);
                return r;
        }
        fd = open(e->path, open_flags);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return SYSFILES_OPENED;
}

cJSON *sysfiles_describe(const SysFiles *sf)
{
        cJSON *a = cJSON_CreateArray();

        for (size_t i = 0; a && sf && i < sysfiles_n; i++) {
                if (sysfiles_table[i].dir && sf->fds[i] < 0)
                        continue;
                cJSON_AddItemToArray(a, cJSON_CreateString(sysfiles_table[i].path));
        }
        return a;
}
