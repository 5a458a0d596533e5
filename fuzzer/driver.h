/*
 * The libFuzzer drop-in's entry point: LLVMFuzzerRunDriver, libFuzzer's
 * public API, which the drop-in's main() calls (and which a harness with a
 * main() of its own may call, as with libFuzzer).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef int (*LfUserCallback)(const uint8_t *data, size_t size);

/* Runs the binary as libFuzzer would (argv[1] "__worker": a worker of the
 * engine instead). Returns the process's exit status. */
int LLVMFuzzerRunDriver(int *argc, char ***argv, LfUserCallback cb);
