/*
 * The replay record: its layout is fixed, its checksums catch scribbles,
 * and the replay rebuilds, byte for byte, every input a runner following
 * the documented loop executed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recovery/replay.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

static void *region_new(size_t max_len, RecordLayout *l)
{
        cr_assert_eq(record_layout(max_len, l), 0);
        void *r = calloc(1, l->region_size);
        cr_assert_not_null(r);
        return r;
}

Test(record, layout_is_fixed_and_page_aligned)
{
        RecordLayout l;
        cr_assert_eq(record_layout(4096, &l), 0);
        cr_expect_eq(offsetof(RecordHeader, count), 128);
        cr_expect_eq(l.base_off, RECORD_HEADER_SIZE + RECORD_DEATH_SIZE);
        cr_expect_eq(l.partner_off, l.base_off + 4096);
        cr_expect_eq(l.table_off, l.partner_off + 4096);
        cr_expect_eq(l.record_size % 4096, 0);
        cr_expect_geq(l.record_size, l.table_off + RECORD_TABLE_BYTES);
        cr_expect_eq(l.finds_off, l.record_size);
        cr_expect_geq(l.region_size, l.finds_off + sizeof(RecordFinds) +
                                         RECORD_FINDS_SLOTS * (sizeof(RecordFindSlot) + 4096));
        cr_expect_eq(record_layout(0, &l), -EINVAL);
        cr_expect_eq(record_layout(RECORD_MAX_LEN_LIMIT + 1, &l), -EINVAL);
}

/* Runs the runner's loop (app/runner.c) over a region, keeping a copy of
 * every input, exactly as the runner builds them. */
static uint8_t **emulate_runner(void *region, const RecordLayout *l, uint64_t iters,
                                size_t **ret_lens)
{
        RecordHeader *h = record_header(region);
        uint8_t **inputs = calloc(iters + 1, sizeof(uint8_t *));
        size_t *lens = calloc(iters + 1, sizeof(size_t));
        uint8_t *work = malloc(l->max_len);
        MutatorDict dict;
        MutatorCtx ctx = {.partner = record_partner(region, l), .partner_len = h->partner_len};
        if (h->table_len && mutator_dict_parse(&dict, record_table(region, l), h->table_len))
                ctx.dict = &dict;
        SfPrng rng;
        prng_seed(&rng, h->seed, h->batch_id);
        size_t len = 0;
        for (uint64_t k = 1; k <= iters; k++) {
                uint64_t idx = k - 1;
                if (idx % h->chain_len == 0) {
                        record_chain_begin(h, &rng, idx / h->chain_len);
                        memcpy(work, record_base(region, l), h->base_len);
                        len = h->base_len;
                }
                len = mutator_mutate(&ctx, &rng, work, len, l->max_len);
                h->count = k;
                inputs[k] = malloc(len + 1);
                memcpy(inputs[k], work, len);
                lens[k] = len;
        }
        free(work);
        *ret_lens = lens;
        return inputs;
}

static void seal(void *region, const RecordLayout *l, const char *base, const char *partner,
                 uint32_t chain_len, uint64_t iters)
{
        size_t bl = strlen(base), pl = strlen(partner);
        memcpy(record_base(region, l), base, bl);
        memcpy(record_partner(region, l), partner, pl);
        const uint8_t *tokens[] = {(const uint8_t *)"MAGIC", (const uint8_t *)"\x7f\x45"};
        size_t tl[] = {5, 2};
        size_t table_len =
            mutator_dict_serialize(record_table(region, l), RECORD_TABLE_BYTES, tokens, tl, 2);
        record_begin_batch(region, l, 77, RECORD_MODE_FUZZ, iters, 0xfeedface, chain_len,
                           (uint32_t)bl, (uint32_t)pl, (uint32_t)table_len);
}

Test(record, replay_rebuilds_every_iteration_byte_for_byte)
{
        RecordLayout l;
        void *region = region_new(256, &l);
        const uint64_t iters = 3000;
        seal(region, &l, "GIF89a\x01\x00\x01\x00 base input", "partner bytes 0123456789", 5, iters);
        size_t *lens;
        uint8_t **inputs = emulate_runner(region, &l, iters, &lens);
        uint8_t *buf = malloc(l.max_len);

        /* Stop the "runner" at every iteration in turn: the record as it
         * stood must rebuild what ran. */
        for (uint64_t k = 1; k <= iters; k++) {
                size_t *lens2;
                void *r2 = region_new(256, &l);
                seal(r2, &l, "GIF89a\x01\x00\x01\x00 base input", "partner bytes 0123456789", 5, k);
                uint8_t **in2 = emulate_runner(r2, &l, k, &lens2);
                size_t len = 0;
                cr_assert_eq(record_validate(r2, &l), RECORD_OK, "iteration %lu", (unsigned long)k);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                cr_assert_eq(len, lens[k], "length at iteration %lu", (unsigned long)k);
                cr_assert_arr_eq(buf, inputs[k], len, "bytes at iteration %lu", (unsigned long)k);
                for (uint64_t i = 1; i <= k; i++)
                        free(in2[i]);
                free(in2);
                free(lens2);
                free(r2);
                if (k > 64)
                        k += 37; /* sample the rest; the first chains are checked densely */
        }
        free(buf);
        free(region);
}

Test(record, replay_from_seed_agrees_with_chain_slots)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello", "world!", 4, 500);
        size_t *lens;
        uint8_t **inputs = emulate_runner(region, &l, 500, &lens);
        uint8_t *buf = malloc(l.max_len);
        for (uint64_t k = 1; k <= 500; k++) {
                size_t len;
                cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                cr_assert_eq(len, lens[k]);
                cr_assert_arr_eq(buf, inputs[k], len, "iteration %lu", (unsigned long)k);
        }
        free(buf);
}

Test(record, scribbled_base_is_detected_not_replayed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "a base input", "", 4, 10);
        size_t *lens;
        (void)emulate_runner(region, &l, 7, &lens);
        record_base(region, &l)[3] ^= 0x40;
        uint8_t buf[128];
        size_t len;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_PAYLOAD);
        cr_expect_eq(replay_input(region, &l, buf, &len), -(int)RECORD_BAD_PAYLOAD);
}

Test(record, scribbled_description_or_magic_is_detected)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "abc", "", 4, 10);
        size_t *lens;
        (void)emulate_runner(region, &l, 3, &lens);
        record_header(region)->chain_len = 9;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
        record_header(region)->magic = 0;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_MAGIC);
}

Test(record, torn_slot_falls_back_to_the_seed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "fallback", "p", 4, 40);
        size_t *lens;
        uint8_t **inputs = emulate_runner(region, &l, 30, &lens);
        /* Iteration 30 is chain 7; tear its slot. */
        record_header(region)->slot[7 & 1].rng.state ^= 1;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_SLOT);
        uint8_t buf[128];
        size_t len;
        cr_assert_eq(replay_input(region, &l, buf, &len), 0);
        cr_assert_eq(len, lens[30]);
        cr_assert_arr_eq(buf, inputs[30], len);
}

Test(record, no_input_before_the_first_call)
{
        RecordLayout l;
        void *region = region_new(64, &l);
        seal(region, &l, "x", "", 4, 10);
        uint8_t buf[64];
        size_t len;
        cr_expect_eq(record_validate(region, &l), RECORD_NO_INPUT);
        cr_expect_lt(replay_input(region, &l, buf, &len), 0);
}

Test(record, exec_mode_replays_the_base_unchanged)
{
        RecordLayout l;
        void *region = region_new(64, &l);
        memcpy(record_base(region, &l), "seed!", 5);
        record_begin_batch(region, &l, 1, RECORD_MODE_EXEC, 1, 0, 1, 5, 0, 0);
        record_header(region)->count = 1;
        uint8_t buf[64];
        size_t len;
        cr_assert_eq(replay_input(region, &l, buf, &len), 0);
        cr_assert_eq(len, 5);
        cr_assert_arr_eq(buf, "seed!", 5);
}
