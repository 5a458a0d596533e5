/*
 * The live screen's lines (engine/screen.h, screen_render): what a person
 * reads on a terminal of any width, and that nothing from outside (a crash
 * message, a path) reaches it as a control sequence. How it is drawn in a
 * real terminal is tests/test_tty.c's (tmux).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/screen.h"

static ScreenWorker workers[3] = {
    {.execs = 1000, .alive = true}, {.execs = 2000, .alive = true}, {.execs = 0, .alive = false}};

static ScreenFigures figures(const ScreenCrash *crash)
{
        return (ScreenFigures){
            .elapsed_s = 125,
            .execs = 3000,
            .edges = 77,
            .features = 301,
            .last_new_edge_s = 100,
            .corpus = 42,
            .crashes = 9,
            .unique = 2,
            .timeouts = 5,
            .ooms = 1,
            .rss_mb = 35,
            .rss_limit_mb = 2048,
            .target = "/work/targets/parser.so",
            .sandbox = "strict",
            .out_dir = "/tmp/out dir",
            .n_workers = 3,
            .workers = workers,
            .last_crash = crash,
        };
}

/* The visible width of a line: escape sequences (ESC [ ... letter) take
 * no column. */
static unsigned visible(const char *s, size_t len)
{
        unsigned w = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\033') {
                        while (i < len && !(s[i] >= 'A' && s[i] <= 'z' && s[i] != '['))
                                i++;
                        continue;
                }
                if (((unsigned char)s[i] & 0xc0) != 0x80)
                        w++;
        }
        return w;
}

static char *render(Screen *s, const ScreenFigures *f, unsigned cols, bool colour, unsigned *n)
{
        static char buf[65536];
        *n = screen_render(s, f, 1000000, cols, colour, buf, sizeof(buf));
        return buf;
}

Test(screen, shows_every_figure_and_the_reproduce_command)
{
        Screen *s;
        ScreenCrash k;
        screen_crash_set(&k, "9a74042773df6cf3", "abort", "the target died by SIGABRT", 110);
        ScreenFigures f = figures(&k);
        cr_assert_eq(screen_new(&s, SF_DISPLAY_AUTO, 3, -1), 0);
        unsigned n;
        const char *t = render(s, &f, 200, false, &n);
        cr_assert_eq(n, SCREEN_LINES, "%s", t);
        static const char *const want[] = {
            "parser.so",
            "sandbox strict",
            "3 workers",
            "elapsed",
            "2m 05s",
            "last new edge 25s ago",
            "execs",
            "exec/s",
            "77 edges, 301 features",
            "corpus 42",
            "2 unique / 9 total",
            "timeouts 5",
            "ooms 1",
            "35 MB (limit 2048 MB)",
            "#1 1000",
            "#2 2000",
            "#3 down",
            "last crash  9a74042773df6cf3 abort 15s ago: the target died by SIGABRT",
            "reproduce   snapfuzz reproduce 9a74042773df6cf3 --out '/tmp/out dir'"};
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                cr_expect(strstr(t, want[i]), "'%s' is not on the screen:\n%s", want[i], t);
        cr_expect(!strchr(t, '\033'), "no escape sequence without colour:\n%s", t);
        screen_free(s);
}

Test(screen, says_when_there_is_no_crash_or_new_edge_yet)
{
        Screen *s;
        ScreenFigures f = figures(NULL);
        f.last_new_edge_s = -1;
        cr_assert_eq(screen_new(&s, SF_DISPLAY_AUTO, 3, -1), 0);
        unsigned n;
        const char *t = render(s, &f, 100, false, &n);
        cr_expect(strstr(t, "last new edge none yet"), "%s", t);
        cr_expect(strstr(t, "last crash  none yet"), "%s", t);
        screen_free(s);
}

/* No line may reach the last column, at any width: a line that wraps
 * pushes the screen off its rows. */
Test(screen, every_line_is_cut_to_the_width_colour_or_not)
{
        Screen *s;
        ScreenCrash k;
        screen_crash_set(&k, "9a74042773df6cf3", "asan",
                         "heap-buffer-overflow on address 0x602000000011 at pc 0x55d0 bp 0x7ffd "
                         "sp 0x7ffd READ of size 1 at 0x602000000011 thread T0",
                         3);
        ScreenFigures f = figures(&k);
        f.out_dir = "/a/very/long/output/directory/path/that/goes/on/and/on/for/a/while/out";
        cr_assert_eq(screen_new(&s, SF_DISPLAY_AUTO, 3, -1), 0);
        for (unsigned cols = 20; cols <= 200; cols += 7) {
                for (int colour = 0; colour <= 1; colour++) {
                        unsigned n;
                        char *t = render(s, &f, cols, colour, &n);
                        cr_assert_eq(n, SCREEN_LINES);
                        for (char *line = t; *line;) {
                                char *nl = strchr(line, '\n');
                                cr_assert(nl);
                                unsigned w = visible(line, (size_t)(nl - line));
                                cr_expect_leq(w, cols - 1, "%u columns at width %u: %.*s", w, cols,
                                              (int)(nl - line), line);
                                line = nl + 1;
                        }
                        if (colour)
                                cr_expect(strstr(t, "\033[1"), "bold with colour");
                }
        }
        screen_free(s);
}

Test(screen, text_from_outside_never_reaches_the_terminal_as_control_sequences)
{
        Screen *s;
        ScreenCrash k;
        screen_crash_set(&k, "id\033[2J", "segv\r", "message\033]0;title\007 with\nnewline", 1);
        ScreenFigures f = figures(&k);
        f.target = "/t/\033[31mred.so";
        f.out_dir = "/tmp/o\033[H";
        cr_assert_eq(screen_new(&s, SF_DISPLAY_AUTO, 3, -1), 0);
        unsigned n;
        const char *t = render(s, &f, 400, false, &n);
        for (const char *p = t; *p; p++)
                cr_assert(*p == '\n' || (unsigned char)*p >= 0x20, "control byte 0x%02x in:\n%s",
                          (unsigned char)*p, t);
        cr_expect(strstr(t, "id\\x1b[2J"), "the id is shown escaped:\n%s", t);
        screen_free(s);
}

Test(screen, speeds_now_come_from_the_previous_snapshot)
{
        Screen *s;
        ScreenWorker w[1] = {{.execs = 1000, .alive = true}};
        ScreenFigures f = figures(NULL);
        f.n_workers = 1;
        f.workers = w;
        f.elapsed_s = 1;
        f.execs = 1000;
        cr_assert_eq(screen_new(&s, SF_DISPLAY_AUTO, 3, -1), 0);
        static char buf[65536];
        screen_render(s, &f, 1000, 200, false, buf, sizeof(buf));
        /* One second later, 50000 more: 50.0k/s now, 25.5k/s on average. */
        w[0].execs = 51000;
        f.execs = 51000;
        f.elapsed_s = 2;
        screen_render(s, &f, 2000, 200, false, buf, sizeof(buf));
        cr_expect(strstr(buf, "exec/s 50.0k now, 25.5k average"), "%s", buf);
        cr_expect(strstr(buf, "#1 51.0k 50.0k/s"), "%s", buf);
        screen_free(s);
}

Test(screen, shell_quotes_what_needs_it)
{
        char b[128];
        screen_shell_quote(b, sizeof(b), "/tmp/out-1");
        cr_expect_str_eq(b, "/tmp/out-1");
        screen_shell_quote(b, sizeof(b), "/tmp/it's here");
        cr_expect_str_eq(b, "'/tmp/it'\\''s here'");
        screen_shell_quote(b, sizeof(b), "");
        cr_expect_str_eq(b, "''");
}
