/*
 * The replay record: its layout is fixed, its checksums catch scribbles,
 * and the replay rebuilds, byte for byte, every input a runner following
 * the documented loop executed, with comparison tables frozen at chain
 * starts and read by the input-to-state operators.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmplog.h"
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
        cr_expect_eq(offsetof(RecordHeader, slot), 136);
        cr_expect_eq(offsetof(RecordHeader, cmp_first_chain), 232);
        cr_expect_eq(l.base_off, RECORD_HEADER_SIZE + RECORD_DEATH_SIZE);
        cr_expect_eq(l.partner_off, l.base_off + 4096);
        cr_expect_eq(l.table_off, l.partner_off + 4096);
        cr_expect_eq(l.cmp_off % 4096, 0, "the runner protects everything before cmp_off");
        cr_expect_geq(l.cmp_off, l.table_off + RECORD_TABLE_BYTES);
        cr_expect_eq(l.record_size % 4096, 0);
        cr_expect_geq(l.record_size, l.cmp_off + 2 * sizeof(CmpTable));
        cr_expect_eq((uint8_t *)record_cmp(NULL, &l, 2) - (uint8_t *)NULL, (ptrdiff_t)l.cmp_off);
        cr_expect_eq((uint8_t *)record_cmp(NULL, &l, 1) - (uint8_t *)NULL,
                     (ptrdiff_t)(l.cmp_off + sizeof(CmpTable)));
        cr_expect_eq(l.finds_off, l.record_size);
        cr_expect_geq(l.tokens_off, l.finds_off + sizeof(RecordFinds) +
                                        RECORD_FINDS_SLOTS * (sizeof(RecordFindSlot) + 4096));
        cr_expect_eq(l.tokens_off % 8, 0);
        cr_expect_geq(l.region_size, l.tokens_off + sizeof(RecordTokens));
        cr_expect_eq(record_layout(0, &l), -EINVAL);
        cr_expect_eq(record_layout(RECORD_MAX_LEN_LIMIT + 1, &l), -EINVAL);
}

static uint64_t load_le(const uint8_t *p, size_t n)
{
        uint64_t v = 0;
        for (size_t i = n; i-- > 0;)
                v = (v << 8) | p[i];
        return v;
}

/* A target's comparisons, as the trace-cmp callbacks and the memcmp hook
 * record them: operands taken from the input, so the live table changes
 * with every input, against constants the input-to-state operators can
 * write. */
static void fake_target(const uint8_t *d, size_t n)
{
        if (n >= 4)
                cmplog_int(0x1000, load_le(d, 4), 0x41424344, 4, CMPTABLE_F_CONST);
        if (n >= 12)
                cmplog_int(0x2000, load_le(d + 4, 8), UINT64_C(0x1122334455667788), 8, 0);
        if (n >= 2)
                cmplog_int(0x3000 + (d[0] & 3), load_le(d + n - 2, 2), 0x7f7f, 2, 0);
        if (n >= 20)
                cmplog_mem(0x4000, d + 12, 8, (const uint8_t *)"MAGICVAL", 8, 0);
        cmplog_mem(0x5000, d, n < 5 ? n : 5, (const uint8_t *)"hello", 5, CMPTABLE_F_STRING);
}

/* Runs the runner's loop (app/runner.c) over a region, keeping a copy of
 * every input, exactly as the runner builds them. With @comparisons, each
 * input also "runs" fake_target(), and chains freeze and read comparison
 * tables as the runner's do (the test's copy of the runner's loop: keep
 * the two in step). */
static uint8_t **emulate(void *region, const RecordLayout *l, uint64_t iters, bool comparisons,
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
        CmpFreezer freezer;
        cmplog_freezer_init(&freezer, region, l);
        cmplog_clear();
        SfPrng rng;
        prng_seed(&rng, h->seed, h->batch_id);
        size_t len = 0;
        for (uint64_t k = 1; k <= iters; k++) {
                uint64_t idx = k - 1;
                if (idx % h->chain_len == 0) {
                        uint64_t gen;
                        ctx.cmp =
                            cmplog_chain_begin(&freezer, &cmplog_live, idx / h->chain_len, &gen);
                        record_chain_begin(h, &rng, idx / h->chain_len, gen);
                        memcpy(work, record_base(region, l), h->base_len);
                        len = h->base_len;
                }
                len = mutator_mutate(&ctx, &rng, work, len, l->max_len);
                h->count = k;
                inputs[k] = malloc(len + 1);
                memcpy(inputs[k], work, len);
                lens[k] = len;
                /* As the runner: the first input of a chain is recorded. */
                cmplog_mode = comparisons && idx % h->chain_len == 0 ? CMPLOG_RECORD : 0;
                fake_target(work, len);
                cmplog_mode = 0;
        }
        free(work);
        *ret_lens = lens;
        return inputs;
}

static uint8_t **emulate_runner(void *region, const RecordLayout *l, uint64_t iters,
                                size_t **ret_lens)
{
        return emulate(region, l, iters, true, ret_lens);
}

static void free_inputs(uint8_t **inputs, size_t *lens, uint64_t iters)
{
        for (uint64_t i = 1; i <= iters; i++)
                free(inputs[i]);
        free(inputs);
        free(lens);
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
        seal(region, &l, "GIF89a\x01\x02 a base input of some length", "partner bytes 0123456789",
             5, iters);
        size_t *lens;
        uint8_t **inputs = emulate_runner(region, &l, iters, &lens);
        uint8_t *buf = malloc(l.max_len);

        /* Stop the "runner" at every iteration in turn: the record as it
         * stood must rebuild what ran. */
        for (uint64_t k = 1; k <= iters; k++) {
                size_t *lens2;
                void *r2 = region_new(256, &l);
                seal(r2, &l, "GIF89a\x01\x02 a base input of some length",
                     "partner bytes 0123456789", 5, k);
                uint8_t **in2 = emulate_runner(r2, &l, k, &lens2);
                size_t len = 0;
                cr_assert_eq(record_validate(r2, &l), RECORD_OK, "iteration %lu", (unsigned long)k);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                cr_assert_eq(len, lens[k], "length at iteration %lu", (unsigned long)k);
                cr_assert_arr_eq(buf, inputs[k], len, "bytes at iteration %lu", (unsigned long)k);
                free_inputs(in2, lens2, k);
                free(r2);
                if (k > 64)
                        k += 37; /* sample the rest; the first chains are checked densely */
        }

        /* The comparison tables were in play: frozen from chain 1 on, and
         * the operators wrote the fake target's constants into inputs. */
        cr_expect_eq(record_header(region)->cmp_first_chain, 1);
        int wrote_int = 0, wrote_mem = 0;
        for (uint64_t k = 1; k <= iters; k++) {
                wrote_int += memmem(inputs[k], lens[k], "DCBA", 4) != NULL;
                wrote_mem += memmem(inputs[k], lens[k], "MAGICVAL", 8) != NULL;
        }
        cr_expect_gt(wrote_int, 10, "the 32-bit constant was written %d times", wrote_int);
        cr_expect_gt(wrote_mem, 10, "the memcmp operand was written %d times", wrote_mem);
        free_inputs(inputs, lens, iters);
        free(buf);
        free(region);
}

/* The window the runner cannot avoid: a new table is frozen and the next
 * chain's slot written while count still names the last iteration of the
 * previous chain. The record must rebuild that iteration at every step. */
Test(record, replay_is_exact_while_the_next_chain_is_being_set_up)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        const uint32_t chain_len = 3;
        const uint64_t iters = 600;
        uint8_t buf[128];
        size_t len;

        seal(region, &l, "0123456789abcdefghijklmnop", "partner", chain_len, iters);
        size_t *lens;
        uint8_t **inputs = emulate(region, &l, iters, true, &lens);
        int freezes_checked = 0;

        for (uint64_t end = chain_len; end < iters; end += chain_len) {
                uint64_t next = end / chain_len;
                size_t *lens2;
                void *r2 = region_new(128, &l);
                seal(r2, &l, "0123456789abcdefghijklmnop", "partner", chain_len, iters);
                uint8_t **in2 = emulate(r2, &l, end, true, &lens2);
                RecordHeader *h = record_header(r2);

                /* Freeze the next chain's table as the runner would (a
                 * fresh freezer is in the same state when it is due). */
                CmpFreezer f;
                cmplog_freezer_init(&f, r2, &l);
                f.gen = h->slot[(next - 1) & 1].cmp_gen;
                f.next_chain = next;
                uint64_t gen;
                (void)cmplog_chain_begin(&f, &cmplog_live, next, &gen);
                freezes_checked += gen != h->slot[(next - 1) & 1].cmp_gen;
                cr_assert_eq(record_validate(r2, &l), RECORD_OK, "after the freeze for %lu",
                             (unsigned long)next);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                cr_assert_eq(len, lens[end]);
                cr_assert_arr_eq(buf, inputs[end], len, "after the freeze for %lu",
                                 (unsigned long)next);

                /* Then the next chain's slot, still before count moves. */
                SfPrng junk;
                prng_seed(&junk, next, 99);
                record_chain_begin(h, &junk, next, gen);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                cr_assert_eq(len, lens[end]);
                cr_assert_arr_eq(buf, inputs[end], len, "after the slot of %lu",
                                 (unsigned long)next);
                free_inputs(in2, lens2, end);
                free(r2);
                if (end > 150)
                        end += 17 * chain_len; /* sample the rest */
        }
        cr_expect_gt(freezes_checked, 5);
        free_inputs(inputs, lens, iters);
        free(region);
}

Test(record, replay_from_seed_agrees_with_chain_slots)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello", "world!", 4, 500);
        size_t *lens;
        uint8_t **inputs = emulate(region, &l, 500, false, &lens);
        uint8_t *buf = malloc(l.max_len);
        cr_expect_eq(record_header(region)->cmp_first_chain, UINT64_MAX);
        for (uint64_t k = 1; k <= 500; k++) {
                size_t len;
                cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                cr_assert_eq(len, lens[k]);
                cr_assert_arr_eq(buf, inputs[k], len, "iteration %lu", (unsigned long)k);
        }
        free_inputs(inputs, lens, 500);
        free(buf);
        free(region);
}

/* The seed path cannot know the tables of chains long gone, so it serves
 * exactly the chains before the first that read one, and refuses the rest
 * instead of rebuilding different bytes. */
Test(record, replay_from_seed_stops_where_comparison_tables_begin)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello, world: a base for comparisons", "world!", 4, 200);
        size_t *lens;
        uint8_t **inputs = emulate(region, &l, 200, true, &lens);
        uint8_t *buf = malloc(l.max_len);
        uint64_t first = record_header(region)->cmp_first_chain;
        cr_assert_eq(first, 1);
        for (uint64_t k = 1; k <= 200; k++) {
                size_t len;
                int r = replay_input_from_seed(region, &l, k, buf, &len);
                if ((k - 1) / 4 < first) {
                        cr_assert_eq(r, 0);
                        cr_assert_arr_eq(buf, inputs[k], len, "iteration %lu", (unsigned long)k);
                } else {
                        cr_assert_eq(r, -(int)RECORD_NO_CMP, "iteration %lu", (unsigned long)k);
                }
        }
        free_inputs(inputs, lens, 200);
        free(buf);
        free(region);
}

Test(record, scribbled_comparison_table_is_detected_not_replayed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello, world: a base for comparisons", "", 4, 100);
        size_t *lens;
        uint8_t **inputs = emulate(region, &l, 90, true, &lens);
        RecordHeader *h = record_header(region);
        const RecordChainSlot *s = &h->slot[((90 - 1) / 4) & 1];
        uint8_t buf[128];
        size_t len;

        cr_assert_gt(s->cmp_gen, 0);
        CmpTable *t = record_cmp(region, &l, s->cmp_gen);
        cr_assert_gt(t->n_int, 0);
        cr_assert_eq(record_validate(region, &l), RECORD_OK);
        t->ints[0].b ^= 0x100;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        cr_expect_eq(replay_input(region, &l, buf, &len), -(int)RECORD_BAD_CMP);
        t->ints[0].b ^= 0x100;
        t->n_int = 1000; /* never read past the table */
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        t->n_int = 0;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        free_inputs(inputs, lens, 90);
        free(region);
}

Test(record, a_table_from_another_batch_never_passes)
{
        CmpTable *t = calloc(1, sizeof(*t));
        cmplog_clear();
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x10, 1, 2, 4, 0);
        cmplog_mode = 0;
        cr_assert_eq(cmplog_freeze(&cmplog_live, t, 1, 77), 1);
        cr_expect_eq(t->check, record_cmp_check(t, 77));
        cr_expect_neq(t->check, record_cmp_check(t, 78));
        free(t);
}

Test(record, scribbled_base_is_detected_not_replayed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "a base input", "", 4, 10);
        size_t *lens;
        uint8_t **inputs = emulate_runner(region, &l, 7, &lens);
        free_inputs(inputs, lens, 7);
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
        uint8_t **inputs = emulate_runner(region, &l, 3, &lens);
        free_inputs(inputs, lens, 3);
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
        uint8_t **inputs = emulate(region, &l, 30, false, &lens);
        /* Iteration 30 is chain 7; tear its slot. */
        record_header(region)->slot[7 & 1].rng.state ^= 1;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_SLOT);
        uint8_t buf[128];
        size_t len;
        cr_assert_eq(replay_input(region, &l, buf, &len), 0);
        cr_assert_eq(len, lens[30]);
        cr_assert_arr_eq(buf, inputs[30], len);
        free_inputs(inputs, lens, 30);
        free(region);
}

Test(record, torn_slot_after_comparison_tables_is_refused_not_guessed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "fallback with comparisons", "p", 4, 40);
        size_t *lens;
        uint8_t **inputs = emulate(region, &l, 30, true, &lens);
        free_inputs(inputs, lens, 30);
        record_header(region)->slot[7 & 1].cmp_gen ^= 2;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_SLOT);
        uint8_t buf[128];
        size_t len;
        cr_expect_eq(replay_input(region, &l, buf, &len), -(int)RECORD_NO_CMP);
        free(region);
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
