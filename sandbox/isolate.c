/*
 * What surrounds the filter. In the worker, once (sandbox_prepare): new
 * user, network, IPC and mount namespaces where the kernel allows them
 * without privileges, and an empty read-only tmpfs that runners take as
 * their root; the policy file's directories, opened for the supervisor; a
 * look for a sanitizer runtime, which decides the address-space limit. In
 * each runner, first thing after fork (sandbox_isolate): its own process
 * group, the empty root, no capabilities, and no descriptors but its own.
 *
 * Why the worker and not each runner enters the namespaces: a network
 * namespace costs about 2 ms to create and more to tear down, and a runner
 * is forked several times a second. Runners inherit the worker's
 * namespaces; the worker itself needs neither the network nor IPC after the
 * target is initialized, and keeps its view of the host's files (it reads
 * /proc for supervision and opens the policy's files).
 *
 * Without user namespaces (disabled by sysctl, or a worker that is already
 * multithreaded), runners keep the host's network, IPC and files in view;
 * the filter, rlimits, no_new_privs, closed descriptors and the process
 * group still apply, and the filter alone keeps them from opening files or
 * sockets.
 */
#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#ifndef SYS_fsopen
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#define FSCONFIG_SET_STRING 1
#define FSCONFIG_CMD_CREATE 6
#define FSMOUNT_CLOEXEC 0x00000001
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif

/* The address space a runner may map when the RSS limit is @mb: room for
 * the snapshot's mappings, allocator slack and thread stacks. */
#define ISOLATE_AS_FLOOR (UINT64_C(8) << 30)

/* Runtimes that reserve terabytes of shadow memory up front. */
static const char *const shadow_runtimes[] = {
    "libclang_rt.asan", "libasan.so",   "libclang_rt.msan",   "libclang_rt.tsan",
    "libtsan.so",       "libhwasan.so", "libclang_rt.hwasan", "libclang_rt.dfsan",
};

static int find_shadow_runtime(struct dl_phdr_info *info, size_t size, void *found)
{
        (void)size;
        if (!info->dlpi_name)
                return 0;
        for (size_t i = 0; i < sizeof(shadow_runtimes) / sizeof(shadow_runtimes[0]); i++)
                if (strstr(info->dlpi_name, shadow_runtimes[i])) {
                        *(bool *)found = true;
                        return 1;
                }
        return 0;
}

static void write_file(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void)!write(fd, text, strlen(text));
        close(fd);
}

/* A detached, empty, read-only tmpfs: nothing to see, nothing to write,
 * nothing to execute. -1 when the kernel has no new mount API (< 5.2). */
static int make_empty_root(void)
{
        int fs, mnt;

        fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -1;
        if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0555", 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
            syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
                close(fs);
                return -1;
        }
        mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                           MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                               MOUNT_ATTR_NOEXEC);
        close(fs);
        return mnt;
}

/*
 * New user, mount, network and IPC namespaces for the calling (worker)
 * process. The user namespace maps the worker's own ids to themselves, so
 * getuid() and file ownership look as before; the worker has capabilities
 * only inside it. A mount namespace owned by it may mount the empty root.
 */
static bool enter_namespaces(int *ret_root)
{
        char map[64];
        uid_t uid = geteuid();
        gid_t gid = getegid();
        int pdeathsig = 0;

        (void)prctl(PR_GET_PDEATHSIG, &pdeathsig);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) < 0)
                return false;
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        write_file("/proc/self/uid_map", map);
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        write_file("/proc/self/gid_map", map);
        /* A change of credentials may clear the parent-death signal; the
         * worker must still die with whoever started it. */
        if (pdeathsig)
                (void)prctl(PR_SET_PDEATHSIG, pdeathsig);
        /* Nothing mounted here propagates back to the host. */
        (void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
        *ret_root = make_empty_root();
        return true;
}

int sandbox_prepare(Sandbox *s)
{
        if (!s)
                return -EINVAL;
        if (s->prepared)
                return 0;
        s->prepared = true;

        (void)dl_iterate_phdr(find_shadow_runtime, &s->sanitizer);
        if (s->sanitizer && s->mode != SANDBOX_OFF) {
                /* Its reports read /proc/self/maps: through the worker. */
                int r;

                s->policy.sanitizer = true;
                r = sandbox_compile_programs(s);
                if (r < 0)
                        return r;
        }
        if (!s->sanitizer && s->memory_limit_mb) {
                uint64_t as = (uint64_t)s->memory_limit_mb << 22; /* 4 x the RSS limit */

                s->address_space_limit = as > ISOLATE_AS_FLOOR ? as : ISOLATE_AS_FLOOR;
        }

        if (s->policy.n_dirs) {
                s->dir_fds = malloc(s->policy.n_dirs * sizeof(int));
                if (!s->dir_fds)
                        return -ENOMEM;
                for (size_t i = 0; i < s->policy.n_dirs; i++)
                        s->dir_fds[i] = -1;
                for (size_t i = 0; i < s->policy.n_dirs; i++) {
                        s->dir_fds[i] = open(s->policy.dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
                        if (s->dir_fds[i] < 0)
                                return -errno;
                }
        }

        /* The system files every runner may read (sysfiles.h). */
        if (s->policy.system_files) {
                int r = sysfiles_new(&s->sysfiles);

                if (r < 0)
                        return r;
        }

        if (s->mode != SANDBOX_OFF && !s->no_namespaces)
                s->namespaces = enter_namespaces(&s->root_fd);
        return 0;
}

/* Closes every descriptor from @from up to @to (inclusive). */
static void close_range_of(unsigned from, unsigned to)
{
        if (from > to)
                return;
#ifdef SYS_close_range
        if (syscall(SYS_close_range, from, to, 0) == 0)
                return;
#endif
        struct rlimit rl;
        unsigned last = to;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            rl.rlim_cur - 1 < last)
                last = (unsigned)(rl.rlim_cur - 1);
        for (unsigned fd = from; fd <= last; fd++)
                close((int)fd);
}

int sandbox_isolate(const Sandbox *s, int keep_fd)
{
        if (!s)
                return -EINVAL;

        /* The worker kills this group when the runner ends; the filter
         * keeps the target from leaving it. */
        if (setpgid(0, 0) < 0 && errno != EPERM)
                return -errno;

        if (s->root_fd >= 0) {
                if (fchdir(s->root_fd) < 0 || chroot(".") < 0)
                        return -errno;
        }
        if (s->namespaces) {
                /* Inherited from the worker, which has every capability in
                 * its user namespace; the runner needs none. */
                struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3};
                struct __user_cap_data_struct data[2];

                memset(data, 0, sizeof(data));
                if (syscall(SYS_capset, &header, data) < 0)
                        return -errno;
        }

        /* Keep 1 and 2 (the output pipe), the supervisor's socket and
         * keep_fd: close what lies between them, in order. */
        int keep[2] = {s->child_fd, keep_fd};
        if (keep[0] > keep[1]) {
                keep[0] = keep_fd;
                keep[1] = s->child_fd;
        }
        close_range_of(0, 0);
        unsigned from = 3;
        for (int i = 0; i < 2; i++) {
                if (keep[i] < (int)from)
                        continue;
                if ((unsigned)keep[i] > from)
                        close_range_of(from, (unsigned)keep[i] - 1);
                from = (unsigned)keep[i] + 1;
        }
        close_range_of(from, ~0u);
        return 0;
}
