/*
 * Tests of sandbox/isolate.c: what a runner sees around the filter. The
 * test process plays the worker (sandbox_prepare moves it into the
 * namespaces; Criterion runs each test in a process of its own), and a
 * forked child plays the runner (sandbox_isolate), without the filter, so
 * that it can look around: no host files, no network, no descriptors but
 * its own, its own process group, no capabilities.
 */
#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "snapfuzz/banned.h"

#define EXIT_OK 42

TestSuite(isolate, .timeout = 30);

/* Bit i of the child's exit code: check i failed. */
enum {
        CHECK_GROUP = 1,
        CHECK_FDS = 2,
        CHECK_ROOT = 4,
        CHECK_CAPS = 8,
        CHECK_NET = 16,
        CHECK_ISOLATE = 32,
};

static int listener_port(int *ret_fd)
{
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        cr_assert_geq(fd, 0);
        cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        cr_assert_eq(listen(fd, 8), 0);
        cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
        *ret_fd = fd;
        return ntohs(a.sin_port);
}

/* In the runner: what it can see. Returns the failed CHECK_* bits. */
static int runner_checks(const Sandbox *s, int inherited_fd, int port, bool namespaces)
{
        int failed = 0;

        if (sandbox_isolate(s, -1) < 0)
                return CHECK_ISOLATE;
        if (getpgrp() != getpid())
                failed |= CHECK_GROUP;
        if (fcntl(inherited_fd, F_GETFD) != -1 || fcntl(0, F_GETFD) != -1 || fcntl(2, F_GETFD) < 0)
                failed |= CHECK_FDS;
        if (namespaces) {
                struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
                struct __user_cap_data_struct d[2];
                struct sockaddr_in a = {.sin_family = AF_INET,
                                        .sin_port = htons((uint16_t)port),
                                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
                int fd;

                if (access("/etc/passwd", F_OK) == 0 || access("/", R_OK) != 0)
                        failed |= CHECK_ROOT;
                if (syscall(SYS_capget, &h, d) < 0 || d[0].effective || d[0].permitted)
                        failed |= CHECK_CAPS;
                fd = socket(AF_INET, SOCK_STREAM, 0);
                if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
                        failed |= CHECK_NET;
        }
        return failed;
}

/* Exit codes of the worker process. */
#define WORKER_NO_NAMESPACES 77
#define WORKER_VIEW_LOST 78

/*
 * The worker: a fork of the test process, because unshare(CLONE_NEWUSER)
 * wants a single-threaded caller and Criterion's test process is not (a
 * real worker is, unless the target started threads in its initializer).
 */
static int run_worker(bool want_namespaces, int inherited_fd, int port)
{
        SandboxOptions o = {.mode = SANDBOX_STRICT, .no_namespaces = !want_namespaces};
        int status;
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                Sandbox *s = NULL;
                int sig = 0;

                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (sandbox_new_with(&s, &o, NULL, 0) < 0 || sandbox_prepare(s) < 0)
                        _exit(CHECK_ISOLATE);
                if (sandbox_has_namespaces(s) != want_namespaces)
                        _exit(WORKER_NO_NAMESPACES);
                /* The worker keeps the host's files (it supervises through
                 * /proc) and its parent-death signal. */
                if (access("/etc/passwd", F_OK) != 0 || access("/proc/self/status", R_OK) != 0 ||
                    prctl(PR_GET_PDEATHSIG, &sig) < 0 || sig != SIGKILL)
                        _exit(WORKER_VIEW_LOST);
                pid_t runner = fork();
                if (runner == 0) {
                        int failed = runner_checks(s, inherited_fd, port, want_namespaces);

                        _exit(failed ? failed : EXIT_OK);
                }
                if (runner < 0 || waitpid(runner, &status, 0) != runner)
                        _exit(CHECK_ISOLATE);
                _exit(WIFEXITED(status) ? WEXITSTATUS(status) : CHECK_ISOLATE);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static void expect_isolated(bool want_namespaces)
{
        int fd, listener, port, status;

        port = listener_port(&listener);
        fd = open("/dev/null", O_RDONLY); /* not close-on-exec, and still closed */
        cr_assert_geq(fd, 0);
        status = run_worker(want_namespaces, fd, port);
        if (WIFEXITED(status) && WEXITSTATUS(status) == WORKER_NO_NAMESPACES && want_namespaces)
                cr_skip_test("this kernel does not allow user namespaces here");
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK,
                  "failed checks %d (status %#x)", WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                  status);
        if (want_namespaces)
                cr_expect_eq(accept(listener, NULL, NULL), -1, "a connection got through");
        close(fd);
        close(listener);
}

Test(isolate, a_runner_sees_no_host_files_no_network_no_descriptors)
{
        expect_isolated(true);
}

Test(isolate, without_namespaces_descriptors_and_group_still_apply)
{
        expect_isolated(false);
}

Test(isolate, describe_says_what_applies)
{
        SandboxOptions o = {.mode = SANDBOX_STRICT,
                            .policy_json = "{\"allow\":[\"getcwd\"]}",
                            .memory_limit_mb = 2048};
        Sandbox *s = NULL;
        cJSON *d;
        char *text;

        cr_assert_eq(sandbox_new_with(&s, &o, NULL, 0), 0);
        cr_assert_eq(sandbox_prepare(s), 0);
        d = sandbox_describe(s);
        text = cJSON_PrintUnformatted(d);
        cr_expect(strstr(text, "\"mode\":\"strict\""), "%s", text);
        cr_expect(strstr(text, "\"policy\":{\"allow\":[\"getcwd\"]}"), "%s", text);
        cr_expect(strstr(text, "\"fsize\":0"), "%s", text);
        /* No address-space limit when a sanitizer (which needs terabytes of
         * it) is in the process, as in the ASan build of these tests. */
        if (!strstr(text, "\"sanitizer\":true"))
                cr_expect(strstr(text, "\"as_mb\":8192"), "%s", text);
        cr_expect(strstr(text, sandbox_has_namespaces(s) ? "\"namespaces\":true"
                                                         : "\"namespaces\":false"),
                  "%s", text);
        cJSON_free(text);
        cJSON_Delete(d);
        sandbox_free(s);
}
