/*
 * The Sandbox object's layout, shared by the files of sandbox/ (sandbox.c,
 * isolate.c, supervisor.c) and nothing else.
 */
#pragma once

#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/policy.h"
#include "sandbox/refusal.h"
#include "sandbox/sandbox.h"
#include "sandbox/sysfiles.h"

/* Syscall numbers up to this bound get a cached name and a log bit. Native
 * numbers on every architecture snapfuzz runs on are far below it. */
#define SANDBOX_NR_LIMIT 1024

/* Where POLICY_SELF_PID may appear in the program (kill, tgkill). */
#define SANDBOX_MAX_PID_PATCHES 8

/* Tasks (the worker, its runner and their threads) a user namespace may
 * hold: RLIMIT_NPROC counts per user and namespace. */
#define SANDBOX_MAX_TASKS 256

/* A compiled BPF program and where the runner's pid goes in it. */
typedef struct SandboxProgram {
        struct sock_fprog prog; /* .filter owned; .len == 0: none */
        size_t pid_patch[SANDBOX_MAX_PID_PATCHES];
        size_t n_pid_patches;
        size_t ctl_patch[SANDBOX_MAX_PID_PATCHES];
        size_t n_ctl_patches;
} SandboxProgram;

struct Sandbox {
        SandboxMode mode;
        Policy policy;
        char *policy_json;        /* the policy file's rules as compact JSON, or NULL */
        unsigned memory_limit_mb; /* from SandboxOptions */
        bool no_namespaces;

        /* The program used with a supervisor (log mode, and strict mode
         * normally), and the one that needs none (strict mode only): it
         * traps what the other sends to the worker. Empty in SANDBOX_OFF
         * mode. */
        SandboxProgram notify;
        SandboxProgram trap;
        /* The notify program plus LeakSanitizer's needs, for leak checks;
         * compiled only when leak checks were asked for and a sanitizer
         * runtime is loaded. */
        SandboxProgram leak;
        bool leak_wanted;

        /* Set by sandbox_prepare(), in the worker. */
        bool prepared;
        bool namespaces;
        bool sanitizer;
        int root_fd;                  /* the empty root runners chroot into, or -1 */
        uint64_t address_space_limit; /* RLIMIT_AS of runners; 0: none */
        int *dir_fds;                 /* O_PATH descriptors of policy.dirs */
        SysFiles *sysfiles;           /* the system files' directories (strict, log) */

        /* The runner's end of the supervisor's socket during a batch, -1
         * when there is no supervisor (set by sandbox_supervisor_new). */
        int child_fd;

        /* Refusal classes reported already (sandbox_quiet): refused with
         * an errno and counted; the counts not yet sent. */
        Refusal *quiet;
        uint64_t *quiet_pending;
        size_t n_quiet;
        int64_t quiet_sent_ms;
        /* The supervisor's last refusal in the current runner, for
         * sandbox_describe_refusal(): the path the call named. */
        int last_nr;
        bool last_has_path;
        char last_path[PATH_MAX];

        /* Log mode: syscalls already reported by this worker. */
        uint8_t logged[SANDBOX_NR_LIMIT / 8];
};

/* (Re)compiles the programs of @s from s->policy. 0 or a negative errno. */
int sandbox_compile_programs(Sandbox *s);

/* The worker's pid, as the runner saw it in sandbox_apply(): a SIGSYS
 * queued by this pid comes from the supervisor. */
extern pid_t sandbox_worker_pid;
