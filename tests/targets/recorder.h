/*
 * The shared file the recorder test target writes (tests/targets/recorder.c)
 * and a test reads: per process, the last RECORDER_RING inputs it passed to
 * LLVMFuzzerTestOneInput, each labelled with the iteration snapfuzz's replay
 * record said was running, so the test can tell exactly which input a
 * killed runner was executing and compare it with what snapfuzz recovers.
 *
 * The test creates the file and names it in SNAPFUZZ_TEST_RECORD; the target
 * sizes it to sizeof(RecorderShm) and maps it shared before the sandbox is in
 * place, so every runner forked from the worker writes to the same pages.
 *
 * Lanes: each process that calls the target claims a lane of its own at its
 * first call (round robin over RECORDER_LANES), so the recovery helper's
 * verification runs, which load the same target and record into the same
 * file, never overwrite the calls of the runner they verify. Call n
 * (1-based, counted per process: a runner forked from the initialized worker
 * starts again at 0) goes to its lane's ring[n % RECORDER_RING].
 *
 * Labels: in LLVMFuzzerInitialize the recorder finds the worker's replay
 * record (the shared mapping named "snapfuzz-record", include/snapfuzz/
 * record.h), which every runner inherits at the same address. On entry to
 * each call it copies the record's batch_id, count and iters into the slot:
 * the runner sets count to k before it calls the target with iteration k
 * and leaves it there for the reruns of k, so (batch_id, count) names the
 * iteration the bytes belong to. The test never uses the record for the
 * bytes, only to label them.
 *
 * Each slot is a seqlock: seq is odd while the slot is being written and
 * even when the copy is complete. `returned` is set when the call returns.
 * The header's pid and lane are those of the latest call that started.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define RECORDER_ENV "SNAPFUZZ_TEST_RECORD"
#define RECORDER_MAGIC UINT64_C(0x3244524f43455246) /* "FRECORD2" little-endian */
#define RECORDER_RING 8u
#define RECORDER_LANES 16u
#define RECORDER_MAX_DATA 4096u

typedef struct RecorderSlot {
        uint64_t seq;      /* odd while being written */
        uint64_t n;        /* the process's call this slot holds */
        uint64_t len;      /* the input's real length; data holds at most RECORDER_MAX_DATA */
        uint64_t batch_id; /* the replay record's batch_id when the call began */
        uint64_t count;    /* ... its count: the iteration the input is */
        uint64_t iters;    /* ... the batch's iterations */
        uint64_t labelled; /* 1: the three above come from a replay record */
        uint64_t returned; /* 1 once the call returned */
        uint8_t data[RECORDER_MAX_DATA];
} RecorderSlot;

typedef struct RecorderLane {
        int64_t pid; /* the process that claimed the lane */
        uint64_t n;  /* calls it made; the latest is in ring[n % RECORDER_RING] */
        RecorderSlot ring[RECORDER_RING];
} RecorderLane;

typedef struct RecorderShm {
        uint64_t magic;            /* RECORDER_MAGIC once a process has mapped the file */
        int64_t pid;               /* getpid() of the process that made the latest call */
        uint64_t lane;             /* that process's lane */
        uint64_t inits;            /* LLVMFuzzerInitialize calls that mapped this file */
        uint64_t claimed;          /* lanes claimed so far (the next is claimed % RECORDER_LANES) */
        uint64_t unlabelled_inits; /* initializations that found no replay record */
        uint64_t pad[2];
        RecorderLane lanes[RECORDER_LANES];
} RecorderShm;

_Static_assert(sizeof(RecorderSlot) == 64 + RECORDER_MAX_DATA, "RecorderSlot has no padding");
_Static_assert(offsetof(RecorderShm, lanes) == 64, "RecorderShm header layout");
_Static_assert(sizeof(RecorderShm) == 64 + RECORDER_LANES * sizeof(RecorderLane),
               "RecorderShm has no padding");

#define RECORDER_FILE_SIZE sizeof(RecorderShm)
