/*
 * Seccomp notifications, worker side (see supervisor.h for the protocol).
 *
 * Invariants:
 * - The runner's filter is the only source of notifications, and the
 *   listener is taken before the target runs (sandbox.c hands it over), so
 *   every notification comes from the target or its threads.
 * - Nothing a notification carries is trusted: paths are read from the
 *   runner's memory and checked, but the kernel never re-reads them; the
 *   worker opens the file and installs the descriptor. The pointer is read
 *   once, and the request is checked to be still pending after the read
 *   (SECCOMP_IOCTL_NOTIF_ID_VALID), so a recycled pid cannot answer.
 * - CONTINUE is used only in log mode, which confines nothing by design.
 * - The worker never blocks on a runner: the listener is read only when
 *   poll() says a notification is there.
 */
#include "sandbox/supervisor.h"
#include "sandbox/internal.h"
#include "sandbox/sysfiles.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* The kernel's O_LARGEFILE, which glibc defines as 0 on 64-bit targets but
 * a raw open may still carry. */
#if defined(__x86_64__)
#define KERNEL_O_LARGEFILE 0100000
#elif defined(__aarch64__)
#define KERNEL_O_LARGEFILE 0400000
#else
#define KERNEL_O_LARGEFILE 0
#endif

/* Flags a read-only open below a policy directory may carry. */
#define OPEN_FLAGS_ALLOWED                                                                         \
        (O_CLOEXEC | O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_NOATIME |                \
         KERNEL_O_LARGEFILE)

struct SandboxSupervisor {
        Sandbox *sandbox;
        int ctl_fd;   /* our end of the socket, until the listener arrives */
        int listener; /* the runner's notification listener, or -1 */
        pid_t runner;
        int pidfd;
        struct seccomp_notif *req;
        struct seccomp_notif_resp *resp;
        int nr_open, nr_openat, nr_clone;
        bool leak_check; /* this runner ends with a LeakSanitizer check */
        /* The last callback dispatch was given: quiet refusals not yet
         * counted go to it when the runner ends. */
        SandboxEventFn fn;
        void *userdata;
};

int sandbox_supervisor_new(SandboxSupervisor **ret, Sandbox *s)
{
        SandboxSupervisor *sup;
        int sv[2];

        *ret = NULL;
        if (!s || s->mode == SANDBOX_OFF)
                return 0;

        sup = calloc(1, sizeof(*sup));
        if (!sup)
                return -ENOMEM;
        sup->sandbox = s;
        sup->ctl_fd = sup->listener = sup->pidfd = -1;
        sup->runner = -1;
        sup->nr_open = seccomp_syscall_resolve_name("open");
        sup->nr_openat = seccomp_syscall_resolve_name("openat");
        sup->nr_clone = seccomp_syscall_resolve_name("clone");
        if (seccomp_notify_alloc(&sup->req, &sup->resp) < 0) {
                free(sup);
                return -ENOMEM;
        }
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                int r = -errno;

                sandbox_supervisor_free(sup);
                return r;
        }
        sup->ctl_fd = sv[0];
        s->last_nr = -1;
        s->last_has_path = false;
        if (s->child_fd >= 0)
                close(s->child_fd);
        s->child_fd = sv[1];
        *ret = sup;
        return 0;
}

void sandbox_supervisor_started(SandboxSupervisor *sup, pid_t runner, int pidfd)
{
        if (!sup)
                return;
        sup->runner = runner;
        sup->pidfd = pidfd;
        /* The runner has its copy; ours would keep the socket open. */
        if (sup->sandbox->child_fd >= 0) {
                close(sup->sandbox->child_fd);
                sup->sandbox->child_fd = -1;
        }
}

int sandbox_supervisor_fd(const SandboxSupervisor *sup)
{
        if (!sup)
                return -1;
        return sup->listener >= 0 ? sup->listener : sup->ctl_fd;
}

static void send_quiet_counts(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata);

void sandbox_supervisor_free(SandboxSupervisor *sup)
{
        if (!sup)
                return;
        send_quiet_counts(sup, sup->fn, sup->userdata);
        if (sup->ctl_fd >= 0)
                close(sup->ctl_fd);
        if (sup->listener >= 0)
                close(sup->listener);
        if (sup->sandbox && sup->sandbox->child_fd >= 0) {
                close(sup->sandbox->child_fd);
                sup->sandbox->child_fd = -1;
        }
        seccomp_notify_free(sup->req, sup->resp);
        free(sup);
}

/* Receives the listener the runner sends (sandbox.c). */
static int take_listener(SandboxSupervisor *sup)
{
        union {
                struct cmsghdr header;
                char space[CMSG_SPACE(sizeof(int))];
        } control;
        char byte;
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {
            .msg_iov = &iov,
            .msg_iovlen = 1,
            .msg_control = control.space,
            .msg_controllen = sizeof(control.space),
        };
        struct cmsghdr *cmsg;
        ssize_t n;
        int fd = -1;

        do
                n = recvmsg(sup->ctl_fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
        while (n < 0 && errno == EINTR);
        if (n < 0 && errno == EAGAIN)
                return 0;
        cmsg = n == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
        if (cmsg && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
            cmsg->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
        /* One message per runner; end of file: it ended before installing
         * its filter. */
        close(sup->ctl_fd);
        sup->ctl_fd = -1;
        if (fd < 0)
                return n == 1 ? -EPROTO : 0;
        sup->listener = fd;
        return 0;
}

/* Reads a NUL-terminated string from the runner's memory, a page at a time
 * (a read that crosses into an unmapped page fails as a whole). */
static int read_remote_string(pid_t pid, uint64_t addr, char *buf, size_t cap)
{
        size_t got = 0;

        if (!addr)
                return -EFAULT;
        while (got + 1 < cap) {
                uint64_t at = addr + got;
                size_t chunk = 4096 - (size_t)(at % 4096);
                struct iovec local, remote;
                ssize_t n;

                if (chunk > cap - 1 - got)
                        chunk = cap - 1 - got;
                local = (struct iovec){.iov_base = buf + got, .iov_len = chunk};
                remote = (struct iovec){.iov_base = (void *)(uintptr_t)at, .iov_len = chunk};
                n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                if (n <= 0)
                        return -EFAULT;
                if (memchr(buf + got, '\0', (size_t)n))
                        return 0;
                got += (size_t)n;
        }
        buf[cap - 1] = '\0';
        return -ENAMETOOLONG;
}

/* The argument that holds a path, for the syscalls that take one. */
static int path_arg(int nr)
{
        static const struct {
                const char *name;
                int arg;
        } table[] = {
            {"open", 0},     {"openat", 1},     {"openat2", 1},   {"creat", 0},
            {"execve", 0},   {"execveat", 1},   {"stat", 0},      {"lstat", 0},
            {"statx", 1},    {"access", 0},     {"faccessat", 1}, {"faccessat2", 1},
            {"readlink", 0}, {"readlinkat", 1}, {"mkdir", 0},     {"mkdirat", 1},
            {"unlink", 0},   {"unlinkat", 1},   {"rmdir", 0},     {"chdir", 0},
            {"truncate", 0}, {"rename", 0},     {"renameat", 1},  {"renameat2", 1},
            {"link", 0},     {"linkat", 1},     {"symlink", 1},   {"symlinkat", 2},
            {"chmod", 0},    {"fchmodat", 1},   {"chown", 0},     {"fchownat", 1},
            {"mknod", 0},    {"mknodat", 1},    {"utimensat", 1}, {"chroot", 0},
            {"mount", 1},    {"umount2", 0},    {"uselib", 0},    {"inotify_add_watch", 1},
        };
        const char *name = sandbox_syscall_name(nr);

        if (!name)
                return -1;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcmp(table[i].name, name) == 0)
                        return table[i].arg;
        return -1;
}

static void emit(SandboxSupervisor *sup, const char *what, int nr, const char *path,
                 const char *why, SandboxEventFn fn, void *userdata)
{
        const struct seccomp_data *d = &sup->req->data;
        const char *name = sandbox_syscall_name(nr);
        const char *group = sandbox_syscall_group(nr);
        cJSON *e = cJSON_CreateObject(), *args;
        char hex[24];

        if (!e || !fn) {
                cJSON_Delete(e);
                return;
        }
        cJSON_AddStringToObject(e, "event", what);
        cJSON_AddStringToObject(e, "syscall", name ? name : "unknown");
        cJSON_AddNumberToObject(e, "nr", nr);
        args = cJSON_AddArrayToObject(e, "args");
        for (int i = 0; args && i < 6; i++) {
                snprintf(hex, sizeof(hex), "0x%" PRIx64, (uint64_t)d->args[i]);
                cJSON_AddItemToArray(args, cJSON_CreateString(hex));
        }
        if (path)
                cJSON_AddStringToObject(e, "path", path);
        if (group)
                cJSON_AddStringToObject(e, "group", group);
        if (why)
                cJSON_AddStringToObject(e, "why", why);
        fn(userdata, e);
        cJSON_Delete(e);
}

static void respond(SandboxSupervisor *sup, int error, int64_t val, uint32_t flags)
{
        memset(sup->resp, 0, sizeof(*sup->resp));
        sup->resp->id = sup->req->id;
        sup->resp->error = error;
        sup->resp->val = val;
        sup->resp->flags = flags;
        /* ENOENT: the call was interrupted or the runner died meanwhile. */
        (void)ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_SEND, sup->resp);
}

/* Puts our descriptor @fd into the runner as the result of its open, and
 * closes ours. */
static void install(SandboxSupervisor *sup, int fd, uint64_t flags)
{
        struct seccomp_notif_addfd addfd = {
            .id = sup->req->id,
            .flags = SECCOMP_ADDFD_FLAG_SEND,
            .srcfd = (uint32_t)fd,
            .newfd_flags = (uint32_t)(flags & O_CLOEXEC),
        };
        int r = ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
        if (r < 0 && errno == EINVAL) {
                /* Before Linux 5.14: install, then answer with the number. */
                addfd.flags = 0;
                r = ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
                if (r >= 0)
                        respond(sup, 0, r, 0);
        }
        if (r < 0 && errno != ENOENT)
                respond(sup, -EMFILE, 0, 0);
        close(fd);
}

void sandbox_supervisor_allow_leak_check(SandboxSupervisor *sup)
{
        if (sup)
                sup->leak_check = true;
}

/* The clone LeakSanitizer's stop-the-world makes for its tracer: a task
 * that shares the runner's memory, files and root, and that nobody traces. */
#define LEAK_TRACER_CLONE_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED)

/* The files a sanitizer reads, which the worker opens for the runner: its
 * own /proc entries, so /proc/<runner>/ on the worker's side. A report
 * reads /proc/self/maps; a leak check's tracer lists /proc/<runner>/task
 * (the tracer shares the runner's memory, so its "self" is the runner's).
 * Returns true and the worker's path in @real. */
static bool sanitizer_file(const SandboxSupervisor *sup, const char *path, char *real, size_t cap)
{
        char task[32];

        if (!sup->sandbox->policy.sanitizer)
                return false;
        if (strcmp(path, "/proc/self/maps") == 0) {
                snprintf(real, cap, "/proc/%d/maps", (int)sup->runner);
                return true;
        }
        if (!sup->leak_check)
                return false;
        /* /proc/<runner>/task[/], or /proc/<runner>/task/<tid>/status. */
        int n = snprintf(task, sizeof(task), "/proc/%d/task", (int)sup->runner);
        if (strncmp(path, task, (size_t)n) != 0)
                return false;
        const char *rest = path + n;
        if (strcmp(rest, "") == 0 || strcmp(rest, "/") == 0) {
                snprintf(real, cap, "%s", task);
                return true;
        }
        size_t digits = rest[0] == '/' ? strspn(rest + 1, "0123456789") : 0;
        if (digits > 0 && digits < 12 && strcmp(rest + 1 + digits, "/status") == 0) {
                snprintf(real, cap, "%s", path);
                return true;
        }
        return false;
}

static void open_sanitizer_file(SandboxSupervisor *sup, const char *path, uint64_t flags)
{
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC | (int)(flags & O_DIRECTORY));
        if (fd < 0) {
                respond(sup, -errno, 0, 0);
                return;
        }
        install(sup, fd, flags);
}

static void refuse(SandboxSupervisor *sup, int nr, int error, const char *path, const char *why,
                   SandboxEventFn fn, void *userdata);

/*
 * An open or openat of one of the system files (sysfiles.h): opened here
 * and installed in the runner, or refused by name when it is a system
 * file's path but not an allowed open of it (a write, a way out of the
 * directory). Returns false when the path is none of them (or cannot be
 * read): the caller goes on. Reads the path once; what is opened is
 * decided on that copy.
 */
static bool open_system_file(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        const struct seccomp_data *d = &sup->req->data;
        bool is_openat = d->nr == sup->nr_openat;
        uint64_t flags = (is_openat ? d->args[2] : d->args[1]) & ~(uint64_t)KERNEL_O_LARGEFILE;
        char path[PATH_MAX];
        const char *why = NULL;
        int fd = -1, r;

        if (!sup->sandbox->sysfiles ||
            read_remote_string(sup->req->pid, is_openat ? d->args[1] : d->args[0], path,
                               sizeof(path)) < 0)
                return false;
        /* openat's directory descriptor does not matter: the path is
         * absolute, or it is none of the system files. */
        r = sysfiles_open(sup->sandbox->sysfiles, path, flags,
                          (uint64_t)OPEN_FLAGS_ALLOWED & ~(uint64_t)KERNEL_O_LARGEFILE, &fd, &why);
        if (r == SYSFILES_NOT_OURS)
                return false;
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &sup->req->id) < 0) {
                if (fd >= 0)
                        close(fd);
                return true; /* the call is gone */
        }
        if (r == SYSFILES_OPENED)
                install(sup, fd, flags);
        else if (r == SYSFILES_REFUSED)
                refuse(sup, (int)d->nr, -EACCES, path, why, fn, userdata);
        else
                respond(sup, r, 0, 0);
        return true;
}

/* Log mode: report each distinct syscall once per worker, then let it run. */
static void handle_log(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        const struct seccomp_data *d = &sup->req->data;
        int nr = d->nr;

        /* The system files are read in the worker, as in strict mode (the
         * runner's root is empty): allowed, so not reported. */
        if ((nr == sup->nr_open || nr == sup->nr_openat) && open_system_file(sup, fn, userdata))
                return;

        /* A sanitizer's own reading of /proc/self/maps is not the target's
         * doing, and the runner's root has no /proc: as in strict mode. */
        if (sup->sandbox->policy.sanitizer && (nr == sup->nr_open || nr == sup->nr_openat)) {
                bool is_openat = nr == sup->nr_openat;
                uint64_t flags = is_openat ? d->args[2] : d->args[1];
                char path[PATH_MAX];

                char real[96];

                if (read_remote_string(sup->req->pid, is_openat ? d->args[1] : d->args[0], path,
                                       sizeof(path)) == 0 &&
                    sanitizer_file(sup, path, real, sizeof(real)) &&
                    !(flags & ~(uint64_t)OPEN_FLAGS_ALLOWED)) {
                        open_sanitizer_file(sup, real, flags);
                        return;
                }
        }

        if (nr >= 0 && nr < SANDBOX_NR_LIMIT && !(sup->sandbox->logged[nr / 8] & (1u << nr % 8))) {
                char path[PATH_MAX];
                int arg = path_arg(nr);
                bool have_path = false;

                sup->sandbox->logged[nr / 8] |= (uint8_t)(1u << nr % 8);
                if (arg >= 0)
                        have_path = read_remote_string(sup->req->pid, d->args[arg], path,
                                                       sizeof(path)) == 0;
                emit(sup, "log", nr, have_path ? path : NULL, NULL, fn, userdata);
        }
        respond(sup, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

/* How often a worker sends the counts of its quiet refusals. */
#define SUPERVISOR_QUIET_EVERY_MS 250

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The quiet refusals counted since the last time: one "quiet" event per
 * class. */
static void send_quiet_counts(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        Sandbox *s = sup->sandbox;

        if (!s || !fn)
                return;
        s->quiet_sent_ms = now_ms();
        for (size_t i = 0; i < s->n_quiet; i++) {
                cJSON *e;

                if (!s->quiet_pending[i])
                        continue;
                e = cJSON_CreateObject();
                if (!e)
                        return;
                cJSON_AddStringToObject(e, "event", "quiet");
                cJSON_AddStringToObject(e, "key", s->quiet[i].key);
                cJSON_AddNumberToObject(e, "count", (double)s->quiet_pending[i]);
                fn(userdata, e);
                cJSON_Delete(e);
                s->quiet_pending[i] = 0;
        }
}

/*
 * A refusal of a class already reported (sandbox_quiet): the call fails
 * with @error and is counted; no SIGSYS, the runner goes on. Returns
 * whether it was one.
 */
static bool refuse_quietly(SandboxSupervisor *sup, int nr, int error, const char *path,
                           SandboxEventFn fn, void *userdata)
{
        Sandbox *s = sup->sandbox;
        uint64_t args[6];

        for (int i = 0; i < 6; i++)
                args[i] = sup->req->data.args[i];
        for (size_t i = 0; i < s->n_quiet; i++) {
                if (!refusal_matches(&s->quiet[i], nr, args, path))
                        continue;
                respond(sup, error, 0, 0);
                s->quiet_pending[i]++;
                if (now_ms() - s->quiet_sent_ms >= SUPERVISOR_QUIET_EVERY_MS)
                        send_quiet_counts(sup, fn, userdata);
                return true;
        }
        return false;
}

/* How long a refused runner has to die of its SIGSYS: it may have SIGSYS
 * blocked for a moment (posix_spawn restores its mask right after clone
 * fails). */
#define SUPERVISOR_DEATH_GRACE_MS 250

/*
 * A refused call: SIGSYS to the calling thread, carrying the syscall number
 * (the runner's handler records it, then dies by SIGSYS, as for a trap),
 * and an error for the call itself. A thread that blocks SIGSYS gets it
 * when it unblocks; one that keeps it blocked would go on unreported, so a
 * runner still alive after a grace period is killed outright.
 */
static void refuse(SandboxSupervisor *sup, int nr, int error, const char *path, const char *why,
                   SandboxEventFn fn, void *userdata)
{
        struct pollfd p = {.fd = sup->pidfd, .events = POLLIN};
        Sandbox *s = sup->sandbox;
        siginfo_t si;

        if (refuse_quietly(sup, nr, error, path, fn, userdata))
                return;
        /* What the runner's death report describes (sandbox_describe_refusal). */
        s->last_nr = nr;
        s->last_has_path = path != NULL;
        if (path)
                snprintf(s->last_path, sizeof(s->last_path), "%s", path);
        memset(&si, 0, sizeof(si));
        si.si_signo = SIGSYS;
        si.si_code = SI_QUEUE;
        si.si_pid = getpid();
        si.si_uid = getuid();
        si.si_value.sival_int = nr;
        (void)syscall(SYS_rt_tgsigqueueinfo, sup->runner, (pid_t)sup->req->pid, SIGSYS, &si);
        respond(sup, error, 0, 0);
        if (path)
                emit(sup, "refused", nr, path, why, fn, userdata);
        if (sup->pidfd < 0 || poll(&p, 1, SUPERVISOR_DEATH_GRACE_MS) <= 0)
                kill(sup->runner, SIGKILL);
}

/* Strict mode with policy directories or a sanitizer: a read-only open the
 * filter sent here. */
static void handle_open(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        const struct seccomp_data *d = &sup->req->data;
        const Sandbox *s = sup->sandbox;
        bool is_openat = d->nr == sup->nr_openat;
        uint64_t flags = is_openat ? d->args[2] : d->args[1];
        uint64_t ptr = is_openat ? d->args[1] : d->args[0];
        char path[PATH_MAX];
        const char *rel = NULL;
        size_t dir = 0;
        int fd, r;

        if (open_system_file(sup, fn, userdata))
                return;
        r = read_remote_string(sup->req->pid, ptr, path, sizeof(path));
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &sup->req->id) < 0)
                return; /* the call is gone (interrupted, or the runner died) */
        if (r < 0) {
                respond(sup, r, 0, 0);
                return;
        }
        if (flags & ~(uint64_t)OPEN_FLAGS_ALLOWED) {
                refuse(sup, d->nr, -EACCES, path, "not a read-only open", fn, userdata);
                return;
        }
        char real[96];
        if (sanitizer_file(sup, path, real, sizeof(real))) {
                open_sanitizer_file(sup, real, flags);
                return;
        }
        if (path[0] != '/') {
                refuse(sup, d->nr, -EACCES, path,
                       "a relative path (the system files and a policy's directories are "
                       "reached by absolute paths)",
                       fn, userdata);
                return;
        }
        for (dir = 0; dir < s->policy.n_dirs; dir++) {
                size_t len = strlen(s->policy.dirs[dir]);

                if (strncmp(path, s->policy.dirs[dir], len) == 0 &&
                    (path[len] == '/' || path[len] == '\0' || len == 1)) {
                        rel = path + len;
                        break;
                }
        }
        if (!rel || !s->dir_fds) {
                refuse(sup, d->nr, -EACCES, path,
                       s->policy.n_dirs ? "outside the system files and the policy's directories"
                                        : "not one of the system files a runner may read",
                       fn, userdata);
                return;
        }
        while (*rel == '/')
                rel++;
        if (!*rel)
                rel = ".";

        /* Below the directory, whatever the path says: ".." and symlinks
         * that lead out fail with EXDEV. */
        struct open_how how = {
            .flags =
                (flags & (uint64_t)OPEN_FLAGS_ALLOWED & ~(uint64_t)KERNEL_O_LARGEFILE) | O_CLOEXEC,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
        };
        fd = (int)syscall(SYS_openat2, s->dir_fds[dir], rel, &how, sizeof(how));
        if (fd < 0) {
                if (errno == EXDEV || errno == ENOSYS)
                        refuse(sup, d->nr, -EACCES, path,
                               errno == EXDEV ? "leaves the policy's directory (.. or a symlink)"
                                              : "this kernel has no openat2 to check the path",
                               fn, userdata);
                else
                        respond(sup, -errno, 0, 0);
                return;
        }

        install(sup, fd, flags);
}

/* Strict mode: a syscall the policy has the worker refuse (process
 * creation). */
static void handle_refuse(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        const struct seccomp_data *d = &sup->req->data;
        int nr = d->nr, arg = path_arg(nr);
        char path[PATH_MAX];
        bool have_path = false;

        if (arg >= 0)
                have_path =
                    read_remote_string(sup->req->pid, d->args[arg], path, sizeof(path)) == 0;
        refuse(sup, nr, -EPERM, have_path ? path : NULL, sandbox_syscall_group(nr), fn, userdata);
}

int sandbox_supervisor_dispatch(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata)
{
        struct pollfd p;

        if (!sup)
                return 0;
        sup->fn = fn;
        sup->userdata = userdata;
        if (sup->listener < 0)
                return sup->ctl_fd >= 0 ? take_listener(sup) : 0;

        /* RECV would wait for the next notification; look first. A hang-up
         * alone means every task using the filter is gone. */
        p = (struct pollfd){.fd = sup->listener, .events = POLLIN};
        if (poll(&p, 1, 0) <= 0)
                return 0;
        if (!(p.revents & POLLIN)) {
                close(sup->listener);
                sup->listener = -1;
                return 0;
        }
        memset(sup->req, 0, sizeof(*sup->req));
        if (ioctl(sup->listener, SECCOMP_IOCTL_NOTIF_RECV, sup->req) < 0)
                return 0; /* ENOENT: interrupted before we got to it */

        int nr = (int)sup->req->data.nr;
        /* A leak check's tracer: the one clone a runner may make. Its flags
         * are a register value, so what is checked is what runs. */
        if (sup->leak_check && nr == sup->nr_clone &&
            sup->req->data.args[0] == LEAK_TRACER_CLONE_FLAGS) {
                respond(sup, 0, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
                return 0;
        }
        if (sup->sandbox->mode == SANDBOX_LOG)
                handle_log(sup, fn, userdata);
        else if ((nr == sup->nr_openat || nr == sup->nr_open) &&
                 policy_opens_notify(&sup->sandbox->policy))
                handle_open(sup, fn, userdata);
        else
                handle_refuse(sup, fn, userdata);
        return 0;
}
