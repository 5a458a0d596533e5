/*
 * Reading a crash's settings back. Invariants:
 * - nothing in crash.json is used before it is checked: a field of the
 *   wrong type or out of its range makes the whole record refused (one
 *   line naming the field), never a default silently taken;
 * - the sandbox a crash runs under is the default strict one unless the
 *   person running the command names another (--sandbox, --sandbox-policy)
 *   or trusts the record (--trust-record); a stored sandbox that is looser
 *   than the default and not trusted is ignored, with a note saying so;
 * - a stored policy is checked like a policy file (sandbox_policy_check),
 *   against this machine and the output directory, whether or not it is
 *   used, so a record that asks for what no policy may have is refused.
 */
#include "recovery/crashconf.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/crashstore.h"
#include "core/elfcheck.h"
#include "core/termsafe.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/record.h"

#include "snapfuzz/banned.h"

/* Largest integer a JSON number (a double) holds exactly. */
#define CRASHCONF_MAX_EXACT 9007199254740992.0

typedef struct Reader {
        char path[PATH_MAX + 64]; /* of crash.json, for messages */
        char *err;
        size_t errlen;
} Reader;

static int bad(Reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PATH: <what>; the crash record is corrupt or was edited". */
static int bad(Reader *rd, const char *fmt, ...)
{
        va_list ap;
        int n = snprintf(rd->err, rd->errlen, "%s: ", rd->path);

        if (n < 0 || (size_t)n >= rd->errlen)
                return -EBADMSG;
        va_start(ap, fmt);
        int m = vsnprintf(rd->err + n, rd->errlen - (size_t)n, fmt, ap);
        va_end(ap);
        if (m >= 0 && (size_t)n + (size_t)m < rd->errlen)
                snprintf(rd->err + n + m, rd->errlen - ((size_t)n + (size_t)m),
                         "; the crash record is corrupt or was edited");
        return -EBADMSG;
}

/* @obj.@key as an integer in [@min, @max]; absent: @def. */
static int get_int(Reader *rd, const cJSON *obj, const char *where, const char *key, double min,
                   double max, double def, double *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

        if (!v) {
                *ret = def;
                return 0;
        }
        /* The range first: converting a double outside int64_t's range
         * is undefined. */
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= min && v->valuedouble <= max) ||
            v->valuedouble != (double)(int64_t)v->valuedouble)
                return bad(rd, "%s%s must be an integer from %.0f to %.0f", where, key, min, max);
        *ret = v->valuedouble;
        return 0;
}

/* @obj.@key as a string of at most @max bytes, or NULL when absent. */
static int get_str(Reader *rd, const cJSON *obj, const char *where, const char *key, size_t max,
                   const char **ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

        *ret = NULL;
        if (!v)
                return 0;
        if (!cJSON_IsString(v))
                return bad(rd, "%s%s must be a string", where, key);
        if (strlen(v->valuestring) > max)
                return bad(rd, "%s%s is longer than %zu bytes", where, key, max);
        *ret = v->valuestring;
        return 0;
}

/* An object or absent (*ret NULL). */
static int get_obj(Reader *rd, const cJSON *obj, const char *key, const cJSON **ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

        *ret = v;
        if (v && !cJSON_IsObject(v))
                return bad(rd, "%s must be an object", key);
        return 0;
}

static bool mode_valid(const char *m)
{
        return strcmp(m, "strict") == 0 || strcmp(m, "log") == 0 || strcmp(m, "off") == 0;
}

/* The identity of the crash: kind, signature, message, target. */
static int read_identity(Reader *rd, const cJSON *report, const CrashconfTrust *t, Crashconf *c)
{
        const char *kind, *sig, *msg, *target;
        int r;

        if ((r = get_str(rd, report, "", "kind", sizeof(c->kind) - 1, &kind)) < 0 ||
            (r = get_str(rd, report, "", "signature", sizeof(c->signature) - 1, &sig)) < 0 ||
            (r = get_str(rd, report, "", "message", SIZE_MAX, &msg)) < 0 ||
            (r = get_str(rd, report, "", "target", PATH_MAX - 1, &target)) < 0)
                return r;
        if (!kind || !*kind ||
            strspn(kind, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(kind))
                return bad(rd, "kind must be a name such as \"segv\" (lower-case letters, digits, "
                               "'-' and '_')");
        snprintf(c->kind, sizeof(c->kind), "%s", kind);
        snprintf(c->signature, sizeof(c->signature), "%s", sig ? sig : "");
        c->message = strdup(msg ? msg : "");
        if (!c->message)
                return -ENOMEM;
        if (t->target) {
                c->target = strdup(t->target);
                return c->target ? 0 : -ENOMEM;
        }
        if (!target || target[0] != '/')
                return bad(rd, "target must be the absolute path of the target .so");
        for (const unsigned char *p = (const unsigned char *)target; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return bad(rd, "target holds control characters");
        c->target = strdup(target);
        return c->target ? 0 : -ENOMEM;
}

static int read_limits(Reader *rd, const cJSON *report, const CrashconfTrust *t, Crashconf *c,
                       const char **ret_mode)
{
        const cJSON *limits;
        double timeout = 0, rss = 0, malloc_mb = 0, max_len = 0;
        int r;

        if ((r = get_obj(rd, report, "limits", &limits)) < 0 ||
            (r = get_int(rd, limits, "limits.", "timeout_ms", 1, 86400000, 1000, &timeout)) < 0 ||
            (r = get_int(rd, limits, "limits.", "rss_limit_mb", 0, 1 << 24, 2048, &rss)) < 0 ||
            (r = get_int(rd, limits, "limits.", "malloc_limit_mb", 0, 1 << 24, 0, &malloc_mb)) <
                0 ||
            (r = get_int(rd, limits, "limits.", "max_len", 0, RECORD_MAX_LEN_LIMIT, 0, &max_len)) <
                0 ||
            (r = get_str(rd, limits, "limits.", "sandbox", 16, ret_mode)) < 0)
                return r;
        if (*ret_mode && !mode_valid(*ret_mode))
                return bad(rd, "limits.sandbox must be \"strict\", \"log\" or \"off\"");
        c->timeout_ms = t->timeout_ms ? t->timeout_ms : (unsigned)timeout;
        c->rss_limit_mb = (unsigned)rss;
        c->malloc_limit_mb = (unsigned)malloc_mb;
        c->max_len = (size_t)max_len;
        if (c->max_len < c->input_len)
                c->max_len = c->input_len;
        if (c->max_len == 0)
                c->max_len = 1;
        return 0;
}

/* "sanitizer": whether the crash was confirmed with the sanitizer's report
 * (then it is replayed the same way), and the report file's name. */
static int read_sanitizer(Reader *rd, const cJSON *report, Crashconf *c)
{
        const cJSON *san, *confirmed;
        const char *file;
        int r;

        if ((r = get_obj(rd, report, "sanitizer", &san)) < 0 || !san)
                return r;
        confirmed = cJSON_GetObjectItemCaseSensitive(san, "confirmed");
        if (confirmed && !cJSON_IsBool(confirmed))
                return bad(rd, "sanitizer.confirmed must be true or false");
        if ((r = get_str(rd, san, "sanitizer.", "report", 64, &file)) < 0)
                return r;
        /* The file is looked for beside the input, never elsewhere. */
        if (file && (!*file || strchr(file, '/') || file[0] == '.'))
                return bad(rd, "sanitizer.report must be a file name");
        c->sanitizer_confirm = cJSON_IsTrue(confirmed);
        return 0;
}

static int read_history(Reader *rd, const cJSON *report, Crashconf *c)
{
        const cJSON *st;
        double first = 0, last = 0, min_len = -1;
        int r;

        if ((r = get_obj(rd, report, "state_dependent", &st)) < 0 ||
            (r = get_int(rd, report, "", "minimized_len", 0, CRASHSTORE_MAX_INPUT, -1, &min_len)) <
                0)
                return r;
        c->minimized_len = (int64_t)min_len;
        if ((r = read_sanitizer(rd, report, c)) < 0)
                return r;
        if (!st)
                return 0;
        if ((r = get_int(rd, st, "state_dependent.", "first", 1, CRASHCONF_MAX_EXACT, 0, &first)) <
                0 ||
            (r = get_int(rd, st, "state_dependent.", "last", 1, CRASHCONF_MAX_EXACT, 0, &last)) < 0)
                return r;
        if (first == 0 || last == 0 || first > last)
                return bad(rd, "state_dependent needs iterations first <= last");
        c->state_dependent = true;
        c->first = (uint64_t)first;
        c->last = (uint64_t)last;
        return 0;
}

/*
 * The stored sandbox (mode and policy), checked. A policy is checked as a
 * policy file would be; its error line is kept whole after the path.
 */
static int read_stored_sandbox(Reader *rd, const cJSON *report, const char *out_dir,
                               const char *limits_mode, const char **ret_mode, char **ret_policy)
{
        const cJSON *sandbox, *policy;
        const char *mode;
        char line[1024];
        int r;

        if ((r = get_obj(rd, report, "sandbox", &sandbox)) < 0 ||
            (r = get_str(rd, sandbox, "sandbox.", "mode", 16, &mode)) < 0)
                return r;
        if (mode && !mode_valid(mode))
                return bad(rd, "sandbox.mode must be \"strict\", \"log\" or \"off\"");
        if (mode && limits_mode && strcmp(mode, limits_mode) != 0)
                return bad(rd, "sandbox.mode (%s) and limits.sandbox (%s) disagree", mode,
                           limits_mode);
        *ret_mode = mode ? mode : limits_mode ? limits_mode : "strict";
        policy = cJSON_GetObjectItemCaseSensitive(sandbox, "policy");
        if (!policy || cJSON_IsNull(policy))
                return 0;
        if (!cJSON_IsObject(policy))
                return bad(rd, "sandbox.policy must be an object (a sandbox policy)");
        if (strcmp(*ret_mode, "off") == 0)
                return bad(rd, "a sandbox policy is stored with sandbox mode \"off\"");
        *ret_policy = cJSON_PrintUnformatted(policy);
        if (!*ret_policy)
                return -ENOMEM;
        r = sandbox_policy_check("policy", *ret_policy, out_dir, line, sizeof(line));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                snprintf(rd->err, rd->errlen,
                         "%s: the sandbox policy stored in it is refused (%s); the record cannot "
                         "be replayed as it is: give --sandbox strict or --sandbox-policy FILE "
                         "to replace it",
                         rd->path, line);
                return -EBADMSG;
        }
        return 0;
}

/* Is the stored sandbox looser than the default (strict, no policy)? */
static bool looser(const char *mode, const char *policy)
{
        return (mode && strcmp(mode, "strict") != 0) || policy;
}

/*
 * Decides the sandbox: the command line's (which replaces the stored one
 * whole), else the record's when it is trusted, else the default. Writes the
 * note that tells the person what happened.
 */
static int decide_sandbox(Reader *rd, const CrashconfTrust *t, const char *stored_mode,
                          const char *stored_policy, Crashconf *c)
{
        bool user = t->sandbox || t->policy_json;
        bool stored_looser = looser(stored_mode, stored_policy);
        const char *mode = "strict", *policy = NULL;

        if (user) {
                mode = t->sandbox ? t->sandbox : "strict";
                policy = t->policy_json;
                c->sandbox_from = "the command line";
        } else if (t->trust_record) {
                mode = stored_mode ? stored_mode : "strict";
                policy = stored_policy;
                c->sandbox_from = "crash.json";
        } else {
                c->sandbox_from = "default";
        }
        if (policy && strcmp(mode, "off") == 0) {
                snprintf(rd->err, rd->errlen, "--sandbox-policy has no effect with --sandbox off");
                return -EINVAL;
        }
        c->sandbox = strcmp(mode, "off") == 0 ? "off" : strcmp(mode, "log") == 0 ? "log" : "strict";
        if (policy) {
                c->policy_json = strdup(policy);
                if (!c->policy_json)
                        return -ENOMEM;
        }
        if (!user && t->trust_record && stored_looser) {
                snprintf(c->note, sizeof(c->note),
                         "crash.json's sandbox is in force (mode %s%s), as --trust-record asks: "
                         "the record decides what the target may do",
                         c->sandbox, c->policy_json ? ", with its policy" : "");
                c->note_is_warning = true;
        } else if (user && strcmp(c->sandbox, "off") == 0) {
                snprintf(c->note, sizeof(c->note),
                         "the sandbox is off, as --sandbox off asks: the target runs with your "
                         "privileges");
                c->note_is_warning = true;
        } else if (!user && !t->trust_record && stored_looser) {
                snprintf(c->note, sizeof(c->note),
                         "crash.json says the crash was found under sandbox %s%s; that was "
                         "ignored and the default strict sandbox applies (a record must not "
                         "loosen the sandbox). If the crash does not reproduce, check the "
                         "record and give --trust-record, or --sandbox-policy FILE",
                         stored_mode, stored_policy ? " with a policy" : "");
        }
        return 0;
}

static int check_target(Reader *rd, const CrashconfTrust *t, Crashconf *c)
{
        char why[512], shown[TERMSAFE_BUF];

        if (t->target || elf_check_shared_object(c->target, why, sizeof(why)) == 0)
                return 0;
        snprintf(rd->err, rd->errlen,
                 "the target %s named in the crash record cannot be loaded (%s); point to it "
                 "with --target PATH",
                 termsafe_str(shown, sizeof(shown), c->target, 512), why);
        return -EINVAL;
}

int crashconf_load(const char *out_dir, const char *id, const CrashconfTrust *t, Crashconf *ret,
                   char *err, size_t errlen)
{
        Reader rd = {.err = err, .errlen = errlen};
        Crashconf c = {.minimized_len = -1};
        cJSON *report = NULL;
        const char *limits_mode = NULL, *stored_mode = NULL;
        char *stored_policy = NULL;
        int r;

        memset(ret, 0, sizeof(*ret));
        r = crashstore_load(out_dir, id, &report, &c.input, &c.input_len, err, errlen);
        if (r < 0)
                return r == CRASHSTORE_ERR_NOENT     ? -ENOENT
                       : r == CRASHSTORE_ERR_CORRUPT ? -EBADMSG
                                                     : r;
        snprintf(rd.path, sizeof(rd.path), "%s/crashes/%s/crash.json", out_dir, id);
        if ((r = read_identity(&rd, report, t, &c)) < 0 ||
            (r = read_limits(&rd, report, t, &c, &limits_mode)) < 0 ||
            (r = read_history(&rd, report, &c)) < 0)
                goto fail;
        /* A replacement from the command line means the stored one is not
         * consulted at all. */
        if (!t->sandbox && !t->policy_json) {
                r = read_stored_sandbox(&rd, report, out_dir, limits_mode, &stored_mode,
                                        &stored_policy);
                if (r < 0)
                        goto fail;
        } else {
                stored_mode = "strict";
        }
        if ((r = decide_sandbox(&rd, t, stored_mode, stored_policy, &c)) < 0 ||
            (r = check_target(&rd, t, &c)) < 0)
                goto fail;
        c.stored_policy = stored_policy != NULL;
        cJSON_free(stored_policy);
        cJSON_Delete(report);
        *ret = c;
        return 0;

fail:
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory reading %s", rd.path);
        /* The line may quote the record (a policy's paths): made inert. */
        char *raw = strdup(err);
        if (raw) {
                termsafe_str(err, errlen, raw, errlen);
                free(raw);
        }
        cJSON_free(stored_policy);
        cJSON_Delete(report);
        crashconf_deinit(&c);
        return r;
}

void crashconf_deinit(Crashconf *c)
{
        free(c->target);
        free(c->message);
        free(c->policy_json);
        free(c->input);
        memset(c, 0, sizeof(*c));
        c->minimized_len = -1;
}

void crashconf_wproc_config(const Crashconf *c, WprocConfig *ret)
{
        *ret = (WprocConfig){
            .target = c->target,
            .max_len = c->max_len,
            .timeout_ms = c->timeout_ms,
            .rss_limit_mb = c->rss_limit_mb,
            .malloc_limit_mb = c->malloc_limit_mb,
            .sandbox = c->sandbox,
            .sandbox_policy = c->policy_json,
            .cov_fd = -1,
            .detect_leaks = strcmp(c->kind, "leak") == 0,
            .sanitizer_confirm = c->sanitizer_confirm,
        };
}
