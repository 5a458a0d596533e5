/*
 * A frozen comparison table: the operands of comparisons the target made
 * recently (integer compares, switch and division operands, memcmp and the
 * string functions), as the input-to-state mutations read them.
 *
 * The runner records operands into a live table (worker/cmplog.h) while the
 * target runs, and at the start of some mutation chains copies the live
 * table into the next CmpTable of the replay record
 * (include/snapfuzz/record.h). A mutation only ever reads a frozen table,
 * never the live one, so replay sees exactly the bytes the runner's
 * mutations saw. The layout is fixed and pointer-free; the entries in use
 * come first (ints[0..n_int), mems[0..n_mem)), and `check` covers them.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define CMPTABLE_INTS 128u   /* integer operand pairs */
#define CMPTABLE_MEMS 32u    /* byte-string operand pairs */
#define CMPTABLE_MEM_MAX 32u /* bytes kept of each byte-string operand */

/* What an entry's operands mean to a mutation. */
enum {
        /* b is a compile-time constant (const_cmp, a switch case, a
         * division's zero): only a can come from the input. */
        CMPTABLE_F_CONST = 1u,
        /* C strings (strcmp and friends): the lengths may differ, and an
         * operand found in the input is replaced span for span. */
        CMPTABLE_F_STRING = 2u,
        /* A needle (strstr, memmem): only b matters, placed anywhere. */
        CMPTABLE_F_TOKEN = 4u,
};

typedef struct CmpIntEntry {
        uint64_t a; /* the operands, zero-extended from `width` bytes */
        uint64_t b;
        uint8_t width; /* 1, 2, 4 or 8 */
        uint8_t flags; /* CMPTABLE_F_* */
        uint8_t pad[6];
} CmpIntEntry;

typedef struct CmpMemEntry {
        uint8_t len_a; /* 0..CMPTABLE_MEM_MAX (0 for a token) */
        uint8_t len_b; /* 1..CMPTABLE_MEM_MAX */
        uint8_t flags; /* CMPTABLE_F_* */
        uint8_t pad;
        uint8_t a[CMPTABLE_MEM_MAX];
        uint8_t b[CMPTABLE_MEM_MAX];
} CmpMemEntry;

typedef struct CmpTable {
        uint32_t gen;   /* 1, 2, ...: the batch's gen-th frozen table */
        uint32_t n_int; /* entries in use, at most CMPTABLE_INTS */
        uint32_t n_mem; /* at most CMPTABLE_MEMS */
        uint32_t pad;
        uint64_t chain; /* the first chain that reads it; later ones do until the next table */
        uint64_t check; /* record_cmp_check(): everything above, the entries in use, the batch */
        CmpIntEntry ints[CMPTABLE_INTS];
        CmpMemEntry mems[CMPTABLE_MEMS];
} CmpTable;

_Static_assert(sizeof(CmpIntEntry) == 24, "int entry layout");
_Static_assert(sizeof(CmpMemEntry) == 4 + 2 * CMPTABLE_MEM_MAX, "mem entry layout");
_Static_assert(offsetof(CmpTable, ints) == 32, "table header layout");
_Static_assert(sizeof(CmpTable) ==
                   32 + CMPTABLE_INTS * sizeof(CmpIntEntry) + CMPTABLE_MEMS * sizeof(CmpMemEntry),
               "table has no padding");
