/*
 * kvparse (see kvparse.h). Lines are "key=value"; blank lines and lines
 * starting with '#' are skipped; keys are letters, digits and '_'; a
 * value "@N" is replaced by a copy of entry N's value.
 *
 * This file carries one bug on purpose, for the CI recipes' example: a
 * reference "@N" is not checked against the entries parsed so far, so
 * "a=@7" copies an entry that was never filled (a null pointer).
 * docs/ci.md shows the fix.
 */
#include <stdlib.h>
#include <string.h>

#include "kvparse.h"

/* Whether @text is a reference "@N": 1 (N in *@ret_n), 0, or -1 for one
 * beyond the table. */
static int kv_reference(const char *text, unsigned long *ret_n)
{
        char *end;
        if (text[0] != '@' || text[1] < '0' || text[1] > '9')
                return 0;
        *ret_n = strtoul(text + 1, &end, 10);
        return *end == '\0' && *ret_n < KV_MAX_ENTRIES ? 1 : -1;
}

static int key_valid(const char *key, size_t len)
{
        if (len == 0 || len >= KV_MAX_KEY)
                return 0;
        for (size_t i = 0; i < len; i++) {
                char c = key[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_'))
                        return 0;
        }
        return 1;
}

/* One line "key=value" of @len bytes into the next entry. 0, or -1. */
static int kv_line(struct kv_doc *doc, const char *line, size_t len)
{
        const char *eq = memchr(line, '=', len);
        unsigned long n;

        if (!eq || !key_valid(line, (size_t)(eq - line)) || doc->count == KV_MAX_ENTRIES)
                return -1;
        char *value = strndup(eq + 1, len - (size_t)(eq - line) - 1);
        if (!value)
                return -1;
        int ref = kv_reference(value, &n);
        if (ref == 1) {
                /* The bug: n is not checked against doc->count. */
                char *copy = strdup(doc->values[n]);
                free(value);
                value = copy;
        }
        if (ref < 0 || !value) {
                free(value);
                return -1;
        }
        memcpy(doc->keys[doc->count], line, (size_t)(eq - line));
        doc->keys[doc->count][eq - line] = '\0';
        doc->values[doc->count++] = value;
        return 0;
}

int kv_parse(const uint8_t *data, size_t len, struct kv_doc *doc)
{
        const char *p = (const char *)data, *end = p + len;

        memset(doc, 0, sizeof(*doc));
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                if (n > 0 && p[0] != '#' && kv_line(doc, p, n) < 0)
                        return -1;
                p += n + 1;
        }
        return (int)doc->count;
}

void kv_free(struct kv_doc *doc)
{
        for (size_t i = 0; i < doc->count; i++)
                free(doc->values[i]);
        doc->count = 0;
}
