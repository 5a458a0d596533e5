/*
 * The drop-in's main(), an archive member of its own so that a harness
 * with a main() of its own (which calls LLVMFuzzerRunDriver, as with
 * libFuzzer) does not pull it in. The harness binary is the fuzzer, the
 * engine's workers (`/proc/self/exe __worker ...`) and the recovery
 * helper's verification worker at once; LLVMFuzzerRunDriver tells which.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzzer/driver.h"

#include "snapfuzz/banned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
        return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}
