/*
 * The runner's seccomp policy, written as data: a table of named syscall
 * groups, each with one line saying why, and policy_compile(), the one
 * function that turns a policy into a libseccomp filter. The idea comes from
 * systemd's syscall filter sets; the code is our own.
 *
 * The policy is an allowlist. The allowed groups hold what an in-process
 * parse loop needs: memory management, I/O on the descriptors the runner
 * already has, time, threads and their futexes, signals to itself, and
 * exit. Everything else traps (SIGSYS, reported by the runner with the
 * syscall's name and arguments: crash kind `sandbox`), or, in log mode, is
 * reported to the worker and allowed. The refused groups name the syscalls
 * a report is most likely to be about, and say why they are refused; the
 * locked ones are those a policy file may not allow, because they would let
 * the target get around the sandbox itself.
 *
 * Invariants:
 * - A syscall appears in at most one allowed group and at most one refused
 *   group (tests/test_sandbox.c checks this), so a refused syscall has
 *   exactly one reason.
 * - Conditions on an int-sized argument compare only its low 32 bits (the
 *   kernel ignores the rest), so garbage in the upper half cannot slip a
 *   call past a rule. Conditions on pointers and longs compare all 64 bits.
 * - The filter checks the architecture first: a syscall of a foreign ABI
 *   (i386 via int 0x80, x32 on x86_64) traps whatever its number, since the
 *   table speaks about native numbers only.
 */
#include "sandbox/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

/* The signal rules below spell out "every signal but SIGSYS" for the
 * generic signal numbering. */
#if SIGSYS != 31
#error "the rt_sigaction rules assume SIGSYS is 31"
#endif

/* A refused syscall: documentation and reports; the filter's default
 * action (trap, or notify in log mode) does the refusing. */
#define SYS(name, ...)                                                                             \
        {                                                                                          \
                .syscall = (name), __VA_ARGS__                                                     \
        }
/* An allowed syscall, under the conditions given, if any. */
#define ALLOW(name, ...) SYS(name, .action = POLICY_ALLOW, __VA_ARGS__)

/* (argument & mask) == value over all 64 bits. */
#define ARG_MASKED_EQ(n, mask, value)                                                              \
        {                                                                                          \
                .arg = (n), .op = SCMP_CMP_MASKED_EQ, .datum_a = (mask), .datum_b = (value)        \
        }
/* @bits all clear (for flags). */
#define ARG_LACKS(n, bits) ARG_MASKED_EQ(n, (bits), 0)
/* An int argument equals @value (the kernel reads only the low 32 bits). */
#define ARG_INT_EQ(n, value) ARG_MASKED_EQ(n, UINT32_C(0xffffffff), (uint32_t)(value))
/* A 64-bit argument (pointer, long) equals @value. */
#define ARG_EQ(n, value)                                                                           \
        {                                                                                          \
                .arg = (n), .op = SCMP_CMP_EQ, .datum_a = (value)                                  \
        }

/* The namespace flags of clone (CLONE_NEWTIME shares its bit with the exit
 * signal in clone(2) and only means something to clone3 and unshare). */
#define CLONE_NAMESPACE_FLAGS                                                                      \
        (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |             \
         CLONE_NEWPID | CLONE_NEWNET)

/* ---- the allowlist ---- */

/*
 * malloc, thread stacks and the runner's own buffers. No new executable
 * memory: mmap and mprotect are allowed only without PROT_EXEC (see the
 * "executable memory" group), but for the mapping of a file's code that
 * can never be written (no PROT_WRITE, not anonymous): how dlopen() loads
 * an iconv converter module from the system files (sandbox/sysfiles.c).
 * Its pages hold what the file holds, which the runner cannot write (it
 * opens files read-only), and mprotect cannot make them writable and
 * executable at once, so no code the target wrote ever runs.
 */
static const PolicyRule memory_rules[] = {
    ALLOW("brk"),
    ALLOW("mmap", .when = {ARG_LACKS(2, PROT_EXEC)}),
    ALLOW("mmap", .when = {ARG_LACKS(2, PROT_WRITE), ARG_LACKS(3, MAP_ANONYMOUS)}),
    ALLOW("mprotect", .when = {ARG_LACKS(2, PROT_EXEC)}),
    ALLOW("munmap"),
    ALLOW("mremap"),
    ALLOW("madvise"),
    ALLOW("membarrier"),
};

/*
 * I/O on descriptors the runner already holds: its output pipe, and files a
 * policy file lets it open. Every other descriptor is closed before the
 * target runs, so these reach nothing else. fstat is newfstatat(fd, "",
 * AT_EMPTY_PATH) in glibc 2.33 and later, and stdio calls it before its
 * first write. isatty() is ioctl(TCGETS); no other ioctl is allowed. fcntl
 * only reads and sets descriptor and status flags and duplicates.
 */
static const PolicyRule descriptor_rules[] = {
    ALLOW("read"),
    ALLOW("write"),
    ALLOW("readv"),
    ALLOW("writev"),
    ALLOW("pread64"),
    ALLOW("pwrite64"),
    ALLOW("preadv"),
    ALLOW("pwritev"),
    ALLOW("preadv2"),
    ALLOW("pwritev2"),
    ALLOW("lseek"),
    ALLOW("close"),
    ALLOW("fstat"),
    ALLOW("newfstatat"),
    ALLOW("getdents64"),
    ALLOW("dup"),
    ALLOW("dup2"),
    ALLOW("dup3"),
    ALLOW("fcntl", .when = {ARG_INT_EQ(1, F_GETFD)}),
    ALLOW("fcntl", .when = {ARG_INT_EQ(1, F_SETFD)}),
    ALLOW("fcntl", .when = {ARG_INT_EQ(1, F_GETFL)}),
    ALLOW("fcntl", .when = {ARG_INT_EQ(1, F_SETFL)}),
    ALLOW("fcntl", .when = {ARG_INT_EQ(1, F_DUPFD_CLOEXEC)}),
    ALLOW("ioctl", .when = {ARG_INT_EQ(1, TCGETS)}),
};

/* Clocks and sleeping: only the vDSO fallbacks and timeouts reach these. */
static const PolicyRule time_rules[] = {
    ALLOW("clock_gettime"), ALLOW("clock_getres"),    ALLOW("gettimeofday"), ALLOW("time"),
    ALLOW("nanosleep"),     ALLOW("clock_nanosleep"), ALLOW("times"),
};

/*
 * Threads the target starts, and their futexes. A thread is
 * clone(CLONE_VM|CLONE_THREAD|...) without namespace flags; clone without
 * CLONE_THREAD would be a new process ("process creation"). clone3 passes
 * its flags in a struct the filter cannot read, so it fails with ENOSYS and
 * glibc (2.34+) falls back to clone. Threads may name themselves.
 */
static const PolicyRule thread_rules[] = {
    ALLOW("clone", .when = {ARG_MASKED_EQ(CLONE_FLAGS_ARG, CLONE_THREAD | CLONE_NAMESPACE_FLAGS,
                                          CLONE_THREAD)}),
    SYS("clone3", .action = POLICY_ENOSYS),
    ALLOW("set_robust_list"),
    ALLOW("set_tid_address"),
    ALLOW("rseq"),
    ALLOW("futex"),
    ALLOW("futex_waitv", .generic_nr = 449),
    ALLOW("sched_yield"),
    ALLOW("sched_getaffinity"),
    ALLOW("getcpu"),
    ALLOW("prctl", .when = {ARG_INT_EQ(0, PR_SET_NAME)}),
    ALLOW("prctl", .when = {ARG_INT_EQ(0, PR_GET_NAME)}),
};

/*
 * Signals to itself: handlers for any signal but SIGSYS (the runner's
 * SIGSYS handler is what reports a blocked syscall, so it must stay; it may
 * still be read: act == NULL), masks, and kill/tgkill aimed at its own pid
 * (raise, abort, pthread_kill). POLICY_SELF_PID becomes the runner's pid
 * when the filter is installed.
 */
static const PolicyRule signal_rules[] = {
    ALLOW("rt_sigaction", .when = {ARG_EQ(1, 0)}),
    /* Signals 0-30 and 32-64, as bit patterns of the low 32 bits. */
    ALLOW("rt_sigaction", .when = {ARG_MASKED_EQ(0, UINT32_C(0xfffffff0), 0)}),
    ALLOW("rt_sigaction", .when = {ARG_MASKED_EQ(0, UINT32_C(0xfffffff8), 16)}),
    ALLOW("rt_sigaction", .when = {ARG_MASKED_EQ(0, UINT32_C(0xfffffffc), 24)}),
    ALLOW("rt_sigaction", .when = {ARG_MASKED_EQ(0, UINT32_C(0xfffffffe), 28)}),
    ALLOW("rt_sigaction", .when = {ARG_INT_EQ(0, 30)}),
    ALLOW("rt_sigaction", .when = {ARG_MASKED_EQ(0, UINT32_C(0xffffffe0), 32)}),
    ALLOW("rt_sigaction", .when = {ARG_INT_EQ(0, 64)}),
    ALLOW("rt_sigprocmask"),
    ALLOW("rt_sigreturn"),
    ALLOW("rt_sigpending"),
    ALLOW("rt_sigtimedwait"),
    ALLOW("rt_sigsuspend"),
    ALLOW("sigaltstack"),
    ALLOW("kill", .when = {ARG_INT_EQ(0, POLICY_SELF_PID)}),
    ALLOW("tgkill", .when = {ARG_INT_EQ(0, POLICY_SELF_PID)}),
};

/*
 * Questions about itself that reach no one else: ids, limits (read only,
 * own process), usage, randomness (glibc's malloc and arc4random use
 * getrandom), uname and sysinfo (glibc's qsort asks for the memory size),
 * and its working directory (libraries that resolve relative paths or URIs
 * ask for it, libxml2 among them; in the empty root the answer is "/").
 */
static const PolicyRule self_rules[] = {
    ALLOW("getpid"),    ALLOW("gettid"),
    ALLOW("getuid"),    ALLOW("geteuid"),
    ALLOW("getgid"),    ALLOW("getegid"),
    ALLOW("getresuid"), ALLOW("getresgid"),
    ALLOW("getrandom"), ALLOW("getrusage"),
    ALLOW("getrlimit"), ALLOW("prlimit64", .when = {ARG_INT_EQ(0, 0), ARG_EQ(2, 0)}),
    ALLOW("uname"),     ALLOW("sysinfo"),
    ALLOW("getcwd"),
};

/* Ending: a thread, the whole runner, and the kernel's restart after a
 * signal interrupted a sleep. */
static const PolicyRule exit_rules[] = {
    ALLOW("exit"),
    ALLOW("exit_group"),
    ALLOW("restart_syscall"),
};

/*
 * The runner hands its seccomp listener to the worker over the supervisor's
 * socket (SCM_RIGHTS), right after installing the filter, then closes the
 * socket. Only that descriptor number qualifies (POLICY_SELF_CTL becomes it
 * when the filter is installed); the target could only ever put a socket
 * there again with a policy that allows socket(), and then write() would
 * reach the same peer anyway.
 */
static const PolicyRule supervision_rules[] = {
    ALLOW("sendmsg", .when = {ARG_INT_EQ(0, POLICY_SELF_CTL)}),
};

/* ---- refused groups: what a report says, and what a policy file may add ---- */

/*
 * Files. A parser reads memory; the harness can read what it needs in
 * LLVMFuzzerInitialize, before the sandbox, or a policy file can allow
 * read-only opens under a directory (the worker opens the file and hands
 * the runner the descriptor). Paths are not even looked up: stat, access
 * and readlink are refused too (fstat on a descriptor is allowed).
 */
static const PolicyRule file_rules[] = {
    SYS("open"),
    SYS("openat"),
    SYS("openat2"),
    SYS("creat"),
    SYS("stat"),
    SYS("lstat"),
    SYS("statx"),
    SYS("access"),
    SYS("faccessat"),
    SYS("faccessat2"),
    SYS("readlink"),
    SYS("readlinkat"),
    SYS("chdir"),
    SYS("fchdir"),
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
    SYS("ftruncate"),
    SYS("fallocate"),
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
    SYS("inotify_init"),
    SYS("inotify_init1"),
    SYS("inotify_add_watch"),
    SYS("memfd_create"),
};

/*
 * Programs and processes. A process forked by the target could outlive the
 * runner; threads are allowed ("threads"). The worker refuses these rather
 * than a trap: system(), popen() and posix_spawn() call clone with every
 * signal blocked, and a trap would then kill the runner before its handler
 * could name the syscall.
 */
#define REFUSE(name, ...) SYS(name, .action = POLICY_NOTIFY_REFUSE, __VA_ARGS__)
static const PolicyRule process_rules[] = {
    REFUSE("execve"),
    REFUSE("execveat"),
    REFUSE("fork"),
    REFUSE("vfork"),
    REFUSE("clone", .when = {ARG_LACKS(CLONE_FLAGS_ARG, CLONE_THREAD)}),
    SYS("uselib"),
};

/* Sockets: a runner talks to its worker through shared memory. */
static const PolicyRule network_rules[] = {
    SYS("socket"),     SYS("socketpair"),  SYS("connect"),     SYS("bind"),     SYS("listen"),
    SYS("accept"),     SYS("accept4"),     SYS("sendto"),      SYS("sendmsg"),  SYS("sendmmsg"),
    SYS("recvfrom"),   SYS("recvmsg"),     SYS("recvmmsg"),    SYS("shutdown"), SYS("getsockopt"),
    SYS("setsockopt"), SYS("getsockname"), SYS("getpeername"),
};

/*
 * Executable memory made at run time (PROT_EXEC in mmap or mprotect). A
 * parser's code is loaded before the sandbox; refusing new executable
 * pages keeps code an attacker wrote into memory from running. A JIT
 * harness can allow mmap and mprotect without conditions in a policy file.
 */
static const PolicyRule exec_memory_rules[] = {
    SYS("mmap"),
    SYS("mprotect"),
    SYS("pkey_mprotect"),
    SYS("pkey_alloc"),
};

/*
 * Descriptor operations beyond the few allowed: fcntl's F_SETOWN and
 * F_SETSIG would send SIGIO to another process; ioctl reaches device
 * drivers, the widest kernel attack surface (and TIOCSTI types into a
 * terminal).
 */
static const PolicyRule descriptor_refused_rules[] = {
    SYS("fcntl"),
    SYS("ioctl"),
};

/*
 * Signals to any process but the runner: kill(0)/kill(-pgrp) reach the
 * worker's process group, kill(-1) every process of the user, and a pid
 * the coordinator. pidfds are a way to the same.
 */
static const PolicyRule signal_refused_rules[] = {
    SYS("kill"),
    SYS("tgkill"),
    SYS("tkill"),
    SYS("rt_sigqueueinfo"),
    SYS("rt_tgsigqueueinfo"),
    SYS("pidfd_open"),
    SYS("pidfd_send_signal"),
};

/* The runner's SIGSYS handler reports blocked syscalls; a target that
 * replaced or ignored it could hide every other rule. */
static const PolicyRule sigsys_rules[] = {
    SYS("rt_sigaction"),
};

/*
 * The worker kills the runner's whole process group when the runner ends;
 * a process in a session or group of its own would survive that.
 */
static const PolicyRule process_group_rules[] = {
    SYS("setsid"),
    SYS("setpgid"),
};

/* rlimits are part of the sandbox; prlimit with a pid reaches other
 * processes of the user. Reading its own limits is allowed. */
static const PolicyRule rlimit_rules[] = {
    SYS("setrlimit"),
    SYS("prlimit64"),
};

/*
 * Process attributes that undo the sandbox or the supervision: prctl
 * (PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_PTRACER, ...),
 * seccomp (a filter of its own could break the reporting), personality
 * (READ_IMPLIES_EXEC), credentials and capabilities.
 */
static const PolicyRule attribute_rules[] = {
    SYS("prctl"),     SYS("seccomp"),  SYS("personality"), SYS("capset"),    SYS("arch_prctl"),
    SYS("setuid"),    SYS("setgid"),   SYS("setreuid"),    SYS("setregid"),  SYS("setresuid"),
    SYS("setresgid"), SYS("setfsuid"), SYS("setfsgid"),    SYS("setgroups"),
};

/* Reaching into other processes: debugging, reading and writing their
 * memory, stealing their descriptors. */
static const PolicyRule debug_rules[] = {
    SYS("ptrace"),        SYS("process_vm_readv"), SYS("process_vm_writev"), SYS("pidfd_getfd"),
    SYS("kcmp"),          SYS("process_madvise"),  SYS("process_mrelease"),  SYS("move_pages"),
    SYS("migrate_pages"), SYS("get_robust_list"),
};

/*
 * Kernel interfaces that bypass seccomp or are the usual way into the
 * kernel: io_uring runs I/O the filter never sees, bpf and perf_event_open
 * load and observe kernel code, userfaultfd stretches kernel races,
 * keyrings hold secrets, open_by_handle_at opens files by handle around any
 * path check, modify_ldt and iopl are old and dangerous.
 */
static const PolicyRule kernel_rules[] = {
    SYS("io_uring_setup"),
    SYS("io_uring_enter"),
    SYS("io_uring_register"),
    SYS("bpf"),
    SYS("perf_event_open"),
    SYS("userfaultfd"),
    SYS("keyctl"),
    SYS("add_key"),
    SYS("request_key"),
    SYS("open_by_handle_at"),
    SYS("name_to_handle_at"),
    SYS("fanotify_init"),
    SYS("modify_ldt"),
    SYS("iopl"),
    SYS("ioperm"),
    SYS("memfd_secret"),
    SYS("lookup_dcookie"),
};

/* Namespaces and mounts: a new namespace or a mount changes what every
 * other rule protects. */
static const PolicyRule namespace_rules[] = {
    SYS("unshare"),       SYS("setns"),
    SYS("mount"),         SYS("umount"),
    SYS("umount2"),       SYS("pivot_root"),
    SYS("chroot"),        SYS("fsopen"),
    SYS("fsconfig"),      SYS("fsmount"),
    SYS("fspick"),        SYS("move_mount"),
    SYS("open_tree"),     SYS("open_tree_attr", .generic_nr = 467),
    SYS("mount_setattr"),
};

/* Machine-wide state that a runner running as root could change. */
static const PolicyRule system_rules[] = {
    SYS("reboot"),        SYS("kexec_load"),    SYS("kexec_file_load"),
    SYS("init_module"),   SYS("finit_module"),  SYS("delete_module"),
    SYS("swapon"),        SYS("swapoff"),       SYS("sethostname"),
    SYS("setdomainname"), SYS("settimeofday"),  SYS("clock_settime"),
    SYS("adjtimex"),      SYS("clock_adjtime"), SYS("acct"),
    SYS("quotactl"),      SYS("quotactl_fd"),   SYS("vhangup"),
    SYS("syslog"),
};

/* NOLINTBEGIN(bugprone-macro-parentheses): designated initializers and
 * string-literal concatenation ("name: reason") cannot take parentheses. */
#define GROUP(n, r, is_allowed, is_locked, table)                                                  \
        {                                                                                          \
                .name = n, .reason = r, .summary = n ": " r, .allowed = is_allowed,                \
                .locked = is_locked, .rules = table, .n_rules = ELEMENTSOF(table),                 \
        }
#define ALLOWED(n, r, table) GROUP(n, r, true, false, table)
#define REFUSED(n, r, table) GROUP(n, r, false, false, table)
/* NOLINTEND(bugprone-macro-parentheses) */
#define LOCKED(n, r, table) GROUP(n, r, false, true, table)

const PolicyGroup policy_groups[] = {
    ALLOWED("memory", "malloc, thread stacks and the runner's buffers", memory_rules),
    ALLOWED("descriptors", "I/O on the descriptors the runner already holds", descriptor_rules),
    ALLOWED("time", "clocks and sleeping", time_rules),
    ALLOWED("threads", "threads the target starts and their futexes", thread_rules),
    ALLOWED("signals", "handlers, masks and signals to the runner itself", signal_rules),
    ALLOWED("self", "questions about the runner itself", self_rules),
    ALLOWED("exit", "ending a thread or the runner", exit_rules),
    ALLOWED("supervision", "handing the seccomp listener to the worker", supervision_rules),

    REFUSED("files",
            "a runner opens only the system files every runner may read, and looks up no paths; "
            "a policy file can allow read-only opens under a directory",
            file_rules),
    REFUSED("process creation", "a runner never starts programs or processes; threads are fine",
            process_rules),
    REFUSED("network", "a runner talks to its worker through shared memory, never through sockets",
            network_rules),
    REFUSED("executable memory",
            "no new executable memory once the sandbox is up; a JIT harness can allow it in a "
            "policy file",
            exec_memory_rules),
    REFUSED("descriptor control",
            "only isatty's ioctl and fcntl's flag and dup commands are allowed",
            descriptor_refused_rules),
    LOCKED("signals to others", "a runner signals only itself, never its worker or other processes",
           signal_refused_rules),
    LOCKED("SIGSYS handler", "the runner's SIGSYS handler reports blocked syscalls and must stay",
           sigsys_rules),
    LOCKED("process group", "a runner stays in its own process group, which ends with it",
           process_group_rules),
    LOCKED("resource limits",
           "rlimits are part of the sandbox; a runner may read but not change them", rlimit_rules),
    LOCKED("process attributes",
           "a runner never changes its credentials, personality, seccomp filters or prctl "
           "attributes",
           attribute_rules),
    LOCKED("debugging", "a runner never reaches into another process", debug_rules),
    LOCKED("kernel attack surface",
           "io_uring, bpf, userfaultfd, keyrings and the like bypass seccomp or attack the kernel",
           kernel_rules),
    LOCKED("namespaces and mounts", "a runner never changes namespaces or mounts", namespace_rules),
    LOCKED("system administration", "a runner never changes machine-wide state", system_rules),
};

const size_t policy_n_groups = ELEMENTSOF(policy_groups);

void policy_deinit(Policy *p)
{
        if (!p)
                return;
        for (size_t i = 0; i < p->n_extra; i++)
                free((char *)p->extra[i].syscall);
        free(p->extra);
        for (size_t i = 0; i < p->n_dirs; i++)
                free(p->dirs[i]);
        free(p->dirs);
        free(p->quiet);
        *p = (Policy){0};
}

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
        case POLICY_NOTIFY_OPEN:
        case POLICY_NOTIFY_REFUSE:
                return SCMP_ACT_NOTIFY;
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

static int policy_add_rule(scmp_filter_ctx ctx, const Policy *policy, bool notify,
                           const PolicyRule *rule)
{
        bool asks_worker =
            rule->action == POLICY_NOTIFY_OPEN || rule->action == POLICY_NOTIFY_REFUSE;
        int nr = policy_rule_nr(rule);

        if (nr < 0)
                return 0; /* not on this architecture */
        /* In log mode the default action already sends everything not
         * allowed to the worker, and libseccomp refuses a rule whose action
         * is the default one. Without a worker, such rules are left to the
         * default action: a trap. */
        if (asks_worker && (policy->log || !notify))
                return 0;
        return seccomp_rule_add_array(ctx, policy_action_to_scmp(rule->action), nr,
                                      policy_rule_n_conditions(rule), rule->when);
}

/*
 * Read-only open and openat, sent to the worker when a sanitizer runtime
 * needs /proc/self/maps and no policy file already sends them
 * (policyfile.c adds the same rules for its directories).
 */
#define OPEN_WRITE_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND)
static const PolicyRule sanitizer_open_rules[] = {
    SYS("openat", .action = POLICY_NOTIFY_OPEN, .when = {ARG_LACKS(2, OPEN_WRITE_FLAGS)}),
    SYS("open", .action = POLICY_NOTIFY_OPEN, .when = {ARG_LACKS(1, OPEN_WRITE_FLAGS)}),
};

/*
 * Every open and openat, sent to the worker when the system files are
 * allowed (sandbox/sysfiles.c): it opens those, read-only (/dev/null also
 * for writing), and refuses anything else by name, path included. The
 * filter cannot read a path, so it cannot decide; sending write opens too
 * lets the refusal of one name its path. A policy file's directories and a
 * sanitizer's /proc/self/maps are served by the same worker code.
 */
static const PolicyRule system_open_rules[] = {
    SYS("openat", .action = POLICY_NOTIFY_OPEN),
    SYS("open", .action = POLICY_NOTIFY_OPEN),
};

/*
 * A leak check (only in the runner the recovery helper starts to confirm a
 * suspected leak, never in a fuzzing runner): LeakSanitizer stops the
 * world by cloning a tracer that shares the runner's memory
 * (CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_UNTRACED, which the worker lets
 * through, see supervisor.c), lets it trace the runner (PR_SET_PTRACER),
 * and the tracer attaches to the runner's threads, reads their registers
 * and detaches. ptrace is allowed on the runner's own pid only: a process
 * may already read and write its own memory, so this gives the target
 * nothing it did not have. The tracer lists /proc/<runner>/task (with the
 * old getdents) and reads each thread's status there: the worker opens
 * those for it.
 */
static const PolicyRule leak_check_rules[] = {
    ALLOW("ptrace", .when = {ARG_INT_EQ(1, POLICY_SELF_PID)}),
    ALLOW("wait4"),
    ALLOW("getppid"),
    ALLOW("getdents"),
    ALLOW("prctl", .when = {ARG_INT_EQ(0, PR_SET_PTRACER)}),
    ALLOW("prctl", .when = {ARG_INT_EQ(0, PR_SET_PDEATHSIG)}),
    ALLOW("prctl", .when = {ARG_INT_EQ(0, PR_GET_DUMPABLE)}),
};

bool policy_opens_notify(const Policy *policy)
{
        return policy && (policy->n_dirs > 0 || policy->sanitizer || policy->system_files);
}

/* Whether a policy file's rule names syscall @name. */
static bool policy_names(const Policy *policy, const char *name)
{
        for (size_t i = 0; i < policy->n_extra; i++)
                if (strcmp(policy->extra[i].syscall, name) == 0)
                        return true;
        return false;
}

/* Whether a policy file's rule lets syscall @name run in the runner (rather
 * than send it to the worker). */
static bool policy_allows(const Policy *policy, const char *name)
{
        for (size_t i = 0; i < policy->n_extra; i++)
                if (strcmp(policy->extra[i].syscall, name) == 0 &&
                    policy->extra[i].action == POLICY_ALLOW)
                        return true;
        return false;
}

/* The rules that send opens to the worker: all of them for the system
 * files, read-only ones for a sanitizer alone. A policy file that allows
 * open or openat itself keeps them (its own rules decide). */
static int policy_add_open_rules(scmp_filter_ctx ctx, const Policy *policy, bool notify)
{
        const PolicyRule *rules = NULL;
        int r;

        if (policy->system_files)
                rules = system_open_rules;
        else if (policy->sanitizer && policy->n_dirs == 0)
                rules = sanitizer_open_rules;
        if (!rules)
                return 0;
        for (size_t i = 0; i < 2; i++) {
                if (policy_allows(policy, rules[i].syscall) ||
                    (!policy->system_files && policy_names(policy, rules[i].syscall)))
                        continue;
                r = policy_add_rule(ctx, policy, notify, &rules[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

int policy_compile(const Policy *policy, bool notify, scmp_filter_ctx *ret)
{
        scmp_filter_ctx ctx;
        int r;

        if (!policy || !ret || (policy->log && !notify))
                return -EINVAL;

        ctx = seccomp_init(policy->log ? SCMP_ACT_NOTIFY : SCMP_ACT_TRAP);
        if (!ctx)
                return -ENOMEM;

        /* The architecture check comes first in the program: a foreign ABI
         * would reinterpret every number in the table. Trap rather than
         * kill, so that the runner reports it (si_arch tells), in log mode
         * too. */
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_TRAP);
        if (r < 0)
                goto release_ctx;

        /* A binary search over syscall numbers instead of a linear scan. Only
         * an optimization: older libseccomp refuses it, which is fine. */
        (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

        for (size_t g = 0; g < policy_n_groups; g++) {
                const PolicyGroup *group = &policy_groups[g];

                for (size_t i = 0; i < group->n_rules; i++) {
                        /* The default action refuses what refused groups
                         * name, unless the worker is to do it. */
                        if (!group->allowed && group->rules[i].action != POLICY_NOTIFY_REFUSE)
                                continue;
                        /* A policy file that allows the syscall decides. */
                        if (!group->allowed && policy_names(policy, group->rules[i].syscall))
                                continue;
                        r = policy_add_rule(ctx, policy, notify, &group->rules[i]);
                        if (r < 0)
                                goto release_ctx;
                }
        }
        for (size_t i = 0; i < policy->n_extra; i++) {
                r = policy_add_rule(ctx, policy, notify, &policy->extra[i]);
                if (r < 0)
                        goto release_ctx;
        }
        r = policy_add_open_rules(ctx, policy, notify);
        if (r < 0)
                goto release_ctx;
        for (size_t i = 0; i < policy->n_quiet; i++) {
                r = policy_add_rule(ctx, policy, notify, &policy->quiet[i]);
                if (r < 0)
                        goto release_ctx;
        }

        for (size_t i = 0; policy->leak_check && i < ELEMENTSOF(leak_check_rules); i++) {
                r = policy_add_rule(ctx, policy, notify, &leak_check_rules[i]);
                if (r < 0)
                        goto release_ctx;
        }

        *ret = ctx;
        return 0;

release_ctx:
        seccomp_release(ctx);
        return r;
}

static const PolicyGroup *policy_find(int nr, bool allowed)
{
        if (nr < 0)
                return NULL;
        for (size_t g = 0; g < policy_n_groups; g++) {
                const PolicyGroup *group = &policy_groups[g];

                if (group->allowed != allowed)
                        continue;
                for (size_t i = 0; i < group->n_rules; i++)
                        if (policy_rule_nr(&group->rules[i]) == nr)
                                return group;
        }
        return NULL;
}

const PolicyGroup *policy_find_refused(int nr)
{
        return policy_find(nr, false);
}

const PolicyGroup *policy_find_allowed(int nr)
{
        return policy_find(nr, true);
}

const char *policy_find_name(int nr)
{
        if (nr < 0)
                return NULL;
        for (size_t g = 0; g < policy_n_groups; g++) {
                const PolicyGroup *group = &policy_groups[g];

                for (size_t i = 0; i < group->n_rules; i++)
                        if (policy_rule_nr(&group->rules[i]) == nr)
                                return group->rules[i].syscall;
        }
        return NULL;
}
