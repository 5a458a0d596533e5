/*
 * Reading a policy file into Policy rules. Every way a file can be wrong
 * ends in one line that names the file, the line and the item ("allow[2]
 * .args[0]"), and nothing of a rejected file is kept in the Policy.
 *
 * What a file may ask for:
 * - a syscall libseccomp knows (on any architecture: a name that does not
 *   exist on this one is accepted and ignored, so one file serves all);
 *   never one of a locked group (sandbox/policy.c), which would let the
 *   target get around the sandbox itself;
 * - conditions libseccomp can compile: at most one per argument;
 * - "under": read-only open/openat below a directory. A BPF filter sees
 *   only the pointer to a path, so such opens go to the worker, which opens
 *   the file itself (openat2 with RESOLVE_BENEATH below the directory) and
 *   hands the runner the descriptor (sandbox/supervisor.c).
 */
#include "sandbox/policyfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "snapfuzz/banned.h"

/* The flag bits a read-only open must not have. */
#define POLICYFILE_WRITE_FLAGS (O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND)

#define POLICYFILE_MAX_ITEMS 1024

typedef struct Ctx {
        const char *name;
        unsigned *lines; /* line of each allow[] element, 0 when unknown */
        size_t n_lines;
        char *err;
        size_t errlen;
        Policy *policy;
} Ctx;

static int fail(Ctx *c, size_t item, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "NAME:LINE: allow[ITEM]..." plus the message. item == SIZE_MAX: no item. */
static int fail(Ctx *c, size_t item, const char *fmt, ...)
{
        char where[64] = "";
        size_t n;
        va_list ap;

        if (item != SIZE_MAX && item < c->n_lines && c->lines[item])
                snprintf(where, sizeof(where), "%u:", c->lines[item]);
        n = (size_t)snprintf(c->err, c->errlen, "%s:%s ", c->name, where);
        if (n < c->errlen) {
                va_start(ap, fmt);
                vsnprintf(c->err + n, c->errlen - n, fmt, ap);
                va_end(ap);
        }
        /* One line for a terminal, whatever the file's strings hold. */
        for (char *p = c->err; *p; p++)
                if ((unsigned char)*p < 0x20 || *p == 0x7f)
                        *p = '?';
        return -EINVAL;
}

/*
 * The line on which each element of the top-level "allow" array starts.
 * The text is known to be valid JSON, so a scan that tracks strings and
 * nesting is enough.
 */
static void element_lines(const char *text, unsigned *lines, size_t cap)
{
        unsigned line = 1;
        int depth = 0, allow_depth = -1;
        bool allow_key = false, want_element = false;
        size_t index = 0;

        for (size_t i = 0; text[i]; i++) {
                char ch = text[i];

                if (ch == '\n') {
                        line++;
                        continue;
                }
                if (isspace((unsigned char)ch))
                        continue;
                if (want_element) {
                        if (ch != ']' && index < cap)
                                lines[index] = line;
                        want_element = false;
                }
                if (ch == '"') {
                        size_t start = ++i;

                        while (text[i] && text[i] != '"') {
                                if (text[i] == '\\' && text[i + 1])
                                        i++;
                                i++;
                        }
                        if (depth == 1 && allow_depth == -1 && i - start == 5 &&
                            memcmp(text + start, "allow", 5) == 0)
                                allow_key = true;
                        if (!text[i])
                                break;
                        continue;
                }
                if (ch == ':')
                        continue;
                if (ch == '{' || ch == '[') {
                        depth++;
                        if (ch == '[' && allow_key && depth == 2) {
                                allow_depth = depth;
                                want_element = true;
                        }
                } else if (ch == '}' || ch == ']') {
                        if (depth == allow_depth)
                                allow_depth = -2; /* done */
                        depth--;
                } else if (ch == ',' && depth == allow_depth) {
                        index++;
                        want_element = true;
                }
                /* Only the value right after the "allow" key counts. */
                if (ch != ':' && !(ch == '[' && allow_depth == depth))
                        allow_key = false;
        }
}

int policyfile_parse_json(const char *name, const char *text, cJSON **ret, char *err, size_t errlen)
{
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithOpts(text, &end, 1);

        if (!root) {
                const char *at = cJSON_GetErrorPtr();
                unsigned line = 1, column = 1;

                if (!at || at < text || at > text + strlen(text))
                        at = text;
                for (const char *p = text; p < at; p++) {
                        if (*p == '\n') {
                                line++;
                                column = 1;
                        } else {
                                column++;
                        }
                }
                snprintf(err, errlen, "%s:%u:%u: not valid JSON%s%.20s%s", name, line, column,
                         *at ? " near '" : " (it ends too early)", at, *at ? "'" : "");
                /* Keep the quoted text on the one line. */
                for (char *p = err; *p; p++)
                        if (*p == '\n' || *p == '\r' || *p == '\t')
                                *p = ' ';
                return -EINVAL;
        }
        *ret = root;
        return 0;
}

/* Appends @rule with its own copy of the syscall name (policy_deinit frees
 * the names of extra rules). */
static int add_extra(Policy *p, const PolicyRule *rule)
{
        PolicyRule *extra = realloc(p->extra, (p->n_extra + 1) * sizeof(*extra));
        char *name;

        if (!extra)
                return -ENOMEM;
        p->extra = extra;
        name = strdup(rule->syscall);
        if (!name)
                return -ENOMEM;
        p->extra[p->n_extra] = *rule;
        p->extra[p->n_extra++].syscall = name;
        return 0;
}

static int add_dir(Policy *p, const char *dir)
{
        char **dirs;
        char *copy;

        for (size_t i = 0; i < p->n_dirs; i++)
                if (strcmp(p->dirs[i], dir) == 0)
                        return 0;
        dirs = realloc(p->dirs, (p->n_dirs + 1) * sizeof(*dirs));
        if (!dirs)
                return -ENOMEM;
        p->dirs = dirs;
        copy = strdup(dir);
        if (!copy)
                return -ENOMEM;
        p->dirs[p->n_dirs++] = copy;
        return 0;
}

/* An integer from a JSON number or a string ("0x1f", "-100"), as the 64-bit
 * value libseccomp compares with. */
static bool parse_value(const cJSON *v, uint64_t *ret)
{
        if (cJSON_IsNumber(v)) {
                double d = v->valuedouble;

                /* The range first: converting a double outside int64_t's
                 * range is undefined. */
                if (!(d <= 9007199254740992.0 && d >= -9007199254740992.0) ||
                    d != (double)(int64_t)d)
                        return false;
                *ret = (uint64_t)(int64_t)d;
                return true;
        }
        if (cJSON_IsString(v) && *v->valuestring) {
                const char *s = v->valuestring;
                char *end;

                errno = 0;
                if (*s == '-') {
                        long long x = strtoll(s, &end, 0);

                        if (errno || *end)
                                return false;
                        *ret = (uint64_t)(int64_t)x;
                        return true;
                }
                unsigned long long x = strtoull(s, &end, 0);
                if (errno || *end)
                        return false;
                *ret = (uint64_t)x;
                return true;
        }
        return false;
}

static const struct {
        const char *name;
        enum scmp_compare op;
} ops[] = {
    {"==", SCMP_CMP_EQ}, {"!=", SCMP_CMP_NE}, {"<", SCMP_CMP_LT},         {"<=", SCMP_CMP_LE},
    {">", SCMP_CMP_GT},  {">=", SCMP_CMP_GE}, {"&=", SCMP_CMP_MASKED_EQ},
};

static int parse_condition(Ctx *c, size_t item, size_t k, const cJSON *cond,
                           struct scmp_arg_cmp *ret, unsigned *used_args)
{
        const cJSON *arg = cJSON_GetObjectItemCaseSensitive(cond, "arg");
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(cond, "op");
        const cJSON *value = cJSON_GetObjectItemCaseSensitive(cond, "value");
        const cJSON *mask = cJSON_GetObjectItemCaseSensitive(cond, "mask");
        const cJSON *key;
        uint64_t a = 0, b = 0;
        int index;

        if (!cJSON_IsObject(cond))
                return fail(c, item,
                            "allow[%zu].args[%zu]: a condition is an object like "
                            "{\"arg\": 1, \"op\": \"==\", \"value\": 0}",
                            item, k);
        cJSON_ArrayForEach(key, cond)
        {
                if (strcmp(key->string, "arg") && strcmp(key->string, "op") &&
                    strcmp(key->string, "value") && strcmp(key->string, "mask"))
                        return fail(c, item,
                                    "allow[%zu].args[%zu]: unknown key \"%s\" (a condition has "
                                    "arg, op, value and, with &=, mask)",
                                    item, k, key->string);
        }
        if (!cJSON_IsNumber(arg) || !(arg->valuedouble >= 0 && arg->valuedouble <= 5) ||
            arg->valuedouble != (double)(int)arg->valuedouble)
                return fail(c, item, "allow[%zu].args[%zu]: \"arg\" must be an argument index 0-5",
                            item, k);
        index = (int)arg->valuedouble;
        if (*used_args & (1u << index))
                return fail(c, item,
                            "allow[%zu].args[%zu]: a second condition on argument %d cannot be "
                            "expressed (seccomp compares each argument once per rule); write "
                            "two rules instead",
                            item, k, index);
        *used_args |= 1u << index;

        if (!cJSON_IsString(op))
                return fail(c, item,
                            "allow[%zu].args[%zu]: \"op\" must be one of == != < <= > >= &=", item,
                            k);
        size_t o;
        for (o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
                if (strcmp(ops[o].name, op->valuestring) == 0)
                        break;
        if (o == sizeof(ops) / sizeof(ops[0]))
                return fail(c, item,
                            "allow[%zu].args[%zu]: unknown op \"%s\" (use one of == != < <= > "
                            ">= &=)",
                            item, k, op->valuestring);
        if (!value || !parse_value(value, &b))
                return fail(c, item,
                            "allow[%zu].args[%zu]: \"value\" must be an integer (a number, or a "
                            "string such as \"0x1f\")",
                            item, k);
        if (ops[o].op == SCMP_CMP_MASKED_EQ) {
                if (!mask || !parse_value(mask, &a))
                        return fail(c, item,
                                    "allow[%zu].args[%zu]: op &= needs an integer \"mask\"", item,
                                    k);
                if ((b & ~a) != 0)
                        return fail(c, item,
                                    "allow[%zu].args[%zu]: value %#" PRIx64
                                    " has bits outside mask %#" PRIx64 " and could never match",
                                    item, k, b, a);
        } else {
                if (mask)
                        return fail(c, item,
                                    "allow[%zu].args[%zu]: \"mask\" goes only with op &=", item, k);
                a = b;
                b = 0;
        }
        *ret = (struct scmp_arg_cmp){
            .arg = (unsigned)index, .op = ops[o].op, .datum_a = a, .datum_b = b};
        return 0;
}

/* Is @name allowed without conditions by an earlier rule of the file? */
static bool allowed_unconditionally(const Policy *p, const char *name)
{
        for (size_t i = 0; i < p->n_extra; i++)
                if (p->extra[i].action == POLICY_ALLOW && p->extra[i].when[0].op == 0 &&
                    strcmp(p->extra[i].syscall, name) == 0)
                        return true;
        return false;
}

/* Is @path @dir or below it? Both are resolved absolute paths. */
static bool path_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        if (n == 1)
                return true; /* "/" */
        return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Kernel file systems: state of the machine or of whoever opens them, not
 * files to parse, wherever they are mounted. */
static const struct {
        unsigned long magic;
        const char *name;
} kernel_fs[] = {
    {PROC_SUPER_MAGIC, "proc"},     {SYSFS_MAGIC, "sysfs"},
    {DEBUGFS_MAGIC, "debugfs"},     {SECURITYFS_MAGIC, "securityfs"},
    {CGROUP_SUPER_MAGIC, "cgroup"}, {CGROUP2_SUPER_MAGIC, "cgroup2"},
    {DEVPTS_SUPER_MAGIC, "devpts"}, {BPF_FS_MAGIC, "bpf"},
    {TRACEFS_MAGIC, "tracefs"},
};

/* Directories below $HOME that hold credentials. */
static const char *const home_secrets[] = {
    ".ssh", ".gnupg", ".aws", ".docker", ".kube", ".config/gcloud", ".password-store",
};

/*
 * Why a policy may not open files below @real (a resolved directory), or
 * NULL when it may. The worker opens these files for the runner, so what
 * depends on the opener (/proc) would show the worker; the rest are the
 * machine's state and the user's secrets. The README's sandbox section
 * lists the same set.
 */
static const char *policyfile_refused_dir(const char *real, char *why, size_t cap)
{
        const char *home = getenv("HOME");
        char home_real[PATH_MAX];
        struct statfs fs;

        if (strcmp(real, "/") == 0)
                return "that is the whole file system";
        if (path_within(real, "/proc"))
                return "/proc shows whoever opens it, and the worker opens the files: the target "
                       "would read the worker's environment, memory and descriptors";
        if (path_within(real, "/sys"))
                return "/sys is the kernel's and the machine's state";
        if (path_within(real, "/dev"))
                return "/dev holds device files (terminals, disks, kernel memory), not data";
        if (path_within(real, "/run"))
                return "/run holds the sockets and runtime secrets of the system's services";
        if (statfs(real, &fs) == 0)
                for (size_t i = 0; i < sizeof(kernel_fs) / sizeof(kernel_fs[0]); i++)
                        if ((unsigned long)fs.f_type == kernel_fs[i].magic) {
                                snprintf(why, cap,
                                         "it is on a %s file system (kernel state, not files)",
                                         kernel_fs[i].name);
                                return why;
                        }
        if (!home || !*home || !realpath(home, home_real) || strcmp(home_real, "/") == 0)
                return NULL;
        if (path_within(home_real, real)) {
                snprintf(why, cap,
                         "it contains your home directory %s, with its keys and credentials; name "
                         "a directory below it",
                         home_real);
                return why;
        }
        for (size_t i = 0; i < sizeof(home_secrets) / sizeof(home_secrets[0]); i++) {
                char secret[PATH_MAX + 32];

                snprintf(secret, sizeof(secret), "%s/%s", home_real, home_secrets[i]);
                if (path_within(real, secret)) {
                        snprintf(why, cap, "~/%s holds credentials", home_secrets[i]);
                        return why;
                }
        }
        return NULL;
}

static int parse_under(Ctx *c, size_t item, const char *syscall, const cJSON *rule,
                       const cJSON *under)
{
        const cJSON *access = cJSON_GetObjectItemCaseSensitive(rule, "access");
        char real[PATH_MAX];
        struct stat st;
        int r;

        if (strcmp(syscall, "openat") != 0 && strcmp(syscall, "open") != 0)
                return fail(c, item,
                            "allow[%zu]: a directory condition (\"under\") cannot be expressed "
                            "for %s: seccomp sees pointers, not the paths they point to; only "
                            "open and openat can be checked (by the worker)",
                            item, syscall);
        if (cJSON_GetObjectItemCaseSensitive(rule, "args"))
                return fail(c, item,
                            "allow[%zu]: \"under\" and \"args\" cannot be combined: the worker "
                            "checks the flags of opens under a directory itself",
                            item);
        if (access && (!cJSON_IsString(access) || strcmp(access->valuestring, "read") != 0))
                return fail(c, item,
                            "allow[%zu]: \"access\" can only be \"read\": files under a "
                            "directory are opened read-only",
                            item);
        if (!cJSON_IsString(under) || under->valuestring[0] != '/')
                return fail(c, item, "allow[%zu]: \"under\" must be an absolute directory path",
                            item);
        /* Judged after resolving: "/etc/../proc", a symlink to /proc or "/"
         * name the same files as /proc itself. */
        if (!realpath(under->valuestring, real)) {
                int e = errno;

                return fail(c, item, "allow[%zu]: \"under\": %s %s", item, under->valuestring,
                            e == ENOENT ? "does not exist (or a symlink on the way is broken)"
                                        : strerror(e));
        }
        if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
                return fail(c, item, "allow[%zu]: \"under\": %s is not a directory", item,
                            under->valuestring);
        char why_buf[PATH_MAX + 128];
        const char *why = policyfile_refused_dir(real, why_buf, sizeof(why_buf));
        if (why) {
                if (strcmp(real, under->valuestring) == 0)
                        return fail(c, item,
                                    "allow[%zu]: \"under\": %s cannot be opened for the "
                                    "target: %s",
                                    item, real, why);
                return fail(c, item,
                            "allow[%zu]: \"under\": %s resolves to %s, which cannot be opened "
                            "for the target: %s",
                            item, under->valuestring, real, why);
        }
        if (allowed_unconditionally(c->policy, "openat") ||
            allowed_unconditionally(c->policy, "open"))
                return fail(c, item,
                            "allow[%zu]: opens are already allowed without conditions by an "
                            "earlier rule, so a directory condition would have no effect",
                            item);

        r = add_dir(c->policy, real);
        if (r < 0)
                return r;
        /* Both open and openat, whichever the rule names: libc picks. */
        static const char *const names[] = {"openat", "open"};
        for (size_t i = 0; i < 2; i++) {
                PolicyRule pr = {
                    .syscall = names[i],
                    .action = POLICY_NOTIFY_OPEN,
                    .when = {{.arg = i == 0 ? 2 : 1,
                              .op = SCMP_CMP_MASKED_EQ,
                              .datum_a = POLICYFILE_WRITE_FLAGS,
                              .datum_b = 0}},
                };
                r = add_extra(c->policy, &pr);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_rule(Ctx *c, size_t item, const cJSON *rule)
{
        PolicyRule pr = {.action = POLICY_ALLOW};
        const cJSON *name = rule, *args = NULL, *under = NULL, *key;
        int nr;

        if (cJSON_IsObject(rule)) {
                cJSON_ArrayForEach(key, rule)
                {
                        if (strcmp(key->string, "syscall") && strcmp(key->string, "args") &&
                            strcmp(key->string, "under") && strcmp(key->string, "access") &&
                            strcmp(key->string, "why"))
                                return fail(c, item,
                                            "allow[%zu]: unknown key \"%s\" (a rule has syscall, "
                                            "and optionally args, under, access, why)",
                                            item, key->string);
                }
                name = cJSON_GetObjectItemCaseSensitive(rule, "syscall");
                args = cJSON_GetObjectItemCaseSensitive(rule, "args");
                under = cJSON_GetObjectItemCaseSensitive(rule, "under");
        } else if (!cJSON_IsString(rule)) {
                return fail(c, item,
                            "allow[%zu]: a rule is a syscall name or an object "
                            "{\"syscall\": ..., \"args\": [...]}",
                            item);
        }
        if (!cJSON_IsString(name) || !*name->valuestring)
                return fail(c, item, "allow[%zu]: \"syscall\" must be a syscall name", item);

        nr = seccomp_syscall_resolve_name(name->valuestring);
        if (nr == __NR_SCMP_ERROR)
                return fail(c, item, "allow[%zu]: unknown syscall \"%s\"", item, name->valuestring);
        for (size_t g = 0; g < policy_n_groups; g++) {
                const PolicyGroup *group = &policy_groups[g];

                if (!group->locked)
                        continue;
                for (size_t i = 0; i < group->n_rules; i++)
                        if (strcmp(group->rules[i].syscall, name->valuestring) == 0)
                                return fail(c, item,
                                            "allow[%zu]: %s cannot be allowed: it is in the "
                                            "locked group \"%s\" (%s)",
                                            item, name->valuestring, group->name, group->reason);
        }
        if (under)
                return parse_under(c, item, name->valuestring, rule, under);
        if (cJSON_GetObjectItemCaseSensitive(rule, "access"))
                return fail(c, item, "allow[%zu]: \"access\" goes only with \"under\"", item);

        if (args) {
                unsigned used = 0;
                size_t k = 0;
                const cJSON *cond;

                if (!cJSON_IsArray(args))
                        return fail(c, item, "allow[%zu]: \"args\" must be an array of conditions",
                                    item);
                if (cJSON_GetArraySize(args) > POLICY_MAX_CONDITIONS)
                        return fail(c, item, "allow[%zu]: at most %d conditions per rule", item,
                                    POLICY_MAX_CONDITIONS);
                cJSON_ArrayForEach(cond, args)
                {
                        int r = parse_condition(c, item, k, cond, &pr.when[k], &used);

                        if (r < 0)
                                return r;
                        k++;
                }
        }
        if (nr < 0)
                return 0; /* known, but not on this architecture */
        if (pr.when[0].op == 0 && c->policy->n_dirs > 0 &&
            (strcmp(name->valuestring, "openat") == 0 || strcmp(name->valuestring, "open") == 0))
                return fail(c, item,
                            "allow[%zu]: %s without conditions would make the directory "
                            "conditions (\"under\") of this file meaningless",
                            item, name->valuestring);
        pr.syscall = name->valuestring;
        return add_extra(c->policy, &pr);
}

int policyfile_apply(const char *name, const char *text, const cJSON *root, Policy *policy,
                     char *err, size_t errlen)
{
        unsigned lines[POLICYFILE_MAX_ITEMS] = {0};
        Policy scratch = {.log = policy->log};
        Ctx c = {
            .name = name,
            .lines = lines,
            .n_lines = POLICYFILE_MAX_ITEMS,
            .err = err,
            .errlen = errlen,
            .policy = &scratch,
        };
        const cJSON *allow, *key, *rule;
        size_t item = 0;
        int r;

        if (text)
                element_lines(text, lines, POLICYFILE_MAX_ITEMS);
        if (!cJSON_IsObject(root))
                return fail(&c, SIZE_MAX,
                            "a policy is a JSON object: {\"allow\": [\"syscall\", ...]}");
        cJSON_ArrayForEach(key, root)
        {
                if (strcmp(key->string, "allow") && strcmp(key->string, "description"))
                        return fail(&c, SIZE_MAX,
                                    "unknown key \"%s\" (a policy has \"allow\" and optionally "
                                    "\"description\")",
                                    key->string);
        }
        allow = cJSON_GetObjectItemCaseSensitive(root, "allow");
        if (!cJSON_IsArray(allow))
                return fail(&c, SIZE_MAX, "\"allow\" must be an array of rules");
        if (cJSON_GetArraySize(allow) > POLICYFILE_MAX_ITEMS)
                return fail(&c, SIZE_MAX, "more than %d rules", POLICYFILE_MAX_ITEMS);

        cJSON_ArrayForEach(rule, allow)
        {
                r = parse_rule(&c, item++, rule);
                if (r < 0)
                        goto fail_scratch;
        }

        /* Moved into @policy only now: a rejected file leaves nothing. */
        /* realloc(p, 0) may return NULL, and memcpy from NULL is undefined
         * even for 0 bytes: an empty side is left alone. */
        size_t n_extra = policy->n_extra + scratch.n_extra;
        PolicyRule *extra =
            n_extra ? realloc(policy->extra, n_extra * sizeof(*extra)) : policy->extra;
        char **dirs = realloc(policy->dirs, (policy->n_dirs + scratch.n_dirs + 1) * sizeof(*dirs));
        if (extra)
                policy->extra = extra;
        if (dirs)
                policy->dirs = dirs;
        if ((n_extra && !extra) || !dirs) {
                r = -ENOMEM;
                goto fail_scratch;
        }
        if (scratch.n_extra && extra) /* extra is set whenever n_extra > 0 (above) */
                memcpy(extra + policy->n_extra, scratch.extra, scratch.n_extra * sizeof(*extra));
        policy->n_extra += scratch.n_extra;
        if (scratch.n_dirs)
                memcpy(policy->dirs + policy->n_dirs, scratch.dirs, scratch.n_dirs * sizeof(*dirs));
        policy->n_dirs += scratch.n_dirs;
        free(scratch.extra);
        free(scratch.dirs);
        return 0;

fail_scratch:
        if (r == -ENOMEM)
                snprintf(err, errlen, "%s: out of memory", name);
        policy_deinit(&scratch);
        return r;
}
