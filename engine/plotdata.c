/*
 * OUT/plot_data, the campaign's time series (engine/plotdata.h).
 *
 * Appending is the one write pattern here that is not tmp-fsync-rename: the
 * file is a log, each line goes out in one write(2) to a descriptor opened
 * with O_APPEND, and the only damage a kill can do is a torn last line.
 * plotdata_open, which runs under the output directory's lock (one run at
 * a time), cuts such a line off before appending; readers skip what does
 * not parse, which also covers a line being written while they read.
 *
 * Invariant: every line this module writes has PLOTDATA_FIELDS numbers,
 * and its time, executions and crash counts never go down from one line to
 * the next, across runs on the same directory included.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "engine/plotdata.h"

#include "snapfuzz/banned.h"

/* How much of the file's end is read to find the line to continue from. */
#define PLOTDATA_TAIL 65536

struct PlotData {
        int fd;
        PlotRow base; /* the last line of earlier runs (all zero: none) */
        /* This run's figures at its last line, for the speed since. */
        bool any;
        double run_t;
        uint64_t run_execs;
};

/* One number of a line: @s to @end (spaces around allowed). */
static int parse_field(const char *s, const char *end, bool integer, double *ret)
{
        char tmp[64];
        while (s < end && *s == ' ')
                s++;
        while (end > s && end[-1] == ' ')
                end--;
        size_t n = (size_t)(end - s);
        if (n == 0 || n >= sizeof(tmp))
                return -EINVAL;
        memcpy(tmp, s, n);
        tmp[n] = 0;
        char *stop = NULL;
        errno = 0;
        double v;
        if (integer) {
                long long ll = strtoll(tmp, &stop, 10);
                v = (double)ll;
        } else {
                v = strtod(tmp, &stop);
        }
        if (errno || !stop || *stop || !isfinite(v))
                return -EINVAL;
        *ret = v;
        return 0;
}

int plotdata_parse_line(const char *line, size_t len, PlotRow *ret)
{
        double v[PLOTDATA_FIELDS];
        const char *s = line, *end = line + len;
        unsigned n = 0;

        if (len == 0 || line[0] == '#')
                return -EINVAL;
        for (;;) {
                if (n == PLOTDATA_FIELDS)
                        return -EINVAL; /* more fields than a line has */
                const char *comma = memchr(s, ',', (size_t)(end - s));
                const char *stop = comma ? comma : end;
                /* The time and the speed have fractions; the rest are counts. */
                if (parse_field(s, stop, n != 0 && n != 2, &v[n]) < 0)
                        return -EINVAL;
                n++;
                if (!comma)
                        break;
                s = comma + 1;
        }
        if (n != PLOTDATA_FIELDS)
                return -EINVAL;
        /* Each figure is converted to an integer type below: NaN, infinite
         * or out-of-range values (a file someone else wrote) are refused
         * first, as converting them would be undefined behaviour. */
        for (unsigned i = 0; i < PLOTDATA_FIELDS; i++)
                if (!(v[i] >= (i == 10 ? -1 : 0) && v[i] < 9e18))
                        return -EINVAL;
        *ret = (PlotRow){.t = v[0],
                         .execs = (uint64_t)v[1],
                         .execs_per_sec = v[2],
                         .edges = (uint64_t)v[3],
                         .features = (uint64_t)v[4],
                         .corpus = (uint64_t)v[5],
                         .unique_crashes = (uint64_t)v[6],
                         .crashes = (uint64_t)v[7],
                         .timeouts = (uint64_t)v[8],
                         .ooms = (uint64_t)v[9],
                         .rss_mb = (int64_t)v[10]};
        return 0;
}

/* The last line of @buf (@len bytes, ending in a newline) that parses. */
static bool last_row(const char *buf, size_t len, PlotRow *ret)
{
        size_t end = len;
        while (end > 0) {
                size_t start = end - 1; /* end - 1 is the newline */
                while (start > 0 && buf[start - 1] != '\n')
                        start--;
                if (plotdata_parse_line(buf + start, end - 1 - start, ret) == 0)
                        return true;
                end = start;
        }
        return false;
}

/* Reads the file's end, cuts a torn last line off, and finds the line to
 * continue from. */
static int plotdata_resume(PlotData *p, off_t size)
{
        size_t want = size > PLOTDATA_TAIL ? PLOTDATA_TAIL : (size_t)size;
        off_t off = size - (off_t)want;
        char *buf = malloc(want + 1);
        if (!buf)
                return -ENOMEM;
        ssize_t n = pread(p->fd, buf, want, off);
        if (n != (ssize_t)want) {
                free(buf);
                return n < 0 ? -errno : -EIO;
        }
        size_t keep = want;
        while (keep > 0 && buf[keep - 1] != '\n')
                keep--;
        int r = 0;
        if (keep < want) {
                /* A torn line: cut it off, or, when no newline is in
                 * reach, end it so that it stays one line to skip. */
                if (keep > 0 || off == 0)
                        r = ftruncate(p->fd, off + (off_t)keep) < 0 ? -errno : 0;
                else
                        r = fs_write_all(p->fd, "\n", 1);
        }
        if (r == 0 && !last_row(buf, keep, &p->base))
                p->base = (PlotRow){0};
        free(buf);
        return r;
}

int plotdata_open(PlotData **ret, int dirfd)
{
        struct stat st;
        int r;
        PlotData *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->fd = openat(dirfd, PLOTDATA_FILE, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                       0644);
        if (p->fd < 0) {
                r = -errno;
                goto err_free;
        }
        if (fstat(p->fd, &st) < 0) {
                r = -errno;
                goto err_close;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto err_close;
        }
        r = st.st_size > 0 ? plotdata_resume(p, st.st_size) : 0;
        if (r < 0)
                goto err_close;
        if (fstat(p->fd, &st) == 0 && st.st_size == 0)
                r = fs_write_all(p->fd, PLOTDATA_HEADER "\n", strlen(PLOTDATA_HEADER) + 1);
        if (r < 0)
                goto err_close;
        *ret = p;
        return 0;

err_close:
        close(p->fd);
err_free:
        free(p);
        return r;
}

void plotdata_free(PlotData *p)
{
        if (!p)
                return;
        close(p->fd);
        free(p);
}

int plotdata_append(PlotData *p, const ScreenFigures *f, uint64_t new_ids)
{
        char line[512];
        const PlotRow *b = &p->base;
        double dt = p->any ? f->elapsed_s - p->run_t : f->elapsed_s;
        double rate = dt > 0 ? (double)(f->execs - (p->any ? p->run_execs : 0)) / dt : 0;
        int n = snprintf(line, sizeof(line),
                         "%.1f, %" PRIu64 ", %.1f, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
                         ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRId64 "\n",
                         b->t + f->elapsed_s, b->execs + f->execs, rate, f->edges, f->features,
                         (uint64_t)f->corpus, b->unique_crashes + new_ids, b->crashes + f->crashes,
                         b->timeouts + f->timeouts, b->ooms + f->ooms,
                         (int64_t)(f->rss_mb >= 0 ? f->rss_mb : -1));
        if (n <= 0 || (size_t)n >= sizeof(line))
                return -EINVAL;
        /* One write: a reader sees the whole line or none of it, but for
         * the torn end that only a kill mid-write leaves. */
        ssize_t w = write(p->fd, line, (size_t)n);
        if (w != n) {
                int r = w < 0 ? -errno : -ENOSPC;
                /* Part of a line went out: end it, so that the next line
                 * is not glued to it (readers skip it). */
                if (w > 0)
                        (void)fs_write_all(p->fd, "\n", 1);
                return r;
        }
        p->any = true;
        p->run_t = f->elapsed_s;
        p->run_execs = f->execs;
        return 0;
}
