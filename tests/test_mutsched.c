/*
 * The coordinator's mutation steering: the length limit starts at the
 * longest seed and grows only while coverage stalls, and operators that
 * produce finds get more weight while the others keep a floor.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "core/mutsched.h"

#include "snapfuzz/banned.h"

static RecordHeader batch_figures(unsigned op_a, uint32_t applied_a, uint32_t found_a,
                                  unsigned op_b, uint32_t applied_b, uint32_t found_b)
{
        RecordHeader h;
        memset(&h, 0, sizeof(h));
        h.op_applied[op_a] = applied_a;
        h.op_found[op_a] = found_a;
        h.op_applied[op_b] = applied_b;
        h.op_found[op_b] = found_b;
        return h;
}

Test(mutsched, the_length_limit_grows_only_while_coverage_stalls)
{
        MutSched s;
        RecordHeader none;
        memset(&none, 0, sizeof(none));

        mutsched_init(&s, 4096, 0);
        cr_expect_eq(s.len_limit, 4, "an empty seed set starts at 4 bytes");
        mutsched_init(&s, 4096, 100);
        cr_expect_eq(s.len_limit, 100, "the longest seed");
        mutsched_init(&s, 64, 100);
        cr_expect_eq(s.len_limit, 64, "never above max_len");

        /* Finds at the end of each batch keep it where it is, however
         * many inputs ran. */
        mutsched_init(&s, 4096, 32);
        for (int i = 0; i < 100; i++)
                mutsched_batch_done(&s, &none, 1000000, 1000000);
        cr_expect_eq(s.len_limit, 32);

        /* A stall of 100 * log2(32) inputs is one step of log2(32). */
        mutsched_batch_done(&s, &none, 499, 0);
        cr_expect_eq(s.len_limit, 32);
        mutsched_batch_done(&s, &none, 1, 0);
        cr_expect_eq(s.len_limit, 37);
        /* A find resets the stall. */
        mutsched_batch_done(&s, &none, 499, 0);
        mutsched_batch_done(&s, &none, 10, 10);
        mutsched_batch_done(&s, &none, 499, 0);
        cr_expect_eq(s.len_limit, 37);
        /* To the executions after it: a batch's tail after its last find
         * stalls as much as a batch without one. */
        mutsched_init(&s, 4096, 32);
        mutsched_batch_done(&s, &none, 1000, 501);
        cr_expect_eq(s.len_limit, 32);
        mutsched_batch_done(&s, &none, 1, 0);
        cr_expect_eq(s.len_limit, 37);

        /* A long stall climbs step by step up to max_len, not past it. */
        size_t last = s.len_limit;
        for (int i = 0; i < 2000; i++) {
                mutsched_batch_done(&s, &none, 100000, 0);
                cr_assert_geq(s.len_limit, last);
                last = s.len_limit;
        }
        cr_expect_eq(s.len_limit, 4096);
}

Test(mutsched, operators_that_find_get_more_weight)
{
        MutSched s;
        mutsched_init(&s, 4096, 16);
        for (unsigned op = 0; op < MUTATOR_WEIGHTS; op++)
                cr_expect_eq(s.weights[op], 0, "before any figures: every operator alike");

        /* Applied as often; one finds ten times as much. */
        RecordHeader h =
            batch_figures(MUTATOR_OP_ARITH8, 100000, 50, MUTATOR_OP_SET_BYTE, 100000, 5);
        for (int i = 0; i < 20; i++)
                mutsched_batch_done(&s, &h, 200000, 200000);
        cr_expect_eq(s.weights[MUTATOR_OP_ARITH8], 255);
        cr_expect_lt(s.weights[MUTATOR_OP_SET_BYTE], 60);
        cr_expect_geq(s.weights[MUTATOR_OP_SET_BYTE], MUTSCHED_MIN_WEIGHT);
        /* Operators without figures sit at the overall rate, between. */
        cr_expect_gt(s.weights[MUTATOR_OP_FLIP_BIT], s.weights[MUTATOR_OP_SET_BYTE]);
        cr_expect_lt(s.weights[MUTATOR_OP_FLIP_BIT], s.weights[MUTATOR_OP_ARITH8]);
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                cr_expect_geq(s.weights[op], MUTSCHED_MIN_WEIGHT, "every operator keeps a floor");

        /* The figures decay: when arith8 stops paying off and set_byte
         * starts, the weights follow. */
        h = batch_figures(MUTATOR_OP_ARITH8, 100000, 0, MUTATOR_OP_SET_BYTE, 100000, 50);
        for (int i = 0; i < 200; i++)
                mutsched_batch_done(&s, &h, 200000, 200000);
        cr_expect_eq(s.weights[MUTATOR_OP_SET_BYTE], 255);
        cr_expect_lt(s.weights[MUTATOR_OP_ARITH8], 40);

        /* The weights build a plan that draws accordingly. */
        MutatorPlan plan;
        cr_assert(mutator_plan_init(&plan, s.weights));
        unsigned set = 0, arith = 0;
        for (unsigned i = 0; i < MUTATOR_PLAN_SLOTS; i++) {
                set += plan.pick[0][i] == MUTATOR_OP_SET_BYTE;
                arith += plan.pick[0][i] == MUTATOR_OP_ARITH8;
        }
        cr_expect_gt(set, 4 * arith);
}
