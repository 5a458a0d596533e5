/*
 * The mutator: pure functions of (input, PRNG, MutatorCtx). Everything a
 * mutation reads besides the input and the PRNG is in MutatorCtx, and every
 * byte MutatorCtx points to lives in the replay record (the crossover
 * partner, the table area and the frozen comparison tables), so recovery can
 * replay any mutation exactly.
 *
 * The table area holds a dictionary serialized as consecutive entries
 * [u8 len][len bytes], len 1..MUTATOR_DICT_MAX_TOKEN; a zero len ends it.
 *
 * MutatorCtx.trace is the one thing a mutation writes besides the input: a
 * note of the bytes the comparison operators wrote, for the automatic
 * dictionary. Nothing in the mutator reads it back, so it has no effect on
 * the bytes produced and replay can leave it NULL.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/cmptable.h"
#include "snapfuzz/prng.h"

/* Replay depends on this exact code: the value tables, the operator order
 * and the order of PRNG draws. Bump it with any change to them; a record
 * written by another version is refused instead of replayed to wrong bytes.
 * New operators that need neither partner nor dictionary go before
 * MUTATOR_OP_CROSSOVER_INSERT; operators that need the comparison table go
 * last. */
#define MUTATOR_VERSION 4u

#define MUTATOR_DICT_MAX_TOKEN 64u
#define MUTATOR_DICT_MAX_ENTRIES 4096u
#define MUTATOR_MAX_STACK 8u
#define MUTATOR_TRACE_MAX 8u
/* Operator weights a MutatorPlan is built from: one byte per operator. */
#define MUTATOR_WEIGHTS 32u
/* A plan draws an operator from this many slots (a power of two). */
#define MUTATOR_PLAN_SLOTS 256u

typedef enum MutatorOp {
        MUTATOR_OP_FLIP_BIT,
        MUTATOR_OP_SET_BYTE, /* random byte value */
        MUTATOR_OP_INTERESTING8,
        MUTATOR_OP_INTERESTING16, /* either byte order */
        MUTATOR_OP_INTERESTING32,
        MUTATOR_OP_INTERESTING64,
        MUTATOR_OP_ARITH8,  /* add or subtract 1..35 */
        MUTATOR_OP_ARITH16, /* either byte order */
        MUTATOR_OP_ARITH32,
        MUTATOR_OP_ARITH64,
        MUTATOR_OP_INSERT_BYTES, /* random or repeated bytes */
        MUTATOR_OP_ERASE_BYTES,
        MUTATOR_OP_DUPLICATE_RANGE, /* insert a copy of a range of the input */
        MUTATOR_OP_COPY_RANGE,      /* overwrite a range with another range */
        MUTATOR_OP_SHUFFLE_BYTES,
        MUTATOR_OP_ASCII_NUMBER,        /* rewrite a decimal number found in the input */
        MUTATOR_OP_CROSSOVER_INSERT,    /* insert a range of the partner */
        MUTATOR_OP_CROSSOVER_OVERWRITE, /* overwrite with a range of the partner */
        MUTATOR_OP_CROSSOVER_SPLICE,    /* head of input + tail of partner */
        MUTATOR_OP_DICT_INSERT,
        MUTATOR_OP_DICT_OVERWRITE,
        /* Input-to-state: find one operand of a recorded comparison in the
         * input and write the other in its place. */
        MUTATOR_OP_CMP_INT, /* integers: either byte order, narrowed, +-1 */
        MUTATOR_OP_CMP_MEM, /* memcmp and string operands, needles */
        MUTATOR_OP__COUNT,
} MutatorOp;

/* A dictionary parsed from the table area; points into it. */
typedef struct MutatorDict {
        uint32_t count;
        uint32_t offset[MUTATOR_DICT_MAX_ENTRIES]; /* entry i's bytes start at table + offset[i] */
        uint8_t len[MUTATOR_DICT_MAX_ENTRIES];
        const uint8_t *table;
} MutatorDict;

_Static_assert(MUTATOR_OP__COUNT <= MUTATOR_WEIGHTS, "a weight byte per operator");

/* What the mutations wrote (an output). */
typedef struct MutatorTrace {
        uint32_t n; /* byte strings noted; those past MUTATOR_TRACE_MAX are dropped */
        uint8_t len[MUTATOR_TRACE_MAX];
        uint8_t bytes[MUTATOR_TRACE_MAX][CMPTABLE_MEM_MAX];
        /* Bit op: operator op applied in the last mutator_mutate() call
         * (reset by every call). */
        uint32_t ops;
        /* Operators applied, counted across calls (the caller resets them). */
        uint32_t applied[MUTATOR_WEIGHTS];
} MutatorTrace;

/* How mutator_mutate() draws operators: for each combination of what the
 * context offers (bit 0 a partner, bit 1 a dictionary, bit 2 a comparison
 * table), MUTATOR_PLAN_SLOTS slots holding operators in proportion to their
 * weights. Built from weights that live in the replay record. */
typedef struct MutatorPlan {
        uint8_t pick[8][MUTATOR_PLAN_SLOTS];
} MutatorPlan;

typedef struct MutatorCtx {
        const uint8_t *partner; /* crossover source; may be NULL when partner_len is 0 */
        size_t partner_len;
        const MutatorDict *dict; /* may be NULL */
        const CmpTable *cmp;     /* a frozen comparison table; may be NULL */
        MutatorTrace *trace;     /* output only; may be NULL */
        const MutatorPlan *plan; /* operator weights; NULL: every operator alike */
} MutatorCtx;

/* Builds @ret from @weights[0..MUTATOR_WEIGHTS) (weight w of operator op at
 * weights[op]; 0 leaves the operator out, unless every operator the context
 * offers has weight 0, when they are drawn alike). Each operator with a
 * weight gets at least one slot. Returns false, leaving @ret unbuilt, when
 * every weight is 0: use no plan. */
bool mutator_plan_init(MutatorPlan *ret, const uint8_t *weights);

/* Parses a serialized table into @ret (no allocation). Entries past the
 * limits are ignored. Returns the number of entries. */
uint32_t mutator_dict_parse(MutatorDict *ret, const uint8_t *table, size_t table_len);

/* Serializes @count tokens into @table (capacity @cap). Tokens that are empty,
 * too long or do not fit are skipped. Always writes the zero terminator when
 * cap >= 1; the returned byte count includes it. On parse, an entry longer
 * than MUTATOR_DICT_MAX_TOKEN is skipped, a truncated entry ends the table,
 * and entries past MUTATOR_DICT_MAX_ENTRIES are ignored. */
size_t mutator_dict_serialize(uint8_t *table, size_t cap, const uint8_t *const *tokens,
                              const size_t *lens, size_t count);

/* Applies one operator to data[0..len) in place (capacity max_len). Returns
 * the new length, or SIZE_MAX when the operator does not apply (input too
 * short or too long, no partner, empty dictionary, len > max_len) and left
 * data untouched (it may still have drawn from the PRNG). A returned length
 * equal to len means at least one byte changed. @ctx may be NULL (no
 * partner, no dictionary, no comparison table); the partner must not overlap
 * data. */
size_t mutator_apply(MutatorOp op, const MutatorCtx *ctx, SfPrng *rng, uint8_t *data, size_t len,
                     size_t max_len);

/* One mutation step: a stack of 1, 2, 4 or 8 operators picked by the PRNG,
 * drawn by ctx->plan when there is one. Always changes something
 * when max_len > 0 (an empty input grows). Returns the new length (<= max_len). */
size_t mutator_mutate(const MutatorCtx *ctx, SfPrng *rng, uint8_t *data, size_t len,
                      size_t max_len);

const char *mutator_op_name(MutatorOp op);
