/*
 * Self-fuzzing harness: the dictionary parser (core/dict.c, dict_parse), on
 * text a person wrote and passed with --dict, or OUT/autodict left by an
 * earlier run.
 *
 * Besides "does not crash", it checks the round trip every run relies on:
 * each token parsed, quoted by dict_quote (how dict_save writes
 * OUT/autodict) and parsed again, gives the same bytes; and the tokens
 * serialized into a batch's table (dict_serialize) read back the same with
 * mutator_dict_parse. A broken invariant aborts, which snapfuzz stores as
 * a crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dict.h"
#include "snapfuzz/mutator.h"

#define CHECK(cond)                                                                                \
        do {                                                                                       \
                if (!(cond)) {                                                                     \
                        fprintf(stderr, "dict harness: %s failed at line %d\n", #cond, __LINE__);  \
                        abort();                                                                   \
                }                                                                                  \
        } while (0)

/* Quotes every token of @d and parses the quoted line again. */
static void check_quote_round_trip(const Dict *d)
{
        char line[4 * MUTATOR_DICT_MAX_TOKEN + 3];
        for (size_t i = 0; i < dict_size(d); i++) {
                size_t len;
                const uint8_t *tok = dict_get(d, i, &len);
                size_t n = dict_quote(tok, len, line, sizeof(line));
                CHECK(n > 0 && n < sizeof(line));
                Dict *again = NULL;
                DictError err = {0};
                CHECK(dict_new(&again) == 0);
                CHECK(dict_parse(again, line, n, &err) == 0);
                CHECK(dict_size(again) == 1);
                size_t len2;
                const uint8_t *tok2 = dict_get(again, 0, &len2);
                CHECK(len2 == len && memcmp(tok, tok2, len) == 0);
                dict_free(again);
        }
}

/* Serializes @d into a batch table and reads it back. */
static void check_table_round_trip(const Dict *d)
{
        static uint8_t table[MUTATOR_DICT_MAX_ENTRIES * (MUTATOR_DICT_MAX_TOKEN + 1) + 1];
        static MutatorDict md;
        const Dict *dicts[1] = {d};
        size_t used = dict_serialize(dicts, 1, table, sizeof(table));
        CHECK(used >= 1 && used <= sizeof(table));
        CHECK(mutator_dict_parse(&md, table, used) == dict_size(d));
        for (size_t i = 0; i < md.count; i++) {
                size_t len;
                const uint8_t *tok = dict_get(d, i, &len);
                CHECK(md.len[i] == len && md.offset[i] + len <= used);
                CHECK(memcmp(md.table + md.offset[i], tok, len) == 0);
        }
}

__attribute__((visibility("default"))) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Dict *d = NULL;
        DictError err = {0};

        if (dict_new(&d) < 0)
                return 0;
        int r = dict_parse(d, (const char *)data, size, &err);
        CHECK(r == 0 || r == -EINVAL || r == -ENOSPC);
        if (r < 0) {
                CHECK(err.line >= 1);
                CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL);
        }
        check_quote_round_trip(d);
        check_table_round_trip(d);
        dict_free(d);
        return 0;
}
