/*
 * Line framing over a pipe. The reader keeps whatever follows the first
 * newline for the next call, so several messages arriving in one read are
 * all delivered, in order. A line longer than MSG_MAX_LINE is a protocol
 * error: a peer that sends one is broken or hostile, and the caller treats
 * it as such.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fsutil.h"
#include "core/msg.h"

#include "snapfuzz/banned.h"

void msg_reader_init(MsgReader *r, int fd)
{
        *r = (MsgReader){.fd = fd};
}

void msg_reader_deinit(MsgReader *r)
{
        free(r->buf);
        *r = (MsgReader){.fd = -1};
}

int msg_format_line(const cJSON *j, int pretty, char **ret, size_t *ret_len)
{
        char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
        if (!s)
                return -ENOMEM;
        size_t n = strlen(s);
        char *line = malloc(n + 1);
        if (!line) {
                cJSON_free(s);
                return -ENOMEM;
        }
        /* The string's NUL becomes the newline: the line is not a C string. */
        memcpy(line, s, n + 1);
        line[n] = '\n';
        cJSON_free(s);
        *ret = line;
        *ret_len = n + 1;
        return 0;
}

int msg_send(int fd, const cJSON *msg)
{
        char *line;
        size_t len;
        int r = msg_format_line(msg, 0, &line, &len);
        if (r < 0)
                return r;
        /* The line and its newline go out in one call so that a message is
         * never split by another writer (pipes keep writes up to PIPE_BUF
         * whole; longer messages have a single writer). */
        r = fs_write_all(fd, line, len);
        free(line);
        return r;
}

static int take_line(MsgReader *r, cJSON **ret)
{
        char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
        if (!nl) {
                if (r->len >= MSG_MAX_LINE)
                        return -EPROTO;
                return 0;
        }
        *nl = '\0';
        cJSON *m = cJSON_Parse(r->buf);
        size_t used = (size_t)(nl - r->buf) + 1;
        memmove(r->buf, r->buf + used, r->len - used);
        r->len -= used;
        if (!m || !cJSON_IsObject(m)) {
                cJSON_Delete(m);
                return -EPROTO;
        }
        *ret = m;
        return 1;
}

/* Makes room for the next read: at least 4096 free bytes, growing the
 * buffer up to what one line and one read's slack can need. */
static int reader_reserve(MsgReader *r)
{
        if (r->cap - r->len >= 4096)
                return 0;
        size_t cap = r->cap ? r->cap * 2 : 8192;
        if (cap > MSG_MAX_LINE + 8192)
                return -EPROTO;
        char *b = realloc(r->buf, cap);
        if (!b)
                return -ENOMEM;
        r->buf = b;
        r->cap = cap;
        return 0;
}

int msg_read(MsgReader *r, cJSON **ret)
{
        int t = take_line(r, ret);
        if (t != 0)
                return t;
        t = reader_reserve(r);
        if (t < 0)
                return t;
        ssize_t n;
        do
                n = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return errno == EAGAIN ? 0 : -errno;
        if (n == 0)
                return -EPIPE;
        r->len += (size_t)n;
        return take_line(r, ret);
}

int msg_reader_feed(MsgReader *r, const void *data, size_t len, size_t *ret_used)
{
        int t = reader_reserve(r);
        if (t < 0)
                return t;
        size_t n = r->cap - r->len - 1;
        if (n > len)
                n = len;
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        *ret_used = n;
        return 0;
}

int msg_take(MsgReader *r, cJSON **ret)
{
        return take_line(r, ret);
}

int msg_recv(MsgReader *r, cJSON **ret, int timeout_ms)
{
        int64_t deadline = timeout_ms < 0 ? -1 : clock_now_ms() + timeout_ms;
        for (;;) {
                int t = take_line(r, ret);
                if (t != 0)
                        return t;
                int wait = -1;
                if (deadline >= 0) {
                        int64_t left = deadline - clock_now_ms();
                        if (left <= 0)
                                return 0;
                        wait = (int)left;
                }
                struct pollfd p = {.fd = r->fd, .events = POLLIN};
                int pr = poll(&p, 1, wait);
                if (pr < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (pr == 0)
                        return 0;
                t = msg_read(r, ret);
                if (t != 0)
                        return t;
        }
}

const char *msg_str(const cJSON *m, const char *key, const char *def)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        return cJSON_IsString(v) && v->valuestring ? v->valuestring : def;
}

/* -2^63, exactly representable as a double (INT64_MAX is not). */
#define MSG_INT_MIN_DOUBLE (-9223372036854775808.0)

int64_t msg_int(const cJSON *m, const char *key, int64_t def)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        if (!cJSON_IsNumber(v))
                return def;
        /* Converting a double outside int64_t's range (1e300 in a crash.json
         * someone edited) is undefined behaviour: such a number is as
         * mistyped as a string. The test is false for NaN too. */
        if (!(v->valuedouble >= MSG_INT_MIN_DOUBLE && v->valuedouble < -MSG_INT_MIN_DOUBLE))
                return def;
        return (int64_t)v->valuedouble;
}

double msg_num(const cJSON *m, const char *key, double def)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        return cJSON_IsNumber(v) ? v->valuedouble : def;
}

int msg_bool(const cJSON *m, const char *key, int def)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

cJSON *msg_new(const char *type)
{
        cJSON *m = cJSON_CreateObject();
        if (m && !cJSON_AddStringToObject(m, "type", type)) {
                cJSON_Delete(m);
                return NULL;
        }
        return m;
}
