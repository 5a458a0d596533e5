/*
 * The runner's confinement. A Sandbox is built once per worker:
 *
 *   worker                                 runner (fork of the worker)
 *   sandbox_new_with()   compile the filter
 *   (load the target, LLVMFuzzerInitialize)
 *   sandbox_prepare()    namespaces, empty root
 *   per batch: sandbox_supervisor_new()
 *              fork() ───────────────────▶ sandbox_isolate()  group, root, fds
 *                                          (set up the loop)
 *                                          sandbox_apply()    rlimits, no_new_privs,
 *                                                             filter (+ listener)
 *              supervise (supervisor.h)    run the target
 *
 * The filter is an allowlist (sandbox/policy.c). In strict mode any other
 * syscall raises SIGSYS in the runner (SECCOMP_RET_TRAP), whose handler
 * records the syscall number and arguments in the replay record's death
 * area; the runner then dies by SIGSYS and the crash is reported with kind
 * `sandbox`. In log mode such syscalls go to the worker instead, which
 * reports each distinct one once and lets it run. A policy file adds
 * syscalls, with conditions, or read-only opens under a directory (the
 * worker opens those files for the runner).
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cJSON;

typedef enum SandboxMode {
        SANDBOX_STRICT = 0, /* anything not allowed kills the runner and is reported */
        SANDBOX_OFF = 1,    /* no filter, no namespaces (rlimits, no_new_privs, fd closing stay) */
        SANDBOX_LOG = 2,    /* anything not allowed runs, and is reported once per syscall */
} SandboxMode;

typedef struct SandboxOptions {
        SandboxMode mode;
        /* A policy file's rules, as sandbox_policy_load() returned them, or
         * NULL. Not allowed with SANDBOX_OFF. */
        const char *policy_json;
        /* The run's --rss-limit-mb (0: none): the address-space limit of a
         * runner is derived from it (max(8 GiB, 4 x the RSS limit)), unless a
         * sanitizer that reserves shadow memory is loaded. */
        unsigned memory_limit_mb;
        /* Do not use namespaces even where the kernel allows them. */
        bool no_namespaces;
        /* Prepare the program for leak checks (sandbox_apply_leak_check),
         * used when a sanitizer runtime with LeakSanitizer is loaded. */
        bool leak_check;
} SandboxOptions;

typedef struct Sandbox Sandbox;

/* Compiles the policy for @o on the native architecture into @ret. On
 * failure returns a negative errno and, when @err is not NULL, one line for
 * a person. */
int sandbox_new_with(Sandbox **ret, const SandboxOptions *o, char *err, size_t errlen);
/* sandbox_new_with() with only a mode. */
int sandbox_new(Sandbox **ret, SandboxMode mode);
void sandbox_free(Sandbox *s);

/*
 * In the worker, once, after the target is initialized and before the first
 * runner: moves the worker into new user, network, IPC and mount namespaces
 * where the kernel allows it without privileges (runners inherit them, so
 * an allowed syscall sees no network and no IPC objects of the host), and
 * prepares an empty read-only root that runners chroot into. Without user
 * namespaces the rest of the sandbox still applies. Also opens the policy
 * file's directories, and looks for a sanitizer runtime. Returns 0 or a
 * negative errno (a policy directory that cannot be opened).
 */
int sandbox_prepare(Sandbox *s);
/* Whether sandbox_prepare() got namespaces. */
bool sandbox_has_namespaces(const Sandbox *s);

/*
 * In a freshly forked runner, first thing: a process group of its own (the
 * worker kills the whole group when the runner ends), the empty root, no
 * capabilities, and every file descriptor closed but 1 and 2 (the runner's
 * output pipe), the supervisor's socket and @keep_fd (the worker's control
 * socket, or -1). Allocates nothing. Returns 0 or a negative errno (the
 * runner must not run the target then).
 */
int sandbox_isolate(const Sandbox *s, int keep_fd);

/*
 * In the runner, the last step before the target runs: RLIMIT_CORE 0,
 * RLIMIT_FSIZE 0, RLIMIT_NPROC (in a user namespace, where it counts only
 * the runner's own tasks), RLIMIT_AS (see SandboxOptions),
 * PR_SET_NO_NEW_PRIVS, then the filter, with the runner's pid patched in;
 * with a supervisor, hands the notification listener to the worker.
 * Allocates nothing. Returns 0 or a negative errno (the runner must not run
 * the target if this fails).
 */
int sandbox_apply(const Sandbox *s);

/*
 * sandbox_apply() for a runner that ends with a LeakSanitizer check: the
 * same limits and filter, plus what the check's tracer needs (a clone that
 * shares the runner's memory, ptrace of the runner's own pid, a listing of
 * /proc/<runner>/task through the worker). Needs a supervisor that was
 * told so (sandbox_supervisor_allow_leak_check). -ENOTSUP when the sandbox
 * has no such program (no sanitizer runtime, leak checks not asked for),
 * and in off mode it is sandbox_apply().
 */
int sandbox_apply_leak_check(const Sandbox *s);
/* Whether sandbox_apply_leak_check() can work. */
bool sandbox_can_check_leaks(const Sandbox *s);

/* "strict" / "log" / "off" <-> SandboxMode. parse returns 0 or -EINVAL. */
int sandbox_mode_parse(const char *s, SandboxMode *ret);
const char *sandbox_mode_name(SandboxMode m);

/* The name of syscall @nr on the native architecture, or NULL. */
const char *sandbox_syscall_name(int nr);

/* Why syscall @nr is refused: the policy group's name and reason, for crash
 * reports ("process creation: a runner never starts programs"), a generic
 * line for a syscall no group names, NULL for one that is always allowed. */
const char *sandbox_syscall_group(int nr);

/*
 * The blocked syscall a SIGSYS names: si_syscall for a seccomp trap, or the
 * number the worker's supervisor sends when it refuses a syscall it was
 * asked about. -1 for any other SIGSYS. Async-signal-safe, for the
 * runner's handler.
 */
int sandbox_sigsys_syscall(const siginfo_t *si);

/*
 * Reads and checks policy file @path. On success *@ret_json is the policy
 * as compact JSON (for workers and crash.json; the caller frees it). On
 * failure returns -EINVAL (or another negative errno) and one line naming
 * the place in the file in @err.
 */
int sandbox_policy_load(const char *path, char **ret_json, char *err, size_t errlen);

/*
 * Checks a policy given as JSON text (sandbox_policy_load's result, or one
 * stored in a crash.json, which is untrusted) as the worker will apply it,
 * and that none of its directories is, contains or lies below @out_dir
 * (the campaign's output directory, which need not exist yet; NULL: no
 * such check). @name is how messages name the policy. Returns 0, or
 * -EINVAL (-ENOMEM) with one line in @err.
 */
int sandbox_policy_check(const char *name, const char *policy_json, const char *out_dir, char *err,
                         size_t errlen);

/*
 * Refusals as findings. In a runner's "death" object (with "syscall", the
 * number of the refused syscall, and "syscall_args"), adds "refusal": its
 * class ("key": "openat /etc read", "socket", "ioctl 0x5413"), the path an
 * open named, and the policy file's rule that would allow it ("rule"), or
 * why none can ("no_rule"), and whether sandbox_quiet() can take the class
 * ("quietable"). Does nothing for other deaths.
 */
void sandbox_describe_refusal(Sandbox *s, struct cJSON *death);

/*
 * From now on (in runners started after this call, and in the current one
 * for the refusals the worker makes), calls of the class @refusal (a
 * "refusal" object as above) fail with an errno (EACCES for opens, EPERM
 * otherwise) instead of killing the runner, and are counted: "quiet" events
 * {"event": "quiet", "key", "count"} go to the supervisor's callback, at
 * most every quarter second and when the runner ends. Nothing is allowed
 * that was not. Strict mode only. Returns 0, -EEXIST (known already),
 * -ENOTSUP (the filter cannot tell the class from allowed calls: it keeps
 * trapping), -EINVAL or -ENOMEM.
 */
int sandbox_quiet(Sandbox *s, const struct cJSON *refusal);

/* What confines the runners, for reports and crash.json: {"mode", "policy",
 * "namespaces", "root", "rlimits", ...}. NULL on allocation failure. */
struct cJSON *sandbox_describe(const Sandbox *s);
