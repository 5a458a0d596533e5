/*
 * The target's output after the worker's pipe (worker/outsink.h).
 * Invariants: nothing the target wrote reaches the terminal unescaped (a
 * control byte, ESC included, is shown as \xNN); the terminal gets at most
 * OUTSINK_BURST + OUTSINK_RATE bytes a second of output per worker (before
 * escaping), plus one "not shown" line per OUTSINK_NOTICE_MS; the log
 * holds the bytes as written, and never grows past OUTSINK_LOG_CAP before
 * it is rotated. A failing log is given up with one line, never retried
 * on every write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/termsafe.h"
#include "worker/outsink.h"

#include "snapfuzz/banned.h"

static const char *const outsink_names[] = {
    [OUTSINK_PASS] = "pass",
    [OUTSINK_LOG] = "log",
    [OUTSINK_DISCARD] = "discard",
};

int outsink_mode_parse(const char *s, OutsinkMode *ret)
{
        for (int m = OUTSINK_PASS; m <= OUTSINK_DISCARD; m++)
                if (s && strcmp(s, outsink_names[m]) == 0) {
                        *ret = (OutsinkMode)m;
                        return 0;
                }
        return -EINVAL;
}

const char *outsink_mode_name(OutsinkMode mode)
{
        return mode <= OUTSINK_DISCARD ? outsink_names[mode] : "pass";
}

void outsink_init(Outsink *o, OutsinkMode mode, const char *log_path, int term_fd)
{
        *o = (Outsink){
            .mode = mode,
            .log_path = log_path,
            .log_fd = -1,
            .term_fd = term_fd,
            .tokens = OUTSINK_BURST,
            .refilled_ms = clock_now_ms(),
        };
}

static void outsink_say(const Outsink *o, const char *line)
{
        ssize_t w = write(o->term_fd, line, strlen(line));
        (void)w;
}

static void outsink_log_fail(Outsink *o, int err)
{
        char line[4200];
        snprintf(line, sizeof(line),
                 "snapfuzz: warning: cannot write the target's output to %s: %s; it is no "
                 "longer logged\n",
                 o->log_path, strerror(err));
        outsink_say(o, line);
        if (o->log_fd >= 0)
                close(o->log_fd);
        o->log_fd = -1;
        o->log_failed = true;
}

/* The log, open and with room: opened on first use, rotated when full.
 * False when there is no log to write. */
static bool outsink_log_ready(Outsink *o)
{
        char old[4200];

        if (!o->log_path || o->log_failed)
                return false;
        if (o->log_fd >= 0 && o->log_size < OUTSINK_LOG_CAP)
                return true;
        if (o->log_fd >= 0) {
                close(o->log_fd);
                o->log_fd = -1;
                snprintf(old, sizeof(old), "%s.1", o->log_path);
                if (rename(o->log_path, old) < 0) {
                        outsink_log_fail(o, errno);
                        return false;
                }
        }
        o->log_fd = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        struct stat st;
        if (o->log_fd < 0 || fstat(o->log_fd, &st) < 0) {
                outsink_log_fail(o, errno);
                return false;
        }
        o->log_size = (uint64_t)st.st_size;
        return true;
}

static void outsink_log(Outsink *o, const char *data, size_t len)
{
        while (len > 0 && outsink_log_ready(o)) {
                size_t room = OUTSINK_LOG_CAP - (size_t)o->log_size;
                ssize_t n = write(o->log_fd, data, len < room ? len : room);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        outsink_log_fail(o, n < 0 ? errno : ENOSPC);
                        return;
                }
                o->log_size += (uint64_t)n;
                data += n;
                len -= (size_t)n;
        }
}

/* Shows what the rate allows of @data; the rest is counted. */
static void outsink_show(Outsink *o, const char *data, size_t len)
{
        char text[TERMSAFE_TEXT_CAP(4096)];
        int64_t now = clock_now_ms();

        o->tokens += (double)(now - o->refilled_ms) * OUTSINK_RATE / 1000.0;
        if (o->tokens > OUTSINK_BURST)
                o->tokens = OUTSINK_BURST;
        o->refilled_ms = now;
        size_t shown = o->tokens >= (double)len ? len : (size_t)o->tokens;
        /* A cut ends at a line's end when it can, so that the "not shown"
         * line and snapfuzz's own lines start on lines of their own. */
        if (shown < len) {
                const char *nl = shown ? memrchr(data, '\n', shown) : NULL;
                if (nl)
                        shown = (size_t)(nl - data) + 1;
        }
        o->tokens -= (double)shown;
        o->dropped += len - shown;
        while (shown > 0) {
                size_t k = shown < 4096 ? shown : 4096;
                size_t n = termsafe_text(text, sizeof(text), data, k);
                ssize_t w = write(o->term_fd, text, n);
                (void)w;
                if (n > 0)
                        o->midline = text[n - 1] != '\n';
                data += k;
                shown -= k;
        }
        if (o->dropped)
                outsink_notice(o, false);
}

void outsink_write(Outsink *o, const void *data, size_t len)
{
        if (o->mode == OUTSINK_DISCARD || len == 0)
                return;
        outsink_log(o, data, len);
        if (o->mode == OUTSINK_PASS)
                outsink_show(o, data, len);
}

void outsink_notice(Outsink *o, bool force)
{
        char line[4400];

        if (!o->dropped)
                return; /* the common case, once per batch: no clock read */
        int64_t now = clock_now_ms();
        if (!force && o->noticed_ms && now - o->noticed_ms < OUTSINK_NOTICE_MS)
                return;
        int n =
            snprintf(line, sizeof(line),
                     "%ssnapfuzz: %llu bytes of the target's output not shown (over %u KB/s)",
                     o->midline ? "\n" : "", (unsigned long long)o->dropped, OUTSINK_RATE >> 10);
        if (o->log_path && !o->log_failed)
                snprintf(line + n, sizeof(line) - (size_t)n, "; all of it is in %s\n", o->log_path);
        else
                snprintf(line + n, sizeof(line) - (size_t)n,
                         "; a crash report keeps the last 4 KB\n");
        outsink_say(o, line);
        o->midline = false;
        o->dropped = 0;
        o->noticed_ms = now;
}

void outsink_deinit(Outsink *o)
{
        outsink_notice(o, true);
        if (o->log_fd >= 0)
                close(o->log_fd);
        o->log_fd = -1;
}
