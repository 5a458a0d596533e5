/*
 * The minimizer's algorithm on pure oracles (C functions standing in for a
 * target): it finds the bytes a crash needs, keeps the crash's identity,
 * respects its budget, and is deterministic. The end-to-end behaviour on
 * real targets is in test_minimize.c.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recovery/minimize.h"

#define NEEDLE "FUZZ!!"

static int needle_oracle(void *ctx, const uint8_t *data, size_t len)
{
        (void)ctx;
        return memmem(data, len, NEEDLE, 6) ? MINIMIZE_SAME : MINIMIZE_NO_CRASH;
}

static uint8_t *random_with_needle(size_t len, size_t at, unsigned seed)
{
        uint8_t *b = malloc(len);
        srand(seed);
        for (size_t i = 0; i < len; i++)
                b[i] = (uint8_t)rand();
        memcpy(b + at, NEEDLE, 6);
        return b;
}

Test(minimize, four_kib_shrink_to_the_six_bytes_the_crash_needs)
{
        uint8_t *in = random_with_needle(4096, 2045, 1);
        MinimizeBudget b = {0};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(minimize_input(needle_oracle, NULL, in, 4096, &b, &out, &len, &st), 0);
        cr_expect_eq(len, 6);
        cr_expect_arr_eq(out, NEEDLE, 6);
        cr_expect_eq(st.from_len, 4096);
        cr_expect_eq(st.to_len, 6);
        cr_expect_eq(st.stopped, MINIMIZE_STOP_DONE);
        cr_expect_eq(st.trials, st.same + st.other_crash + st.no_crash);
        /* Halving chunks: about four trials per halving, plus the bytes. */
        cr_expect_lt(st.trials, 200, "%llu trials", (unsigned long long)st.trials);
        free(out);
        free(in);
}

Test(minimize, is_deterministic)
{
        uint8_t *in = random_with_needle(3000, 17, 2);
        MinimizeBudget b = {0};
        MinimizeStats s1, s2;
        uint8_t *o1, *o2;
        size_t l1, l2;
        cr_assert_eq(minimize_input(needle_oracle, NULL, in, 3000, &b, &o1, &l1, &s1), 0);
        cr_assert_eq(minimize_input(needle_oracle, NULL, in, 3000, &b, &o2, &l2, &s2), 0);
        cr_expect_eq(l1, l2);
        cr_expect_arr_eq(o1, o2, l1);
        cr_expect_eq(s1.trials, s2.trials);
        free(o1);
        free(o2);
        free(in);
}

Test(minimize, an_input_that_does_not_crash_is_not_reproduced)
{
        uint8_t in[64] = {0};
        MinimizeBudget b = {.max_trials = 1};
        MinimizeStats st;
        uint8_t *out = (uint8_t *)"untouched";
        size_t len = 99;
        cr_expect_eq(minimize_input(needle_oracle, NULL, in, sizeof(in), &b, &out, &len, &st),
                     MINIMIZE_NOT_REPRODUCED);
        cr_expect_eq(st.trials, 1);
        cr_expect_eq(len, 99, "outputs are written only on success");
}

/* A different crash is a different bug: inputs shorter than 10 bytes crash
 * "another way" here, so the minimizer must stop at 10. */
static int other_crash_oracle(void *ctx, const uint8_t *data, size_t len)
{
        (void)ctx;
        if (len < 10)
                return MINIMIZE_OTHER_CRASH;
        return needle_oracle(NULL, data, len);
}

Test(minimize, candidates_that_crash_another_way_are_rejected)
{
        uint8_t *in = random_with_needle(500, 250, 3);
        MinimizeBudget b = {0};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(minimize_input(other_crash_oracle, NULL, in, 500, &b, &out, &len, &st), 0);
        cr_expect_eq(len, 10);
        cr_expect(memmem(out, len, NEEDLE, 6));
        cr_expect_gt(st.other_crash, 0);
        free(out);
        free(in);
}

Test(minimize, trial_budget_is_respected_and_the_result_still_crashes)
{
        uint8_t *in = random_with_needle(4096, 1000, 4);
        MinimizeBudget b = {.max_trials = 10};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(minimize_input(needle_oracle, NULL, in, 4096, &b, &out, &len, &st), 0);
        cr_expect_eq(st.trials, 10);
        cr_expect_eq(st.stopped, MINIMIZE_STOP_MAX_TRIALS);
        cr_expect_lt(len, 4096);
        cr_expect(memmem(out, len, NEEDLE, 6), "a budget-stopped result still crashes");
        free(out);
        free(in);
}

static int slow_oracle(void *ctx, const uint8_t *data, size_t len)
{
        usleep(2000);
        return needle_oracle(ctx, data, len);
}

Test(minimize, time_budget_is_respected)
{
        uint8_t *in = random_with_needle(4096, 3000, 5);
        MinimizeBudget b = {.max_ms = 30};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(minimize_input(slow_oracle, NULL, in, 4096, &b, &out, &len, &st), 0);
        cr_expect_eq(st.stopped, MINIMIZE_STOP_MAX_TIME);
        cr_expect_geq(st.trials, 2);
        cr_expect(memmem(out, len, NEEDLE, 6));
        free(out);
        free(in);
}

/* A record: type 3, a length, then that many payload bytes of which the
 * first must be 0xAB. The length byte must shrink before the payload's
 * tail can go: removal alone cannot get there. */
static int record_oracle(void *ctx, const uint8_t *data, size_t len)
{
        (void)ctx;
        if (len >= 3 && data[0] == 3 && data[1] >= 1 && data[1] <= len - 2 && data[2] == 0xab)
                return MINIMIZE_SAME;
        return MINIMIZE_NO_CRASH;
}

Test(minimize, binary_length_fields_shrink_so_their_payload_can_go)
{
        uint8_t in[300];
        srand(6);
        for (size_t i = 0; i < sizeof(in); i++)
                in[i] = (uint8_t)(rand() | 1);
        in[0] = 3;
        in[1] = 200;
        in[2] = 0xab;
        MinimizeBudget b = {0};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(minimize_input(record_oracle, NULL, in, sizeof(in), &b, &out, &len, &st), 0);
        cr_expect_eq(len, 3);
        cr_expect_arr_eq(out, "\x03\x01\xab", 3);
        free(out);
}

/* Text: a letter first and a '!' last. */
static int text_oracle(void *ctx, const uint8_t *data, size_t len)
{
        (void)ctx;
        return len >= 2 && isalpha(data[0]) && data[len - 1] == '!' ? MINIMIZE_SAME
                                                                    : MINIMIZE_NO_CRASH;
}

Test(minimize, text_bytes_simplify_toward_printable_values)
{
        const char *in = "hello world, this input is fine!";
        MinimizeBudget b = {0};
        MinimizeStats st;
        uint8_t *out;
        size_t len;
        cr_assert_eq(
            minimize_input(text_oracle, NULL, (const uint8_t *)in, strlen(in), &b, &out, &len, &st),
            0);
        cr_expect_eq(len, 2);
        cr_expect_arr_eq(out, "A!", 2);
        free(out);
}

Test(minimize, same_crash_compares_kind_and_signature)
{
        Classification want = {.kind = "segv", .signature = "segv|t.so!f", .is_crash = true};
        Classification got = want;
        cr_expect(minimize_same_crash(&want, &got));
        snprintf(got.signature, sizeof(got.signature), "segv|t.so!g");
        cr_expect_not(minimize_same_crash(&want, &got), "another function is another bug");
        got = want;
        got.is_crash = false;
        cr_expect_not(minimize_same_crash(&want, &got));
        /* A hang's stack is wherever it was stopped: the kind is enough. */
        Classification hang = {.kind = "timeout", .signature = "timeout|t.so!loop", .is_crash = 1};
        Classification hang2 = hang;
        snprintf(hang2.signature, sizeof(hang2.signature), "timeout|t.so!other");
        cr_expect(minimize_same_crash(&hang, &hang2));
        Classification unsigned_want = {.kind = "segv", .is_crash = true};
        cr_expect(minimize_same_crash(&unsigned_want, &want), "no signature: the kind decides");
}
