/*
 * The terminal sanitizer. Invariants: the result holds no byte below 0x20,
 * no 0x7f, and no UTF-8 sequence for U+0080-U+009F or a bidi control;
 * every byte sequence of the input that is not well-formed UTF-8 is shown
 * as \xNN, so the output is valid UTF-8; the output never exceeds @cap
 * (a cut is always marked).
 */
#include "core/termsafe.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "snapfuzz/banned.h"

/* Length of the well-formed UTF-8 sequence at @p (at most @n bytes), its
 * code point in *ret_cp; 0 when it is not one. */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *ret_cp)
{
        size_t len;
        uint32_t cp, min;

        if (p[0] < 0x80) {
                *ret_cp = p[0];
                return 1;
        }
        if (p[0] >= 0xc2 && p[0] <= 0xdf) {
                len = 2, cp = p[0] & 0x1f, min = 0x80;
        } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                len = 3, cp = p[0] & 0x0f, min = 0x800;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                len = 4, cp = p[0] & 0x07, min = 0x10000;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return len;
}

/* Code points a terminal acts on rather than shows: C1 controls, and the
 * bidi controls that reorder what follows them. */
static bool is_control_cp(uint32_t cp)
{
        return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
               cp == 0x2029;
}

/* The escape for byte @c below 0x20 or 0x7f, or a backslash. */
static void escape_byte(unsigned char c, char out[8])
{
        switch (c) {
        case '\n':
                memcpy(out, "\\n", 3);
                return;
        case '\r':
                memcpy(out, "\\r", 3);
                return;
        case '\t':
                memcpy(out, "\\t", 3);
                return;
        case '\\':
                memcpy(out, "\\\\", 3);
                return;
        default:
                snprintf(out, 8, "\\x%02x", c);
        }
}

/* The piece that shows the character at @p (at most @n bytes): either the
 * character itself (*ret_piece points into @p) or its escape in @esc.
 * Returns how many input bytes it stands for; *ret_plen is its length.
 * Newlines and tabs are escaped unless @keep_lines. */
static size_t termsafe_piece(const unsigned char *p, size_t n, bool keep_lines, char esc[16],
                             const char **ret_piece, size_t *ret_plen)
{
        uint32_t cp;
        size_t len = utf8_seq(p, n, &cp);

        /* A newline or a tab, where lines are kept, is shown as it is. */
        bool kept = len == 1 && keep_lines && (cp == '\n' || cp == '\t');
        *ret_piece = esc;
        if (len == 0) {
                snprintf(esc, 16, "\\x%02x", p[0]);
                len = 1;
        } else if (!kept && len == 1 && (cp < 0x20 || cp == 0x7f || cp == '\\')) {
                escape_byte(p[0], esc);
        } else if (!kept && is_control_cp(cp)) {
                snprintf(esc, 16, "\\u%04x", (unsigned)cp);
        } else {
                *ret_piece = (const char *)p;
        }
        *ret_plen = *ret_piece == esc ? strlen(esc) : len;
        return len;
}

char *termsafe_str(char *buf, size_t cap, const char *s, size_t max)
{
        const unsigned char *p = (const unsigned char *)(s ? s : "");
        size_t n = strlen((const char *)p), at = 0, i = 0;
        char marker[48];

        if (cap == 0)
                return buf;
        /* Room kept for the marker, so a cut is always visible. */
        size_t limit = cap > sizeof(marker) ? cap - sizeof(marker) : 0;
        while (i < n && i < max) {
                char esc[16];
                const char *piece;
                size_t plen;
                size_t len = termsafe_piece(p + i, n - i, false, esc, &piece, &plen);

                if (i + len > max)
                        break; /* never half a character */
                if (at + plen >= limit)
                        break;
                memcpy(buf + at, piece, plen);
                at += plen;
                i += len;
        }
        buf[at] = '\0';
        if (i < n) {
                snprintf(marker, sizeof(marker), " ... [%zu more bytes]", n - i);
                snprintf(buf + at, cap - at, "%s", marker);
        }
        return buf;
}

size_t termsafe_text(char *buf, size_t cap, const void *s, size_t len)
{
        const unsigned char *p = s;
        size_t at = 0, i = 0;

        while (i < len) {
                char esc[16];
                const char *piece;
                size_t plen;
                size_t used = termsafe_piece(p + i, len - i, true, esc, &piece, &plen);

                if (at + plen >= cap)
                        break;
                memcpy(buf + at, piece, plen);
                at += plen;
                i += used;
        }
        if (cap)
                buf[at < cap ? at : cap - 1] = '\0';
        return at;
}
