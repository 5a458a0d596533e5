/*
 * A bug one byte away from a seed: the seed "SEEDq8Zr3Lm0Wx5T."
 * (tests/targets/seed_base/) with its last byte turned into '!'. Its first
 * sixteen bytes are checked by a hash, so no comparison tells the fuzzer
 * them, and every input that starts with 'S' takes the seed's path, so a
 * shorter one ("S") replaces it as the input to mutate. A fuzzer that keeps
 * the seed itself as a base (snapfuzz --keep-seeds, libFuzzer's
 * -keep_seed=1) finds it by changing one byte; one that keeps it only as a
 * crossover partner must first copy it whole over another input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEED_BASE_HASHED 16u

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint8_t seed[] = "SEEDq8Zr3Lm0Wx5T";
        uint8_t buf[SEED_BASE_HASHED + 1] = {0};

        if (size == 0 || data[0] != 'S')
                return 0;
        /* The same path for every input that starts with 'S', the seed's
         * included: a fixed-length copy (the shorter ones padded with
         * zeros), a hash over a fixed length, and the byte the seed does not
         * have tested first. */
        memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
        if (buf[SEED_BASE_HASHED] == '!' &&
            fnv1a(buf, SEED_BASE_HASHED) == fnv1a(seed, SEED_BASE_HASHED) &&
            size == SEED_BASE_HASHED + 1)
                abort();
        return 0;
}
