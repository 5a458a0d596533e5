/*
 * The fuzz harness of kvparse, libFuzzer-style: snapfuzz (or libFuzzer)
 * calls it with each input. Build it as a shared object:
 *   clang -g -O1 -fsanitize=fuzzer-no-link -fPIC -shared \
 *     -o kvparse.so fuzz_kvparse.c kvparse.c
 */
#include <stddef.h>
#include <stdint.h>

#include "kvparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static struct kv_doc doc;
        kv_parse(data, size, &doc);
        kv_free(&doc);
        return 0;
}
