/*
 * A test target whose LLVMFuzzerInitialize aborts: the target loads, then
 * dies in initialization, before any input runs and before the sandbox
 * exists.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        return 0;
}
