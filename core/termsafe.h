/*
 * Text from outside (a stored crash.json, a target's output) made safe to
 * print on a terminal: no control sequence reaches it, and no amount of it
 * floods it.
 */
#pragma once

#include <stddef.h>

/* How much of one stored text reaches the terminal by default (bytes of
 * the original). */
#define TERMSAFE_MAX 2048u
/* A buffer that holds termsafe_str()'s result for TERMSAFE_MAX: four
 * output bytes per input byte at most, plus the truncation marker. */
#define TERMSAFE_BUF (TERMSAFE_MAX * 4u + 64u)

/*
 * Writes @s into @buf (capacity @cap, at least 64) as one printable line:
 * C0 controls (ESC, CR, LF, BEL, ...), DEL, C1 controls (raw bytes
 * 0x80-0x9f and their UTF-8 forms U+0080-U+009F), the Unicode bidi controls
 * and bytes that are not UTF-8 become escapes (\x1b, \n, \t, \u202e), a
 * backslash becomes \\, and printable UTF-8 passes. At most @max bytes of
 * @s are shown; the rest is cut with " ... [N more bytes]". Always
 * NUL-terminates; returns @buf. @s NULL reads as "".
 */
char *termsafe_str(char *buf, size_t cap, const char *s, size_t max);
