/*
 * Dictionaries (the format is described in core/dict.h). A dictionary is a
 * small set: at most MUTATOR_DICT_MAX_ENTRIES tokens of at most
 * MUTATOR_DICT_MAX_TOKEN bytes, kept in the order they were added, without
 * duplicates. The parser stops at the first malformed line and says what is
 * wrong with it in words a person can act on, because a dictionary
 * silently missing half its tokens is worse than one refused.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dict.h"
#include "core/fsutil.h"
#include "snapfuzz/mutator.h"

#include "snapfuzz/banned.h"

/* A dictionary file larger than this is not a dictionary. */
#define DICT_FILE_MAX (16u * 1024u * 1024u)

typedef struct DictToken {
        uint8_t len;
        uint8_t bytes[MUTATOR_DICT_MAX_TOKEN];
} DictToken;

struct Dict {
        DictToken *tokens;
        size_t n, cap;
};

int dict_new(Dict **ret)
{
        Dict *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

void dict_free(Dict *d)
{
        if (!d)
                return;
        free(d->tokens);
        free(d);
}

size_t dict_size(const Dict *d)
{
        return d->n;
}

const uint8_t *dict_get(const Dict *d, size_t i, size_t *ret_len)
{
        *ret_len = d->tokens[i].len;
        return d->tokens[i].bytes;
}

int dict_contains(const Dict *d, const uint8_t *tok, size_t len)
{
        for (size_t i = 0; i < d->n; i++)
                if (d->tokens[i].len == len && memcmp(d->tokens[i].bytes, tok, len) == 0)
                        return 1;
        return 0;
}

int dict_add(Dict *d, const uint8_t *tok, size_t len)
{
        if (len == 0 || len > MUTATOR_DICT_MAX_TOKEN)
                return -EINVAL;
        if (dict_contains(d, tok, len))
                return 0;
        if (d->n >= MUTATOR_DICT_MAX_ENTRIES)
                return -ENOSPC;
        if (d->n == d->cap) {
                size_t cap = d->cap ? d->cap * 2 : 64;
                DictToken *t = realloc(d->tokens, cap * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                d->tokens = t;
                d->cap = cap;
        }
        d->tokens[d->n].len = (uint8_t)len;
        memcpy(d->tokens[d->n].bytes, tok, len);
        d->n++;
        return 1;
}

/* --- Parsing -------------------------------------------------------------- */

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_name_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
}

static int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static int line_error(DictError *err, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int line_error(DictError *err, unsigned line, const char *fmt, ...)
{
        va_list ap;

        err->line = line;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A character as a person reads it in an error message. */
static const char *shown(char c, char buf[8])
{
        uint8_t b = (uint8_t)c;
        if (b > 0x20 && b < 0x7f)
                snprintf(buf, 8, "'%c'", c);
        else
                snprintf(buf, 8, "\\x%02x", b);
        return buf;
}

/* Parses one line, [p, end) with surrounding blanks already trimmed and
 * known to be neither empty nor a comment, into @tok. */
static int parse_line(const char *p, const char *end, unsigned line, uint8_t *tok, size_t *ret_len,
                      DictError *err)
{
        char c8[8];
        size_t n = 0;

        /* An optional name, as AFL writes them: name="..." or name@1="...". */
        if (*p != '"') {
                const char *name = p;
                while (p < end && is_name_char(*p))
                        p++;
                if (p == name)
                        return line_error(err, line,
                                          "expected a quoted value (\"...\") or name=\"...\", "
                                          "found %s",
                                          shown(*p, c8));
                if (p < end && *p == '@') {
                        const char *level = ++p;
                        while (p < end && *p >= '0' && *p <= '9')
                                p++;
                        if (p == level)
                                return line_error(err, line,
                                                  "expected a number after '@' in the name");
                }
                while (p < end && is_blank(*p))
                        p++;
                if (p == end || *p != '=')
                        return line_error(err, line, "expected '=' after the name %.*s, found %s",
                                          (int)(p - name), name,
                                          p == end ? "the end of the line" : shown(*p, c8));
                p++;
                while (p < end && is_blank(*p))
                        p++;
                if (p == end || *p != '"')
                        return line_error(err, line, "expected '\"' to open the value, found %s",
                                          p == end ? "the end of the line" : shown(*p, c8));
        }
        p++; /* the opening quote */

        for (;;) {
                if (p == end)
                        return line_error(err, line, "the value has no closing '\"'");
                char c = *p++;
                uint8_t b;
                if (c == '"')
                        break;
                if (c == '\\') {
                        if (p == end)
                                return line_error(err, line, "the value has no closing '\"'");
                        char e = *p++;
                        if (e == '\\' || e == '"') {
                                b = (uint8_t)e;
                        } else if (e == 'x') {
                                int hi = p < end ? hex_value(p[0]) : -1;
                                int lo = p + 1 < end ? hex_value(p[1]) : -1;
                                if (hi < 0 || lo < 0)
                                        return line_error(err, line,
                                                          "\\x must be followed by two hex digits");
                                b = (uint8_t)(hi * 16 + lo);
                                p += 2;
                        } else {
                                return line_error(err, line,
                                                  "unknown escape \\%c in the value; the escapes "
                                                  "are \\\\, \\\" and \\xNN",
                                                  (uint8_t)e > 0x20 && (uint8_t)e < 0x7f ? e : '?');
                        }
                } else if (((uint8_t)c < 0x20 && c != '\t') || (uint8_t)c >= 0x7f) {
                        return line_error(err, line,
                                          "byte 0x%02x in the value is not printable; write it "
                                          "as \\x%02x",
                                          (uint8_t)c, (uint8_t)c);
                } else {
                        b = (uint8_t)c;
                }
                if (n == MUTATOR_DICT_MAX_TOKEN)
                        return line_error(err, line,
                                          "the value is longer than %u bytes, the longest token "
                                          "snapfuzz uses",
                                          MUTATOR_DICT_MAX_TOKEN);
                tok[n++] = b;
        }
        while (p < end && is_blank(*p))
                p++;
        if (p != end)
                return line_error(err, line, "unexpected %s after the closing '\"'", shown(*p, c8));
        if (n == 0)
                return line_error(err, line, "the value is empty");
        *ret_len = n;
        return 0;
}

int dict_parse(Dict *d, const char *text, size_t len, DictError *ret_err)
{
        const char *p = text, *stop = text + len;
        unsigned line = 0;

        while (p < stop) {
                const char *nl = memchr(p, '\n', (size_t)(stop - p));
                const char *end = nl ? nl : stop;
                const char *next = nl ? nl + 1 : stop;
                uint8_t tok[MUTATOR_DICT_MAX_TOKEN];
                size_t n = 0;
                int r;

                line++;
                while (p < end && is_blank(*p))
                        p++;
                while (end > p && is_blank(end[-1]))
                        end--;
                if (p == end || *p == '#') {
                        p = next;
                        continue;
                }
                r = parse_line(p, end, line, tok, &n, ret_err);
                if (r < 0)
                        return r;
                r = dict_add(d, tok, n);
                if (r == -ENOSPC)
                        return line_error(ret_err, line,
                                          "more than %u tokens; a dictionary "
                                          "holds at most that many",
                                          MUTATOR_DICT_MAX_ENTRIES);
                if (r < 0)
                        return r;
                p = next;
        }
        return 0;
}

int dict_load(Dict *d, int dirfd, const char *path, DictError *ret_err)
{
        uint8_t *text;
        size_t len;
        int r;

        ret_err->line = 0;
        ret_err->message[0] = '\0';
        r = fs_read_file(dirfd, path, DICT_FILE_MAX, &text, &len);
        if (r < 0)
                return r;
        r = dict_parse(d, (const char *)text, len, ret_err);
        free(text);
        return r;
}

/* --- Writing -------------------------------------------------------------- */

size_t dict_quote(const uint8_t *tok, size_t len, char *buf, size_t cap)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        if (cap < 4 * len + 3)
                return 0;
        buf[o++] = '"';
        for (size_t i = 0; i < len; i++) {
                uint8_t b = tok[i];
                if (b == '"' || b == '\\') {
                        buf[o++] = '\\';
                        buf[o++] = (char)b;
                } else if (b >= 0x20 && b < 0x7f) {
                        buf[o++] = (char)b;
                } else {
                        buf[o++] = '\\';
                        buf[o++] = 'x';
                        buf[o++] = hex[b >> 4];
                        buf[o++] = hex[b & 15];
                }
        }
        buf[o++] = '"';
        buf[o] = '\0';
        return o;
}

int dict_save(const Dict *d, int dirfd, const char *name, const char *comment)
{
        size_t cap = (comment ? strlen(comment) + 3 : 0) + d->n * (4 * MUTATOR_DICT_MAX_TOKEN + 4);
        char *text = malloc(cap + 1);
        size_t o = 0;
        int r;

        if (!text)
                return -ENOMEM;
        if (comment)
                o += (size_t)snprintf(text, cap + 1, "# %s\n", comment);
        for (size_t i = 0; i < d->n; i++) {
                o += dict_quote(d->tokens[i].bytes, d->tokens[i].len, text + o, cap + 1 - o);
                text[o++] = '\n';
        }
        r = fs_write_atomic(dirfd, name, text, o);
        free(text);
        return r;
}

size_t dict_serialize(const Dict *const *dicts, size_t n, uint8_t *table, size_t cap)
{
        const uint8_t **toks;
        size_t *lens, count = 0, total = 0, used;

        for (size_t i = 0; i < n; i++)
                total += dicts[i] ? dicts[i]->n : 0;
        toks = calloc(total ? total : 1, sizeof(*toks));
        lens = calloc(total ? total : 1, sizeof(*lens));
        if (!toks || !lens) {
                free(toks);
                free(lens);
                return mutator_dict_serialize(table, cap, NULL, NULL, 0);
        }
        for (size_t i = 0; i < n; i++) {
                if (!dicts[i])
                        continue;
                for (size_t k = 0; k < dicts[i]->n; k++) {
                        const DictToken *t = &dicts[i]->tokens[k];
                        bool dup = false;
                        /* A token in an earlier dictionary is not repeated. */
                        for (size_t j = 0; j < i && !dup; j++)
                                dup = dicts[j] && dict_contains(dicts[j], t->bytes, t->len);
                        if (dup)
                                continue;
                        toks[count] = t->bytes;
                        lens[count++] = t->len;
                }
        }
        used = mutator_dict_serialize(table, cap, toks, lens, count);
        free(toks);
        free(lens);
        return used;
}
