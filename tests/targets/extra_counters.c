/*
 * A bug only libFuzzer's extra counters lead to: the input walks a chain
 * of EXTRA_STEPS rungs, a byte at a time (its first 64 bytes), and a byte
 * moves it up a rung only when it is the one byte a table accepts for that
 * rung (any other leaves it where it is). The walk has no branch and no
 * comparison per byte (a table lookup and an add), so edges, the
 * comparison hooks and the value profile see nothing of it; it marks each
 * rung it reaches in a counter of its own, in the section
 * __libfuzzer_extra_counters, which a fuzzer that reads those counters (and
 * zeroes them before each input, as this target checks, trapping when one
 * is not) climbs a rung at a time. Reaching the top is an abort(). Without
 * that feedback the chance per input is 2^-8 per rung, 2^-96 in all.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EXTRA_STEPS 12u

__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t rungs[EXTRA_STEPS + 1];

static uint8_t accept[EXTRA_STEPS + 1][256];

__attribute__((constructor)) static void extra_counters_ladder(void)
{
        static const uint8_t key[EXTRA_STEPS] = {0xc3, 0x1f, 0x88, 0x5a, 0x07, 0xe4,
                                                 0x39, 0xb6, 0x70, 0x2d, 0x9e, 0x41};
        for (unsigned i = 0; i < EXTRA_STEPS; i++)
                accept[i][key[i]] = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        volatile uint8_t *marks = rungs;
        unsigned at = 0;

        for (unsigned i = 0; i <= EXTRA_STEPS; i++)
                if (marks[i] != 0)
                        __builtin_trap(); /* not zeroed before this input: a fuzzer's bug */
        for (size_t i = 0; i < size && i < 64; i++) {
                at += accept[at][data[i]];
                marks[at] = 1;
        }
        if (at == EXTRA_STEPS)
                abort();
        return 0;
}
