/*
 * Crash minimization and cleansing by running this binary on candidates
 * (fuzzer/crashmin.h). Invariants: the input given is never modified; a
 * candidate is kept only when its trial crashed with the original's exact
 * signature; the result is written atomically, once, at the end (and only
 * when it differs from the input for -cleanse_crash, as libFuzzer writes
 * only a changed input). The trials' output is read, not shown.
 *
 * Minimization removes chunks, halving the chunk size when no removal of
 * that size works, down to single bytes (the classic delta-debugging
 * order): each removal that keeps the crash is kept at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/hash.h"
#include "fuzzer/crashmin.h"
#include "fuzzer/lfreport.h"

#include "snapfuzz/banned.h"

/* What a trial may print that is kept to find its signature. */
#define CRASHMIN_OUTPUT_MAX (1u << 20)
#define CRASHMIN_SIG_MAX 1024
/* libFuzzer's budget when -minimize_crash gets neither -runs nor
 * -max_total_time. */
#define CRASHMIN_DEFAULT_SECONDS 600

typedef struct Crashmin {
        char exe[PATH_MAX];
        char tmp[PATH_MAX]; /* the candidate's file */
        char **argv;        /* the trial's command line; its last slot is tmp */
        long trials_left;   /* -1: no limit */
        time_t deadline;    /* 0: none */
        long timeout_s;
        char sig[CRASHMIN_SIG_MAX]; /* the original crash's signature */
} Crashmin;

/* The lines that say which crash it was. */
static void signature_of(const char *out, char *sig, size_t cap)
{
        static const char *const keys[] = {"SUMMARY: ", "ERROR: libFuzzer: ", "DEDUP_TOKEN: "};
        size_t used = 0;
        sig[0] = 0;
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                const char *p = strstr(out, keys[k]);
                if (!p)
                        continue;
                size_t n = strcspn(p, "\n");
                /* ASan's SUMMARY ends with the pc and module: the type and
                 * the function are what identify the bug. */
                const char *paren = memchr(p, '(', n);
                if (k == 0 && paren)
                        n = (size_t)(paren - p);
                int w = snprintf(sig + used, cap - used, "%.*s|", (int)n, p);
                if (w < 0 || (size_t)w >= cap - used)
                        break;
                used += (size_t)w;
        }
}

/* Runs the binary on @data; returns true when it crashed, with its
 * signature in @sig. */
static bool trial(Crashmin *m, const uint8_t *data, size_t len, char *sig, size_t cap)
{
        int p[2], status = 0;
        sig[0] = 0;
        int fd = open(m->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || fs_write_all(fd, data, len) < 0 || pipe2(p, O_CLOEXEC) < 0) {
                if (fd >= 0)
                        close(fd);
                return false;
        }
        close(fd);
        pid_t pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                dup2(p[1], 2);
                execv(m->exe, m->argv);
                _exit(127);
        }
        close(p[1]);
        char *out = malloc(CRASHMIN_OUTPUT_MAX + 1);
        size_t used = 0;
        /* The child's own -timeout ends a hang; this is the backstop. */
        time_t until = time(NULL) + (m->timeout_s > 0 ? m->timeout_s * 2 : 2400) + 10;
        while (pid > 0 && out) {
                struct pollfd pf = {.fd = p[0], .events = POLLIN};
                if (time(NULL) > until) {
                        kill(pid, SIGKILL);
                        break;
                }
                if (poll(&pf, 1, 1000) <= 0)
                        continue;
                ssize_t n = read(p[0], out + used, CRASHMIN_OUTPUT_MAX - used);
                if (n <= 0)
                        break;
                used += (size_t)n;
                if (used == CRASHMIN_OUTPUT_MAX)
                        used = 0; /* keep the last part: the report is at the end */
        }
        close(p[0]);
        if (pid > 0)
                waitpid(pid, &status, 0);
        if (out) {
                out[used] = 0;
                signature_of(out, sig, cap);
        }
        free(out);
        if (m->trials_left > 0)
                m->trials_left--;
        return pid > 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static bool budget_left(const Crashmin *m)
{
        return m->trials_left != 0 && (!m->deadline || time(NULL) < m->deadline);
}

/* Whether @data crashes as the original did. */
static bool same_crash(Crashmin *m, const uint8_t *data, size_t len)
{
        char sig[CRASHMIN_SIG_MAX];
        return trial(m, data, len, sig, sizeof(sig)) && strcmp(sig, m->sig) == 0;
}

/* The options of the trials: this run's flags without the ones that made
 * it a minimization, then the candidate's file. */
static int crashmin_init(Crashmin *m, const LfFlags *f, int argc, char **argv)
{
        static const char *const drop[] = {
            "-minimize_crash=", "-cleanse_crash=",  "-exact_artifact_path=",
            "-runs=",           "-max_total_time=", "-artifact_prefix="};
        int n = 0;
        memset(m, 0, sizeof(*m));
        if (!realpath("/proc/self/exe", m->exe))
                return -errno;
        const char *tmpdir = getenv("TMPDIR");
        snprintf(m->tmp, sizeof(m->tmp), "%s/snapfuzz-crashmin.%d",
                 tmpdir && *tmpdir ? tmpdir : "/tmp", (int)getpid());
        m->argv = calloc((size_t)argc + 2, sizeof(char *));
        if (!m->argv)
                return -ENOMEM;
        m->argv[n++] = argv[0];
        for (int i = 1; i < argc; i++) {
                bool skip = argv[i][0] != '-';
                for (size_t k = 0; !skip && k < sizeof(drop) / sizeof(drop[0]); k++)
                        skip = strncmp(argv[i], drop[k], strlen(drop[k])) == 0;
                if (!skip)
                        m->argv[n++] = argv[i];
        }
        m->argv[n++] = m->tmp;
        m->timeout_s = f->timeout;
        m->trials_left = f->runs > 0 ? f->runs : -1;
        if (f->max_total_time > 0 || f->runs <= 0)
                m->deadline = time(NULL) + (f->max_total_time > 0 ? f->max_total_time
                                                                  : CRASHMIN_DEFAULT_SECONDS);
        return 0;
}

static void crashmin_deinit(Crashmin *m)
{
        if (m->tmp[0])
                unlink(m->tmp);
        free(m->argv);
}

/* Reads the one input and checks that it crashes. 0, or 1 after a line. */
static int crashmin_start(Crashmin *m, const LfFlags *f, int argc, char **argv, const char *what,
                          uint8_t **ret, size_t *ret_len)
{
        if (f->n_inputs != 1) {
                fprintf(stderr, "ERROR: %s should be given one input file\n", what);
                return 1;
        }
        int r = crashmin_init(m, f, argc, argv);
        if (r == 0)
                r = fs_read_file(AT_FDCWD, f->inputs[0], SIZE_MAX / 2, ret, ret_len);
        if (r < 0) {
                fprintf(stderr, "ERROR: %s: %s\n", f->inputs[0], strerror(-r));
                return 1;
        }
        if (!trial(m, *ret, *ret_len, m->sig, sizeof(m->sig))) {
                fprintf(stderr, "ERROR: the input %s did not crash\n", f->inputs[0]);
                return 1;
        }
        fprintf(stderr, "CRASH_MIN: '%s' (%zu bytes) crashes: %s\n", f->inputs[0], *ret_len,
                m->sig[0] ? m->sig : "(no report line)");
        return 0;
}

static int write_result(const char *path, const uint8_t *data, size_t len)
{
        char dir[PATH_MAX];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int r = fs_write_atomic(dfd, slash ? slash + 1 : path, data, len);
        close(dfd);
        return r;
}

/* One pass of removals of @chunk bytes; true when any was kept. */
static bool remove_chunks(Crashmin *m, uint8_t *data, size_t *len, size_t chunk, uint8_t *cand)
{
        bool kept = false;
        for (size_t i = 0; i < *len && budget_left(m);) {
                size_t n = chunk < *len - i ? chunk : *len - i;
                if (n == *len) {
                        i += n;
                        continue;
                }
                memcpy(cand, data, i);
                memcpy(cand + i, data + i + n, *len - i - n);
                if (same_crash(m, cand, *len - n)) {
                        memcpy(data, cand, *len - n);
                        *len -= n;
                        kept = true;
                } else {
                        i += n;
                }
        }
        return kept;
}

int crashmin_minimize(const LfFlags *f, int argc, char **argv)
{
        Crashmin m = {0};
        uint8_t *data = NULL;
        size_t len = 0;
        int status = crashmin_start(&m, f, argc, argv, "-minimize_crash", &data, &len);
        if (status)
                goto out;
        char sha[SHA1_HEX_LEN], path[PATH_MAX];
        sha1_hex(data, len, sha);
        uint8_t *cand = malloc(len ? len : 1);
        size_t chunk = len / 2 ? len / 2 : 1;
        while (cand && len > 1 && budget_left(&m)) {
                bool kept = remove_chunks(&m, data, &len, chunk, cand);
                if (!kept && chunk == 1)
                        break;
                if (!kept)
                        chunk = chunk / 2 ? chunk / 2 : 1;
                if (chunk > len / 2 && len / 2)
                        chunk = len / 2;
        }
        free(cand);
        if (f->exact_artifact_path)
                snprintf(path, sizeof(path), "%s", f->exact_artifact_path);
        else
                snprintf(path, sizeof(path), "%sminimized-from-%s",
                         f->artifact_prefix ? f->artifact_prefix : "", sha);
        int r = write_result(path, data, len);
        if (r < 0) {
                fprintf(stderr, "ERROR: cannot write %s: %s\n", path, strerror(-r));
                status = 1;
                goto out;
        }
        fprintf(stderr, "CRASH_MIN: minimized to %zu bytes: %s\n", len, path);
out:
        crashmin_deinit(&m);
        free(data);
        return status;
}

int crashmin_cleanse(const LfFlags *f, int argc, char **argv)
{
        static const uint8_t replacements[] = {' ', 0xff};
        Crashmin m = {0};
        uint8_t *data = NULL;
        size_t len = 0;
        bool changed = false;
        if (!f->exact_artifact_path) {
                fprintf(stderr, "ERROR: -cleanse_crash should be given one input file and "
                                "-exact_artifact_path\n");
                return 1;
        }
        int status = crashmin_start(&m, f, argc, argv, "-cleanse_crash", &data, &len);
        for (int pass = 0; status == 0 && pass < 5 && budget_left(&m); pass++) {
                bool again = false;
                for (size_t i = 0; i < len && budget_left(&m); i++) {
                        uint8_t was = data[i];
                        if (was == replacements[0] || was == replacements[1])
                                continue;
                        for (size_t k = 0; k < sizeof(replacements); k++) {
                                data[i] = replacements[k];
                                if (same_crash(&m, data, len)) {
                                        fprintf(stderr, "CLEANSE: byte %zu is now 0x%x\n", i,
                                                data[i]);
                                        again = changed = true;
                                        break;
                                }
                                data[i] = was;
                        }
                }
                if (!again)
                        break;
        }
        if (status == 0 && changed) {
                int r = write_result(f->exact_artifact_path, data, len);
                if (r < 0) {
                        fprintf(stderr, "ERROR: cannot write %s: %s\n", f->exact_artifact_path,
                                strerror(-r));
                        status = 1;
                }
        }
        crashmin_deinit(&m);
        free(data);
        return status;
}
