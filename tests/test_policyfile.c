/*
 * Tests of sandbox/policyfile.c through sandbox_policy_load() and
 * sandbox_new_with(): every way a policy file can be wrong ends in one line
 * that names the file, the line and the item; a good file adds exactly what
 * it says, and the conditions it states are enforced.
 */
#include "sandbox/policyfile.h"
#include "sandbox/sandbox.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapfuzz/banned.h"

#define EXIT_OK 42
#define EXIT_NOT_BLOCKED 3

TestSuite(policyfile, .timeout = 30);

static char *write_policy(const char *text)
{
        char *path = strdup("/tmp/snapfuzz-policy-XXXXXX");
        int fd = mkstemp(path);

        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

/* Loads @text and expects failure with every one of @needles in the line. */
static void expect_error(const char *text, const char *const *needles)
{
        char *path = write_policy(text);
        char err[1024] = "", *json = NULL;
        int r;

        r = sandbox_policy_load(path, &json, err, sizeof(err));
        cr_expect_lt(r, 0, "accepted: %s", text);
        cr_expect_null(json);
        cr_expect_null(strchr(err, '\n'), "one line: %s", err);
        cr_expect(strncmp(err, path, strlen(path)) == 0, "names the file: %s", err);
        for (size_t i = 0; needles[i]; i++)
                cr_expect(strstr(err, needles[i]), "'%s' not in: %s", needles[i], err);
        unlink(path);
        free(path);
}

#define EXPECT_ERROR(text, ...)                                                                    \
        do {                                                                                       \
                static const char *const needles[] = {__VA_ARGS__, NULL};                          \
                expect_error(text, needles);                                                       \
        } while (0)

Test(policyfile, not_json_names_line_and_column)
{
        EXPECT_ERROR("{\n  \"allow\": [\n    \"read\",\n  ]\n}\n", ":4:", "not valid JSON");
        EXPECT_ERROR("{\"allow\": [\"read\"", ":1:", "not valid JSON");
        EXPECT_ERROR("", "not valid JSON");
        EXPECT_ERROR("{} trailing", "not valid JSON");
}

Test(policyfile, unknown_syscall_names_its_line_and_item)
{
        EXPECT_ERROR("{\n  \"allow\": [\n    \"getcwd\",\n    \"opneat\"\n  ]\n}\n",
                     ":4: allow[1]: unknown syscall \"opneat\"");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"nosuchcall\"}]}", "allow[0]", "unknown syscall");
}

Test(policyfile, locked_syscalls_cannot_be_allowed)
{
        EXPECT_ERROR("{\"allow\": [\"ptrace\"]}", "allow[0]", "ptrace cannot be allowed",
                     "debugging");
        EXPECT_ERROR("{\"allow\": [\"io_uring_setup\"]}", "kernel attack surface");
        EXPECT_ERROR("{\"allow\": [\"rt_sigaction\"]}", "SIGSYS handler");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"kill\", \"args\": [{\"arg\": 0, \"op\": "
                     "\">\", \"value\": 0}]}]}",
                     "signals to others");
        EXPECT_ERROR("{\"allow\": [\"setrlimit\"]}", "resource limits");
        EXPECT_ERROR("{\"allow\": [\"unshare\"]}", "namespaces");
        EXPECT_ERROR("{\"allow\": [\"prctl\"]}", "process attributes");
}

Test(policyfile, conditions_it_cannot_express)
{
        /* libseccomp compares each argument once per rule. */
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": ["
                     "{\"arg\": 1, \"op\": \">\", \"value\": 1},"
                     "{\"arg\": 1, \"op\": \"<\", \"value\": 9}]}]}",
                     "allow[0].args[1]", "cannot be expressed");
        /* Seccomp sees pointers, not paths. */
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"stat\", \"under\": \"/tmp\"}]}", "allow[0]",
                     "cannot be expressed");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/tmp\", \"access\": "
                     "\"write\"}]}",
                     "read");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/tmp\", \"args\": "
                     "[{\"arg\": 2, \"op\": \"==\", \"value\": 0}]}]}",
                     "cannot be combined");
        /* /proc depends on who opens it: the worker would open its own. */
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/proc/self\"}]}",
                     "resolves to /proc/", "/proc shows whoever opens it");
        /* An unconditional open would make the directory meaningless. */
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/tmp\"}, \"openat\"]}",
                     "allow[1]", "meaningless");
        EXPECT_ERROR("{\"allow\": [\"openat\", {\"syscall\": \"openat\", \"under\": \"/tmp\"}]}",
                     "allow[1]", "no effect");
}

/* A policy whose only rule opens files under @dir. */
static char *under_policy(const char *dir)
{
        char *text = NULL;

        cr_assert_gt(
            asprintf(&text, "{\"allow\": [{\"syscall\": \"openat\", \"under\": \"%s\"}]}", dir), 0);
        return text;
}

#define EXPECT_UNDER_REFUSED(dir, ...)                                                             \
        do {                                                                                       \
                char *text_ = under_policy(dir);                                                   \
                const char *const needles_[] = {"allow[0]: \"under\": ", __VA_ARGS__, NULL};       \
                expect_error(text_, needles_);                                                     \
                free(text_);                                                                       \
        } while (0)

static const char *const proc_why = "cannot be opened for the target: /proc shows whoever opens it";

/* The refused set is judged on the resolved path: each spelling that names
 * /proc (or "/") another way is refused with the path it resolves to. */
Test(policyfile, under_is_resolved_before_it_is_judged)
{
        EXPECT_UNDER_REFUSED("/proc", "/proc cannot be opened for the target: /proc shows");
        EXPECT_UNDER_REFUSED("/etc/../proc", "/etc/../proc resolves to /proc,", proc_why);
        EXPECT_UNDER_REFUSED("/sys/..//proc", "/sys/..//proc resolves to /proc,", proc_why);
        EXPECT_UNDER_REFUSED("/proc///", "/proc/// resolves to /proc,", proc_why);
        EXPECT_UNDER_REFUSED("/proc/self/", "resolves to /proc/", proc_why);
        EXPECT_UNDER_REFUSED("/", "/ cannot be opened", "the whole file system");
        EXPECT_UNDER_REFUSED("//", "// resolves to /,", "the whole file system");
        EXPECT_UNDER_REFUSED("/etc/..", "/etc/.. resolves to /,", "the whole file system");
        /* /proc/self/root is a magic link to the root of the file system. */
        EXPECT_UNDER_REFUSED("/proc/self/root", "resolves to /,", "the whole file system");
        EXPECT_UNDER_REFUSED("/sys/", "resolves to /sys,", "kernel");
        EXPECT_UNDER_REFUSED("/dev", "/dev cannot be opened", "device files");
        EXPECT_UNDER_REFUSED("/dev/", "/dev/ resolves to /dev,", "device files");
}

Test(policyfile, under_through_symlinks_is_refused)
{
        char dir[] = "/tmp/snapfuzz-links-XXXXXX";
        char a[64], b[64], c[64], proc[64];

        cr_assert_not_null(mkdtemp(dir));
        snprintf(proc, sizeof(proc), "%s/proc", dir);
        snprintf(a, sizeof(a), "%s/a", dir);
        snprintf(b, sizeof(b), "%s/b", dir);
        snprintf(c, sizeof(c), "%s/c", dir);
        cr_assert_eq(symlink("/proc", proc), 0);
        /* A chain: a -> b -> c -> /sys/../proc/. */
        cr_assert_eq(symlink(b, a), 0);
        cr_assert_eq(symlink(c, b), 0);
        cr_assert_eq(symlink("/sys/../proc/", c), 0);

        char *msg = NULL;
        cr_assert_gt(asprintf(&msg, "%s resolves to /proc,", proc), 0);
        EXPECT_UNDER_REFUSED(proc, msg, proc_why);
        free(msg);
        cr_assert_gt(asprintf(&msg, "%s resolves to /proc,", a), 0);
        EXPECT_UNDER_REFUSED(a, msg, proc_why);
        free(msg);
        /* A broken link names what is missing. */
        cr_assert_eq(unlink(c), 0);
        cr_assert_eq(symlink("/nonexistent-sf/x", c), 0);
        cr_assert_gt(asprintf(&msg, "%s does not exist", a), 0);
        EXPECT_UNDER_REFUSED(a, msg);
        free(msg);
        unlink(a);
        unlink(b);
        unlink(c);
        unlink(proc);
        rmdir(dir);
}

/* The user's home and its credential directories are refused; a directory
 * below home that holds no credentials is fine. */
Test(policyfile, under_home_and_credentials_are_refused)
{
        char home[] = "/tmp/snapfuzz-home-XXXXXX";
        char path[128], *json = NULL, err[1024];

        cr_assert_not_null(mkdtemp(home));
        cr_assert_eq(setenv("HOME", home, 1), 0);
        snprintf(path, sizeof(path), "%s/.ssh", home);
        cr_assert_eq(mkdir(path, 0700), 0);
        EXPECT_UNDER_REFUSED(path, "~/.ssh holds credentials");
        EXPECT_UNDER_REFUSED(home, "contains your home directory");
        EXPECT_UNDER_REFUSED("/tmp", "contains your home directory");
        rmdir(path);
        snprintf(path, sizeof(path), "%s/testdata", home);
        cr_assert_eq(mkdir(path, 0700), 0);
        char *text = under_policy(path);
        char *file = write_policy(text);
        cr_expect_eq(sandbox_policy_load(file, &json, err, sizeof(err)), 0, "%s", err);
        free(json);
        unlink(file);
        free(file);
        free(text);
        rmdir(path);
        rmdir(home);
}

/* The output directory, anything holding it and anything in it, checked on
 * resolved paths whether or not the output directory exists yet. */
Test(policyfile, under_the_output_directory_is_refused)
{
        char dir[] = "/tmp/snapfuzz-outchk-XXXXXX";
        char out[96], data[96], err[1024] = "";
        char *policy = NULL;

        cr_assert_not_null(mkdtemp(dir));
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(data, sizeof(data), "%s/data", dir);
        cr_assert_eq(mkdir(data, 0700), 0);

        policy = under_policy(dir);
        cr_expect_eq(sandbox_policy_check("p.json", policy, out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "p.json: \"under\": ") && strstr(err, "contains the output "
                                                                    "directory"),
                  "%s", err);
        cr_expect_null(strchr(err, '\n'));
        /* The same through a symlink and a trailing slash on the output. */
        char link[96], via[128];
        snprintf(link, sizeof(link), "%s/data/up", dir);
        cr_assert_eq(symlink("..", link), 0);
        snprintf(via, sizeof(via), "%s/data/up/out/", dir);
        cr_expect_eq(sandbox_policy_check("p.json", policy, via, err, sizeof(err)), -EINVAL);
        free(policy);

        cr_assert_eq(mkdir(out, 0700), 0);
        snprintf(via, sizeof(via), "%s/crashes", out);
        cr_assert_eq(mkdir(via, 0700), 0);
        policy = under_policy(via);
        cr_expect_eq(sandbox_policy_check("p.json", policy, out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "is inside the output directory"), "%s", err);
        free(policy);

        /* A directory beside the output directory is fine. */
        policy = under_policy(data);
        cr_expect_eq(sandbox_policy_check("p.json", policy, out, err, sizeof(err)), 0, "%s", err);
        free(policy);
        unlink(link);
        rmdir(via);
        rmdir(out);
        rmdir(data);
        rmdir(dir);
}

Test(policyfile, malformed_rules)
{
        EXPECT_ERROR("[\"read\"]", "a policy is a JSON object");
        EXPECT_ERROR("{\"alow\": []}", "unknown key \"alow\"");
        EXPECT_ERROR("{\"allow\": \"read\"}", "\"allow\" must be an array");
        EXPECT_ERROR("{\"allow\": [42]}", "allow[0]", "a rule is");
        EXPECT_ERROR("{\"allow\": [{\"syscal\": \"read\"}]}", "allow[0]", "unknown key");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": [{\"arg\": 7, \"op\": "
                     "\"==\", \"value\": 1}]}]}",
                     "allow[0].args[0]", "0-5");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": [{\"arg\": 1, \"op\": "
                     "\"=>\", \"value\": 1}]}]}",
                     "unknown op \"=>\"");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": [{\"arg\": 1, \"op\": "
                     "\"==\", \"value\": \"twelve\"}]}]}",
                     "integer");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": [{\"arg\": 1, \"op\": "
                     "\"&=\", \"value\": 3}]}]}",
                     "mask");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"ioctl\", \"args\": [{\"arg\": 1, \"op\": "
                     "\"&=\", \"mask\": 1, \"value\": 3}]}]}",
                     "could never match");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"tmp\"}]}", "absolute");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/nonexistent-sf\"}]}",
                     "/nonexistent-sf does not exist");
        EXPECT_ERROR("{\"allow\": [{\"syscall\": \"openat\", \"under\": \"/etc/passwd\"}]}",
                     "/etc/passwd is not a directory");
}

Test(policyfile, missing_file)
{
        char err[512], *json = NULL;

        cr_assert_lt(sandbox_policy_load("/nonexistent/policy.json", &json, err, sizeof(err)), 0);
        cr_assert(strstr(err, "cannot read the sandbox policy /nonexistent/policy.json"), "%s",
                  err);
}

Test(policyfile, a_good_file_loads_as_compact_json)
{
        char *path = write_policy("{\n"
                                  "  \"description\": \"a harness that names its threads\",\n"
                                  "  \"allow\": [\n"
                                  "    \"getcwd\",\n"
                                  "    {\"syscall\": \"getpriority\", \"why\": \"nice\",\n"
                                  "     \"args\": [{\"arg\": 0, \"op\": \"==\", \"value\": 0}]},\n"
                                  "    {\"syscall\": \"openat\", \"under\": \"/tmp\"},\n"
                                  "    \"vm86\"\n"
                                  "  ]\n"
                                  "}\n");
        char err[512] = "", *json = NULL;

        cr_assert_eq(sandbox_policy_load(path, &json, err, sizeof(err)), 0, "%s", err);
        cr_assert_not_null(json);
        cr_expect_null(strchr(json, '\n'));
        cr_expect(strstr(json, "\"getcwd\""), "%s", json);
        cr_expect(strstr(json, "\"under\":\"/tmp\""), "%s", json);
        free(json);
        unlink(path);
        free(path);
}

static const char *const allow_chdir = "{\"allow\": [\"chdir\"]}";

/* Runs @fn in a child under a sandbox with @policy; returns its status. */
static int run_with_policy(const char *policy, void (*fn)(void))
{
        SandboxOptions o = {.mode = SANDBOX_STRICT, .policy_json = policy};
        char err[512] = "";
        Sandbox *s = NULL;
        int status;
        pid_t pid;

        cr_assert_eq(sandbox_new_with(&s, &o, err, sizeof(err)), 0, "%s", err);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                if (sandbox_apply(s) < 0)
                        _exit(2);
                fn();
                _exit(EXIT_OK);
        }
        sandbox_free(s);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static void call_chdir(void)
{
        if (chdir("/") < 0)
                _exit(1);
}

Test(policyfile, an_allowed_syscall_runs)
{
        int status = run_with_policy(allow_chdir, call_chdir);

        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        status = run_with_policy(NULL, call_chdir);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
}

static const char *const allow_own_priority =
    "{\"allow\": [{\"syscall\": \"getpriority\", \"args\": ["
    "{\"arg\": 0, \"op\": \"==\", \"value\": 0}, {\"arg\": 1, \"op\": \"==\", \"value\": 0}]}]}";

static void own_priority(void)
{
        errno = 0;
        if (getpriority(PRIO_PROCESS, 0) == -1 && errno)
                _exit(1);
}

static void group_priority(void)
{
        getpriority(PRIO_PGRP, 0);
        _exit(EXIT_NOT_BLOCKED);
}

Test(policyfile, conditions_are_enforced)
{
        int status = run_with_policy(allow_own_priority, own_priority);

        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
        status = run_with_policy(allow_own_priority, group_priority);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
}

Test(policyfile, no_policy_with_sandbox_off)
{
        SandboxOptions o = {.mode = SANDBOX_OFF, .policy_json = allow_chdir};
        char err[512] = "";
        Sandbox *s = NULL;

        cr_assert_eq(sandbox_new_with(&s, &o, err, sizeof(err)), -EINVAL);
        cr_assert(strstr(err, "--sandbox off"), "%s", err);
        cr_assert_null(s);
}

/* Found by self-fuzzing (fuzz_targets/self/policy.c): numbers far outside
 * their range are refused, not converted (undefined), and a message that
 * quotes the file's strings stays one line. */
Test(policyfile, wild_numbers_are_refused_and_messages_stay_one_line)
{
        static const char *const bad[] = {
            "{\"allow\":[{\"syscall\":\"ioctl\",\"args\":[{\"arg\":1e11,\"op\":\"==\",\"value\":0}]"
            "}]}",
            "{\"allow\":[{\"syscall\":\"ioctl\",\"args\":[{\"arg\":1,\"op\":\"==\",\"value\":1e300}"
            "]}]}",
            "{\"allow\":[{\"syscall\":\"open\",\"under\":\"/tm\\np\",\"access\":\"read\"}]}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                Policy p = {0};
                char err[512] = "";
                cJSON *root = NULL;
                int r = policyfile_parse_json("p.json", bad[i], &root, err, sizeof(err));
                if (r == 0)
                        r = policyfile_apply("p.json", bad[i], root, &p, err, sizeof(err));
                cJSON_Delete(root);
                cr_expect_eq(r, -EINVAL, "case %zu: %s", i, err);
                cr_expect_null(strchr(err, '\n'), "case %zu: one line: %s", i, err);
        }
}
