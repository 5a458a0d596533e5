/*
 * The pipe protocol between the coordinator, the workers and the recovery
 * helper: one JSON object per line (cJSON), in the spirit of the reference
 * design's RPC calls (ping, fuzz, minimize). Inputs never travel through
 * the pipes: they live in the shared-memory record.
 *
 * Every message has a "type" string. The worker's commands and events,
 * with one builder and one parser each, are in worker/proto.h; the
 * recovery helper's in recovery/recovery.h.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#define MSG_MAX_LINE (1u << 20)

typedef struct MsgReader {
        int fd;
        char *buf;
        size_t len;
        size_t cap;
} MsgReader;

void msg_reader_init(MsgReader *r, int fd);
void msg_reader_deinit(MsgReader *r);

/* Serializes @j (indented when @pretty) followed by a newline into a
 * malloc'd buffer. Returns 0 or -ENOMEM. */
int msg_format_line(const cJSON *j, int pretty, char **ret, size_t *ret_len);

/* Serializes @msg followed by a newline and writes it whole. 0 or -errno. */
int msg_send(int fd, const cJSON *msg);

/* Returns 1 and a parsed message in *ret when a complete line is buffered
 * or becomes available after one read(2) (which blocks only if the fd is
 * blocking); 0 when more data is needed; -EPIPE at end of file; -EPROTO for
 * an over-long or unparsable line; another -errno on a read error. */
int msg_read(MsgReader *r, cJSON **ret);

/* Takes bytes received some other way than read(2) on the reader's fd (a
 * test, a fuzz harness) as one read would: at most what the buffer has room
 * for, *ret_used saying how many. Returns 0, -EPROTO when the buffer holds
 * the longest line already, or -ENOMEM. */
int msg_reader_feed(MsgReader *r, const void *data, size_t len, size_t *ret_used);

/* Returns 1 and the next message when a complete line is buffered, 0 when
 * none is, -EPROTO as msg_read; never reads. */
int msg_take(MsgReader *r, cJSON **ret);

/* Waits up to @timeout_ms (-1: forever) for one message. 1, or 0 on
 * timeout, or a negative error as msg_read. */
int msg_recv(MsgReader *r, cJSON **ret, int timeout_ms);

/* Convenience accessors: the value, or @def when missing or mistyped (for
 * msg_int, a number outside int64_t's range is mistyped). */
const char *msg_str(const cJSON *m, const char *key, const char *def);
int64_t msg_int(const cJSON *m, const char *key, int64_t def);
double msg_num(const cJSON *m, const char *key, double def);
int msg_bool(const cJSON *m, const char *key, int def);

/* Starts a message of the given type; NULL on allocation failure. */
cJSON *msg_new(const char *type);
