/*
 * What a run is about to do without, said before it starts (engine/
 * instrcheck.c): a target with no coverage instrumentation, and a
 * --malloc-limit-mb nothing can enforce.
 */
#pragma once

#include <stddef.h>

#include "snapfuzz/engine.h"

/* Checks @cfg's target, loaded by a worker that reported @target_counters
 * coverage counters of the target's own. Prints one warning line per
 * problem; returns 0, or -ENOEXEC after one error line when
 * cfg->require_coverage and the target has no coverage instrumentation. */
int instrcheck_run(const SfRunConfig *cfg, size_t target_counters);

/* The malloc-limit half alone, for the commands that replay a stored crash
 * under its limits (reproduce, minimize): one warning line when
 * @malloc_limit_mb is in force for @target and the shim that enforces it
 * cannot be found. */
void instrcheck_malloc_limit(const char *target, unsigned malloc_limit_mb, unsigned rss_limit_mb);
