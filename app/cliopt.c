/*
 * Option values and option errors of the snapfuzz commands: every bad value
 * or option gets one line naming it and what it takes, and the command
 * exits with SF_EXIT_USAGE.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/cliopt.h"
#include "core/log.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

int cliopt_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
        char *end;
        unsigned long long v;

        errno = 0;
        if (!*s || *s == '-')
                goto bad;
        v = strtoull(s, &end, 10);
        if (errno || *end || v < min || v > max)
                goto bad;
        *ret = v;
        return 0;
bad:
        if (min == 0 && max == UINT64_MAX)
                log_error("%s takes a whole number, not '%s'", opt, s);
        else
                log_error("%s takes a whole number from %llu to %llu, not '%s'", opt,
                          (unsigned long long)min, (unsigned long long)max, s);
        return -EINVAL;
}

int cliopt_seconds(const char *opt, const char *s, double min, double max, double *ret)
{
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || !*s || *end || !(v >= min && v <= max)) {
                log_error("%s takes a number of seconds from %g to %g, not '%s'", opt, min, max, s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int cliopt_bad_in(int c, char **argv, const struct option *opts, const char *cmd)
{
        const char *arg = argv[optind - 1];
        if (c == ':') {
                log_error("%s needs a value; see snapfuzz %s --help", arg, cmd);
                return SF_EXIT_USAGE;
        }
        /* getopt_long takes any unique prefix of a long option; a prefix of
         * several is ambiguous, which is not the same as unknown. */
        if (strncmp(arg, "--", 2) == 0) {
                const char *name = arg + 2;
                size_t n = strcspn(name, "=");
                char list[512] = "";
                int matches = 0;
                for (const struct option *o = opts; o->name; o++) {
                        if (n == 0 || strncmp(o->name, name, n) != 0)
                                continue;
                        size_t used = strlen(list);
                        snprintf(list + used, sizeof(list) - used, "%s--%s", matches ? ", " : "",
                                 o->name);
                        matches++;
                }
                if (matches > 1) {
                        log_error("ambiguous option --%.*s: it could be %s; spell it out", (int)n,
                                  name, list);
                        return SF_EXIT_USAGE;
                }
        }
        log_error("unknown option %s; see snapfuzz %s --help", arg, cmd);
        return SF_EXIT_USAGE;
}

int cliopt_sandbox_take(int c, const char *arg, CrashconfTrust *t, CliSandbox *s)
{
        SandboxMode m;

        switch (c) {
        case CLIOPT_SANDBOX:
                if (sandbox_mode_parse(arg, &m) < 0) {
                        log_error("--sandbox takes 'strict', 'log' or 'off', not '%s'", arg);
                        return SF_EXIT_USAGE;
                }
                t->sandbox = sandbox_mode_name(m);
                return 1;
        case CLIOPT_SANDBOX_POLICY:
                s->policy_path = arg;
                return 1;
        case CLIOPT_TRUST_RECORD:
                t->trust_record = true;
                return 1;
        default:
                return 0;
        }
}

int cliopt_sandbox_finish(CrashconfTrust *t, CliSandbox *s, const char *out_dir)
{
        char err[1024];

        if (!s->policy_path)
                return 0;
        if (t->sandbox && strcmp(t->sandbox, "off") == 0) {
                log_error("--sandbox-policy has no effect with --sandbox off");
                return SF_EXIT_USAGE;
        }
        if (sandbox_policy_load(s->policy_path, &s->policy_json, err, sizeof(err)) < 0 ||
            sandbox_policy_check(s->policy_path, s->policy_json, out_dir, err, sizeof(err)) < 0) {
                log_error("%s", err);
                free(s->policy_json);
                s->policy_json = NULL;
                return SF_EXIT_USAGE;
        }
        t->policy_json = s->policy_json;
        return 0;
}
