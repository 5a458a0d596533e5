/*
 * The replay record: its layout is fixed, its checksums catch scribbles,
 * and the replay rebuilds, byte for byte, every input the batch module
 * (worker/batch.h) made live, as the runner drives it, with comparison
 * tables frozen at chain starts and read by the input-to-state operators.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/batch.h"
#include "worker/cmplog.h"
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
        cr_expect_eq(offsetof(RecordHeader, cmp_gens), 232);
        cr_expect_eq(l.base_off, RECORD_HEADER_SIZE + RECORD_DEATH_SIZE);
        cr_expect_eq(l.area_len, RECORD_AREA_MIN, "a list of bases is not bounded by max_len");
        cr_expect_eq(l.partner_off, l.base_off + RECORD_AREA_MIN);
        cr_expect_eq(l.table_off, l.partner_off + RECORD_AREA_MIN);
        RecordLayout big;
        cr_assert_eq(record_layout(1u << 20, &big), 0);
        cr_expect_eq(big.area_len, 1u << 20, "an area holds at least one input");
        cr_expect_eq(l.cmp_off % 4096, 0, "the runner protects everything before cmp_off");
        cr_expect_geq(l.cmp_off, l.table_off + RECORD_TABLE_BYTES);
        cr_expect_eq(l.record_size % 4096, 0);
        cr_expect_geq(l.record_size, l.cmp_off + RECORD_CMP_TABLES * sizeof(CmpTable));
        cr_expect_eq((uint8_t *)record_cmp(NULL, &l, 1) - (uint8_t *)NULL, (ptrdiff_t)l.cmp_off);
        cr_expect_eq((uint8_t *)record_cmp(NULL, &l, RECORD_CMP_TABLES) - (uint8_t *)NULL,
                     (ptrdiff_t)(l.cmp_off + (RECORD_CMP_TABLES - 1) * sizeof(CmpTable)));
        cr_expect_eq(l.finds_off, l.record_size);
        cr_expect_geq(l.tokens_off, l.finds_off + sizeof(RecordFinds) +
                                        RECORD_FINDS_SLOTS * (sizeof(RecordFindSlot) + 4096));
        cr_expect_eq(l.tokens_off % 8, 0);
        cr_expect_geq(l.features_off, l.tokens_off + sizeof(RecordTokens));
        cr_expect_eq(l.features_off % 8, 0);
        cr_expect_geq(l.region_size,
                      l.features_off + RECORD_FINDS_SLOTS * sizeof(RecordFindFeatures));
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

/* Where run_live() stops, besides after its last iteration: inside the
 * setup of the next chain, before count enters it. */
typedef enum Stop {
        STOP_AFTER_LAST,
        STOP_AFTER_FREEZE,     /* the next chain's table frozen (if due) */
        STOP_AFTER_CHAIN_SLOT, /* and its slot written */
} Stop;

/* The operators run_live()'s last run applied. */
static MutatorTrace live_trace;

/* Drives the batch module live over a region, as the runner does
 * (tests/test_batch.c checks it against the real runner), keeping a copy
 * of every input. With @comparisons, each executed input also "runs"
 * fake_target(), whose comparisons the runner's hooks would record.
 * Iterations before the record's first_exec are mutated but not executed,
 * as in a history replay. */
static uint8_t **run_live(void *region, const RecordLayout *l, uint64_t iters, bool comparisons,
                          Stop stop, size_t **ret_lens)
{
        RecordHeader *h = record_header(region);
        uint8_t **inputs = calloc(iters + 1, sizeof(uint8_t *));
        size_t *lens = calloc(iters + 1, sizeof(size_t));
        uint8_t *work = malloc(l->max_len);
        Batch *b = malloc(sizeof(*b));
        cmplog_clear();
        cr_assert_eq(batch_init(b, region, l, work, &cmplog_live, NULL), 0);
        cr_assert_eq(batch_start_seed(b), 0);
        uint64_t first = h->first_exec > 1 ? h->first_exec : 1;
        for (uint64_t k = 1; k <= iters; k++) {
                int made = batch_next(b);
                cr_assert_eq(b->k, k);
                inputs[k] = malloc(b->len + 1);
                memcpy(inputs[k], b->work, b->len);
                lens[k] = b->len;
                if (k < first)
                        continue;
                h->count = k;
                cmplog_record_left = CMPLOG_RECORD_BUDGET;
                cmplog_mode =
                    comparisons && made == BATCH_CHAIN && b->records_cmps ? CMPLOG_RECORD : 0;
                fake_target(b->work, b->len);
                cmplog_mode = 0;
        }
        if (stop != STOP_AFTER_LAST && iters % h->chain_len == 0) {
                /* The runner's next step, up to where count would enter the
                 * next chain: its table frozen, its slot written (or, for
                 * STOP_AFTER_FREEZE, not yet: the slot as it was before)
                 * and its first mutation made in the private buffer. */
                RecordChainSlot *s = &h->slot[(iters / h->chain_len) & 1];
                RecordChainSlot before = *s;
                (void)batch_next(b);
                cr_assert_eq(s->chain, iters / h->chain_len);
                if (stop == STOP_AFTER_FREEZE)
                        *s = before;
        }
        live_trace = b->trace;
        free(b);
        free(work);
        *ret_lens = lens;
        return inputs;
}

static uint8_t **run_batch(void *region, const RecordLayout *l, uint64_t iters, size_t **ret_lens)
{
        return run_live(region, l, iters, true, STOP_AFTER_LAST, ret_lens);
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

#define BASE "GIF89a\x01\x02 a base input of some length"
#define PARTNER "partner bytes 0123456789"

static void expect_same(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len,
                        uint64_t k)
{
        cr_assert_eq(got_len, want_len, "length at iteration %lu", (unsigned long)k);
        cr_assert_arr_eq(got, want, got_len, "bytes at iteration %lu", (unsigned long)k);
}

Test(record, replay_rebuilds_every_iteration_byte_for_byte)
{
        RecordLayout l;
        void *region = region_new(256, &l);
        const uint64_t iters = 3000;
        seal(region, &l, BASE, PARTNER, 5, iters);
        size_t *lens;
        uint8_t **inputs = run_batch(region, &l, iters, &lens);
        uint8_t *buf = malloc(l.max_len);

        /* Stop the "runner" at every iteration in turn: the record as it
         * stood must rebuild what ran. */
        for (uint64_t k = 1; k <= iters; k++) {
                size_t *lens2;
                void *r2 = region_new(256, &l);
                seal(r2, &l, BASE, PARTNER, 5, k);
                uint8_t **in2 = run_batch(r2, &l, k, &lens2);
                size_t len = 0;
                cr_assert_eq(record_validate(r2, &l), RECORD_OK, "iteration %lu", (unsigned long)k);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                expect_same(buf, len, inputs[k], lens[k], k);
                free_inputs(in2, lens2, k);
                free(r2);
                if (k > 64)
                        k += 37; /* sample the rest; the first chains are checked densely */
        }

        /* The comparison tables were in play: frozen at chains 1, 2, 4, ...,
         * 512 of the 600, and the operators wrote the fake target's
         * constants into inputs. */
        cr_expect_eq(record_header(region)->cmp_gens, 10);
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
        const uint32_t chain_len = 3;
        const uint64_t iters = 1600;
        void *region = region_new(128, &l);
        uint8_t buf[128];
        size_t len, *lens;
        int freezes = 0;

        seal(region, &l, "0123456789abcdefghijklmnop", "partner", chain_len, iters);
        uint8_t **inputs = run_live(region, &l, iters, true, STOP_AFTER_LAST, &lens);
        for (uint64_t end = chain_len; end < iters; end += chain_len) {
                for (Stop stop = STOP_AFTER_FREEZE; stop <= STOP_AFTER_CHAIN_SLOT; stop++) {
                        size_t *lens2;
                        void *r2 = region_new(128, &l);
                        seal(r2, &l, "0123456789abcdefghijklmnop", "partner", chain_len, iters);
                        uint8_t **in2 = run_live(r2, &l, end, true, stop, &lens2);
                        RecordHeader *h = record_header(r2);
                        freezes += stop == STOP_AFTER_FREEZE &&
                                   h->cmp_gens > h->slot[((end - 1) / chain_len) & 1].cmp_gen;
                        h->count = end;
                        cr_assert_eq(record_validate(r2, &l), RECORD_OK, "stop %d at %lu", stop,
                                     (unsigned long)end);
                        cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                        expect_same(buf, len, inputs[end], lens[end], end);
                        free_inputs(in2, lens2, end);
                        free(r2);
                }
                if (end > 100)
                        end += 11 * chain_len; /* sample the rest, freezes included */
        }
        cr_expect_geq(freezes, 4, "the window was checked around %d freezes", freezes);
        free_inputs(inputs, lens, iters);
        free(region);
}

/* Writes @n strings as a list (record_seed_at's format); returns its length. */
static uint32_t pack(uint8_t *area, const char *const *items, size_t n)
{
        size_t used = 0;
        for (size_t i = 0; i < n; i++) {
                uint32_t len = (uint32_t)strlen(items[i]);
                memcpy(area + used, &len, 4); /* little-endian, as x86-64 and aarch64 are */
                memcpy(area + used + 4, items[i], len);
                used += 4 + len;
        }
        return (uint32_t)used;
}

#define A40 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define B40 "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
#define C40 "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"

/* A packed fuzz batch over three bases and two partners; returns the
 * length of the list of bases. */
static uint32_t seal_list(void *region, const RecordLayout *l, const char *const *bases,
                          uint32_t chain_len, uint64_t iters)
{
        const char *partners[] = {"pppppppp", "qqqqqqqqqqqq"};
        uint32_t bl = pack(record_base(region, l), bases, 3);
        uint32_t pl = pack(record_partner(region, l), partners, 2);
        record_begin_batch(region, l, 78, RECORD_MODE_FUZZ, iters, 0xbadc0ffee, chain_len, bl, pl,
                           0);
        record_set_flags(region, RECORD_F_PACKED);
        return bl;
}

static void seal_packed(void *region, const RecordLayout *l, uint32_t chain_len, uint64_t iters)
{
        const char *bases[] = {A40, B40 B40, C40 "c"};
        seal_list(region, l, bases, chain_len, iters);
}

/* A batch over a list of corpus entries (RECORD_F_PACKED): chain c mutates
 * entry c mod 3, and every way of replaying rebuilds what ran. */
Test(record, a_packed_batch_spreads_its_chains_over_its_bases_and_replays_exactly)
{
        RecordLayout l;
        const uint64_t iters = 1500;
        void *region = region_new(256, &l);
        uint8_t buf[256];
        size_t len, *lens;

        seal_packed(region, &l, 1, iters);
        uint8_t **inputs = run_live(region, &l, iters, true, STOP_AFTER_LAST, &lens);
        cr_assert_eq(record_validate(region, &l), RECORD_OK);
        unsigned from_base = 0;
        for (uint64_t k = 1; k <= iters; k++) {
                /* One mutation of a 40-, 80- or 41-byte run of one letter:
                 * of the three letters, that one is still the most. */
                size_t count[3] = {0};
                for (size_t i = 0; i < lens[k]; i++)
                        if (inputs[k][i] >= 'A' && inputs[k][i] <= 'C')
                                count[inputs[k][i] - 'A']++;
                size_t want = (k - 1) % 3;
                from_base +=
                    count[want] > count[(want + 1) % 3] && count[want] > count[(want + 2) % 3];
                cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                expect_same(buf, len, inputs[k], lens[k], k);
        }
        cr_expect_geq(from_base, iters * 9 / 10, "%u of %lu inputs came from their chain's base",
                      from_base, (unsigned long)iters);
        free_inputs(inputs, lens, iters);

        /* Killed at any iteration: the chain slot path agrees. */
        for (uint64_t k = 1; k <= 300; k += 7) {
                void *r2 = region_new(256, &l);
                seal_packed(r2, &l, 4, k);
                uint8_t **in2 = run_live(r2, &l, k, true, STOP_AFTER_LAST, &lens);
                cr_assert_eq(record_validate(r2, &l), RECORD_OK);
                cr_assert_eq(replay_input(r2, &l, buf, &len), 0);
                expect_same(buf, len, in2[k], lens[k], k);
                free_inputs(in2, lens, k);
                free(r2);
        }
        free(region);
}

/* The bases of a packed batch together may be longer than max_len (each
 * one is not): the whole list is there, and every input replays; a single
 * base longer than max_len is refused. */
Test(record, a_list_of_bases_longer_than_max_len_replays_exactly)
{
        RecordLayout l;
        const uint64_t iters = 200;
        void *region = region_new(64, &l);
        uint8_t buf[64];
        size_t len, *lens;

        const char *bases[] = {A40, B40, C40 "c"};
        cr_assert_gt(seal_list(region, &l, bases, 4, iters), 64,
                     "the list is longer than an input");
        uint8_t **inputs = run_live(region, &l, iters, true, STOP_AFTER_LAST, &lens);
        cr_assert_eq(record_validate(region, &l), RECORD_OK);
        for (uint64_t k = 1; k <= iters; k++) {
                cr_assert_leq(lens[k], 64);
                cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                expect_same(buf, len, inputs[k], lens[k], k);
        }
        free_inputs(inputs, lens, iters);

        /* The same bytes as one input: longer than max_len, refused. */
        record_set_flags(region, 0);
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
        cr_expect_lt(replay_input_from_seed(region, &l, 1, buf, &len), 0);
        RecordHeader *h = record_header(region);
        record_begin_batch(region, &l, 79, RECORD_MODE_EXEC, 1, 1, 1, h->base_len, 0, 0);
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
        free(region);
}

Test(record, a_malformed_pack_is_refused_not_replayed)
{
        RecordLayout l;
        void *region = region_new(256, &l);
        uint8_t buf[256];
        size_t len, *lens;
        seal_packed(region, &l, 4, 8);
        uint8_t **inputs = run_live(region, &l, 8, false, STOP_AFTER_LAST, &lens);
        free_inputs(inputs, lens, 8);
        /* The second entry's length reaches past the list: the description
         * is sealed with it, so only the pack check can tell. */
        RecordHeader *h = record_header(region);
        uint32_t bad = 4000;
        memcpy(record_base(region, &l) + 4 + 40, &bad, 4);
        h->payload_check = record_payload_check(region, &l, h);
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
        cr_expect_lt(replay_input(region, &l, buf, &len), 0);
        free(region);
}

static void expect_seed_path_agrees(bool comparisons)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello, world: a base for comparisons", "world!", 4, 2000);
        size_t *lens;
        uint8_t **inputs = run_live(region, &l, 2000, comparisons, STOP_AFTER_LAST, &lens);
        uint8_t *buf = malloc(l.max_len);
        cr_expect_eq(record_header(region)->cmp_gens, comparisons ? 9 : 0);
        for (uint64_t k = 1; k <= 2000; k++) {
                size_t len;
                cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                expect_same(buf, len, inputs[k], lens[k], k);
        }
        free_inputs(inputs, lens, 2000);
        free(buf);
        free(region);
}

Test(record, replay_from_seed_agrees_with_chain_slots)
{
        expect_seed_path_agrees(false);
}

/* Every table a batch froze stays in the record, so the seed path knows
 * which table each chain read. */
Test(record, replay_from_seed_agrees_with_comparison_tables_in_play)
{
        expect_seed_path_agrees(true);
}

typedef struct Collected {
        uint64_t first;
        uint8_t **inputs;
        size_t *lens;
        uint64_t seen;
} Collected;

static int check_collected(void *ctx, uint64_t k, const uint8_t *data, size_t len)
{
        Collected *c = ctx;
        cr_assert_eq(k, c->first + c->seen);
        expect_same(data, len, c->inputs[k], c->lens[k], k);
        c->seen++;
        return 0;
}

/* A state-dependent crash is replayed by running the runner's history
 * again: a batch that brings the original's tables (and freezes none,
 * whatever its own comparisons) and executes from first_exec on. Both it
 * and replay_range() see exactly the original inputs. */
Test(record, a_history_replay_rebuilds_every_input_with_the_original_tables)
{
        RecordLayout l;
        const uint64_t iters = 1500;
        void *orig = region_new(128, &l);
        seal(orig, &l, "hello, world: a base for comparisons", "world!", 4, iters);
        size_t *lens;
        uint8_t **inputs = run_live(orig, &l, iters, true, STOP_AFTER_LAST, &lens);
        RecordHeader *oh = record_header(orig);
        cr_assert_geq(oh->cmp_gens, 5);

        for (uint64_t first = 1; first <= iters; first += 233) {
                /* What the helper sends: replay_history_batch(), copied into
                 * a fresh record the way wproc_send_batch() and the worker
                 * do. */
                WprocBatch b;
                replay_history_batch(orig, &l, first, iters, &b);
                cr_assert_eq(b.cmp_gens, oh->cmp_gens);
                void *r2 = region_new(128, &l);
                memcpy(record_base(r2, &l), b.base, b.base_len);
                memcpy(record_partner(r2, &l), b.partner, b.partner_len);
                memcpy(record_table(r2, &l), b.table, b.table_len);
                memcpy(record_cmp(r2, &l, 1), b.cmp, b.cmp_gens * sizeof(CmpTable));
                record_begin_batch(r2, &l, b.batch_id, b.mode, b.iters, b.seed, b.chain_len,
                                   (uint32_t)b.base_len, (uint32_t)b.partner_len,
                                   (uint32_t)b.table_len);
                record_set_mutation(r2, b.len_limit, b.op_weights);
                RecordHeader *h2 = record_header(r2);
                h2->first_exec = b.first;
                h2->batch_flags = RECORD_BATCH_REPLAY;
                h2->cmp_gens = b.cmp_gens;

                size_t *lens2;
                uint8_t **in2 = run_live(r2, &l, iters, true, STOP_AFTER_LAST, &lens2);
                for (uint64_t k = 1; k <= iters; k++)
                        expect_same(in2[k], lens2[k], inputs[k], lens[k], k);
                cr_expect_eq(h2->cmp_gens, oh->cmp_gens, "the replay froze nothing");
                free_inputs(in2, lens2, iters);
                free(r2);

                uint8_t buf[128];
                Collected c = {.first = first, .inputs = inputs, .lens = lens};
                oh->count = iters;
                cr_assert_eq(replay_range(orig, &l, first, iters, check_collected, &c, buf), 0);
                cr_assert_eq(c.seen, iters - first + 1);
        }
        free_inputs(inputs, lens, iters);
        free(orig);
}

/* A batch whose record limits growth and weighs the operators: every
 * input stays within the limit (but a longer base is not cut), operators
 * of weight 0 never run, and all three replay paths rebuild every input. */
Test(record, length_limit_and_operator_weights_replay_exactly)
{
        RecordLayout l;
        const uint64_t iters = 1200;
        const char *base = "hello, world: a base for comparisons"; /* 36 bytes */
        uint8_t weights[MUTATOR_WEIGHTS] = {0};
        /* flip_bit (0) stays: it is mutator_mutate()'s fallback. */
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                weights[op] = (uint8_t)(op % 3 == 0 && op ? 0 : 10 * op + 1);
        uint8_t buf[256];
        size_t len, *lens;

        for (uint32_t limit = 20; limit <= 60; limit += 40) {
                void *region = region_new(256, &l);
                seal(region, &l, base, "world!", 4, iters);
                record_set_mutation(region, limit, weights);
                RecordHeader *h = record_header(region);
                cr_assert_eq(record_mutation_max_len(h, &l, h->base_len), limit < 36 ? 36 : limit);
                uint8_t **inputs = run_live(region, &l, iters, true, STOP_AFTER_LAST, &lens);
                cr_assert_eq(record_validate(region, &l), RECORD_OK);
                size_t longest = 0;
                for (uint64_t k = 1; k <= iters; k++) {
                        longest = lens[k] > longest ? lens[k] : longest;
                        cr_assert_eq(replay_input_from_seed(region, &l, k, buf, &len), 0);
                        expect_same(buf, len, inputs[k], lens[k], k);
                }
                cr_expect_eq(longest, limit < 36 ? 36 : limit, "inputs grew to %zu", longest);
                for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                        if (weights[op] == 0)
                                cr_expect_eq(live_trace.applied[op], 0, "%s ran",
                                             mutator_op_name((MutatorOp)op));
                cr_expect_gt(live_trace.applied[MUTATOR_OP_CROSSOVER_OVERWRITE],
                             live_trace.applied[MUTATOR_OP_SET_BYTE]);

                /* The chain slot of the last iteration. */
                cr_assert_eq(replay_input(region, &l, buf, &len), 0);
                expect_same(buf, len, inputs[iters], lens[iters], iters);

                /* A history replay carries the limit and the weights. */
                WprocBatch b;
                replay_history_batch(region, &l, 1, iters, &b);
                void *r2 = region_new(256, &l);
                memcpy(record_base(r2, &l), b.base, b.base_len);
                memcpy(record_partner(r2, &l), b.partner, b.partner_len);
                memcpy(record_table(r2, &l), b.table, b.table_len);
                memcpy(record_cmp(r2, &l, 1), b.cmp, b.cmp_gens * sizeof(CmpTable));
                record_begin_batch(r2, &l, b.batch_id, b.mode, b.iters, b.seed, b.chain_len,
                                   (uint32_t)b.base_len, (uint32_t)b.partner_len,
                                   (uint32_t)b.table_len);
                record_set_mutation(r2, b.len_limit, b.op_weights);
                record_header(r2)->cmp_gens = b.cmp_gens;
                record_header(r2)->batch_flags = RECORD_BATCH_REPLAY;
                size_t *lens2;
                uint8_t **in2 = run_live(r2, &l, iters, true, STOP_AFTER_LAST, &lens2);
                for (uint64_t k = 1; k <= iters; k++)
                        expect_same(in2[k], lens2[k], inputs[k], lens[k], k);
                free_inputs(in2, lens2, iters);
                free(r2);

                /* The limit and the weights are part of the sealed
                 * description. */
                h->op_weights[1] ^= 1;
                cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
                h->op_weights[1] ^= 1;
                h->len_limit++;
                cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
                free_inputs(inputs, lens, iters);
                free(region);
        }
}

Test(record, scribbled_comparison_tables_are_detected_not_replayed)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "hello, world: a base for comparisons", "", 4, 100);
        size_t *lens;
        uint8_t **inputs = run_batch(region, &l, 90, &lens);
        RecordHeader *h = record_header(region);
        const RecordChainSlot *s = &h->slot[((90 - 1) / 4) & 1];
        uint8_t buf[128];
        size_t len;

        cr_assert_eq(h->cmp_gens, 5); /* chains 1, 2, 4, 8, 16 */
        cr_assert_eq(s->cmp_gen, 5);
        CmpTable *t = record_cmp(region, &l, s->cmp_gen);
        cr_assert_gt(t->n_int, 0);
        cr_assert_eq(record_validate(region, &l), RECORD_OK);

        /* The running chain's table. */
        t->ints[0].b ^= 0x100;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        cr_expect_eq(replay_input(region, &l, buf, &len), -(int)RECORD_BAD_CMP);
        t->ints[0].b ^= 0x100;
        t->n_int = 1000; /* never read past the table */
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        t->n_int = 0;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_CMP);
        cr_assert_eq(record_cmp_index(region, &l, &(RecordCmpIndex){0}), RECORD_BAD_CMP);

        /* An older table: the running chain does not need it, the seed
         * path does. */
        seal(region, &l, "hello, world: a base for comparisons", "", 4, 100);
        free_inputs(inputs, lens, 90);
        inputs = run_batch(region, &l, 90, &lens);
        record_cmp(region, &l, 2)->chain ^= 1;
        cr_expect_eq(record_validate(region, &l), RECORD_OK);
        cr_expect_eq(replay_input(region, &l, buf, &len), 0);
        cr_expect_eq(replay_input_from_seed(region, &l, 90, buf, &len), -(int)RECORD_BAD_CMP);
        h->cmp_gens = RECORD_CMP_TABLES + 1;
        cr_expect_eq(replay_input_from_seed(region, &l, 90, buf, &len), -(int)RECORD_BAD_CMP);
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
        cr_assert_eq(cmplog_freeze(&cmplog_live, t, 1, 3, 77), 1);
        cr_expect_eq(t->chain, 3);
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
        uint8_t **inputs = run_batch(region, &l, 7, &lens);
        free_inputs(inputs, lens, 7);
        record_base(region, &l)[3] ^= 0x40;
        uint8_t buf[128];
        size_t len;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_PAYLOAD);
        cr_expect_eq(replay_input(region, &l, buf, &len), -(int)RECORD_BAD_PAYLOAD);
        free(region);
}

Test(record, scribbled_description_or_magic_is_detected)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "abc", "", 4, 10);
        size_t *lens;
        uint8_t **inputs = run_batch(region, &l, 3, &lens);
        free_inputs(inputs, lens, 3);
        record_header(region)->chain_len = 9;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_DESC);
        record_header(region)->magic = 0;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_MAGIC);
        free(region);
}

static void expect_torn_slot_falls_back(bool comparisons)
{
        RecordLayout l;
        void *region = region_new(128, &l);
        seal(region, &l, "fallback, with room for comparisons", "p", 4, 40);
        size_t *lens;
        uint8_t **inputs = run_live(region, &l, 30, comparisons, STOP_AFTER_LAST, &lens);
        /* Iteration 30 is chain 7; tear its slot. */
        record_header(region)->slot[7 & 1].rng.state ^= 1;
        cr_expect_eq(record_validate(region, &l), RECORD_BAD_SLOT);
        uint8_t buf[128];
        size_t len;
        cr_assert_eq(replay_input(region, &l, buf, &len), 0);
        expect_same(buf, len, inputs[30], lens[30], 30);
        free_inputs(inputs, lens, 30);
        free(region);
}

Test(record, torn_slot_falls_back_to_the_seed)
{
        expect_torn_slot_falls_back(false);
}

Test(record, torn_slot_falls_back_to_the_seed_with_comparison_tables)
{
        expect_torn_slot_falls_back(true);
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
