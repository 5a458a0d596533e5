/*
 * Tests of sandbox/: what the strict allowlist blocks, what it must leave
 * working (threads, stdio, abort, other signal handlers, signals to
 * itself), how a runner learns which syscall was blocked, policy files,
 * log mode and policy directories (the supervisor), namespaces and
 * descriptors, and what sandbox_apply() costs.
 *
 * Criterion runs every test in its own process, so most tests apply the
 * sandbox to that process and state the expected end with .signal or
 * .exit_code. Once the filter is installed, Criterion can no longer report
 * (it talks to its runner over a socket), so such tests end with _exit()
 * and an exit code, never by returning or by a failing cr_assert. Tests
 * that must look at a side effect afterwards (a file that must not exist, a
 * pipe) fork their own child and check from the parent.
 */
#include "sandbox/sandbox.h"
#include "sandbox/policy.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

/* Exit codes of sandboxed test processes. */
#define EXIT_OK 42
#define EXIT_FAILED 1
#define EXIT_APPLY_FAILED 2
#define EXIT_NOT_BLOCKED 3

/* si_code of a seccomp SIGSYS; glibc does not define it. */
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

extern char **environ;

/* Puts the calling (test) process under the strict sandbox. Failures are
 * reported normally: no filter is installed when sandbox_apply fails. */
static void apply_strict(void)
{
        Sandbox *s = NULL;
        int r;

        r = sandbox_new(&s, SANDBOX_STRICT);
        cr_assert_eq(r, 0, "sandbox_new: %s", strerror(-r));
        r = sandbox_apply(s);
        cr_assert_eq(r, 0, "sandbox_apply: %s", strerror(-r));
        sandbox_free(s);
}

/* Runs @fn in a forked child under the strict sandbox; returns the child's
 * wait status. */
static int run_sandboxed(void (*fn)(void *), void *userdata)
{
        Sandbox *s = NULL;
        int status, r;
        pid_t pid;

        r = sandbox_new(&s, SANDBOX_STRICT);
        cr_assert_eq(r, 0, "sandbox_new: %s", strerror(-r));
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (sandbox_apply(s) < 0)
                        _exit(EXIT_APPLY_FAILED);
                fn(userdata);
                _exit(EXIT_NOT_BLOCKED);
        }
        sandbox_free(s);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static void assert_killed_by_sigsys(int status, const char *what)
{
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
                  "%s: expected death by SIGSYS, got %s %d", what,
                  WIFSIGNALED(status) ? "signal" : "exit code",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* A policy that regresses must make tests fail, not hang. */
TestSuite(sandbox, .timeout = 30);

/* ---- process creation ---- */

Test(sandbox, execve_traps, .signal = SIGSYS)
{
        char *argv[] = {"/bin/true", NULL};

        apply_strict();
        execve("/bin/true", argv, environ);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, fork_traps, .signal = SIGSYS)
{
        pid_t pid;

        apply_strict();
        pid = fork();
        /* Only reached if fork was not blocked. */
        _exit(pid == 0 ? 0 : EXIT_NOT_BLOCKED);
}

static int expected_nr;

static void exit_ok_if_expected_syscall(int sig, siginfo_t *info, void *ucontext)
{
        (void)sig;
        (void)ucontext;
        _exit(info->si_syscall == expected_nr ? EXIT_OK : EXIT_FAILED);
}

/* posix_spawn tries clone3, gets ENOSYS and falls back to
 * clone(CLONE_VM|CLONE_VFORK), which traps. */
Test(sandbox, posix_spawn_traps, .signal = SIGSYS)
{
        char *argv[] = {"/bin/true", NULL};
        pid_t pid;

        apply_strict();
        posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ);
        _exit(EXIT_NOT_BLOCKED);
}

/*
 * A target that blocks SIGSYS (glibc's posix_spawn, system and popen block
 * every signal around clone) cannot escape either: the kernel resets SIGSYS
 * to its default action and the process dies, but the runner's handler
 * never runs, so such a death comes without a syscall number.
 */
Test(sandbox, blocked_sigsys_still_kills, .signal = SIGSYS)
{
        struct sigaction sa = {.sa_sigaction = exit_ok_if_expected_syscall, .sa_flags = SA_SIGINFO};
        char *argv[] = {"/bin/true", NULL};
        sigset_t set;

        expected_nr = __NR_execve;
        cr_assert_eq(sigaction(SIGSYS, &sa, NULL), 0);
        apply_strict();
        sigemptyset(&set);
        sigaddset(&set, SIGSYS);
        sigprocmask(SIG_BLOCK, &set, NULL);
        execve("/bin/true", argv, environ);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, clone3_fails_with_enosys, .exit_code = EXIT_OK)
{
        struct clone_args args = {.exit_signal = SIGCHLD};
        long r;

        apply_strict();
        r = syscall(__NR_clone3, &args, sizeof(args));
        if (r == 0)
                _exit(0); /* the child of an unblocked clone3 */
        _exit(r == -1 && errno == ENOSYS ? EXIT_OK : EXIT_FAILED);
}

/* A thread must not get namespaces of its own. (Were this not blocked, the
 * kernel would answer EINVAL: CLONE_NEWUSER excludes CLONE_THREAD.) */
Test(sandbox, clone_thread_with_namespace_traps, .signal = SIGSYS)
{
        apply_strict();
        syscall(__NR_clone, CLONE_VM | CLONE_SIGHAND | CLONE_THREAD | CLONE_NEWUSER, NULL, NULL,
                NULL, 0);
        _exit(EXIT_NOT_BLOCKED);
}

static void *thread_main(void *arg)
{
        return (char *)arg + 1;
}

Test(sandbox, threads_still_work, .exit_code = EXIT_OK)
{
        static char cookie[2];
        pthread_t thread;
        void *result = NULL;

        apply_strict();
        if (pthread_create(&thread, NULL, thread_main, cookie) != 0)
                _exit(EXIT_FAILED);
        if (pthread_join(thread, &result) != 0)
                _exit(EXIT_FAILED);
        _exit(result == cookie + 1 ? EXIT_OK : EXIT_FAILED);
}

/* ---- files ---- */

static void open_created(void *path)
{
        open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
}

Test(sandbox, creating_a_file_traps_and_creates_nothing)
{
        char dir[] = "/tmp/snapfuzz-sandbox-XXXXXX";
        char path[sizeof(dir) + 16];
        int status;

        cr_assert_not_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/created", dir);

        status = run_sandboxed(open_created, path);
        assert_killed_by_sigsys(status, "open(O_CREAT)");
        cr_assert_eq(access(path, F_OK), -1, "%s exists", path);
        cr_assert_eq(errno, ENOENT);

        unlink(path);
        rmdir(dir);
}

struct open_case {
        const char *path;
        int flags;
        bool raw_open; /* open(2) rather than glibc's openat */
};

static void open_case_run(void *userdata)
{
        const struct open_case *c = userdata;

#ifdef SYS_open
        if (c->raw_open) {
                syscall(SYS_open, c->path, c->flags, 0600);
                return;
        }
#endif
        open(c->path, c->flags, 0600);
}

/* Every flag that can change a file traps, even on an existing file and on
 * /dev/null, and the file is left as it was. */
Test(sandbox, opens_for_writing_trap)
{
        static const int flags[] = {
            O_WRONLY,           O_RDWR,
            O_RDONLY | O_TRUNC, O_RDONLY | O_APPEND,
            O_RDONLY | O_CREAT, O_WRONLY | O_TRUNC | O_CREAT,
        };
        char path[] = "/tmp/snapfuzz-sandbox-XXXXXX";
        struct stat st;
        int fd;

        fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "data", 4), 4);
        close(fd);

        for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
                for (int raw = 0; raw <= 1; raw++) {
                        struct open_case c = {.path = path, .flags = flags[i], .raw_open = raw};
                        char what[64];

                        snprintf(what, sizeof(what), "%s(flags %#x)", raw ? "open" : "openat",
                                 (unsigned)flags[i]);
                        assert_killed_by_sigsys(run_sandboxed(open_case_run, &c), what);
                }
        }
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq(st.st_size, 4, "the file was changed");

        struct open_case devnull = {.path = "/dev/null", .flags = O_WRONLY};
        assert_killed_by_sigsys(run_sandboxed(open_case_run, &devnull),
                                "open(/dev/null, O_WRONLY)");
        unlink(path);
}

struct file_change {
        const char *what;
        int (*change)(const char *path);
};

static int change_unlink(const char *path)
{
        return unlink(path);
}

static int change_rename(const char *path)
{
        char to[256];

        snprintf(to, sizeof(to), "%s.renamed", path);
        return rename(path, to);
}

static int change_chmod(const char *path)
{
        return chmod(path, 0777);
}

static int change_truncate(const char *path)
{
        return truncate(path, 0);
}

static int change_link(const char *path)
{
        char to[256];

        snprintf(to, sizeof(to), "%s.link", path);
        return link(path, to);
}

static int change_symlink(const char *path)
{
        char to[256];

        snprintf(to, sizeof(to), "%s.symlink", path);
        return symlink(path, to);
}

static int change_mkdir(const char *path)
{
        char to[256];

        snprintf(to, sizeof(to), "%s.dir", path);
        return mkdir(to, 0700);
}

static int change_utimes(const char *path)
{
        return utimensat(AT_FDCWD, path, NULL, 0);
}

static const char *change_path;

static void file_change_run(void *userdata)
{
        const struct file_change *c = userdata;

        c->change(change_path);
}

Test(sandbox, changing_files_traps)
{
        static const struct file_change changes[] = {
            {"unlink", change_unlink}, {"rename", change_rename},
            {"chmod", change_chmod},   {"truncate", change_truncate},
            {"link", change_link},     {"symlink", change_symlink},
            {"mkdir", change_mkdir},   {"utimensat", change_utimes},
        };
        char path[] = "/tmp/snapfuzz-sandbox-XXXXXX";
        struct stat before, after;
        int fd;

        fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "data", 4), 4);
        close(fd);
        cr_assert_eq(stat(path, &before), 0);
        change_path = path;

        for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
                assert_killed_by_sigsys(run_sandboxed(file_change_run, (void *)&changes[i]),
                                        changes[i].what);

        cr_assert_eq(stat(path, &after), 0);
        cr_assert_eq(after.st_size, before.st_size);
        cr_assert_eq(after.st_mode, before.st_mode);
        cr_assert_eq(after.st_nlink, 1);
        cr_assert_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
        unlink(path);
}

static bool read_some(const char *path)
{
        char buf[64];
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        return n > 0;
}

/* An allowlist: a parser reads memory, not files, so even a read-only open
 * traps (a policy file can allow some). */
Test(sandbox, read_only_opens_trap, .signal = SIGSYS)
{
        apply_strict();
        read_some("/etc/hostname");
        _exit(EXIT_NOT_BLOCKED);
}

/* printf's first write stats its descriptor (newfstatat(1, "",
 * AT_EMPTY_PATH) in glibc 2.33+), and may ask isatty. */
Test(sandbox, stdio_still_works, .exit_code = EXIT_OK)
{
        apply_strict();
        if (printf("stdio under the sandbox: %d\n", 42) < 0 || fflush(stdout) != 0)
                _exit(EXIT_FAILED);
        (void)isatty(STDOUT_FILENO);
        _exit(EXIT_OK);
}

/* Libraries that resolve relative paths (libxml2's URI code) ask where
 * they are; the answer reaches nothing. */
Test(sandbox, getcwd_still_works, .exit_code = EXIT_OK)
{
        char buf[PATH_MAX];

        apply_strict();
        if (!getcwd(buf, sizeof(buf)))
                _exit(EXIT_FAILED);
        _exit(EXIT_OK);
}

/* The file was opened for writing before the sandbox; growing it afterwards
 * hits RLIMIT_FSIZE 0. */
Test(sandbox, growing_a_file_raises_sigxfsz, .signal = SIGXFSZ)
{
        char path[] = "/tmp/snapfuzz-sandbox-XXXXXX";
        int fd;

        fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        unlink(path);
        apply_strict();
        if (write(fd, "x", 1) < 0)
                _exit(EXIT_FAILED);
        _exit(EXIT_NOT_BLOCKED);
}

/* ---- network ---- */

Test(sandbox, socket_traps, .signal = SIGSYS)
{
        apply_strict();
        socket(AF_UNIX, SOCK_STREAM, 0);
        _exit(EXIT_NOT_BLOCKED);
}

/* A socket inherited from the worker is useless too. */
Test(sandbox, sending_on_an_inherited_socket_traps, .signal = SIGSYS)
{
        int sv[2];

        cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
        apply_strict();
        send(sv[0], "x", 1, 0);
        _exit(EXIT_NOT_BLOCKED);
}

/* sendmsg is allowed on the supervisor's socket only (patched in at
 * apply); without a supervisor, on none. */
Test(sandbox, sendmsg_on_an_inherited_socket_traps, .signal = SIGSYS)
{
        char byte = 'x';
        struct iovec iov = {.iov_base = &byte, .iov_len = 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        int sv[2];

        cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
        apply_strict();
        sendmsg(sv[0], &msg, 0);
        _exit(EXIT_NOT_BLOCKED);
}

/* ---- escape ---- */

Test(sandbox, ptrace_traps, .signal = SIGSYS)
{
        apply_strict();
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, personality_query_traps, .signal = SIGSYS)
{
        apply_strict();
        personality(0xffffffff);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, personality_change_traps, .signal = SIGSYS)
{
        apply_strict();
        personality(READ_IMPLIES_EXEC);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, second_filter_traps, .signal = SIGSYS)
{
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};

        apply_strict();
        syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
        _exit(EXIT_NOT_BLOCKED);
}

/* The older interface to the same thing. */
Test(sandbox, prctl_set_seccomp_traps, .signal = SIGSYS)
{
        struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        struct sock_fprog prog = {.len = 1, .filter = &allow};

        apply_strict();
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, raising_rlimits_traps, .signal = SIGSYS)
{
        struct rlimit rl;

        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        apply_strict();
        setrlimit(RLIMIT_NOFILE, &rl);
        _exit(EXIT_NOT_BLOCKED);
}

/* ---- signals ---- */

Test(sandbox, installing_a_sigsys_handler_traps, .signal = SIGSYS)
{
        struct sigaction sa = {.sa_handler = SIG_IGN};

        apply_strict();
        sigaction(SIGSYS, &sa, NULL);
        _exit(EXIT_NOT_BLOCKED);
}

static void ignore_signal(int sig)
{
        (void)sig;
}

Test(sandbox, other_signal_handlers_work, .exit_code = EXIT_OK)
{
        struct sigaction sa = {.sa_handler = ignore_signal}, old;

        apply_strict();
        if (sigaction(SIGUSR1, &sa, NULL) < 0 || sigaction(SIGSEGV, &sa, NULL) < 0)
                _exit(EXIT_FAILED);
        /* Reading the SIGSYS action is fine. */
        if (sigaction(SIGSYS, NULL, &old) < 0)
                _exit(EXIT_FAILED);
        if (raise(SIGUSR1) != 0)
                _exit(EXIT_FAILED);
        _exit(EXIT_OK);
}

Test(sandbox, signalling_the_process_group_traps, .signal = SIGSYS)
{
        apply_strict();
        kill(0, 0);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, signalling_every_process_traps, .signal = SIGSYS)
{
        apply_strict();
        kill(-1, 0);
        _exit(EXIT_NOT_BLOCKED);
}

/* A crashing target must die of its own signal, not of the sandbox. */
Test(sandbox, abort_still_works, .signal = SIGABRT)
{
        apply_strict();
        abort();
}

/* The runner's own pid is patched into the program after fork: signals to
 * itself work in a process forked after the filter was compiled. */
static volatile sig_atomic_t got_usr1;

static void note_usr1(int sig)
{
        (void)sig;
        got_usr1 = 1;
}

static void kill_self(void *userdata)
{
        struct sigaction sa = {.sa_handler = note_usr1};

        (void)userdata;
        sigaction(SIGUSR1, &sa, NULL);
        if (kill(getpid(), SIGUSR1) == 0 && got_usr1 && raise(SIGUSR1) == 0)
                _exit(EXIT_OK);
        _exit(EXIT_FAILED);
}

Test(sandbox, signals_to_itself_work_in_a_forked_runner)
{
        int status = run_sandboxed(kill_self, NULL);

        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
}

static void kill_parent(void *userdata)
{
        (void)userdata;
        kill(getppid(), 0);
}

static void tgkill_parent(void *userdata)
{
        (void)userdata;
        syscall(SYS_tgkill, getppid(), getppid(), 0);
}

static void tkill_parent(void *userdata)
{
        (void)userdata;
        syscall(SYS_tkill, getppid(), 0);
}

/* Signal 0 only probes; the filter refuses the call all the same. */
Test(sandbox, signals_to_other_processes_trap)
{
        assert_killed_by_sigsys(run_sandboxed(kill_parent, NULL), "kill(parent)");
        assert_killed_by_sigsys(run_sandboxed(tgkill_parent, NULL), "tgkill(parent)");
        assert_killed_by_sigsys(run_sandboxed(tkill_parent, NULL), "tkill(parent)");
}

/* The kernel reads only the low 32 bits of the signal number: garbage above
 * them must not turn SIGSYS into "some other signal". */
Test(sandbox, sigsys_handler_with_garbage_in_the_upper_bits_traps, .signal = SIGSYS)
{
        struct {
                void *handler;
                unsigned long flags;
                void *restorer;
                uint64_t mask;
        } act = {.handler = SIG_IGN};

        apply_strict();
        syscall(SYS_rt_sigaction, (1UL << 32) | SIGSYS, &act, NULL, 8);
        _exit(EXIT_NOT_BLOCKED);
}

/* ---- memory ---- */

Test(sandbox, writable_memory_still_works, .exit_code = EXIT_OK)
{
        char *p;

        apply_strict();
        p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED || mprotect(p, 4096, PROT_READ) < 0 || munmap(p, 1 << 20) < 0)
                _exit(EXIT_FAILED);
        p = malloc(64 << 20); /* big enough for its own mmap */
        if (!p)
                _exit(EXIT_FAILED);
        memset(p, 1, 64 << 20);
        free(p);
        _exit(EXIT_OK);
}

Test(sandbox, executable_mmap_traps, .signal = SIGSYS)
{
        apply_strict();
        mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        _exit(EXIT_NOT_BLOCKED);
}

Test(sandbox, making_memory_executable_traps, .signal = SIGSYS)
{
        char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        cr_assert_neq(p, MAP_FAILED);
        p[0] = (char)0xc3; /* ret */
        apply_strict();
        mprotect(p, 4096, PROT_READ | PROT_EXEC);
        _exit(EXIT_NOT_BLOCKED);
}

/* ---- everything else: the allowlist's default ---- */

struct raw_call {
        const char *what;
        long nr;
        long args[6];
};

static void raw_call_run(void *userdata)
{
        const struct raw_call *c = userdata;

        syscall(c->nr, c->args[0], c->args[1], c->args[2], c->args[3], c->args[4], c->args[5]);
}

Test(sandbox, interfaces_around_seccomp_trap)
{
        static const struct raw_call calls[] = {
            {"io_uring_setup", __NR_io_uring_setup, {1, 0}},
            {"bpf", __NR_bpf, {0, 0, 0}},
            {"userfaultfd", __NR_userfaultfd, {0}},
            {"process_vm_readv", __NR_process_vm_readv, {1, 0, 0, 0, 0, 0}},
            {"perf_event_open", __NR_perf_event_open, {0, 0, -1, -1, 0}},
            {"keyctl", __NR_keyctl, {0}},
            {"unshare", __NR_unshare, {CLONE_NEWUSER}},
            {"setns", __NR_setns, {-1, 0}},
            {"mount", __NR_mount, {0, 0, 0, 0, 0}},
            {"pidfd_open", __NR_pidfd_open, {1, 0}},
            {"setsid", __NR_setsid, {0}},
            {"prctl(PR_SET_PDEATHSIG)", __NR_prctl, {PR_SET_PDEATHSIG, 0}},
            {"prctl(PR_SET_DUMPABLE)", __NR_prctl, {PR_SET_DUMPABLE, 1}},
            {"open_by_handle_at", __NR_open_by_handle_at, {-1, 0, 0}},
            {"memfd_create", __NR_memfd_create, {(long)"x", 0}},
            {"chdir", __NR_chdir, {(long)"/", 0}},
            {"ioctl(TIOCSTI)", __NR_ioctl, {0, TIOCSTI, 0}},
            {"fcntl(F_SETOWN)", __NR_fcntl, {1, F_SETOWN, 1}},
        };

        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                assert_killed_by_sigsys(run_sandboxed(raw_call_run, (void *)&calls[i]),
                                        calls[i].what);
}

Test(sandbox, thread_names_still_work, .exit_code = EXIT_OK)
{
        char name[16] = {0};

        apply_strict();
        if (prctl(PR_SET_NAME, "parser", 0, 0, 0) < 0 || prctl(PR_GET_NAME, name, 0, 0, 0) < 0)
                _exit(EXIT_FAILED);
        _exit(strcmp(name, "parser") == 0 ? EXIT_OK : EXIT_FAILED);
}

Test(sandbox, sigsys_names_the_syscall)
{
        siginfo_t si;

        memset(&si, 0, sizeof(si));
        si.si_signo = SIGSYS;
        si.si_code = SYS_SECCOMP;
        si.si_syscall = __NR_execve;
        cr_assert_eq(sandbox_sigsys_syscall(&si), __NR_execve);
        /* Raised by the target itself: no syscall. */
        si.si_code = SI_TKILL;
        cr_assert_eq(sandbox_sigsys_syscall(&si), -1);
        cr_assert_eq(sandbox_sigsys_syscall(NULL), -1);
        si.si_signo = SIGSEGV;
        si.si_code = SYS_SECCOMP;
        cr_assert_eq(sandbox_sigsys_syscall(&si), -1);
}

/* ---- reporting ---- */

static void exit_with_sigsys_info(int sig, siginfo_t *info, void *ucontext)
{
        (void)sig;
        (void)ucontext;
        _exit(info->si_code == SYS_SECCOMP && info->si_syscall == __NR_execve &&
                      info->si_arch == seccomp_arch_native()
                  ? EXIT_OK
                  : EXIT_FAILED);
}

Test(sandbox, sigsys_handler_sees_the_syscall, .exit_code = EXIT_OK)
{
        struct sigaction sa = {.sa_sigaction = exit_with_sigsys_info, .sa_flags = SA_SIGINFO};
        char *argv[] = {"/bin/true", NULL};

        cr_assert_eq(sigaction(SIGSYS, &sa, NULL), 0);
        apply_strict();
        execve("/bin/true", argv, environ);
        _exit(EXIT_NOT_BLOCKED);
}

/*
 * The way a runner reports: a handler installed before the sandbox with
 * SA_RESETHAND (the filter forbids installing SIG_DFL later) writes the
 * syscall out, then re-raises SIGSYS, which now kills the process.
 */
static int report_fd = -1;

static void report_sigsys(int sig, siginfo_t *info, void *ucontext)
{
        int nr = info->si_syscall;

        (void)ucontext;
        if (write(report_fd, &nr, sizeof(nr)) != sizeof(nr))
                _exit(EXIT_FAILED);
        raise(sig);
}

static void execve_true(void *userdata)
{
        char *argv[] = {"/bin/true", NULL};
        (void)userdata;

        execve("/bin/true", argv, environ);
}

Test(sandbox, runner_reports_the_syscall_then_dies)
{
        struct sigaction sa =
                             {
                                 .sa_sigaction = report_sigsys,
                                 .sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER,
                             },
                         old;
        const char *group;
        int pipefd[2], nr = -1;

        cr_assert_eq(pipe(pipefd), 0);
        report_fd = pipefd[1];
        cr_assert_eq(sigaction(SIGSYS, &sa, &old), 0);

        assert_killed_by_sigsys(run_sandboxed(execve_true, NULL), "execve");

        cr_assert_eq(sigaction(SIGSYS, &old, NULL), 0);
        close(pipefd[1]);
        cr_assert_eq(read(pipefd[0], &nr, sizeof(nr)), sizeof(nr));
        close(pipefd[0]);
        cr_assert_eq(nr, __NR_execve);
        cr_assert_str_eq(sandbox_syscall_name(nr), "execve");
        group = sandbox_syscall_group(nr);
        cr_assert_not_null(group);
        cr_assert_not_null(strstr(group, "process creation"), "group: %s", group);
}

Test(sandbox, syscall_names)
{
        const char *name = sandbox_syscall_name(__NR_openat);

        cr_assert_str_eq(name, "openat");
        cr_assert_eq(sandbox_syscall_name(__NR_openat), name, "the name is cached");
        cr_assert_str_eq(sandbox_syscall_name(__NR_execve), "execve");
        cr_assert_null(sandbox_syscall_name(-1));
        cr_assert_null(sandbox_syscall_name(1 << 20));
#ifdef __x86_64__
        /* Newer than libseccomp 2.5.4: named by the policy table. */
        cr_assert_str_eq(sandbox_syscall_name(469), "file_setattr");
#endif
}

Test(sandbox, syscall_groups)
{
        const char *group = sandbox_syscall_group(__NR_execve);

        cr_assert_not_null(group);
        cr_assert_not_null(strstr(group, "process creation"), "group: %s", group);
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_socket), "network"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_openat), "files"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_ptrace), "debugging"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_io_uring_setup), "kernel"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_rt_sigaction), "SIGSYS"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_kill), "signals to others"));
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_mmap), "executable memory"));
        /* Refused, but named by no group. */
        cr_assert_not_null(strstr(sandbox_syscall_group(__NR_alarm), "not in the allowlist"));
        /* Always allowed. */
        cr_assert_null(sandbox_syscall_group(__NR_getpid));
        cr_assert_null(sandbox_syscall_group(__NR_read));
        cr_assert_null(sandbox_syscall_group(-1));
}

/* ---- foreign ABIs ---- */

#ifdef __x86_64__
Test(sandbox, x32_syscalls_trap, .signal = SIGSYS)
{
        apply_strict();
        /* x32's getpid: harmless, but never a native x86_64 syscall. */
        syscall(0x40000000 | 39);
        _exit(EXIT_NOT_BLOCKED);
}

static long int80_getpid(void)
{
        long ret;

        /* i386 getpid is 20. int 0x80 clears r8-r15 on return. */
        __asm__ volatile("int $0x80"
                         : "=a"(ret)
                         : "a"(20L)
                         : "memory", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
        return ret;
}

static void i386_getpid(void *userdata)
{
        (void)userdata;
        int80_getpid();
}

static void exit_with_sigsys_arch(int sig, siginfo_t *info, void *ucontext)
{
        (void)sig;
        (void)ucontext;
        _exit(info->si_arch == AUDIT_ARCH_I386 && info->si_syscall == 20 ? EXIT_OK : EXIT_FAILED);
}

Test(sandbox, i386_syscalls_trap)
{
        struct sigaction sa = {.sa_sigaction = exit_with_sigsys_arch, .sa_flags = SA_SIGINFO}, old;
        int status;
        pid_t pid;

        /* Is there an i386 ABI at all (CONFIG_IA32_EMULATION, ia32_emulation=)? */
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(int80_getpid() == getpid() ? 0 : 1);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                cr_skip_test("this kernel has no i386 syscall ABI");

        cr_assert_eq(sigaction(SIGSYS, &sa, &old), 0);
        status = run_sandboxed(i386_getpid, NULL);
        cr_assert_eq(sigaction(SIGSYS, &old, NULL), 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK,
                  "expected a trap with si_arch i386, got status %#x", status);
}
#endif

/* ---- modes, limits, lifecycle ---- */

Test(sandbox, off_allows_fork, .exit_code = EXIT_OK)
{
        Sandbox *s = NULL;
        int status;
        pid_t pid;

        cr_assert_eq(sandbox_new(&s, SANDBOX_OFF), 0);
        cr_assert_eq(sandbox_apply(s), 0);
        pid = fork();
        if (pid < 0)
                _exit(EXIT_FAILED);
        if (pid == 0)
                _exit(7);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
                _exit(EXIT_FAILED);
        /* The rest of the sandbox still applies. */
        if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 || prctl(PR_GET_SECCOMP) != 0)
                _exit(EXIT_FAILED);
        _exit(EXIT_OK);
}

static bool rlimit_is_zero(int resource)
{
        struct rlimit rl;

        return getrlimit(resource, &rl) == 0 && rl.rlim_cur == 0 && rl.rlim_max == 0;
}

/* The value of "@key:" in /proc/@pid/status, or -1. */
static long proc_status_field(pid_t pid, const char *key)
{
        char path[64], line[256];
        long value = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "r");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':')
                        value = strtol(line + strlen(key) + 1, NULL, 10);
        fclose(f);
        return value;
}

/* prctl is refused after the filter, so the parent looks at the child. */
Test(sandbox, limits_after_apply)
{
        Sandbox *s = NULL;
        int go[2], ready[2], status;
        char byte = 0;
        pid_t pid;

        cr_assert_eq(sandbox_new(&s, SANDBOX_STRICT), 0);
        cr_assert_eq(pipe(go), 0);
        cr_assert_eq(pipe(ready), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (sandbox_apply(s) < 0)
                        _exit(EXIT_APPLY_FAILED);
                if (!rlimit_is_zero(RLIMIT_CORE) || !rlimit_is_zero(RLIMIT_FSIZE))
                        _exit(EXIT_FAILED);
                if (write(ready[1], "r", 1) != 1 || read(go[0], &byte, 1) != 1)
                        _exit(EXIT_FAILED);
                _exit(EXIT_OK);
        }
        cr_assert_eq(read(ready[0], &byte, 1), 1);
        cr_expect_eq(proc_status_field(pid, "NoNewPrivs"), 1);
        cr_expect_eq(proc_status_field(pid, "Seccomp"), SECCOMP_MODE_FILTER);
        cr_assert_eq(write(go[1], "g", 1), 1);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        sandbox_free(s);
}

Test(sandbox, mode_parse_and_name)
{
        SandboxMode m = SANDBOX_OFF;

        cr_assert_eq(sandbox_mode_parse("strict", &m), 0);
        cr_assert_eq(m, SANDBOX_STRICT);
        cr_assert_eq(sandbox_mode_parse("log", &m), 0);
        cr_assert_eq(m, SANDBOX_LOG);
        cr_assert_eq(sandbox_mode_parse("off", &m), 0);
        cr_assert_eq(m, SANDBOX_OFF);
        cr_assert_eq(sandbox_mode_parse("bogus", &m), -EINVAL);
        cr_assert_eq(sandbox_mode_parse("", &m), -EINVAL);
        cr_assert_eq(sandbox_mode_parse("Strict", &m), -EINVAL);
        cr_assert_eq(sandbox_mode_parse(NULL, &m), -EINVAL);
        cr_assert_eq(m, SANDBOX_OFF, "ret written on failure");
        cr_assert_str_eq(sandbox_mode_name(SANDBOX_STRICT), "strict");
        cr_assert_str_eq(sandbox_mode_name(SANDBOX_OFF), "off");
        cr_assert_str_eq(sandbox_mode_name(SANDBOX_LOG), "log");
        cr_assert_null(sandbox_mode_name((SandboxMode)7));
}

Test(sandbox, lifecycle)
{
        Sandbox *s = NULL;

        sandbox_free(NULL);
        cr_assert_eq(sandbox_new(NULL, SANDBOX_STRICT), -EINVAL);
        cr_assert_eq(sandbox_new(&s, (SandboxMode)7), -EINVAL);
        cr_assert_null(s);
        cr_assert_eq(sandbox_apply(NULL), -EINVAL);
        for (int i = 0; i < 3; i++) {
                cr_assert_eq(sandbox_new(&s, SANDBOX_STRICT), 0);
                sandbox_free(s);
                cr_assert_eq(sandbox_new(&s, SANDBOX_OFF), 0);
                sandbox_free(s);
                cr_assert_eq(sandbox_new(&s, SANDBOX_LOG), 0);
                sandbox_free(s);
        }
}

/* ---- the policy table ---- */

Test(sandbox, policy_table_is_well_formed)
{
        size_t n_allowed = 0, n_refused = 0;

        for (size_t g = 0; g < policy_n_groups; g++) {
                const PolicyGroup *group = &policy_groups[g];
                char summary[512];

                cr_assert(group->name && *group->name);
                cr_assert(group->reason && *group->reason);
                snprintf(summary, sizeof(summary), "%s: %s", group->name, group->reason);
                cr_assert_str_eq(group->summary, summary);
                cr_assert_gt(group->n_rules, 0, "group %s is empty", group->name);
                cr_assert(!(group->allowed && group->locked), "%s", group->name);
                n_allowed += group->allowed;
                n_refused += !group->allowed;

                for (size_t i = 0; i < group->n_rules; i++) {
                        const PolicyRule *rule = &group->rules[i];
                        int nr = policy_rule_nr(rule);

                        if (nr < 0)
                                continue; /* not on this architecture */
                        /* Each syscall is allowed by one group and refused
                         * for one reason. */
                        if (group->allowed)
                                cr_assert_eq(policy_find_allowed(nr), group,
                                             "%s is allowed by %s and an earlier group",
                                             rule->syscall, group->name);
                        else
                                cr_assert_eq(policy_find_refused(nr), group,
                                             "%s is refused by %s and an earlier group",
                                             rule->syscall, group->name);
                        /* Refused groups are reasons; the default action
                         * (or the worker) does the refusing. */
                        if (!group->allowed)
                                cr_assert(rule->action == POLICY_TRAP ||
                                              rule->action == POLICY_NOTIFY_REFUSE,
                                          "%s", rule->syscall);
                        /* Nothing a locked group names is allowed without
                         * conditions. */
                        if (group->locked) {
                                const PolicyGroup *a = policy_find_allowed(nr);

                                for (size_t k = 0; a && k < a->n_rules; k++)
                                        if (policy_rule_nr(&a->rules[k]) == nr)
                                                cr_assert_neq(a->rules[k].when[0].op, 0,
                                                              "locked %s allowed unconditionally",
                                                              rule->syscall);
                        }
                }
        }
        cr_assert_gt(n_allowed, 0);
        cr_assert_gt(n_refused, 0);
}

#ifdef __x86_64__
/* Every name in the table means something here, except those that do not
 * exist on x86_64. */
Test(sandbox, policy_names_resolve_on_x86_64)
{
        static const char *const absent[] = {"umount"};

        for (size_t g = 0; g < policy_n_groups; g++)
                for (size_t i = 0; i < policy_groups[g].n_rules; i++) {
                        const char *name = policy_groups[g].rules[i].syscall;
                        bool expected_absent = false;

                        for (size_t a = 0; a < sizeof(absent) / sizeof(absent[0]); a++)
                                expected_absent |= strcmp(name, absent[a]) == 0;
                        cr_assert_eq(policy_rule_nr(&policy_groups[g].rules[i]) < 0,
                                     expected_absent, "%s", name);
                }
}
#endif

/* ---- cost ---- */

static double now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
        qsort(v, n, sizeof(*v), compare_doubles);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One fork + (sandbox_apply) + _exit + waitpid; returns its wall time and,
 * with @s, the time the child spent in sandbox_apply (*ret_apply_ns). */
static double fork_once(const Sandbox *s, const int report_pipe[2], double *ret_apply_ns)
{
        double start = now_ns(), elapsed;
        int status;
        pid_t pid;

        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (s) {
                        double t0 = now_ns();
                        int r = sandbox_apply(s);
                        double dt = now_ns() - t0;

                        if (write(report_pipe[1], &dt, sizeof(dt)) != sizeof(dt))
                                _exit(EXIT_FAILED);
                        _exit(r == 0 ? 0 : EXIT_APPLY_FAILED);
                }
                _exit(0);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        elapsed = now_ns() - start;
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
        if (s)
                cr_assert_eq(read(report_pipe[0], ret_apply_ns, sizeof(*ret_apply_ns)),
                             sizeof(*ret_apply_ns));
        return elapsed;
}

/* ns per call of @fn over @n calls. */
static double syscall_loop(long (*fn)(void), int n)
{
        double start = now_ns();

        for (int i = 0; i < n; i++)
                fn();
        return (now_ns() - start) / n;
}

static long call_getpid(void)
{
        return syscall(SYS_getpid);
}

static long call_sigaction_query(void)
{
        struct sigaction old;

        return sigaction(SIGUSR1, NULL, &old);
}

static long call_fcntl_getfd(void)
{
        return fcntl(STDERR_FILENO, F_GETFD);
}

/*
 * Not a pass/fail test: it prints what a runner start costs with and
 * without sandbox_apply (bare and sandboxed forks interleaved, medians, so
 * that drift on a busy machine hits both alike), and what the filter adds
 * to a syscall. Run it alone for stable figures:
 *   test_sandbox -j1 --filter 'sandbox/apply_cost'
 */
Test(sandbox, apply_cost, .timeout = 120)
{
        enum { N_FORKS = 1000, N_CALLS = 200000 };
        static double bare[N_FORKS], sandboxed[N_FORKS], applied[N_FORKS];
        double results[6], bare_ns, sandboxed_ns, apply_ns, unused;
        Sandbox *s = NULL;
        int pipefd[2], status;
        pid_t pid;

        cr_assert_eq(sandbox_new(&s, SANDBOX_STRICT), 0);
        cr_assert_eq(pipe(pipefd), 0);

        for (int i = 0; i < 50; i++)
                fork_once(NULL, pipefd, &unused); /* warm up */
        for (int i = 0; i < N_FORKS; i++) {
                bare[i] = fork_once(NULL, pipefd, &unused);
                sandboxed[i] = fork_once(s, pipefd, &applied[i]);
        }
        bare_ns = median(bare, N_FORKS);
        sandboxed_ns = median(sandboxed, N_FORKS);
        apply_ns = median(applied, N_FORKS);

        /* The cost a target pays per syscall once the filter is in: one
         * syscall allowed without conditions (the kernel's seccomp cache
         * allows it without running the BPF), two allowed under conditions
         * (the BPF runs). */
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                results[0] = syscall_loop(call_getpid, N_CALLS);
                results[1] = syscall_loop(call_sigaction_query, N_CALLS);
                results[2] = syscall_loop(call_fcntl_getfd, N_CALLS);
                if (sandbox_apply(s) < 0)
                        _exit(EXIT_APPLY_FAILED);
                results[3] = syscall_loop(call_getpid, N_CALLS);
                results[4] = syscall_loop(call_sigaction_query, N_CALLS);
                results[5] = syscall_loop(call_fcntl_getfd, N_CALLS);
                if (write(pipefd[1], results, sizeof(results)) != sizeof(results))
                        _exit(EXIT_FAILED);
                _exit(0);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
        cr_assert_eq(read(pipefd[0], results, sizeof(results)), sizeof(results));

        fprintf(stderr,
                "sandbox cost (medians of %d): fork+_exit+wait %.1f us, "
                "fork+apply+_exit+wait %.1f us (+%.1f us, %+.0f%%); "
                "sandbox_apply in the child %.1f us\n"
                "syscall cost before -> after the filter (ns): getpid %.0f -> %.0f, "
                "rt_sigaction(query) %.0f -> %.0f, fcntl(F_GETFD) %.0f -> %.0f\n",
                N_FORKS, bare_ns / 1e3, sandboxed_ns / 1e3, (sandboxed_ns - bare_ns) / 1e3,
                100.0 * (sandboxed_ns - bare_ns) / bare_ns, apply_ns / 1e3, results[0], results[3],
                results[1], results[4], results[2], results[5]);

        close(pipefd[0]);
        close(pipefd[1]);
        sandbox_free(s);
}
