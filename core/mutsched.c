/*
 * The coordinator's mutation steering (see mutsched.h). Nothing here is
 * read by a mutation directly: the limit and the weights reach the runner
 * only through the batch's replay record.
 *
 * Weights: operator op's find rate is found/applied, both decayed by
 * MUTSCHED_DECAY per batch so that the weights follow the run's phase (early
 * on everything finds; later only some operators do). An operator with no
 * figures yet gets the overall rate. The weight is the rate relative to the
 * best operator's, scaled to 255 and floored at MUTSCHED_MIN_WEIGHT.
 */
#include <string.h>

#include "core/mutsched.h"

#include "snapfuzz/banned.h"

#define MUTSCHED_DECAY 0.97

static unsigned log2_floor(size_t v)
{
        unsigned n = 0;
        while (v >>= 1)
                n++;
        return n;
}

void mutsched_init(MutSched *s, size_t max_len, size_t longest_seed)
{
        memset(s, 0, sizeof(*s));
        s->max_len = max_len;
        s->len_limit = longest_seed > 4 ? longest_seed : 4;
        if (s->len_limit > max_len)
                s->len_limit = max_len;
}

static void update_weights(MutSched *s)
{
        double a_all = 0, f_all = 0;
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                a_all += s->applied[op];
                f_all += s->found[op];
        }
        if (f_all < 1) {
                memset(s->weights, 0, sizeof(s->weights)); /* nothing learned yet */
                return;
        }
        /* A prior worth one find at the overall rate. */
        double prior_a = a_all / f_all;
        double rate[MUTATOR_OP__COUNT], best = 0;
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                rate[op] = (s->found[op] + 1) / (s->applied[op] + prior_a);
                if (rate[op] > best)
                        best = rate[op];
        }
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                double w = 255 * rate[op] / best;
                s->weights[op] = w < MUTSCHED_MIN_WEIGHT ? MUTSCHED_MIN_WEIGHT : (uint8_t)w;
        }
}

void mutsched_batch_done(MutSched *s, const RecordHeader *h, uint64_t execs, uint64_t last_find)
{
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                s->applied[op] = s->applied[op] * MUTSCHED_DECAY + h->op_applied[op];
                s->found[op] = s->found[op] * MUTSCHED_DECAY + h->op_found[op];
        }
        update_weights(s);

        /* A find resets the stall to the executions after it, as
         * libFuzzer counts from its last corpus update: a batch runs
         * thousands of inputs, and when most batches find something
         * (a depth that grows by an eighth at a time), dropping each
         * batch's tail held the limit still. */
        if (last_find)
                s->stalled = execs > last_find ? execs - last_find : 0;
        else
                s->stalled += execs;
        for (;;) {
                unsigned lg = log2_floor(s->len_limit);
                uint64_t need = (uint64_t)MUTSCHED_LEN_STALL * (lg ? lg : 1);
                if (s->len_limit >= s->max_len || s->stalled < need)
                        break;
                s->stalled -= need;
                s->len_limit += lg ? lg : 1;
                if (s->len_limit > s->max_len)
                        s->len_limit = s->max_len;
        }
}
