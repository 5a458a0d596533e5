/*
 * The runner's seccomp policy, written as data: a table of named syscall
 * groups, each with one line saying why it is blocked, and policy_compile(),
 * the one function that turns a table into a libseccomp filter. The idea
 * comes from systemd's syscall filter sets; the code is our own.
 *
 * This first version is a denylist: everything not named here is allowed.
 * Blocked syscalls trap (SIGSYS, reported by the runner with the group's
 * reason); a few whose arguments live in memory the filter cannot read
 * (clone3, openat2) fail with ENOSYS instead, so that libc falls back to the
 * older syscall whose flags the filter can check.
 *
 * Invariants:
 * - A syscall appears in at most one group, so that a blocked syscall has
 *   exactly one reason (tests/test_sandbox.c checks this).
 * - Conditions on an int-sized argument compare only its low 32 bits (the
 *   kernel ignores the rest), so garbage in the upper half cannot slip a
 *   call past a rule. Conditions on pointers and longs compare all 64 bits.
 * - Syscalls of a foreign ABI (i386 via int 0x80, x32 on x86_64) trap
 *   whatever their number: the table speaks about native numbers only.
 */
#include "sandbox/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>

#include "snapfuzz/banned.h"

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Since Linux 5.1 new syscalls get the same number everywhere except alpha,
 * ia64 and mips (which add an offset). generic_nr is used only where the
 * offset is known to be 0.
 */
#if (defined(__x86_64__) && !defined(__ILP32__)) || defined(__i386__) || defined(__aarch64__) ||   \
    (defined(__arm__) && defined(__ARM_EABI__)) || defined(__riscv) || defined(__powerpc__) ||     \
    defined(__s390__) || defined(__loongarch__)
#define POLICY_GENERIC_NR_BASE 0
#endif

/* clone's flags come first everywhere except s390 (CLONE_BACKWARDS2). */
#if defined(__s390__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

#define SYS(name, ...)                                                                             \
        {                                                                                          \
                .syscall = (name), __VA_ARGS__                                                     \
        }

/* (argument & mask) == value over all 64 bits. */
#define ARG_MASKED_EQ(n, mask, value)                                                              \
        {                                                                                          \
                .arg = (n), .op = SCMP_CMP_MASKED_EQ, .datum_a = (mask), .datum_b = (value)        \
        }
/* Any of @bits set / @bits all clear (for flags). */
#define ARG_HAS(n, bits) ARG_MASKED_EQ(n, (bits), (bits))
#define ARG_LACKS(n, bits) ARG_MASKED_EQ(n, (bits), 0)
/* An int argument equals @value (the kernel reads only the low 32 bits). */
#define ARG_INT_EQ(n, value) ARG_MASKED_EQ(n, UINT32_C(0xffffffff), (uint32_t)(value))
/* A 64-bit argument (pointer, long) differs from @value. */
#define ARG_NE(n, value)                                                                           \
        {                                                                                          \
                .arg = (n), .op = SCMP_CMP_NE, .datum_a = (value)                                  \
        }

/*
 * Threads are clone(CLONE_VM|CLONE_THREAD|...): anything without
 * CLONE_THREAD is a new process. A thread must not get new namespaces
 * either. clone3 passes its flags in a struct the filter cannot read, so it
 * fails with ENOSYS and glibc (2.34+) falls back to clone.
 */
static const PolicyRule process_rules[] = {
    SYS("execve"),
    SYS("execveat"),
    SYS("fork"),
    SYS("vfork"),
    SYS("uselib"),
    SYS("clone", .when = {ARG_LACKS(CLONE_FLAGS_ARG, CLONE_THREAD)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWNS)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWCGROUP)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWUTS)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWIPC)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWUSER)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWPID)}),
    SYS("clone", .when = {ARG_HAS(CLONE_FLAGS_ARG, CLONE_NEWNET)}),
    SYS("clone3", .action = POLICY_ENOSYS),
};

/*
 * Creating, connecting and moving data over sockets. Options and names of
 * sockets (getsockopt, getsockname, ...) stay allowed: without these they
 * reach nothing. write() on an inherited socket cannot be told apart from
 * any other write and stays allowed too; the worker must not hand sockets
 * to runners.
 */
static const PolicyRule network_rules[] = {
    SYS("socket"),   SYS("socketpair"), SYS("connect"),  SYS("bind"),    SYS("listen"),
    SYS("accept"),   SYS("accept4"),    SYS("sendto"),   SYS("sendmsg"), SYS("sendmmsg"),
    SYS("recvfrom"), SYS("recvmsg"),    SYS("recvmmsg"),
};

/*
 * open and openat with any flag that can create or change a file. O_TMPFILE
 * and O_ACCMODE == 3 both include a write bit. Read-only opens stay allowed
 * in this version. openat2 keeps its flags in a struct: ENOSYS (glibc does
 * not use it for open()).
 */
#define OPEN_WRITE_RULES(name, arg)                                                                \
        SYS(name, .when = {ARG_HAS(arg, O_WRONLY)}), SYS(name, .when = {ARG_HAS(arg, O_RDWR)}),    \
            SYS(name, .when = {ARG_HAS(arg, O_CREAT)}),                                            \
            SYS(name, .when = {ARG_HAS(arg, O_TRUNC)}),                                            \
            SYS(name, .when = {ARG_HAS(arg, O_APPEND)})

static const PolicyRule file_write_rules[] = {
    OPEN_WRITE_RULES("open", 1),
    OPEN_WRITE_RULES("openat", 2),
    SYS("creat"),
    SYS("openat2", .action = POLICY_ENOSYS),
    SYS("mkdir"),
    SYS("mkdirat"),
    SYS("mknod"),
    SYS("mknodat"),
    SYS("link"),
    SYS("linkat"),
    SYS("symlink"),
    SYS("symlinkat"),
    SYS("rename"),
    SYS("renameat"),
    SYS("renameat2"),
    SYS("unlink"),
    SYS("unlinkat"),
    SYS("rmdir"),
    SYS("truncate"),
    SYS("chmod"),
    SYS("fchmod"),
    SYS("fchmodat"),
    SYS("fchmodat2", .generic_nr = 452),
    SYS("chown"),
    SYS("fchown"),
    SYS("lchown"),
    SYS("fchownat"),
    SYS("setxattr"),
    SYS("lsetxattr"),
    SYS("fsetxattr"),
    SYS("setxattrat", .generic_nr = 463),
    SYS("removexattr"),
    SYS("lremovexattr"),
    SYS("fremovexattr"),
    SYS("removexattrat", .generic_nr = 466),
    SYS("file_setattr", .generic_nr = 469),
    SYS("utime"),
    SYS("utimes"),
    SYS("futimesat"),
    SYS("utimensat"),
};

/*
 * Reaching into other processes, loading code into the kernel, changing
 * namespaces and mounts, and the kernel interfaces most often used to
 * exploit it. personality() may only be queried (0xffffffff): new
 * personality flags such as READ_IMPLIES_EXEC would change how the runner's
 * memory is mapped. A target may not install seccomp filters of its own: a
 * stricter filter cannot open anything, but one that returns errors or
 * kills (or strict mode) would break the runner's own reporting.
 */
static const PolicyRule escape_rules[] = {
    SYS("ptrace"),
    SYS("process_vm_readv"),
    SYS("process_vm_writev"),
    SYS("pidfd_getfd"),
    SYS("kcmp"),
    SYS("bpf"),
    SYS("perf_event_open"),
    SYS("userfaultfd"),
    SYS("io_uring_setup"),
    SYS("io_uring_enter"),
    SYS("io_uring_register"),
    SYS("kexec_load"),
    SYS("kexec_file_load"),
    SYS("init_module"),
    SYS("finit_module"),
    SYS("delete_module"),
    SYS("mount"),
    SYS("umount"),
    SYS("umount2"),
    SYS("pivot_root"),
    SYS("chroot"),
    SYS("fsopen"),
    SYS("fsconfig"),
    SYS("fsmount"),
    SYS("fspick"),
    SYS("move_mount"),
    SYS("open_tree"),
    SYS("open_tree_attr", .generic_nr = 467),
    SYS("mount_setattr"),
    SYS("unshare"),
    SYS("setns"),
    SYS("open_by_handle_at"),
    SYS("keyctl"),
    SYS("add_key"),
    SYS("request_key"),
    SYS("modify_ldt"),
    SYS("personality", .when = {ARG_NE(0, UINT32_C(0xffffffff))}),
    SYS("seccomp", .when = {ARG_INT_EQ(0, SECCOMP_SET_MODE_STRICT)}),
    SYS("seccomp", .when = {ARG_INT_EQ(0, SECCOMP_SET_MODE_FILTER)}),
    SYS("prctl", .when = {ARG_INT_EQ(0, PR_SET_SECCOMP)}),
};

/*
 * The runner's SIGSYS handler is what reports a blocked syscall; a target
 * that replaced it could hide every other rule. Reading the current action
 * (act == NULL) stays allowed, and so does every other signal.
 */
static const PolicyRule sigsys_rules[] = {
    SYS("rt_sigaction", .when = {ARG_INT_EQ(0, SIGSYS), ARG_NE(1, 0)}),
};

/*
 * kill(0, ...) and kill(-pgrp, ...) reach the runner's process group, which
 * holds its worker and possibly the coordinator; kill(-1, ...) reaches every
 * process of the user. raise() and abort() use tgkill and stay allowed.
 */
static const PolicyRule signal_rules[] = {
    SYS("kill", .when = {ARG_INT_EQ(0, 0)}),
    SYS("kill", .when = {ARG_HAS(0, UINT32_C(0x80000000))}),
};

/*
 * RLIMIT_CORE and RLIMIT_FSIZE are part of the sandbox (root could raise
 * them again), and prlimit with a pid reaches other processes of the user,
 * such as the coordinator. Reading limits stays allowed.
 */
static const PolicyRule rlimit_rules[] = {
    SYS("setrlimit"),
    SYS("prlimit64", .when = {ARG_NE(2, 0)}),
};

/* Machine-wide state that a runner running as root could change. */
static const PolicyRule system_rules[] = {
    SYS("reboot"),        SYS("swapon"),       SYS("swapoff"),       SYS("sethostname"),
    SYS("setdomainname"), SYS("settimeofday"), SYS("clock_settime"), SYS("adjtimex"),
    SYS("clock_adjtime"), SYS("acct"),         SYS("quotactl"),      SYS("quotactl_fd"),
    SYS("iopl"),          SYS("ioperm"),       SYS("vhangup"),
};

#define GROUP(n, r, table)                                                                         \
        {                                                                                          \
                .name = n, .reason = r, .summary = n ": " r, .rules = table,                       \
                .n_rules = ELEMENTSOF(table),                                                      \
        }

static const PolicyGroup strict_groups[] = {
    GROUP("process creation",
          "a runner never starts programs, processes or namespaces (threads are fine)",
          process_rules),
    GROUP("network", "a runner talks to its worker through shared memory, never through sockets",
          network_rules),
    GROUP("file modification", "a runner may read files but never creates, changes or removes them",
          file_write_rules),
    GROUP("sandbox escape",
          "a parser never debugs other processes, loads kernel code, mounts, changes namespaces "
          "or installs seccomp filters",
          escape_rules),
    GROUP("SIGSYS handler", "the runner's SIGSYS handler reports blocked syscalls and must stay",
          sigsys_rules),
    GROUP("signals to others",
          "a runner signals only itself, never its process group or all processes", signal_rules),
    GROUP("resource limits",
          "rlimits are part of the sandbox; a runner may read but not change them", rlimit_rules),
    GROUP("system administration", "a runner never changes machine-wide state", system_rules),
};

const Policy policy_strict = {
    .default_action = POLICY_ALLOW,
    .groups = strict_groups,
    .n_groups = ELEMENTSOF(strict_groups),
};

int policy_rule_nr(const PolicyRule *rule)
{
        int nr;

        /* Negative numbers are libseccomp's pseudo-syscalls: names it knows
         * that do not exist on this architecture (fork on arm64). */
        nr = seccomp_syscall_resolve_name(rule->syscall);
        if (nr >= 0)
                return nr;
#ifdef POLICY_GENERIC_NR_BASE
        if (nr == __NR_SCMP_ERROR && rule->generic_nr > 0)
                return POLICY_GENERIC_NR_BASE + rule->generic_nr;
#endif
        return -1;
}

static uint32_t policy_action_to_scmp(PolicyAction action)
{
        switch (action) {
        case POLICY_TRAP:
                return SCMP_ACT_TRAP;
        case POLICY_ENOSYS:
                return SCMP_ACT_ERRNO(ENOSYS);
        case POLICY_ALLOW:
                return SCMP_ACT_ALLOW;
        }
        return SCMP_ACT_KILL_PROCESS;
}

static unsigned policy_rule_n_conditions(const PolicyRule *rule)
{
        unsigned n = 0;

        while (n < POLICY_MAX_CONDITIONS && rule->when[n].op != 0)
                n++;
        return n;
}

int policy_compile(const Policy *policy, scmp_filter_ctx *ret)
{
        scmp_filter_ctx ctx;
        int r;

        if (!policy || !ret)
                return -EINVAL;

        ctx = seccomp_init(policy_action_to_scmp(policy->default_action));
        if (!ctx)
                return -ENOMEM;

        /* A foreign ABI would reinterpret every number in the table. Trap
         * rather than kill, so that the runner reports it (si_arch tells). */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP);
        if (r < 0)
                goto release_ctx;

        /* A binary search over syscall numbers instead of a linear scan. Only
         * an optimization: older libseccomp refuses it, which is fine. */
        (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

        for (size_t g = 0; g < policy->n_groups; g++) {
                const PolicyGroup *group = &policy->groups[g];

                for (size_t i = 0; i < group->n_rules; i++) {
                        const PolicyRule *rule = &group->rules[i];
                        int nr = policy_rule_nr(rule);

                        if (nr < 0)
                                continue; /* not on this architecture */
                        r = seccomp_rule_add_array(ctx, policy_action_to_scmp(rule->action), nr,
                                                   policy_rule_n_conditions(rule), rule->when);
                        if (r < 0)
                                goto release_ctx;
                }
        }

        *ret = ctx;
        return 0;

release_ctx:
        seccomp_release(ctx);
        return r;
}

const PolicyGroup *policy_find_group(const Policy *policy, int nr)
{
        if (!policy || nr < 0)
                return NULL;
        for (size_t g = 0; g < policy->n_groups; g++) {
                const PolicyGroup *group = &policy->groups[g];

                for (size_t i = 0; i < group->n_rules; i++)
                        if (policy_rule_nr(&group->rules[i]) == nr)
                                return group;
        }
        return NULL;
}

const char *policy_find_name(const Policy *policy, int nr)
{
        if (!policy || nr < 0)
                return NULL;
        for (size_t g = 0; g < policy->n_groups; g++) {
                const PolicyGroup *group = &policy->groups[g];

                for (size_t i = 0; i < group->n_rules; i++)
                        if (policy_rule_nr(&group->rules[i]) == nr)
                                return group->rules[i].syscall;
        }
        return NULL;
}
