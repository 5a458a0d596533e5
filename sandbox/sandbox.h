/*
 * The runner's confinement: a seccomp filter built from a policy table
 * (sandbox/policy.c), plus no_new_privs and rlimits. The filter is compiled
 * to BPF once, in the worker, by sandbox_new(); each runner forked from the
 * worker only calls sandbox_apply(), which allocates nothing and costs a
 * handful of syscalls.
 *
 * A blocked syscall raises SIGSYS in the runner (SECCOMP_RET_TRAP), whose
 * handler records the syscall number and arguments in the replay record's
 * death area; the runner then dies by SIGSYS and the crash is reported with
 * kind `sandbox`. The filter also refuses to let the target replace the
 * SIGSYS handler.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum SandboxMode {
        SANDBOX_STRICT = 0, /* blocked syscalls kill the runner and are reported */
        SANDBOX_OFF = 1,    /* no seccomp filter (rlimits and no_new_privs still apply) */
} SandboxMode;

typedef struct Sandbox Sandbox;

/* Compiles the policy for @mode on the native architecture into @ret.
 * Returns 0 or a negative errno. */
int sandbox_new(Sandbox **ret, SandboxMode mode);
void sandbox_free(Sandbox *s);

/* In a freshly forked runner: RLIMIT_CORE 0, RLIMIT_FSIZE 0,
 * PR_SET_NO_NEW_PRIVS, then the filter. Allocates nothing. Returns 0 or a
 * negative errno (the runner must not run the target if this fails). */
int sandbox_apply(const Sandbox *s);

/* "strict" / "off" <-> SandboxMode. parse returns 0 or -EINVAL. */
int sandbox_mode_parse(const char *s, SandboxMode *ret);
const char *sandbox_mode_name(SandboxMode m);

/* The name of syscall @nr on the native architecture, or NULL. */
const char *sandbox_syscall_name(int nr);

/* Why a blocked syscall is blocked: the policy group's name and reason, for
 * crash reports ("process creation: a runner never starts programs").
 * Returns NULL for a syscall the policy does not block. */
const char *sandbox_syscall_group(int nr);
