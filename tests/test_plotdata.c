/*
 * OUT/plot_data (engine/plotdata.h): a header, one line per period, a
 * resumed run that goes on where the last one stopped, a torn line cut off,
 * and a reader that skips whatever is not a line of figures.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "engine/plotdata.h"

static int tmpdir_fd(void)
{
        char tmpl[] = "/tmp/sf-plotdata-XXXXXX";
        cr_assert(mkdtemp(tmpl));
        int fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        return fd;
}

static char *read_all(int dirfd)
{
        uint8_t *text = NULL;
        size_t len;
        cr_assert_eq(fs_read_file(dirfd, PLOTDATA_FILE, 1 << 20, &text, &len), 0);
        return (char *)text;
}

static ScreenFigures at(double secs, uint64_t execs, uint64_t edges, uint64_t crashes)
{
        return (ScreenFigures){.elapsed_s = secs,
                               .execs = execs,
                               .edges = edges,
                               .features = edges * 2,
                               .corpus = 10,
                               .crashes = crashes,
                               .timeouts = 1,
                               .ooms = 0,
                               .rss_mb = 12};
}

/* The last line of @text, parsed. */
static PlotRow last_row(const char *text)
{
        PlotRow r;
        size_t len = strlen(text);
        cr_assert(len > 0 && text[len - 1] == '\n', "%s", text);
        const char *start = text + len - 1;
        while (start > text && start[-1] != '\n')
                start--;
        cr_assert_eq(plotdata_parse_line(start, (size_t)(text + len - 1 - start), &r), 0, "%s",
                     start);
        return r;
}

Test(plotdata, a_header_then_one_line_per_append)
{
        int dirfd = tmpdir_fd();
        PlotData *p;
        cr_assert_eq(plotdata_open(&p, dirfd), 0);
        ScreenFigures f = at(3, 3000, 50, 0);
        cr_assert_eq(plotdata_append(p, &f, 0), 0);
        f = at(6, 9000, 60, 2);
        cr_assert_eq(plotdata_append(p, &f, 1), 0);
        plotdata_free(p);
        char *text = read_all(dirfd);
        cr_expect(strncmp(text, PLOTDATA_HEADER "\n", strlen(PLOTDATA_HEADER) + 1) == 0, "%s",
                  text);
        cr_expect(strstr(text, "\n3.0, 3000, 1000.0, 50, 100, 10, 0, 0, 1, 0, 12\n"), "%s", text);
        /* The speed is over the period: 6000 in 3 s. */
        cr_expect(strstr(text, "\n6.0, 9000, 2000.0, 60, 120, 10, 1, 2, 1, 0, 12\n"), "%s", text);
        free(text);
        close(dirfd);
}

Test(plotdata, a_resumed_run_goes_on_where_the_last_stopped_and_a_torn_line_goes)
{
        int dirfd = tmpdir_fd();
        PlotData *p;
        cr_assert_eq(plotdata_open(&p, dirfd), 0);
        ScreenFigures f = at(600, 60000, 50, 4);
        cr_assert_eq(plotdata_append(p, &f, 2), 0);
        plotdata_free(p);
        /* A kill in the middle of a line. */
        int fd = openat(dirfd, PLOTDATA_FILE, O_WRONLY | O_APPEND);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, "603.0, 6100", 11), 11);
        close(fd);

        cr_assert_eq(plotdata_open(&p, dirfd), 0);
        f = at(10, 500, 40, 1);
        cr_assert_eq(plotdata_append(p, &f, 1), 0);
        plotdata_free(p);
        char *text = read_all(dirfd);
        cr_expect(!strstr(text, "603.0, 6100"), "the torn line is gone:\n%s", text);
        cr_expect_eq(strstr(text, "# relative_time"), text, "one header:\n%s", text);
        cr_expect(!strstr(text + 1, "# relative_time"), "one header:\n%s", text);
        PlotRow r = last_row(text);
        cr_expect_float_eq(r.t, 610, 1e-9, "time goes on: %f", r.t);
        cr_expect_eq(r.execs, 60500);
        cr_expect_eq(r.unique_crashes, 3);
        cr_expect_eq(r.crashes, 5);
        cr_expect_eq(r.timeouts, 2);
        cr_expect_eq(r.edges, 40, "coverage is this run's, not a sum");
        free(text);
        close(dirfd);
}

Test(plotdata, the_reader_takes_only_whole_lines_of_figures)
{
        PlotRow r;
        const char *good = "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, -1";
        cr_assert_eq(plotdata_parse_line(good, strlen(good), &r), 0);
        cr_expect_float_eq(r.t, 12.5, 1e-9);
        cr_expect_eq(r.rss_mb, -1);
        static const char *const bad[] = {
            PLOTDATA_HEADER,
            "",
            "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0",        /* torn: ten fields */
            "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, 1, 7",  /* twelve */
            "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, 1x",    /* not a number */
            "12.5, 100, 8.0, 3, 4, -5, 0, 0, 0, 0, 1",    /* a negative count */
            "nan, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, 1",      /* not finite */
            "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, 1\xff", /* garbage */
            "12.5,, 8.0, 3, 4, 5, 0, 0, 0, 0, 1",         /* an empty field */
            "12.5, 1.5, 8.0, 3, 4, 5, 0, 0, 0, 0, 1",     /* a fraction of a count */
            /* Out of the integers' range (converting them is undefined
             * behaviour; found by scripts/selffuzz.sh under UBSan). */
            "12.5, 100, 8.0, 3, 4, 5, 0, 0, 0, 0, 1e19",
            "12.5, 1e30, 8.0, 3, 4, 5, 0, 0, 0, 0, 1",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_expect_eq(plotdata_parse_line(bad[i], strlen(bad[i]), &r), -EINVAL,
                             "taken: '%s'", bad[i]);
}

Test(plotdata, a_symbolic_link_is_not_followed)
{
        int dirfd = tmpdir_fd();
        cr_assert_eq(symlinkat("/etc/passwd", dirfd, PLOTDATA_FILE), 0);
        PlotData *p;
        cr_expect_lt(plotdata_open(&p, dirfd), 0);
        close(dirfd);
}
