/*
 * A test target that calls exit(3) when the input starts with 'X', and
 * returns 0 otherwise. A harness that exits is a crash of kind `exit` with
 * the status kept; the one-byte gate makes it quick to find by fuzzing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define EXITS_STATUS 3

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 0 && data[0] == 'X')
                exit(EXITS_STATUS);
        return 0;
}
