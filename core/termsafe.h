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

/* What termsafe_text() writes for @len input bytes at most, with the NUL:
 * an escape is at most four bytes per input byte. */
#define TERMSAFE_TEXT_CAP(len) ((len)*4u + 1u)

/*
 * Writes the @len bytes at @s (NULs and all) into @buf (capacity @cap) as
 * text for a terminal: newlines and tabs pass, every other character that
 * termsafe_str() escapes is escaped the same way. Stops before the first
 * character that would not fit (nothing is cut when @cap is at least
 * TERMSAFE_TEXT_CAP(@len)). NUL-terminates (when @cap > 0) and returns the
 * length written. A UTF-8 character split across two calls is shown as
 * \xNN escapes.
 */
size_t termsafe_text(char *buf, size_t cap, const void *s, size_t len);
