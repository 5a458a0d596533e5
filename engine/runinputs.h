/*
 * Single-input runs: `snapfuzz run target.so FILE...` and the drop-in's
 * file arguments (engine_run_inputs in include/snapfuzz/engine.h): each
 * file runs once in a fresh runner, through the same worker, runner and
 * sandbox code as fuzzing and `reproduce`, and a crash is classified and
 * shown as `reproduce` shows it.
 */
#pragma once

#include "snapfuzz/engine.h"

/* engine_run_inputs. */
int runinputs_run(const SfRunConfig *cfg, char *const *files, int n_files);
