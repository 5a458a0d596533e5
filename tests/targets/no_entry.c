/*
 * A test target that is a valid shared object but not a harness: it has no
 * LLVMFuzzerTestOneInput, only a function with a plausible wrong name, so
 * snapfuzz must refuse it with a clear message instead of crashing.
 */
#include <stddef.h>
#include <stdint.h>

int TestOneInput(const uint8_t *data, size_t size);

int TestOneInput(const uint8_t *data, size_t size)
{
        return size > 0 && data[0] == 'A';
}
