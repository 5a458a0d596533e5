/*
 * Dictionaries: the libFuzzer/AFL format is read as those tools read it,
 * every kind of line snapfuzz cannot use is skipped and reported with its
 * line number and what is wrong, what snapfuzz writes it reads back, and the table it builds for a
 * batch is what the mutator parses.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        cr_assert_eq(r, 0, "refused: %d", r);
        cr_assert_eq(err.skipped, 0, "skipped line %u: %s", err.line, err.message);
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

/* Lines the peers read (libFuzzer takes any text before the first quote
 * as the name and the value up to the last quote; AFL++ the same for
 * name@level="..."), and the token each gives. */
Test(dict, reads_every_line_libfuzzer_or_afl_reads)
{
        static const struct {
                const char *text;
                const char *token;
                size_t len;
        } cases[] = {
            {"-\"x\"\n", "x", 1},
            {"name:\"x\"\n", "x", 1},
            {"name@=\"x\"\n", "x", 1},
            {"kw@1[3]=\"x\"\n", "x", 1},
            {"\"a\"\"b\"\n", "a\"\"b", 4},
            {"\"a?)\"xyz{93}\"\n", "a?)\"xyz{93}", 11},
            {"table1=\"+--+\"\"\n", "+--+\"", 5},
            {"\"raw \x01 byte\"\n", "raw \x01 byte", 10},
            {"\"high \xc3\xa9\"\n", "high \xc3\xa9", 7},
            {"\"\\\\\"\n", "\\", 1},
            {"\"\\\"\"\n", "\"", 1},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Dict *d = parse_ok(cases[i].text);
                cr_assert_eq(dict_size(d), 1, "case %zu: %zu tokens", i, dict_size(d));
                expect_token(d, 0, cases[i].token, cases[i].len);
                dict_free(d);
        }
}

struct Bad {
        const char *text;
        unsigned line;
        const char *says; /* a part of the message */
};

/* A line that cannot be used is skipped, and the parse goes on: the token
 * of the line after it is in. */
Test(dict, a_line_that_cannot_be_used_is_skipped_with_its_number_and_reason)
{
        static const struct Bad cases[] = {
            {"\"ok\"\nnot quoted\n", 2, "expected a value in double quotes"},
            {"name\n", 1, "expected a value in double quotes"},
            {"name=x\n", 1, "expected a value in double quotes"},
            {"name=\"\n", 1, "no closing '\"'"},
            {"\"unterminated\n", 1, "no closing '\"'"},
            {"# c\n\"ok\" trailing\n", 2, "no closing '\"'"},
            {"\"ends in a backslash\\\"\n", 1, "lone backslash"},
            {"\"\"\n", 1, "the value is empty"},
            {"x=\"\"\n", 1, "the value is empty"},
            {"\"bad \\q escape\"\n", 1, "unknown escape \\q"},
            {"\"\\r\\n\"\n", 1, "unknown escape \\r"},
            {"\"\\x4\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"\\xg0\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"\\x\"\n", 1, "\\x must be followed by two hex digits"},
            {"\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n", 1,
             "longer than 64 bytes"},
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Dict *d;
                DictError err;
                char text[200];
                snprintf(text, sizeof(text), "%s\"after\"\n", cases[i].text);
                cr_assert_eq(dict_new(&d), 0);
                int r = dict_parse(d, text, strlen(text), &err);
                cr_expect_eq(r, 0, "case %zu: %d", i, r);
                cr_expect_eq(err.skipped, 1, "case %zu: %u skipped", i, err.skipped);
                cr_expect_eq(err.line, cases[i].line, "case %zu: line %u", i, err.line);
                cr_expect(strstr(err.message, cases[i].says),
                          "case %zu: \"%s\" does not say \"%s\"", i, err.message, cases[i].says);
                cr_expect_eq(strchr(err.message, '\n'), NULL, "one line");
                cr_expect(dict_contains(d, (const uint8_t *)"after", 5), "case %zu", i);
                dict_free(d);
        }
}

Test(dict, skipped_lines_are_described_in_one_line)
{
        Dict *d;
        DictError err;
        char text[2048], what[400];
        size_t o = 0;
        for (unsigned i = 1; i <= 12; i++)
                o += (size_t)snprintf(text + o, sizeof(text) - o, "%s\n",
                                      i % 2 ? "\"good\"" : "\"bad \\q\"");
        cr_assert_eq(dict_new(&d), 0);
        cr_assert_eq(dict_parse(d, text, o, &err), 0);
        cr_expect_eq(err.skipped, 6);
        dict_skipped_describe(&err, what, sizeof(what));
        cr_expect_str_eq(what, "2: unknown escape \\q in the value; the escapes are \\\\, \\\" and "
                               "\\xNN; the token is skipped (5 more lines skipped: 4 6 8 10 12)");
        DictError none;
        cr_assert_eq(dict_parse(d, "\"x\"\n", 4, &none), 0);
        cr_expect_eq(none.skipped, 0);
        cr_expect_eq(dict_skipped_describe(&none, what, sizeof(what)), 0);
        dict_free(d);
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

Test(dict, tokens_past_the_most_a_dictionary_holds_are_skipped)
{
        size_t cap = (MUTATOR_DICT_MAX_ENTRIES + 1) * 12;
        char *text = malloc(cap);
        size_t o = 0;
        for (unsigned i = 0; i <= MUTATOR_DICT_MAX_ENTRIES; i++)
                o += (size_t)snprintf(text + o, cap - o, "\"t%06u\"\n", i);
        Dict *d;
        DictError err = {0};
        cr_assert_eq(dict_new(&d), 0);
        cr_expect_eq(dict_parse(d, text, o, &err), 0);
        cr_expect_eq(dict_size(d), MUTATOR_DICT_MAX_ENTRIES);
        cr_expect_eq(err.skipped, 1);
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
        cr_expect_eq(err.skipped, 0, "line %u: %s", err.line, err.message);
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

/* The crafted dictionary with the lines strict readers refuse
 * (tests/dicts/peers.dict): every token the peers read, the two snapfuzz
 * cannot use skipped and named. */
Test(dict, the_crafted_peers_dictionary_reads_as_the_peers_read_it)
{
        const char *dir = getenv("SF_TEST_DICTS");
        char path[4096];
        Dict *d;
        DictError err;

        cr_assert_not_null(dir, "SF_TEST_DICTS is not set (run through meson test)");
        snprintf(path, sizeof(path), "%s/peers.dict", dir);
        cr_assert_eq(dict_new(&d), 0);
        cr_assert_eq(dict_load(d, AT_FDCWD, path, &err), 0);
        cr_assert_eq(dict_size(d), 7, "%zu tokens", dict_size(d));
        expect_token(d, 0, "<b>", 3);
        expect_token(d, 1, "arrow", 5);
        expect_token(d, 2, "say \"x\" now", 11);
        expect_token(d, 3, "=\"", 2);
        expect_token(d, 4, "\x00\xff\\\"end", 7);
        expect_token(d, 5, "a\tb-\xc3\xa9", 6);
        expect_token(d, 6, "last", 4);
        cr_expect_eq(err.skipped, 2);
        cr_expect_eq(err.line, 16);
        cr_expect(strstr(err.message, "longer than 64 bytes"), "%s", err.message);
        cr_expect_eq(err.more[0], 18);
        dict_free(d);
}

/* Every dictionary AFL++ ships loads, each with tokens, and the only lines
 * skipped are ones neither peer reads as written (no closing quote, an
 * escape they do not know) or longer than snapfuzz's longest token. Uses
 * Debian's afl++-doc (or afl++) when installed, or AFL_DICTS=DIR. */
Test(dict, every_dictionary_afl_ships_is_accepted)
{
        static const char *const dirs[] = {"/usr/share/afl/dictionaries",
                                           "/usr/share/doc/afl++-doc/afl/dictionaries",
                                           "/usr/share/doc/afl++/dictionaries"};
        const char *dir = getenv("AFL_DICTS");
        for (size_t i = 0; !dir && i < sizeof(dirs) / sizeof(dirs[0]); i++)
                if (access(dirs[i], R_OK) == 0)
                        dir = dirs[i];
        if (!dir) {
                printf("skipped: AFL++'s dictionaries are not installed "
                       "(apt-get install afl++-doc, or AFL_DICTS=DIR)\n");
                cr_skip_test("AFL++'s dictionaries are not installed");
        }
        DIR *dh = opendir(dir);
        cr_assert_not_null(dh, "%s", dir);
        struct dirent *e;
        size_t files = 0;
        while ((e = readdir(dh))) {
                size_t n = strlen(e->d_name);
                if (n < 6 || strcmp(e->d_name + n - 5, ".dict") != 0)
                        continue;
                char path[4096];
                Dict *d;
                DictError err;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                cr_assert_eq(dict_new(&d), 0);
                cr_expect_eq(dict_load(d, AT_FDCWD, path, &err), 0, "%s", path);
                cr_expect_gt(dict_size(d), 0, "%s: no token", path);
                if (err.skipped) {
                        char what[400];
                        dict_skipped_describe(&err, what, sizeof(what));
                        printf("%s:%s\n", e->d_name, what);
                        cr_expect(strstr(err.message, "no closing") ||
                                      strstr(err.message, "unknown escape") ||
                                      strstr(err.message, "longer than"),
                                  "%s:%s", path, what);
                }
                dict_free(d);
                files++;
        }
        closedir(dh);
        cr_expect_gt(files, 50, "%zu dictionaries in %s", files, dir);
}

static void put(int dirfd, const char *name, const void *bytes, size_t len)
{
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0, "%s", name);
        cr_assert_eq(write(fd, bytes, len), (ssize_t)len);
        close(fd);
}

/* AFL++'s other form: a directory of raw token files, read in name order;
 * hidden and empty files ignored, a too long token skipped and named. */
Test(dict, a_directory_of_token_files_is_read_as_afl_reads_it)
{
        char dir[] = "/tmp/snapfuzz-dictdir-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
        cr_assert_geq(dirfd, 0);
        char big[MUTATOR_DICT_MAX_TOKEN + 1];
        memset(big, 'b', sizeof(big));
        put(dirfd, "2_bin", "\x00\xff\"", 3);
        put(dirfd, "1_text", "token one", 9);
        put(dirfd, "3_big", big, sizeof(big));
        put(dirfd, "4_empty", "", 0);
        put(dirfd, ".hidden", "hidden", 6);
        cr_assert_eq(mkdirat(dirfd, "5_subdir", 0755), 0);

        Dict *d;
        DictError err;
        char what[400];
        cr_assert_eq(dict_new(&d), 0);
        cr_assert_eq(dict_load(d, AT_FDCWD, dir, &err), 0);
        cr_assert_eq(dict_size(d), 2, "%zu tokens", dict_size(d));
        expect_token(d, 0, "token one", 9);
        expect_token(d, 1, "\x00\xff\"", 3);
        cr_expect_eq(err.skipped, 1);
        dict_skipped_describe(&err, what, sizeof(what));
        cr_expect_str_eq(what, " 3_big: the token is longer than 64 bytes, the longest token "
                               "snapfuzz uses; the token is skipped");
        dict_free(d);
        static const char *const names[] = {"1_text", "2_bin", "3_big", "4_empty", ".hidden"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                unlinkat(dirfd, names[i], 0);
        unlinkat(dirfd, "5_subdir", AT_REMOVEDIR);
        close(dirfd);
        rmdir(dir);
}
