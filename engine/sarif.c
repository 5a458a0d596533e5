/*
 * Builds the SARIF log with cJSON. Shape (SARIF 2.1.0, the parts GitHub
 * code scanning reads): one run; tool.driver with the rules the results
 * use, in the order of first use (ruleIndex points into them); results in
 * crash id order, each with ruleId, level, a message that ends with the
 * reproduce command and the minimized input's path, one location (the
 * top target frame under the source root; else the first frame with a
 * file; else the target), a code flow of the stack from the outermost
 * frame to the innermost, partialFingerprints from the signature, and the
 * crash's facts in properties. Paths under the source root are relative
 * with uriBaseId SRCROOT, which originalUriBaseIds maps to the absolute
 * root; other paths are absolute file: URIs. Every string comes from
 * engine/crashreport.c, already valid UTF-8; URIs are percent-encoded
 * here. Any allocation failure makes the whole log fail (-ENOMEM), never
 * a log with parts missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine/sarif.h"

#include "snapfuzz/banned.h"

#ifndef SNAPFUZZ_VERSION
#define SNAPFUZZ_VERSION "unknown"
#endif

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define SARIF_ROOT_ID "SRCROOT"
/* The key of the fingerprint code scanning deduplicates results by. */
#define SARIF_FINGERPRINT "snapfuzzCrashSignature/v1"

/* A builder: every helper does nothing once an allocation has failed. */
typedef struct Sb {
        bool oom;
} Sb;

static cJSON *sb_check(Sb *b, cJSON *j)
{
        if (!j)
                b->oom = true;
        return j;
}

static cJSON *sb_obj(Sb *b, cJSON *parent, const char *key)
{
        return b->oom ? NULL : sb_check(b, cJSON_AddObjectToObject(parent, key));
}

static cJSON *sb_arr(Sb *b, cJSON *parent, const char *key)
{
        return b->oom ? NULL : sb_check(b, cJSON_AddArrayToObject(parent, key));
}

static void sb_str(Sb *b, cJSON *parent, const char *key, const char *value)
{
        if (!b->oom)
                sb_check(b, cJSON_AddStringToObject(parent, key, value));
}

static void sb_num(Sb *b, cJSON *parent, const char *key, double value)
{
        if (!b->oom)
                sb_check(b, cJSON_AddNumberToObject(parent, key, value));
}

static void sb_bool(Sb *b, cJSON *parent, const char *key, bool value)
{
        if (!b->oom)
                sb_check(b, cJSON_AddBoolToObject(parent, key, value));
}

/* {"text": @text} under @key. */
static void sb_text(Sb *b, cJSON *parent, const char *key, const char *text)
{
        sb_str(b, sb_obj(b, parent, key), "text", text);
}

/* A new object appended to @array. */
static cJSON *sb_push(Sb *b, cJSON *array)
{
        if (b->oom)
                return NULL;
        cJSON *o = sb_check(b, cJSON_CreateObject());
        if (o)
                cJSON_AddItemToArray(array, o);
        return o;
}

char *sarif_uri_escape(const char *s)
{
        static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-._~/!$&'()*+,;=:@";
        char *out = malloc(strlen(s) * 3 + 1), *o = out;
        if (!out)
                return NULL;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (strchr(keep, *p)) {
                        *o++ = (char)*p;
                } else {
                        snprintf(o, 4, "%%%02X", *p);
                        o += 3;
                }
        }
        *o = 0;
        return out;
}

/* artifactLocation of @path: relative to SRCROOT when @rel is given,
 * else an absolute file: URI (or the path as a relative reference when
 * it is not absolute). */
static void sb_artifact(Sb *b, cJSON *parent, const char *path, const char *rel)
{
        cJSON *a = sb_obj(b, parent, "artifactLocation");
        char *uri = sarif_uri_escape(rel ? rel : path);
        if (!uri) {
                b->oom = true;
                return;
        }
        if (rel || path[0] != '/') {
                sb_str(b, a, "uri", uri);
                if (rel)
                        sb_str(b, a, "uriBaseId", SARIF_ROOT_ID);
        } else {
                size_t n = strlen(uri) + 8;
                char *abs = malloc(n);
                if (abs) {
                        snprintf(abs, n, "file://%s", uri);
                        sb_str(b, a, "uri", abs);
                } else {
                        b->oom = true;
                }
                free(abs);
        }
        free(uri);
}

/* "#N function at file:line (module+offset)" for frame @i. */
static void frame_text(const CrashFrame *f, size_t i, char *buf, size_t cap)
{
        int n = snprintf(buf, cap, "#%zu %s", i, f->function ? f->function : "??");
        char place[PATH_MAX + 32];
        crashreport_frame_place(f, place, sizeof(place));
        if (f->file && n >= 0 && (size_t)n < cap)
                n += snprintf(buf + n, cap - (size_t)n, " at %s", place);
        if (f->module && n >= 0 && (size_t)n < cap)
                snprintf(buf + n, cap - (size_t)n, " (%s+%s)", f->module,
                         f->offset ? f->offset : "?");
}

/* A location object for frame @f (its file and line when known, its
 * function as a logical location) with @text as its message. */
static void sb_frame_location(Sb *b, cJSON *loc, const CrashFrame *f, const char *text)
{
        if (f->file) {
                cJSON *pl = sb_obj(b, loc, "physicalLocation");
                sb_artifact(b, pl, f->file, f->rel);
                if (f->line > 0)
                        sb_num(b, sb_obj(b, pl, "region"), "startLine", (double)f->line);
        }
        if (f->function) {
                cJSON *ll = sb_push(b, sb_arr(b, loc, "logicalLocations"));
                sb_str(b, ll, "name", f->function);
                sb_str(b, ll, "kind", "function");
        }
        if (text)
                sb_text(b, loc, "message", text);
}

/* The stack as one code flow, outermost frame first (the order calls
 * were made), the frame the result points at marked essential. */
static void sb_code_flow(Sb *b, cJSON *result, const CrashEntry *e)
{
        if (e->n_frames == 0)
                return;
        const CrashFrame *where = crashreport_where(e);
        cJSON *flow = sb_push(b, sb_arr(b, result, "codeFlows"));
        sb_text(b, flow, "message", "The stack of the crash, from the outermost call inward.");
        cJSON *tf = sb_push(b, sb_arr(b, flow, "threadFlows"));
        cJSON *locs = sb_arr(b, tf, "locations");
        for (size_t k = e->n_frames; k-- > 0;) {
                const CrashFrame *f = &e->frames[k];
                char text[1024];
                frame_text(f, k, text, sizeof(text));
                cJSON *tfl = sb_push(b, locs);
                sb_frame_location(b, sb_obj(b, tfl, "location"), f, text);
                sb_num(b, tfl, "executionOrder", (double)(e->n_frames - k));
                sb_str(b, tfl, "importance",
                       f == where   ? "essential"
                       : f->runtime ? "unimportant"
                                    : "important");
        }
}

/* The result's message: what, where, how often, how to replay it. */
static char *result_message(const CrashEntry *e)
{
        const CrashFrame *w = crashreport_where(e);
        char where[1024] = "", state[512] = "", min[PATH_MAX + 64] = "";
        char place[PATH_MAX + 32];
        if (w && w->file) {
                crashreport_frame_place(w, place, sizeof(place));
                snprintf(where, sizeof(where), " In %s at %s.", w->function ? w->function : "??",
                         place);
        }
        if (e->state_dependent)
                snprintf(state, sizeof(state),
                         " State-dependent: it crashes only after the %" PRId64
                         " inputs in crashes/%s/sequence/ run in order in one process, which "
                         "the reproduce command does.",
                         e->sequence_length, e->id);
        if (e->minimized_path)
                snprintf(min, sizeof(min), " Minimized input: %s (%" PRId64 " bytes).",
                         e->minimized_path, e->minimized_len);
        size_t cap = strlen(e->message) + strlen(e->reproduce) + strlen(e->input_path) +
                     strlen(e->rule->brief) + sizeof(where) + sizeof(state) + sizeof(min) + 256;
        char *text = malloc(cap);
        if (!text)
                return NULL;
        /* The brief ends with a period; the stored message may not. */
        size_t ml = strlen(e->message);
        /* The command last, so that no punctuation runs into it. */
        snprintf(text, cap,
                 "%s %s%s%s Crash %s, seen %" PRId64 " time%s. Input: %s (%" PRId64
                 " bytes).%s%s Reproduce with: %s",
                 e->rule->brief, e->message, ml && e->message[ml - 1] == '.' ? "" : ".", where,
                 e->id, e->count, e->count == 1 ? "" : "s", e->input_path, e->input_len, min, state,
                 e->reproduce);
        return text;
}

/* The crash's facts, for tools that read more than the message. */
static void sb_properties(Sb *b, cJSON *result, const CrashEntry *e)
{
        cJSON *p = sb_obj(b, result, "properties");
        sb_str(b, p, "crashId", e->id);
        sb_str(b, p, "kind", e->kind);
        sb_str(b, p, "signature", e->signature);
        sb_str(b, p, "message", e->message);
        sb_num(b, p, "count", (double)e->count);
        sb_str(b, p, "firstSeen", e->first_seen);
        sb_str(b, p, "lastSeen", e->last_seen);
        sb_bool(b, p, "reproduced", e->reproduced);
        sb_bool(b, p, "stateDependent", e->state_dependent);
        if (e->state_dependent)
                sb_num(b, p, "sequenceLength", (double)e->sequence_length);
        sb_str(b, p, "reproduce", e->reproduce);
        sb_str(b, p, "input", e->input_path);
        sb_num(b, p, "inputLength", (double)e->input_len);
        if (e->minimized_path) {
                sb_str(b, p, "minimizedInput", e->minimized_path);
                sb_num(b, p, "minimizedLength", (double)e->minimized_len);
        }
        sb_str(b, p, "target", e->target);
}

/* The index of @rule in @rules, appended when new. */
static int rule_index(Sb *b, cJSON *rules, const CrashRule **used, size_t *n_used,
                      const CrashRule *rule)
{
        for (size_t i = 0; i < *n_used; i++)
                if (used[i] == rule)
                        return (int)i;
        used[*n_used] = rule;
        cJSON *r = sb_push(b, rules);
        sb_str(b, r, "id", rule->id);
        sb_str(b, r, "name", rule->name);
        sb_text(b, r, "shortDescription", rule->brief);
        sb_text(b, r, "fullDescription", rule->full);
        sb_text(b, r, "help", rule->help);
        sb_str(b, sb_obj(b, r, "defaultConfiguration"), "level", rule->level);
        cJSON *p = sb_obj(b, r, "properties");
        cJSON *tags = sb_arr(b, p, "tags");
        if (!b->oom) {
                const char *t[] = {"security", "fuzzing", "snapfuzz"};
                for (size_t i = 0; i < 3 && !b->oom; i++) {
                        cJSON *s = sb_check(b, cJSON_CreateString(t[i]));
                        if (s)
                                cJSON_AddItemToArray(tags, s);
                }
        }
        sb_str(b, p, "precision", "very-high");
        sb_str(b, p, "problem.severity", rule->level);
        sb_str(b, p, "security-severity", rule->severity);
        return (int)(*n_used)++;
}

static void sb_result(Sb *b, cJSON *results, cJSON *rules, const CrashRule **used, size_t *n_used,
                      const CrashEntry *e)
{
        cJSON *res = sb_push(b, results);
        int idx = rule_index(b, rules, used, n_used, e->rule);
        sb_str(b, res, "ruleId", e->rule->id);
        sb_num(b, res, "ruleIndex", idx);
        sb_str(b, res, "level", e->rule->level);
        char *text = result_message(e);
        if (!text)
                b->oom = true;
        else
                sb_text(b, res, "message", text);
        free(text);
        cJSON *loc = sb_push(b, sb_arr(b, res, "locations"));
        const CrashFrame *w = crashreport_where(e);
        if (w) {
                sb_frame_location(b, loc, w, NULL);
        } else {
                /* No frame has a file: the target is where it happened. */
                sb_artifact(b, sb_obj(b, loc, "physicalLocation"), e->target, NULL);
        }
        sb_code_flow(b, res, e);
        char fp[32];
        snprintf(fp, sizeof(fp), "%016" PRIx64, e->sig_hash);
        sb_str(b, sb_obj(b, res, "partialFingerprints"), SARIF_FINGERPRINT, fp);
        sb_properties(b, res, e);
}

/* tool, originalUriBaseIds and invocations; returns tool.driver.rules. */
static cJSON *sb_run_header(Sb *b, cJSON *run, const CrashReport *r)
{
        cJSON *driver = sb_obj(b, sb_obj(b, run, "tool"), "driver");
        cJSON *rules;
        sb_str(b, driver, "name", "snapfuzz");
        sb_str(b, driver, "version", SNAPFUZZ_VERSION);
        sb_str(b, driver, "semanticVersion", SNAPFUZZ_VERSION);
        rules = sb_arr(b, driver, "rules");
        char *root = sarif_uri_escape(r->source_root);
        if (!root) {
                b->oom = true;
                return NULL;
        }
        size_t n = strlen(root) + 16;
        char *uri = malloc(n);
        if (uri) {
                /* A base URI ends with '/', or relative paths replace its
                 * last component. */
                snprintf(uri, n, "file://%s%s", root, strcmp(root, "/") == 0 ? "" : "/");
                cJSON *base = sb_obj(b, sb_obj(b, run, "originalUriBaseIds"), SARIF_ROOT_ID);
                sb_str(b, base, "uri", uri);
                sb_text(b, base, "description", "The source root (--source-root).");
        } else {
                b->oom = true;
        }
        free(uri);
        free(root);
        cJSON *inv = sb_push(b, sb_arr(b, run, "invocations"));
        sb_bool(b, inv, "executionSuccessful", true);
        sb_str(b, sb_obj(b, inv, "properties"), "outputDirectory", r->out_dir);
        return rules;
}

int sarif_format(const CrashReport *r, char **ret, size_t *ret_len)
{
        Sb b = {0};
        cJSON *log = sb_check(&b, cJSON_CreateObject());
        const CrashRule **used = calloc(r->n + 1, sizeof(const CrashRule *));
        size_t n_used = 0;
        if (!used)
                b.oom = true;
        sb_str(&b, log, "$schema", SARIF_SCHEMA);
        sb_str(&b, log, "version", "2.1.0");
        cJSON *run = sb_push(&b, sb_arr(&b, log, "runs"));
        cJSON *rules = sb_run_header(&b, run, r);
        cJSON *results = sb_arr(&b, run, "results");
        for (size_t i = 0; i < r->n && !b.oom; i++)
                sb_result(&b, results, rules, used, &n_used, &r->entries[i]);
        char *text = b.oom ? NULL : cJSON_Print(log);
        free(used);
        cJSON_Delete(log);
        if (!text)
                return -ENOMEM;
        size_t len = strlen(text);
        char *out = realloc(text, len + 2);
        if (!out) {
                cJSON_free(text);
                return -ENOMEM;
        }
        out[len++] = '\n';
        out[len] = 0;
        *ret = out;
        *ret_len = len;
        return 0;
}
