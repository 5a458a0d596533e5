/*
 * Each message is formatted into one buffer and written with a single
 * write(2), so lines from the coordinator, the recovery helper and the
 * workers (which share stderr) never interleave mid-line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

#include "snapfuzz/banned.h"

static bool log_quiet;

void log_set_quiet(bool quiet)
{
        log_quiet = quiet;
}

static void log_emit(const char *level, const char *fmt, va_list ap)
{
        char buf[2048];
        int saved = errno;
        int n = snprintf(buf, sizeof(buf), "snapfuzz: %s", level);
        if (n < 0)
                n = 0;
        int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
        if (m < 0)
                m = 0;
        size_t len = (size_t)n + (size_t)m;
        if (len > sizeof(buf) - 2)
                len = sizeof(buf) - 2;
        buf[len++] = '\n';
        ssize_t w = write(STDERR_FILENO, buf, len);
        (void)w;
        errno = saved;
}

void log_info(const char *fmt, ...)
{
        if (log_quiet)
                return;
        va_list ap;
        va_start(ap, fmt);
        log_emit("", fmt, ap);
        va_end(ap);
}

void log_warn(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_emit("warning: ", fmt, ap);
        va_end(ap);
}

void log_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        log_emit("error: ", fmt, ap);
        va_end(ap);
}
