/*
 * A target that keeps state between inputs, as a parser's cache or an
 * interned-string table does: what an input covers depends on how many
 * inputs this process ran before it. Each pair (inputs run so far mod 64,
 * a byte among the input's first eight after the 'S') is a counter of its
 * own (libFuzzer's extra counters), so a run keeps finding new ones, and which
 * it finds follows where the runner processes start and end. A
 * reproducible run must start and end them at the same inputs every time
 * (a batch count, not the clock), or the same seed finds other inputs.
 */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STATEFUL_PHASES 64u

__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t pairs[STATEFUL_PHASES * 256];

static unsigned long calls;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        calls++;
        if (size < 2 || data[0] != 'S')
                return 0;
        for (size_t i = 1; i < size && i < 9; i++)
                pairs[(calls % STATEFUL_PHASES) * 256 + data[i]]++;
        return 0;
}
