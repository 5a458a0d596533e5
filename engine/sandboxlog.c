/*
 * The log keeps each reported syscall once, by name, with the first
 * event's details (arguments, path, why strict mode refuses it). The
 * suggested policy names a directory for opens of absolute paths (the
 * worker then opens them read-only), and the bare syscall otherwise: a
 * starting point to narrow with conditions, not a policy to adopt blindly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/sandboxlog.h"
#include "core/log.h"
#include "core/msg.h"
#include "worker/proto.h"
#include "core/termsafe.h"

#include "snapfuzz/banned.h"

struct SandboxLog {
        cJSON *seen;     /* array of events, one per syscall name */
        cJSON *refusals; /* refusal classes: {"key", ..., "runner_deaths", "quiet"} */
};

int sandboxlog_new(SandboxLog **ret)
{
        SandboxLog *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->seen = cJSON_CreateArray();
        l->refusals = cJSON_CreateArray();
        if (!l->seen || !l->refusals) {
                cJSON_Delete(l->seen);
                cJSON_Delete(l->refusals);
                free(l);
                return -ENOMEM;
        }
        *ret = l;
        return 0;
}

void sandboxlog_free(SandboxLog *l)
{
        if (!l)
                return;
        cJSON_Delete(l->seen);
        cJSON_Delete(l->refusals);
        free(l);
}

static cJSON *sandboxlog_find_refusal(const SandboxLog *l, const char *key)
{
        cJSON *e;

        cJSON_ArrayForEach(e, l->refusals)
        {
                if (strcmp(msg_str(e, "key", ""), key) == 0)
                        return e;
        }
        return NULL;
}

static void sandboxlog_add_count(cJSON *entry, const char *field, double n)
{
        cJSON *count = cJSON_GetObjectItemCaseSensitive(entry, field);

        if (count && cJSON_IsNumber(count))
                cJSON_SetNumberValue(count, count->valuedouble + n);
}

/* How a person adds the class's rule to a policy file. */
static void sandboxlog_rule_text(const cJSON *refusal, char *buf, size_t cap)
{
        const cJSON *rule = cJSON_GetObjectItemCaseSensitive(refusal, "rule");
        char *text = rule ? cJSON_PrintUnformatted(rule) : NULL;

        if (text)
                snprintf(buf, cap, "a policy file allows it with {\"allow\": [%s]}", text);
        else
                snprintf(buf, cap, "no policy file can allow it (%s)",
                         msg_str(refusal, "no_rule", "?"));
        cJSON_free(text);
}

cJSON *sandboxlog_refusal(SandboxLog *l, const cJSON *died, bool *ret_first)
{
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
        const cJSON *refusal = cJSON_GetObjectItemCaseSensitive(death, "refusal");
        const char *key = msg_str(refusal, "key", NULL);
        cJSON *entry, *cmd;
        char rule[1024];

        *ret_first = false;
        if (!l || !key)
                return NULL;
        entry = sandboxlog_find_refusal(l, key);
        if (!entry) {
                entry = cJSON_Duplicate(refusal, 1);
                if (!entry)
                        return NULL;
                cJSON_AddNumberToObject(entry, "runner_deaths", 0);
                cJSON_AddNumberToObject(entry, "quiet", 0);
                cJSON_AddItemToArray(l->refusals, entry);
                *ret_first = true;
                sandboxlog_rule_text(refusal, rule, sizeof(rule));
                log_info("sandbox: refused %s%s%s%s; %s; %s", key,
                         msg_str(refusal, "path", NULL) ? " (" : "", msg_str(refusal, "path", ""),
                         msg_str(refusal, "path", NULL) ? ")" : "",
                         msg_bool(refusal, "quietable", 0)
                             ? "from now on the workers refuse it with an error instead of "
                               "killing a runner, and count it"
                             : "the filter cannot tell it from allowed calls: each one kills a "
                               "runner",
                         rule);
        }
        sandboxlog_add_count(entry, "runner_deaths", 1);
        if (!msg_bool(refusal, "quietable", 0))
                return NULL;
        cmd = msg_new(PROTO_QUIET_REFUSAL);
        if (cmd)
                cJSON_AddItemToObject(cmd, "refusal", cJSON_Duplicate(refusal, 1));
        return cmd;
}

void sandboxlog_event(SandboxLog *l, const cJSON *event)
{
        const char *name = msg_str(event, "syscall", "?");
        const char *raw = msg_str(event, "path", NULL);
        const char *quote = raw ? "\"" : "";
        const cJSON *e;
        cJSON *entry;
        /* The path is the target's: shown inert (core/termsafe.h). */
        char path_buf[2200];
        const char *path = raw ? termsafe_str(path_buf, sizeof(path_buf), raw, 512) : NULL;

        if (strcmp(msg_str(event, "event", ""), "quiet") == 0) {
                cJSON *known = l ? sandboxlog_find_refusal(l, msg_str(event, "key", "")) : NULL;

                if (known)
                        sandboxlog_add_count(known, "quiet", msg_num(event, "count", 0));
                return;
        }
        if (strcmp(msg_str(event, "event", ""), "refused") == 0) {
                log_warn("sandbox: the target's %s(%s%s%s) was refused: %s", name, quote,
                         path ? path : "...", quote, msg_str(event, "why", "not allowed"));
                return;
        }
        if (!l)
                return;
        cJSON_ArrayForEach(e, l->seen)
        {
                if (strcmp(msg_str(e, "syscall", ""), name) == 0)
                        return;
        }
        entry = cJSON_Duplicate(event, 1);
        if (!entry)
                return;
        cJSON_DeleteItemFromObjectCaseSensitive(entry, "type");
        cJSON_DeleteItemFromObjectCaseSensitive(entry, "event");
        cJSON_AddItemToArray(l->seen, entry);
        log_info("sandbox log: the target used %s(%s%s%s), which --sandbox strict refuses (%s)",
                 name, quote, path ? path : "...", quote,
                 msg_str(event, "group", "not in the allowlist"));
}

void sandboxlog_add_stats(const SandboxLog *l, cJSON *stats)
{
        if (l && cJSON_GetArraySize(l->seen) > 0)
                cJSON_AddItemToObject(stats, "sandbox_log", cJSON_Duplicate(l->seen, 1));
        if (l && cJSON_GetArraySize(l->refusals) > 0)
                cJSON_AddItemToObject(stats, "sandbox_refusals", cJSON_Duplicate(l->refusals, 1));
}

/* One rule of the suggested policy for logged event @e. */
static cJSON *suggested_rule(const cJSON *e)
{
        const char *name = msg_str(e, "syscall", "?");
        const char *path = msg_str(e, "path", NULL);
        const char *slash = path ? strrchr(path, '/') : NULL;
        char dir[4096];
        cJSON *rule;

        /* An open of an absolute path outside /proc (whose entries depend on
         * who opens them): its directory. */
        if ((strcmp(name, "openat") != 0 && strcmp(name, "open") != 0) || !path || path[0] != '/' ||
            !slash || strncmp(path, "/proc/", 6) == 0)
                return cJSON_CreateString(name);
        snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
        rule = cJSON_CreateObject();
        if (!rule)
                return NULL;
        cJSON_AddStringToObject(rule, "syscall", "openat");
        cJSON_AddStringToObject(rule, "under", dir);
        return rule;
}

/* One line per refusal class: how often, and how to allow it. */
static void sandboxlog_refusal_summary(const SandboxLog *l)
{
        const cJSON *e;
        char rule[1024];

        cJSON_ArrayForEach(e, l->refusals)
        {
                sandboxlog_rule_text(e, rule, sizeof(rule));
                log_info("sandbox: %s refused %.0f times (%.0f killed a runner, %.0f more were "
                         "refused with an error); %s",
                         msg_str(e, "key", "?"),
                         msg_num(e, "runner_deaths", 0) + msg_num(e, "quiet", 0),
                         msg_num(e, "runner_deaths", 0), msg_num(e, "quiet", 0), rule);
        }
}

void sandboxlog_summary(const SandboxLog *l)
{
        cJSON *policy, *allow;
        const cJSON *e;
        char *text;

        if (l)
                sandboxlog_refusal_summary(l);
        if (!l || cJSON_GetArraySize(l->seen) == 0)
                return;
        policy = cJSON_CreateObject();
        allow = cJSON_AddArrayToObject(policy, "allow");
        cJSON_ArrayForEach(e, l->seen) cJSON_AddItemToArray(allow, suggested_rule(e));
        text = cJSON_PrintUnformatted(policy);
        if (text) {
                /* cJSON escapes C0 controls; DEL and bytes above 0x7f (C1
                 * controls among them) it passes. Escaped only then, so
                 * that a plain suggestion stays valid JSON to copy. */
                char shown[TERMSAFE_BUF];
                bool plain = true;
                for (const unsigned char *p = (const unsigned char *)text; *p; p++)
                        plain &= *p < 0x7f;
                log_info("sandbox log: %d syscalls outside the allowlist; a policy allowing them "
                         "all (narrow it with conditions): %s",
                         cJSON_GetArraySize(l->seen),
                         plain ? text : termsafe_str(shown, sizeof(shown), text, TERMSAFE_MAX));
        }
        cJSON_free(text);
        cJSON_Delete(policy);
}
