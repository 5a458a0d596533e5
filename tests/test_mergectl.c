/*
 * The merge control file (engine/mergectl.c): libFuzzer's format read as
 * libFuzzer reads it, ours written and read back, and files that are not
 * control files refused with the line that is wrong.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/mergectl.h"

static int parse(const char *text, MergeCtl *c, char *err, size_t errlen)
{
        return mergectl_parse(text, strlen(text), c, err, errlen);
}

Test(mergectl, reads_libfuzzers_example)
{
        /* The example in FuzzerMerge.cpp, comments and all. */
        const char *text = "3 # The number of inputs\n"
                           "1\n"
                           "file0\n"
                           "file1\n"
                           "file2\n"
                           "STARTED 0 123\n"
                           "FT 0 1 4 6 8\n"
                           "COV 0 7 8 9\n"
                           "STARTED 1 456\n"
                           "STARTED 2 567\n"
                           "FT 2 8 9\n"
                           "COV 2 11 12\n";
        MergeCtl c;
        char err[256];
        int r = parse(text, &c, err, sizeof(err));
        cr_assert_eq(r, 0, "%s", err);
        cr_expect(!c.ours, "no key: libFuzzer's");
        cr_expect_eq(c.n, 3);
        cr_expect_eq(c.m, 1);
        cr_expect_eq(c.done, 3);
        cr_expect_str_eq(c.e[1].name, "file1");
        cr_expect_eq(c.e[0].state, MERGECTL_DONE);
        cr_expect_eq(c.e[0].n_ft, 4);
        cr_expect_eq(c.e[0].ft[3], 8);
        cr_expect_eq(c.e[1].state, MERGECTL_FAILED, "STARTED without FT: it crashed");
        cr_expect_eq(c.e[1].size, 456);
        cr_expect_eq(c.e[2].n_ft, 2);
        mergectl_deinit(&c);
}

Test(mergectl, writes_what_it_reads_back)
{
        char tmpl[] = "/tmp/mergectl-XXXXXX";
        cr_assert_not_null(mkdtemp(tmpl));
        char path[64];
        snprintf(path, sizeof(path), "%s/ctl", tmpl);

        MergeCtlEntry e[3] = {
            {.name = "out/a", .size = 3, .state = MERGECTL_DONE},
            {.name = "in/b", .size = 5, .state = MERGECTL_FAILED, .failure = "timeout"},
            {.name = "in/c", .size = 9},
        };
        uint32_t ft[] = {2, 17, 4000000000u};
        e[0].ft = ft;
        e[0].n_ft = 3;
        MergeCtl c = {
            .ours = true, .key = 0xfeedc0de12345678ull, .n = 3, .m = 1, .done = 2, .e = e};
        cr_assert_eq(mergectl_write(path, &c), 0);

        FILE *f = fopen(path, "r");
        char text[512] = "";
        size_t len = fread(text, 1, sizeof(text) - 1, f);
        fclose(f);
        cr_expect_str_eq(text, "3 snapfuzz-merge 1 key=feedc0de12345678\n1\nout/a\nin/b\nin/c\n"
                               "STARTED 0 3\nFT 0 2 17 4000000000\nSTARTED 1 5 timeout\n");
        MergeCtl back;
        char err[256];
        cr_assert_eq(mergectl_parse(text, len, &back, err, sizeof(err)), 0, "%s", err);
        cr_expect(back.ours);
        cr_expect_eq(back.key, 0xfeedc0de12345678ull);
        cr_expect_eq(back.done, 2);
        cr_expect_eq(back.e[0].n_ft, 3);
        cr_expect_eq(back.e[0].ft[2], 4000000000u);
        cr_expect_eq(back.e[1].state, MERGECTL_FAILED);
        cr_expect_str_eq(back.e[1].failure, "timeout");
        cr_expect_eq(back.e[2].state, MERGECTL_NOT_RUN);
        mergectl_deinit(&back);
        unlink(path);
        rmdir(tmpl);
}

/* Files that are not control files: refused, saying where. */
Test(mergectl, refuses_what_is_not_a_control_file)
{
        static const struct {
                const char *text, *needle;
        } bad[] = {
            {"", "line 1"},
            {"hello\n", "line 1"},
            {"0\n0\n", "line 1"},
            {"-3\n0\n", "line 1"},
            {"99999999999999999999\n0\n", "line 1"},
            {"9999999\n0\nx\n", "line 1"}, /* more inputs than the file can hold */
            {"2\n3\na\nb\n", "line 2"},
            {"2\n1\na\n", "2 input names expected, 1 found"},
            {"1\n0\na\nSTARTED 1 5\n", "line 4"},            /* out of turn */
            {"1\n0\na\nFT 0 1 2\n", "line 4"},               /* FT before STARTED */
            {"2\n0\na\nb\nSTARTED 0 1\nFT 1 3\n", "line 6"}, /* another input's */
            {"1\n0\na\nSTARTED 0 1\nFT 0 1 x\n", "line 5"},
            {"1\n0\na\nSTARTED 0 1\nFT 0 99999999999\n", "line 5"}, /* over 32 bits */
            {"1\n0\na\nSTARTED 0 1\nSTARTED 1 1\n", "line 5"},      /* more than N */
            {"1\n0\na\nSTARTED 0 1\nBOGUS 0\n", "line 5"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                MergeCtl c;
                char err[256] = "";
                int r = parse(bad[i].text, &c, err, sizeof(err));
                cr_expect_eq(r, -EINVAL, "case %zu (%s) parsed", i, bad[i].text);
                cr_expect(strstr(err, bad[i].needle), "case %zu: '%s' in '%s'", i, bad[i].needle,
                          err);
        }
}

Test(mergectl, a_word_after_a_failure_is_kept_only_when_plain)
{
        MergeCtl c;
        char err[256];
        cr_assert_eq(
            parse("2\n0\na\nb\nSTARTED 0 1 crash\nSTARTED 1 1 \x1b[31mred\n", &c, err, sizeof(err)),
            0, "%s", err);
        cr_expect_str_eq(c.e[0].failure, "crash");
        cr_expect_str_eq(c.e[1].failure, "failed", "escape sequences never come back out");
        mergectl_deinit(&c);
}
