/*
 * -minimize_crash=1 and -cleanse_crash=1 for the drop-in. ClusterFuzz runs
 * them on one testcase with -exact_artifact_path (libfuzzer.py
 * minimize_crash, cleanse_crash) and then checks the result still
 * reproduces; the trials here are what makes that hold.
 *
 * Each trial writes the candidate to a temporary file and runs this very
 * binary (/proc/self/exe, argv[0] kept) on it, with the command line's
 * other flags (timeouts, memory limits, the sandbox) and without the
 * minimizing ones, so a candidate is judged by exactly the single-input
 * run ClusterFuzz reproduces with. The trial's output is read back for
 * its crash key: the report's "ERROR: <tool>: <type>" (addresses, pids and
 * numbers dropped) and the first two function names of its stack. A
 * candidate crashes "the same way" when its key equals the input's; the
 * minimizer (recovery/minimize.c, minimize_input) keeps only those, so the
 * minimized input is the same bug, not the first crash found nearby.
 *
 * Invariants: the input file is never written; the result is written
 * atomically, and only after the input was seen to crash; every temporary
 * file is removed before returning.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/hash.h"
#include "fuzzer/crashmin.h"
#include "recovery/minimize.h"

#include "snapfuzz/banned.h"

#define CRASHMIN_KEY 512
#define CRASHMIN_MAX_OUTPUT (4u << 20)

typedef struct Crashmin {
        char **argv;   /* the trial's command line; the last slot is the file */
        int file_slot; /* argv index of the candidate's path */
        char cand[64]; /* the candidate's temporary file */
        char log[64];  /* the trial's output */
        int timeout_s; /* a trial running longer is killed */
        char want[CRASHMIN_KEY];
        bool have_want; /* the first trial's key is the wanted one */
        uint64_t trials;
} Crashmin;

static bool crashmin_drop_arg(const char *a, const char *input)
{
        static const char *const drop[] = {"-minimize_crash=",
                                           "-cleanse_crash=",
                                           "-exact_artifact_path=",
                                           "-runs=",
                                           "-max_total_time=",
                                           "-artifact_prefix=",
                                           NULL};
        for (int i = 0; drop[i]; i++)
                if (!strncmp(a, drop[i], strlen(drop[i])))
                        return true;
        return !strcmp(a, input);
}

/* The trials' command line: argv without the minimizing flags and the
 * input, then the candidate's path. */
static int crashmin_init(Crashmin *c, const LfFlags *f, int argc, char **argv)
{
        memset(c, 0, sizeof(*c));
        c->argv = calloc((size_t)argc + 2, sizeof(char *));
        if (!c->argv)
                return -ENOMEM;
        int n = 0;
        c->argv[n++] = argv[0];
        for (int i = 1; i < argc; i++)
                if (!crashmin_drop_arg(argv[i], f->inputs[0]))
                        c->argv[n++] = argv[i];
        const char *tmp = getenv("TMPDIR");
        snprintf(c->cand, sizeof(c->cand), "%.40s/sfcm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        snprintf(c->log, sizeof(c->log), "%.40s/sfcm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(c->cand);
        if (fd < 0)
                return -errno;
        close(fd);
        fd = mkstemp(c->log);
        if (fd < 0) {
                int e = -errno;
                unlink(c->cand);
                return e;
        }
        close(fd);
        c->file_slot = n;
        c->argv[n++] = c->cand;
        c->timeout_s = (int)(f->timeout > 0 ? f->timeout + 10 : 60);
        return 0;
}

static void crashmin_deinit(Crashmin *c)
{
        if (c->cand[0])
                unlink(c->cand);
        if (c->log[0])
                unlink(c->log);
        free(c->argv);
}

/* Appends @s to @key, digits and hex numbers dropped (pids, addresses,
 * sizes and line numbers differ between runs of the same bug). */
static void crashmin_key_add(char *key, size_t cap, const char *s, size_t len)
{
        size_t k = strlen(key);
        for (size_t i = 0; i < len && k + 1 < cap; i++) {
                if (s[i] == '0' && i + 1 < len && s[i + 1] == 'x') {
                        i++;
                        while (i + 1 < len && strchr("0123456789abcdefABCDEF", s[i + 1]))
                                i++;
                        continue;
                }
                if (s[i] >= '0' && s[i] <= '9')
                        continue;
                key[k++] = s[i];
        }
        key[k] = '\0';
}

/* The crash key of a trial's output (see the top of the file); "" when
 * the output has no report. */
static void crashmin_key(const char *out, char *key, size_t cap)
{
        key[0] = '\0';
        const char *err = strstr(out, "ERROR: ");
        while (err && !strstr(err, "Sanitizer") && strncmp(err + 7, "libFuzzer:", 10))
                err = strstr(err + 7, "ERROR: ");
        const char *bug = strstr(out, "===BUG DETECTED: ");
        if (bug) {
                const char *e = strchr(bug, '\n');
                crashmin_key_add(key, cap, bug, e ? (size_t)(e - bug) : strlen(bug));
        }
        if (!err)
                return;
        err += 7;
        size_t len = strcspn(err, "\n(");
        const char *on = strstr(err, " on ");
        if (on && (size_t)(on - err) < len)
                len = (size_t)(on - err);
        const char *after = strstr(err, " after ");
        if (after && (size_t)(after - err) < len)
                len = (size_t)(after - err);
        crashmin_key_add(key, cap, err, len);
        /* The first two frames' functions. */
        const char *p = err;
        for (int frames = 0; frames < 2 && (p = strstr(p, " in ")); p += 4) {
                const char *line = p;
                while (line > out && line[-1] != '\n')
                        line--;
                while (*line == ' ')
                        line++;
                if (*line != '#')
                        continue;
                crashmin_key_add(key, cap, "|", 1);
                crashmin_key_add(key, cap, p + 4, strcspn(p + 4, " \n"));
                frames++;
        }
}

/* Runs the trial command on the candidate file; 0 with the exit status in
 * *ret_status (128 + signal), or a negative errno. */
static int crashmin_exec(Crashmin *c, int *ret_status)
{
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                int in = open("/dev/null", O_RDONLY);
                int out = open(c->log, O_WRONLY | O_TRUNC);
                if (in < 0 || out < 0)
                        _exit(127);
                dup2(in, 0);
                dup2(out, 1);
                dup2(out, 2);
                execv("/proc/self/exe", c->argv);
                _exit(127);
        }
        time_t deadline = time(NULL) + c->timeout_s;
        int status = 0;
        for (;;) {
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
                if (w < 0 && errno != EINTR)
                        return -errno;
                if (time(NULL) > deadline)
                        kill(pid, SIGKILL);
                usleep(5 * 1000);
        }
        *ret_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return 0;
}

/* The minimizer's oracle (MinimizeOracle): one trial, its verdict. */
static int crashmin_trial(void *ctx, const uint8_t *data, size_t len)
{
        Crashmin *c = ctx;
        int fd = open(c->cand, O_WRONLY | O_TRUNC);
        if (fd < 0)
                return -errno;
        int r = fs_write_all(fd, data, len);
        close(fd);
        if (r < 0)
                return r;
        int status = 0;
        if ((r = crashmin_exec(c, &status)) < 0)
                return r;
        c->trials++;
        if (status == 0)
                return MINIMIZE_NO_CRASH;
        uint8_t *out = NULL;
        size_t out_len = 0;
        char key[CRASHMIN_KEY];
        if (fs_read_file(AT_FDCWD, c->log, CRASHMIN_MAX_OUTPUT, &out, &out_len) < 0)
                return MINIMIZE_OTHER_CRASH;
        crashmin_key((const char *)out, key, sizeof(key));
        free(out);
        if (!c->have_want) {
                snprintf(c->want, sizeof(c->want), "%s", key);
                c->have_want = true;
                return MINIMIZE_SAME;
        }
        return strcmp(key, c->want) == 0 ? MINIMIZE_SAME : MINIMIZE_OTHER_CRASH;
}

/* Writes @data to @path atomically (a temporary file in its directory,
 * then a rename). */
static int crashmin_write(const char *path, const uint8_t *data, size_t len)
{
        char dir[4096], base[4096];
        snprintf(dir, sizeof(dir), "%s", path);
        snprintf(base, sizeof(base), "%s", path);
        int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int r = fs_write_atomic(dfd, basename(base), data, len);
        close(dfd);
        return r;
}

static int crashmin_load(const LfFlags *f, const char *what, uint8_t **ret, size_t *ret_len)
{
        if (f->n_inputs != 1 || (!strcmp(what, "cleanse_crash") && !f->exact_artifact_path)) {
                fprintf(stderr, "ERROR: -%s should be given one input file%s\n", what,
                        strcmp(what, "cleanse_crash") ? "" : " and -exact_artifact_path");
                return CRASHMIN_USAGE;
        }
        int r = fs_read_file(AT_FDCWD, f->inputs[0], 1u << 30, ret, ret_len);
        if (r < 0) {
                fprintf(stderr, "ERROR: cannot read %s: %s\n", f->inputs[0], strerror(-r));
                return CRASHMIN_USAGE;
        }
        return 0;
}

int crashmin_minimize(const LfFlags *f, int argc, char **argv)
{
        uint8_t *in = NULL, *best = NULL;
        size_t len = 0, best_len = 0;
        Crashmin c;
        int r = crashmin_load(f, "minimize_crash", &in, &len);
        if (r)
                return r;
        if ((r = crashmin_init(&c, f, argc, argv)) < 0)
                goto out;
        MinimizeBudget b = {0};
        if (f->runs > 0)
                b.max_trials = (uint64_t)f->runs;
        if (f->max_total_time > 0)
                b.max_ms = (int64_t)f->max_total_time * 1000;
        if (f->runs <= 0 && f->max_total_time <= 0) {
                fprintf(stderr, "INFO: you need to specify -runs=N or -max_total_time=N with "
                                "-minimize_crash=1\nINFO: defaulting to -max_total_time=600\n");
                b.max_ms = 600 * 1000;
        }
        fprintf(stderr, "CRASH_MIN: minimizing crash input: '%s' (%zu bytes)\n", f->inputs[0], len);
        MinimizeStats st;
        r = minimize_input(crashmin_trial, &c, in, len, &b, &best, &best_len, &st);
        if (r == MINIMIZE_NOT_REPRODUCED) {
                fprintf(stderr, "ERROR: the input %s did not crash\n", f->inputs[0]);
                r = CRASHMIN_NO_CRASH;
                goto out;
        }
        if (r < 0)
                goto out;
        char path[4096], sha[SHA1_HEX_LEN];
        if (f->exact_artifact_path) {
                snprintf(path, sizeof(path), "%s", f->exact_artifact_path);
        } else {
                sha1_hex(in, len, sha);
                snprintf(path, sizeof(path), "%sminimized-from-%s",
                         f->artifact_prefix ? f->artifact_prefix : "./", sha);
        }
        fprintf(stderr, "CRASH_MIN: crash key '%s'; %zu -> %zu bytes in %llu trials (%s)\n", c.want,
                len, best_len, (unsigned long long)st.trials, minimize_stop_str(st.stopped));
        if ((r = crashmin_write(path, best, best_len)) < 0) {
                fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(-r));
                goto out;
        }
        fprintf(stderr, "CRASH_MIN: minimized input written to %s\n", path);
out:
        if (c.argv)
                crashmin_deinit(&c);
        free(best);
        free(in);
        return r;
}

/* One CLEANSE pass over @u: each byte not already ' ' or 0xff tries both;
 * kept when the crash is the same. Returns 1 when a byte changed, 0 when
 * none did, or a negative errno. */
static int crashmin_cleanse_pass(Crashmin *c, uint8_t *u, size_t len, int pass)
{
        static const uint8_t repl[2] = {' ', 0xff};
        int changed = 0;
        for (size_t i = 0; i < len; i++) {
                uint8_t orig = u[i];
                if (orig == repl[0] || orig == repl[1])
                        continue;
                fprintf(stderr, "CLEANSE[%d]: Trying to replace byte %zu of %zu\n", pass, i, len);
                for (int k = 0; k < 2; k++) {
                        u[i] = repl[k];
                        int v = crashmin_trial(c, u, len);
                        if (v < 0)
                                return v;
                        if (v == MINIMIZE_SAME) {
                                fprintf(stderr, "CLEANSE: Replaced byte %zu with 0x%x\n", i,
                                        repl[k]);
                                changed = 1;
                                break;
                        }
                        u[i] = orig;
                }
        }
        return changed;
}

int crashmin_cleanse(const LfFlags *f, int argc, char **argv)
{
        uint8_t *u = NULL;
        size_t len = 0;
        Crashmin c;
        int r = crashmin_load(f, "cleanse_crash", &u, &len);
        if (r)
                return r;
        if ((r = crashmin_init(&c, f, argc, argv)) < 0)
                goto out;
        r = crashmin_trial(&c, u, len);
        if (r != MINIMIZE_SAME) {
                if (r >= 0) {
                        fprintf(stderr, "ERROR: the input %s did not crash\n", f->inputs[0]);
                        r = CRASHMIN_NO_CRASH;
                }
                goto out;
        }
        for (int pass = 0; pass < 5; pass++) {
                r = crashmin_cleanse_pass(&c, u, len, pass);
                if (r <= 0)
                        break;
        }
        if (r < 0)
                goto out;
        if ((r = crashmin_write(f->exact_artifact_path, u, len)) < 0)
                fprintf(stderr, "ERROR: cannot write %s: %s\n", f->exact_artifact_path,
                        strerror(-r));
out:
        if (c.argv)
                crashmin_deinit(&c);
        free(u);
        return r;
}
