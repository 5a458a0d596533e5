/*
 * What the coordinator makes of the workers' "sandbox" events: in
 * --sandbox log mode, one line per syscall outside the allowlist (once per
 * run, whichever worker saw it first), the list in stats.json, and at the
 * end a policy file that would allow what the target used; in any mode, a
 * warning for each open or exec the worker refused, with its path.
 */
#pragma once

#include <cjson/cJSON.h>

typedef struct SandboxLog SandboxLog;

int sandboxlog_new(SandboxLog **ret);
void sandboxlog_free(SandboxLog *l);

/* One "sandbox" event from a worker. */
void sandboxlog_event(SandboxLog *l, const cJSON *event);

/* Adds "sandbox_log" (the syscalls reported) to @stats, when there are any. */
void sandboxlog_add_stats(const SandboxLog *l, cJSON *stats);

/* Prints the suggested policy, when anything was reported. */
void sandboxlog_summary(const SandboxLog *l);
