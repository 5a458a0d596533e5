/*
 * The pipe protocol's reader and accessors (core/msg.h): lines cut
 * anywhere come out whole and in order, a line that is not a JSON object
 * is a protocol error, and the accessors answer the default for what a
 * peer should not have sent.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/msg.h"

static void feed_all(MsgReader *r, const char *s)
{
        size_t len = strlen(s);
        while (len > 0) {
                size_t used = 0;
                cr_assert_eq(msg_reader_feed(r, s, len, &used), 0);
                s += used;
                len -= used;
        }
}

Test(msg, lines_fed_in_pieces_come_out_whole_and_in_order)
{
        MsgReader r;
        cJSON *m = NULL;
        msg_reader_init(&r, -1);
        feed_all(&r, "{\"type\":\"pong\"}\n{\"type\":\"do");
        cr_assert_eq(msg_take(&r, &m), 1);
        cr_assert_str_eq(msg_str(m, "type", ""), "pong");
        cJSON_Delete(m);
        cr_assert_eq(msg_take(&r, &m), 0, "half a line is not a message yet");
        feed_all(&r, "ne\",\"n\":7}\n");
        cr_assert_eq(msg_take(&r, &m), 1);
        cr_assert_str_eq(msg_str(m, "type", ""), "done");
        cr_assert_eq(msg_int(m, "n", 0), 7);
        cJSON_Delete(m);
        cr_assert_eq(msg_take(&r, &m), 0);
        msg_reader_deinit(&r);
}

Test(msg, a_line_that_is_not_an_object_is_a_protocol_error)
{
        MsgReader r;
        cJSON *m = NULL;
        msg_reader_init(&r, -1);
        feed_all(&r, "[1,2]\n{\"type\":\"pong\"}\n");
        cr_assert_eq(msg_take(&r, &m), -EPROTO);
        cr_assert_eq(msg_take(&r, &m), 1, "the next line is still read");
        cJSON_Delete(m);
        msg_reader_deinit(&r);
}

Test(msg, an_endless_line_is_refused_not_buffered_forever)
{
        static char chunk[64 * 1024];
        MsgReader r;
        cJSON *m = NULL;
        int t = 0;
        memset(chunk, 'x', sizeof(chunk));
        msg_reader_init(&r, -1);
        for (size_t total = 0; total <= 2 * MSG_MAX_LINE && t == 0;) {
                size_t used = 0;
                t = msg_reader_feed(&r, chunk, sizeof(chunk), &used);
                total += used;
                if (t == 0)
                        t = msg_take(&r, &m);
        }
        cr_assert_eq(t, -EPROTO);
        msg_reader_deinit(&r);
}

/* Found by fuzz_targets/self/crashrec.c: a crash.json with "input_len":
 * 1e300 made msg_int convert a double outside int64_t's range, which is
 * undefined (x86 gives INT64_MIN). Such a number is as mistyped as a
 * string: the default. */
Test(msg, int_outside_int64_range_is_the_default)
{
        cJSON *m = cJSON_Parse("{\"a\":1e300,\"b\":-1e19,\"c\":9223372036854775808,"
                               "\"d\":-9223372036854775808,\"e\":42.9}");
        cr_assert(m);
        cr_assert_eq(msg_int(m, "a", -1), -1);
        cr_assert_eq(msg_int(m, "b", -1), -1);
        cr_assert_eq(msg_int(m, "c", -1), -1, "2^63 does not fit");
        cr_assert_eq(msg_int(m, "d", -1), INT64_MIN, "-2^63 does");
        cr_assert_eq(msg_int(m, "e", -1), 42);
        cJSON *nan = cJSON_CreateNumber(NAN);
        cJSON_AddItemToObject(m, "f", nan);
        cr_assert_eq(msg_int(m, "f", -1), -1);
        cJSON_Delete(m);
}
