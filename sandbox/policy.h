/*
 * The seccomp policy as data: named groups of syscall rules, each group with
 * one line saying why, and one function that turns a policy into a
 * libseccomp filter. Internal to sandbox/ (and its tests); the rest of
 * snapfuzz sees only sandbox/sandbox.h.
 *
 * The built-in table has two kinds of groups:
 * - allowed groups: the allowlist, what an in-process parse loop needs;
 * - refused groups: syscalls the filter refuses (they are simply not
 *   allowed, or allowed only under conditions), named so that a report can
 *   say why, and so that a policy file cannot allow the ones that would let
 *   the target get around the sandbox (`locked`).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <seccomp.h>

/* What the filter does with a syscall a rule matches. */
typedef enum PolicyAction {
        /* SIGSYS in the runner, which reports it (crash kind `sandbox`). */
        POLICY_TRAP = 0,
        /* Fails with ENOSYS, so libc falls back to an older, checkable
         * syscall. */
        POLICY_ENOSYS,
        POLICY_ALLOW,
        /* The worker opens the file for the runner (a policy file's
         * directories). */
        POLICY_NOTIFY_OPEN,
        /* Refused by the worker rather than by a trap, so that it is
         * reported with its name even when the caller blocks SIGSYS
         * (posix_spawn, system and popen block every signal around clone).
         * Without a worker to ask, it traps. */
        POLICY_NOTIFY_REFUSE,
} PolicyAction;

#define POLICY_MAX_CONDITIONS 6

/*
 * Stands for the runner's own pid in a condition. The pid is known only
 * after fork; sandbox_apply() replaces this constant in the compiled BPF
 * program. It is above PID_MAX_LIMIT (2^22), so no real pid equals it.
 */
#define POLICY_SELF_PID UINT32_C(0x5ec0f1d0)

/* Stands for the runner's end of the supervisor's socket, patched the same
 * way (-1, which matches no descriptor, without a supervisor). Above the
 * kernel's limit on descriptor numbers. */
#define POLICY_SELF_CTL UINT32_C(0x5ec0f1d1)

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
        bool allowed;        /* an allowlist group (else: refused, for reports) */
        bool locked;         /* refused, and a policy file may not allow it */
        const PolicyRule *rules;
        size_t n_rules;
} PolicyGroup;

/* The built-in table. A syscall appears in at most one allowed group and at
 * most one refused group. */
extern const PolicyGroup policy_groups[];
extern const size_t policy_n_groups;

/* A policy in force: the built-in allowlist plus what a policy file adds. */
typedef struct Policy {
        /* false: anything not allowed traps (strict). true: it is reported
         * to the worker, which lets it run (--sandbox log). */
        bool log;
        /* A policy file's rules (POLICY_ALLOW or POLICY_NOTIFY_OPEN); the
         * Policy owns their syscall name strings. */
        PolicyRule *extra;
        size_t n_extra;
        char **dirs; /* real paths of the directories read-only opens may reach */
        size_t n_dirs;
        /* A sanitizer runtime is loaded: its reports read /proc/self/maps,
         * which the worker opens for the runner (read-only opens go to the
         * worker, as with directories). */
        bool sanitizer;
        /* The system files every runner may read (sandbox/sysfiles.h) go to
         * the worker: open and openat are sent to it whatever their flags
         * (it refuses what the table does not allow), unless a policy file
         * allows them outright. */
        bool system_files;
        /* Refusal classes already reported, sent to the worker to be
         * refused quietly (POLICY_NOTIFY_REFUSE; sandbox/refusal.h). The
         * syscall names are not owned. */
        PolicyRule *quiet;
        size_t n_quiet;
        /* The program for a leak check (LeakSanitizer's stop-the-world):
         * also allows what its tracer needs, with ptrace limited to the
         * runner's own pid (policy.c, leak_check_rules). */
        bool leak_check;
} Policy;

/* Whether opens go to the worker (policy directories, the system files, or
 * a sanitizer's /proc/self/maps). */
bool policy_opens_notify(const Policy *policy);

void policy_deinit(Policy *p);

/* The native syscall number @rule refers to, or -1 when the syscall does not
 * exist on this architecture (or is unknown to libseccomp and has no
 * generic_nr). */
int policy_rule_nr(const PolicyRule *rule);

/*
 * Turns @policy into a libseccomp filter for the native architecture. A
 * syscall from any other ABI (i386 int 0x80, x32 on x86_64) traps. With
 * @notify, rules that ask the worker (POLICY_NOTIFY_*) notify; without, the
 * filter needs no worker: those rules trap (strict mode only). The caller
 * owns *@ret (seccomp_release). Returns 0 or a negative errno.
 */
int policy_compile(const Policy *policy, bool notify, scmp_filter_ctx *ret);

/* The refused group that names native syscall @nr, or NULL. */
const PolicyGroup *policy_find_refused(int nr);

/* The allowed group that has a rule for native syscall @nr, or NULL. */
const PolicyGroup *policy_find_allowed(int nr);

/* The name the table uses for native syscall @nr, or NULL: how syscalls
 * newer than libseccomp get a name. */
const char *policy_find_name(int nr);
