/*
 * A target that reads only the first four bytes of its input: a seed with
 * "SNAP" and a long tail takes the same path as "SNAP" alone, so a fuzzer
 * that keeps its corpus small finds the short form (libFuzzer's
 * -reduce_inputs, snapfuzz's RECORD_FIND_F_SMALLER).
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Exported so that the compiler keeps the branches that set it. */
extern volatile int prefix_depth;
volatile int prefix_depth;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 4)
                return 0;
        if (data[0] == 'S') {
                prefix_depth = 1;
                if (data[1] == 'N') {
                        prefix_depth = 2;
                        if (data[2] == 'A') {
                                prefix_depth = 3;
                                if (data[3] == 'P')
                                        prefix_depth = 4;
                        }
                }
        }
        return 0;
}
