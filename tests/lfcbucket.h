/*
 * ClusterFuzz's crash bucketing, re-expressed in C for the tests: the
 * crash type and the first frames of the crash state its stack parser
 * (google/clusterfuzz src/clusterfuzz/stacktraces/__init__.py
 * StackParser.parse, regexes from stacktraces/constants.py) gives the
 * output of a libFuzzer-compatible binary.
 */
#pragma once

#include <stdbool.h>

typedef struct LfcBucket {
        char type[128];
        char frames[3][128]; /* the first three frames kept for the state */
        int nframes;
} LfcBucket;

/* Buckets @out (a whole run's output). @has_fuzz_frame tells whether a
 * frame named LLVMFuzzerTestOneInput was seen. */
void lfc_bucket(const char *out, LfcBucket *b, bool *has_fuzz_frame);
