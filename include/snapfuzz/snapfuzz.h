/*
 * snapfuzz.h: the harness ABI, for people who write a harness for
 * snapfuzz. Installed as <includedir>/snapfuzz/snapfuzz.h; with
 * `pkg-config --cflags snapfuzz`, write #include <snapfuzz.h>.
 *
 * A harness is a shared object built with coverage instrumentation
 * (`snapfuzz cflags`: clang -fsanitize=fuzzer-no-link, or gcc
 * -fsanitize-coverage=trace-pc,trace-cmp; and -fPIC -shared) that defines
 * LLVMFuzzerTestOneInput and, optionally, the other LLVMFuzzer* functions
 * below: libFuzzer's conventions, so a libFuzzer harness works unchanged
 * and needs no header. This one declares them (with C linkage, for C++),
 * says what snapfuzz does with each, and declares what snapfuzz exports
 * back to the harness. Nothing here needs to be linked: the snapfuzz
 * executable defines LLVMFuzzerMutate and the coverage callbacks, and a
 * harness loaded into it binds to them.
 */
#ifndef SNAPFUZZ_SNAPFUZZ_H
#define SNAPFUZZ_SNAPFUZZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The value of LLVMFuzzerTestOneInput that keeps an input out of the
 * corpus, whatever coverage it reached (libFuzzer's -1). */
#define SNAPFUZZ_REJECT (-1)

/* Required. Runs one input: @data (read-only: writing to it is reported as
 * a crash of kind overwrite-input) of @size bytes. Returns 0, or
 * SNAPFUZZ_REJECT. A crash, a sanitizer report, an abort, a hang past
 * --timeout, memory past --rss-limit-mb or one allocation past
 * --malloc-limit-mb, a leak (with LeakSanitizer), or a system call the
 * sandbox refuses is a finding. Each input runs in a runner process forked
 * from the initialized harness: state kept between inputs lasts at most
 * one runner's lifetime (--runner-lifetime-ms). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional. Called once per worker, after loading and before the sandbox
 * is in force, with argv[0] the harness's path: open files, read
 * configuration, allocate tables here. Returns 0. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Optional. Replaces snapfuzz's mutations: mutate @data (@size bytes, room
 * for @max_size) in place and return the new size (0: try again with
 * another @seed). It must be deterministic given its arguments, taking
 * randomness only from @seed or LLVMFuzzerMutate: a crashing input is
 * rebuilt by calling it again with the same seeds. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* Optional. Combines two corpus inputs into @out (room for @max_out_size
 * bytes) and returns its size; deterministic like the mutator. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                 size_t size2, uint8_t *out, size_t max_out_size,
                                 unsigned int seed);

/* Exported by snapfuzz, for a custom mutator: one of snapfuzz's own
 * mutations of @data in place (room for @max_size bytes), drawn from the
 * PRNG of the replay record. Returns the new size. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

#ifdef __cplusplus
}
#endif

#endif /* SNAPFUZZ_SNAPFUZZ_H */
