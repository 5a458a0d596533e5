/*
 * The seccomp policy as data: named groups of syscall rules, each group with
 * one line saying why, and one function that turns a policy into a
 * libseccomp filter. Internal to sandbox/ (and its tests); the rest of
 * snapfuzz sees only sandbox/sandbox.h.
 */
#pragma once

#include <stddef.h>

#include <seccomp.h>

/* What the filter does with a syscall a rule matches. */
typedef enum PolicyAction {
        POLICY_TRAP = 0, /* SIGSYS in the runner, which reports it (crash kind `sandbox`) */
        POLICY_ENOSYS,   /* fails with ENOSYS, so libc falls back to an older, checkable syscall */
        POLICY_ALLOW,    /* runs (only meaningful in a policy whose default is not ALLOW) */
} PolicyAction;

#define POLICY_MAX_CONDITIONS 2

/* One rule: a syscall, the conditions on its arguments that must all hold
 * (none: always), and the action. Several rules for one syscall are
 * alternatives. */
typedef struct PolicyRule {
        const char *syscall; /* name on the native architecture */
        /* Number in the unified syscall table (424 and up, the same on all
         * but a few architectures) for syscalls newer than the libseccomp we
         * build against; 0 when the name is enough. */
        int generic_nr;
        PolicyAction action;
        /* Conditions; an entry with .op == 0 ends the list. At most one
         * condition per argument (a libseccomp limit). */
        struct scmp_arg_cmp when[POLICY_MAX_CONDITIONS];
} PolicyRule;

typedef struct PolicyGroup {
        const char *name;    /* "process creation" */
        const char *reason;  /* "a runner never starts programs ..." */
        const char *summary; /* name ": " reason, for crash reports */
        const PolicyRule *rules;
        size_t n_rules;
} PolicyGroup;

typedef struct Policy {
        PolicyAction default_action; /* for syscalls no rule matches */
        const PolicyGroup *groups;
        size_t n_groups;
} Policy;

/* The policy of SANDBOX_STRICT. A syscall appears in at most one group. */
extern const Policy policy_strict;

/* The native syscall number @rule refers to, or -1 when the syscall does not
 * exist on this architecture (or is unknown to libseccomp and has no
 * generic_nr). */
int policy_rule_nr(const PolicyRule *rule);

/* Turns @policy into a libseccomp filter for the native architecture. A
 * syscall from any other ABI (i386 int 0x80, x32 on x86_64) traps. The
 * caller owns *@ret (seccomp_release). Returns 0 or a negative errno. */
int policy_compile(const Policy *policy, scmp_filter_ctx *ret);

/* The group that has a rule for native syscall @nr, or NULL. */
const PolicyGroup *policy_find_group(const Policy *policy, int nr);

/* The name the policy uses for native syscall @nr, or NULL: how syscalls
 * newer than libseccomp get a name. */
const char *policy_find_name(const Policy *policy, int nr);
