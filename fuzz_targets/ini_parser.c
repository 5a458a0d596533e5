/*
 * A parser for INI configuration files into a small table of
 * (section, key, value) entries.
 *
 *   line      blank, comment, section header or key/value pair; lines end
 *             in '\n', a '\r' before it is dropped, the last line may lack it
 *   comment   ';' or '#' as the first non-blank byte
 *   section   '[' name ']', name 1..31 bytes of [A-Za-z0-9_.-]
 *   pair      key '=' value, key like a section name; blanks around both
 *             are trimmed; a pair before the first section is an error
 *   value     up to 127 bytes; a value ending in '\' continues on the next
 *             line (the backslash is dropped), as in many shell-style files
 *   limits    32 entries; a repeated key in a section replaces the value
 *
 * Planted bug: the continuation code asserts that a next line exists, so a
 * value that ends in a backslash on the last line of the file aborts the
 * parser (SIGABRT from assert()) instead of being rejected as malformed.
 * Any other input is parsed or rejected.
 *
 * Crashing input (hex): 5b735d0a 6b3d5c   ("[s]\nk=\")
 *
 * Built with -DSNAPFUZZ_NO_PLANTED_BUG, the bug is replaced by the safe
 * code, for benchmarks (bench/) that must not stop at the first crash.
 */
#undef NDEBUG /* The planted bug is an assert(); keep it in every build. */
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define INI_NAME_MAX 31
#define INI_VALUE_MAX 127
#define INI_MAX_ENTRIES 32

struct ini_entry {
        char section[INI_NAME_MAX + 1];
        char key[INI_NAME_MAX + 1];
        char value[INI_VALUE_MAX + 1];
        size_t value_len;
};

struct ini_doc {
        struct ini_entry entries[INI_MAX_ENTRIES];
        size_t n_entries;
        char section[INI_NAME_MAX + 1]; /* the current section; empty before the first */
        unsigned int lineno;
};

struct ini_reader {
        const uint8_t *buf;
        size_t len;
        size_t pos;
};

/* Returns the next line, without its '\n' and blanks at either end, or false at the end. */
static bool ini_next_line(struct ini_reader *rd, const uint8_t **ret_line, size_t *ret_len)
{
        const uint8_t *line;
        size_t len = 0;

        if (rd->pos >= rd->len)
                return false;
        line = rd->buf + rd->pos;
        while (rd->pos + len < rd->len && line[len] != '\n')
                len++;
        rd->pos += len;
        if (rd->pos < rd->len)
                rd->pos++; /* the '\n' */

        /* A '\r' before the '\n' is a blank here: both ends are trimmed alike. */
        while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
                line++;
                len--;
        }
        while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
                len--;
        *ret_line = line;
        *ret_len = len;
        return true;
}

static bool ini_is_name_char(uint8_t c)
{
        if (c >= 'a' && c <= 'z')
                return true;
        if (c >= 'A' && c <= 'Z')
                return true;
        if (c >= '0' && c <= '9')
                return true;
        return c == '_' || c == '.' || c == '-';
}

/* Copies a valid name of @len bytes into @out (INI_NAME_MAX + 1 bytes). */
static int ini_copy_name(char *out, const uint8_t *name, size_t len)
{
        if (len == 0 || len > INI_NAME_MAX)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (!ini_is_name_char(name[i]))
                        return -1;
                out[i] = (char)name[i];
        }
        out[len] = '\0';
        return 0;
}

static int ini_append(struct ini_entry *e, const uint8_t *v, size_t len)
{
        if (len > INI_VALUE_MAX - e->value_len)
                return -1;
        memcpy(e->value + e->value_len, v, len);
        e->value_len += len;
        e->value[e->value_len] = '\0';
        return 0;
}

/* Finds the entry for (current section, @key), or claims a new one. */
static struct ini_entry *ini_entry_for(struct ini_doc *doc, const char *key)
{
        struct ini_entry *e;

        for (size_t i = 0; i < doc->n_entries; i++) {
                e = &doc->entries[i];
                if (strcmp(e->section, doc->section) == 0 && strcmp(e->key, key) == 0) {
                        e->value_len = 0;
                        e->value[0] = '\0';
                        return e;
                }
        }
        if (doc->n_entries == INI_MAX_ENTRIES)
                return NULL;
        e = &doc->entries[doc->n_entries++];
        memcpy(e->section, doc->section, sizeof(e->section));
        memcpy(e->key, key, INI_NAME_MAX + 1);
        e->value_len = 0;
        e->value[0] = '\0';
        return e;
}

static int ini_parse_pair(struct ini_doc *doc, struct ini_reader *rd, const uint8_t *line,
                          size_t len)
{
        char key[INI_NAME_MAX + 1];
        const uint8_t *eq, *v;
        struct ini_entry *e;
        size_t klen, vlen;

        /* Checked first: nothing on a line outside a section is worth parsing. */
        if (doc->section[0] == '\0')
                return -1;
        eq = memchr(line, '=', len);
        if (!eq)
                return -1;
        klen = (size_t)(eq - line);
        while (klen > 0 && (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
                klen--;
        if (ini_copy_name(key, line, klen) < 0)
                return -1;

        v = eq + 1;
        vlen = len - (size_t)(v - line);
        while (vlen > 0 && (v[0] == ' ' || v[0] == '\t')) {
                v++;
                vlen--;
        }

        e = ini_entry_for(doc, key);
        if (!e)
                return -1;
        for (;;) {
                bool more = vlen > 0 && v[vlen - 1] == '\\';
                bool have_next;

                if (ini_append(e, v, more ? vlen - 1 : vlen) < 0)
                        return -1;
                if (!more)
                        return 0;
                have_next = ini_next_line(rd, &v, &vlen);
#ifndef SNAPFUZZ_NO_PLANTED_BUG
                /* The planted bug: a continuation on the last line is not an error here. */
                assert(have_next && "continuation line");
#else
                if (!have_next)
                        return -1;
#endif
                doc->lineno++;
        }
}

static int ini_parse(struct ini_doc *doc, const uint8_t *buf, size_t len)
{
        struct ini_reader rd = {.buf = buf, .len = len, .pos = 0};
        const uint8_t *line;
        size_t llen;

        while (ini_next_line(&rd, &line, &llen)) {
                doc->lineno++;
                if (llen == 0)
                        continue;
                if (line[0] == ';' || line[0] == '#')
                        continue;
                if (line[0] == '[') {
                        if (line[llen - 1] != ']')
                                return -1;
                        if (ini_copy_name(doc->section, line + 1, llen - 2) < 0)
                                return -1;
                        continue;
                }
                if (ini_parse_pair(doc, &rd, line, llen) < 0)
                        return -1;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * The table of the last call, exported as a library would hand it to its
 * caller; that also keeps the compiler from discarding the parse as dead
 * code. Every call starts it afresh and nothing here reads what an earlier
 * call left in it.
 */
extern struct ini_doc ini_last_doc;
struct ini_doc ini_last_doc;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct ini_doc *doc = &ini_last_doc;

        doc->n_entries = 0;
        doc->section[0] = '\0';
        doc->lineno = 0;
        /* A malformed file is an ordinary outcome, and half-valid inputs must stay in the corpus.
         */
        (void)ini_parse(doc, data, size);
        return 0;
}
