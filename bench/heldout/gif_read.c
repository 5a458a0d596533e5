/*
 * A libFuzzer harness for giflib's decoder (bench/asan-quarantine.sh): the
 * input read through a memory callback, every image slurped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gif_lib.h"
struct mem {
        const uint8_t *p;
        size_t n, off;
};
static int rd(GifFileType *g, GifByteType *buf, int len)
{
        struct mem *m = g->UserData;
        size_t k = (size_t)len;
        if (k > m->n - m->off)
                k = m->n - m->off;
        memcpy(buf, m->p + m->off, k);
        m->off += k;
        return (int)k;
}
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mem m = {data, size, 0};
        int err;
        GifFileType *g = DGifOpen(&m, rd, &err);
        if (!g)
                return 0;
        DGifSlurp(g);
        DGifCloseFile(g, &err);
        return 0;
}
