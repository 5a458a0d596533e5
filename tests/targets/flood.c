/*
 * A chatty target: every execution writes 4 KiB to stdout and 4 KiB to
 * stderr, with terminal control sequences in it (ESC[2J clears the
 * screen, ESC]0; sets the title, BEL, CR, a C1 CSI byte). An input that
 * starts with '!' then fails an assertion: its message is the last thing
 * it writes before abort(), for the crash report's "output" (not with
 * -DFLOOD_NO_CRASH, the build that only floods).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char flood_line[] = "flood: \x1b[2J\x1b]0;owned\x07 noise\r\x9b"
                                 "31m chatter\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char buf[4096];
        size_t n = sizeof(flood_line) - 1;
        for (size_t at = 0; at + n <= sizeof(buf); at += n)
                memcpy(buf + at, flood_line, n);
        ssize_t w = write(STDOUT_FILENO, buf, sizeof(buf));
        w = write(STDERR_FILENO, buf, sizeof(buf));
        (void)w;
#ifndef FLOOD_NO_CRASH
        if (size > 0 && data[0] == '!') {
                static const char msg[] = "flood.c:31: assertion 'input is not a bang' failed\n";
                w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
                abort();
        }
#endif
        (void)data;
        (void)size;
        return 0;
}
