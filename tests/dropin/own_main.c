/*
 * A drop-in harness with a main() of its own, as libFuzzer allows: it
 * calls LLVMFuzzerRunDriver with its callback, and the archive's main()
 * stays out of the link. The engine's workers are this binary too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t));

static int callback(const uint8_t *data, size_t size)
{
        if (size >= 8 && memcmp(data, "SNAPDROP", 8) == 0)
                __builtin_trap();
        return 0;
}

int main(int argc, char **argv)
{
        return LLVMFuzzerRunDriver(&argc, &argv, callback);
}
