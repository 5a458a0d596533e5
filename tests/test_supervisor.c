/*
 * Tests of sandbox/supervisor.c: a test process plays the worker (it polls
 * the supervisor and answers notifications) for a forked "runner" under the
 * sandbox. Log mode reports each refused syscall once and lets it run; a
 * policy directory lets read-only opens below it through, opened by the
 * supervisor, and refuses everything else with SIGSYS.
 */
#include "sandbox/internal.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervisor.h"

#include <criterion/criterion.h>
#include <elf.h>
#include <sched.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#define EXIT_OK 42
#define EXIT_FAILED 1
#define EXIT_NOT_BLOCKED 3

TestSuite(supervisor, .timeout = 30);

typedef struct Events {
        cJSON *list;
} Events;

static void collect(void *userdata, const cJSON *event)
{
        Events *e = userdata;

        cJSON_AddItemToArray(e->list, cJSON_Duplicate(event, 1));
}

/* Runs @fn(@arg) in a child under @s, supervising it like a worker (for a
 * runner that ends with a leak check with @leak). Returns the child's wait
 * status; events land in @events. */
static int supervise_as(Sandbox *s, bool leak, void (*fn)(void *), void *arg, Events *events)
{
        SandboxSupervisor *sup = NULL;
        int status = 0, pidfd;
        pid_t pid;

        cr_assert_eq(sandbox_supervisor_new(&sup, s), 0);
        cr_assert_not_null(sup, "this sandbox needs a supervisor");
        if (leak)
                sandbox_supervisor_allow_leak_check(sup);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if ((leak ? sandbox_apply_leak_check(s) : sandbox_apply(s)) < 0)
                        _exit(2);
                fn(arg);
                _exit(EXIT_OK);
        }
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        sandbox_supervisor_started(sup, pid, pidfd);
        for (;;) {
                struct pollfd p = {.fd = sandbox_supervisor_fd(sup), .events = POLLIN};

                if (poll(&p, 1, 20) > 0)
                        cr_assert_eq(sandbox_supervisor_dispatch(sup, collect, events), 0);
                if (waitpid(pid, &status, WNOHANG) == pid)
                        break;
        }
        sandbox_supervisor_free(sup);
        close(pidfd);
        return status;
}

static int supervise(Sandbox *s, void (*fn)(void *), void *arg, Events *events)
{
        return supervise_as(s, false, fn, arg, events);
}

static Sandbox *new_sandbox(SandboxMode mode, const char *policy)
{
        SandboxOptions o = {.mode = mode, .policy_json = policy, .no_namespaces = true};
        char err[512] = "";
        Sandbox *s = NULL;

        cr_assert_eq(sandbox_new_with(&s, &o, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(sandbox_prepare(s), 0);
        return s;
}

static const cJSON *find_event(const Events *e, const char *syscall)
{
        const cJSON *ev;

        cJSON_ArrayForEach(ev, e->list)
        {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "syscall");

                if (cJSON_IsString(name) && strcmp(name->valuestring, syscall) == 0)
                        return ev;
        }
        return NULL;
}

static int count_events(const Events *e, const char *syscall)
{
        const cJSON *ev;
        int n = 0;

        cJSON_ArrayForEach(ev, e->list)
        {
                const cJSON *name = cJSON_GetObjectItemCaseSensitive(ev, "syscall");

                n += cJSON_IsString(name) && strcmp(name->valuestring, syscall) == 0;
        }
        return n;
}

static const char *field(const cJSON *ev, const char *key)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);

        return cJSON_IsString(v) ? v->valuestring : "";
}

/* ---- log mode ---- */

static void uses_refused_syscalls(void *arg)
{
        char buf[256];
        int fd;

        (void)arg;
        for (int i = 0; i < 3; i++)
                if (!getcwd(buf, sizeof(buf)))
                        _exit(EXIT_FAILED);
        fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
                _exit(EXIT_FAILED);
        close(fd);
}

Test(supervisor, log_mode_reports_each_syscall_once_and_lets_it_run)
{
        Sandbox *s = new_sandbox(SANDBOX_LOG, NULL);
        Events e = {.list = cJSON_CreateArray()};
        int status = supervise(s, uses_refused_syscalls, NULL, &e);
        const cJSON *ev;

        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cr_expect_eq(count_events(&e, "getcwd"), 1, "getcwd reported once");
        ev = find_event(&e, "openat");
        cr_assert_not_null(ev, "openat reported");
        cr_expect_str_eq(field(ev, "event"), "log");
        cr_expect_str_eq(field(ev, "path"), "/proc/self/status");
        cr_expect(strstr(field(ev, "group"), "files"), "%s", field(ev, "group"));
        cr_expect_null(find_event(&e, "read"), "allowed syscalls are not reported");

        /* The same worker reports nothing twice, runner after runner. */
        cJSON_Delete(e.list);
        e.list = cJSON_CreateArray();
        status = supervise(s, uses_refused_syscalls, NULL, &e);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cr_expect_eq(cJSON_GetArraySize(e.list), 0);
        cJSON_Delete(e.list);
        sandbox_free(s);
}

/* ---- process creation ---- */

static int seen_nr = -2;

static void record_nr(int sig, siginfo_t *si, void *uctx)
{
        (void)sig;
        (void)uctx;
        seen_nr = sandbox_sigsys_syscall(si);
        /* Exit codes: 101 clone, 102 openat, 100 anything else. */
        _exit(seen_nr == __NR_clone ? 101 : seen_nr == __NR_openat ? 102 : 100);
}

static void call_system(void *arg)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "touch %s", (const char *)arg);
        (void)!system(cmd);
        _exit(EXIT_NOT_BLOCKED);
}

static void call_fork(void *arg)
{
        (void)arg;
        if (fork() == 0)
                _exit(0);
        _exit(EXIT_NOT_BLOCKED);
}

/* Runs @fn under strict mode with the runner's kind of SIGSYS handler;
 * returns the syscall number the handler saw, or -1. */
static int refused_syscall(void (*fn)(void *), void *arg, Events *e)
{
        struct sigaction sa = {.sa_sigaction = record_nr, .sa_flags = SA_SIGINFO}, old;
        Sandbox *s = new_sandbox(SANDBOX_STRICT, NULL);
        int status;

        /* Installed before the fork: the filter refuses rt_sigaction(SIGSYS). */
        cr_assert_eq(sigaction(SIGSYS, &sa, &old), 0);
        status = supervise(s, fn, arg, e);
        sigaction(SIGSYS, &old, NULL);
        sandbox_free(s);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) >= 100, "status %#x", status);
        return WEXITSTATUS(status) == 101 ? __NR_clone : -1;
}

/* system() blocks every signal around clone: a trap would kill the runner
 * without naming the syscall; the supervisor's SIGSYS waits for the mask. */
Test(supervisor, system_is_refused_and_named)
{
        Events e = {.list = cJSON_CreateArray()};
        char marker[] = "/tmp/snapfuzz-sup-system-XXXXXX";
        int fd = mkstemp(marker);

        cr_assert_geq(fd, 0);
        close(fd);
        unlink(marker);
        cr_assert_eq(refused_syscall(call_system, marker, &e), __NR_clone);
        cr_assert_eq(access(marker, F_OK), -1, "the command ran");
        cJSON_Delete(e.list);
}

Test(supervisor, fork_is_refused_and_named)
{
        Events e = {.list = cJSON_CreateArray()};

        cr_assert_eq(refused_syscall(call_fork, NULL, &e), __NR_clone);
        cJSON_Delete(e.list);
}

/* ---- policy directories ---- */

typedef struct Tree {
        char dir[64];     /* the policy's directory */
        char secret[128]; /* a file next to it */
        char policy[256];
} Tree;

static void make_tree(Tree *t)
{
        char path[256];
        FILE *f;

        snprintf(t->dir, sizeof(t->dir), "/tmp/snapfuzz-sup-XXXXXX");
        cr_assert_not_null(mkdtemp(t->dir));
        snprintf(path, sizeof(path), "%s/allowed", t->dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/allowed/data", t->dir);
        f = fopen(path, "w");
        fputs("hello", f);
        fclose(f);
        snprintf(t->secret, sizeof(t->secret), "%s/secret", t->dir);
        f = fopen(t->secret, "w");
        fputs("do not read", f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/allowed/link", t->dir);
        cr_assert_eq(symlink(t->secret, path), 0);
        snprintf(t->policy, sizeof(t->policy),
                 "{\"allow\": [{\"syscall\": \"openat\", \"under\": \"%s/allowed\"}]}", t->dir);
}

struct open_try {
        char path[256];
        int flags;
        const char *expect; /* the content, or NULL for "must not open" */
        int expect_errno;
};

static void try_open(void *arg)
{
        struct open_try *t = arg;
        char buf[64] = {0};
        int fd = open(t->path, t->flags | O_CLOEXEC);

        if (fd < 0)
                _exit(t->expect_errno && errno == t->expect_errno ? EXIT_OK : EXIT_FAILED);
        if (!t->expect)
                _exit(EXIT_NOT_BLOCKED);
        if (read(fd, buf, sizeof(buf) - 1) < 0 || strcmp(buf, t->expect) != 0)
                _exit(EXIT_FAILED);
        close(fd);
}

static int run_open(const Tree *tree, const char *rel, int flags, const char *expect,
                    int expect_errno, Events *e)
{
        Sandbox *s = new_sandbox(SANDBOX_STRICT, tree->policy);
        struct open_try t = {.flags = flags, .expect = expect, .expect_errno = expect_errno};
        int status;

        snprintf(t.path, sizeof(t.path), "%s/%s", tree->dir, rel);
        status = supervise(s, try_open, &t, e);
        sandbox_free(s);
        return status;
}

Test(supervisor, reads_under_the_directory_work)
{
        Events e = {.list = cJSON_CreateArray()};
        Tree tree;
        int status;

        make_tree(&tree);
        status = run_open(&tree, "allowed/data", O_RDONLY, "hello", 0, &e);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        /* A missing file is an ordinary error, not an escape. */
        status = run_open(&tree, "allowed/missing", O_RDONLY, NULL, ENOENT, &e);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cr_expect_eq(cJSON_GetArraySize(e.list), 0);
        cJSON_Delete(e.list);
}

static void expect_refused(const Tree *tree, const char *rel, int flags, const char *why)
{
        Events e = {.list = cJSON_CreateArray()};
        int status = run_open(tree, rel, flags, NULL, 0, &e);
        const cJSON *ev;

        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "%s: status %#x", rel, status);
        if (why) {
                ev = find_event(&e, "openat");
                cr_assert_not_null(ev, "%s: no refusal reported", rel);
                cr_expect_str_eq(field(ev, "event"), "refused");
                cr_expect(strstr(field(ev, "why"), why), "%s: %s", rel, field(ev, "why"));
                cr_expect(strstr(field(ev, "path"), rel), "%s", field(ev, "path"));
        }
        cJSON_Delete(e.list);
}

Test(supervisor, everything_else_is_refused_with_sigsys)
{
        Tree tree;

        make_tree(&tree);
        expect_refused(&tree, "secret", O_RDONLY, "outside");
        expect_refused(&tree, "allowed/../secret", O_RDONLY, "leaves");
        expect_refused(&tree, "allowed/link", O_RDONLY, "leaves");
        expect_refused(&tree, "allowedness", O_RDONLY, "outside");
        /* Writing never reaches the supervisor: the filter traps it. */
        expect_refused(&tree, "allowed/data", O_WRONLY, NULL);
        expect_refused(&tree, "allowed/new", O_RDONLY | O_CREAT, NULL);
}

static void open_relative(void *arg)
{
        (void)arg;
        open("data", O_RDONLY);
        _exit(EXIT_NOT_BLOCKED);
}

Test(supervisor, relative_paths_are_refused)
{
        Events e = {.list = cJSON_CreateArray()};
        Tree tree;
        Sandbox *s;
        int status;

        make_tree(&tree);
        s = new_sandbox(SANDBOX_STRICT, tree.policy);
        status = supervise(s, open_relative, NULL, &e);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
        cr_expect(strstr(field(find_event(&e, "openat"), "why"), "relative"));
        cJSON_Delete(e.list);
        sandbox_free(s);
}

static void open_secret(void *arg)
{
        open(arg, O_RDONLY);
        _exit(EXIT_NOT_BLOCKED);
}

Test(supervisor, a_refused_open_names_openat_to_the_handler)
{
        Events e = {.list = cJSON_CreateArray()};
        struct sigaction sa = {.sa_sigaction = record_nr, .sa_flags = SA_SIGINFO}, old;
        Tree tree;
        Sandbox *s;
        int status;

        make_tree(&tree);
        s = new_sandbox(SANDBOX_STRICT, tree.policy);
        cr_assert_eq(sigaction(SIGSYS, &sa, &old), 0);
        status = supervise(s, open_secret, tree.secret, &e);
        sigaction(SIGSYS, &old, NULL);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 102,
                  "the handler should see openat; status %#x", status);
        cJSON_Delete(e.list);
        sandbox_free(s);
}

/* ---- sanitizers ---- */

#define MARK_ADDR 0x5e0000000000UL

/* A mapping only the runner has, then its own maps, which must show it. */
static void read_own_maps(void *arg)
{
        static char buf[1 << 16];
        char want[64];
        size_t len = 0;
        ssize_t n;
        int fd;

        (void)arg;
        if (mmap((void *)MARK_ADDR, 7 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0) == MAP_FAILED)
                _exit(EXIT_FAILED);
        fd = (int)syscall(SYS_open, "/proc/self/maps", O_RDONLY); /* as ASan does */
        if (fd < 0)
                _exit(EXIT_FAILED);
        while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
                len += (size_t)n;
        buf[len] = '\0';
        snprintf(want, sizeof(want), "%lx-%lx", MARK_ADDR, MARK_ADDR + 7 * 4096);
        if (!strstr(buf, want))
                _exit(EXIT_FAILED);
}

/* A sanitizer's report reads /proc/self/maps: the worker opens the
 * runner's for it (and nothing else of /proc). */
Test(supervisor, a_sanitizer_reads_the_runners_own_maps)
{
        Events e = {.list = cJSON_CreateArray()};
        Sandbox *s = new_sandbox(SANDBOX_STRICT, NULL);
        int status;

        s->policy.sanitizer = true; /* as sandbox_prepare() does when it finds one */
        cr_assert_eq(sandbox_compile_programs(s), 0);
        status = supervise(s, read_own_maps, NULL, &e);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        status = supervise(s, open_secret, "/proc/self/environ", &e);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
        cJSON_Delete(e.list);
        sandbox_free(s);
}

/* ---- leak checks ---- */

/* Like supervise(), for a runner that ends with a leak check. */
static int supervise_leak_check(Sandbox *s, void (*fn)(void *), void *arg, Events *events)
{
        return supervise_as(s, true, fn, arg, events);
}

static Sandbox *new_leak_sandbox(void)
{
        SandboxOptions o = {.mode = SANDBOX_STRICT, .no_namespaces = true, .leak_check = true};
        char err[512] = "";
        Sandbox *s = NULL;

        cr_assert_eq(sandbox_new_with(&s, &o, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(sandbox_prepare(s), 0);
        s->policy.sanitizer = true; /* as sandbox_prepare() does when it finds one */
        cr_assert_eq(sandbox_compile_programs(s), 0);
        cr_assert(sandbox_can_check_leaks(s));
        return s;
}

static volatile int tracer_may_start;

/* What LeakSanitizer's tracer does to the runner: attach, read the
 * registers, list the threads, detach. */
static int leak_tracer(void *arg)
{
        pid_t runner = (pid_t)(intptr_t)arg;
        struct user_regs_struct regs;
        struct iovec iov = {.iov_base = &regs, .iov_len = sizeof(regs)};
        char path[64], dents[1024];
        int status, fd;

        while (!tracer_may_start)
                sched_yield();
        if (ptrace(PTRACE_ATTACH, runner, NULL, NULL) < 0)
                syscall(SYS_exit, 10);
        if (waitpid(runner, &status, __WALL) != runner)
                syscall(SYS_exit, 11);
        if (ptrace(PTRACE_GETREGSET, runner, (void *)NT_PRSTATUS, &iov) < 0)
                syscall(SYS_exit, 12);
        snprintf(path, sizeof(path), "/proc/%d/task", (int)runner);
        fd = (int)syscall(SYS_open, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0 || syscall(SYS_getdents, fd, dents, sizeof(dents)) <= 0)
                syscall(SYS_exit, 13);
        snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)runner, (int)runner);
        if (syscall(SYS_open, path, O_RDONLY) < 0)
                syscall(SYS_exit, 14);
        if (ptrace(PTRACE_DETACH, runner, NULL, NULL) < 0)
                syscall(SYS_exit, 15);
        syscall(SYS_exit, 0);
        return 0;
}

static void stop_the_world(void *arg)
{
        static uint8_t stack[64 * 1024] __attribute__((aligned(16)));
        int status;
        pid_t tracer;

        (void)arg;
        tracer =
            clone(leak_tracer, stack + sizeof(stack),
                  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, (void *)(intptr_t)getpid());
        if (tracer < 0)
                _exit(EXIT_FAILED);
        (void)prctl(PR_SET_PTRACER, tracer, 0, 0, 0);
        tracer_may_start = 1;
        while (waitpid(tracer, &status, __WALL) < 0)
                ;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                _exit(20 + (WIFEXITED(status) ? WEXITSTATUS(status) : 0));
}

/* The leak-check runner lets LeakSanitizer stop the world... */
Test(supervisor, a_leak_check_may_trace_the_runner_itself)
{
        Events e = {.list = cJSON_CreateArray()};
        Sandbox *s = new_leak_sandbox();
        int status = supervise_leak_check(s, stop_the_world, NULL, &e);

        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cJSON_Delete(e.list);
        sandbox_free(s);
}

static void attach_to_parent(void *arg)
{
        (void)arg;
        ptrace(PTRACE_ATTACH, getppid(), NULL, NULL);
}

static void fork_a_process(void *arg)
{
        (void)arg;
        pid_t pid = fork();
        if (pid == 0)
                _exit(0);
}

static void read_other_task(void *arg)
{
        char path[64];

        (void)arg;
        snprintf(path, sizeof(path), "/proc/%d/task", (int)getppid());
        (void)syscall(SYS_open, path, O_RDONLY | O_DIRECTORY);
}

/* ... and nothing more: no other process to trace, fork or look at. */
Test(supervisor, a_leak_check_may_not_trace_fork_or_look_elsewhere)
{
        Events e = {.list = cJSON_CreateArray()};
        Sandbox *s = new_leak_sandbox();
        int status;

        status = supervise_leak_check(s, attach_to_parent, NULL, &e);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "ptrace: status %#x", status);
        status = supervise_leak_check(s, fork_a_process, NULL, &e);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "fork: status %#x", status);
        status = supervise_leak_check(s, read_other_task, NULL, &e);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "open: status %#x", status);
        /* A fuzzing runner of the same sandbox may not trace even itself. */
        status = supervise(s, stop_the_world, NULL, &e);
        cr_assert(!WIFEXITED(status) || WEXITSTATUS(status) != EXIT_OK, "status %#x", status);
        cJSON_Delete(e.list);
        sandbox_free(s);
}

Test(supervisor, not_needed_with_the_sandbox_off)
{
        SandboxSupervisor *sup = (SandboxSupervisor *)1;
        Sandbox *s = NULL;

        cr_assert_eq(sandbox_new(&s, SANDBOX_OFF), 0);
        cr_assert_eq(sandbox_supervisor_new(&sup, s), 0);
        cr_assert_null(sup);
        cr_assert_eq(sandbox_supervisor_fd(NULL), -1);
        sandbox_supervisor_free(NULL);
        sandbox_free(s);
}
