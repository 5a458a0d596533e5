/*
 * Coverage feedback from SanitizerCoverage. The target's counters (one
 * 8-bit hit counter per edge, from -fsanitize-coverage=inline-8bit-counters
 * or our own array for trace-pc-guard) are registered per process when the
 * target loads; coverage_scan() runs after every execution in the runner.
 *
 * The map of what has been seen is shared by every worker of a run
 * (CoverageShared, in a memfd the coordinator creates): one byte per
 * counter holding the hit-count buckets seen so far. A runner that sets a
 * new bit owns the discovery (the update is an atomic OR), so two workers
 * never both report the same new feature.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COVERAGE_MAX_COUNTERS (1u << 24)
#define COVERAGE_MAGIC UINT64_C(0x5347524556434653) /* "SFCVRGS" */

typedef struct CoverageShared {
        uint64_t magic;
        uint64_t features; /* (counter, bucket) pairs seen */
        uint64_t edges;    /* counters ever non-zero */
        uint64_t counters; /* counters the target registered (first worker to load sets it) */
        uint64_t pad[4];
        uint8_t seen[COVERAGE_MAX_COUNTERS];
} CoverageShared;

/* Creates an anonymous shared map (memfd) sized for CoverageShared and
 * initialized. Returns the fd or -errno. */
int coverage_shared_create(void);
/* Maps the map at @fd read-write. Returns 0 or -errno. */
int coverage_shared_map(int fd, CoverageShared **ret);
void coverage_shared_unmap(CoverageShared *s);

/* Registration, called from the SanitizerCoverage callbacks while the
 * target loads (worker/sancov.c). */
void coverage_register_counters(uint8_t *start, uint8_t *stop);
void coverage_register_pcs(const uintptr_t *start, const uintptr_t *stop);
void coverage_register_guards(uint32_t *start, uint32_t *stop);
/* Counters of snapfuzz's own feedback maps (core/cmplog.h): their buckets
 * are features like any counter's, but they are not edges of the target,
 * so they do not count in CoverageShared.edges. Registered after every
 * counter of the target. */
void coverage_register_features(uint8_t *start, uint8_t *stop);
/* The same for a map whose writer marks each 64-counter block it writes in
 * @touched (bit b % 64 of word b / 64 for block b): scans read only the
 * marked blocks and unmark them, so a large map that an input touches in
 * a few places costs a few blocks, not its size. Every block not marked
 * must be zero. */
void coverage_register_sparse_features(uint8_t *start, uint8_t *stop, uint64_t *touched);

/* The counter array that trace-pc-guard callbacks increment. */
extern uint8_t *coverage_guard_counters;

/* The map trace-pc callbacks (gcc's -fsanitize-coverage=trace-pc, which has
 * no counters of its own) hash edges into: 64 Ki counters, as AFL's map.
 * Edges are hashed from code offsets from coverage_tracepc_base (the
 * target's load address), so every worker puts an edge in the same
 * counter whatever address the target was loaded at. */
#define COVERAGE_TRACEPC_BITS 16u
#define COVERAGE_TRACEPC_COUNTERS (1u << COVERAGE_TRACEPC_BITS)
extern uint8_t coverage_tracepc_counters[COVERAGE_TRACEPC_COUNTERS];
extern uintptr_t coverage_tracepc_base;
/* Registers the trace-pc map as the target's counters (once; a target
 * that calls __sanitizer_cov_trace_pc), edges hashed relative to @base. */
void coverage_register_tracepc(uintptr_t base);

/* Counters registered in this process. */
size_t coverage_counters(void);
/* Counters of the target alone (not snapfuzz's own feedback maps): 0 for a
 * target built without coverage instrumentation. */
size_t coverage_target_counters(void);

/* Zeroes every registered counter. */
void coverage_clear(void);

/* Classifies this execution's hit counts into buckets, merges them into
 * @shared, and zeroes the counters it read. Returns the number of features
 * that were new to the whole run (0: nothing new). No allocation, no
 * syscall. */
size_t coverage_scan(CoverageShared *shared);

/* Whether coverage_scan classifies counters in vector registers (AVX2)
 * when the CPU has them (the default) or eight at a time in general
 * registers (@on false: for tests and benchmarks of that path). Returns
 * whether vectors are used. */
bool coverage_use_vectors(bool on);

/* As coverage_scan, for one execution whose features are wanted: also
 * writes the id (counter * 8 + the bucket's bit) of every feature it
 * reached, up to @cap of them, into @ids, and the number it reached (which
 * may exceed @cap) into *ret_n. Reads counter by counter wherever 64 of
 * them are not all zero: for the rare execution whose features are
 * wanted, never for the loop. */
size_t coverage_collect(CoverageShared *shared, uint32_t *ids, size_t cap, size_t *ret_n);

/* Whether the counters as they stand (after an execution, before the
 * scan zeroes them) reach every feature in @ids (counter * 8 + the
 * bucket's bit, as coverage_collect writes them). A load per feature: the
 * runner asks it of an input shorter than its base, for the base's few
 * best features (a reduction). */
bool coverage_reaches(const uint32_t *ids, size_t n);

/* The bucket bit of a hit count (1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+). */
uint8_t coverage_bucket(uint8_t hits);
