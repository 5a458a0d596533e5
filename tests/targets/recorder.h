/*
 * The shared file the recorder test target writes (tests/targets/recorder.c)
 * and a test reads: the last RECORDER_RING inputs a runner passed to
 * LLVMFuzzerTestOneInput, so the test can compare them with what snapfuzz
 * recovers after the runner dies.
 *
 * The test creates the file and names it in SNAPFUZZ_TEST_RECORD; the target
 * sizes it to sizeof(RecorderShm) and maps it shared before the sandbox is in
 * place, so every runner forked from the worker writes to the same pages.
 * One file serves one worker: the ring is not safe for two writers.
 *
 * Call n (1-based, counted per process: a runner forked from the initialized
 * worker starts again at 0) goes to ring[n % RECORDER_RING]. Each slot is a
 * seqlock: seq is odd while the slot is being written and even when it is
 * complete, so a reader that sees the same even seq before and after copying
 * a slot has a consistent copy. A slot whose seq is odd belongs to a call the
 * runner died in the middle of recording. The header's n is published before
 * the slot is written, so it always names the latest call that started.
 *
 * Any process that loads the target with SNAPFUZZ_TEST_RECORD set records
 * into the file, a recovery helper's verification run included; each slot's
 * pid says which process made the call, and inits how many processes
 * initialized the target.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RECORDER_ENV "SNAPFUZZ_TEST_RECORD"
#define RECORDER_MAGIC UINT64_C(0x3144524f43455246) /* "FRECORD1" little-endian */
#define RECORDER_RING 8u
#define RECORDER_MAX_DATA 4096u

typedef struct RecorderSlot {
        uint64_t seq; /* odd while being written */
        uint64_t n;   /* the call this slot holds */
        uint64_t len; /* the input's real length; data holds at most RECORDER_MAX_DATA */
        int64_t pid;  /* the process that made the call */
        uint8_t data[RECORDER_MAX_DATA];
} RecorderSlot;

typedef struct RecorderShm {
        uint64_t magic; /* RECORDER_MAGIC once a process has mapped the file */
        int64_t pid;    /* getpid() of the process that made the latest call */
        uint64_t n;     /* calls made by that process; the latest is in ring[n % RECORDER_RING] */
        uint64_t inits; /* LLVMFuzzerInitialize calls that mapped this file */
        RecorderSlot ring[RECORDER_RING];
} RecorderShm;

_Static_assert(sizeof(RecorderSlot) == 32 + RECORDER_MAX_DATA, "RecorderSlot has no padding");
_Static_assert(offsetof(RecorderShm, ring) == 32, "RecorderShm header layout");
_Static_assert(sizeof(RecorderShm) == 32 + RECORDER_RING * sizeof(RecorderSlot),
               "RecorderShm has no padding");

#define RECORDER_FILE_SIZE sizeof(RecorderShm)
