/*
 * The Sandbox object: sandbox_new_with() runs once in the worker; it reads
 * the policy (the built-in table plus a policy file), compiles it with
 * libseccomp and exports the resulting classic-BPF program into a buffer
 * the Sandbox owns, noting where the runner's pid goes. sandbox_apply()
 * runs in every runner: it lowers rlimits, sets no_new_privs, writes its
 * pid into its (copy-on-write) copy of the program and hands it to the
 * kernel. Namespaces and descriptors are isolate.c, the worker's side of
 * log mode and policy directories supervisor.c.
 *
 * Invariants:
 * - sandbox_apply() allocates nothing, takes no locks and calls only
 *   async-signal-safe functions, so it is safe in the child of a fork()
 *   even if the parent had threads; it writes only the pid slots of the
 *   program, in the child's own copy.
 * - A Sandbox in strict mode holds two complete programs (one that asks
 *   the worker, one that needs none), in log mode one, in off mode none.
 * - sandbox_syscall_name() strings live until the process exits (a small
 *   cache, filled at most once per syscall number); nothing leaks per call.
 */
#include "sandbox/sandbox.h"
#include "sandbox/internal.h"
#include "sandbox/policy.h"
#include "sandbox/policyfile.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "snapfuzz/banned.h"

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
/* si_code of a seccomp SIGSYS; glibc does not define it. */
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Policy files larger than this are not policies. */
#define SANDBOX_POLICY_MAX_BYTES (1u << 20)

/* What a report says about a refused syscall that no group names. */
#define SANDBOX_NOT_ALLOWED                                                                        \
        "not in the allowlist: a parse loop does not need it; a policy file can allow it"

pid_t sandbox_worker_pid;

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

/* Finds the comparisons with POLICY_SELF_PID and POLICY_SELF_CTL that
 * sandbox_apply() patches. */
static int sandbox_find_pid_slots(SandboxProgram *p)
{
        for (size_t i = 0; i < p->prog.len; i++) {
                const struct sock_filter *insn = &p->prog.filter[i];
                bool pid = insn->k == POLICY_SELF_PID, ctl = insn->k == POLICY_SELF_CTL;

                if (!pid && !ctl)
                        continue;
                if (insn->code != (BPF_JMP | BPF_JEQ | BPF_K) ||
                    p->n_pid_patches == SANDBOX_MAX_PID_PATCHES ||
                    p->n_ctl_patches == SANDBOX_MAX_PID_PATCHES)
                        return -EPROTO;
                if (pid)
                        p->pid_patch[p->n_pid_patches++] = i;
                else
                        p->ctl_patch[p->n_ctl_patches++] = i;
        }
        return 0;
}

/* Compiles @policy and exports it as a classic-BPF program into @ret. */
static int sandbox_compile(const Policy *policy, bool notify, SandboxProgram *ret)
{
        scmp_filter_ctx ctx;
        size_t size = 0;
        void *buf = NULL;
        int fd, r;

        r = policy_compile(policy, notify, &ctx);
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

        ret->prog.filter = buf;
        ret->prog.len = (unsigned short)(size / sizeof(struct sock_filter));
        close(fd);
        seccomp_release(ctx);
        return sandbox_find_pid_slots(ret);

free_buf:
        free(buf);
close_memfd:
        close(fd);
release_ctx:
        seccomp_release(ctx);
        return r;
}

int sandbox_compile_programs(Sandbox *s)
{
        SandboxProgram notify = {0}, trap = {0}, leak = {0};
        int r;

        if (s->mode == SANDBOX_OFF)
                return 0;
        r = sandbox_compile(&s->policy, true, &notify);
        if (r == 0 && s->mode == SANDBOX_STRICT)
                r = sandbox_compile(&s->policy, false, &trap);
        if (r == 0 && s->leak_wanted && s->policy.sanitizer) {
                Policy p = s->policy; /* shares the rules; only read */

                p.leak_check = true;
                r = sandbox_compile(&p, true, &leak);
        }
        if (r < 0) {
                free(notify.prog.filter);
                free(trap.prog.filter);
                free(leak.prog.filter);
                return r;
        }
        free(s->notify.prog.filter);
        free(s->trap.prog.filter);
        free(s->leak.prog.filter);
        s->notify = notify;
        s->trap = trap;
        s->leak = leak;
        return 0;
}

int sandbox_new_with(Sandbox **ret, const SandboxOptions *o, char *err, size_t errlen)
{
        char scratch[8];
        Sandbox *s;
        int r;

        if (!err) {
                err = scratch;
                errlen = sizeof(scratch);
        }
        if (!ret || !o ||
            (o->mode != SANDBOX_STRICT && o->mode != SANDBOX_OFF && o->mode != SANDBOX_LOG)) {
                snprintf(err, errlen, "bad sandbox options");
                return -EINVAL;
        }
        if (o->mode == SANDBOX_OFF && o->policy_json) {
                snprintf(err, errlen, "a sandbox policy has no effect with --sandbox off");
                return -EINVAL;
        }

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->mode = o->mode;
        s->policy.log = o->mode == SANDBOX_LOG;
        s->policy.system_files = o->mode != SANDBOX_OFF;
        s->memory_limit_mb = o->memory_limit_mb;
        s->no_namespaces = o->no_namespaces;
        s->leak_wanted = o->leak_check;
        s->root_fd = -1;
        s->child_fd = -1;
        s->last_nr = -1;

        if (o->policy_json) {
                cJSON *root = NULL;

                r = policyfile_parse_json("the sandbox policy", o->policy_json, &root, err, errlen);
                if (r == 0) {
                        r = policyfile_apply("the sandbox policy", NULL, root, &s->policy, err,
                                             errlen);
                        cJSON_Delete(root);
                }
                if (r < 0)
                        goto free_sandbox;
                s->policy_json = strdup(o->policy_json);
                if (!s->policy_json) {
                        r = -ENOMEM;
                        goto free_sandbox;
                }
        }

        r = sandbox_compile_programs(s);
        if (r < 0) {
                snprintf(err, errlen, "cannot compile the seccomp filter: %s", strerror(-r));
                goto free_sandbox;
        }

        *ret = s;
        return 0;

free_sandbox:
        sandbox_free(s);
        return r;
}

int sandbox_new(Sandbox **ret, SandboxMode mode)
{
        SandboxOptions o = {.mode = mode};

        return sandbox_new_with(ret, &o, NULL, 0);
}

void sandbox_free(Sandbox *s)
{
        if (!s)
                return;
        free(s->notify.prog.filter);
        free(s->trap.prog.filter);
        free(s->leak.prog.filter);
        if (s->dir_fds) {
                for (size_t i = 0; i < s->policy.n_dirs; i++)
                        if (s->dir_fds[i] >= 0)
                                close(s->dir_fds[i]);
                free(s->dir_fds);
        }
        sysfiles_free(s->sysfiles);
        free(s->quiet);
        free(s->quiet_pending);
        if (s->root_fd >= 0)
                close(s->root_fd);
        if (s->child_fd >= 0)
                close(s->child_fd);
        policy_deinit(&s->policy);
        free(s->policy_json);
        free(s);
}

/*
 * Installs @prog on the calling thread. SECCOMP_FILTER_FLAG_SPEC_ALLOW keeps
 * the kernel from forcing the Speculative Store Bypass mitigation on every
 * seccomp'd task (the default before Linux 5.16, and a real slowdown): the
 * runner holds no secret the target should not read, so it buys nothing.
 * Older kernels lack the flag (EINVAL) or seccomp(2) itself (ENOSYS).
 * With @flags SECCOMP_FILTER_FLAG_NEW_LISTENER the result is the listener.
 */
static long sandbox_load_filter(const struct sock_fprog *prog, unsigned long flags)
{
        long r;

        r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags | SECCOMP_FILTER_FLAG_SPEC_ALLOW,
                    prog);
        if (r >= 0)
                return r;
        if (errno == EINVAL) {
                r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, prog);
                if (r >= 0)
                        return r;
        }
        if (errno == ENOSYS && flags == 0 &&
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog, 0, 0) == 0)
                return 0;
        return -errno;
}

/*
 * The listener goes to the worker over the supervisor's socket
 * (SCM_RIGHTS; the filter allows sendmsg on that one descriptor), and the
 * runner closes its own copy at once: the target never sees the listener
 * (with it, a second thread could answer its own notifications), and the
 * runner does not wait for the worker. A notification raised before the
 * worker has read the message simply waits for it.
 */
static int sandbox_hand_over_listener(int listener, int fd)
{
        union {
                struct cmsghdr header;
                char space[CMSG_SPACE(sizeof(int))];
        } control;
        char byte = 'L';
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {
            .msg_iov = &iov,
            .msg_iovlen = 1,
            .msg_control = control.space,
            .msg_controllen = sizeof(control.space),
        };
        struct cmsghdr *cmsg;
        ssize_t n;

        memset(&control, 0, sizeof(control));
        cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &listener, sizeof(int));
        do
                n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        close(listener);
        return n == 1 ? 0 : -EPIPE;
}

/* This process's copy of @p (copy-on-write after fork) gets its pid and
 * the number of its supervisor socket. */
static void sandbox_patch(const SandboxProgram *p, int ctl_fd)
{
        for (size_t i = 0; i < p->n_pid_patches; i++)
                p->prog.filter[p->pid_patch[i]].k = (uint32_t)getpid();
        for (size_t i = 0; i < p->n_ctl_patches; i++)
                p->prog.filter[p->ctl_patch[i]].k = (uint32_t)ctl_fd;
}

/*
 * The filter, and the listener to the worker when there is one. Should the
 * listener not reach the worker (no SECCOMP_FILTER_FLAG_NEW_LISTENER before
 * Linux 5.0, or the worker's end gone), strict mode stacks the trap-only
 * program on top: of the actions of several filters the kernel takes the
 * strictest, so what would have gone to the worker traps instead. Log mode
 * cannot do without the worker.
 */
static int sandbox_load(const Sandbox *s, bool leak_check)
{
        const SandboxProgram *prog = leak_check ? &s->leak : &s->notify;
        long r;
        int fd = s->child_fd;

        /* The leak program cannot do without its supervisor. */
        if (leak_check && (fd < 0 || prog->prog.len == 0))
                return -ENOTSUP;
        if (fd >= 0) {
                /* From here on the target could reach the listener; it is
                 * gone before the target runs. */
                sandbox_patch(prog, fd);
                r = sandbox_load_filter(&prog->prog, SECCOMP_FILTER_FLAG_NEW_LISTENER);
                if (r >= 0) {
                        r = sandbox_hand_over_listener((int)r, fd);
                        close(fd);
                        if (r == 0)
                                return 0;
                        if (s->mode != SANDBOX_STRICT || leak_check)
                                return (int)r;
                } else {
                        close(fd);
                        if (s->mode != SANDBOX_STRICT || leak_check)
                                return (int)r;
                }
        } else if (s->mode != SANDBOX_STRICT) {
                return -EINVAL;
        }
        sandbox_patch(&s->trap, -1);
        r = sandbox_load_filter(&s->trap.prog, 0);
        return r < 0 ? (int)r : 0;
}

static int sandbox_apply_program(const Sandbox *s, bool leak_check)
{
        /* Soft and hard limit: without CAP_SYS_RESOURCE a hard limit cannot
         * be raised again (and the filter refuses setrlimit anyway). */
        static const struct rlimit zero = {.rlim_cur = 0, .rlim_max = 0};
        if (!s)
                return -EINVAL;

        /* No core files: a crashing runner is the normal case. */
        if (setrlimit(RLIMIT_CORE, &zero) < 0)
                return -errno;
        /* No file grows: writing past the end of a regular file raises
         * SIGXFSZ, which ends the runner. The runner's own output goes to a
         * pipe, which the limit does not touch. */
        if (setrlimit(RLIMIT_FSIZE, &zero) < 0)
                return -errno;
        /* In a user namespace of its own the count is the worker's, the
         * runner's and their threads (not enforced for root on the host). */
        if (s->namespaces) {
                struct rlimit tasks = {SANDBOX_MAX_TASKS, SANDBOX_MAX_TASKS};

                if (setrlimit(RLIMIT_NPROC, &tasks) < 0)
                        return -errno;
        }
        if (s->address_space_limit) {
                struct rlimit as = {s->address_space_limit, s->address_space_limit};

                if (setrlimit(RLIMIT_AS, &as) < 0)
                        return -errno;
        }
        /* Required for an unprivileged filter, and it stops setuid binaries
         * from gaining anything should exec ever get through. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;

        if (s->mode == SANDBOX_OFF)
                return 0;

        /* A SIGSYS queued by this pid is the supervisor refusing a call. */
        sandbox_worker_pid = getppid();

        return sandbox_load(s, leak_check);
}

int sandbox_apply(const Sandbox *s)
{
        return sandbox_apply_program(s, false);
}

bool sandbox_can_check_leaks(const Sandbox *s)
{
        return s && (s->mode == SANDBOX_OFF || s->leak.prog.len > 0);
}

int sandbox_apply_leak_check(const Sandbox *s)
{
        if (!s)
                return -EINVAL;
        if (s->mode == SANDBOX_OFF)
                return sandbox_apply_program(s, false);
        if (s->leak.prog.len == 0)
                return -ENOTSUP;
        return sandbox_apply_program(s, true);
}

bool sandbox_has_namespaces(const Sandbox *s)
{
        return s && s->namespaces;
}

int sandbox_mode_parse(const char *s, SandboxMode *ret)
{
        if (!s || !ret)
                return -EINVAL;
        if (strcmp(s, "strict") == 0) {
                *ret = SANDBOX_STRICT;
                return 0;
        }
        if (strcmp(s, "log") == 0) {
                *ret = SANDBOX_LOG;
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
        case SANDBOX_LOG:
                return "log";
        }
        return NULL;
}

/*
 * libseccomp returns a fresh malloc'd name on every call. The first name
 * found for a number is kept for the life of the process; a thread that
 * loses the race to store it frees its own copy.
 */
static char *sandbox_name_cache[SANDBOX_NR_LIMIT];

const char *sandbox_syscall_name(int nr)
{
        char *name, *expected = NULL;

        if (nr < 0 || nr >= SANDBOX_NR_LIMIT)
                return NULL;

        name = __atomic_load_n(&sandbox_name_cache[nr], __ATOMIC_ACQUIRE);
        if (name)
                return name;

        name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
        if (!name)
                /* Newer than libseccomp: the policy may know it by number. */
                return policy_find_name(nr);

        if (!__atomic_compare_exchange_n(&sandbox_name_cache[nr], &expected, name, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                free(name);
                return expected;
        }
        return name;
}

const char *sandbox_syscall_group(int nr)
{
        const PolicyGroup *group;

        if (nr < 0)
                return NULL;
        group = policy_find_refused(nr);
        if (group)
                return group->summary;
        group = policy_find_allowed(nr);
        if (group)
                return NULL;
        return SANDBOX_NOT_ALLOWED;
}

int sandbox_sigsys_syscall(const siginfo_t *si)
{
        if (!si || si->si_signo != SIGSYS)
                return -1;
        if (si->si_code == SYS_SECCOMP)
                return si->si_syscall;
        if (si->si_code == SI_QUEUE && sandbox_worker_pid > 0 && si->si_pid == sandbox_worker_pid)
                return si->si_value.sival_int;
        return -1;
}

int sandbox_policy_load(const char *path, char **ret_json, char *err, size_t errlen)
{
        Policy scratch = {0};
        cJSON *root = NULL;
        char *text = NULL, *json;
        size_t len = 0;
        FILE *f;
        int r;

        f = fopen(path, "re");
        if (!f) {
                r = -errno;
                snprintf(err, errlen, "cannot read the sandbox policy %s: %s", path, strerror(-r));
                return r;
        }
        text = malloc(SANDBOX_POLICY_MAX_BYTES + 1);
        if (!text) {
                fclose(f);
                return -ENOMEM;
        }
        len = fread(text, 1, SANDBOX_POLICY_MAX_BYTES + 1, f);
        r = ferror(f) ? -EIO : 0;
        fclose(f);
        if (r < 0 || len > SANDBOX_POLICY_MAX_BYTES) {
                snprintf(err, errlen, "cannot read the sandbox policy %s: %s", path,
                         r < 0 ? "read error" : "larger than 1 MiB");
                r = r < 0 ? r : -EFBIG;
                goto free_text;
        }
        text[len] = '\0';
        if (strlen(text) != len) {
                snprintf(err, errlen, "%s: not valid JSON (it contains a NUL byte)", path);
                r = -EINVAL;
                goto free_text;
        }

        r = policyfile_parse_json(path, text, &root, err, errlen);
        if (r < 0)
                goto free_text;
        r = policyfile_apply(path, text, root, &scratch, err, errlen);
        policy_deinit(&scratch);
        if (r < 0)
                goto delete_root;

        json = cJSON_PrintUnformatted(root);
        if (!json) {
                r = -ENOMEM;
                goto delete_root;
        }
        *ret_json = strdup(json);
        cJSON_free(json);
        r = *ret_json ? 0 : -ENOMEM;

delete_root:
        cJSON_Delete(root);
free_text:
        free(text);
        return r;
}

/* realpath() of @path, whose last components need not exist yet: the
 * longest existing prefix is resolved and the rest appended ("." and ".."
 * in that rest are not interpreted; trailing slashes are dropped). */
static int resolve_maybe_missing(const char *path, char *ret, size_t cap)
{
        char head[PATH_MAX], real[PATH_MAX];
        size_t n = strlen(path);
        char *slash;
        int m;

        if (n == 0 || n >= sizeof(head))
                return -ENAMETOOLONG;
        memcpy(head, path, n + 1);
        while (!realpath(head, real)) {
                if (errno != ENOENT && errno != ENOTDIR)
                        return -errno;
                slash = strrchr(head, '/');
                if (!slash)
                        return -ENOENT;
                if (slash == head) {
                        head[1] = '\0'; /* "/" */
                        continue;
                }
                *slash = '\0';
        }
        const char *rest = path + strlen(head);
        while (*rest == '/')
                rest++;
        m = snprintf(ret, cap, "%s%s%s", real, *rest && strcmp(real, "/") ? "/" : "", rest);
        if (m < 0 || (size_t)m >= cap)
                return -ENAMETOOLONG;
        while (m > 1 && ret[m - 1] == '/')
                ret[--m] = '\0';
        return 0;
}

static bool dir_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        if (strcmp(dir, "/") == 0)
                return true;
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int sandbox_policy_check(const char *name, const char *policy_json, const char *out_dir, char *err,
                         size_t errlen)
{
        Policy scratch = {0};
        cJSON *root = NULL;
        char out_real[PATH_MAX];
        int r;

        r = policyfile_parse_json(name, policy_json, &root, err, errlen);
        if (r < 0)
                return r;
        r = policyfile_apply(name, NULL, root, &scratch, err, errlen);
        cJSON_Delete(root);
        if (r < 0)
                return r;
        if (out_dir) {
                char rel[PATH_MAX];

                /* A relative name is relative to the current directory. */
                if (out_dir[0] != '/') {
                        int m = snprintf(rel, sizeof(rel), "./%s", out_dir);

                        if (m < 0 || (size_t)m >= sizeof(rel)) {
                                r = -ENAMETOOLONG;
                                goto done;
                        }
                        out_dir = rel;
                }
                r = resolve_maybe_missing(out_dir, out_real, sizeof(out_real));
                if (r < 0) {
                        snprintf(err, errlen, "%s: cannot resolve the output directory %s: %s",
                                 name, out_dir, strerror(-r));
                        goto done;
                }
                for (size_t i = 0; i < scratch.n_dirs; i++) {
                        if (!dir_within(out_real, scratch.dirs[i]) &&
                            !dir_within(scratch.dirs[i], out_real))
                                continue;
                        snprintf(err, errlen,
                                 "%s: \"under\": %s %s the output directory %s; the target "
                                 "must not read the campaign's findings (name a directory "
                                 "beside it)",
                                 name, scratch.dirs[i],
                                 dir_within(out_real, scratch.dirs[i]) ? "contains" : "is inside",
                                 out_real);
                        r = -EINVAL;
                        goto done;
                }
        }
done:
        policy_deinit(&scratch);
        return r;
}

cJSON *sandbox_describe(const Sandbox *s)
{
        cJSON *j = cJSON_CreateObject(), *limits;

        if (!j || !s)
                return j;
        cJSON_AddStringToObject(j, "mode", sandbox_mode_name(s->mode));
        if (s->policy_json) {
                cJSON *policy = cJSON_Parse(s->policy_json);

                if (policy)
                        cJSON_AddItemToObject(j, "policy", policy);
        }
        /* What every runner may read without a policy file. */
        if (s->sysfiles)
                cJSON_AddItemToObject(j, "system_files", sysfiles_describe(s->sysfiles));
        cJSON_AddBoolToObject(j, "namespaces", s->namespaces);
        cJSON_AddStringToObject(j, "root", s->root_fd >= 0 ? "empty" : "host");
        cJSON_AddBoolToObject(j, "sanitizer", s->sanitizer);
        limits = cJSON_AddObjectToObject(j, "rlimits");
        if (limits) {
                cJSON_AddNumberToObject(limits, "core", 0);
                cJSON_AddNumberToObject(limits, "fsize", 0);
                if (s->namespaces)
                        cJSON_AddNumberToObject(limits, "nproc", SANDBOX_MAX_TASKS);
                if (s->address_space_limit)
                        cJSON_AddNumberToObject(limits, "as_mb",
                                                (double)(s->address_space_limit >> 20));
        }
        return j;
}
