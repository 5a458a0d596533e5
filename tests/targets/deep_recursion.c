/*
 * A bug only deep recursion reaches: a bracket parser that aborts when
 * brackets nest more than DEEP_RECURSION_LIMIT deep. Nothing but the depth
 * tells a deeper input from a shallower one: every '[' runs the same edges
 * whether it opens a nested list or a sibling, so an edge's hit count says
 * how many brackets an input has, not how deep they go, and it tops out at
 * its last bucket (128 hits and more) long before 1000. The limit is
 * compared with the depth, which is no byte of the input. Only stack-depth
 * feedback (worker/stackdepth.h) leads the fuzzer there.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef DEEP_RECURSION_LIMIT
#define DEEP_RECURSION_LIMIT 2500u
#endif

/* The items of the list that starts at *pos, nested lists counted whole.
 * Not a tail call: the caller adds to what it returns. */
static unsigned deep_list(const uint8_t *data, size_t size, size_t *pos, unsigned depth)
{
        unsigned items = 0;

        if (depth > DEEP_RECURSION_LIMIT)
                abort();
        while (*pos < size) {
                uint8_t c = data[(*pos)++];
                if (c == '[')
                        items += deep_list(data, size, pos, depth + 1);
                else if (c == ']')
                        break;
        }
        return items + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        size_t pos = 0;
        unsigned n = 0;

        while (pos < size)
                n += deep_list(data, size, &pos, 0);
        return n > 1u << 30 ? -1 : 0;
}
