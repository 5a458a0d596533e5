/*
 * `snapfuzz run` as a person sees it on a terminal: the real binary in a
 * detached tmux session of a known size, its screen read back with
 * `tmux capture-pane` (engine/screen.c). The screen must be redrawn in
 * place (the same rows, nothing scrolled into the history), show every
 * figure and the exact reproduce command of the crash it found, keep the
 * log lines printed meanwhile, stay whole at 80x24, at a narrow width and
 * across a resize, and leave out colour under NO_COLOR. Off a terminal
 * (a pipe, TERM=dumb) the plain status lines stay, and --quiet shows the
 * summary only.
 *
 * tmux is a Debian package scripts/setup.sh installs; without it these
 * tests fail.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sfrun.h"

#define ROWS_MAX 256

/* Labels of the screen's rows, in order, from the title's next row. */
static const char *const labels[] = {"elapsed ", "execs ",   "coverage ",   "crashes ",
                                     "rss ",     "workers ", "last crash ", "reproduce "};
#define N_LABELS (sizeof(labels) / sizeof(labels[0]))

static char sock[64];

static void tmux_kill(void)
{
        char cmd[128];
        if (!sock[0])
                return;
        snprintf(cmd, sizeof(cmd), "tmux -L %s kill-server >/dev/null 2>&1", sock);
        (void)system(cmd);
        /* The server leaves its socket behind. */
        const char *dir = getenv("TMUX_TMPDIR");
        snprintf(cmd, sizeof(cmd), "%s/tmux-%d/%s", dir && *dir ? dir : "/tmp", (int)getuid(),
                 sock);
        unlink(cmd);
        sock[0] = 0;
}

TestSuite(tty, .fini = tmux_kill, .timeout = 120);

/* Runs tmux with @args on this test's server. */
static void tmux(const char *args)
{
        char full[8400];
        snprintf(full, sizeof(full), "tmux -L %s %s", sock, args);
        int st = system(full);
        cr_assert_eq(st, 0, "'%s' failed (status %d); is tmux installed (scripts/setup.sh)?", full,
                     st);
}

/* Starts `snapfuzz run @target --out @out @args` with @env in front, in a
 * new tmux server and a detached session of @cols x @rows. The pane stays
 * after the run, with its exit status printed. */
static void tmux_start(unsigned cols, unsigned rows, const char *env, const char *target,
                       const char *out, const char *args)
{
        static unsigned n;
        char cmd[4096], size[64];
        tmux_kill();
        snprintf(sock, sizeof(sock), "sf-tty-%d-%u", (int)getpid(), n++);
        snprintf(cmd, sizeof(cmd),
                 "'env %s %s run %s --out %s %s; echo SNAPFUZZ-EXIT=$?; sleep 600'", env,
                 sf_env("SNAPFUZZ_BIN"), sf_target(target), out, args);
        snprintf(size, sizeof(size), "-x %u -y %u", cols, rows);
        char line[8192];
        snprintf(line, sizeof(line), "new-session -d %s -s t %s", size, cmd);
        tmux(line);
}

/* The pane's text (@flags: -e for attributes, -J to join wrapped lines,
 * "-S -" for the history too). The caller frees it. */
static char *capture(const char *flags)
{
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "tmux -L %s capture-pane -p %s -t t", sock, flags);
        FILE *p = popen(cmd, "r");
        cr_assert(p, "popen %s", cmd);
        size_t cap = 1 << 16, len = 0;
        char *buf = malloc(cap);
        cr_assert(buf);
        size_t n;
        while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
                len += n;
                if (len + 1 == cap) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        cr_assert(buf);
                }
        }
        buf[len] = 0;
        cr_assert_eq(pclose(p), 0, "%s failed", cmd);
        return buf;
}

/* Splits @text into rows (in place). */
static unsigned split_rows(char *text, char **rows)
{
        unsigned n = 0;
        for (char *p = text; *p && n < ROWS_MAX;) {
                char *nl = strchr(p, '\n');
                rows[n++] = p;
                if (!nl)
                        break;
                *nl = 0;
                p = nl + 1;
        }
        return n;
}

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Waits until the pane shows @what (up to @secs seconds). */
static bool wait_for(const char *what, int secs)
{
        for (int i = 0; i < secs * 4; i++) {
                char *t = capture("-J");
                bool found = strstr(t, what) != NULL;
                free(t);
                if (found)
                        return true;
                usleep(250000);
        }
        return false;
}

static void wait_crash(const char *out)
{
        for (int i = 0; i < 120 && sf_count_crashes(out) < 1; i++)
                usleep(250000);
        cr_assert_geq(sf_count_crashes(out), 1, "no crash within 30 s");
}

/* The screen's top row in @rows (@n of them): the whole screen is there,
 * row after row, at the bottom of the pane, no row wider than @cols - 1.
 * Fails the test otherwise. */
static unsigned screen_top(char **rows, unsigned n, unsigned cols, const char *all)
{
        unsigned top = n;
        for (unsigned i = 1; i < n; i++)
                if (starts(rows[i], "elapsed "))
                        top = i - 1;
        cr_assert(top < n, "no screen in the pane:\n%s", all);
        cr_assert(strstr(rows[top], " snapfuzz "), "no title row:\n%s", all);
        cr_expect_eq(top + 1 + N_LABELS, n, "the screen is not at the bottom:\n%s", all);
        for (unsigned k = 0; k < N_LABELS && top + 1 + k < n; k++)
                cr_expect(
                    starts(rows[top + 1 + k], labels[k]) ||
                        /* narrow: the command whole rather than its label */
                        (k == N_LABELS - 1 && starts(rows[top + 1 + k], "snapfuzz reproduce ")),
                    "row %u is not '%s':\n%s", top + 1 + k, labels[k], all);
        for (unsigned k = 0; k <= N_LABELS && top + k < n; k++)
                cr_expect_lt(strlen(rows[top + k]), cols, "row %u wraps:\n%s", top + k, all);
        /* Nothing of a screen anywhere else: no stale copy above it. */
        for (unsigned i = 0; i < top; i++)
                for (unsigned k = 0; k < N_LABELS; k++)
                        cr_expect(!starts(rows[i], labels[k]) || strstr(rows[i], "snapfuzz:"),
                                  "row %u above the screen is a screen row:\n%s", i, all);
        return top;
}

static unsigned count_rows_starting(const char *text, const char *prefix)
{
        unsigned n = 0;
        for (const char *p = text; p && *p;) {
                if (starts(p, prefix))
                        n++;
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return n;
}

Test(tty, the_screen_is_redrawn_in_place_with_every_figure_and_the_crash_to_replay)
{
        char *out = sf_tmpdir();
        tmux_start(80, 24, "-u NO_COLOR", "tlv_parser", out,
                   "--workers 1 --keep-going --max-total-time 14");
        wait_crash(out);
        sleep(2);
        char *a = capture(""), *a_text = strdup(a);
        usleep(1600000);
        char *b = capture(""), *b_text = strdup(b);
        char *ra[ROWS_MAX], *rb[ROWS_MAX];
        unsigned na = split_rows(a, ra), nb = split_rows(b, rb);
        cr_assert_eq(na, 24, "%s", a_text);
        cr_assert_eq(nb, 24, "%s", b_text);
        unsigned ta = screen_top(ra, na, 80, a_text), tb = screen_top(rb, nb, 80, b_text);
        cr_expect_eq(ta, tb, "the screen moved:\n%s\n---\n%s", a_text, b_text);
        cr_expect_str_neq(ra[ta + 2], rb[tb + 2], "not redrawn: the executions did not move");

        /* Every figure. */
        static const char *const want[] = {
            "sandbox strict", "1 worker", "last new edge", "exec/s", "now",
            "average",        "edges",    "features",      "corpus", "unique",
            "total",          "timeouts", "ooms",          "MB",     "#1 "};
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                cr_expect(strstr(b_text, want[i]), "'%s' is not on the screen:\n%s", want[i],
                          b_text);

        /* The crash, by the id it was stored under, and how to replay it;
         * the line said when it was stored is still above the screen. */
        char *id = NULL;
        for (unsigned i = 0; i < tb && !id; i++)
                if (starts(rb[i], "snapfuzz: crash ")) {
                        id = strndup(rb[i] + 16, 16);
                }
        cr_assert(id, "the crash's log line is gone:\n%s", b_text);
        char path[4096], want_cmd[4300];
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        cr_expect_eq(access(path, F_OK), 0, "crash %s is not stored", id);
        cr_expect(strstr(rb[tb + 7], "last crash  "), "%s", b_text);
        snprintf(want_cmd, sizeof(want_cmd), "reproduce   snapfuzz reproduce ");
        cr_expect(starts(rb[tb + 8], want_cmd), "%s", b_text);
        /* The last crash stored is one of the run's ids, given whole. */
        char shown[64] = "";
        sscanf(rb[tb + 8] + strlen(want_cmd), "%63s", shown);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, shown);
        cr_expect_eq(access(path, F_OK), 0, "the screen's id '%s' is not stored:\n%s", shown,
                     b_text);
        snprintf(want_cmd, sizeof(want_cmd), "snapfuzz reproduce %s --out %s", shown, out);
        cr_expect(strstr(rb[tb + 8], want_cmd), "'%s' is not on the screen:\n%s", want_cmd, b_text);

        /* Redrawn, never scrolled: one screen in the whole history. */
        char *hist = capture("-S -");
        cr_expect_eq(count_rows_starting(hist, "execs "), 1, "the screen scrolled:\n%s", hist);
        /* Bold and colour are on where allowed (the NO_COLOR test's
         * counterpart). */
        char *attrs = capture("-e");
        cr_expect(strstr(attrs, "\033["), "no attribute on the screen");

        /* At the end: the final screen stays as text, with the summary. */
        cr_assert(wait_for("SNAPFUZZ-EXIT=1", 40), "the run did not end");
        char *end = capture("-J -S -");
        cr_expect(strstr(end, "done ["), "%s", end);
        cr_expect(strstr(end, "crashes stored"), "%s", end);
        cr_expect(strstr(end, "replay the last with: snapfuzz reproduce "), "%s", end);
        cr_expect_eq(count_rows_starting(end, "execs "), 1, "%s", end);
        free(end);
        free(attrs);
        free(hist);
        free(id);
        free(a);
        free(b);
        free(a_text);
        free(b_text);
        free(out);
}

Test(tty, a_narrow_terminal_and_a_resize_do_not_garble_it)
{
        char *out = sf_tmpdir();
        tmux_start(44, 16, "", "tlv_parser", out, "--workers 1 --keep-going --max-total-time 16");
        wait_crash(out);
        sleep(2);
        char *t = capture(""), *text = strdup(t);
        char *rows[ROWS_MAX];
        unsigned n = split_rows(t, rows);
        cr_assert_eq(n, 16, "%s", text);
        unsigned top = screen_top(rows, n, 44, text);
        cr_expect(strstr(rows[top + 4], "ooms"), "%s", text);
        free(t);
        free(text);

        /* Narrower and shorter, then wider and taller. */
        tmux("resize-window -t t -x 36 -y 14");
        usleep(1600000);
        t = capture("");
        text = strdup(t);
        n = split_rows(t, rows);
        cr_assert_eq(n, 14, "%s", text);
        top = screen_top(rows, n, 36, text);
        /* Narrow: the figures that matter and the whole crash id stay. */
        cr_expect(strstr(rows[top + 4], "timeouts"), "%s", text);
        char id[64] = "", path[4300];
        sscanf(rows[top + 7], "last crash %63s", id);
        cr_expect_eq(strlen(id), 16, "no whole id in the last crash's row:\n%s", text);
        cr_expect(strstr(rows[top + 8], id), "the reproduce command cuts the id:\n%s", text);
        snprintf(path, sizeof(path), "%s/crashes/%s", out, id);
        cr_expect_eq(access(path, F_OK), 0, "crash %s is not stored", id);
        free(t);
        free(text);

        tmux("resize-window -t t -x 100 -y 30");
        usleep(1600000);
        t = capture("");
        text = strdup(t);
        n = split_rows(t, rows);
        cr_assert_eq(n, 30, "%s", text);
        top = screen_top(rows, n, 100, text);
        cr_expect(strstr(rows[top + 2], "average"), "the wide screen is whole:\n%s", text);
        free(t);
        free(text);
        free(out);
}

Test(tty, no_color_leaves_no_attribute)
{
        char *out = sf_tmpdir();
        tmux_start(80, 24, "NO_COLOR=1", "tlv_parser", out,
                   "--workers 1 --keep-going --max-total-time 6");
        wait_crash(out);
        sleep(2);
        char *t = capture("-e"), *text = strdup(t);
        char *rows[ROWS_MAX];
        unsigned n = split_rows(t, rows);
        screen_top(rows, n, 80, text);
        cr_expect(!strchr(text, '\033'), "an escape sequence under NO_COLOR:\n%s", text);
        free(t);
        free(text);
        free(out);
}

Test(tty, term_dumb_and_quiet_get_no_screen)
{
        char *out = sf_tmpdir();
        tmux_start(80, 24, "TERM=dumb", "tlv_parser", out,
                   "--workers 1 --keep-going --max-total-time 4 --status-every 1");
        cr_assert(wait_for("SNAPFUZZ-EXIT=", 30), "the run did not end");
        char *t = capture("-J -S -");
        cr_expect_eq(count_rows_starting(t, "elapsed "), 0, "a screen with TERM=dumb:\n%s", t);
        cr_expect(strstr(t, "s] execs "), "no status line with TERM=dumb:\n%s", t);
        free(t);
        free(out);

        out = sf_tmpdir();
        tmux_start(80, 24, "", "tlv_parser", out,
                   "--workers 1 --keep-going --max-total-time 4 --quiet");
        sleep(2);
        t = capture("-J -S -");
        cr_expect(!strstr(t, "elapsed "), "a screen with --quiet:\n%s", t);
        cr_expect(!strstr(t, "snapfuzz:"), "a line with --quiet before the end:\n%s", t);
        free(t);
        cr_assert(wait_for("SNAPFUZZ-EXIT=", 30), "the run did not end");
        t = capture("-J -S -");
        cr_expect(strstr(t, "done ["), "no summary with --quiet:\n%s", t);
        free(t);
        free(out);
}

/* Off a terminal the status line keeps its format (other tools parse it),
 * and the summary names the real crash id. */
Test(tty, a_pipe_gets_plain_status_lines_and_the_real_id)
{
        char *out = sf_tmpdir();
        SfRun r;
        const char *args[] = {"run",
                              sf_target("tlv_parser"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--max-total-time",
                              "4",
                              "--status-every",
                              "1",
                              NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 1, "%s", r.err);
        cr_expect(!strchr(r.err, '\033'), "an escape sequence in a pipe:\n%s", r.err);
        unsigned lines = 0;
        for (const char *p = r.err; p && *p;) {
                double secs;
                char execs[32], rate[32];
                unsigned long long cov, ft, crashes, unique;
                size_t corpus;
                if (*p == '[') {
                        int n = sscanf(p,
                                       "[%lfs] execs %31s (%31[^)])  cov %llu ft %llu  corpus %zu  "
                                       "crashes %llu (%llu unique)",
                                       &secs, execs, rate, &cov, &ft, &corpus, &crashes, &unique);
                        cr_expect_eq(n, 8, "a status line out of format: %.120s", p);
                        lines++;
                }
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        cr_expect_geq(lines, 3, "%s", r.err);
        const char *hint = strstr(r.err, "replay the last with: snapfuzz reproduce ");
        cr_assert(hint, "%s", r.err);
        char id[64] = "", path[4200];
        sscanf(hint + strlen("replay the last with: snapfuzz reproduce "), "%63s", id);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        cr_expect_eq(access(path, F_OK), 0, "the hint's id '%s' is not stored:\n%s", id, r.err);
        sf_run_free(&r);

        /* `snapfuzz crashes` names a real one too. */
        const char *list[] = {"crashes", "--out", out, NULL};
        sf_run(&r, 60, list);
        hint = strstr(r.out, "replay one with: snapfuzz reproduce ");
        cr_assert(hint, "%s", r.out);
        sscanf(hint + strlen("replay one with: snapfuzz reproduce "), "%63s", id);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        cr_expect_eq(access(path, F_OK), 0, "the listing's id '%s' is not stored:\n%s", id, r.out);
        sf_run_free(&r);
        free(out);
}

Test(tty, quiet_shows_errors_and_the_summary_only)
{
        char *out = sf_tmpdir();
        SfRun r;
        const char *args[] = {"run",
                              sf_target("ini_parser"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--max-total-time",
                              "30",
                              "--status-every",
                              "1",
                              "--quiet",
                              NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 1, "%s", r.err);
        char *id = sf_only_crash(out);
        cr_expect(!strstr(r.err, "coverage counters"), "a start line with --quiet:\n%s", r.err);
        cr_expect(!strstr(r.err, "minimized"), "a helper line with --quiet:\n%s", r.err);
        cr_expect_eq(count_rows_starting(r.err, "["), 0, "a status line with --quiet:\n%s", r.err);
        cr_expect(strstr(r.err, "done ["), "no final line:\n%s", r.err);
        char want[256];
        snprintf(want, sizeof(want), "replay it with: snapfuzz reproduce %s --out %s", id, out);
        cr_expect(strstr(r.err, want), "'%s' not in:\n%s", want, r.err);
        free(id);
        sf_run_free(&r);
        free(out);
}
