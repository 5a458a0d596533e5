/*
 * A bug behind comparisons whose operand is the input's value plus a
 * constant, never the value itself: the range check a compiler makes of a
 * dense switch on a 32-bit field (field - lowest case, unsigned, below the
 * number of cases, then a table), and one of the same shape on a second
 * field. The comparison table
 * sees (field - K, n), and field - K is nowhere in the input, so writing
 * the other operand over it does nothing useful; adding the difference of
 * the operands to the field does. The bug is an abort().
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile int sink;

/* What a dense switch on @v with four cases becomes: one range check of
 * v minus the lowest case, then a table (written out here, so that the
 * shape does not depend on the compiler's choices). */
static int offset_kind(uint32_t v)
{
        static const int weights[4] = {3, 5, 7, 11};
        uint32_t i = v - 0x7e57ab10u;

        return i < 4u ? weights[i] : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint32_t a, b;

        if (size < 8)
                return 0;
        memcpy(&a, data, 4);
        memcpy(&b, data + 4, 4);
        int k = offset_kind(a);
        sink = k;
        if (k == 0)
                return 0;
        if ((uint32_t)(b - 0x600df00du) < 2u)
                abort();
        return 0;
}
