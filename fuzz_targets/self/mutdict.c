/*
 * Self-fuzzing harness: a batch's dictionary table as the runner and the
 * recovery helper read it (mutator_dict_parse, core/mutator.c) and the
 * dictionary mutations that use it. The table lives in the replay record,
 * in memory the target shares, so a target that scribbles over it hands
 * the parser arbitrary bytes.
 *
 * Input: 8 bytes of PRNG seed, 2 bytes of max_len (little endian), 2 bytes
 * of the input's length, the input, then the table. Every mutation must
 * keep the input within max_len; AddressSanitizer checks the reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"

#define MUTDICT_MAX_LEN 4096u

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static MutatorDict dict;
        static uint8_t buf[MUTDICT_MAX_LEN];
        uint64_t seed = 0;

        if (size < 12)
                return -1;
        memcpy(&seed, data, 8);
        size_t max_len = (size_t)(data[8] | data[9] << 8) % (MUTDICT_MAX_LEN + 1);
        size_t len = (size_t)(data[10] | data[11] << 8);
        data += 12;
        size -= 12;
        if (len > size || len > max_len)
                return -1;
        memcpy(buf, data, len);
        const uint8_t *table = data + len;
        size_t table_len = size - len;

        uint32_t n = mutator_dict_parse(&dict, table_len ? table : NULL, table_len);
        if (n > MUTATOR_DICT_MAX_ENTRIES)
                abort();
        for (uint32_t i = 0; i < n; i++)
                if (dict.len[i] == 0 || dict.len[i] > MUTATOR_DICT_MAX_TOKEN ||
                    dict.offset[i] + dict.len[i] > table_len)
                        abort();

        SfPrng rng;
        prng_seed(&rng, seed, 0);
        MutatorCtx ctx = {.dict = &dict};
        for (int op = MUTATOR_OP_DICT_INSERT; op <= MUTATOR_OP_DICT_OVERWRITE; op++) {
                size_t r = mutator_apply((MutatorOp)op, &ctx, &rng, buf, len, max_len);
                if (r != SIZE_MAX && r > max_len)
                        abort();
                if (r != SIZE_MAX)
                        len = r;
        }
        for (int i = 0; i < 8; i++) {
                len = mutator_mutate(&ctx, &rng, buf, len, max_len);
                if (len > max_len)
                        abort();
        }
        return 0;
}
