/*
 * Self-fuzzing harness: OUT/quarantine.json as `run`, `regress` and
 * `crashes` read it (engine/quarantine.c, quarantine_parse). The file comes
 * from a CI cache or a commit: whatever it holds, it is refused with one
 * printable line, or accepted; an accepted list written back and read
 * again gives the same text (nothing is lost or invented on the way).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/quarantine.h"

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Quarantine *q = NULL, *again = NULL;
        char err[1024], *text = NULL, *text2 = NULL;
        size_t len = 0, len2 = 0;

        err[0] = '\0';
        if (quarantine_parse("q.json", (const char *)data, size, &q, err, sizeof(err)) < 0) {
                /* One line, nothing a terminal would act on. */
                for (const unsigned char *p = (const unsigned char *)err; *p; p++)
                        if (*p < 0x20 || *p == 0x7f)
                                abort();
                if (!err[0] || q)
                        abort();
                return 0;
        }
        if (quarantine_format(q, &text, &len) < 0)
                abort();
        if (quarantine_parse("q.json", text, len, &again, err, sizeof(err)) < 0)
                abort();
        if (quarantine_count(again) != quarantine_count(q))
                abort();
        if (quarantine_format(again, &text2, &len2) < 0 || len2 != len ||
            memcmp(text, text2, len) != 0)
                abort();
        /* No crash id holds a NUL or a slash: never found. */
        if (quarantine_find(q, "../x", NULL))
                abort();
        free(text);
        free(text2);
        quarantine_free(again);
        quarantine_free(q);
        return 0;
}
