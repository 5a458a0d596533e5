/*
 * The runner's confinement. sandbox_new() runs once in the worker: it
 * compiles the policy table (sandbox/policy.c) with libseccomp and exports
 * the resulting classic-BPF program into a buffer the Sandbox owns.
 * sandbox_apply() runs in every runner right after fork(): it lowers two
 * rlimits, sets no_new_privs and hands the ready-made program to the
 * kernel.
 *
 * Invariants:
 * - sandbox_apply() allocates nothing, takes no locks and calls only
 *   async-signal-safe functions, so it is safe in the child of a fork()
 *   even if the parent had threads; it only reads the Sandbox.
 * - A Sandbox in SANDBOX_STRICT mode always holds a complete, non-empty
 *   program; one in SANDBOX_OFF mode holds none.
 * - sandbox_syscall_name() strings live until the process exits (a small
 *   cache, filled at most once per syscall number); nothing leaks per call.
 */
#include "sandbox/sandbox.h"
#include "sandbox/policy.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* Syscall numbers up to this bound get a cached name. Native numbers on
 * every architecture snapfuzz runs on are far below it. */
#define SANDBOX_NAME_CACHE_SIZE 1024

struct Sandbox {
        SandboxMode mode;
        /* The program handed to the kernel; .filter is owned by the
         * Sandbox, .len == 0 in SANDBOX_OFF mode. */
        struct sock_fprog prog;
};

/* Reads the whole of @fd (from offset 0) into a new buffer. */
static int sandbox_read_fd(int fd, void **ret_buf, size_t *ret_size)
{
        struct stat st;
        size_t done = 0;
        char *buf;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0)
                return -ENODATA;

        buf = malloc((size_t)st.st_size);
        if (!buf)
                return -ENOMEM;

        while (done < (size_t)st.st_size) {
                ssize_t n = pread(fd, buf + done, (size_t)st.st_size - done, (off_t)done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        goto free_buf;
                }
                if (n == 0) {
                        r = -EIO;
                        goto free_buf;
                }
                done += (size_t)n;
        }

        *ret_buf = buf;
        *ret_size = done;
        return 0;

free_buf:
        free(buf);
        return r;
}

/* Compiles @policy and exports it as a classic-BPF program into @ret. */
static int sandbox_compile(const Policy *policy, struct sock_fprog *ret)
{
        scmp_filter_ctx ctx;
        size_t size = 0;
        void *buf = NULL;
        int fd, r;

        r = policy_compile(policy, &ctx);
        if (r < 0)
                return r;

        /* libseccomp 2.5 exports only to a file descriptor. */
        fd = memfd_create("snapfuzz-seccomp", MFD_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto release_ctx;
        }

        r = seccomp_export_bpf(ctx, fd);
        if (r < 0)
                goto close_memfd;

        r = sandbox_read_fd(fd, &buf, &size);
        if (r < 0)
                goto close_memfd;

        if (size % sizeof(struct sock_filter) != 0 ||
            size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
                r = -E2BIG;
                goto free_buf;
        }

        ret->filter = buf;
        ret->len = (unsigned short)(size / sizeof(struct sock_filter));
        close(fd);
        seccomp_release(ctx);
        return 0;

free_buf:
        free(buf);
close_memfd:
        close(fd);
release_ctx:
        seccomp_release(ctx);
        return r;
}

int sandbox_new(Sandbox **ret, SandboxMode mode)
{
        Sandbox *s;
        int r;

        if (!ret || (mode != SANDBOX_STRICT && mode != SANDBOX_OFF))
                return -EINVAL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = mode;

        if (mode == SANDBOX_STRICT) {
                r = sandbox_compile(&policy_strict, &s->prog);
                if (r < 0)
                        goto free_sandbox;
        }

        *ret = s;
        return 0;

free_sandbox:
        free(s);
        return r;
}

void sandbox_free(Sandbox *s)
{
        if (!s)
                return;
        free(s->prog.filter);
        free(s);
}

/*
 * Installs @prog on the calling thread. SECCOMP_FILTER_FLAG_SPEC_ALLOW keeps
 * the kernel from forcing the Speculative Store Bypass mitigation on every
 * seccomp'd task (the default before Linux 5.16, and a real slowdown): the
 * runner holds no secret the target should not read, so it buys nothing.
 * Older kernels lack the flag (EINVAL) or seccomp(2) itself (ENOSYS).
 */
static int sandbox_load_filter(const struct sock_fprog *prog)
{
        const unsigned long flags = SECCOMP_FILTER_FLAG_SPEC_ALLOW;

        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog) == 0)
                return 0;
        if (errno == EINVAL && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) == 0)
                return 0;
        if (errno == ENOSYS && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0)
                return 0;
        return -errno;
}

int sandbox_apply(const Sandbox *s)
{
        /* Soft and hard limit: without CAP_SYS_RESOURCE a hard limit cannot
         * be raised again. */
        static const struct rlimit zero = {.rlim_cur = 0, .rlim_max = 0};

        if (!s)
                return -EINVAL;

        /* No core files: a crashing runner is the normal case. */
        if (setrlimit(RLIMIT_CORE, &zero) < 0)
                return -errno;
        /* No file grows: writing past the end of a regular file raises
         * SIGXFSZ, which ends the runner. */
        if (setrlimit(RLIMIT_FSIZE, &zero) < 0)
                return -errno;
        /* Required for an unprivileged filter, and it stops setuid binaries
         * from gaining anything should exec ever get through. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;

        if (s->mode == SANDBOX_OFF)
                return 0;
        return sandbox_load_filter(&s->prog);
}

int sandbox_mode_parse(const char *s, SandboxMode *ret)
{
        if (!s || !ret)
                return -EINVAL;
        if (strcmp(s, "strict") == 0) {
                *ret = SANDBOX_STRICT;
                return 0;
        }
        if (strcmp(s, "off") == 0) {
                *ret = SANDBOX_OFF;
                return 0;
        }
        return -EINVAL;
}

const char *sandbox_mode_name(SandboxMode m)
{
        switch (m) {
        case SANDBOX_STRICT:
                return "strict";
        case SANDBOX_OFF:
                return "off";
        }
        return NULL;
}

/*
 * libseccomp returns a fresh malloc'd name on every call. The first name
 * found for a number is kept for the life of the process; a thread that
 * loses the race to store it frees its own copy.
 */
static char *sandbox_name_cache[SANDBOX_NAME_CACHE_SIZE];

const char *sandbox_syscall_name(int nr)
{
        char *name, *expected = NULL;

        if (nr < 0 || nr >= SANDBOX_NAME_CACHE_SIZE)
                return NULL;

        name = __atomic_load_n(&sandbox_name_cache[nr], __ATOMIC_ACQUIRE);
        if (name)
                return name;

        name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        if (!name)
                /* Newer than libseccomp: the policy may know it by number. */
                return policy_find_name(&policy_strict, nr);

        if (!__atomic_compare_exchange_n(&sandbox_name_cache[nr], &expected, name, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                free(name);
                return expected;
        }
        return name;
}

const char *sandbox_syscall_group(int nr)
{
        const PolicyGroup *group = policy_find_group(&policy_strict, nr);

        return group ? group->summary : NULL;
}
