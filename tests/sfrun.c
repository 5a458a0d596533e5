/*
 * Runs are driven with fork/exec and pipes drained through poll, so a run
 * that prints a lot never blocks on a full pipe, and one that hangs is
 * killed at its deadline and reported as a test failure, not a stuck suite.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

const char *sf_env(const char *name)
{
        const char *v = getenv(name);
        cr_assert(v && *v, "environment variable %s is not set (run the tests with meson test)",
                  name);
        return v;
}

const char *sf_target(const char *name)
{
        char var[128];
        snprintf(var, sizeof(var), "SF_TARGET_%s", name);
        return sf_env(var);
}

char *sf_tmpdir(void)
{
        char *d = strdup("/tmp/snapfuzz-test-XXXXXX");
        cr_assert_not_null(mkdtemp(d));
        return d;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char **make_argv(const char *exe, const char *const *args)
{
        size_t n = 0;
        while (args[n])
                n++;
        char **argv = calloc(n + 2, sizeof(char *));
        argv[0] = (char *)exe;
        for (size_t i = 0; i < n; i++)
                argv[i + 1] = (char *)args[i];
        return argv;
}

static int exit_code_of(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return -1;
}

void sf_run(SfRun *r, int timeout_s, const char *const *args)
{
        sf_run_exe(r, timeout_s, sf_env("SNAPFUZZ_BIN"), args);
}

void sf_run_exe(SfRun *r, int timeout_s, const char *exe, const char *const *args)
{
        int out[2], err[2];
        cr_assert_eq(pipe(out), 0);
        cr_assert_eq(pipe(err), 0);
        char **argv = make_argv(exe, args);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                setpgid(0, 0);
                dup2(out[1], 1);
                dup2(err[1], 2);
                close(out[0]);
                close(err[0]);
                execv(argv[0], argv);
                _exit(127);
        }
        free(argv);
        close(out[1]);
        close(err[1]);
        size_t cap[2] = {4096, 4096}, len[2] = {0, 0};
        char *buf[2] = {malloc(cap[0]), malloc(cap[1])};
        int fds[2] = {out[0], err[0]};
        int open_fds = 2;
        int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
        bool timed_out = false;
        while (open_fds > 0) {
                struct pollfd p[2] = {{.fd = fds[0], .events = POLLIN},
                                      {.fd = fds[1], .events = POLLIN}};
                int64_t left = deadline - now_ms();
                if (left <= 0) {
                        timed_out = true;
                        kill(-pid, SIGKILL);
                        break;
                }
                if (poll(p, 2, (int)left) < 0 && errno != EINTR)
                        break;
                for (int i = 0; i < 2; i++) {
                        if (fds[i] < 0 || !p[i].revents)
                                continue;
                        if (cap[i] - len[i] < 2048) {
                                cap[i] *= 2;
                                buf[i] = realloc(buf[i], cap[i]);
                        }
                        ssize_t n = read(fds[i], buf[i] + len[i], cap[i] - len[i] - 1);
                        if (n <= 0) {
                                close(fds[i]);
                                fds[i] = -1;
                                open_fds--;
                        } else {
                                len[i] += (size_t)n;
                        }
                }
        }
        for (int i = 0; i < 2; i++) {
                if (fds[i] >= 0)
                        close(fds[i]);
                buf[i][len[i]] = 0;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        r->out = buf[0];
        r->err = buf[1];
        r->exit_code = exit_code_of(status);
        cr_assert_not(timed_out, "snapfuzz did not finish within %d s; stderr:\n%s", timeout_s,
                      r->err);
}

void sf_run_free(SfRun *r)
{
        free(r->out);
        free(r->err);
}

pid_t sf_start(const char *dir, const char *const *args)
{
        char path[512];
        char **argv = make_argv(sf_env("SNAPFUZZ_BIN"), args);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                setpgid(0, 0);
                snprintf(path, sizeof(path), "%s/stdout", dir);
                int o = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                snprintf(path, sizeof(path), "%s/stderr", dir);
                int e = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                dup2(o, 1);
                dup2(e, 2);
                execv(argv[0], argv);
                _exit(127);
        }
        free(argv);
        return pid;
}

int sf_wait(pid_t pid, int timeout_s)
{
        int status;
        int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
        for (;;) {
                pid_t p = waitpid(pid, &status, WNOHANG);
                if (p == pid)
                        return exit_code_of(status);
                if (now_ms() > deadline) {
                        kill(-pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        cr_assert_fail("snapfuzz did not finish within %d s", timeout_s);
                }
                usleep(20000);
        }
}

int sf_count_crashes(const char *out_dir)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/crashes", out_dir);
        DIR *d = opendir(path);
        if (!d)
                return 0;
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

char *sf_only_crash(const char *out_dir)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/crashes", out_dir);
        DIR *d = opendir(path);
        cr_assert_not_null(d, "no crashes directory in %s", out_dir);
        char *id = NULL;
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                n++;
                free(id);
                id = strdup(de->d_name);
        }
        closedir(d);
        cr_assert_eq(n, 1, "expected exactly one crash in %s, found %d", path, n);
        return id;
}

uint8_t *sf_read(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                return NULL;
        size_t cap = 4096, len = 0;
        uint8_t *buf = malloc(cap);
        size_t n;
        while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
                len += n;
                if (cap - len < 2) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                }
        }
        fclose(f);
        buf[len] = 0;
        *ret_len = len;
        return buf;
}

char *sf_crash_field(const char *out_dir, const char *id, const char *field)
{
        char path[512];
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out_dir, id);
        uint8_t *json = sf_read(path, &len);
        cr_assert_not_null(json, "no %s", path);
        cJSON *j = cJSON_Parse((const char *)json);
        free(json);
        cr_assert_not_null(j, "%s is not JSON", path);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, field);
        char *s;
        if (cJSON_IsString(v))
                s = strdup(v->valuestring);
        else if (v)
                s = cJSON_PrintUnformatted(v);
        else
                s = strdup("");
        cJSON_Delete(j);
        return s;
}

int sf_plainrun(const char *target, const char *input_path, int timeout_s)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 2);
                alarm((unsigned)timeout_s);
                execl(sf_env("PLAINRUN"), "plainrun", target, input_path, (char *)NULL);
                _exit(127);
        }
        int status;
        waitpid(pid, &status, 0);
        return status;
}

int sf_plainrun_seq(const char *target, char *const *paths, int n, int timeout_s)
{
        const char **argv = calloc((size_t)n + 3, sizeof(char *));
        cr_assert_not_null(argv);
        argv[0] = "plainrun";
        argv[1] = target;
        for (int i = 0; i < n; i++)
                argv[2 + i] = paths[i];
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);
                dup2(devnull, 2);
                alarm((unsigned)timeout_s);
                execv(sf_env("PLAINRUN"), (char *const *)argv);
                _exit(127);
        }
        free(argv);
        int status;
        waitpid(pid, &status, 0);
        return status;
}

int sf_shell(char **ret_out, const char *fmt, ...)
{
        char cmd[8192];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof(cmd), fmt, ap);
        va_end(ap);
        strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p, "popen %s", cmd);
        size_t len = 0, cap = 4096;
        char *out = malloc(cap);
        cr_assert_not_null(out);
        size_t n;
        while ((n = fread(out + len, 1, cap - len - 1, p)) > 0) {
                len += n;
                if (cap - len < 1024) {
                        out = realloc(out, cap *= 2);
                        cr_assert_not_null(out);
                }
        }
        out[len] = 0;
        int st = pclose(p);
        *ret_out = out;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void sf_sha1sum(const char *path, char hex[41])
{
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "sha1sum '%s'", path);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        cr_assert_eq(fscanf(p, "%40s", hex), 1, "sha1sum %s", path);
        pclose(p);
}

char *sf_dir_listing(const char *dir)
{
        struct dirent **names;
        int n = scandir(dir, &names, NULL, alphasort);
        cr_assert_geq(n, 0, "cannot list %s", dir);
        size_t cap = 64 + (size_t)n * 300, used = 0;
        char *out = calloc(1, cap);
        cr_assert_not_null(out);
        for (int i = 0; i < n; i++) {
                if (names[i]->d_name[0] != '.')
                        used += (size_t)snprintf(out + used, cap - used, "%s\n", names[i]->d_name);
                free(names[i]);
        }
        free(names);
        return out;
}
