/*
 * Triage: turns what a worker reported about a dead runner (its wait
 * status, why the worker killed it, the death area's signal, fault address
 * and symbolized stack) into a crash kind, a human message and a signature.
 * The signature names the top frames of the faulting stack by module and
 * function, never by absolute address, so it survives ASLR and rebuilds of
 * other modules; the crash id is a hash of it, so the same bug found twice
 * gets the same id.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#define CLASSIFY_ID_LEN 17 /* 16 hex digits and a NUL */
#define CLASSIFY_TOP_FRAMES 3

typedef struct Classification {
        char kind[32];
        char message[512];
        char signature[768];
        char id[CLASSIFY_ID_LEN];
        bool is_crash; /* false: the runner was stopped on purpose */
        /* The sanitizer's bug type when a sanitizer's report says what
         * happened ("heap-buffer-overflow", "SEGV", "signed integer
         * overflow"), else "". */
        char bug_type[64];
} Classification;

/* Classifies a worker's "died" event. */
void classify_death(const cJSON *died, Classification *ret);

/* True when a frame (an element of death.frames) belongs to snapfuzz, libc
 * or the dynamic loader rather than to the target: such frames are shown
 * but left out of signatures. */
bool classify_frame_is_runtime(const cJSON *frame);

/* The documented crash kinds (README.md), for `--help`-style listings and
 * validation of stored crashes. */
bool classify_kind_is_known(const char *kind);
