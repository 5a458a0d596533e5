/*
 * `snapfuzz merge` and the drop-in's -merge=1: keeps the smallest set of
 * inputs with the coverage of all of them (engine_merge in
 * include/snapfuzz/engine.h says what and how; engine/merge.c how).
 */
#pragma once

#include "snapfuzz/engine.h"

/* engine_merge. */
int merge_run(const SfMergeConfig *cfg, SfMergeResult *ret);
