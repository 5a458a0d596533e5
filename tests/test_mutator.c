/*
 * The mutator's promises, as the fuzzer and the recovery helper rely on
 * them: replaying the PRNG rebuilds every input exactly, no operator ever
 * leaves its buffer, an operator that does not apply leaves the input
 * alone, and a mutation step always produces a different input.
 *
 * Buffers are allocated at exactly max_len bytes so that AddressSanitizer
 * catches a write one byte too far.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"

#include "snapfuzz/banned.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A crossover partner whose bytes are easy to recognise: 1, 2, ..., 64. */
#define PARTNER_LEN 64u
static uint8_t partner_bytes[PARTNER_LEN];

static const char *const dict_words[] = {"MAGIC!",           "<?xml", "\xff\xfe",
                                         "Content-Length: ", "0",     "%n%s"};
static uint8_t dict_table[512];
static MutatorDict dict;

/* A comparison table with one entry of each kind. */
static CmpTable cmp_table;

static CmpIntEntry int_entry(uint64_t a, uint64_t b, unsigned width, unsigned flags)
{
        CmpIntEntry e = {.a = a, .b = b, .width = (uint8_t)width, .flags = (uint8_t)flags};
        return e;
}

static CmpMemEntry mem_entry(const char *a, const char *b, unsigned flags)
{
        CmpMemEntry e = {
            .len_a = (uint8_t)strlen(a), .len_b = (uint8_t)strlen(b), .flags = (uint8_t)flags};
        memcpy(e.a, a, e.len_a);
        memcpy(e.b, b, e.len_b);
        return e;
}

static void cmp_fixture(void)
{
        memset(&cmp_table, 0, sizeof(cmp_table));
        cmp_table.ints[0] = int_entry(0x11223344, 0xdeadbeef, 4, CMPTABLE_F_CONST);
        cmp_table.ints[1] = int_entry(0x4142, 0x5a5b, 2, 0);
        cmp_table.ints[2] = int_entry(0x0102030405060708, 0xcafebabefeedface, 8, 0);
        /* A depth compared with a nesting limit: a run length for cmp_run. */
        cmp_table.ints[3] = int_entry(5, 12, 4, CMPTABLE_F_CONST);
        cmp_table.n_int = 4;
        cmp_table.mems[0] = mem_entry("ABCDEFGH", "SNAPFUZZ", 0);
        cmp_table.mems[1] = mem_entry("helo", "hello", CMPTABLE_F_STRING);
        cmp_table.mems[2] = mem_entry("", "needle", CMPTABLE_F_TOKEN);
        cmp_table.n_mem = 3;
}

static void fixture_init(void)
{
        const uint8_t *toks[ARRAY_SIZE(dict_words)];
        size_t lens[ARRAY_SIZE(dict_words)];

        for (size_t i = 0; i < PARTNER_LEN; i++)
                partner_bytes[i] = (uint8_t)(i + 1);
        for (size_t i = 0; i < ARRAY_SIZE(dict_words); i++) {
                toks[i] = (const uint8_t *)dict_words[i];
                lens[i] = strlen(dict_words[i]);
        }
        size_t used = mutator_dict_serialize(dict_table, sizeof(dict_table), toks, lens,
                                             ARRAY_SIZE(dict_words));
        cr_assert_eq(mutator_dict_parse(&dict, dict_table, used), ARRAY_SIZE(dict_words));
        cmp_fixture();
}

static MutatorCtx full_ctx(void)
{
        MutatorCtx c = {
            .partner = partner_bytes, .partner_len = PARTNER_LEN, .dict = &dict, .cmp = &cmp_table};
        return c;
}

/* Random bytes with some decimal digits and signs mixed in, so that every
 * operator, ascii_number included, finds something to do. */
static void fill_input(SfPrng *r, uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                switch (prng_below(r, 4)) {
                case 0:
                        p[i] = (uint8_t)('0' + prng_below(r, 10));
                        break;
                case 1:
                        p[i] = prng_one_in(r, 4) ? '-' : 'x';
                        break;
                default:
                        p[i] = (uint8_t)prng_next32(r);
                        break;
                }
        }
}

static bool differs(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
        return alen != blen || memcmp(a, b, alen) != 0;
}

static bool contains(const uint8_t *hay, size_t hay_len, const void *needle, size_t n)
{
        for (size_t i = 0; i + n <= hay_len; i++)
                if (memcmp(hay + i, needle, n) == 0)
                        return true;
        return false;
}

static uint8_t *alloc_buf(size_t n)
{
        uint8_t *p = malloc(n ? n : 1);
        cr_assert_not_null(p);
        return p;
}

/* --- Determinism and replay ------------------------------------------- */

#define CHAIN_STEPS 10000
#define CHAIN_MAX 256

static const char chain_base[] = "GET /index.html?id=42&n=-7 HTTP/1.1\r\n";

Test(mutator, same_seed_gives_identical_chains, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        uint8_t a[CHAIN_MAX], b[CHAIN_MAX], c[CHAIN_MAX];
        size_t la = sizeof(chain_base) - 1, lb = la, lc = la;
        SfPrng ra, rb, rc;
        int differing = 0;

        memcpy(a, chain_base, la);
        memcpy(b, chain_base, lb);
        memcpy(c, chain_base, lc);
        prng_seed(&ra, 1234, 1);
        prng_seed(&rb, 1234, 1);
        prng_seed(&rc, 1235, 1);
        for (int i = 0; i < CHAIN_STEPS; i++) {
                la = mutator_mutate(&ctx, &ra, a, la, CHAIN_MAX);
                lb = mutator_mutate(&ctx, &rb, b, lb, CHAIN_MAX);
                lc = mutator_mutate(&ctx, &rc, c, lc, CHAIN_MAX);
                cr_assert_eq(la, lb, "lengths diverged at step %d", i);
                cr_assert_arr_eq(a, b, la, "bytes diverged at step %d", i);
                cr_assert_eq(ra.state, rb.state, "PRNG diverged at step %d", i);
                differing += differs(a, la, c, lc);
        }
        /* A different seed is a different walk, from the first step on. */
        cr_expect_gt(differing, CHAIN_STEPS - 10, "only %d of %d steps differ", differing,
                     CHAIN_STEPS);
}

Test(mutator, replay_rebuilds_every_step_of_a_chain, .init = fixture_init)
{
        /* As the runner does: each chain starts from the base with the PRNG
         * saved in the record; step s is the base after s + 1 mutate calls.
         * The recovery helper rebuilds step s from the saved PRNG alone. */
        enum { CHAINS = 8, CHAIN_LEN = 48, MAX = 128 };
        static const char base[] = "{\"id\": 123, \"name\": \"snap\", \"n\": [1,2,3]}";
        const size_t base_len = sizeof(base) - 1;
        MutatorCtx ctx = full_ctx();
        SfPrng rng;

        prng_seed(&rng, 0xdecafbad, 3);
        for (int c = 0; c < CHAINS; c++) {
                SfPrng saved = rng;
                uint8_t live[MAX];
                size_t live_len = base_len;

                memcpy(live, base, base_len);
                for (int s = 0; s < CHAIN_LEN; s++) {
                        live_len = mutator_mutate(&ctx, &rng, live, live_len, MAX);

                        SfPrng replay = saved;
                        uint8_t fresh[MAX];
                        size_t fresh_len = base_len;
                        memcpy(fresh, base, base_len);
                        for (int k = 0; k <= s; k++)
                                fresh_len = mutator_mutate(&ctx, &replay, fresh, fresh_len, MAX);

                        cr_assert_eq(fresh_len, live_len, "chain %d step %d: length", c, s);
                        cr_assert_arr_eq(fresh, live, live_len, "chain %d step %d: bytes", c, s);
                        cr_assert_eq(replay.state, rng.state, "chain %d step %d: PRNG", c, s);
                }
        }
}

Test(mutator, replay_of_single_operators_is_exact, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        SfPrng gen;

        prng_seed(&gen, 5, 5);
        for (int op = 0; op < MUTATOR_OP__COUNT; op++) {
                for (int i = 0; i < 200; i++) {
                        uint8_t in[64], a[64], b[64];
                        size_t len = prng_below(&gen, 65);
                        SfPrng r1, r2;

                        fill_input(&gen, in, sizeof(in));
                        memcpy(a, in, sizeof(in));
                        memcpy(b, in, sizeof(in));
                        prng_seed(&r1, (uint64_t)i, (uint64_t)op);
                        r2 = r1;
                        size_t ra = mutator_apply((MutatorOp)op, &ctx, &r1, a, len, sizeof(a));
                        size_t rb = mutator_apply((MutatorOp)op, &ctx, &r2, b, len, sizeof(b));
                        cr_assert_eq(ra, rb, "%s", mutator_op_name((MutatorOp)op));
                        cr_assert_arr_eq(a, b, sizeof(a), "%s", mutator_op_name((MutatorOp)op));
                }
        }
}

/* --- Every operator: bounds and honest results -------------------------- */

static MutatorOp all_ops[MUTATOR_OP__COUNT];

ParameterizedTestParameters(mutator, operator_stays_in_bounds_and_changes_or_declines)
{
        for (int i = 0; i < MUTATOR_OP__COUNT; i++)
                all_ops[i] = (MutatorOp)i;
        return cr_make_param_array(MutatorOp, all_ops, MUTATOR_OP__COUNT);
}

ParameterizedTest(MutatorOp *opp, mutator, operator_stays_in_bounds_and_changes_or_declines,
                  .init = fixture_init)
{
        static const size_t max_lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64, 300};
        MutatorOp op = *opp;
        const char *name = mutator_op_name(op);
        MutatorCtx ctx = full_ctx();
        SfPrng gen, rng;
        int applied = 0;

        prng_seed(&gen, 42, (uint64_t)op);
        prng_seed(&rng, 43, (uint64_t)op);
        for (int i = 0; i < 6000; i++) {
                size_t max_len = max_lens[prng_below(&gen, ARRAY_SIZE(max_lens))];
                size_t len;
                switch (prng_below(&gen, 4)) {
                case 0:
                        len = max_len; /* full */
                        break;
                case 1:
                        len = prng_below(&gen, 2); /* empty or one byte */
                        break;
                default:
                        len = prng_below(&gen, (uint32_t)max_len + 1);
                        break;
                }
                /* Every other round without partner or dictionary. */
                MutatorCtx none = {0};
                const MutatorCtx *c = (i & 1) ? &ctx : &none;
                uint8_t *buf = alloc_buf(max_len);
                uint8_t *before = alloc_buf(max_len);

                fill_input(&gen, buf, max_len);
                if (prng_one_in(&gen, 8))
                        memset(buf, 'A', max_len); /* a run of one value */
                memcpy(before, buf, max_len);

                size_t r = mutator_apply(op, c, &rng, buf, len, max_len);
                if (r == SIZE_MAX) {
                        cr_assert_arr_eq(buf, before, max_len,
                                         "%s declined but wrote (len %zu, max %zu)", name, len,
                                         max_len);
                } else {
                        cr_assert_leq(r, max_len, "%s: %zu > max_len %zu", name, r, max_len);
                        cr_assert(differs(buf, r, before, len),
                                  "%s claimed a change but made none (len %zu, max %zu)", name, len,
                                  max_len);
                        applied++;
                }
                free(buf);
                free(before);
        }
        cr_expect_gt(applied, 100, "%s applied only %d times", name, applied);
}

struct Declined {
        MutatorOp op;
        const char *input;
        size_t max_len;
        bool with_ctx;
        const char *why;
};

Test(mutator, inapplicable_operators_decline_and_leave_data_alone, .init = fixture_init)
{
        static const struct Declined cases[] = {
            {MUTATOR_OP_FLIP_BIT, "", 8, true, "empty input"},
            {MUTATOR_OP_SET_BYTE, "", 8, true, "empty input"},
            {MUTATOR_OP_INTERESTING8, "", 8, true, "empty input"},
            {MUTATOR_OP_ARITH8, "", 8, true, "empty input"},
            {MUTATOR_OP_INTERESTING16, "a", 8, true, "shorter than 2"},
            {MUTATOR_OP_ARITH16, "a", 8, true, "shorter than 2"},
            {MUTATOR_OP_INTERESTING32, "abc", 8, true, "shorter than 4"},
            {MUTATOR_OP_ARITH32, "abc", 8, true, "shorter than 4"},
            {MUTATOR_OP_INTERESTING64, "abcdefg", 8, true, "shorter than 8"},
            {MUTATOR_OP_ARITH64, "abcdefg", 8, true, "shorter than 8"},
            {MUTATOR_OP_INSERT_BYTES, "abcd", 4, true, "full"},
            {MUTATOR_OP_DUPLICATE_RANGE, "abcd", 4, true, "full"},
            {MUTATOR_OP_DUPLICATE_RANGE, "", 4, true, "nothing to duplicate"},
            {MUTATOR_OP_CROSSOVER_INSERT, "abcd", 4, true, "full"},
            {MUTATOR_OP_ERASE_BYTES, "a", 4, true, "one byte left"},
            {MUTATOR_OP_COPY_RANGE, "a", 4, true, "one byte"},
            {MUTATOR_OP_COPY_RANGE, "\0\0\0\0\0\0", 6, true, "all bytes equal"},
            {MUTATOR_OP_SHUFFLE_BYTES, "a", 4, true, "one byte"},
            {MUTATOR_OP_SHUFFLE_BYTES, "AAAAAAAAAA", 12, true, "all bytes equal"},
            {MUTATOR_OP_ASCII_NUMBER, "no digits here", 32, true, "no number"},
            {MUTATOR_OP_ASCII_NUMBER, "", 32, true, "empty input"},
            {MUTATOR_OP_CROSSOVER_INSERT, "abc", 32, false, "no partner"},
            {MUTATOR_OP_CROSSOVER_OVERWRITE, "abc", 32, false, "no partner"},
            {MUTATOR_OP_CROSSOVER_SPLICE, "abc", 32, false, "no partner"},
            {MUTATOR_OP_CROSSOVER_OVERWRITE, "", 32, true, "empty input"},
            {MUTATOR_OP_DICT_INSERT, "abc", 32, false, "no dictionary"},
            {MUTATOR_OP_DICT_OVERWRITE, "abc", 32, false, "no dictionary"},
            {MUTATOR_OP_CMP_INT, "abcdefgh", 32, false, "no comparison table"},
            {MUTATOR_OP_CMP_MEM, "abcdefgh", 32, false, "no comparison table"},
            {MUTATOR_OP_CMP_INT, "", 32, true, "empty input"},
        };

        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                const struct Declined *t = &cases[k];
                MutatorCtx ctx = t->with_ctx ? full_ctx() : (MutatorCtx){0};
                size_t len = strlen(t->input);
                const char *name = mutator_op_name(t->op);

                /* The all-zero case has embedded NULs. */
                if (t->op == MUTATOR_OP_COPY_RANGE && t->max_len == 6)
                        len = 6;
                for (uint64_t seed = 0; seed < 300; seed++) {
                        uint8_t *buf = alloc_buf(t->max_len);
                        uint8_t *before = alloc_buf(t->max_len);
                        SfPrng r;

                        memset(buf, 0x5a, t->max_len);
                        memcpy(buf, t->input, len);
                        memcpy(before, buf, t->max_len);
                        prng_seed(&r, seed, 9);
                        cr_assert_eq(mutator_apply(t->op, &ctx, &r, buf, len, t->max_len), SIZE_MAX,
                                     "%s should decline: %s", name, t->why);
                        cr_assert_arr_eq(buf, before, t->max_len, "%s wrote while declining", name);
                        free(buf);
                        free(before);
                }
        }
}

Test(mutator, empty_dictionary_and_short_partner_are_handled, .init = fixture_init)
{
        MutatorDict empty;
        MutatorCtx ctx = {.partner = NULL, .partner_len = 5, .dict = &empty};
        uint8_t buf[16] = "abcdefgh";
        SfPrng r;

        mutator_dict_parse(&empty, NULL, 0);
        prng_seed(&r, 1, 1);
        /* A NULL partner with a length is treated as no partner at all. */
        cr_expect_eq(mutator_apply(MUTATOR_OP_CROSSOVER_INSERT, &ctx, &r, buf, 8, 16), SIZE_MAX);
        cr_expect_eq(mutator_apply(MUTATOR_OP_DICT_INSERT, &ctx, &r, buf, 8, 16), SIZE_MAX);
        cr_expect_eq(mutator_apply(MUTATOR_OP_DICT_OVERWRITE, &ctx, &r, buf, 8, 16), SIZE_MAX);
        /* A token longer than the input cannot overwrite it. */
        ctx = full_ctx();
        uint8_t small[2] = {'x', 'y'};
        const uint8_t *tok = (const uint8_t *)"LONGTOKEN";
        size_t tok_len = 9;
        uint8_t table[16];
        MutatorDict one;
        mutator_dict_parse(&one, table,
                           mutator_dict_serialize(table, sizeof(table), &tok, &tok_len, 1));
        ctx.dict = &one;
        cr_expect_eq(mutator_apply(MUTATOR_OP_DICT_OVERWRITE, &ctx, &r, small, 2, 2), SIZE_MAX);
        cr_expect_eq(mutator_apply(MUTATOR_OP_DICT_INSERT, &ctx, &r, small, 2, 10), SIZE_MAX);
        cr_expect_eq(small[0], 'x');
        cr_expect_eq(small[1], 'y');
}

Test(mutator, invalid_arguments_are_refused)
{
        uint8_t buf[4] = {1, 2, 3, 4};
        SfPrng r;

        prng_seed(&r, 1, 1);
        cr_expect_eq(mutator_apply(MUTATOR_OP__COUNT, NULL, &r, buf, 4, 4), SIZE_MAX);
        cr_expect_eq(mutator_apply((MutatorOp)-1, NULL, &r, buf, 4, 4), SIZE_MAX);
        cr_expect_eq(mutator_apply(MUTATOR_OP_FLIP_BIT, NULL, &r, buf, 5, 4), SIZE_MAX,
                     "len beyond max_len");
        cr_expect_eq(mutator_mutate(NULL, &r, buf, 0, 0), 0, "nothing fits in max_len 0");
}

/* --- mutator_mutate ------------------------------------------------------ */

Test(mutator, empty_input_grows, .init = fixture_init)
{
        static const size_t max_lens[] = {1, 2, 5, 64, 4096};
        MutatorCtx with = full_ctx(), without = {0};

        for (size_t m = 0; m < ARRAY_SIZE(max_lens); m++) {
                for (uint64_t seed = 0; seed < 2000; seed++) {
                        uint8_t *buf = alloc_buf(max_lens[m]);
                        SfPrng r;

                        prng_seed(&r, seed, 77);
                        size_t n =
                            mutator_mutate((seed & 1) ? &with : &without, &r, buf, 0, max_lens[m]);
                        cr_assert(n >= 1 && n <= max_lens[m], "max_len %zu: grew to %zu",
                                  max_lens[m], n);
                        free(buf);
                }
        }
}

Test(mutator, max_len_one_is_safe, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        uint8_t *buf = alloc_buf(1);
        size_t len = 0;
        SfPrng r;

        prng_seed(&r, 11, 11);
        for (int i = 0; i < 20000; i++) {
                uint8_t before = buf[0];
                size_t old = len;

                /* Now and then start again from nothing. */
                if (i % 7 == 0)
                        len = old = 0;
                len = mutator_mutate((i & 1) ? &ctx : NULL, &r, buf, len, 1);
                cr_assert_eq(len, 1, "step %d: length %zu", i, len);
                if (old == 1)
                        cr_assert_neq(buf[0], before, "step %d: no change", i);
        }
        free(buf);
}

Test(mutator, full_input_is_safe, .init = fixture_init)
{
        static const size_t max_lens[] = {1, 2, 3, 8, 9, 64, 1000};
        MutatorCtx ctx = full_ctx();
        SfPrng gen, r;

        prng_seed(&gen, 3, 3);
        prng_seed(&r, 4, 4);
        for (size_t m = 0; m < ARRAY_SIZE(max_lens); m++) {
                size_t max_len = max_lens[m];
                for (int i = 0; i < 3000; i++) {
                        uint8_t *buf = alloc_buf(max_len);
                        uint8_t *before = alloc_buf(max_len);

                        fill_input(&gen, buf, max_len);
                        memcpy(before, buf, max_len);
                        size_t n = mutator_mutate((i & 1) ? &ctx : NULL, &r, buf, max_len, max_len);
                        cr_assert_leq(n, max_len);
                        cr_assert(differs(buf, n, before, max_len), "max_len %zu: unchanged",
                                  max_len);
                        free(buf);
                        free(before);
                }
        }
}

Test(mutator, every_step_changes_the_input, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        SfPrng gen, r;

        prng_seed(&gen, 6, 6);
        prng_seed(&r, 7, 7);
        for (int i = 0; i < 100000; i++) {
                uint8_t buf[24], before[24];
                size_t len = prng_below(&gen, 17);
                size_t max_len = len + prng_below(&gen, 8);

                if (max_len == 0)
                        max_len = 1;
                /* Low-entropy inputs are where stacked operators most often
                 * undo each other. */
                if (prng_one_in(&gen, 2))
                        memset(buf, prng_one_in(&gen, 2) ? 0 : 'A', sizeof(buf));
                else
                        fill_input(&gen, buf, sizeof(buf));
                memcpy(before, buf, sizeof(buf));
                size_t n = mutator_mutate((i & 1) ? &ctx : NULL, &r, buf, len, max_len);
                cr_assert_leq(n, max_len);
                cr_assert(differs(buf, n, before, len), "step %d (len %zu, max %zu) unchanged", i,
                          len, max_len);
        }
}

Test(mutator, long_chains_reach_every_length, .init = fixture_init)
{
        /* Growing and shrinking operators both get their turn: a long chain
         * from the empty input visits every length up to max_len. */
        MutatorCtx ctx = full_ctx();
        bool seen[65] = {false};
        uint8_t buf[64];
        size_t len = 0;
        SfPrng r;

        prng_seed(&r, 8, 8);
        for (int i = 0; i < 50000; i++) {
                len = mutator_mutate(&ctx, &r, buf, len, sizeof(buf));
                seen[len] = true;
        }
        for (size_t n = 1; n <= 64; n++)
                cr_expect(seen[n], "length %zu never reached", n);
}

/* --- What individual operators do --------------------------------------- */

/* Applies @op to a copy of @in until it applies (at most 100 seeds). */
static size_t apply_once(MutatorOp op, const MutatorCtx *ctx, uint64_t seed, const uint8_t *in,
                         size_t len, uint8_t *out, size_t max_len)
{
        for (uint64_t k = 0; k < 100; k++) {
                SfPrng r;

                memcpy(out, in, len);
                prng_seed(&r, seed * 100 + k, op);
                size_t n = mutator_apply(op, ctx, &r, out, len, max_len);
                if (n != SIZE_MAX)
                        return n;
        }
        cr_assert_fail("%s never applied", mutator_op_name(op));
        return 0;
}

Test(mutator, flip_bit_flips_exactly_one_bit)
{
        SfPrng gen;

        prng_seed(&gen, 1, 2);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[16], out[16];
                fill_input(&gen, in, sizeof(in));
                cr_assert_eq(apply_once(MUTATOR_OP_FLIP_BIT, NULL, s, in, 16, out, 16), 16);
                int bits = 0;
                for (int i = 0; i < 16; i++)
                        bits += __builtin_popcount(in[i] ^ out[i]);
                cr_assert_eq(bits, 1);
        }
}

Test(mutator, set_byte_changes_exactly_one_byte)
{
        SfPrng gen;

        prng_seed(&gen, 1, 3);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[16], out[16];
                fill_input(&gen, in, sizeof(in));
                cr_assert_eq(apply_once(MUTATOR_OP_SET_BYTE, NULL, s, in, 16, out, 16), 16);
                int bytes = 0;
                for (int i = 0; i < 16; i++)
                        bytes += in[i] != out[i];
                cr_assert_eq(bytes, 1);
        }
}

static uint64_t load(const uint8_t *p, unsigned width, bool big)
{
        uint64_t v = 0;

        for (unsigned i = 0; i < width; i++)
                v = (v << 8) | p[big ? i : width - 1 - i];
        return v;
}

/* True if @out is @in with one @width-byte integer, in some byte order,
 * moved by 1..35 up or down (modulo its width). */
static bool is_arith(const uint8_t *in, const uint8_t *out, size_t len, unsigned width)
{
        uint64_t mask = width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;

        for (size_t p = 0; p + width <= len; p++) {
                if (memcmp(in, out, p) != 0 ||
                    memcmp(in + p + width, out + p + width, len - p - width) != 0)
                        continue;
                for (int big = 0; big < 2; big++) {
                        uint64_t d = (load(out + p, width, big) - load(in + p, width, big)) & mask;
                        if ((d >= 1 && d <= 35) || (d >= mask - 34 && d <= mask))
                                return true;
                }
        }
        return false;
}

Test(mutator, arithmetic_adds_or_subtracts_a_small_delta)
{
        static const MutatorOp ops[] = {MUTATOR_OP_ARITH8, MUTATOR_OP_ARITH16, MUTATOR_OP_ARITH32,
                                        MUTATOR_OP_ARITH64};
        static const unsigned widths[] = {1, 2, 4, 8};
        SfPrng gen;

        prng_seed(&gen, 1, 4);
        for (size_t k = 0; k < ARRAY_SIZE(ops); k++) {
                for (uint64_t s = 0; s < 500; s++) {
                        uint8_t in[12], out[12];
                        fill_input(&gen, in, sizeof(in));
                        cr_assert_eq(apply_once(ops[k], NULL, s, in, 12, out, 12), 12);
                        cr_assert(is_arith(in, out, 12, widths[k]), "%s: not a +-1..35 edit",
                                  mutator_op_name(ops[k]));
                }
        }
}

Test(mutator, interesting_values_appear_in_both_byte_orders)
{
        static const struct {
                MutatorOp op;
                unsigned width;
                const char *le, *be;
        } want[] = {
            {MUTATOR_OP_INTERESTING8, 1, "\x80", "\xff"},
            {MUTATOR_OP_INTERESTING16, 2, "\xff\x7f", "\x7f\xff"},
            {MUTATOR_OP_INTERESTING16, 2, "\x00\x80", "\x80\x00"},
            {MUTATOR_OP_INTERESTING32, 4, "\xff\xff\xff\x7f", "\x7f\xff\xff\xff"},
            {MUTATOR_OP_INTERESTING32, 4, "\x00\x00\x01\x00", "\x00\x01\x00\x00"},
            {MUTATOR_OP_INTERESTING64, 8, "\x00\x00\x00\x00\x00\x00\x00\x80",
             "\x80\x00\x00\x00\x00\x00\x00\x00"},
            {MUTATOR_OP_INTERESTING64, 8, "\xff\xff\xff\xff\xff\xff\xff\x7f",
             "\x7f\xff\xff\xff\xff\xff\xff\xff"},
        };

        for (size_t k = 0; k < ARRAY_SIZE(want); k++) {
                bool le = false, be = false;
                unsigned w = want[k].width;

                for (uint64_t s = 0; s < 4000 && !(le && be); s++) {
                        uint8_t in[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
                        uint8_t out[8];
                        cr_assert_eq(apply_once(want[k].op, NULL, s, in, w, out, w), w);
                        le |= memcmp(out, want[k].le, w) == 0;
                        be |= memcmp(out, want[k].be, w) == 0;
                }
                cr_expect(le && be, "%s: entry %zu missing (le %d, be %d)",
                          mutator_op_name(want[k].op), k, le, be);
        }
}

/* True if @out is @in with @n bytes inserted somewhere; the inserted bytes
 * are returned through @ret_at. */
static bool is_insertion(const uint8_t *in, size_t len, const uint8_t *out, size_t out_len,
                         size_t *ret_at)
{
        if (out_len <= len)
                return false;
        size_t n = out_len - len;
        for (size_t pos = 0; pos <= len; pos++) {
                if (memcmp(in, out, pos) == 0 && memcmp(in + pos, out + pos + n, len - pos) == 0) {
                        *ret_at = pos;
                        return true;
                }
        }
        return false;
}

Test(mutator, insert_bytes_keeps_the_input_around_the_new_bytes)
{
        SfPrng gen;

        prng_seed(&gen, 1, 5);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[20], out[200];
                size_t at;
                fill_input(&gen, in, sizeof(in));
                size_t n = apply_once(MUTATOR_OP_INSERT_BYTES, NULL, s, in, 20, out, 200);
                cr_assert(n > 20 && n <= 20 + 128);
                cr_assert(is_insertion(in, 20, out, n, &at));
        }
}

Test(mutator, erase_bytes_removes_one_range)
{
        SfPrng gen;

        prng_seed(&gen, 1, 6);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[20], out[20];
                size_t at;
                fill_input(&gen, in, sizeof(in));
                size_t n = apply_once(MUTATOR_OP_ERASE_BYTES, NULL, s, in, 20, out, 20);
                cr_assert(n >= 1 && n < 20);
                /* Erasing is inserting in reverse. */
                cr_assert(is_insertion(out, n, in, 20, &at));
        }
}

Test(mutator, duplicate_range_inserts_a_copy_of_the_input)
{
        SfPrng gen;

        prng_seed(&gen, 1, 7);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[20], out[40];
                size_t at;
                fill_input(&gen, in, sizeof(in));
                size_t n = apply_once(MUTATOR_OP_DUPLICATE_RANGE, NULL, s, in, 20, out, 40);
                cr_assert(n > 20 && n <= 40);
                cr_assert(is_insertion(in, 20, out, n, &at));
                /* Any split that explains the insertion will do; with
                 * random bytes there is normally just one. */
                bool found = false;
                for (size_t pos = 0; pos <= 20 && !found; pos++)
                        if (memcmp(in, out, pos) == 0 &&
                            memcmp(in + pos, out + pos + n - 20, 20 - pos) == 0)
                                found = contains(in, 20, out + pos, n - 20);
                cr_assert(found, "inserted bytes are not a range of the input");
        }
}

Test(mutator, copy_range_overwrites_with_another_part_of_the_input)
{
        SfPrng gen;

        prng_seed(&gen, 1, 8);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[20], out[20];
                fill_input(&gen, in, sizeof(in));
                cr_assert_eq(apply_once(MUTATOR_OP_COPY_RANGE, NULL, s, in, 20, out, 20), 20);
                size_t lo = 0, hi = 19;
                while (in[lo] == out[lo])
                        lo++;
                while (in[hi] == out[hi])
                        hi--;
                /* The changed window reads like the input at some other
                 * offset. */
                bool found = false;
                for (size_t src = 0; src + (hi - lo) < 20 && !found; src++)
                        found = src != lo && memcmp(out + lo, in + src, hi - lo + 1) == 0;
                cr_assert(found);
        }
}

Test(mutator, shuffle_bytes_permutes_a_small_window)
{
        SfPrng gen;

        prng_seed(&gen, 1, 9);
        for (uint64_t s = 0; s < 500; s++) {
                uint8_t in[20], out[20];
                unsigned hist_in[256] = {0}, hist_out[256] = {0};
                fill_input(&gen, in, sizeof(in));
                cr_assert_eq(apply_once(MUTATOR_OP_SHUFFLE_BYTES, NULL, s, in, 20, out, 20), 20);
                size_t lo = 0, hi = 19;
                while (in[lo] == out[lo])
                        lo++;
                while (in[hi] == out[hi])
                        hi--;
                cr_assert_lt(hi - lo, 8, "window wider than 8 bytes");
                for (size_t i = 0; i < 20; i++) {
                        hist_in[in[i]]++;
                        hist_out[out[i]]++;
                }
                cr_assert_arr_eq(hist_in, hist_out, sizeof(hist_in), "bytes not preserved");
        }
}

/* Parses an optionally signed decimal number filling all of p[0..n). */
static bool parse_number(const uint8_t *p, size_t n, int64_t *ret)
{
        size_t i = 0;
        bool neg = false;
        uint64_t mag = 0;

        if (n > 0 && p[0] == '-') {
                neg = true;
                i = 1;
        }
        if (i == n)
                return false;
        for (; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return false;
                mag = mag * 10 + (uint64_t)(p[i] - '0');
        }
        *ret = neg ? (int64_t)(0 - mag) : (int64_t)mag;
        return true;
}

Test(mutator, ascii_number_rewrites_the_number_in_place)
{
        /* head and tail delimit the number, its sign included. */
        static const struct {
                const char *text;
                size_t head, tail;
                int64_t value;
        } cases[] = {
            {"Content-Length: 1234\r\n", 16, 20, 1234},
            {"x=-5;", 2, 4, -5},
            {"width=0;", 6, 7, 0},
            {"id=007&", 3, 6, 7},
            {"99", 0, 2, 99},
        };

        for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
                const uint8_t *in = (const uint8_t *)cases[k].text;
                size_t len = strlen(cases[k].text);
                size_t head = cases[k].head, suffix = len - cases[k].tail;

                for (uint64_t s = 0; s < 300; s++) {
                        uint8_t out[64];
                        int64_t v;
                        size_t n =
                            apply_once(MUTATOR_OP_ASCII_NUMBER, NULL, s, in, len, out, sizeof(out));
                        cr_assert_geq(n, head + suffix + 1);
                        cr_assert_arr_eq(out, in, head, "%s: text before the number changed",
                                         cases[k].text);
                        cr_assert_arr_eq(out + n - suffix, in + cases[k].tail, suffix,
                                         "%s: text after the number changed", cases[k].text);
                        cr_assert(parse_number(out + head, n - suffix - head, &v),
                                  "%s: not a number any more", cases[k].text);
                        cr_assert_neq(v, cases[k].value, "%s: same value", cases[k].text);
                }
        }
}

/* On a binary input, scanning all of it for a digit costs more than the
 * rare number is worth: the operator looks within 64 bytes of where it
 * starts (wrapping around the end) and otherwise declines. */
Test(mutator, ascii_number_looks_only_near_where_it_starts)
{
        uint8_t in[401], out[512];
        memset(in, 'x', sizeof(in));
        in[200] = '7';
        unsigned applied = 0, tries = 4000;

        SfPrng r;
        prng_seed(&r, 98, 99);
        for (uint64_t s = 0; s < tries; s++) {
                memcpy(out, in, sizeof(in));
                size_t n =
                    mutator_apply(MUTATOR_OP_ASCII_NUMBER, NULL, &r, out, sizeof(in), sizeof(out));
                if (n == SIZE_MAX) {
                        cr_assert_arr_eq(out, in, sizeof(in), "declined but wrote");
                        continue;
                }
                applied++;
                cr_assert_arr_eq(out, in, 200, "the text before the number changed");
        }
        /* Starts 137..200 of 401 see the digit: about 16%. */
        cr_expect_gt(applied, tries / 10, "applied %u times", applied);
        cr_expect_lt(applied, tries / 4, "applied %u times", applied);

        /* The window wraps: a digit at the start is found from the end. */
        memset(in, 'x', sizeof(in));
        in[0] = '5';
        size_t n = apply_once(MUTATOR_OP_ASCII_NUMBER, NULL, 1, in, 40, out, sizeof(out));
        cr_expect_neq(n, SIZE_MAX);
}

static bool is_partner_run(const uint8_t *p, size_t n)
{
        /* The partner holds 1, 2, ..., 64: any range of it counts up. */
        if (n == 0 || p[0] == 0 || p[0] + n - 1 > PARTNER_LEN)
                return false;
        for (size_t i = 1; i < n; i++)
                if (p[i] != p[0] + i)
                        return false;
        return true;
}

Test(mutator, crossover_takes_bytes_from_the_partner, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        static const uint8_t zeros[32] = {0};

        ctx.dict = NULL;
        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[128];
                size_t at, n;

                n = apply_once(MUTATOR_OP_CROSSOVER_INSERT, &ctx, s, zeros, 32, out, 128);
                cr_assert(is_insertion(zeros, 32, out, n, &at));
                cr_assert(is_partner_run(out + at, n - 32), "insert: not a partner range");

                n = apply_once(MUTATOR_OP_CROSSOVER_OVERWRITE, &ctx, s, zeros, 32, out, 128);
                cr_assert_eq(n, 32);
                size_t lo = 0, hi = 31;
                while (out[lo] == 0)
                        lo++;
                while (out[hi] == 0)
                        hi--;
                cr_assert(is_partner_run(out + lo, hi - lo + 1), "overwrite: not a partner range");

                /* max_len leaves room for all of the partner, so a splice
                 * is a head of zeros and the end of the partner. */
                n = apply_once(MUTATOR_OP_CROSSOVER_SPLICE, &ctx, s, zeros, 32, out, 128);
                lo = 0;
                while (lo < n && out[lo] == 0)
                        lo++;
                cr_assert_lt(lo, n, "splice: nothing from the partner");
                cr_assert_eq(out[n - 1], PARTNER_LEN, "splice: partner tail cut short");
                cr_assert(is_partner_run(out + lo, n - lo), "splice: not a partner tail");
        }
}

Test(mutator, crossover_splice_respects_max_len, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        uint8_t in[10] = "0123456789";

        for (uint64_t s = 0; s < 500; s++) {
                uint8_t *out = alloc_buf(10);
                size_t n = apply_once(MUTATOR_OP_CROSSOVER_SPLICE, &ctx, s, in, 10, out, 10);
                cr_assert_leq(n, 10);
                free(out);
        }
}

Test(mutator, dictionary_insert_places_a_token, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        uint8_t in[10] = {0};

        ctx.partner = NULL;
        ctx.partner_len = 0;
        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[64];
                size_t at;
                size_t n = apply_once(MUTATOR_OP_DICT_INSERT, &ctx, s, in, 10, out, 64);
                cr_assert(is_insertion(in, 10, out, n, &at));
                bool found = false;
                for (size_t w = 0; w < ARRAY_SIZE(dict_words) && !found; w++)
                        found = n - 10 == strlen(dict_words[w]) &&
                                memcmp(out + at, dict_words[w], n - 10) == 0;
                cr_assert(found, "inserted bytes are not a dictionary token");
        }
}

Test(mutator, dictionary_overwrite_places_a_token, .init = fixture_init)
{
        MutatorCtx ctx = full_ctx();
        uint8_t in[20];

        memset(in, '.', sizeof(in));
        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[20];
                size_t n = apply_once(MUTATOR_OP_DICT_OVERWRITE, &ctx, s, in, 20, out, 20);
                cr_assert_eq(n, 20);
                bool found = false;
                for (size_t w = 0; w < ARRAY_SIZE(dict_words) && !found; w++)
                        found = contains(out, 20, dict_words[w], strlen(dict_words[w]));
                cr_assert(found, "no dictionary token in the output");
        }
}

/* --- Input-to-state: the comparison table ------------------------------- */

/* A context whose comparison table holds only @e. */
static MutatorCtx one_int(CmpIntEntry e)
{
        static CmpTable t;
        memset(&t, 0, sizeof(t));
        t.ints[0] = e;
        t.n_int = 1;
        MutatorCtx c = {.cmp = &t};
        return c;
}

static MutatorCtx one_mem(CmpMemEntry e)
{
        static CmpTable t;
        memset(&t, 0, sizeof(t));
        t.mems[0] = e;
        t.n_mem = 1;
        MutatorCtx c = {.cmp = &t};
        return c;
}

static uint64_t load_bytes(const uint8_t *p, unsigned width, bool big)
{
        uint64_t v = 0;
        for (unsigned i = 0; i < width; i++)
                v |= (uint64_t)p[big ? width - 1 - i : i] << (8 * i);
        return v;
}

static void store_bytes(uint8_t *p, unsigned width, uint64_t v, bool big)
{
        for (unsigned i = 0; i < width; i++)
                p[big ? width - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

Test(mutator, cmp_int_writes_the_constant_where_the_operand_is)
{
        for (int big = 0; big < 2; big++) {
                MutatorCtx ctx = one_int(int_entry(0x11223344, 0xdeadbeef, 4, CMPTABLE_F_CONST));
                uint8_t in[24];
                int exact = 0, plus = 0, minus = 0;

                memset(in, '.', sizeof(in));
                store_bytes(in + 7, 4, 0x11223344, big);
                for (uint64_t s = 0; s < 400; s++) {
                        uint8_t out[24];
                        cr_assert_eq(apply_once(MUTATOR_OP_CMP_INT, &ctx, s, in, 24, out, 24), 24);
                        /* One byte order per call: the other one misses the
                         * operand and places the constant anywhere. */
                        if (memcmp(out, in, 7) != 0 || memcmp(out + 11, in + 11, 13) != 0)
                                continue;
                        uint64_t v = load_bytes(out + 7, 4, big);
                        exact += v == 0xdeadbeef;
                        plus += v == 0xdeadbef0;
                        minus += v == 0xdeadbeee;
                }
                cr_expect_gt(exact + plus + minus, 150, "the operand replaced in its byte order");
                cr_expect_gt(exact, 100, "mostly the constant itself (%d)", exact);
                cr_expect_gt(plus, 5);
                cr_expect_gt(minus, 5);
        }
}

Test(mutator, cmp_int_tries_the_other_operand_and_narrower_widths)
{
        /* Neither a 4-byte 0x41 nor a 4-byte 0x5a is in the input, but the
         * byte 0x5a is: the target compared a widened byte. */
        MutatorCtx ctx = one_int(int_entry(0x41, 0x5a, 4, 0));
        uint8_t in[12] = "....Z.......";
        int narrowed = 0;

        for (uint64_t s = 0; s < 400; s++) {
                uint8_t out[12];
                cr_assert_eq(apply_once(MUTATOR_OP_CMP_INT, &ctx, s, in, 12, out, 12), 12);
                if (memcmp(out, in, 4) != 0 || memcmp(out + 5, in + 5, 7) != 0)
                        continue;
                /* Else a width missing everywhere added the operands'
                 * difference at a random place: 'Z' + 0x19 (+-1). */
                if (out[4] >= 'A' - 1 && out[4] <= 'A' + 1)
                        narrowed++;
                else
                        cr_expect(out[4] >= 0x72 && out[4] <= 0x74, "wrote 0x%02x", out[4]);
        }
        cr_expect_gt(narrowed, 100, "the byte was replaced %d times", narrowed);
}

/* An operand missing from the input is written at a random place, or (the
 * operand may be the input's value plus a constant) the operands'
 * difference is added to the value there, each about half of the time. */
Test(mutator, cmp_int_places_an_operand_missing_from_the_input)
{
        const uint64_t from = 0x0102030405060708, to = 0xcafebabefeedface;
        const uint64_t dots = 0x2e2e2e2e2e2e2e2e;
        MutatorCtx ctx = one_int(int_entry(from, to, 8, CMPTABLE_F_CONST));
        uint8_t in[16];
        memset(in, '.', sizeof(in));
        int placed = 0, shifted = 0;

        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[16], le[8], be[8];
                bool found = false, moved = false;
                cr_assert_eq(apply_once(MUTATOR_OP_CMP_INT, &ctx, s, in, 16, out, 16), 16);
                for (int d = -1; d <= 1 && !found && !moved; d++) {
                        uint64_t want = to + (uint64_t)(int64_t)d;
                        store_bytes(le, 8, want, false);
                        store_bytes(be, 8, want, true);
                        found = contains(out, 16, le, 8) || contains(out, 16, be, 8);
                        store_bytes(le, 8, dots + (want - from), false);
                        store_bytes(be, 8, dots + (want - from), true);
                        moved = contains(out, 16, le, 8) || contains(out, 16, be, 8);
                }
                cr_assert(found || moved, "seed %lu: neither the constant nor the shifted value",
                          (unsigned long)s);
                placed += found;
                shifted += moved;
        }
        cr_expect_gt(placed, 100, "the constant placed %d times", placed);
        cr_expect_gt(shifted, 100, "the value shifted %d times", shifted);
}

Test(mutator, cmp_mem_replaces_the_operand_found_in_the_input)
{
        MutatorCtx ctx = one_mem(mem_entry("ABCDEFGH", "SNAPFUZZ", 0));
        const uint8_t in[] = "xxABCDEFGHyy";
        const uint8_t back[] = "xxSNAPFUZZyy";

        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[12];
                cr_assert_eq(apply_once(MUTATOR_OP_CMP_MEM, &ctx, s, in, 12, out, 12), 12);
                cr_assert_arr_eq(out, back, 12);
        }
        /* Either operand can be the one in the input. */
        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[12];
                cr_assert_eq(apply_once(MUTATOR_OP_CMP_MEM, &ctx, s, back, 12, out, 12), 12);
                cr_assert_arr_eq(out, in, 12);
        }
}

Test(mutator, cmp_mem_replaces_a_string_span_for_span)
{
        MutatorCtx ctx = one_mem(mem_entry("helo", "hello", CMPTABLE_F_STRING));
        const uint8_t in[] = "say helo now";

        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[32];
                size_t n = apply_once(MUTATOR_OP_CMP_MEM, &ctx, s, in, 12, out, 32);
                cr_assert_eq(n, 13);
                cr_assert_arr_eq(out, "say hello now", 13);
        }
        /* No room to grow: declined, nothing written. */
        uint8_t full[12];
        memcpy(full, in, 12);
        SfPrng r;
        prng_seed(&r, 1, 1);
        cr_expect_eq(mutator_apply(MUTATOR_OP_CMP_MEM, &ctx, &r, full, 12, 12), SIZE_MAX);
        cr_expect_arr_eq(full, in, 12);
}

Test(mutator, cmp_mem_places_a_needle_inserted_or_overwriting)
{
        MutatorCtx ctx = one_mem(mem_entry("", "needle", CMPTABLE_F_TOKEN));
        uint8_t in[16];
        int inserted = 0, overwritten = 0;

        memset(in, '.', sizeof(in));
        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[32];
                size_t at, n = apply_once(MUTATOR_OP_CMP_MEM, &ctx, s, in, 16, out, 32);
                cr_assert(contains(out, n, "needle", 6));
                if (n == 22) {
                        cr_assert(is_insertion(in, 16, out, n, &at));
                        inserted++;
                } else {
                        cr_assert_eq(n, 16);
                        overwritten++;
                }
        }
        cr_expect_gt(inserted, 50);
        cr_expect_gt(overwritten, 50);
}

/* The nesting limit is compared with a depth, not with a byte: cmp_run
 * makes the run through a random position as long as the constant (or one
 * more or one less), and keeps what followed the run, here the '{' that
 * must come after exactly that many '['. */
Test(mutator, cmp_run_sets_a_run_to_a_compared_length)
{
        MutatorCtx ctx = one_int(int_entry(3, 40, 4, CMPTABLE_F_CONST));
        static const uint8_t in[] = "x[[[{y";
        int exact = 0, plus = 0, minus = 0;

        for (uint64_t s = 0; s < 300; s++) {
                uint8_t out[64];
                size_t n = apply_once(MUTATOR_OP_CMP_RUN, &ctx, s, in, 6, out, sizeof(out));
                /* The run of 'x', of '[', of '{' or of 'y' is 39, 40 or 41
                 * long. */
                cr_assert(n >= 6 - 3 + 39 && n <= 6 - 1 + 41, "length %zu", n);
                bool brackets =
                    out[0] == 'x' && out[1] == '[' && out[n - 2] == '{' && out[n - 1] == 'y';
                for (size_t i = 1; brackets && i < n - 2; i++)
                        brackets = out[i] == '[';
                if (!brackets)
                        continue; /* another byte's run */
                exact += n - 3 == 40;
                plus += n - 3 == 41;
                minus += n - 3 == 39;
        }
        cr_expect_gt(exact, 20, "mostly the constant itself (%d)", exact);
        cr_expect_gt(plus, 5);
        cr_expect_gt(minus, 5);
}

Test(mutator, cmp_run_declines_a_length_that_does_not_fit)
{
        /* Magic numbers are no lengths; the only entry is one. */
        MutatorCtx ctx = one_int(int_entry(0, 0xdeadbeef, 4, CMPTABLE_F_CONST));
        uint8_t buf[16] = "[[[[{";
        SfPrng r;
        prng_seed(&r, 1, 2);
        for (int i = 0; i < 100; i++)
                cr_assert_eq(mutator_apply(MUTATOR_OP_CMP_RUN, &ctx, &r, buf, 5, sizeof(buf)),
                             SIZE_MAX);
        /* A limit of 40 does not fit 16 bytes, but one entry that does is
         * found wherever the search starts. */
        static CmpTable t;
        t.ints[0] = int_entry(0, 40, 4, CMPTABLE_F_CONST);
        t.ints[1] = int_entry(0, 0xdeadbeef, 4, CMPTABLE_F_CONST);
        t.ints[2] = int_entry(2, 9, 4, CMPTABLE_F_CONST);
        t.n_int = 3;
        ctx.cmp = &t;
        int applied = 0;
        for (int i = 0; i < 100; i++) {
                uint8_t out[16];
                memcpy(out, buf, 5);
                size_t n = mutator_apply(MUTATOR_OP_CMP_RUN, &ctx, &r, out, 5, sizeof(out));
                if (n == SIZE_MAX)
                        continue;
                applied++;
                cr_assert(n <= sizeof(out));
        }
        cr_expect_gt(applied, 50, "applied %d times", applied);
}

Test(mutator, comparison_operators_note_what_they_wrote)
{
        MutatorTrace trace = {0};
        MutatorCtx ctx = one_mem(mem_entry("ABCDEFGH", "SNAPFUZZ", 0));
        uint8_t buf[12];
        SfPrng r;

        ctx.trace = &trace;
        memcpy(buf, "xxABCDEFGHyy", 12);
        prng_seed(&r, 3, 3);
        cr_assert_eq(mutator_apply(MUTATOR_OP_CMP_MEM, &ctx, &r, buf, 12, 12), 12);
        cr_assert_eq(trace.n, 1);
        cr_assert_eq(trace.len[0], 8);
        cr_assert_arr_eq(trace.bytes[0], "SNAPFUZZ", 8);

        /* One-byte writes and small numbers are not worth a dictionary
         * entry. */
        MutatorCtx narrow = one_int(int_entry(0x41, 0x5a, 1, CMPTABLE_F_CONST));
        narrow.trace = &trace;
        trace.n = 0;
        memcpy(buf, "...A", 4);
        cr_assert_eq(mutator_apply(MUTATOR_OP_CMP_INT, &narrow, &r, buf, 4, 12), 4);
        cr_assert_eq(trace.n, 0);
        MutatorCtx small = one_int(int_entry(0x41, 0xffffff80, 4, CMPTABLE_F_CONST));
        small.trace = &trace;
        memcpy(buf, "A\0\0\0", 4);
        cr_assert_eq(mutator_apply(MUTATOR_OP_CMP_INT, &small, &r, buf, 4, 12), 4);
        cr_assert_eq(trace.n, 0);

        /* The trace is an output: it never changes the bytes produced. */
        uint8_t a[64], b[64];
        size_t la = 20, lb = 20;
        SfPrng ra, rb;
        MutatorCtx with = {.cmp = &cmp_table, .trace = &trace};
        MutatorCtx without = {.cmp = &cmp_table};
        cmp_fixture();
        memset(a, 'q', sizeof(a));
        memset(b, 'q', sizeof(b));
        prng_seed(&ra, 9, 9);
        rb = ra;
        for (int i = 0; i < 2000; i++) {
                la = mutator_mutate(&with, &ra, a, la, sizeof(a));
                lb = mutator_mutate(&without, &rb, b, lb, sizeof(b));
                cr_assert_eq(la, lb);
                cr_assert_arr_eq(a, b, la);
        }
        cr_expect_gt(trace.n, 0);
}

Test(mutator, an_empty_comparison_table_draws_as_none)
{
        static CmpTable empty;
        MutatorCtx with = {.partner = partner_bytes, .partner_len = PARTNER_LEN, .cmp = &empty};
        MutatorCtx without = {.partner = partner_bytes, .partner_len = PARTNER_LEN};
        uint8_t a[64], b[64];
        size_t la = 10, lb = 10;
        SfPrng ra, rb;

        for (size_t i = 0; i < PARTNER_LEN; i++)
                partner_bytes[i] = (uint8_t)(i + 1);
        memset(a, 'x', sizeof(a));
        memset(b, 'x', sizeof(b));
        prng_seed(&ra, 4, 4);
        rb = ra;
        for (int i = 0; i < 2000; i++) {
                la = mutator_mutate(&with, &ra, a, la, sizeof(a));
                lb = mutator_mutate(&without, &rb, b, lb, sizeof(b));
                cr_assert_eq(la, lb);
                cr_assert_arr_eq(a, b, la);
                cr_assert_eq(ra.state, rb.state);
        }
}

Test(mutator, scribbled_comparison_tables_are_safe)
{
        static CmpTable t;
        SfPrng gen, rng;

        prng_seed(&gen, 77, 77);
        prng_seed(&rng, 78, 78);
        for (int i = 0; i < 3000; i++) {
                uint8_t *raw = (uint8_t *)&t;
                for (size_t j = 0; j < sizeof(t); j++)
                        raw[j] = (uint8_t)prng_next32(&gen);
                /* Counts anywhere from zero to far beyond the arrays. */
                t.n_int = prng_one_in(&gen, 2) ? prng_below(&gen, CMPTABLE_INTS + 1) : t.n_int;
                t.n_mem = prng_one_in(&gen, 2) ? prng_below(&gen, CMPTABLE_MEMS + 1) : t.n_mem;
                size_t max_len = 1 + prng_below(&gen, 48);
                size_t len = prng_below(&gen, (uint32_t)max_len + 1);
                uint8_t *buf = alloc_buf(max_len);
                fill_input(&gen, buf, max_len);
                MutatorCtx ctx = {.cmp = &t};
                MutatorOp op = prng_one_in(&gen, 2) ? MUTATOR_OP_CMP_INT : MUTATOR_OP_CMP_MEM;
                size_t r = mutator_apply(op, &ctx, &rng, buf, len, max_len);
                cr_assert(r == SIZE_MAX || r <= max_len);
                cr_assert_leq(mutator_mutate(&ctx, &rng, buf, len, max_len), max_len);
                free(buf);
        }
}

/* --- The dictionary table ----------------------------------------------- */

Test(mutator, dictionary_table_round_trips)
{
        uint8_t tokens[40][MUTATOR_DICT_MAX_TOKEN];
        const uint8_t *toks[40];
        size_t lens[40];
        uint8_t table[4096];
        static MutatorDict d;
        SfPrng r;

        prng_seed(&r, 10, 10);
        for (int i = 0; i < 40; i++) {
                lens[i] =
                    i == 0 ? MUTATOR_DICT_MAX_TOKEN : 1 + prng_below(&r, MUTATOR_DICT_MAX_TOKEN);
                for (size_t j = 0; j < lens[i]; j++)
                        tokens[i][j] = (uint8_t)prng_next32(&r);
                toks[i] = tokens[i];
        }
        size_t used = mutator_dict_serialize(table, sizeof(table), toks, lens, 40);
        size_t expect = 1;
        for (int i = 0; i < 40; i++)
                expect += 1 + lens[i];
        cr_assert_eq(used, expect, "every token plus a terminator");
        cr_assert_eq(table[used - 1], 0, "terminated");
        cr_assert_eq(mutator_dict_parse(&d, table, used), 40);
        cr_assert_eq(d.count, 40);
        for (int i = 0; i < 40; i++) {
                cr_assert_eq(d.len[i], lens[i]);
                cr_assert_arr_eq(d.table + d.offset[i], tokens[i], lens[i]);
        }
}

Test(mutator, dictionary_serialize_skips_unusable_tokens)
{
        uint8_t big[MUTATOR_DICT_MAX_TOKEN + 1];
        const uint8_t *toks[] = {(const uint8_t *)"",
                                 big,
                                 (const uint8_t *)"ok",
                                 NULL,
                                 (const uint8_t *)"this one does not fit",
                                 (const uint8_t *)"z"};
        size_t lens[] = {0, sizeof(big), 2, 3, 21, 1};
        uint8_t table[8];
        MutatorDict d;

        memset(big, 'B', sizeof(big));
        size_t used = mutator_dict_serialize(table, sizeof(table), toks, lens, ARRAY_SIZE(toks));
        /* [2]ok [1]z [0] */
        cr_assert_eq(used, 6);
        cr_assert_eq(mutator_dict_parse(&d, table, used), 2);
        cr_assert_arr_eq(d.table + d.offset[0], "ok", 2);
        cr_assert_arr_eq(d.table + d.offset[1], "z", 1);

        /* No room at all, or room only for the terminator. */
        cr_assert_eq(mutator_dict_serialize(table, 0, toks, lens, ARRAY_SIZE(toks)), 0);
        cr_assert_eq(mutator_dict_serialize(table, 1, toks, lens, ARRAY_SIZE(toks)), 1);
        cr_assert_eq(table[0], 0);
}

Test(mutator, dictionary_parse_of_truncated_tables_is_safe)
{
        const uint8_t *toks[] = {(const uint8_t *)"alpha", (const uint8_t *)"be",
                                 (const uint8_t *)"gamma-delta", (const uint8_t *)"e"};
        size_t lens[] = {5, 2, 11, 1};
        uint8_t table[64];
        static MutatorDict d;

        size_t used = mutator_dict_serialize(table, sizeof(table), toks, lens, ARRAY_SIZE(toks));
        for (size_t cut = 0; cut <= used; cut++) {
                /* An exact-size copy, so a read past the cut is caught. */
                uint8_t *copy = alloc_buf(cut);
                memcpy(copy, table, cut);
                uint32_t n = mutator_dict_parse(&d, copy, cut);
                cr_assert_leq(n, ARRAY_SIZE(toks));
                for (uint32_t i = 0; i < n; i++) {
                        cr_assert_leq(d.offset[i] + d.len[i], cut, "entry %u past the cut", i);
                        cr_assert_eq(d.len[i], lens[i]);
                        cr_assert_arr_eq(copy + d.offset[i], toks[i], lens[i]);
                }
                free(copy);
        }
}

Test(mutator, dictionary_parse_of_garbage_is_safe)
{
        static MutatorDict d;
        SfPrng r;

        prng_seed(&r, 12, 12);
        for (int i = 0; i < 2000; i++) {
                size_t len = prng_below(&r, 600);
                uint8_t *t = alloc_buf(len);
                for (size_t j = 0; j < len; j++)
                        t[j] = (uint8_t)prng_next32(&r);
                uint32_t n = mutator_dict_parse(&d, t, len);
                for (uint32_t k = 0; k < n; k++) {
                        cr_assert(d.len[k] >= 1 && d.len[k] <= MUTATOR_DICT_MAX_TOKEN);
                        cr_assert_leq(d.offset[k] + d.len[k], len);
                }
                free(t);
        }
}

Test(mutator, dictionary_parse_skips_overlong_entries_and_stops_at_the_limit)
{
        static uint8_t table[3 * (MUTATOR_DICT_MAX_ENTRIES + 100)];
        static MutatorDict d;
        size_t off = 0;

        /* An entry longer than MUTATOR_DICT_MAX_TOKEN is skipped, and the
         * next one is still found. */
        table[off++] = MUTATOR_DICT_MAX_TOKEN + 1;
        memset(table + off, 'L', MUTATOR_DICT_MAX_TOKEN + 1);
        off += MUTATOR_DICT_MAX_TOKEN + 1;
        table[off++] = 3;
        memcpy(table + off, "abc", 3);
        off += 3;
        table[off++] = 0;
        table[off++] = 1; /* after the terminator: ignored */
        table[off++] = 'x';
        cr_assert_eq(mutator_dict_parse(&d, table, off), 1);
        cr_assert_eq(d.len[0], 3);
        cr_assert_arr_eq(d.table + d.offset[0], "abc", 3);

        /* More entries than the dictionary holds: the rest are ignored. */
        off = 0;
        for (uint32_t i = 0; i < MUTATOR_DICT_MAX_ENTRIES + 100; i++) {
                table[off++] = 2;
                table[off++] = (uint8_t)i;
                table[off++] = (uint8_t)(i >> 8);
        }
        cr_assert_eq(mutator_dict_parse(&d, table, off), MUTATOR_DICT_MAX_ENTRIES);
        cr_assert_eq(d.table[d.offset[MUTATOR_DICT_MAX_ENTRIES - 1]],
                     (uint8_t)(MUTATOR_DICT_MAX_ENTRIES - 1));
}

/* --- Names ---------------------------------------------------------------- */

/* --- Operator weights and stack depth --------------------------------- */

Test(mutator, a_plan_draws_operators_in_proportion_to_their_weights, .init = fixture_init)
{
        uint8_t weights[MUTATOR_WEIGHTS] = {0};
        MutatorPlan plan;
        cr_assert_not(mutator_plan_init(&plan, weights), "all zero: no plan");

        weights[MUTATOR_OP_FLIP_BIT] = 200;
        weights[MUTATOR_OP_SET_BYTE] = 50;
        weights[MUTATOR_OP_CROSSOVER_OVERWRITE] = 250;
        cr_assert(mutator_plan_init(&plan, weights));

        /* Every combination of what a context offers holds only operators
         * it offers, each weighted one at least once. */
        for (unsigned combo = 0; combo < 8; combo++) {
                unsigned count[MUTATOR_OP__COUNT] = {0};
                for (unsigned i = 0; i < MUTATOR_PLAN_SLOTS; i++)
                        count[plan.pick[combo][i]]++;
                cr_expect_eq(count[MUTATOR_OP_CROSSOVER_OVERWRITE] != 0, (combo & 1) != 0);
                if (combo & 1) {
                        cr_expect_eq(count[MUTATOR_OP_FLIP_BIT] + count[MUTATOR_OP_SET_BYTE] +
                                         count[MUTATOR_OP_CROSSOVER_OVERWRITE],
                                     MUTATOR_PLAN_SLOTS);
                        cr_expect_geq(count[MUTATOR_OP_CROSSOVER_OVERWRITE], 120);
                        cr_expect_leq(count[MUTATOR_OP_CROSSOVER_OVERWRITE], 135);
                } else {
                        /* 200 : 50 of the slots. */
                        cr_expect_geq(count[MUTATOR_OP_FLIP_BIT], 200);
                        cr_expect_leq(count[MUTATOR_OP_FLIP_BIT], 208);
                        cr_expect_eq(count[MUTATOR_OP_FLIP_BIT] + count[MUTATOR_OP_SET_BYTE],
                                     MUTATOR_PLAN_SLOTS);
                }
        }

        /* What a chain of mutations applies follows the plan. */
        MutatorTrace trace;
        memset(&trace, 0, sizeof(trace));
        MutatorCtx ctx = full_ctx();
        ctx.plan = &plan;
        ctx.trace = &trace;
        SfPrng r;
        prng_seed(&r, 5, 6);
        uint8_t *buf = alloc_buf(CHAIN_MAX);
        size_t len = sizeof(chain_base) - 1;
        memcpy(buf, chain_base, len);
        for (unsigned i = 0; i < 3000; i++) {
                len = mutator_mutate(&ctx, &r, buf, len, CHAIN_MAX);
                cr_assert_neq(trace.ops, 0, "every step names what it applied");
                cr_assert_eq(trace.ops &
                                 ~((1u << MUTATOR_OP_FLIP_BIT) | (1u << MUTATOR_OP_SET_BYTE) |
                                   (1u << MUTATOR_OP_CROSSOVER_OVERWRITE) |
                                   (1u << MUTATOR_OP_INSERT_BYTES)),
                             0, "an operator of weight 0 ran: %x", trace.ops);
        }
        unsigned total = 0;
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                total += trace.applied[op];
        double flip = (double)trace.applied[MUTATOR_OP_FLIP_BIT] / total;
        cr_expect(flip > 0.30 && flip < 0.48, "flip_bit share %.2f, want about 0.39", flip);
        free(buf);
}

/* A step stacks 1, 2, 4 or 8 operators alike (some may not apply). */
Test(mutator, a_step_stacks_one_two_four_or_eight_operators, .init = fixture_init)
{
        MutatorTrace trace;
        MutatorCtx ctx = full_ctx();
        ctx.trace = &trace;
        SfPrng r;
        prng_seed(&r, 11, 12);
        uint8_t *buf = alloc_buf(CHAIN_MAX);
        unsigned steps = 4000, one = 0, over_four = 0;

        for (unsigned i = 0; i < steps; i++) {
                size_t len = sizeof(chain_base) - 1;
                memcpy(buf, chain_base, len);
                memset(&trace, 0, sizeof(trace));
                (void)mutator_mutate(&ctx, &r, buf, len, CHAIN_MAX);
                unsigned n = 0;
                for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                        n += trace.applied[op];
                cr_assert_geq(n, 1);
                cr_assert_leq(n, MUTATOR_MAX_STACK);
                one += n == 1;
                over_four += n > 4;
        }
        cr_expect(one > steps * 20 / 100 && one < steps * 32 / 100, "one operator %u times", one);
        /* At most a binomial(steps, 1/4) count (eight drawn, five of them
         * applied): 1000 +- 27, so 26% was one standard deviation and a
         * new operator's draws crossed it. */
        cr_expect(over_four > steps * 18 / 100 && over_four < steps * 28 / 100,
                  "more than four %u times", over_four);
        free(buf);
}

Test(mutator, operator_names_are_stable_and_distinct)
{
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_FLIP_BIT), "flip_bit");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_ARITH32), "arith32");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_CROSSOVER_SPLICE), "crossover_splice");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_DICT_OVERWRITE), "dict_overwrite");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_CMP_INT), "cmp_int");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP_CMP_MEM), "cmp_mem");
        cr_expect_str_eq(mutator_op_name(MUTATOR_OP__COUNT), "unknown");
        for (int i = 0; i < MUTATOR_OP__COUNT; i++) {
                const char *a = mutator_op_name((MutatorOp)i);
                cr_assert_not_null(a);
                cr_assert_gt(strlen(a), 0);
                for (int j = 0; j < i; j++)
                        cr_assert_str_neq(a, mutator_op_name((MutatorOp)j));
        }
}
