/*
 * The drop-in's -dict check (fuzzer/lfdict.c) accepts and refuses the
 * lines libFuzzer's ParseDictionaryFile does, and names the first bad line.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzer/lfdict.h"

static int ok(const char *line, int *token)
{
        return lfdict_line_ok(line, strlen(line), token);
}

Test(lfdict, lines_libfuzzer_accepts)
{
        int t;
        cr_assert(ok("", &t) && !t);
        cr_assert(ok("   \t", &t) && !t);
        cr_assert(ok("# a comment \"", &t) && !t);
        cr_assert(ok("  # indented comment", &t) && !t);
        cr_assert(ok("\"abc\"", &t) && t);
        cr_assert(ok("kw1=\"abc\"", &t) && t);
        cr_assert(ok("  \"a b\"  ", &t) && t);
        cr_assert(ok("\"\\x41\\x42\"", &t) && t);
        cr_assert(ok("\"quote \\\" and backslash \\\\\"", &t) && t);
        cr_assert(ok("\"x\"", &t) && t);
}

Test(lfdict, lines_libfuzzer_refuses)
{
        int t;
        cr_assert(!ok("abc", &t));
        cr_assert(!ok("\"abc", &t));
        cr_assert(!ok("\"\"", &t), "an empty token is refused");
        cr_assert(!ok("\"\\q\"", &t), "unknown escape");
        cr_assert(!ok("\"\\x4\"", &t), "short hex escape");
        cr_assert(!ok("\"a\x01b\"", &t), "control byte");
        cr_assert(!ok("name=abc\"", &t));
}

static char *write_tmp(const char *text)
{
        char *p = strdup("/tmp/lfdict-XXXXXX");
        int fd = mkstemp(p);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return p;
}

Test(lfdict, counts_tokens_and_names_the_bad_line, .init = cr_redirect_stderr)
{
        size_t n = 99;
        char *good = write_tmp("# tokens\nkw1=\"abc\"\n\n\"BUG!\"\n\"\\x41\"\n");
        cr_assert_eq(lfdict_check(good, &n), 0);
        cr_assert_eq(n, 3);
        char *bad = write_tmp("\"ok\"\n# fine\nnot a token\n\"ok\"\n");
        cr_assert_eq(lfdict_check(bad, &n), LFDICT_BAD);
        fflush(stderr);
        cr_assert_stderr_eq_str("ParseDictionaryFile: error in line 3\n\t\tnot a token\n");
        unlink(good);
        unlink(bad);
        free(good);
        free(bad);
}

Test(lfdict, missing_or_empty_file, .init = cr_redirect_stderr)
{
        size_t n;
        char *empty = write_tmp("");
        cr_assert_eq(lfdict_check(empty, &n), LFDICT_BAD);
        cr_assert_eq(lfdict_check("/nonexistent/dict", &n), LFDICT_BAD);
        fflush(stderr);
        cr_assert_stderr_eq_str("ParseDictionaryFile: file does not exist or is empty\n"
                                "ParseDictionaryFile: file does not exist or is empty\n");
        unlink(empty);
        free(empty);
}
