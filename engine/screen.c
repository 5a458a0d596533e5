/*
 * The run's display: a live screen on a terminal, status lines elsewhere,
 * nothing with --quiet (engine/screen.h).
 *
 * The live screen takes the bottom lines of the terminal and leaves the
 * rest to everything else. It sets the terminal's scrolling region
 * (DECSTBM) to the rows above it, and always puts the cursor back in that
 * region after a redraw (DECSC/DECRC around absolute moves), so a line
 * that anyone writes — the coordinator's log lines, the recovery helper's,
 * a worker passing the target's output — scrolls the region only: nothing
 * written while the screen is up is lost or drawn over, and the screen's
 * rows stay where they are. Each redraw is one write(2), which the tty
 * layer does not interleave with other writers' writes.
 *
 * Invariants: every line drawn is cut to one column less than the width
 * (no line ever wraps, and the last column never holds a pending wrap);
 * text from outside (paths, crash ids and messages) passes termsafe first
 * and its non-ASCII characters are counted two columns wide, so a narrow
 * terminal cuts a line instead of wrapping it; escape sequences for bold
 * and colour are written only when colour is allowed (NO_COLOR unset or
 * empty). The terminal's size is read again at most every 250 ms and on
 * every redraw; a new size takes the old screen away (everything below the
 * cursor, which is always above the screen) and lays it out again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fsutil.h"
#include "core/termsafe.h"
#include "engine/screen.h"

#include "snapfuzz/banned.h"

/* A redraw a second, as AFL++ and libFuzzer's status pace; the size is
 * looked at four times as often so a resize is redrawn quickly. */
#define SCREEN_REDRAW_MS 1000
#define SCREEN_SIZE_MS 250
/* Below this, the screen gives way to status lines until it grows. */
#define SCREEN_MIN_ROWS (SCREEN_LINES + 3)
#define SCREEN_MIN_COLS 20
#define SCREEN_LABEL "%-12s"
/* Below this width, shorter labels and figures (a narrow layout), and the
 * reproduce command without its label when that is what keeps it whole. */
#define SCREEN_NARROW_COLS 72
#define SCREEN_LABEL_NARROW "%-11s"
/* Bytes of one drawn line, escapes included; wider terminals get lines
 * of SCREEN_MAX_COLS columns. */
#define SCREEN_LINE_CAP 2048
#define SCREEN_MAX_COLS 1000

struct Screen {
        int fd;
        int display;
        bool tty; /* a live screen is wanted (a terminal, not TERM=dumb) */
        bool colour;
        unsigned every_ms;
        int64_t last_ms;     /* the last redraw or status line */
        int64_t size_ms;     /* the last look at the terminal's size */
        bool size_changed;   /* the size differs from the screen's layout */
        bool up;             /* the scrolling region is set and the screen drawn */
        unsigned rows, cols; /* the terminal's size the screen is laid out for */
        unsigned height;     /* lines the screen takes */
        /* The previous snapshot, for speeds now rather than on average. */
        int64_t prev_ms;
        uint64_t prev_execs;
        double rate_now;
        unsigned n_prev;
        uint64_t *prev_worker; /* execs per worker slot */
        double *worker_rate;
};

static bool env_colour(void)
{
        const char *nc = getenv("NO_COLOR");
        return !nc || !*nc;
}

static bool env_terminal(int fd)
{
        const char *term = getenv("TERM");
        return isatty(fd) && term && *term && strcmp(term, "dumb") != 0;
}

int screen_new(Screen **ret, int display, unsigned every_s, int fd)
{
        Screen *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = fd;
        s->display = display;
        s->every_ms = (every_s ? every_s : 1) * 1000u;
        s->tty = display == SF_DISPLAY_AUTO && env_terminal(fd);
        s->colour = s->tty && env_colour();
        s->prev_ms = -1;
        /* The screen is drawn at once; the first status line comes after
         * a period, as it always did. */
        s->last_ms = clock_now_ms() - (s->tty ? SCREEN_REDRAW_MS : 0);
        *ret = s;
        return 0;
}

void screen_free(Screen *s)
{
        if (!s)
                return;
        free(s->prev_worker);
        free(s->worker_rate);
        free(s);
}

bool screen_is_live(const Screen *s)
{
        return s && s->tty;
}

/* The terminal's size into @rows and @cols; false when it cannot be had. */
static bool screen_winsize(const Screen *s, unsigned *rows, unsigned *cols)
{
        struct winsize ws;
        if (ioctl(s->fd, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
                return false;
        *rows = ws.ws_row;
        *cols = ws.ws_col;
        return true;
}

static bool screen_fits(unsigned rows, unsigned cols)
{
        return rows >= SCREEN_MIN_ROWS && cols >= SCREEN_MIN_COLS;
}

bool screen_due(Screen *s, int64_t now_ms)
{
        if (!s || s->display == SF_DISPLAY_QUIET)
                return false;
        if (!s->tty)
                return now_ms - s->last_ms >= (int64_t)s->every_ms;
        unsigned rows, cols;
        if (s->up && now_ms - s->size_ms >= SCREEN_SIZE_MS) {
                s->size_ms = now_ms;
                if (screen_winsize(s, &rows, &cols) && (rows != s->rows || cols != s->cols))
                        s->size_changed = true;
        }
        if (s->size_changed)
                return true;
        if (!s->up && s->rows)
                return now_ms - s->last_ms >= (int64_t)s->every_ms; /* too small: lines */
        return now_ms - s->last_ms >= SCREEN_REDRAW_MS;
}

/* --- text --- */

static void fmt_count(char *buf, size_t cap, double v)
{
        if (v >= 1e9)
                snprintf(buf, cap, "%.2fG", v / 1e9);
        else if (v >= 1e6)
                snprintf(buf, cap, "%.2fM", v / 1e6);
        else if (v >= 1e4)
                snprintf(buf, cap, "%.1fk", v / 1e3);
        else
                snprintf(buf, cap, "%.0f", v);
}

static void fmt_duration(char *buf, size_t cap, double secs)
{
        uint64_t t = secs > 0 ? (uint64_t)secs : 0;
        if (t < 60)
                snprintf(buf, cap, "%" PRIu64 "s", t);
        else if (t < 3600)
                snprintf(buf, cap, "%" PRIu64 "m %02" PRIu64 "s", t / 60, t % 60);
        else if (t < 86400)
                snprintf(buf, cap, "%" PRIu64 "h %02" PRIu64 "m %02" PRIu64 "s", t / 3600,
                         t / 60 % 60, t % 60);
        else
                snprintf(buf, cap, "%" PRIu64 "d %02" PRIu64 "h %02" PRIu64 "m", t / 86400,
                         t / 3600 % 24, t / 60 % 60);
}

void screen_shell_quote(char *buf, size_t cap, const char *s)
{
        static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789_-./+,:=@%";
        if (cap == 0)
                return;
        if (*s && strspn(s, safe) == strlen(s)) {
                snprintf(buf, cap, "%s", s);
                return;
        }
        size_t n = 0;
        buf[n++] = '\'';
        for (; *s && n + 6 < cap; s++) {
                if (*s == '\'') {
                        memcpy(buf + n, "'\\''", 4);
                        n += 4;
                } else {
                        buf[n++] = *s;
                }
        }
        if (n < cap - 1)
                buf[n++] = '\'';
        buf[n] = 0;
}

void screen_crash_set(ScreenCrash *k, const char *id, const char *kind, const char *message,
                      double at_s)
{
        snprintf(k->id, sizeof(k->id), "%s", id ? id : "?");
        snprintf(k->kind, sizeof(k->kind), "%s", kind ? kind : "?");
        snprintf(k->message, sizeof(k->message), "%s", message ? message : "");
        k->at_s = at_s;
}

long screen_proc_rss_mb(pid_t pid)
{
        char path[64], buf[128];
        if (pid <= 0)
                return -1;
        snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        /* statm: total size, then resident, in pages. */
        char *p = buf, *end = NULL;
        errno = 0;
        (void)strtoul(p, &end, 10);
        if (end == p || *end != ' ')
                return -1;
        p = end + 1;
        unsigned long resident = strtoul(p, &end, 10);
        if (end == p || errno)
                return -1;
        long page = sysconf(_SC_PAGESIZE);
        return (long)(resident * (unsigned long)(page > 0 ? page : 4096) >> 20);
}

/* A line being built: text and escape sequences, its visible width
 * counted, cut at @max columns. */
typedef struct Line {
        char *buf;
        size_t cap, len;
        unsigned width, max;
        bool colour;
        bool narrow; /* the narrow layout */
        bool full;
} Line;

static void line_raw(Line *l, const char *s, size_t n)
{
        if (l->len + n + 1 > l->cap)
                return;
        memcpy(l->buf + l->len, s, n);
        l->len += n;
        l->buf[l->len] = 0;
}

/* Appends printable text (ASCII, or UTF-8 from termsafe): a character
 * beyond the width ends the line. Non-ASCII characters count two
 * columns, as the widest may take. */
static void line_put(Line *l, const char *s)
{
        while (*s && !l->full) {
                unsigned char c = (unsigned char)*s;
                size_t n = 1;
                unsigned w = 1;
                if (c >= 0x80) {
                        w = 2;
                        while ((s[n] & 0xc0) == 0x80)
                                n++;
                }
                if (l->width + w > l->max) {
                        l->full = true;
                        break;
                }
                line_raw(l, s, n);
                l->width += w;
                s += n;
        }
}

static void line_printf(Line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line_printf(Line *l, const char *fmt, ...)
{
        char tmp[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        line_put(l, tmp);
}

/* An SGR attribute ("1", "1;31", "0"), only when colour is allowed. */
static void line_sgr(Line *l, const char *attr)
{
        char tmp[32];
        if (!l->colour)
                return;
        int n = snprintf(tmp, sizeof(tmp), "\033[%sm", attr);
        line_raw(l, tmp, (size_t)n);
}

/* Text from outside, made safe and cut to @max bytes first. */
static void line_foreign(Line *l, const char *s, size_t max)
{
        char safe[1024];
        line_put(l, termsafe_str(safe, sizeof(safe), s, max));
}

static void line_label(Line *l, const char *label)
{
        if (l->narrow)
                line_printf(l, SCREEN_LABEL_NARROW, label);
        else
                line_printf(l, SCREEN_LABEL, label);
}

/* --- the live screen's lines --- */

/* Speeds from the previous snapshot: the whole run's and each worker's,
 * over the time since (at least half a second, else the last ones stay). */
static void screen_rates(Screen *s, const ScreenFigures *f, int64_t now_ms)
{
        if (s->n_prev != f->n_workers) {
                uint64_t *pw = calloc(f->n_workers ? f->n_workers : 1, sizeof(*pw));
                double *wr = calloc(f->n_workers ? f->n_workers : 1, sizeof(*wr));
                if (!pw || !wr) {
                        free(pw);
                        free(wr);
                        return;
                }
                free(s->prev_worker);
                free(s->worker_rate);
                s->prev_worker = pw;
                s->worker_rate = wr;
                s->n_prev = f->n_workers;
                for (unsigned i = 0; i < f->n_workers; i++)
                        pw[i] = f->workers[i].execs;
                s->prev_ms = -1;
        }
        if (s->prev_ms >= 0 && now_ms - s->prev_ms < 500)
                return;
        if (s->prev_ms < 0) {
                /* The first snapshot: the averages so far. */
                double secs = f->elapsed_s > 0 ? f->elapsed_s : 1;
                s->rate_now = (double)f->execs / secs;
                for (unsigned i = 0; i < f->n_workers; i++)
                        s->worker_rate[i] = (double)f->workers[i].execs / secs;
        } else {
                double dt = (double)(now_ms - s->prev_ms) / 1000.0;
                s->rate_now = (double)(f->execs - s->prev_execs) / dt;
                for (unsigned i = 0; i < f->n_workers; i++)
                        s->worker_rate[i] = (double)(f->workers[i].execs - s->prev_worker[i]) / dt;
        }
        s->prev_ms = now_ms;
        s->prev_execs = f->execs;
        for (unsigned i = 0; i < f->n_workers; i++)
                s->prev_worker[i] = f->workers[i].execs;
}

static void render_title(Line *l, const ScreenFigures *f)
{
        const char *base = f->target ? strrchr(f->target, '/') : NULL;
        line_sgr(l, "1;7");
        line_put(l, " snapfuzz ");
        line_sgr(l, "0");
        line_put(l, " ");
        line_sgr(l, "1");
        line_foreign(l, base ? base + 1 : f->target, 200);
        line_sgr(l, "0");
        line_printf(l, "  sandbox %s%s  %u worker%s  out ", f->sandbox ? f->sandbox : "?",
                    f->sandbox_policy ? "+policy" : "", f->n_workers, f->n_workers == 1 ? "" : "s");
        line_foreign(l, f->out_dir, 400);
}

static void render_progress(Line *l, const ScreenFigures *f, int which, double rate_now)
{
        char a[32], b[32], c[32];
        double avg = f->elapsed_s > 0 ? (double)f->execs / f->elapsed_s : 0;
        switch (which) {
        case 0:
                fmt_duration(a, sizeof(a), f->elapsed_s);
                line_label(l, "elapsed");
                line_printf(l, l->narrow ? "%s  new edge " : "%-14s last new edge ", a);
                if (f->last_new_edge_s < 0) {
                        line_put(l, "none yet");
                        break;
                }
                fmt_duration(b, sizeof(b), f->elapsed_s - f->last_new_edge_s);
                line_printf(l, "%s ago", b);
                break;
        case 1:
                fmt_count(a, sizeof(a), (double)f->execs);
                fmt_count(b, sizeof(b), rate_now);
                fmt_count(c, sizeof(c), avg);
                line_label(l, "execs");
                if (l->narrow)
                        line_printf(l, "%s  %s/s (avg %s)", a, b, c);
                else
                        line_printf(l, "%-14s exec/s %s now, %s average", a, b, c);
                break;
        case 2:
                line_label(l, "coverage");
                line_printf(l,
                            l->narrow ? "%" PRIu64 " edges %" PRIu64 " ft  corpus %zu"
                                      : "%" PRIu64 " edges, %" PRIu64 " features   corpus %zu",
                            f->edges, f->features, f->corpus);
                break;
        default:
                break;
        }
}

static void render_crashes(Line *l, const ScreenFigures *f)
{
        line_label(l, "crashes");
        if (f->unique)
                line_sgr(l, "1;31");
        line_printf(l, "%" PRIu64 " unique", f->unique);
        line_sgr(l, "0");
        line_printf(l,
                    l->narrow ? "/%" PRIu64 "  timeouts %" PRIu64 "  ooms %" PRIu64
                              : " / %" PRIu64 " total   timeouts %" PRIu64 "   ooms %" PRIu64,
                    f->crashes, f->timeouts, f->ooms);
        if (f->lost)
                line_printf(l, "   lost %" PRIu64, f->lost);
}

static void render_memory(Line *l, const ScreenFigures *f)
{
        line_label(l, "rss");
        if (f->rss_mb >= 0)
                line_printf(l, "%ld MB", f->rss_mb);
        else
                line_put(l, "?");
        if (f->rss_limit_mb)
                line_printf(l, " (limit %u MB)", f->rss_limit_mb);
        else
                line_put(l, " (no limit)");
}

static void render_workers(Screen *s, Line *l, const ScreenFigures *f)
{
        char a[32], b[32];
        line_label(l, "workers");
        for (unsigned i = 0; i < f->n_workers && !l->full; i++) {
                fmt_count(a, sizeof(a), (double)f->workers[i].execs);
                fmt_count(b, sizeof(b), i < s->n_prev ? s->worker_rate[i] : 0);
                if (f->workers[i].alive)
                        line_printf(l, "#%u %s %s/s  ", i + 1, a, b);
                else
                        line_printf(l, "#%u down  ", i + 1);
        }
}

static void render_crash(Line *l, const ScreenFigures *f, bool command)
{
        const ScreenCrash *k = f->last_crash;
        char when[32], quoted[1024], safe[TERMSAFE_BUF], id[TERMSAFE_BUF];
        bool have = k && k->id[0];
        if (command && have) {
                screen_shell_quote(quoted, sizeof(quoted), f->out_dir ? f->out_dir : "");
                termsafe_str(id, sizeof(id), k->id, 64);
                termsafe_str(safe, sizeof(safe), quoted, 1000);
                /* "snapfuzz reproduce " and " --out ": 26 columns. */
                size_t need = 26 + strlen(id) + strlen(safe);
                if (!l->narrow || need + 11 <= l->max)
                        line_label(l, "reproduce");
                line_printf(l, "snapfuzz reproduce %s --out ", id);
                line_put(l, safe);
                return;
        }
        line_label(l, command ? "reproduce" : "last crash");
        if (!have) {
                line_put(l, command ? "-" : "none yet");
                return;
        }
        fmt_duration(when, sizeof(when), f->elapsed_s - k->at_s);
        line_sgr(l, "1");
        line_foreign(l, k->id, 64);
        line_sgr(l, "0");
        line_put(l, " ");
        line_foreign(l, k->kind, 32);
        line_printf(l, " %s ago: ", when);
        line_foreign(l, k->message, 200);
}

unsigned screen_render(Screen *s, const ScreenFigures *f, int64_t now_ms, unsigned cols,
                       bool colour, char *buf, size_t cap)
{
        screen_rates(s, f, now_ms);
        size_t used = 0;
        unsigned n = 0;
        if (cap == 0)
                return 0;
        buf[0] = 0;
        for (unsigned i = 0; i < SCREEN_LINES; i++) {
                /* The line's room, less what the closing reset takes. */
                size_t room = cap - used - 1, reserve = colour ? 5 : 0;
                if (room > SCREEN_LINE_CAP - 1)
                        room = SCREEN_LINE_CAP - 1;
                if (room <= reserve + 1)
                        break;
                Line l = {.buf = buf + used,
                          .cap = room - reserve,
                          .max = cols > SCREEN_MAX_COLS ? SCREEN_MAX_COLS
                                 : cols > 1             ? cols - 1
                                                        : 1,
                          .colour = colour,
                          .narrow = cols < SCREEN_NARROW_COLS};
                l.buf[0] = 0;
                if (i == 0)
                        render_title(&l, f);
                else if (i <= 3)
                        render_progress(&l, f, (int)i - 1, s->rate_now);
                else if (i == 4)
                        render_crashes(&l, f);
                else if (i == 5)
                        render_memory(&l, f);
                else if (i == 6)
                        render_workers(s, &l, f);
                else
                        render_crash(&l, f, i == 8);
                if (colour) {
                        l.cap += reserve;
                        line_raw(&l, "\033[0m", 4);
                }
                used += l.len;
                buf[used++] = '\n';
                buf[used] = 0;
                n++;
        }
        return n;
}

/* --- drawing --- */

static void screen_write(const Screen *s, const char *buf, size_t len)
{
        (void)fs_write_all(s->fd, buf, len);
}

/* Appends to a frame being built; silently cut when @f is full (a frame
 * holds far more than a screen's lines). */
typedef struct Frame {
        char buf[16384];
        size_t len;
} Frame;

static void frame_add(Frame *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void frame_add(Frame *f, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(f->buf + f->len, sizeof(f->buf) - f->len, fmt, ap);
        va_end(ap);
        if (n > 0)
                f->len += (size_t)n < sizeof(f->buf) - f->len ? (size_t)n : 0;
}

/* Clears everything below the cursor (the old screen, wrapped or not: the
 * cursor is always above it) and gives the scrolling region back. */
static void frame_clear(Frame *fr)
{
        frame_add(fr, "\0337\033[r\0338\033[J");
}

/* Lays the screen out for @rows x @cols: @height blank lines below the
 * cursor, the region above them. */
static void frame_layout(Frame *fr, unsigned rows, unsigned height)
{
        for (unsigned i = 0; i < height; i++)
                frame_add(fr, "\r\n");
        frame_add(fr, "\033[%uA\0337\033[1;%ur\0338", height, rows - height);
}

/* The status line of the non-live modes, in its stable format. */
static void screen_line(const Screen *s, const ScreenFigures *f, const char *prefix)
{
        char line[512], execs[32], rate[32], checked[32];
        fmt_count(execs, sizeof(execs), (double)f->execs);
        fmt_count(checked, sizeof(checked), (double)f->sanitizer_checked);
        fmt_count(rate, sizeof(rate), f->elapsed_s > 0 ? (double)f->execs / f->elapsed_s : 0);
        int n = snprintf(line, sizeof(line),
                         "%s[%6.1fs] execs %s (%s/s)  cov %" PRIu64 " ft %" PRIu64
                         "  corpus %zu  crashes %" PRIu64 " (%" PRIu64 " unique)%s%s\n",
                         prefix, f->elapsed_s, execs, rate, f->edges, f->features, f->corpus,
                         f->crashes, f->unique, f->sanitizer ? "  sanitizer-checked " : "",
                         f->sanitizer ? checked : "");
        if (n > 0)
                screen_write(s, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Redraws the live screen; lays it out again first when the terminal's
 * size changed. Falls back to a status line on a terminal too small. */
static void screen_draw(Screen *s, const ScreenFigures *f, int64_t now_ms)
{
        static Frame fr;
        unsigned rows, cols;
        if (!screen_winsize(s, &rows, &cols)) {
                rows = 24;
                cols = 80;
        }
        fr.len = 0;
        s->size_ms = now_ms;
        s->size_changed = false;
        if (!screen_fits(rows, cols)) {
                if (s->up)
                        frame_clear(&fr);
                s->up = false;
                s->rows = rows;
                s->cols = cols;
                screen_write(s, fr.buf, fr.len);
                screen_line(s, f, "");
                return;
        }
        if (!s->up || rows != s->rows || cols != s->cols) {
                frame_clear(&fr);
                frame_layout(&fr, rows, SCREEN_LINES);
                s->up = true;
                s->rows = rows;
                s->cols = cols;
                s->height = SCREEN_LINES;
        }
        char text[SCREEN_LINES * SCREEN_LINE_CAP];
        unsigned n = screen_render(s, f, now_ms, cols, s->colour, text, sizeof(text));
        char *line = text;
        frame_add(&fr, "\0337");
        for (unsigned i = 0; i < n && i < s->height; i++) {
                char *nl = strchr(line, '\n');
                if (nl)
                        *nl = 0;
                frame_add(&fr, "\033[%u;1H%s\033[K", s->rows - s->height + 1 + i, line);
                line = nl ? nl + 1 : line + strlen(line);
        }
        frame_add(&fr, "\0338");
        screen_write(s, fr.buf, fr.len);
}

void screen_update(Screen *s, const ScreenFigures *f, int64_t now_ms)
{
        if (!s || s->display == SF_DISPLAY_QUIET)
                return;
        s->last_ms = now_ms;
        if (s->tty)
                screen_draw(s, f, now_ms);
        else
                screen_line(s, f, "");
}

void screen_end(Screen *s, const ScreenFigures *f)
{
        if (!s)
                return;
        if (s->up) {
                /* The screen's final state goes where the log lines end,
                 * as text: the terminal is left as it was found. */
                static Frame fr;
                static char text[SCREEN_LINES * SCREEN_LINE_CAP];
                unsigned rows, cols;
                if (!screen_winsize(s, &rows, &cols))
                        cols = s->cols; /* the width now, after a last resize */
                unsigned n =
                    screen_render(s, f, clock_now_ms(), cols, s->colour, text, sizeof(text));
                fr.len = 0;
                frame_clear(&fr);
                char *line = text;
                for (unsigned i = 0; i < n; i++) {
                        char *nl = strchr(line, '\n');
                        if (nl)
                                *nl = 0;
                        frame_add(&fr, "%s\r\n", line);
                        line = nl ? nl + 1 : line + strlen(line);
                }
                screen_write(s, fr.buf, fr.len);
                s->up = false;
        }
        screen_line(s, f, "done ");
}
