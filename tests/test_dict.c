/*
 * Dictionaries: the libFuzzer/AFL format is read as those tools read it,
 * every kind of malformed line is refused with its line number and what is
 * wrong, what snapfuzz writes it reads back, and the table it builds for a
 * batch is what the mutator parses.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dict.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

static Dict *parse_ok(const char *text)
{
        Dict *d;
        DictError err = {0};
        cr_assert_eq(dict_new(&d), 0);
        int r = dict_parse(d, text, strlen(text), &err);
        cr_assert_eq(r, 0, "refused: line %u: %s", err.line, err.message);
        return d;
}

static void expect_token(const Dict *d, size_t i, const void *bytes, size_t len)
{
        size_t n;
        const uint8_t *t = dict_get(d, i, &n);
        cr_assert_eq(n, len, "token %zu is %zu bytes, not %zu", i, n, len);
        cr_assert_arr_eq(t, bytes, len, "token %zu", i);
}

Test(dict, reads_the_libfuzzer_and_afl_format)
{
        Dict *d = parse_ok("# a comment\n"
                           "\n"
                           "\"GIF89a\"\n"
                           "kw1=\"\\x89PNG\\x0d\\x0a\"\n"
                           "   header_2 = \"say \\\"hi\\\"\"   \n"
                           "\t# an indented comment\n"
                           "afl_level@7=\"back\\\\slash\"\r\n"
                           "tab=\"a\tb\"\n"
                           "upper=\"\\xFF\\x00\\xAb\"\n"
                           "\"GIF89a\"\n" /* a duplicate is kept once */
                           "last=\"no newline at the end\"");
        cr_assert_eq(dict_size(d), 7);
        expect_token(d, 0, "GIF89a", 6);
        expect_token(d, 1, "\x89PNG\r\n", 6);
        expect_token(d, 2, "say \"hi\"", 8);
        expect_token(d, 3, "back\\slash", 10);
        expect_token(d, 4, "a\tb", 3);
        expect_token(d, 5, "\xff\x00\xab", 3);
        expect_token(d, 6, "no newline at the end", 21);
        dict_free(d);
}

Test(dict, empty_and_comment_only_files_are_empty_dictionaries)
{
        Dict *d = parse_ok("");
        cr_expect_eq(dict_size(d), 0);
        dict_free(d);
        d = parse_ok("\n\n# nothing\n   \n");
        cr_expect_eq(dict_size(d), 0);
        dict_free(d);
}

struct Bad {
        const char *text;
        unsigned line;
        const char *says; /* a part of the message */
};

Test(dict, every_malformed_line_is_refused_with_its_number_and_reason)
{
        static const struct Bad cases[] = {
            {"\"ok\"\nnot quoted\n", 2, "expected '=' after the name not"},
            {"\"ok\"\n\n-\"x\"\n", 3, "expected a quoted value"},
            {"name\n", 1, "expected '=' after the name name, found the end of the line"},
            {"name:\"x\"\n", 1, "expected '=' after the name name, found ':'"},
            {"name=x\n", 1, "expected '\"' to open the value, found 'x'"},
            {"name=\n", 1, "expected '\"' to open the value, found the end of the line"},
            {"name@=\"x\"\n", 1, "expected a number after '@'"},
            {"\"unterminated\n", 1, "no closing '\"'"},
            {"\"ends in a backslash\\\n", 1, "no closing '\"'"},
            {"# c\n\"ok\" trailing\n", 2, "unexpected 't' after the closing '\"'"},
            {"\"a\"\"b\"\n", 1, "unexpected '\"' after the closing"},
            {"\"\"\n", 1, "the value is empty"},
            {"x=\"\"\n", 1, "the value is empty"},
            {"\"bad \\q escape\"\n", 1, "unknown escape \\q"},
            {"\"\\x4\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"\\xg0\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"\\x\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"raw \x01 byte\"\n", 1,
             "byte 0x01 in the value is not printable; write it as \\x01"},
            {"\"high \xc3\xa9\"\n", 1, "byte 0xc3"},
            {"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n", 1,
             "longer than 64 bytes"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Dict *d;
                DictError err = {0};
                cr_assert_eq(dict_new(&d), 0);
                int r = dict_parse(d, cases[i].text, strlen(cases[i].text), &err);
                cr_expect_eq(r, -EINVAL, "case %zu was accepted", i);
                cr_expect_eq(err.line, cases[i].line, "case %zu: line %u", i, err.line);
                cr_expect(strstr(err.message, cases[i].says),
                          "case %zu: \"%s\" does not say \"%s\"", i, err.message, cases[i].says);
                cr_expect_eq(strchr(err.message, '\n'), NULL, "one line");
                dict_free(d);
        }
}

Test(dict, a_token_of_exactly_the_longest_length_is_fine)
{
        char text[80];
        memset(text, 'z', sizeof(text));
        text[0] = '"';
        text[MUTATOR_DICT_MAX_TOKEN + 1] = '"';
        text[MUTATOR_DICT_MAX_TOKEN + 2] = '\0';
        Dict *d = parse_ok(text);
        cr_assert_eq(dict_size(d), 1);
        dict_free(d);
}

Test(dict, too_many_tokens_are_refused_at_the_line_that_overflows)
{
        size_t cap = (MUTATOR_DICT_MAX_ENTRIES + 1) * 12;
        char *text = malloc(cap);
        size_t o = 0;
        for (unsigned i = 0; i <= MUTATOR_DICT_MAX_ENTRIES; i++)
                o += (size_t)snprintf(text + o, cap - o, "\"t%06u\"\n", i);
        Dict *d;
        DictError err = {0};
        cr_assert_eq(dict_new(&d), 0);
        cr_expect_eq(dict_parse(d, text, o, &err), -EINVAL);
        cr_expect_eq(err.line, MUTATOR_DICT_MAX_ENTRIES + 1);
        cr_expect(strstr(err.message, "more than 4096 tokens"), "%s", err.message);
        dict_free(d);
        free(text);
}

Test(dict, add_refuses_empty_and_overlong_tokens_and_dedupes)
{
        Dict *d;
        uint8_t big[MUTATOR_DICT_MAX_TOKEN + 1] = {0};
        cr_assert_eq(dict_new(&d), 0);
        cr_expect_eq(dict_add(d, (const uint8_t *)"", 0), -EINVAL);
        cr_expect_eq(dict_add(d, big, sizeof(big)), -EINVAL);
        cr_expect_eq(dict_add(d, (const uint8_t *)"ab", 2), 1);
        cr_expect_eq(dict_add(d, (const uint8_t *)"ab", 2), 0);
        cr_expect_eq(dict_add(d, (const uint8_t *)"a", 1), 1);
        cr_expect_eq(dict_size(d), 2);
        cr_expect(dict_contains(d, (const uint8_t *)"a", 1));
        cr_expect(!dict_contains(d, (const uint8_t *)"b", 1));
        dict_free(d);
        dict_free(NULL);
}

Test(dict, what_is_saved_reads_back_byte_for_byte)
{
        char dir[] = "/tmp/sf-dict-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
        cr_assert_geq(dirfd, 0);

        Dict *d, *back;
        cr_assert_eq(dict_new(&d), 0);
        cr_assert_eq(dict_new(&back), 0);
        uint8_t every[256];
        for (int i = 0; i < 256; i++)
                every[i] = (uint8_t)i;
        for (size_t off = 0; off < 256; off += MUTATOR_DICT_MAX_TOKEN)
                cr_assert_eq(dict_add(d, every + off, MUTATOR_DICT_MAX_TOKEN), 1);
        cr_assert_eq(dict_add(d, (const uint8_t *)"\"\\", 2), 1);
        cr_assert_eq(dict_save(d, dirfd, "autodict", "made by a test"), 0);

        DictError err = {0};
        cr_assert_eq(dict_load(back, dirfd, "autodict", &err), 0, "line %u: %s", err.line,
                     err.message);
        cr_assert_eq(dict_size(back), dict_size(d));
        for (size_t i = 0; i < dict_size(d); i++) {
                size_t n;
                const uint8_t *t = dict_get(d, i, &n);
                expect_token(back, i, t, n);
        }
        cr_expect_eq(dict_load(back, dirfd, "missing", &err), -ENOENT);
        cr_expect_eq(err.line, 0);
        dict_free(d);
        dict_free(back);
        unlinkat(dirfd, "autodict", 0);
        close(dirfd);
        rmdir(dir);
}

Test(dict, quote_escapes_what_must_be_escaped)
{
        char buf[64];
        cr_expect_eq(dict_quote((const uint8_t *)"a\"b\\c\x01\x7f", 7, buf, sizeof(buf)), 17);
        cr_expect_str_eq(buf, "\"a\\\"b\\\\c\\x01\\x7f\"");
        cr_expect_eq(dict_quote((const uint8_t *)"abc", 3, buf, 10), 0, "too small a buffer");
}

Test(dict, serialized_dictionaries_are_what_the_mutator_parses)
{
        Dict *user = parse_ok("\"one\"\n\"two\"\n");
        Dict *autod = parse_ok("\"two\"\n\"\\xde\\xad\\xbe\\xef\"\n");
        const Dict *both[] = {user, NULL, autod};
        static uint8_t table[RECORD_TABLE_BYTES];
        static MutatorDict md;

        size_t used = dict_serialize(both, 3, table, sizeof(table));
        cr_assert_eq(mutator_dict_parse(&md, table, used), 3,
                     "duplicates across dictionaries "
                     "are written once");
        cr_expect_arr_eq(md.table + md.offset[0], "one", 3);
        cr_expect_arr_eq(md.table + md.offset[1], "two", 3);
        cr_expect_arr_eq(md.table + md.offset[2], "\xde\xad\xbe\xef", 4);
        cr_expect_eq(table[used - 1], 0);
        dict_free(user);
        dict_free(autod);
}
