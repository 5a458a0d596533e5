/*
 * Self-fuzzing harness: OUT/plot_data read back (engine/plotdata.c,
 * plotdata_parse_line), as `snapfuzz plot` and a resumed run read it. The
 * file is whatever was left in the output directory: a line torn by a
 * kill, an older version's, one someone edited. Every line of the input is
 * parsed; a line taken must hold figures a plot can use: a finite time
 * and speed, no negative count, a memory figure of -1 or more.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plotdata.h"

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *p = (const char *)data, *end = p + size;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                const char *stop = nl ? nl : end;
                PlotRow r;
                if (plotdata_parse_line(p, (size_t)(stop - p), &r) == 0) {
                        if (!isfinite(r.t) || r.t < 0 || !isfinite(r.execs_per_sec) ||
                            r.execs_per_sec < 0 || r.rss_mb < -1)
                                abort();
                        if (p[0] == '#')
                                abort(); /* the header is not figures */
                }
                p = nl ? nl + 1 : end;
        }
        return 0;
}
