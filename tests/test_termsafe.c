/*
 * Tests of core/termsafe.c: stored text reaches the terminal without a
 * control sequence, and bounded.
 */
#include "core/termsafe.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "snapfuzz/banned.h"

static char buf[TERMSAFE_BUF];

/* No byte a terminal acts on. */
static void expect_inert(const char *s)
{
        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                cr_expect(*p >= 0x20 && *p != 0x7f, "byte %#x in '%s'", *p, s);
        cr_expect_null(strstr(s, "\xc2\x9b"), "a UTF-8 CSI passed: %s", s);
}

Test(termsafe, control_characters_are_escaped)
{
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf), "a\x1b[2Jb\rc\x07\n\t\x7f\\", 100),
                         "a\\x1b[2Jb\\rc\\x07\\n\\t\\x7f\\\\");
        /* C1 as a raw byte and as UTF-8 (CSI, U+009B), bidi overrides. */
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf),
                                      "x\x9b"
                                      "31m y\xc2\x9b"
                                      "31m",
                                      100),
                         "x\\x9b31m y\\u009b31m");
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf),
                                      "abc\xe2\x80\xae"
                                      "def",
                                      100),
                         "abc\\u202edef");
        expect_inert(buf);
}

Test(termsafe, printable_utf8_passes_and_bad_utf8_is_shown_as_bytes)
{
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf), "héllo → ok", 100), "héllo → ok");
        /* Overlong, surrogate, truncated. */
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf), "\xc0\x80|\xed\xa0\x80|\xe2\x82", 100),
                         "\\xc0\\x80|\\xed\\xa0\\x80|\\xe2\\x82");
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf), NULL, 100), "");
}

Test(termsafe, long_text_is_cut_with_a_marker)
{
        size_t n = 100 * 1024;
        char *big = malloc(n + 1);

        cr_assert_not_null(big);
        for (size_t i = 0; i < n; i++)
                big[i] = i % 7 ? 'a' : '\x1b';
        big[n] = '\0';
        termsafe_str(buf, sizeof(buf), big, TERMSAFE_MAX);
        cr_expect_leq(strlen(buf), TERMSAFE_BUF - 1);
        cr_expect(strstr(buf, " more bytes]"), "no marker");
        expect_inert(buf);
        /* A small buffer still ends in the marker. */
        char small[80];
        termsafe_str(small, sizeof(small), big, TERMSAFE_MAX);
        cr_expect(strstr(small, " ... [") && strstr(small, " more bytes]"), "%s", small);
        cr_expect_lt(strlen(small), sizeof(small));
        /* A cut never splits a character. */
        cr_expect_str_eq(termsafe_str(buf, sizeof(buf), "ab€", 3), "ab ... [3 more bytes]");
        free(big);
}

Test(termsafe, output_text_keeps_its_lines_and_escapes_every_control)
{
        static const char in[] = "a\x1b[2J\tb\r\x07\x00\xc2\x9b"
                                 "31m\n\xe2\x80\xae"
                                 "c\\\n";
        char out[TERMSAFE_TEXT_CAP(sizeof(in) - 1)];
        size_t n = termsafe_text(out, sizeof(out), in, sizeof(in) - 1);

        cr_expect_eq(n, strlen(out));
        cr_expect_str_eq(out, "a\\x1b[2J\tb\\r\\x07\\x00\\u009b31m\n\\u202ec\\\\\n");
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)out[i];
                cr_expect(c >= 0x20 || c == '\n' || c == '\t', "byte 0x%02x at %zu", c, i);
        }
        /* A buffer too small for all of it stops before a whole escape. */
        char small[6];
        n = termsafe_text(small, sizeof(small),
                          "ab\x1b"
                          "cd",
                          5);
        cr_expect_str_eq(small, "ab");
        cr_expect_eq(n, 2);
}
