/*
 * Self-fuzzing harness: `snapfuzz status` reading OUT/stats.json
 * (engine/status.c, status_report). The file is whatever was left in the
 * output directory: a killed run's, an older version's, or one someone
 * edited. The report goes to a memory stream; it must be eight to eleven
 * lines, with no control character from the file in it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/status.h"

/* glibc's gmtime_r reads the time zone file the first time it runs: load it
 * before the sandbox closes the file system (`snapfuzz status` itself runs
 * unsandboxed). */
__attribute__((visibility("default"))) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        tzset();
        return 0;
}

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *report = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&report, &len);
        if (!out)
                return 0;
        /* The first byte picks whether the lock is held: both paths print. */
        int held = size > 0 && (data[0] & 1);
        int r = status_report(out, "OUT", (const char *)data, size, held, 1234, (time_t)1764000000);
        fclose(out);
        if (r == 0) {
                size_t lines = 0;
                for (size_t i = 0; i < len; i++) {
                        unsigned char ch = (unsigned char)report[i];
                        if (ch == '\n')
                                lines++;
                        else if (ch < 0x20 || ch == 0x7f)
                                abort();
                }
                /* Eight lines, and up to three more for the figures a
                 * newer stats.json carries (last edge, hangs, memory). */
                if (lines < 8 || lines > 11)
                        abort();
        } else if (len != 0) {
                abort();
        }
        free(report);
        return 0;
}
