/*
 * Writes the XML by hand into a growing buffer: the document is small and
 * flat, and every value goes through xml_escape. Invariant: the text is
 * well-formed XML 1.0 whatever crash.json held, because engine/crashreport.c
 * hands over valid UTF-8 without control characters (the only characters
 * XML 1.0 cannot carry at all) and xml_escape escapes the five markup
 * characters in both text and attribute values.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/junit.h"

#include "snapfuzz/banned.h"

typedef struct Buf {
        char *data;
        size_t len, cap;
        bool oom;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n)
{
        if (b->oom)
                return;
        if (b->len + n + 1 > b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                while (cap < b->len + n + 1)
                        cap *= 2;
                char *d = realloc(b->data, cap);
                if (!d) {
                        b->oom = true;
                        return;
                }
                b->data = d;
                b->cap = cap;
        }
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = 0;
}

static void buf_str(Buf *b, const char *s)
{
        buf_add(b, s, strlen(s));
}

/* Markup-free text (numbers, fixed words) by printf. */
static void buf_fmt(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_fmt(Buf *b, const char *fmt, ...)
{
        char tmp[256];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n > 0)
                buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* @s with &, <, >, " and ' escaped: fit for text and attribute values. */
static void xml_escape(Buf *b, const char *s)
{
        for (; *s; s++) {
                switch (*s) {
                case '&':
                        buf_str(b, "&amp;");
                        break;
                case '<':
                        buf_str(b, "&lt;");
                        break;
                case '>':
                        buf_str(b, "&gt;");
                        break;
                case '"':
                        buf_str(b, "&quot;");
                        break;
                case '\'':
                        buf_str(b, "&apos;");
                        break;
                default:
                        buf_add(b, s, 1);
                }
        }
}

/* name="value" with the value escaped. */
static void xml_attr(Buf *b, const char *name, const char *value)
{
        buf_fmt(b, " %s=\"", name);
        xml_escape(b, value);
        buf_str(b, "\"");
}

/* The failure's body: every fact a person needs to act, one per line. */
static void failure_body(Buf *b, const CrashEntry *e)
{
        const char *lines[][2] = {
            {"kind: ", e->kind},           {"rule: ", e->rule->id},
            {"message: ", e->message},     {"signature: ", e->signature},
            {"reproduce: ", e->reproduce}, {"input: ", e->input_path},
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
                buf_str(b, lines[i][0]);
                xml_escape(b, lines[i][1]);
                buf_str(b, "\n");
        }
        if (e->minimized_path) {
                buf_str(b, "minimized: ");
                xml_escape(b, e->minimized_path);
                buf_fmt(b, " (%" PRId64 " bytes)\n", e->minimized_len);
        }
        if (e->state_dependent)
                buf_fmt(b,
                        "state-dependent: crashes after the %" PRId64
                        " inputs in sequence/, run in order in one process\n",
                        e->sequence_length);
        buf_fmt(b, "seen: %" PRId64 " time%s\n", e->count, e->count == 1 ? "" : "s");
        if (e->n_frames)
                buf_str(b, "stack:\n");
        for (size_t i = 0; i < e->n_frames; i++) {
                const CrashFrame *f = &e->frames[i];
                buf_fmt(b, "  #%zu ", i);
                xml_escape(b, f->function ? f->function : "??");
                if (f->file) {
                        buf_str(b, " at ");
                        char place[PATH_MAX + 32];
                        crashreport_frame_place(f, place, sizeof(place));
                        xml_escape(b, place);
                }
                if (f->module) {
                        buf_str(b, " (");
                        xml_escape(b, f->module);
                        buf_str(b, "+");
                        xml_escape(b, f->offset ? f->offset : "?");
                        buf_str(b, ")");
                }
                buf_str(b, "\n");
        }
}

static void testcase(Buf *b, const CrashEntry *e)
{
        const CrashFrame *w = crashreport_where(e);
        char name[1024];
        int n = snprintf(name, sizeof(name), "crash %s: %s", e->id, e->rule->id);
        char place[PATH_MAX + 32];
        if (w && w->file && n > 0 && (size_t)n < sizeof(name)) {
                crashreport_frame_place(w, place, sizeof(place));
                snprintf(name + n, sizeof(name) - (size_t)n, " in %s (%s)",
                         w->function ? w->function : "??", place);
        }
        char classname[96];
        snprintf(classname, sizeof(classname), "snapfuzz.%s", e->kind);
        buf_str(b, "    <testcase");
        xml_attr(b, "classname", classname);
        xml_attr(b, "name", name);
        if (w && w->rel)
                xml_attr(b, "file", w->rel);
        if (w && w->rel && w->line > 0)
                buf_fmt(b, " line=\"%ld\"", w->line);
        buf_str(b, ">\n      <failure");
        xml_attr(b, "type", e->rule->id);
        xml_attr(b, "message", e->message);
        buf_str(b, ">");
        failure_body(b, e);
        buf_str(b, "</failure>\n    </testcase>\n");
}

int junit_format(const CrashReport *r, char **ret, size_t *ret_len)
{
        Buf b = {0};
        size_t tests = r->n ? r->n : 1;
        buf_str(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        buf_fmt(&b, "<testsuites name=\"snapfuzz\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n",
                tests, r->n);
        buf_str(&b, "  <testsuite");
        xml_attr(&b, "name", "snapfuzz");
        buf_fmt(&b, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", tests, r->n);
        buf_str(&b, "    <properties>\n      <property name=\"outputDirectory\"");
        xml_attr(&b, "value", r->out_dir);
        buf_str(&b, "/>\n      <property name=\"sourceRoot\"");
        xml_attr(&b, "value", r->source_root);
        buf_str(&b, "/>\n    </properties>\n");
        for (size_t i = 0; i < r->n; i++)
                testcase(&b, &r->entries[i]);
        if (r->n == 0) {
                buf_str(&b, "    <testcase classname=\"snapfuzz\"");
                char name[PATH_MAX + 64];
                snprintf(name, sizeof(name), "no crash found in %s", r->out_dir);
                xml_attr(&b, "name", name);
                buf_str(&b, "/>\n");
        }
        buf_str(&b, "  </testsuite>\n</testsuites>\n");
        if (b.oom) {
                free(b.data);
                return -ENOMEM;
        }
        *ret = b.data;
        *ret_len = b.len;
        return 0;
}
