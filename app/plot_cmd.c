/*
 * `snapfuzz plot`, as afl-plot does it: read the time series, write a
 * gnuplot script, let gnuplot draw. The lines of OUT/plot_data are parsed
 * here (engine/plotdata.h) and only the ones that parse reach gnuplot, as
 * an inline data block: a torn last line, a line being written while we
 * read, or garbage never make gnuplot fail or draw nonsense.
 *
 * gnuplot is run with posix_spawnp (so a missing gnuplot is ENOENT, said
 * as such); its script goes to its standard input, the picture comes back
 * on its standard output (no path of ours inside the script), and both of
 * its outputs go to unlinked temporary files, so no pipe can fill up while
 * we write. The picture is then written atomically where it was asked.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/cliopt.h"
#include "app/plot_cmd.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "snapfuzz/engine.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

extern char **environ;

/* plot_data may hold a long campaign: a line every 3 s for a year is
 * under 1 GB; more than this is not a plot_data. */
#define PLOT_DATA_MAX (1024u << 20)
/* A picture from gnuplot larger than this is not one. */
#define PLOT_PICTURE_MAX (256u << 20)

typedef struct PlotArgs {
        const char *out_dir;
        const char *output; /* NULL: OUT/plot.png */
} PlotArgs;

static void plot_usage(void)
{
        printf("usage: snapfuzz plot [OUT_DIR | --out DIR] [--output FILE.png|FILE.svg]\n"
               "Draw the campaign's coverage, exec/s and crashes over time from\n"
               "OUT_DIR/plot_data (default ./snapfuzz-out) with gnuplot (Debian:\n"
               "apt-get install gnuplot-nox), as a PNG or an SVG by the file's extension.\n"
               "  --out DIR          the output directory of the campaign\n"
               "  -o, --output FILE  where the picture goes (default OUT_DIR/plot.png)\n"
               "examples:\n"
               "  snapfuzz plot snapfuzz-out\n"
               "  snapfuzz plot --out out --output progress.svg\n");
}

/* 0, SF_EXIT_USAGE after a line, or -1 after --help. */
static int plot_parse_args(int argc, char **argv, PlotArgs *a)
{
        enum { OPT_OUT = 1000, OPT_OUTPUT, OPT_HELP };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"output", required_argument, NULL, OPT_OUTPUT},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        a->out_dir = optarg;
                        break;
                case 'o':
                case OPT_OUTPUT:
                        a->output = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        plot_usage();
                        return -1;
                default:
                        return cliopt_bad_in(c, argv, opts, "plot");
                }
        }
        if (argc - optind > 1 || (a->out_dir && argc - optind == 1)) {
                log_error(
                    "plot takes one output directory: snapfuzz plot [OUT_DIR] [--output FILE]");
                return SF_EXIT_USAGE;
        }
        if (argc - optind == 1)
                a->out_dir = argv[optind];
        if (!a->out_dir)
                a->out_dir = "snapfuzz-out";
        return 0;
}

/* "png" or "svg" from @path's extension; NULL for anything else. */
static const char *plot_format(const char *path)
{
        const char *dot = strrchr(path, '.');
        if (dot && strcasecmp(dot, ".png") == 0)
                return "png";
        if (dot && strcasecmp(dot, ".svg") == 0)
                return "svg";
        return NULL;
}

/* --- the script --- */

typedef struct Buf {
        char *p;
        size_t len, cap;
        bool failed;
} Buf;

static void buf_add(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_add(Buf *b, const char *fmt, ...)
{
        va_list ap;
        if (b->failed)
                return;
        for (;;) {
                va_start(ap, fmt);
                int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
                va_end(ap);
                if (n < 0) {
                        b->failed = true;
                        return;
                }
                if (b->p && (size_t)n < b->cap - b->len) {
                        b->len += (size_t)n;
                        return;
                }
                size_t cap = (b->cap ? b->cap * 2 : 65536) + (size_t)n;
                char *p = realloc(b->p, cap);
                if (!p) {
                        b->failed = true;
                        return;
                }
                b->p = p;
                b->cap = cap;
        }
}

/* @s as a gnuplot single-quoted string: printable ASCII only (a title
 * must not break the script or the SVG), quotes doubled. */
static void buf_quoted(Buf *b, const char *s)
{
        buf_add(b, "'");
        for (; *s; s++) {
                char ch = *s;
                if (ch == '\'')
                        buf_add(b, "''");
                else if (ch < 0x20 || ch > 0x7e || ch == '&' || ch == '<' || ch == '>')
                        buf_add(b, "?");
                else
                        buf_add(b, "%c", ch);
        }
        buf_add(b, "'");
}

/* The time axis in seconds, minutes or hours, by the span. */
static void plot_time_unit(const PlotRow *rows, size_t n, double *ret_div, const char **ret_name)
{
        double span = rows[n - 1].t - rows[0].t;
        if (rows[n - 1].t > span)
                span = rows[n - 1].t;
        *ret_div = span > 7200 ? 3600 : span > 120 ? 60 : 1;
        *ret_name = span > 7200 ? "hours" : span > 120 ? "minutes" : "seconds";
}

/* One graph of the picture. */
typedef struct Panel {
        const char *title, *ylabel, *y2label; /* y2label NULL: one axis */
        double ymax, y2max;                   /* the largest values, for the tics */
        bool from_zero;                       /* the y axes start at 0 */
        const char *series;                   /* gnuplot `plot` clauses */
} Panel;

/* Tics and their format for @axis ("y" or "y2") up to @max: one per unit
 * for small counts (never half a crash), SI prefixes for large ones. */
static void plot_tics(Buf *b, const char *axis, double max)
{
        if (max <= 10)
                buf_add(b, "set %stics 1\nset format %s '%%.0f'\n", axis, axis);
        else if (max <= 10000)
                buf_add(b, "set %stics autofreq\nset format %s '%%g'\n", axis, axis);
        else
                buf_add(b, "set %stics autofreq\nset format %s '%%.1s%%c'\n", axis, axis);
}

static void plot_panel(Buf *b, const Panel *p)
{
        const char *range = p->from_zero ? "[0:*]" : "[*:*]";
        buf_add(b, "set title '%s'\nset ylabel '%s'\nset yrange %s\n", p->title, p->ylabel, range);
        plot_tics(b, "y", p->from_zero ? p->ymax : 11);
        if (p->y2label) {
                buf_add(b, "set y2label '%s'\nset ytics nomirror\nset y2range %s\n", p->y2label,
                        range);
                plot_tics(b, "y2", p->from_zero ? p->y2max : 11);
        } else {
                buf_add(b, "unset y2label\nunset y2tics\nset ytics mirror\n");
        }
        buf_add(b, "plot %s\n", p->series);
}

char *plot_script(const PlotRow *rows, size_t n, const char *format, const char *title)
{
        Buf b = {0};
        double div;
        const char *unit;
        char series[1024];

        const PlotRow *last = &rows[n - 1]; /* counts never go down */
        plot_time_unit(rows, n, &div, &unit);
        /* Few points: marked, so that a short run still shows its series. */
        const char *style = n <= 60 ? "linespoints pt 7 ps 0.6" : "lines";
        if (strcmp(format, "svg") == 0)
                buf_add(&b, "set terminal svg size 1000,1000 font 'sans,11' noenhanced "
                            "background rgb 'white'\n");
        else
                buf_add(&b, "set terminal pngcairo size 1000,1000 font 'sans,10' noenhanced "
                            "background rgb 'white'\n");
        buf_add(&b, "set datafile separator ','\n$data << EOD\n");
        for (size_t i = 0; i < n; i++) {
                const PlotRow *r = &rows[i];
                buf_add(&b,
                        "%.3f,%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                        ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 "\n",
                        r->t / div, r->execs, r->execs_per_sec, r->edges, r->features, r->corpus,
                        r->unique_crashes, r->crashes, r->timeouts, r->ooms, r->rss_mb);
        }
        buf_add(&b, "EOD\nset multiplot layout 3,1 title ");
        buf_quoted(&b, title);
        /* The key above each graph, where no series runs; a little room
         * above the highest point; time from the campaign's start. */
        buf_add(&b,
                "\nset grid\nset key tmargin right horizontal\nset xlabel 'time (%s)'\n"
                "set xrange [0:*]\nset autoscale xfixmax\nset offsets 0, 0, graph 0.08, 0\n"
                "set lmargin 12\nset rmargin 12\n",
                unit);
        snprintf(series, sizeof(series),
                 "$data using 1:4 with %s lw 2 lc rgb '#0060ad' title 'edges', "
                 "$data using 1:5 axes x1y2 with %s lw 1 lc rgb '#00a000' title 'features'",
                 style, style);
        /* Coverage from where it starts: its growth is what to see. */
        plot_panel(&b, &(Panel){.title = "coverage",
                                .ylabel = "edges",
                                .y2label = "features",
                                .series = series});
        snprintf(series, sizeof(series),
                 "$data using 1:3 with %s lw 2 lc rgb '#dd181f' title 'exec/s'", style);
        double top_rate = 0;
        for (size_t i = 0; i < n; i++)
                if (rows[i].execs_per_sec > top_rate)
                        top_rate = rows[i].execs_per_sec;
        plot_panel(&b, &(Panel){.title = "speed",
                                .ylabel = "exec/s",
                                .ymax = top_rate > 10 ? top_rate : 11,
                                .from_zero = true,
                                .series = series});
        snprintf(
            series, sizeof(series),
            "$data using 1:7 with steps lw 2 lc rgb '#dd181f' title 'unique crashes', "
            "$data using 1:8 axes x1y2 with steps lw 1 lc rgb '#9400d3' title 'crashes stored', "
            "$data using 1:9 axes x1y2 with steps lw 1 lc rgb '#ff8c00' title 'timeouts', "
            "$data using 1:10 axes x1y2 with steps lw 1 lc rgb '#606060' title 'ooms'");
        uint64_t deaths = last->crashes > last->timeouts ? last->crashes : last->timeouts;
        plot_panel(&b, &(Panel){.title = "crashes",
                                .ylabel = "unique crashes",
                                .y2label = "crashes, timeouts, ooms",
                                .ymax = (double)last->unique_crashes,
                                .y2max = (double)(deaths > last->ooms ? deaths : last->ooms),
                                .from_zero = true,
                                .series = series});
        buf_add(&b, "unset multiplot\n");
        if (b.failed) {
                free(b.p);
                return NULL;
        }
        return b.p;
}

/* --- the data --- */

/* The rows of plot_data's @text that parse; how many lines did not (the
 * header and comments are not counted). 0 or -ENOMEM. */
static int plot_rows(const char *text, size_t len, PlotRow **ret, size_t *ret_n, size_t *ret_bad)
{
        size_t cap = 0, n = 0, bad = 0;
        PlotRow *rows = NULL;
        const char *p = text, *end = text + len;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *stop = nl ? nl : end;
                PlotRow r;
                if (plotdata_parse_line(p, (size_t)(stop - p), &r) == 0) {
                        if (n == cap) {
                                cap = cap ? cap * 2 : 1024;
                                PlotRow *nr = realloc(rows, cap * sizeof(*rows));
                                if (!nr) {
                                        free(rows);
                                        return -ENOMEM;
                                }
                                rows = nr;
                        }
                        rows[n++] = r;
                } else if (stop > p && *p != '#') {
                        bad++;
                }
                p = nl ? nl + 1 : end;
        }
        *ret = rows;
        *ret_n = n;
        *ret_bad = bad;
        return 0;
}

/* An unlinked temporary file for one of gnuplot's outputs. */
static int plot_tmpfile(void)
{
        const char *dir = getenv("TMPDIR");
        int fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
                fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        return fd < 0 ? -errno : fd;
}

/* gnuplot's first line on stderr, for the error message. */
static void plot_first_line(int fd, char *buf, size_t cap)
{
        char raw[512];
        ssize_t n = pread(fd, raw, sizeof(raw) - 1, 0);
        raw[n > 0 ? n : 0] = 0;
        char *p = raw;
        while (*p == '\n' || *p == ' ')
                p++;
        char *nl = strchr(p, '\n');
        if (nl)
                *nl = 0;
        termsafe_str(buf, cap, p, 200);
}

/* Runs gnuplot on @script; the picture it wrote is left in @out_fd.
 * 0, -ENOENT (no gnuplot), or another negative errno after a line. */
static int plot_run_gnuplot(const char *script, int out_fd)
{
        int in[2], r;
        pid_t pid;
        posix_spawn_file_actions_t fa;
        int err_fd = plot_tmpfile();
        if (err_fd < 0) {
                log_error("cannot make a temporary file: %s", strerror(-err_fd));
                return err_fd;
        }
        if (pipe2(in, O_CLOEXEC) < 0) {
                r = -errno;
                log_error("cannot make a pipe: %s", strerror(errno));
                goto out_err;
        }
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
        posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err_fd, STDERR_FILENO);
        char *argv[] = {(char *)"gnuplot", NULL};
        r = -posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(in[0]);
        if (r < 0) {
                close(in[1]);
                if (r != -ENOENT)
                        log_error("cannot run gnuplot: %s", strerror(-r));
                goto out_err;
        }
        /* A gnuplot that stops reading is an EPIPE (SIGPIPE is ignored):
         * its exit status and message say why. */
        (void)fs_write_all(in[1], script, strlen(script));
        close(in[1]);
        int st = 0;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                char line[TERMSAFE_BUF];
                plot_first_line(err_fd, line, sizeof(line));
                log_error("gnuplot failed (%s %d): %s", WIFEXITED(st) ? "exit status" : "signal",
                          WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), line);
                r = -EIO;
        }
out_err:
        close(err_fd);
        return r;
}

/* Writes the picture in @fd to @path atomically. */
static int plot_save(int fd, const char *path)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (st.st_size <= 0 || (uint64_t)st.st_size > PLOT_PICTURE_MAX)
                return -EIO;
        char *data = malloc((size_t)st.st_size);
        if (!data)
                return -ENOMEM;
        ssize_t n = pread(fd, data, (size_t)st.st_size, 0);
        int r = n == st.st_size ? 0 : -EIO;
        char dir[4096];
        const char *slash = strrchr(path, '/');
        snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) + (slash == path) : 1,
                 slash ? path : ".");
        int dirfd = r == 0 ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (r == 0 && dirfd < 0)
                r = -errno;
        if (r == 0)
                r = fs_write_atomic(dirfd, slash ? slash + 1 : path, data, (size_t)n);
        if (dirfd >= 0)
                close(dirfd);
        free(data);
        return r;
}

/* The rows of OUT/plot_data, or SF_EXIT_USAGE / SF_EXIT_INTERNAL after a
 * line. */
static int plot_load(const char *out_dir, PlotRow **rows, size_t *n)
{
        uint8_t *text = NULL;
        size_t len, bad;
        char where[4200];
        snprintf(where, sizeof(where), "%s/" PLOTDATA_FILE, out_dir);
        int r = fs_read_file(AT_FDCWD, where, PLOT_DATA_MAX, &text, &len);
        if (r < 0) {
                log_error("%s: %s; plot needs the plot_data of a campaign (snapfuzz run --out %s "
                          "writes it)",
                          where, strerror(-r), out_dir);
                return r == -ENOMEM ? SF_EXIT_INTERNAL : SF_EXIT_USAGE;
        }
        r = plot_rows((const char *)text, len, rows, n, &bad);
        free(text);
        if (r < 0) {
                log_error("out of memory");
                return SF_EXIT_INTERNAL;
        }
        if (*n == 0) {
                log_error("%s has no line of figures (%zu that are not plot_data lines); "
                          "nothing to plot",
                          where, bad);
                free(*rows);
                *rows = NULL;
                return SF_EXIT_USAGE;
        }
        if (bad)
                log_warn("%s: %zu lines that are not plot_data lines were skipped", where, bad);
        return 0;
}

/* The picture's title: the campaign's target (from stats.json, when it
 * says) and its output directory. */
static void plot_title(const char *out_dir, char *buf, size_t cap)
{
        char path[4200];
        uint8_t *text = NULL;
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out_dir);
        snprintf(buf, cap, "snapfuzz: %s", out_dir);
        if (fs_read_file(AT_FDCWD, path, 1 << 20, &text, &len) < 0)
                return;
        cJSON *st = cJSON_ParseWithLength((const char *)text, len);
        const char *target = msg_str(st, "target", NULL);
        if (target) {
                /* The last two parts of its path: bench/real's harnesses
                 * are all named snapfuzz.so, in a folder of their own. */
                const char *base = strrchr(target, '/');
                const char *dir = base;
                while (dir && dir > target && dir[-1] != '/')
                        dir--;
                snprintf(buf, cap, "snapfuzz: %s  (%s)", dir ? dir : target, out_dir);
        }
        cJSON_Delete(st);
        free(text);
}

int plot_cmd(int argc, char **argv)
{
        PlotArgs a = {0};
        PlotRow *rows = NULL;
        size_t n = 0;
        char output[4200];

        int r = plot_parse_args(argc, argv, &a);
        if (r)
                return r < 0 ? SF_EXIT_OK : r;
        if (a.output)
                snprintf(output, sizeof(output), "%s", a.output);
        else
                snprintf(output, sizeof(output), "%s/plot.png", a.out_dir);
        const char *format = plot_format(output);
        if (!format) {
                log_error("--output %s: the picture's name must end in .png or .svg", output);
                return SF_EXIT_USAGE;
        }
        r = plot_load(a.out_dir, &rows, &n);
        if (r)
                return r;
        char title[1200];
        plot_title(a.out_dir, title, sizeof(title));
        char *script = plot_script(rows, n, format, title);
        free(rows);
        int out_fd = script ? plot_tmpfile() : -ENOMEM;
        if (out_fd < 0) {
                log_error("cannot prepare the plot: %s", strerror(-out_fd));
                free(script);
                return SF_EXIT_INTERNAL;
        }
        r = plot_run_gnuplot(script, out_fd);
        free(script);
        if (r == -ENOENT) {
                log_error("gnuplot is not installed: snapfuzz plot draws with it (Debian and "
                          "Ubuntu: apt-get install gnuplot-nox)");
                close(out_fd);
                return SF_EXIT_USAGE;
        }
        bool input = false;
        if (r == 0) {
                r = plot_save(out_fd, output);
                input = engine_error_is_input(r);
                if (r < 0)
                        log_error("cannot write %s: %s", output, strerror(-r));
        }
        close(out_fd);
        if (r < 0)
                return input ? SF_EXIT_USAGE : SF_EXIT_INTERNAL;
        printf("%s: %zu points of %s/" PLOTDATA_FILE "\n", output, n, a.out_dir);
        return SF_EXIT_OK;
}
