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
#include "core/termsafe.h"

#include "snapfuzz/banned.h"

struct SandboxLog {
        cJSON *seen; /* array of events, one per syscall name */
};

int sandboxlog_new(SandboxLog **ret)
{
        SandboxLog *l = calloc(1, sizeof(*l));

        if (!l)
                return -ENOMEM;
        l->seen = cJSON_CreateArray();
        if (!l->seen) {
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
        free(l);
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

void sandboxlog_summary(const SandboxLog *l)
{
        cJSON *policy, *allow;
        const cJSON *e;
        char *text;

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
