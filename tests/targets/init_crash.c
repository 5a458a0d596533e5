/*
 * A test target whose LLVMFuzzerInitialize aborts: the target loads, then
 * dies in initialization, before any input runs and before the sandbox
 * exists. With -DINIT_HANG it never returns instead (a hung
 * initialization, which Ctrl-C must still stop at once).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
#ifdef INIT_HANG
        for (;;)
                pause();
#else
        abort();
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        return 0;
}
