/*
 * What the coordinator makes of the workers' "sandbox" events: in
 * --sandbox log mode, one line per syscall outside the allowlist (once per
 * run, whichever worker saw it first), the list in stats.json, and at the
 * end a policy file that would allow what the target used; in any mode, a
 * warning for each open or exec the worker refused, with its path.
 */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

typedef struct SandboxLog SandboxLog;

int sandboxlog_new(SandboxLog **ret);
void sandboxlog_free(SandboxLog *l);

/* One "sandbox" event from a worker. */
void sandboxlog_event(SandboxLog *l, const cJSON *event);

/*
 * A runner died of a refusal (a "died" message's death has "refusal", see
 * sandbox_describe_refusal): counted under its class. Returns the command
 * that has workers refuse the class quietly from now on
 * ({"type": "quiet_refusal", "refusal": ...}; the caller frees it), or NULL;
 * *@ret_first says whether the class is new to this run (then every worker
 * should get it, else only the one whose runner died: a restarted worker).
 * The first time, prints the class and the policy file rule that would
 * allow it.
 */
cJSON *sandboxlog_refusal(SandboxLog *l, const cJSON *died, bool *ret_first);

/* Adds "sandbox_log" (the syscalls reported) and "sandbox_refusals" (each
 * refusal class: "key", "rule" or "no_rule", "runner_deaths", "quiet": how
 * many more were refused without killing a runner) to @stats, when there are
 * any. */
void sandboxlog_add_stats(const SandboxLog *l, cJSON *stats);

/* Prints the suggested policy, when anything was reported. */
void sandboxlog_summary(const SandboxLog *l);
