/*
 * A PNG metadata reader, the kind a thumbnailer runs before decoding: it
 * walks the chunk list and collects the header, the palette size, the text
 * entries and the amount of image data, without decompressing anything.
 *
 *   signature  89 50 4e 47 0d 0a 1a 0a (only the first four bytes are checked)
 *   chunk      length (u32 big-endian), type (4 bytes), data[length], CRC (4)
 *     IHDR     13 bytes: width, height (u32, non-zero), bit depth, colour
 *              type (a valid pair), compression 0, filter 0, interlace 0/1
 *     PLTE     1..256 RGB entries (length a multiple of 3)
 *     tEXt     keyword '\0' text; old encoders put several pairs in one
 *              chunk, separated by '\0', so this reader accepts that
 *     IDAT     image data, only counted
 *     IEND     ends the walk
 *   Other chunk types are skipped. Chunks over 64 KiB are rejected. CRCs
 *   are not checked (a metadata reader has no use for them), and a missing
 *   or cut-off CRC at the end of the file is tolerated.
 *
 * Planted bug: while splitting a tEXt chunk, an empty keyword (a '\0' where a
 * keyword should start) is skipped with `continue` without advancing, so the
 * reader spins forever: a hang, not a crash. Any other input returns.
 *
 * Hanging input (hex): 89504e470d0a1a0a 00000001 74455874 00 00000000
 *
 * Built with -DSNAPFUZZ_NO_PLANTED_BUG, the bug is replaced by the safe
 * code, for benchmarks (bench/) that must not stop at the first crash.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PNG_KEYWORD_MAX 79

enum png_chunk_type {
        PNG_OTHER,
        PNG_IHDR,
        PNG_PLTE,
        PNG_TEXT,
        PNG_IDAT,
        PNG_IEND,
};

struct png_info {
        uint32_t width, height;
        uint8_t depth, colour, interlace;
        bool have_header;
        unsigned int palette_entries;
        unsigned int text_entries;
        size_t image_bytes;
};

static uint32_t read_be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One comparison per byte of the type, as a hand-written reader would do. */
static enum png_chunk_type png_classify(const uint8_t t[4])
{
        if (t[0] == 'I') {
                if (t[1] == 'H' && t[2] == 'D' && t[3] == 'R')
                        return PNG_IHDR;
                if (t[1] == 'D' && t[2] == 'A' && t[3] == 'T')
                        return PNG_IDAT;
                if (t[1] == 'E' && t[2] == 'N' && t[3] == 'D')
                        return PNG_IEND;
        } else if (t[0] == 'P') {
                if (t[1] == 'L' && t[2] == 'T' && t[3] == 'E')
                        return PNG_PLTE;
        } else if (t[0] == 't') {
                if (t[1] == 'E' && t[2] == 'X' && t[3] == 't')
                        return PNG_TEXT;
        }
        return PNG_OTHER;
}

static int png_read_header(struct png_info *info, const uint8_t *d, size_t len)
{
        uint8_t depth, colour;
        bool ok;

        if (len != 13 || info->have_header)
                return -1;
        info->width = read_be32(d);
        info->height = read_be32(d + 4);
        if (info->width == 0 || info->height == 0)
                return -1;
        depth = d[8];
        colour = d[9];
        /* The pairs the PNG specification allows (its table 11.1). */
        switch (colour) {
        case 0:
                ok = depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
                break;
        case 3:
                ok = depth == 1 || depth == 2 || depth == 4 || depth == 8;
                break;
        case 2:
        case 4:
        case 6:
                ok = depth == 8 || depth == 16;
                break;
        default:
                ok = false;
                break;
        }
        if (!ok || d[10] != 0 || d[11] != 0 || d[12] > 1)
                return -1;
        info->depth = depth;
        info->colour = colour;
        info->interlace = d[12];
        info->have_header = true;
        return 0;
}

/* Returns the length of the field at d[0..len) up to its '\0' or the end. */
static size_t png_field_len(const uint8_t *d, size_t len)
{
        const uint8_t *nul = memchr(d, 0, len);

        return nul ? (size_t)(nul - d) : len;
}

static int png_read_text(struct png_info *info, const uint8_t *d, size_t len)
{
        size_t pos = 0;

        /*
         * for (;;) with the test inside, not while (pos < len): C11 lets the
         * compiler assume that a loop with a non-constant condition and no
         * side effects ends (6.8.5p6), which could delete the planted hang.
         */
        for (;;) {
                size_t klen, tlen;

                if (pos >= len)
                        return 0;
                klen = png_field_len(d + pos, len - pos);
                if (klen == 0) {
#ifndef SNAPFUZZ_NO_PLANTED_BUG
                        /* The planted bug: padding between pairs is skipped without advancing. */
                        continue;
#else
                        pos++;
                        continue;
#endif
                }
                if (klen > PNG_KEYWORD_MAX)
                        return -1;
                pos += klen;
                if (pos == len)
                        return -1; /* a keyword without its separator */
                pos++;
                tlen = png_field_len(d + pos, len - pos);
                pos += tlen;
                if (pos < len)
                        pos++; /* the separator before the next pair */
                info->text_entries++;
        }
}

static int png_read(struct png_info *info, const uint8_t *data, size_t size)
{
        static const uint8_t signature[4] = {0x89, 'P', 'N', 'G'};
        size_t pos = 8;

        if (size < 8)
                return -1;
        /*
         * Only the first four bytes are compared, as an application calling
         * libpng's png_sig_cmp() with num_to_check 4 does; the CR LF ^Z LF
         * that follow catch transfer damage, which is no concern here. The
         * comparisons are unrolled: in a loop all bytes would share one edge.
         */
        if (data[0] != signature[0])
                return -1;
        if (data[1] != signature[1])
                return -1;
        if (data[2] != signature[2])
                return -1;
        if (data[3] != signature[3])
                return -1;

        while (size - pos >= 8) {
                const uint8_t *d = data + pos;
                uint32_t len;
                int r = 0;

                /* Chunks over 64 KiB are refused before the length is used at all. */
                if (d[0] != 0)
                        return -1;
                if (d[1] != 0)
                        return -1;
                len = read_be32(d);
                if (len > size - pos - 8)
                        return -1;

                switch (png_classify(d + 4)) {
                case PNG_IHDR:
                        r = png_read_header(info, d + 8, len);
                        break;
                case PNG_PLTE:
                        if (len == 0 || len % 3 != 0 || len / 3 > 256)
                                return -1;
                        info->palette_entries = len / 3;
                        break;
                case PNG_TEXT:
                        r = png_read_text(info, d + 8, len);
                        break;
                case PNG_IDAT:
                        info->image_bytes += len;
                        break;
                case PNG_IEND:
                        return 0;
                case PNG_OTHER:
                        break;
                }
                if (r < 0)
                        return -1;
                /*
                 * The CRC is skipped unchecked, so a file cut off inside the
                 * last CRC (a truncated download) still gives its metadata.
                 */
                pos += 8 + (size_t)len;
                pos += size - pos < 4 ? size - pos : 4;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The result of the last call, exported as a library would hand it to its
 * caller; that also keeps the compiler from discarding the walk as dead code.
 * It is overwritten by every call and never read here.
 */
extern struct png_info png_last_info;
struct png_info png_last_info;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        memset(&png_last_info, 0, sizeof(png_last_info));
        /* A malformed file is an ordinary outcome, and half-valid inputs must stay in the corpus.
         */
        (void)png_read(&png_last_info, data, size);
        return 0;
}
