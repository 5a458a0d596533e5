/*
 * Self-fuzzing harness: the worker message reader (core/msg.c) and what
 * the coordinator does with a worker's "died" event (recovery/classify.c).
 * A worker runs the target in its own process; a target that scribbles
 * over it, or a broken worker, can send anything down the pipe.
 *
 * The input is split into reads whose sizes come from the input itself
 * (the first byte of each chunk), so the framing sees lines cut anywhere,
 * several lines in one read and lines longer than a read. Every message
 * that comes out is an object; "died" events are classified, and the
 * classification must be a crash kind the README documents with an id of
 * 16 hex digits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/msg.h"
#include "recovery/classify.h"

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "msg harness: %s failed at line %d\n", #cond, __LINE__);   \
                        abort();                                                                   \
                }                                                                                  \
        } while (0)

static void handle(const cJSON *m)
{
        CHECK(cJSON_IsObject(m));
        const char *type = msg_str(m, "type", "");
        /* The accessors every handler uses, on whatever the fields hold. */
        (void)msg_int(m, "n", 0);
        (void)msg_int(m, "execs", 0);
        (void)msg_num(m, "elapsed", 0);
        (void)msg_bool(m, "new", 0);
        if (strcmp(type, "died") != 0)
                return;
        Classification c;
        classify_death(m, &c);
        CHECK(memchr(c.kind, '\0', sizeof(c.kind)) && memchr(c.message, '\0', sizeof(c.message)));
        CHECK(memchr(c.signature, '\0', sizeof(c.signature)));
        CHECK(strlen(c.id) == CLASSIFY_ID_LEN - 1);
        CHECK(strspn(c.id, "0123456789abcdef") == CLASSIFY_ID_LEN - 1);
        /* "leak-suspect" is the one kind that is not reported: the recovery
         * helper confirms it as "leak" or dismisses it. */
        if (c.is_crash && !classify_kind_is_known(c.kind) && strcmp(c.kind, "leak-suspect") != 0) {
                fprintf(stderr, "msg harness: classify_death gave the undocumented kind \"%s\"\n",
                        c.kind);
                abort();
        }
}

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        MsgReader r;
        msg_reader_init(&r, -1);
        while (size > 0) {
                /* A chunk: its first byte says how many of the next bytes
                 * one read delivers (1..256). */
                size_t want = (size_t)data[0] + 1;
                data++;
                size--;
                if (want > size)
                        want = size;
                while (want > 0) {
                        size_t used = 0;
                        int t = msg_reader_feed(&r, data, want, &used);
                        if (t < 0)
                                goto out;
                        data += used;
                        size -= used;
                        want -= used;
                        cJSON *m = NULL;
                        while ((t = msg_take(&r, &m)) == 1) {
                                handle(m);
                                cJSON_Delete(m);
                        }
                        if (t < 0)
                                goto out;
                }
        }
out:
        msg_reader_deinit(&r);
        return 0;
}
