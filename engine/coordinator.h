/*
 * The coordinator of `snapfuzz run`: one event loop over the workers'
 * event pipes, the recovery helper's pipe and a signalfd. It owns the
 * corpus, the shared coverage map, the status line and stats.json; the
 * batches it hands out come from the schedule (engine/schedule.h); it hands
 * every dead runner's record to the recovery helper.
 */
#pragma once

#include "snapfuzz/engine.h"

/* engine_run (include/snapfuzz/engine.h): an ENGINE_RUN_* outcome or a
 * negative errno, after one line for a person. */
int coordinator_run(SfRunConfig *cfg);
