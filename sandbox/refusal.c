/*
 * Refusal classes (see refusal.h): a refused syscall turned into the key a
 * report counts it under, the policy-file rule that would allow it, and
 * the filter rule that sends later calls of its class to the worker to be
 * refused quietly.
 *
 * Invariants:
 * - A class never widens what is allowed: the filter rule it makes only
 *   sends calls to the worker (POLICY_NOTIFY_REFUSE), which refuses them.
 * - A class whose calls the filter cannot tell from allowed ones (a
 *   syscall the allowlist allows under conditions, but for ioctl and fcntl
 *   commands, which are plain equalities on one argument) makes no filter
 *   rule: its calls keep trapping.
 * - The suggested rule is what policy files accept (policyfile.h): a bare
 *   syscall name, a command condition, or a directory for read-only opens.
 *   Locked groups, writes and relative paths get none, with the reason.
 */
#include "sandbox/refusal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/internal.h"
#include "sandbox/sandbox.h"

#include "snapfuzz/banned.h"

/* Flags that make an open more than a read. */
#define REFUSAL_WRITE_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND)

static bool refusal_is(int nr, const char *name)
{
        const char *n = sandbox_syscall_name(nr);

        return n && strcmp(n, name) == 0;
}

/* The argument that holds an ioctl's or fcntl's command, or -1. */
static int refusal_cmd_arg(int nr)
{
        if (refusal_is(nr, "ioctl") || refusal_is(nr, "fcntl"))
                return 1;
        return -1;
}

/* @path with "." and ".." resolved by the letters (a class names where the
 * path points, not how it was spelt): "/usr/lib/locale/../../../etc/passwd"
 * is "/etc/passwd". Absolute paths only. */
static void refusal_normalize(const char *path, char *buf, size_t cap)
{
        size_t len = 0;
        const char *p = path;

        buf[0] = '\0';
        while (*p) {
                const char *end = strchr(p, '/');
                size_t n = end ? (size_t)(end - p) : strlen(p);

                if (n == 0 || (n == 1 && p[0] == '.')) {
                        /* nothing */
                } else if (n == 2 && p[0] == '.' && p[1] == '.') {
                        while (len > 0 && buf[len - 1] != '/')
                                len--;
                        if (len > 0)
                                len--;
                        buf[len] = '\0';
                } else if (len + 1 + n < cap) {
                        buf[len++] = '/';
                        memcpy(buf + len, p, n);
                        len += n;
                        buf[len] = '\0';
                }
                p += n;
                if (*p == '/')
                        p++;
        }
        if (len == 0)
                snprintf(buf, cap, "/");
}

void refusal_classify(int nr, const uint64_t args[6], const char *path, Refusal *ret)
{
        const char *name = sandbox_syscall_name(nr);
        bool is_openat = refusal_is(nr, "openat");

        memset(ret, 0, sizeof(*ret));
        ret->nr = nr;
        if (!name)
                name = "unknown";
        if (is_openat || refusal_is(nr, "open")) {
                char norm[PATH_MAX];
                const char *slash = NULL;

                if (path && path[0] == '/') {
                        refusal_normalize(path, norm, sizeof(norm));
                        path = norm;
                        slash = strrchr(path, '/');
                }

                ret->kind = REFUSAL_OPEN;
                ret->write = ((is_openat ? args[2] : args[1]) & REFUSAL_WRITE_FLAGS) != 0;
                if (slash)
                        snprintf(ret->dir, sizeof(ret->dir), "%.*s",
                                 slash == path ? 1 : (int)(slash - path), path);
                snprintf(ret->key, sizeof(ret->key), "%s %s %s", name,
                         ret->dir[0] ? ret->dir : "(a relative or unknown path)",
                         ret->write ? "write" : "read");
                return;
        }
        ret->arg = refusal_cmd_arg(nr);
        if (ret->arg >= 0) {
                ret->kind = REFUSAL_CMD;
                ret->cmd = (uint32_t)args[ret->arg];
                snprintf(ret->key, sizeof(ret->key), "%s 0x%" PRIx32, name, ret->cmd);
                return;
        }
        ret->kind = REFUSAL_ANY;
        snprintf(ret->key, sizeof(ret->key), "%s", name);
}

bool refusal_matches(const Refusal *r, int nr, const uint64_t args[6], const char *path)
{
        Refusal other;

        if (r->nr != nr)
                return false;
        refusal_classify(nr, args, path, &other);
        return strcmp(r->key, other.key) == 0;
}

/* The policy rule that allows class @r, or NULL with @ret_why. */
static cJSON *refusal_rule(const Refusal *r, const char **ret_why)
{
        const char *name = sandbox_syscall_name(r->nr);
        const PolicyGroup *group = policy_find_refused(r->nr);
        cJSON *rule, *args, *cond;
        char hex[24];

        if (!name) {
                *ret_why = "a syscall this build does not know by name";
                return NULL;
        }
        if (group && group->locked) {
                *ret_why = group->summary;
                return NULL;
        }
        if (r->kind == REFUSAL_ANY)
                return cJSON_CreateString(name);
        if (r->kind == REFUSAL_OPEN && r->write) {
                *ret_why = "a policy file allows only read-only opens";
                return NULL;
        }
        if (r->kind == REFUSAL_OPEN && !r->dir[0]) {
                *ret_why = "a relative path: a policy file names directories by absolute paths";
                return NULL;
        }
        rule = cJSON_CreateObject();
        if (!rule)
                return NULL;
        cJSON_AddStringToObject(rule, "syscall", name);
        if (r->kind == REFUSAL_OPEN) {
                cJSON_AddStringToObject(rule, "under", r->dir);
                return rule;
        }
        args = cJSON_AddArrayToObject(rule, "args");
        cond = cJSON_CreateObject();
        if (!args || !cond) {
                cJSON_Delete(cond);
                cJSON_Delete(rule);
                return NULL;
        }
        cJSON_AddNumberToObject(cond, "arg", r->arg);
        cJSON_AddStringToObject(cond, "op", "==");
        snprintf(hex, sizeof(hex), "0x%" PRIx32, r->cmd);
        cJSON_AddStringToObject(cond, "value", hex);
        cJSON_AddItemToArray(args, cond);
        return rule;
}

cJSON *refusal_to_json(const Refusal *r)
{
        static const char *const kinds[] = {"any", "cmd", "open"};
        const char *name = sandbox_syscall_name(r->nr);
        const char *why = NULL;
        cJSON *j = cJSON_CreateObject(), *rule;

        if (!j)
                return NULL;
        cJSON_AddStringToObject(j, "key", r->key);
        cJSON_AddStringToObject(j, "syscall", name ? name : "unknown");
        cJSON_AddNumberToObject(j, "nr", r->nr);
        cJSON_AddStringToObject(j, "kind", kinds[r->kind]);
        if (r->kind == REFUSAL_CMD) {
                cJSON_AddNumberToObject(j, "arg", r->arg);
                cJSON_AddNumberToObject(j, "cmd", r->cmd);
        }
        if (r->kind == REFUSAL_OPEN) {
                cJSON_AddStringToObject(j, "dir", r->dir);
                cJSON_AddBoolToObject(j, "write", r->write);
        }
        rule = refusal_rule(r, &why);
        if (rule)
                cJSON_AddItemToObject(j, "rule", rule);
        else
                cJSON_AddStringToObject(j, "no_rule", why ? why : "out of memory");
        return j;
}

int refusal_from_json(const cJSON *j, Refusal *ret)
{
        const cJSON *nr = cJSON_GetObjectItemCaseSensitive(j, "nr");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
        const cJSON *arg = cJSON_GetObjectItemCaseSensitive(j, "arg");
        const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(j, "cmd");
        const cJSON *dir = cJSON_GetObjectItemCaseSensitive(j, "dir");
        const cJSON *write = cJSON_GetObjectItemCaseSensitive(j, "write");
        uint64_t args[6] = {0};
        char path[PATH_MAX + 2];

        if (!cJSON_IsNumber(nr) || nr->valueint < 0 || !cJSON_IsString(kind))
                return -EINVAL;
        /* Rebuilt through refusal_classify(), so that the key is what a call
         * of the class makes. */
        if (strcmp(kind->valuestring, "any") == 0) {
                refusal_classify(nr->valueint, args, NULL, ret);
                return ret->kind == REFUSAL_ANY ? 0 : -EINVAL;
        }
        if (strcmp(kind->valuestring, "cmd") == 0) {
                if (!cJSON_IsNumber(arg) || arg->valueint != refusal_cmd_arg(nr->valueint) ||
                    !cJSON_IsNumber(cmd))
                        return -EINVAL;
                args[arg->valueint] = (uint32_t)cmd->valuedouble;
                refusal_classify(nr->valueint, args, NULL, ret);
                return ret->kind == REFUSAL_CMD ? 0 : -EINVAL;
        }
        if (strcmp(kind->valuestring, "open") != 0 || !cJSON_IsString(dir) ||
            strlen(dir->valuestring) >= PATH_MAX)
                return -EINVAL;
        /* A file in the directory stands for the class. */
        snprintf(path, sizeof(path), "%s/x", strcmp(dir->valuestring, "/") ? dir->valuestring : "");
        args[1] = args[2] = cJSON_IsTrue(write) ? O_WRONLY : O_RDONLY;
        refusal_classify(nr->valueint, args, dir->valuestring[0] ? path : NULL, ret);
        return ret->kind == REFUSAL_OPEN ? 0 : -EINVAL;
}

/* Whether the allowlist or the policy file allows syscall @nr under some
 * conditions (other rules for it would overlap theirs). */
static bool refusal_nr_allowed_somewhere(int nr, const Policy *policy)
{
        if (policy_find_allowed(nr))
                return true;
        for (size_t i = 0; i < policy->n_extra; i++)
                if (policy_rule_nr(&policy->extra[i]) == nr)
                        return true;
        return false;
}

int refusal_filter_rule(const Refusal *r, const Policy *policy, PolicyRule *ret)
{
        const PolicyGroup *group = policy_find_refused(r->nr);
        const char *name = sandbox_syscall_name(r->nr);

        if (r->kind == REFUSAL_OPEN)
                return 1;
        /* Process creation already goes to the worker. */
        for (size_t i = 0; group && i < group->n_rules; i++)
                if (group->rules[i].action == POLICY_NOTIFY_REFUSE &&
                    policy_rule_nr(&group->rules[i]) == r->nr)
                        return 1;
        if (!name)
                return -ENOTSUP;
        if (r->kind == REFUSAL_CMD) {
                /* The built-in rules compare the same argument for
                 * equality: other commands are apart from them. A policy
                 * file's rules may compare anything. */
                for (size_t i = 0; i < policy->n_extra; i++)
                        if (policy_rule_nr(&policy->extra[i]) == r->nr)
                                return -ENOTSUP;
                *ret = (PolicyRule){
                    .syscall = name,
                    .action = POLICY_NOTIFY_REFUSE,
                    .when = {{.arg = (unsigned)r->arg,
                              .op = SCMP_CMP_MASKED_EQ,
                              .datum_a = UINT32_C(0xffffffff),
                              .datum_b = r->cmd}},
                };
                return 0;
        }
        if (refusal_nr_allowed_somewhere(r->nr, policy))
                return -ENOTSUP;
        *ret = (PolicyRule){.syscall = name, .action = POLICY_NOTIFY_REFUSE};
        return 0;
}

/* ---- the Sandbox's side: sandbox.h ---- */

void sandbox_describe_refusal(Sandbox *s, cJSON *death)
{
        const cJSON *nr = cJSON_GetObjectItemCaseSensitive(death, "syscall");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(death, "syscall_args");
        const cJSON *a;
        uint64_t values[6] = {0};
        const char *path = NULL;
        Refusal r;
        cJSON *j;
        int i = 0;

        if (!s || !cJSON_IsNumber(nr) || nr->valueint < 0)
                return;
        cJSON_ArrayForEach(a, args)
        {
                if (i < 6 && cJSON_IsString(a))
                        values[i] = strtoull(a->valuestring, NULL, 16);
                i++;
        }
        /* The path is known when the worker refused the call (opens). */
        if (s->last_nr == nr->valueint && s->last_has_path)
                path = s->last_path;
        refusal_classify(nr->valueint, values, path, &r);
        j = refusal_to_json(&r);
        if (!j)
                return;
        if (path)
                cJSON_AddStringToObject(j, "path", path);
        /* Whether sandbox_quiet() can take the class (strict mode, and a
         * class the filter can tell apart). */
        PolicyRule rule;
        cJSON_AddBoolToObject(j, "quietable",
                              s->mode == SANDBOX_STRICT &&
                                  refusal_filter_rule(&r, &s->policy, &rule) >= 0);
        cJSON_AddItemToObject(death, "refusal", j);
}

int sandbox_quiet(Sandbox *s, const cJSON *refusal)
{
        PolicyRule rule, *rules;
        Refusal r, *quiet;
        uint64_t *pending;
        int kind;

        if (!s || s->mode != SANDBOX_STRICT)
                return -ENOTSUP;
        if (refusal_from_json(refusal, &r) < 0)
                return -EINVAL;
        for (size_t i = 0; i < s->n_quiet; i++)
                if (strcmp(s->quiet[i].key, r.key) == 0)
                        return -EEXIST;
        kind = refusal_filter_rule(&r, &s->policy, &rule);
        if (kind < 0)
                return kind;

        quiet = realloc(s->quiet, (s->n_quiet + 1) * sizeof(*quiet));
        if (!quiet)
                return -ENOMEM;
        s->quiet = quiet;
        pending = realloc(s->quiet_pending, (s->n_quiet + 1) * sizeof(*pending));
        if (!pending)
                return -ENOMEM;
        s->quiet_pending = pending;
        if (kind == 0) {
                rules = realloc(s->policy.quiet, (s->policy.n_quiet + 1) * sizeof(*rules));
                if (!rules)
                        return -ENOMEM;
                s->policy.quiet = rules;
                rules[s->policy.n_quiet++] = rule;
                int e = sandbox_compile_programs(s);
                if (e < 0) {
                        /* The old programs are still in place. */
                        s->policy.n_quiet--;
                        return e;
                }
        }
        s->quiet[s->n_quiet] = r;
        s->quiet_pending[s->n_quiet] = 0;
        s->n_quiet++;
        return 0;
}
