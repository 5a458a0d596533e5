/*
 * Tests of sandbox/refusal.c: refusal classes and their policy rules, and
 * quiet refusals (sandbox_quiet). A test process plays the worker for a
 * forked "runner" under the strict sandbox: a refusal of a class reported
 * already fails with an errno and is counted, without SIGSYS, while any
 * other refusal still kills the runner.
 */
#include "sandbox/internal.h"
#include "sandbox/refusal.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervisor.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#define EXIT_OK 42
#define EXIT_WRONG 1

TestSuite(refusal, .timeout = 60);

static int nr_of(const char *name)
{
        int nr = seccomp_syscall_resolve_name(name);

        cr_assert_geq(nr, 0, "%s", name);
        return nr;
}

static cJSON *class_json(const char *name, const uint64_t args[6], const char *path)
{
        Refusal r;

        refusal_classify(nr_of(name), args, path, &r);
        return refusal_to_json(&r);
}

static char *rule_text(const cJSON *j)
{
        const cJSON *rule = cJSON_GetObjectItemCaseSensitive(j, "rule");

        return rule ? cJSON_PrintUnformatted(rule) : NULL;
}

Test(refusal, an_open_is_classed_by_its_directory_and_access)
{
        uint64_t rd[6] = {(uint64_t)AT_FDCWD, 0, O_RDONLY},
                 wr[6] = {(uint64_t)AT_FDCWD, 0, O_WRONLY};
        cJSON *a = class_json("openat", rd, "/etc/passwd");
        cJSON *b = class_json("openat", rd, "/usr/lib/locale/../../../etc/./shadow");
        cJSON *c = class_json("openat", wr, "/etc/passwd");
        char *rule = rule_text(a);

        cr_expect_str_eq(cJSON_GetObjectItem(a, "key")->valuestring, "openat /etc read");
        cr_expect_str_eq(cJSON_GetObjectItem(b, "key")->valuestring, "openat /etc read");
        cr_expect_str_eq(cJSON_GetObjectItem(c, "key")->valuestring, "openat /etc write");
        cr_expect_str_eq(rule, "{\"syscall\":\"openat\",\"under\":\"/etc\"}");
        cr_expect_null(cJSON_GetObjectItem(c, "rule"), "a write has no rule");
        cr_expect(cJSON_IsString(cJSON_GetObjectItem(c, "no_rule")));
        free(rule);
        cJSON_Delete(a);
        cJSON_Delete(b);
        cJSON_Delete(c);
}

Test(refusal, commands_bare_syscalls_and_locked_groups)
{
        uint64_t tiocsti[6] = {0, TIOCSTI}, none[6] = {0};
        cJSON *ioctl_j = class_json("ioctl", tiocsti, NULL);
        cJSON *socket_j = class_json("socket", none, NULL);
        cJSON *kill_j = class_json("kill", none, NULL);
        char *rule = rule_text(ioctl_j), *bare = rule_text(socket_j);
        char want[128];

        snprintf(want, sizeof(want), "ioctl 0x%x", TIOCSTI);
        cr_expect_str_eq(cJSON_GetObjectItem(ioctl_j, "key")->valuestring, want);
        snprintf(want, sizeof(want),
                 "{\"syscall\":\"ioctl\",\"args\":[{\"arg\":1,\"op\":\"==\",\"value\":\"0x%x\"}]}",
                 TIOCSTI);
        cr_expect_str_eq(rule, want);
        cr_expect_str_eq(bare, "\"socket\"");
        cr_expect_null(cJSON_GetObjectItem(kill_j, "rule"), "kill is locked");
        cr_expect(strstr(cJSON_GetObjectItem(kill_j, "no_rule")->valuestring, "signals"));
        free(rule);
        free(bare);
        cJSON_Delete(ioctl_j);
        cJSON_Delete(socket_j);
        cJSON_Delete(kill_j);
}

Test(refusal, a_class_reads_back_from_its_json)
{
        uint64_t rd[6] = {(uint64_t)AT_FDCWD, 0, O_RDONLY}, cmd[6] = {0, 0x5413};
        const struct {
                const char *name;
                const uint64_t *args;
                const char *path;
        } cases[] = {{"openat", rd, "/usr/share/x/y"}, {"ioctl", cmd, NULL}, {"socket", rd, NULL}};

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Refusal r, back;

                refusal_classify(nr_of(cases[i].name), cases[i].args, cases[i].path, &r);
                cJSON *j = refusal_to_json(&r);
                cr_assert_eq(refusal_from_json(j, &back), 0, "%s", r.key);
                cr_expect_str_eq(back.key, r.key);
                cr_expect(refusal_matches(&back, r.nr, cases[i].args, cases[i].path), "%s", r.key);
                cJSON_Delete(j);
        }
}

/* ---- quiet refusals in a runner ---- */

typedef struct Events {
        cJSON *list;
} Events;

static void collect(void *userdata, const cJSON *event)
{
        Events *e = userdata;

        cJSON_AddItemToArray(e->list, cJSON_Duplicate(event, 1));
}

/* Runs @fn in a child under @s, answering its notifications like a worker.
 * Returns its wait status. */
static int supervise(Sandbox *s, int (*fn)(void), Events *events)
{
        SandboxSupervisor *sup = NULL;
        int status = 0, pidfd;
        pid_t pid;

        cr_assert_eq(sandbox_supervisor_new(&sup, s), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (sandbox_apply(s) < 0)
                        _exit(2);
                _exit(fn());
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

static Sandbox *strict_sandbox(void)
{
        SandboxOptions o = {.mode = SANDBOX_STRICT, .no_namespaces = true};
        char err[512] = "";
        Sandbox *s = NULL;

        cr_assert_eq(sandbox_new_with(&s, &o, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(sandbox_prepare(s), 0);
        return s;
}

/* The number "quiet" events from the supervisor counted for @key. */
static double quiet_count(const Events *e, const char *key)
{
        const cJSON *ev;
        double n = 0;

        cJSON_ArrayForEach(ev, e->list)
        {
                const cJSON *k = cJSON_GetObjectItemCaseSensitive(ev, "key");
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(ev, "count");

                if (cJSON_IsString(k) && strcmp(k->valuestring, key) == 0 && cJSON_IsNumber(c))
                        n += c->valuedouble;
        }
        return n;
}

static int three_sockets(void)
{
        for (int i = 0; i < 3; i++)
                if (socket(AF_UNIX, SOCK_STREAM, 0) != -1 || errno != EPERM)
                        return EXIT_WRONG;
        return EXIT_OK;
}

static int three_etc_reads(void)
{
        for (int i = 0; i < 3; i++)
                if (open("/etc/passwd", O_RDONLY | O_CLOEXEC) != -1 || errno != EACCES)
                        return EXIT_WRONG;
        return EXIT_OK;
}

static int an_etc_write(void)
{
        (void)open("/etc/snapfuzz-test-refusal", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        return EXIT_OK;
}

/* Makes @s refuse the class of (@name, @args, @path) quietly. */
static int quiet(Sandbox *s, const char *name, const uint64_t args[6], const char *path)
{
        cJSON *j = class_json(name, args, path);
        int r = sandbox_quiet(s, j);

        cJSON_Delete(j);
        return r;
}

Test(refusal, a_reported_syscall_is_refused_with_an_error_and_counted)
{
        Sandbox *s = strict_sandbox();
        uint64_t none[6] = {0};
        Events ev = {.list = cJSON_CreateArray()};
        int status;

        /* Before: the runner dies of it. */
        status = supervise(s, three_sockets, &ev);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
        cr_assert_eq(quiet(s, "socket", none, NULL), 0);
        cr_expect_eq(quiet(s, "socket", none, NULL), -EEXIST);
        status = supervise(s, three_sockets, &ev);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cr_expect_eq(quiet_count(&ev, "socket"), 3);
        cJSON_Delete(ev.list);
        sandbox_free(s);
}

Test(refusal, only_the_reported_class_of_open_is_quiet)
{
        Sandbox *s = strict_sandbox();
        uint64_t rd[6] = {(uint64_t)AT_FDCWD, 0, O_RDONLY};
        Events ev = {.list = cJSON_CreateArray()};
        int status;

        cr_assert_eq(quiet(s, "openat", rd, "/etc/group"), 0);
        status = supervise(s, three_etc_reads, &ev);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        cr_expect_eq(quiet_count(&ev, "openat /etc read"), 3);
        /* A write in the same directory is another class: still a death. */
        status = supervise(s, an_etc_write, &ev);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
        cJSON_Delete(ev.list);
        sandbox_free(s);
}

Test(refusal, classes_the_filter_cannot_tell_apart_keep_trapping)
{
        Sandbox *s = strict_sandbox();
        uint64_t exec[6] = {0, 4096, 7, 0x22};

        /* mmap is allowed without PROT_EXEC: a rule for the refused ones
         * would overlap the allowed ones. */
        cr_expect_eq(quiet(s, "mmap", exec, NULL), -ENOTSUP);
        sandbox_free(s);
}
