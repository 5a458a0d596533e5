/*
 * libFuzzer's dictionary syntax, checked line by line (see lfdict.h). A
 * line is trimmed of white space at both ends; then it is blank, a comment
 * (first byte '#'), or a token: it ends with '"', an opening '"' comes
 * before that, and the bytes between are printable or white space, where a
 * backslash starts "\\", "\"" or "\x" and two hex digits. Whatever comes
 * before the opening quote (a name and '=') is not looked at, as in
 * libFuzzer.
 *
 * Invariant: the file is only read; nothing is allocated but the file's
 * bytes, freed before returning.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/termsafe.h"
#include "fuzzer/lfdict.h"

#include "snapfuzz/banned.h"

/* The largest dictionary read (libFuzzer has no limit; 64 MiB of tokens
 * is far beyond any real one). */
#define LFDICT_MAX_BYTES (64u << 20)

static int lfdict_value_ok(const char *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)v[i];
                if (!isprint(c) && !isspace(c))
                        return 0;
                if (c != '\\')
                        continue;
                if (i + 1 < n && (v[i + 1] == '\\' || v[i + 1] == '"')) {
                        i++;
                        continue;
                }
                if (i + 3 < n && v[i + 1] == 'x' && isxdigit((unsigned char)v[i + 2]) &&
                    isxdigit((unsigned char)v[i + 3])) {
                        i += 3;
                        continue;
                }
                return 0;
        }
        return 1;
}

int lfdict_line_ok(const char *line, size_t len, int *ret_token)
{
        size_t l = 0, r = len;
        *ret_token = 0;
        while (l < r && isspace((unsigned char)line[l]))
                l++;
        if (l == r || line[l] == '#')
                return 1;
        while (r > l && isspace((unsigned char)line[r - 1]))
                r--;
        /* [l, r) holds at least one byte: the shortest token is "" plus
         * one, three bytes. */
        if (r - l < 3 || line[r - 1] != '"')
                return 0;
        const char *open = memchr(line + l, '"', r - 1 - l);
        if (!open)
                return 0;
        size_t vstart = (size_t)(open - line) + 1;
        if (!lfdict_value_ok(line + vstart, r - 1 - vstart))
                return 0;
        *ret_token = 1;
        return 1;
}

int lfdict_check(const char *path, size_t *ret_entries)
{
        uint8_t *text = NULL;
        size_t len = 0;
        *ret_entries = 0;
        if (fs_read_file(AT_FDCWD, path, LFDICT_MAX_BYTES, &text, &len) < 0 || len == 0) {
                free(text);
                fprintf(stderr, "ParseDictionaryFile: file does not exist or is empty\n");
                return LFDICT_BAD;
        }
        const char *p = (const char *)text, *end = p + len;
        int line_no = 0;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                int token;
                line_no++;
                if (!lfdict_line_ok(p, n, &token)) {
                        char shown[TERMSAFE_BUF];
                        char copy[512];
                        snprintf(copy, sizeof(copy), "%.*s", (int)(n < 500 ? n : 500), p);
                        fprintf(stderr, "ParseDictionaryFile: error in line %d\n\t\t%s\n", line_no,
                                termsafe_str(shown, sizeof(shown), copy, 500));
                        free(text);
                        return LFDICT_BAD;
                }
                *ret_entries += (size_t)token;
                p += n + (nl ? 1 : 0);
        }
        free(text);
        return 0;
}
