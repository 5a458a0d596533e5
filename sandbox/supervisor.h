/*
 * The worker's side of a runner's seccomp notifications
 * (SECCOMP_RET_USER_NOTIF), for what a BPF filter cannot do alone:
 * - process creation (strict mode): a trap kills a runner that blocks
 *   SIGSYS before its handler can name the syscall, and system(), popen()
 *   and posix_spawn() block every signal around clone. The supervisor
 *   refuses such calls instead: it queues SIGSYS to the thread (SI_QUEUE,
 *   carrying the syscall number, which the runner's handler records when
 *   the signal is unblocked) and fails the call with EPERM;
 * - log mode: every syscall the allowlist does not allow comes here; the
 *   supervisor reports each distinct one once and lets it run
 *   (SECCOMP_USER_NOTIF_FLAG_CONTINUE: log mode confines nothing);
 * - the system files every runner may read (sysfiles.h): every open and
 *   openat comes here in strict and log mode; the supervisor opens those
 *   files itself, read-only, and installs the descriptor as below, and
 *   refuses any other open as below, with its path;
 * - a policy file's directories: a read-only open/openat comes here; the
 *   supervisor opens the file itself, below the directory
 *   (openat2 RESOLVE_BENEATH), and installs the descriptor in the runner
 *   (SECCOMP_IOCTL_NOTIF_ADDFD). The runner never resolves the path, so
 *   rewriting it after the check changes nothing. An open outside the
 *   directories is refused: the supervisor queues SIGSYS to the thread
 *   (SI_QUEUE, carrying the syscall number, which the runner's handler
 *   records) and fails the call with EACCES.
 *
 * Per batch, in the worker:
 *   sandbox_supervisor_new()      before fork (NULL when not needed)
 *   sandbox_supervisor_started()  after fork, in the parent
 *   poll sandbox_supervisor_fd(); on POLLIN/POLLHUP
 *     sandbox_supervisor_dispatch()
 *   sandbox_supervisor_free()     after the runner is reaped
 */
#pragma once

#include <sys/types.h>

#include <cjson/cJSON.h>

#include "sandbox/sandbox.h"

typedef struct SandboxSupervisor SandboxSupervisor;

/*
 * What the supervisor reports. @event is {"event": "log" | "refused",
 * "syscall": name, "nr": n, "args": ["0x..", ...], "path": "..." (when the
 * syscall takes one), "group": why the strict policy refuses it, "why":
 * (refused only) the reason}. Borrowed for the call.
 */
typedef void (*SandboxEventFn)(void *userdata, const cJSON *event);

/* Before the fork. *@ret is NULL when @s needs no supervisor (off mode).
 * Returns 0 or a negative errno. A runner whose worker cannot take its
 * listener falls back to traps (sandbox.c). */
int sandbox_supervisor_new(SandboxSupervisor **ret, Sandbox *s);

/* Before the fork: this runner ends with a LeakSanitizer check
 * (sandbox_apply_leak_check); its tracer's clone and its listing of
 * /proc/<runner>/task are let through. */
void sandbox_supervisor_allow_leak_check(SandboxSupervisor *sup);

/* In the parent after the fork: the runner's pid and a pidfd for it. */
void sandbox_supervisor_started(SandboxSupervisor *sup, pid_t runner, int pidfd);

/* The descriptor to poll for POLLIN, or -1 (none, or nothing more to come). */
int sandbox_supervisor_fd(const SandboxSupervisor *sup);

/* Handles what is ready on sandbox_supervisor_fd(). Returns 0, or a
 * negative errno when the runner's message was not its listener. */
int sandbox_supervisor_dispatch(SandboxSupervisor *sup, SandboxEventFn fn, void *userdata);

/* NULL is a no-op. */
void sandbox_supervisor_free(SandboxSupervisor *sup);
