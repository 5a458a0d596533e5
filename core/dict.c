/*
 * Dictionaries (the format is described in core/dict.h). A dictionary is a
 * small set: at most MUTATOR_DICT_MAX_ENTRIES tokens of at most
 * MUTATOR_DICT_MAX_TOKEN bytes, kept in the order they were added, without
 * duplicates. The parser reads every dictionary libFuzzer or AFL++ reads
 * (the union of their grammars) and skips a line it cannot use (too long,
 * an unknown escape, no closing quote) rather than refusing the file, as
 * those tools do; what it skipped is reported, the first line with its
 * reason, in words a person can act on, so that a dictionary never
 * silently misses tokens.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Parses one line, [p, end) with surrounding blanks already trimmed and
 * known to be neither empty nor a comment, into @tok, as the peers read
 * it: the value runs from the first '"' to the last one, which ends the
 * line; whatever comes before the first is the token's name (AFL's
 * name@level="...", libFuzzer's kw="...") and is not used. Inside the
 * value, \\, \" and \xNN are escapes and every other byte stands for
 * itself (a '"' as well). Returns 0, or -EINVAL with the reason in @err
 * when the token cannot be used. */
static int parse_line(const char *p, const char *end, unsigned line, uint8_t *tok, size_t *ret_len,
                      DictError *err)
{
        const char *open = memchr(p, '"', (size_t)(end - p));
        const char *close = end - 1;
        size_t n = 0;

        if (!open)
                return line_error(err, line, "expected a value in double quotes (\"...\")");
        if (open == close || *close != '"')
                return line_error(err, line,
                                  "the value has no closing '\"' at the end of the line");
        for (p = open + 1; p < close;) {
                char c = *p++;
                uint8_t b = (uint8_t)c;
                if (c == '\\') {
                        char e = p < close ? *p++ : '\0';
                        if (e == '\\' || e == '"') {
                                b = (uint8_t)e;
                        } else if (e == 'x') {
                                int hi = p < close ? hex_value(p[0]) : -1;
                                int lo = p + 1 < close ? hex_value(p[1]) : -1;
                                if (hi < 0 || lo < 0)
                                        return line_error(err, line,
                                                          "\\x must be followed by two hex digits");
                                b = (uint8_t)(hi * 16 + lo);
                                p += 2;
                        } else if (e == '\0' && p >= close) {
                                return line_error(err, line,
                                                  "the value ends in a lone backslash; write it "
                                                  "as \\\\");
                        } else {
                                return line_error(err, line,
                                                  "unknown escape \\%c in the value; the escapes "
                                                  "are \\\\, \\\" and \\xNN",
                                                  (uint8_t)e > 0x20 && (uint8_t)e < 0x7f ? e : '?');
                        }
                }
                if (n == MUTATOR_DICT_MAX_TOKEN)
                        return line_error(err, line,
                                          "the value is longer than %u bytes, the longest token "
                                          "snapfuzz uses",
                                          MUTATOR_DICT_MAX_TOKEN);
                tok[n++] = b;
        }
        if (n == 0)
                return line_error(err, line, "the value is empty");
        *ret_len = n;
        return 0;
}

/* Notes a line that was skipped: the first one's number and reason stay in
 * @err, later ones only count (and the first few are named). */
static void note_skipped(DictError *err, const DictError *why)
{
        if (err->skipped == 0) {
                err->line = why->line;
                memcpy(err->message, why->message, sizeof(err->message));
        } else if (err->skipped - 1 < DICT_SKIP_LINES) {
                err->more[err->skipped - 1] = why->line;
        }
        err->skipped++;
}

int dict_parse(Dict *d, const char *text, size_t len, DictError *ret_err)
{
        const char *p = text, *stop = text + len;
        unsigned line = 0;

        memset(ret_err, 0, sizeof(*ret_err));
        while (p < stop) {
                const char *nl = memchr(p, '\n', (size_t)(stop - p));
                const char *end = nl ? nl : stop;
                const char *next = nl ? nl + 1 : stop;
                uint8_t tok[MUTATOR_DICT_MAX_TOKEN];
                DictError why;
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
                r = parse_line(p, end, line, tok, &n, &why);
                if (r == 0)
                        r = dict_add(d, tok, n);
                if (r == -ENOSPC)
                        (void)line_error(&why, line,
                                         "more than %u tokens; a dictionary holds at most that "
                                         "many",
                                         MUTATOR_DICT_MAX_ENTRIES);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        note_skipped(ret_err, &why);
                p = next;
        }
        return 0;
}

size_t dict_skipped_describe(const DictError *err, char *buf, size_t cap)
{
        size_t o = 0;
        unsigned named = err->skipped - 1 < DICT_SKIP_LINES ? err->skipped - 1 : DICT_SKIP_LINES;

        if (cap == 0 || err->skipped == 0)
                return 0;
        if (err->line == 0) { /* a directory's files */
                o = (size_t)snprintf(buf, cap, " %s; the token is skipped", err->message);
                if (err->skipped > 1 && o < cap)
                        o += (size_t)snprintf(buf + o, cap - o, " (%u more files skipped)",
                                              err->skipped - 1);
                return o < cap ? o : cap - 1;
        }
        o += (size_t)snprintf(buf, cap, "%u: %s; the token is skipped", err->line, err->message);
        if (err->skipped > 1 && o < cap)
                o += (size_t)snprintf(buf + o, cap - o,
                                      " (%u more line%s skipped:", err->skipped - 1,
                                      err->skipped > 2 ? "s" : "");
        for (unsigned i = 0; i < named && o < cap; i++)
                o += (size_t)snprintf(buf + o, cap - o, " %u", err->more[i]);
        if (err->skipped > 1 && o < cap)
                o += (size_t)snprintf(buf + o, cap - o, "%s)",
                                      err->skipped - 1 > named ? " ..." : "");
        return o < cap ? o : cap - 1;
}

/* Notes a skipped file of a dictionary directory (no line number). */
static void note_skipped_file(DictError *err, const char *name, const char *why)
{
        DictError e = {.line = 0};
        snprintf(e.message, sizeof(e.message), "%s: %s", name, why);
        if (err->skipped == 0)
                memcpy(err->message, e.message, sizeof(err->message));
        err->skipped++;
}

static int skip_hidden(const struct dirent *e)
{
        return e->d_name[0] != '.';
}

/* AFL++'s other form of a dictionary: a directory holding one raw token
 * per file. Files are read in name order, so that the table is the same
 * on every run; empty files and what is not a regular file are ignored,
 * as AFL++ does. */
static int dict_load_dir(Dict *d, int dirfd, const char *path, DictError *err)
{
        struct dirent **names = NULL;
        int fd, n, r = 0;

        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = scandirat(fd, ".", &names, skip_hidden, alphasort);
        if (n < 0) {
                r = -errno;
                goto out_close;
        }
        for (int i = 0; i < n && r != -ENOMEM; i++) {
                uint8_t *tok = NULL;
                size_t len = 0;
                r = fs_read_file(fd, names[i]->d_name, MUTATOR_DICT_MAX_TOKEN, &tok, &len);
                if (r == -EFBIG)
                        note_skipped_file(err, names[i]->d_name,
                                          "the token is longer than 64 bytes, the longest token "
                                          "snapfuzz uses");
                else if (r == 0 && len > 0)
                        r = dict_add(d, tok, len);
                if (r == -ENOSPC)
                        note_skipped_file(err, names[i]->d_name,
                                          "more tokens than a dictionary holds");
                free(tok);
        }
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
        r = r == -ENOMEM ? r : 0;
out_close:
        close(fd);
        return r;
}

int dict_load(Dict *d, int dirfd, const char *path, DictError *ret_err)
{
        uint8_t *text;
        size_t len;
        int r;

        memset(ret_err, 0, sizeof(*ret_err));
        r = fs_read_file(dirfd, path, DICT_FILE_MAX, &text, &len);
        if (r == -EISDIR)
                return dict_load_dir(d, dirfd, path, ret_err);
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
