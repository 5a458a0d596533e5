/*
 * The escape suite: the real snapfuzz binary, under the default sandbox, on
 * each hostile target of tests/escape/. Each target tries one thing on the
 * magic input "ESCAPE!", which the test hands over as a seed, so that the
 * attempt happens in the warm-up pass. For each, the test checks that
 *   - the attempt is reported as a crash of kind `sandbox` naming the
 *     syscall (or, for the two attempts that are not syscalls the filter
 *     refuses, the documented outcome);
 *   - the side effect did not happen: no file created, no secret printed,
 *     no connection accepted, the test's victim process alive, snapfuzz and
 *     its worker alive (the run ends normally), no process left behind;
 *   - the input was recovered (it is the magic input, and verification
 *     reproduced it), and `snapfuzz reproduce` replays it.
 * Three control runs with --sandbox off show the checks would see an escape.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/sfrun.h"

#define MAGIC "ESCAPE!"
#define SECRET "SNAPFUZZ-TEST-SECRET-7f3a9c"
/* In the environment of snapfuzz and so of its workers: what a target that
 * reads /proc/<pid>/environ through the worker would see. */
#define ENV_SECRET "snapfuzz-env-secret-51d2e8"

TestSuite(escape, .timeout = 240);

typedef struct Escape {
        const char *name;    /* tests/escape/<name>.c */
        const char *syscall; /* named in the report ("the sandbox blocked syscall X") */
        const char *kind;    /* NULL: sandbox */
        const char *marker;  /* a file in the test directory that must not appear */
        bool policy;         /* run with a policy allowing reads under DIR/allowed */
        bool proc_link;      /* DIR/allowed/proc is a symlink to /proc */
        const char *sandbox; /* NULL: the default (strict) */
} Escape;

typedef struct World {
        char *dir;
        char out[600], seeds[600], tag[64];
        int listener, port;
        pid_t victim;
} World;

/* The directory, seeds, secret, listener and victim an attempt aims at. */
static void world_init(World *w)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        char path[700], port[16], victim[16];
        FILE *f;

        w->dir = sf_tmpdir();
        snprintf(w->out, sizeof(w->out), "%s/out", w->dir);
        snprintf(w->seeds, sizeof(w->seeds), "%s/seeds", w->dir);
        cr_assert_eq(mkdir(w->seeds, 0755), 0);
        snprintf(path, sizeof(path), "%s/magic", w->seeds);
        f = fopen(path, "w");
        fputs(MAGIC, f);
        fclose(f);
        snprintf(path, sizeof(path), "%s/secret", w->dir);
        f = fopen(path, "w");
        fputs(SECRET "\n", f);
        fclose(f);
        chmod(path, 0600);
        snprintf(path, sizeof(path), "%s/allowed", w->dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/allowed/ok", w->dir);
        f = fopen(path, "w");
        fputs("fine to read\n", f);
        fclose(f);

        w->listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        cr_assert_geq(w->listener, 0);
        cr_assert_eq(bind(w->listener, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(listen(w->listener, 8), 0);
        cr_assert_eq(getsockname(w->listener, (struct sockaddr *)&a, &len), 0);
        w->port = ntohs(a.sin_port);

        w->victim = fork();
        cr_assert_geq(w->victim, 0);
        if (w->victim == 0) {
                /* Dies with the test, whatever happens to it. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                alarm(600);
                for (;;)
                        pause();
        }

        snprintf(w->tag, sizeof(w->tag), "%d-%ld", (int)getpid(), (long)time(NULL));
        snprintf(port, sizeof(port), "%d", w->port);
        snprintf(victim, sizeof(victim), "%d", (int)w->victim);
        setenv("SNAPFUZZ_ESCAPE_DIR", w->dir, 1);
        setenv("SNAPFUZZ_ESCAPE_PORT", port, 1);
        setenv("SNAPFUZZ_ESCAPE_VICTIM", victim, 1);
        /* Every process snapfuzz starts inherits the tag. */
        setenv("SNAPFUZZ_ESCAPE_TAG", w->tag, 1);
        setenv("SECRET_TOKEN", ENV_SECRET, 1);
}

static void world_deinit(World *w)
{
        kill(w->victim, SIGKILL);
        waitpid(w->victim, NULL, 0);
        close(w->listener);
}

static bool victim_alive(const World *w)
{
        int status;

        return waitpid(w->victim, &status, WNOHANG) == 0 && kill(w->victim, 0) == 0;
}

static bool connection_accepted(const World *w)
{
        int fd = accept(w->listener, NULL, NULL);

        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/* Processes whose environment carries this run's tag, other than us. */
static int tagged_processes(const World *w)
{
        char needle[96], path[64], buf[1 << 16];
        struct dirent *de;
        DIR *d = opendir("/proc");
        int n = 0;

        snprintf(needle, sizeof(needle), "SNAPFUZZ_ESCAPE_TAG=%s", w->tag);
        while (d && (de = readdir(d))) {
                pid_t pid = (pid_t)atoi(de->d_name);
                ssize_t len;
                int fd;

                if (pid <= 0 || pid == getpid())
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                len = read(fd, buf, sizeof(buf));
                close(fd);
                for (ssize_t i = 0; len > 0 && i < len; i += (ssize_t)strlen(buf + i) + 1)
                        if (strcmp(buf + i, needle) == 0)
                                n++;
        }
        if (d)
                closedir(d);
        return n;
}

/* Workers die with the coordinator (parent-death signal), a moment later. */
static int processes_left_behind(const World *w)
{
        int n = 0;

        for (int i = 0; i < 100; i++) {
                n = tagged_processes(w);
                if (n == 0)
                        return 0;
                usleep(20000);
        }
        return n;
}

static bool file_exists(const World *w, const char *name)
{
        char path[700];

        snprintf(path, sizeof(path), "%s/%s", w->dir, name);
        return access(path, F_OK) == 0;
}

static void run(World *w, const Escape *e, SfRun *r)
{
        char policy[700];
        const char *args[32];
        int n = 0;

        args[n++] = "run";
        args[n++] = sf_target(e->name);
        args[n++] = w->seeds;
        args[n++] = "--out";
        args[n++] = w->out;
        args[n++] = "--workers";
        args[n++] = "1";
        args[n++] = "--max-total-time";
        args[n++] = "60";
        args[n++] = "--seed";
        args[n++] = "1";
        if (e->sandbox) {
                args[n++] = "--sandbox";
                args[n++] = e->sandbox;
        }
        if (e->proc_link) {
                char link[700];

                snprintf(link, sizeof(link), "%s/allowed/proc", w->dir);
                cr_assert_eq(symlink("/proc", link), 0);
        }
        if (e->policy) {
                FILE *f;

                snprintf(policy, sizeof(policy), "%s/policy.json", w->dir);
                f = fopen(policy, "w");
                fprintf(f, "{\"allow\": [{\"syscall\": \"openat\", \"under\": \"%s/allowed\"}]}\n",
                        w->dir);
                fclose(f);
                args[n++] = "--sandbox-policy";
                args[n++] = policy;
        }
        args[n] = NULL;
        sf_run(r, 120, args);
}

static void expect_reproduce(const World *w, const char *id, const char *kind)
{
        const char *args[] = {"reproduce", id, "--out", w->out, NULL};
        char want[64];
        SfRun r;

        sf_run(&r, 60, args);
        snprintf(want, sizeof(want), "REPRODUCED: %s", kind);
        cr_expect_eq(r.exit_code, 1, "reproduce should still crash; stderr:\n%s", r.err);
        cr_expect(strstr(r.out, want), "reproduce output lacks '%s':\n%s", want, r.out);
        sf_run_free(&r);
}

/* What no escape may leave, whatever the attempt. */
static void expect_no_side_effects(World *w, const Escape *e, const SfRun *r)
{
        if (e->marker)
                cr_expect_not(file_exists(w, e->marker), "%s: %s was created", e->name, e->marker);
        cr_expect_not(connection_accepted(w), "%s: the listener got a connection", e->name);
        cr_expect(victim_alive(w), "%s: the victim process was killed", e->name);
        cr_expect_not(strstr(r->out, SECRET) || strstr(r->err, SECRET),
                      "%s: the secret was printed", e->name);
        cr_expect_not(strstr(r->out, ENV_SECRET) || strstr(r->err, ENV_SECRET),
                      "%s: the environment's secret was printed", e->name);
        cr_expect_not(strstr(r->out, "root:") || strstr(r->err, "root:"),
                      "%s: /etc/shadow was printed", e->name);
        cr_expect_not(strstr(r->err, "starting a new one"), "%s: a worker died:\n%s", e->name,
                      r->err);
        cr_expect_eq(processes_left_behind(w), 0, "%s: processes left behind", e->name);
}

static void escape_is_stopped(const Escape *e)
{
        const char *kind = e->kind ? e->kind : "sandbox";
        World w;
        SfRun r;
        char *id, *field, want[128], input[700];
        size_t len;
        uint8_t *data;

        world_init(&w);
        run(&w, e, &r);
        cr_assert_eq(r.exit_code, 1, "%s: expected exit 1 (crash found), got %d; stderr:\n%s",
                     e->name, r.exit_code, r.err);
        expect_no_side_effects(&w, e, &r);
        sf_run_free(&r);

        id = sf_only_crash(w.out);
        field = sf_crash_field(w.out, id, "kind");
        cr_expect_str_eq(field, kind, "%s: kind", e->name);
        free(field);
        field = sf_crash_field(w.out, id, "message");
        if (e->syscall) {
                snprintf(want, sizeof(want), "the sandbox blocked syscall %s ", e->syscall);
                cr_expect(strstr(field, want), "%s: the report should name %s: %s", e->name,
                          e->syscall, field);
        }
        free(field);
        field = sf_crash_field(w.out, id, "reproduced");
        cr_expect_str_eq(field, "true", "%s: verification", e->name);
        free(field);
        field = sf_crash_field(w.out, id, "sandbox");
        cr_expect(strstr(field, "\"mode\":\"strict\""), "%s: sandbox %s", e->name, field);
        cr_expect(!e->policy || strstr(field, "\"policy\":{\"allow\""), "%s: sandbox %s", e->name,
                  field);
        free(field);
        field = sf_crash_field(w.out, id, "output");
        cr_expect_not(strstr(field, SECRET), "%s: the secret is in crash.json", e->name);
        free(field);
        snprintf(input, sizeof(input), "%s/crashes/%s/crash.json", w.out, id);
        data = sf_read(input, &len);
        cr_expect(data && !memmem(data, len, ENV_SECRET, strlen(ENV_SECRET)),
                  "%s: the environment's secret is in crash.json", e->name);
        free(data);

        snprintf(input, sizeof(input), "%s/crashes/%s/input", w.out, id);
        data = sf_read(input, &len);
        cr_expect(data && len == strlen(MAGIC) && memcmp(data, MAGIC, len) == 0,
                  "%s: the recovered input is the magic input", e->name);
        free(data);

        if (e->policy) {
                /* crash.json carries the policy: reproduce needs no file. */
                char policy[700];

                snprintf(policy, sizeof(policy), "%s/policy.json", w.dir);
                unlink(policy);
        }
        expect_reproduce(&w, id, kind);
        cr_expect_eq(processes_left_behind(&w), 0, "%s: processes left behind", e->name);
        free(id);
        world_deinit(&w);
}

#define ESCAPE_TEST(test_name, ...)                                                                \
        Test(escape, test_name)                                                                    \
        {                                                                                          \
                static const Escape e = {.name = "escape_" #test_name, __VA_ARGS__};               \
                escape_is_stopped(&e);                                                             \
        }

/* Files. */
ESCAPE_TEST(create_file, .syscall = "openat", .marker = "created")
ESCAPE_TEST(read_secret, .syscall = "openat")
ESCAPE_TEST(read_shadow, .syscall = "openat")
ESCAPE_TEST(proc_self_mem, .syscall = "openat")
ESCAPE_TEST(policy_escape, .syscall = "openat", .policy = true)
ESCAPE_TEST(memfd_exec, .syscall = "memfd_create")
/* The worker's environment and command line, through /proc. */
ESCAPE_TEST(proc_self_environ, .syscall = "openat")
ESCAPE_TEST(proc1_environ, .syscall = "openat")
ESCAPE_TEST(proc1_cmdline, .syscall = "openat")
ESCAPE_TEST(proc_via_symlink, .syscall = "openat", .policy = true, .proc_link = true)

/* With a policy that opens files under a directory, /proc outside it is
 * still refused (the worker opens only below that directory). */
Test(escape, proc_environ_with_a_policy)
{
        static const Escape e = {
            .name = "escape_proc_self_environ", .syscall = "openat", .policy = true};
        escape_is_stopped(&e);
}
/* The system files every runner may read (sandbox/sysfiles.c): only read,
 * only below their directories, never mapped writable and executable. */
ESCAPE_TEST(sysfile_write, .syscall = "openat")
ESCAPE_TEST(sysfile_dotdot, .syscall = "openat")
ESCAPE_TEST(sysfile_exec_map, .syscall = "mmap")
/* Programs and processes. */
ESCAPE_TEST(exec_shell, .syscall = "execve", .marker = "executed")
ESCAPE_TEST(system_shell, .syscall = "clone", .marker = "system")
ESCAPE_TEST(fork_outlive, .syscall = "clone", .marker = "outlived")
ESCAPE_TEST(setsid, .syscall = "setsid")
ESCAPE_TEST(pdeathsig, .syscall = "prctl")
/* Network. */
ESCAPE_TEST(connect_tcp, .syscall = "socket")
/* Signals. */
ESCAPE_TEST(kill_worker, .syscall = "kill")
ESCAPE_TEST(kill_coordinator, .syscall = "kill")
ESCAPE_TEST(kill_victim, .syscall = "kill")
ESCAPE_TEST(tgkill_victim, .syscall = "tgkill")
ESCAPE_TEST(sigsys_ignore, .syscall = "rt_sigaction")
/* Other processes' memory. */
ESCAPE_TEST(ptrace_worker, .syscall = "ptrace")
ESCAPE_TEST(process_vm_writev, .syscall = "process_vm_writev")
/* Executable memory. */
ESCAPE_TEST(mmap_exec, .syscall = "mmap")
ESCAPE_TEST(mprotect_exec, .syscall = "mprotect")
/* Around seccomp, into the kernel. */
ESCAPE_TEST(io_uring, .syscall = "io_uring_setup")
ESCAPE_TEST(bpf, .syscall = "bpf")
ESCAPE_TEST(userfaultfd, .syscall = "userfaultfd")
ESCAPE_TEST(seccomp_filter, .syscall = "seccomp")
ESCAPE_TEST(unshare_user, .syscall = "unshare")
ESCAPE_TEST(mount_tmpfs, .syscall = "mount")
ESCAPE_TEST(add_key, .syscall = "add_key")
ESCAPE_TEST(raise_fsize, .syscall = "prlimit64")
ESCAPE_TEST(tiocsti, .syscall = "ioctl")
/* Blinding the reporting: the crash still arrives, from shared memory. */
ESCAPE_TEST(close_fds_then_crash, .kind = "segv")

/* A descriptor opened before the sandbox is closed in the runner: the
 * write goes nowhere, and nothing crashes. */
Test(escape, inherited_descriptors_are_closed)
{
        World w;
        SfRun r;
        struct stat st;
        char path[700];
        const char *args[] = {"run",  sf_target("escape_inherited_fd"),
                              NULL,   "--out",
                              NULL,   "--workers",
                              "1",    "--runs",
                              "2000", NULL};

        world_init(&w);
        args[2] = w.seeds;
        args[4] = w.out;
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 0, "expected a clean run; stderr:\n%s", r.err);
        snprintf(path, sizeof(path), "%s/inherited", w.dir);
        cr_assert_eq(stat(path, &st), 0, "the harness opened its file before the sandbox");
        cr_expect_eq(st.st_size, 0, "the runner wrote through an inherited descriptor");
        cr_expect_eq(processes_left_behind(&w), 0);
        sf_run_free(&r);
        world_deinit(&w);
}

/* The controls: with the sandbox off the same attempts succeed, so the
 * checks above would see an escape. */
Test(escape, control_without_the_sandbox_the_file_is_created)
{
        World w;
        SfRun r;
        static const Escape e = {.name = "escape_create_file", .sandbox = "off"};

        world_init(&w);
        run(&w, &e, &r);
        /* Created; writing into it still hits RLIMIT_FSIZE (kind file-size),
         * which stays on with the filter off. */
        cr_expect(file_exists(&w, "created"), "the control attempt should succeed");
        sf_run_free(&r);
        world_deinit(&w);
}

Test(escape, control_without_the_sandbox_the_connection_is_made)
{
        World w;
        SfRun r;
        static const Escape e = {.name = "escape_connect_tcp", .sandbox = "off"};

        world_init(&w);
        run(&w, &e, &r);
        cr_expect(connection_accepted(&w), "the control attempt should connect");
        sf_run_free(&r);
        world_deinit(&w);
}

/* --sandbox log: the attempt runs (log mode confines nothing) and is
 * reported once, by name, with its path. */
Test(escape, log_mode_reports_the_attempt_and_lets_it_run)
{
        World w;
        SfRun r;
        static const Escape e = {.name = "escape_create_file", .sandbox = "log"};
        char *stats, path[700];
        size_t len;

        world_init(&w);
        run(&w, &e, &r);
        /* With namespaces the open runs in an empty root and fails; without,
         * it creates the file, and the write then hits RLIMIT_FSIZE (a
         * file-size crash). Either way it is logged. */
        cr_expect(r.exit_code == 0 || r.exit_code == 1, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "sandbox log: the target used openat(\""), "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, "/created\")"), "the path is reported:\n%s", r.err);
        cr_expect_eq(strstr(strstr(r.err, "used openat(") + 1, "used openat("), NULL,
                     "reported once:\n%s", r.err);
        cr_expect(strstr(r.err, "{\"allow\":[{\"syscall\":\"openat\",\"under\":\""),
                  "a policy is suggested:\n%s", r.err);
        snprintf(path, sizeof(path), "%s/stats.json", w.out);
        stats = (char *)sf_read(path, &len);
        cr_expect(stats && strstr(stats, "\"sandbox_log\""), "stats.json: %s", stats);
        free(stats);
        sf_run_free(&r);
        world_deinit(&w);
}

/* A bad policy file is a usage error: one line naming the place, exit 2,
 * nothing run (not even the output directory created). */
static void bad_policy(const char *text, const char *where, const char *what)
{
        char *dir = sf_tmpdir();
        char policy[600], out[600];
        const char *args[] = {
            "run", sf_target("tlv_parser"), "--out", out, "--sandbox-policy", policy, NULL};
        SfRun r;
        FILE *f;

        snprintf(policy, sizeof(policy), "%s/policy.json", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        f = fopen(policy, "w");
        fputs(text, f);
        fclose(f);
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 2, "stderr:\n%s", r.err);
        cr_expect(strstr(r.err, where) && strstr(r.err, what), "'%s' ... '%s' not in:\n%s", where,
                  what, r.err);
        cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line:\n%s", r.err);
        cr_expect_neq(access(out, F_OK), 0, "something ran");
        sf_run_free(&r);
}

Test(escape, bad_policy_files_are_usage_errors)
{
        bad_policy("{\"allow\": [\n  \"getcwd\",\n", "policy.json:3:1:", "not valid JSON");
        bad_policy("{\n  \"allow\": [\n    \"getcwd\",\n    \"opneat\"\n  ]\n}\n",
                   "policy.json:4:", "allow[1]: unknown syscall \"opneat\"");
        bad_policy(
            "{\"allow\": [\n  {\"syscall\": \"ioctl\", \"args\": [{\"arg\": 1, \"op\": \">\", "
            "\"value\": 1}, {\"arg\": 1, \"op\": \"<\", \"value\": 9}]}]}",
            "policy.json:2:", "cannot be expressed");
        bad_policy("{\"allow\": [\"ptrace\"]}", "policy.json:1:", "cannot be allowed");
}

/*
 * A policy whose directory is /proc under another name: refused before
 * anything runs (exit 2, one line), so the target that reads the worker's
 * environment never runs, and the secret in it is never printed.
 */
static void hostile_policy(World *w, const char *under, const char *what)
{
        char policy[700];
        const char *args[] = {"run",    sf_target("escape_proc_self_environ"),
                              w->seeds, "--out",
                              w->out,   "--sandbox-policy",
                              policy,   "--max-total-time",
                              "20",     NULL};
        SfRun r;
        FILE *f;

        snprintf(policy, sizeof(policy), "%s/hostile.json", w->dir);
        f = fopen(policy, "w");
        fprintf(f, "{\"allow\": [{\"syscall\": \"openat\", \"under\": \"%s\"}]}\n", under);
        fclose(f);
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 2, "%s: stderr:\n%s", under, r.err);
        cr_expect(strstr(r.err, what), "%s: '%s' not in:\n%s", under, what, r.err);
        cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line:\n%s", r.err);
        cr_expect_not(strstr(r.out, ENV_SECRET) || strstr(r.err, ENV_SECRET), "%s: printed", under);
        cr_expect_neq(access(w->out, F_OK), 0, "%s: something ran", under);
        sf_run_free(&r);
}

Test(escape, hostile_policies_that_open_proc_are_refused)
{
        World w;
        char link[700], a[700], b[700];
        static const char *const proc = "cannot be opened for the target: /proc";

        world_init(&w);
        snprintf(link, sizeof(link), "%s/procl", w.dir);
        cr_assert_eq(symlink("/proc", link), 0);
        snprintf(a, sizeof(a), "%s/chain-a", w.dir);
        snprintf(b, sizeof(b), "%s/chain-b", w.dir);
        cr_assert_eq(symlink(b, a), 0);
        cr_assert_eq(symlink("/sys/../proc/self/..", b), 0);

        hostile_policy(&w, "/proc", proc);
        hostile_policy(&w, "/etc/../proc", proc);
        hostile_policy(&w, "/sys/..//proc", proc);
        hostile_policy(&w, "/proc///", proc);
        hostile_policy(&w, link, proc);
        hostile_policy(&w, a, proc);
        hostile_policy(&w, "/proc/self/root/proc", proc);
        hostile_policy(&w, "/", "the whole file system");
        hostile_policy(&w, "/proc/self/root", "the whole file system");
        /* The output directory's parent: the findings are not the target's. */
        hostile_policy(&w, w.dir, "contains the output directory");
        world_deinit(&w);
}

/* The control: with the sandbox off the same target reads its
 * environment, and the secret lands in the crash's output. */
Test(escape, control_without_the_sandbox_the_environment_is_read)
{
        World w;
        SfRun r;
        static const Escape e = {.name = "escape_proc_self_environ", .sandbox = "off"};
        char *id, *field;

        world_init(&w);
        run(&w, &e, &r);
        cr_expect_eq(r.exit_code, 1, "stderr:\n%s", r.err);
        id = sf_only_crash(w.out);
        field = sf_crash_field(w.out, id, "output");
        cr_expect(strstr(field, ENV_SECRET), "the control attempt should read it: %s", field);
        free(field);
        free(id);
        sf_run_free(&r);
        world_deinit(&w);
}
