/*
 * A test target that crashes while it is being loaded: a constructor writes
 * through a null pointer, so dlopen() itself dies by SIGSEGV before snapfuzz
 * can look up any symbol. LLVMFuzzerTestOneInput exists and is harmless.
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Volatile, so the compiler can neither see the null nor replace the store with a trap. */
static int *volatile ctor_crash_target;

__attribute__((constructor)) static void ctor_crash(void)
{
        *ctor_crash_target = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        return 0;
}
