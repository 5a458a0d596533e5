/*
 * The mutator turns one input into a nearby one. Each operator is a small
 * static function in mutator_ops[], indexed by MutatorOp, that edits the
 * buffer in place and returns the new length, or SIZE_MAX when it does not
 * apply to this input; mutator_mutate() stacks a few of them per call.
 *
 * Invariants that crash recovery depends on:
 *  - Determinism. The result is a function of (operator, ctx, PRNG state,
 *    data[0..len), len, max_len) and nothing else: no clock, no environment,
 *    no global or thread-local mutable state, no allocation. Every random
 *    choice is drawn from the caller's SfPrng, so restoring the PRNG from the
 *    replay record and repeating the calls rebuilds the input byte for byte.
 *  - Bounds. An operator reads data[0..len) and the bytes MutatorCtx points
 *    to, writes only data[0..new length) (and the comparison operators the
 *    output-only trace), and never returns more than max_len. The
 *    crossover partner must not overlap data. Counts in the dictionary and
 *    the comparison table are clamped to their arrays, never trusted.
 *  - Honest results. An operator that returns SIZE_MAX has written nothing.
 *    One that returns the old length has changed at least one byte and names
 *    it (Mutation.diff_at/diff_old); a length-changing one changed the input
 *    by definition. That is what lets mutator_mutate() promise a changed
 *    input without keeping a copy of the original.
 *
 * Operators may consume PRNG draws even when they end up not applying; that
 * is harmless because replay makes exactly the same draws.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"

#include "snapfuzz/banned.h"

/* Ranges are at most this long three times in four (see rand_len()). */
#define MUTATOR_SHORT_LEN 16u
/* The most bytes one insertion of fresh bytes adds. */
#define MUTATOR_INSERT_MAX 128u
/* The widest window shuffle_bytes permutes. */
#define MUTATOR_SHUFFLE_MAX 8u
/* Arithmetic adds or subtracts 1..MUTATOR_ARITH_MAX, as AFL does. */
#define MUTATOR_ARITH_MAX 35u
/* ascii_number reads at most this many digits, so the value fits an int64_t. */
#define MUTATOR_NUMBER_DIGITS 18u
/* How many operators mutator_mutate() draws for one stack slot before it
 * gives the slot up (an empty input rejects most of them). */
#define MUTATOR_PICK_TRIES 4u
/* ascii_number looks for a digit this far from where it starts, no further:
 * scanning a whole binary input for one costs more than the operator's
 * occasional success on it is worth. */
#define MUTATOR_NUMBER_WINDOW 64u

/* One operator invocation. The diff fields are outputs: an operator that
 * returns the unchanged length sets them to a byte it changed. */
typedef struct Mutation {
        const MutatorCtx *ctx;
        SfPrng *rng;
        uint8_t *data;
        size_t len;
        size_t max_len;
        size_t diff_at;
        uint8_t diff_old;
} Mutation;

typedef size_t (*MutatorFn)(Mutation *m);

/* Values that sit on boundaries programs check: zero, one, sign bits, type
 * limits, powers of two and round numbers used as sizes. Each table holds
 * distinct values that fit its width, stored wide so one writer serves all. */
static const uint64_t interesting8[] = {
    0x00, 0x01, 0x02, 0x10, 0x20, 0x40, 0x64, 0x7e, 0x7f, 0x80, 0x81, 0xfe, 0xff,
};

static const uint64_t interesting16[] = {
    0x0000, 0x0001, 0x0010, 0x0020, 0x0040, 0x0064, 0x007f, 0x0080, 0x00ff, 0x0100, 0x0200,
    0x03e8, 0x0400, 0x1000, 0x7fff, 0x8000, 0x8001, 0xff7f, 0xff80, 0xfffe, 0xffff,
};

static const uint64_t interesting32[] = {
    0x00000000, 0x00000001, 0x00000010, 0x00000020, 0x00000040, 0x00000064, 0x0000007f,
    0x00000080, 0x000000ff, 0x00000100, 0x00000200, 0x000003e8, 0x00000400, 0x00001000,
    0x00007fff, 0x00008000, 0x0000ffff, 0x00010000, 0x7fffffff, 0x80000000, 0x80000001,
    0xffff7fff, 0xffff8000, 0xffffff7f, 0xffffff80, 0xfffffffe, 0xffffffff,
};

static const uint64_t interesting64[] = {
    UINT64_C(0x0000000000000000), UINT64_C(0x0000000000000001), UINT64_C(0x0000000000000010),
    UINT64_C(0x0000000000000020), UINT64_C(0x0000000000000040), UINT64_C(0x0000000000000064),
    UINT64_C(0x000000000000007f), UINT64_C(0x0000000000000080), UINT64_C(0x00000000000000ff),
    UINT64_C(0x0000000000000100), UINT64_C(0x0000000000000200), UINT64_C(0x00000000000003e8),
    UINT64_C(0x0000000000000400), UINT64_C(0x0000000000001000), UINT64_C(0x0000000000007fff),
    UINT64_C(0x0000000000008000), UINT64_C(0x000000000000ffff), UINT64_C(0x0000000000010000),
    UINT64_C(0x000000007fffffff), UINT64_C(0x0000000080000000), UINT64_C(0x00000000ffffffff),
    UINT64_C(0x0000000100000000), UINT64_C(0x7fffffffffffffff), UINT64_C(0x8000000000000000),
    UINT64_C(0x8000000000000001), UINT64_C(0xffffffff7fffffff), UINT64_C(0xffffffff80000000),
    UINT64_C(0xffffffffffff8000), UINT64_C(0xffffffffffffff80), UINT64_C(0xfffffffffffffffe),
    UINT64_C(0xffffffffffffffff),
};

/* The same idea for numbers written in decimal text. (Formatting is off
 * because clang-format puts a list holding negative numbers one per line.) */
/* clang-format off */
static const int64_t interesting_numbers[] = {
    0, 1, -1, 16, 32, 64, 100, 127, 128, -128, -129, 255, 256, 512, 1000, 1024, 4096,
    32767, 32768, -32768, 65535, 65536,
    INT32_MAX, INT64_C(2147483648), INT32_MIN, INT64_C(4294967295), INT64_C(4294967296),
    INT64_MAX, INT64_MIN,
};
/* clang-format on */

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const MutatorCtx empty_ctx = {NULL, 0, NULL, NULL, NULL, NULL};

static inline size_t min_size(size_t a, size_t b)
{
        return a < b ? a : b;
}

/* Uniform in [0, bound); bound 0 returns 0. */
static inline size_t rand_below(SfPrng *rng, size_t bound)
{
        if (bound <= UINT32_MAX)
                return prng_below(rng, (uint32_t)bound);
        /* Only inputs beyond 4 GiB get here; the modulo bias is negligible. */
        return (size_t)(prng_next64(rng) % bound);
}

/* A length in [1, limit] for limit >= 1. Three ranges in four are short,
 * because the edits that pay off usually touch a field or two, while long
 * ones mostly destroy the structure a corpus input already has. */
static inline size_t rand_len(SfPrng *rng, size_t limit)
{
        if (limit > MUTATOR_SHORT_LEN && !prng_one_in(rng, 4))
                limit = MUTATOR_SHORT_LEN;
        return 1 + rand_below(rng, limit);
}

static inline bool is_digit(uint8_t c)
{
        return c >= '0' && c <= '9';
}

/* Fixed-width integers in an explicit byte order, so that the result does
 * not depend on the host the mutation (or its replay) runs on. */
static inline uint64_t load_uint(const uint8_t *p, unsigned width, bool big)
{
        uint64_t v = 0;

        if (big) {
                for (unsigned i = 0; i < width; i++)
                        v = (v << 8) | p[i];
        } else {
                for (unsigned i = width; i-- > 0;)
                        v = (v << 8) | p[i];
        }
        return v;
}

static inline void store_uint(uint8_t *p, unsigned width, uint64_t v, bool big)
{
        if (big) {
                for (unsigned i = width; i-- > 0; v >>= 8)
                        p[i] = (uint8_t)v;
        } else {
                for (unsigned i = 0; i < width; i++, v >>= 8)
                        p[i] = (uint8_t)v;
        }
}

static void fill_random(SfPrng *rng, uint8_t *p, size_t n)
{
        while (n > 0) {
                uint32_t r = prng_next32(rng);
                size_t k = min_size(n, 4);

                for (size_t i = 0; i < k; i++)
                        p[i] = (uint8_t)(r >> (8 * i));
                p += k;
                n -= k;
        }
}

/* Writes src[0..n) over data[pos..pos+n) if that changes anything, and names
 * the first byte that changes. The two ranges may overlap. Returns false,
 * having written nothing, when the range already holds those bytes. The
 * scan usually stops at the first byte, and it also spares the write of the
 * equal prefix. */
static bool overwrite(Mutation *m, size_t pos, const uint8_t *src, size_t n)
{
        uint8_t *dst = m->data + pos;
        size_t i = 0;

        while (i < n && dst[i] == src[i])
                i++;
        if (i == n)
                return false;
        m->diff_at = pos + i;
        m->diff_old = dst[i];
        memmove(dst + i, src + i, n - i);
        return true;
}

/* Moves data[pos..len) right by n to open a gap at pos; the caller has
 * checked that len + n <= max_len. */
static inline uint8_t *open_gap(Mutation *m, size_t pos, size_t n)
{
        memmove(m->data + pos + n, m->data + pos, m->len - pos);
        return m->data + pos;
}

/* The crossover partner, or NULL when there is none to read. */
static inline const uint8_t *partner_of(const Mutation *m, size_t *ret_len)
{
        if (!m->ctx->partner || m->ctx->partner_len == 0)
                return NULL;
        *ret_len = m->ctx->partner_len;
        return m->ctx->partner;
}

/* Picks a dictionary token, or returns false when there is none. A count
 * beyond the arrays (a hand-built dictionary) is clamped rather than trusted. */
static bool pick_token(Mutation *m, const uint8_t **ret_tok, size_t *ret_len)
{
        const MutatorDict *dict = m->ctx->dict;

        if (!dict || !dict->table || dict->count == 0)
                return false;
        uint32_t count = dict->count;
        if (count > MUTATOR_DICT_MAX_ENTRIES)
                count = MUTATOR_DICT_MAX_ENTRIES;
        uint32_t i = prng_below(m->rng, count);
        if (dict->len[i] == 0)
                return false;
        *ret_tok = dict->table + dict->offset[i];
        *ret_len = dict->len[i];
        return true;
}

static size_t op_flip_bit(Mutation *m)
{
        if (m->len == 0)
                return SIZE_MAX;
        size_t at = rand_below(m->rng, m->len);
        m->diff_at = at;
        m->diff_old = m->data[at];
        m->data[at] ^= (uint8_t)(1u << prng_below(m->rng, 8));
        return m->len;
}

static size_t op_set_byte(Mutation *m)
{
        if (m->len == 0)
                return SIZE_MAX;
        size_t at = rand_below(m->rng, m->len);
        m->diff_at = at;
        m->diff_old = m->data[at];
        /* XOR with 1..255 picks uniformly among the 255 values that differ
         * from the current one, so the byte always changes. */
        m->data[at] ^= (uint8_t)(1 + prng_below(m->rng, 255));
        return m->len;
}

/* Writes an interesting value of @width bytes, in either byte order, at a
 * random position. The values in a table are distinct, so at most one of
 * them is already there; moving on to the next one keeps the operator from
 * being a no-op. */
static inline size_t put_interesting(Mutation *m, unsigned width, const uint64_t *values,
                                     size_t count)
{
        if (m->len < width)
                return SIZE_MAX;
        size_t pos = rand_below(m->rng, m->len - width + 1);
        size_t pick = rand_below(m->rng, 2 * count);
        bool big = pick & 1;
        size_t idx = pick / 2;

        for (size_t k = 0; k < count; k++) {
                uint8_t bytes[8];

                store_uint(bytes, width, values[idx], big);
                if (overwrite(m, pos, bytes, width))
                        return m->len;
                if (++idx == count)
                        idx = 0;
        }
        return SIZE_MAX;
}

static size_t op_interesting8(Mutation *m)
{
        return put_interesting(m, 1, interesting8, ARRAY_SIZE(interesting8));
}

static size_t op_interesting16(Mutation *m)
{
        return put_interesting(m, 2, interesting16, ARRAY_SIZE(interesting16));
}

static size_t op_interesting32(Mutation *m)
{
        return put_interesting(m, 4, interesting32, ARRAY_SIZE(interesting32));
}

static size_t op_interesting64(Mutation *m)
{
        return put_interesting(m, 8, interesting64, ARRAY_SIZE(interesting64));
}

/* Adds or subtracts 1..MUTATOR_ARITH_MAX to a @width-byte integer read in
 * either byte order, wrapping. The delta is never a multiple of 256, so the
 * low byte always changes. */
static inline size_t add_arith(Mutation *m, unsigned width)
{
        if (m->len < width)
                return SIZE_MAX;
        size_t pos = rand_below(m->rng, m->len - width + 1);
        /* One draw chooses the delta, its sign and the byte order. */
        uint32_t r = prng_below(m->rng, 4 * MUTATOR_ARITH_MAX);
        uint64_t delta = 1 + r % MUTATOR_ARITH_MAX;
        bool subtract = (r / MUTATOR_ARITH_MAX) & 1;
        bool big = (r / (2 * MUTATOR_ARITH_MAX)) & 1;
        uint64_t v = load_uint(m->data + pos, width, big);
        uint8_t bytes[8];

        store_uint(bytes, width, subtract ? v - delta : v + delta, big);
        if (!overwrite(m, pos, bytes, width))
                return SIZE_MAX;
        return m->len;
}

static size_t op_arith8(Mutation *m)
{
        return add_arith(m, 1);
}

static size_t op_arith16(Mutation *m)
{
        return add_arith(m, 2);
}

static size_t op_arith32(Mutation *m)
{
        return add_arith(m, 4);
}

static size_t op_arith64(Mutation *m)
{
        return add_arith(m, 8);
}

static size_t op_insert_bytes(Mutation *m)
{
        if (m->len >= m->max_len)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, min_size(m->max_len - m->len, MUTATOR_INSERT_MAX));
        size_t pos = rand_below(m->rng, m->len + 1);
        uint8_t *gap = open_gap(m, pos, n);

        if (prng_one_in(m->rng, 2)) {
                /* A run of one value: runs of 0x00, 0xff or a letter are what
                 * trips length fields, terminators and fixed-size buffers. */
                uint8_t b =
                    prng_one_in(m->rng, 2)
                        ? (uint8_t)interesting8[prng_below(m->rng, ARRAY_SIZE(interesting8))]
                        : (uint8_t)prng_next32(m->rng);
                memset(gap, b, n);
        } else {
                fill_random(m->rng, gap, n);
        }
        return m->len + n;
}

static size_t op_erase_bytes(Mutation *m)
{
        /* Erasing never empties the input; keeping one byte leaves the other
         * operators something to work on. */
        if (m->len < 2)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, m->len - 1);
        size_t pos = rand_below(m->rng, m->len - n + 1);

        memmove(m->data + pos, m->data + pos + n, m->len - pos - n);
        return m->len - n;
}

static size_t op_duplicate_range(Mutation *m)
{
        if (m->len == 0 || m->len >= m->max_len)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, min_size(m->len, m->max_len - m->len));
        size_t src = rand_below(m->rng, m->len - n + 1);
        size_t pos = rand_below(m->rng, m->len + 1);
        uint8_t *d = m->data;

        open_gap(m, pos, n);
        /* The source range is given in the old layout: bytes before pos did
         * not move and bytes from pos on moved n to the right. The gap
         * [pos, pos + n) overlaps neither part, so memcpy is safe. */
        if (src < pos) {
                size_t head = min_size(n, pos - src);
                memcpy(d + pos, d + src, head);
                if (head < n)
                        memcpy(d + pos + head, d + pos + n, n - head);
        } else {
                memcpy(d + pos, d + src + n, n);
        }
        return m->len + n;
}

static size_t op_copy_range(Mutation *m)
{
        if (m->len < 2)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, m->len - 1);
        size_t slots = m->len - n + 1; /* at least 2 */
        size_t src = rand_below(m->rng, slots);
        /* The destination is any slot but the source itself. */
        /* slots >= 2: the analyzer does not follow rand_len's bound.
         * NOLINTNEXTLINE(clang-analyzer-core.DivideZero) */
        size_t dst = (src + 1 + rand_below(m->rng, slots - 1)) % slots;

        if (!overwrite(m, dst, m->data + src, n))
                return SIZE_MAX;
        return m->len;
}

static size_t op_shuffle_bytes(Mutation *m)
{
        if (m->len < 2)
                return SIZE_MAX;
        size_t n = 2 + rand_below(m->rng, min_size(m->len, MUTATOR_SHUFFLE_MAX) - 1);
        size_t pos = rand_below(m->rng, m->len - n + 1);
        uint8_t tmp[MUTATOR_SHUFFLE_MAX];

        /* Fisher-Yates on a copy, so that a permutation that happens to
         * reproduce the window (always, for a run of one value) writes
         * nothing and reports the operator as not applicable. */
        memcpy(tmp, m->data + pos, n);
        for (size_t i = n - 1; i > 0; i--) {
                size_t j = prng_below(m->rng, (uint32_t)i + 1);
                uint8_t t = tmp[i];
                tmp[i] = tmp[j];
                tmp[j] = t;
        }
        if (!overwrite(m, pos, tmp, n))
                return SIZE_MAX;
        return m->len;
}

/* Index of the first digit in d[from..to), or @to when there is none. */
static size_t find_digit(const uint8_t *d, size_t from, size_t to)
{
        while (from < to && !is_digit(d[from]))
                from++;
        return from;
}

/* Writes @v in decimal (a '-' and up to 19 digits) and returns the length. */
static size_t format_decimal(uint8_t *buf, int64_t v)
{
        uint8_t rev[20];
        size_t n = 0, out = 0;
        uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

        do {
                rev[n++] = (uint8_t)('0' + mag % 10);
                mag /= 10;
        } while (mag != 0);
        if (v < 0)
                buf[out++] = '-';
        while (n > 0)
                buf[out++] = rev[--n];
        return out;
}

/* Finds a decimal number (starting the search at a random place and
 * wrapping around, within MUTATOR_NUMBER_WINDOW bytes) and replaces it with a nearby or interesting
 * one; text formats carry lengths, counts and indices this way. The new value always differs from
 * the old, and so does its text, because a value's decimal form without leading zeros is unique. */
static size_t op_ascii_number(Mutation *m)
{
        uint8_t *d = m->data;
        size_t len = m->len;

        if (len == 0)
                return SIZE_MAX;
        /* A window from a random place, wrapping around the end. */
        size_t start = rand_below(m->rng, len);
        size_t end = min_size(len, start + MUTATOR_NUMBER_WINDOW);
        size_t at = find_digit(d, start, end);
        if (at == end) {
                size_t wrap = min_size(start, start + MUTATOR_NUMBER_WINDOW - end);
                at = find_digit(d, 0, wrap);
                if (at == wrap)
                        return SIZE_MAX;
        }

        size_t s = at, e;
        while (s > 0 && is_digit(d[s - 1]))
                s--;
        uint64_t mag = 0;
        for (e = s; e < len && e - s < MUTATOR_NUMBER_DIGITS && is_digit(d[e]); e++)
                mag = mag * 10 + (uint64_t)(d[e] - '0');
        bool negative = s > 0 && d[s - 1] == '-';
        size_t text_start = negative ? s - 1 : s;
        int64_t old = negative ? -(int64_t)mag : (int64_t)mag;

        /* Unsigned arithmetic wraps instead of overflowing. */
        uint64_t v = (uint64_t)old;
        switch (prng_below(m->rng, 8)) {
        case 0:
        case 1:
                v += 1 + prng_below(m->rng, MUTATOR_ARITH_MAX);
                break;
        case 2:
        case 3:
                v -= 1 + prng_below(m->rng, MUTATOR_ARITH_MAX);
                break;
        case 4:
                v = (uint64_t)
                    interesting_numbers[prng_below(m->rng, ARRAY_SIZE(interesting_numbers))];
                break;
        case 5:
                v = 0 - v;
                break;
        case 6:
                /* Another digit, or a power of two times as much: sizes
                 * that overflow a buffer or an int. */
                v = prng_one_in(m->rng, 2) ? v * 10 + prng_below(m->rng, 10)
                                           : v << (1 + prng_below(m->rng, 16));
                break;
        default:
                /* A random value of random magnitude. */
                v = prng_next64(m->rng) >> prng_below(m->rng, 64);
                break;
        }
        if ((int64_t)v == old)
                v++;

        uint8_t text[21];
        size_t text_len = format_decimal(text, (int64_t)v);
        size_t old_len = e - text_start;
        if (len - old_len + text_len > m->max_len)
                return SIZE_MAX;
        if (text_len == old_len)
                return overwrite(m, text_start, text, text_len) ? len : SIZE_MAX;
        memmove(d + text_start + text_len, d + e, len - e);
        memcpy(d + text_start, text, text_len);
        return len - old_len + text_len;
}

static size_t op_crossover_insert(Mutation *m)
{
        size_t plen = 0;
        const uint8_t *partner = partner_of(m, &plen);

        if (!partner || m->len >= m->max_len)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, min_size(plen, m->max_len - m->len));
        size_t from = rand_below(m->rng, plen - n + 1);
        size_t pos = rand_below(m->rng, m->len + 1);

        memcpy(open_gap(m, pos, n), partner + from, n);
        return m->len + n;
}

static size_t op_crossover_overwrite(Mutation *m)
{
        size_t plen = 0;
        const uint8_t *partner = partner_of(m, &plen);

        if (!partner || m->len == 0)
                return SIZE_MAX;
        size_t n = rand_len(m->rng, min_size(plen, m->len));
        size_t from = rand_below(m->rng, plen - n + 1);
        size_t pos = rand_below(m->rng, m->len - n + 1);

        if (!overwrite(m, pos, partner + from, n))
                return SIZE_MAX;
        return m->len;
}

/* The input up to a cut, then the partner from another cut to its end,
 * truncated to max_len. The cuts are chosen so that the partner always
 * contributes at least one byte. */
static size_t op_crossover_splice(Mutation *m)
{
        size_t plen = 0;
        const uint8_t *partner = partner_of(m, &plen);

        if (!partner || m->max_len == 0)
                return SIZE_MAX;
        size_t cut = rand_below(m->rng, m->len + (m->len < m->max_len));
        size_t from = rand_below(m->rng, plen);
        size_t tail = min_size(plen - from, m->max_len - cut);
        size_t new_len = cut + tail;

        if (new_len == m->len)
                return overwrite(m, cut, partner + from, tail) ? m->len : SIZE_MAX;
        memcpy(m->data + cut, partner + from, tail);
        return new_len;
}

static size_t op_dict_insert(Mutation *m)
{
        const uint8_t *tok;
        size_t tok_len;

        if (!pick_token(m, &tok, &tok_len) || tok_len > m->max_len - m->len)
                return SIZE_MAX;
        size_t pos = rand_below(m->rng, m->len + 1);

        memcpy(open_gap(m, pos, tok_len), tok, tok_len);
        return m->len + tok_len;
}

static size_t op_dict_overwrite(Mutation *m)
{
        const uint8_t *tok;
        size_t tok_len;

        if (!pick_token(m, &tok, &tok_len) || tok_len > m->len)
                return SIZE_MAX;
        size_t pos = rand_below(m->rng, m->len - tok_len + 1);

        if (!overwrite(m, pos, tok, tok_len))
                return SIZE_MAX;
        return m->len;
}

/* --- Input-to-state: the comparison table ----------------------------- */

/* The first occurrence of @pat (1 <= n <= len) in d[from..to), or SIZE_MAX.
 * Patterns are short (at most CMPTABLE_MEM_MAX bytes) and inputs usually
 * are too, so memchr() on the first byte and a plain comparison of the rest
 * beat memmem(), whose setup costs more than the search. */
static size_t find_in(const uint8_t *d, size_t from, size_t to, const uint8_t *pat, size_t n)
{
        while (from + n <= to) {
                const uint8_t *p = memchr(d + from, pat[0], to - n + 1 - from);
                if (!p)
                        return SIZE_MAX;
                size_t at = (size_t)(p - d), i = 1;
                while (i < n && d[at + i] == pat[i])
                        i++;
                if (i == n)
                        return at;
                from = at + 1;
        }
        return SIZE_MAX;
}

/* Where @pat (n >= 1 bytes) occurs in data[0..len), searching from @start
 * (< len) to the end and then from the start, so that every occurrence can
 * be the one found; SIZE_MAX when there is none. */
static size_t find_wrapping(const uint8_t *d, size_t len, size_t start, const uint8_t *pat,
                            size_t n)
{
        if (n == 0 || n > len)
                return SIZE_MAX;
        size_t at = find_in(d, start, len, pat, n);
        if (at != SIZE_MAX)
                return at;
        return find_in(d, 0, min_size(start + n - 1, len), pat, n);
}

static inline uint64_t width_mask(unsigned width)
{
        return width >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

/* True when @v, a @width-byte value, is @w bytes zero- or sign-extended. */
static inline bool fits_in(uint64_t v, unsigned w, unsigned width)
{
        uint64_t high = width_mask(width) & ~width_mask(w);

        return (v & high) == 0 || ((v & high) == high && ((v >> (8 * w - 1)) & 1));
}

/* The narrowest width that holds both operands: a byte the target widened
 * before comparing is one byte in the input, not four. */
static unsigned narrow_width(uint64_t a, uint64_t b, unsigned width)
{
        for (unsigned w = 1; w < width; w *= 2)
                if (fits_in(a, w, width) && fits_in(b, w, width))
                        return w;
        return width;
}

/* Notes bytes a comparison operator wrote, for the automatic dictionary:
 * those with at least two bytes besides 0x00 and 0xff, since small numbers
 * and their negations are what the interesting-value operators write
 * anyway. */
static void note_written(Mutation *m, const uint8_t *bytes, size_t n)
{
        MutatorTrace *tr = m->ctx->trace;
        size_t telling = 0;

        if (!tr || n < 2 || n > CMPTABLE_MEM_MAX)
                return;
        for (size_t i = 0; i < n; i++)
                telling += bytes[i] != 0x00 && bytes[i] != 0xff;
        if (telling < 2)
                return;
        if (tr->n < MUTATOR_TRACE_MAX) {
                tr->len[tr->n] = (uint8_t)n;
                memcpy(tr->bytes[tr->n], bytes, n);
        }
        tr->n++;
}

/* One direction of an integer entry: the operand to look for, the one to
 * write (with the chosen offset) and the width to do it in. */
typedef struct IntMove {
        uint64_t from, to;
        unsigned width;
} IntMove;

static IntMove int_move(const CmpIntEntry *e, bool swap, unsigned offset, bool narrow)
{
        uint64_t mask = width_mask(e->width);
        IntMove mv = {
            .from = (swap ? e->b : e->a) & mask,
            .to = (swap ? e->a : e->b) & mask,
            .width = e->width,
        };
        /* Mostly the operand itself; its neighbours satisfy <, <=, > and >=
         * and step over an off-by-one. */
        if (offset == 6)
                mv.to = (mv.to + 1) & mask;
        else if (offset == 7)
                mv.to = (mv.to - 1) & mask;
        if (narrow)
                mv.width = narrow_width(mv.from, mv.to, e->width);
        return mv;
}

/* Finds mv->from in the input, in byte order @big. */
static size_t find_int(const Mutation *m, size_t start, const IntMove *mv, bool big)
{
        uint8_t pat[8] = {0};

        store_uint(pat, mv->width, mv->from, big);
        return find_wrapping(m->data, m->len, start, pat, mv->width);
}

/* Picks an integer entry, a direction (only variable-to-constant for a
 * constant comparison), a byte order, an offset of -1, 0 or +1 and maybe a
 * narrower width; finds the one operand in the input (trying the other
 * direction too) and writes the other operand there, or at a random place
 * when neither is anywhere (half of those times adding the difference of
 * the operands to the value there instead). One byte order per call keeps the search to two
 * scans of the input at most; the other order is another call's draw. */
static size_t op_cmp_int(Mutation *m)
{
        const CmpTable *t = m->ctx->cmp;

        if (!t || m->len == 0)
                return SIZE_MAX;
        uint32_t n = t->n_int < CMPTABLE_INTS ? t->n_int : CMPTABLE_INTS;
        if (n == 0)
                return SIZE_MAX;
        const CmpIntEntry *e = &t->ints[prng_below(m->rng, n)];
        if (e->width != 1 && e->width != 2 && e->width != 4 && e->width != 8)
                return SIZE_MAX;

        /* One draw makes every choice. */
        uint32_t r = prng_next32(m->rng);
        bool directed = e->flags & CMPTABLE_F_CONST;
        bool swap = !directed && (r & 1);
        bool big = (r >> 1) & 1;
        unsigned offset = (r >> 2) & 7;
        bool narrow = (r >> 5) & 1;
        size_t start = rand_below(m->rng, m->len);

        IntMove mv = int_move(e, swap, offset, narrow);
        size_t pos = find_int(m, start, &mv, big);
        if (pos == SIZE_MAX && !directed) {
                IntMove other = int_move(e, !swap, offset, narrow);
                pos = find_int(m, start, &other, big);
                if (pos != SIZE_MAX)
                        mv = other;
        }
        bool shift = false;
        if (pos == SIZE_MAX) {
                /* The operand came from another input than this one (or
                 * was computed): the value still goes somewhere, as a
                 * dictionary token would, which on a short input is often
                 * the right place. */
                if (m->len < mv.width)
                        return SIZE_MAX;
                pos = rand_below(m->rng, m->len - mv.width + 1);
                shift = (r >> 6) & 1;
        }
        uint8_t rep[8] = {0};
        uint64_t to = mv.to;
        /* Or the operand is the input's value plus a constant (x + k, or
         * a switch or range check lowered to x - low <u n): adding the
         * difference to the value at that place makes the target compute
         * the wanted operand, where writing it there never would. */
        if (shift)
                to = load_uint(m->data + pos, mv.width, big) + (mv.to - mv.from);
        store_uint(rep, mv.width, to & width_mask(mv.width), big);
        if (!overwrite(m, pos, rep, mv.width))
                return SIZE_MAX;
        note_written(m, rep, mv.width);
        return m->len;
}

/* Writes @src (n bytes) in place of data[pos..pos+span), growing or
 * shrinking the input; the caller has checked the result fits max_len. */
static size_t replace_span(Mutation *m, size_t pos, size_t span, const uint8_t *src, size_t n)
{
        if (n == span)
                return overwrite(m, pos, src, n) ? m->len : SIZE_MAX;
        memmove(m->data + pos + n, m->data + pos + span, m->len - pos - span);
        memcpy(m->data + pos, src, n);
        return m->len - span + n;
}

/* Picks a byte-string entry and a direction. When one operand is in the
 * input (trying the other direction too), the other replaces it, span for
 * span for C strings, whose lengths may differ; otherwise, and for a
 * needle, the wanted operand goes in at a random place, inserted or
 * overwriting, as a dictionary token would. */
static size_t op_cmp_mem(Mutation *m)
{
        const CmpTable *t = m->ctx->cmp;

        if (!t)
                return SIZE_MAX;
        uint32_t n = t->n_mem < CMPTABLE_MEMS ? t->n_mem : CMPTABLE_MEMS;
        if (n == 0)
                return SIZE_MAX;
        const CmpMemEntry *e = &t->mems[prng_below(m->rng, n)];
        const uint8_t *ops[2] = {e->a, e->b};
        size_t lens[2] = {min_size(e->len_a, CMPTABLE_MEM_MAX),
                          min_size(e->len_b, CMPTABLE_MEM_MAX)};
        uint32_t r = prng_next32(m->rng);
        bool directed = e->flags & (CMPTABLE_F_CONST | CMPTABLE_F_TOKEN);
        unsigned want = directed ? 1 : 1 - (r & 1); /* the operand to write */
        size_t start = m->len > 0 ? rand_below(m->rng, m->len) : 0;
        size_t pos = SIZE_MAX;
        size_t res;

        if (!(e->flags & CMPTABLE_F_TOKEN) && m->len > 0) {
                for (unsigned pass = 0; pass < (directed ? 1u : 2u); pass++) {
                        pos = find_wrapping(m->data, m->len, start, ops[1 - want], lens[1 - want]);
                        if (pos != SIZE_MAX)
                                break;
                        want = 1 - want;
                }
                if (pos == SIZE_MAX)
                        want = directed ? 1 : 1 - (r & 1);
        }
        const uint8_t *to = ops[want];
        size_t to_len = lens[want];
        if (to_len == 0)
                return SIZE_MAX;
        if (pos != SIZE_MAX) {
                size_t span = (e->flags & CMPTABLE_F_STRING) ? lens[1 - want] : to_len;
                if (span > m->len - pos || m->len - span + to_len > m->max_len)
                        return SIZE_MAX;
                res = replace_span(m, pos, span, to, to_len);
        } else if ((r >> 1) & 1 || to_len > m->len) {
                if (to_len > m->max_len - m->len)
                        return SIZE_MAX;
                pos = rand_below(m->rng, m->len + 1);
                memcpy(open_gap(m, pos, to_len), to, to_len);
                res = m->len + to_len;
        } else {
                pos = rand_below(m->rng, m->len - to_len + 1);
                res = overwrite(m, pos, to, to_len) ? m->len : SIZE_MAX;
        }
        if (res != SIZE_MAX)
                note_written(m, to, to_len);
        return res;
}

/* A run length a comparison asked for: the constant operand of an integer
 * entry (either operand of a computed comparison), or its neighbour, when
 * it is from 1 to max_len. The search starts at a random entry and takes
 * the first that qualifies, so that the many entries too large to be a
 * length (magic numbers) do not make the operator miss. 0: none. */
static size_t cmp_run_length(Mutation *m, const CmpTable *t)
{
        uint32_t n = t->n_int < CMPTABLE_INTS ? t->n_int : CMPTABLE_INTS;
        if (n == 0)
                return 0;
        uint32_t first = prng_below(m->rng, n);
        uint32_t r = prng_next32(m->rng);
        for (uint32_t k = 0; k < n; k++) {
                const CmpIntEntry *e = &t->ints[(first + k) % n];
                bool use_a = !(e->flags & CMPTABLE_F_CONST) && (r & 1);
                uint64_t v = (use_a ? e->a : e->b) & width_mask(e->width ? e->width : 8);
                /* Mostly the operand itself; a limit checked with > or <
                 * is one past or one short of it. */
                unsigned offset = (r >> 1) % 4;
                v = offset == 2 ? v + 1 : offset == 3 ? v - 1 : v;
                if (v >= 1 && v <= m->max_len)
                        return (size_t)v;
        }
        return 0;
}

/* Sets the length of a run of one byte value (the one through a random
 * position, often a single byte) to a length a comparison asked for: a
 * nesting limit compared with a depth, or a count with a bound, is no byte
 * of the input, but N repeats of an opening byte reach it. The bytes after
 * the run stay as they were, so what follows the Nth repeat is the byte
 * that followed the run. */
static size_t op_cmp_run(Mutation *m)
{
        const CmpTable *t = m->ctx->cmp;

        if (!t || m->len == 0)
                return SIZE_MAX;
        size_t want = cmp_run_length(m, t);
        size_t at = rand_below(m->rng, m->len);
        if (want == 0)
                return SIZE_MAX;
        uint8_t *d = m->data;
        size_t s = at, e = at + 1;
        while (s > 0 && d[s - 1] == d[at])
                s--;
        while (e < m->len && d[e] == d[at])
                e++;
        size_t run = e - s;
        if (want == run || m->len - run > m->max_len - want)
                return SIZE_MAX;
        uint8_t b = d[at];
        memmove(d + s + want, d + e, m->len - e);
        if (want > run)
                memset(d + e, b, want - run);
        return m->len - run + want;
}

static const struct {
        const char *name;
        MutatorFn fn;
} mutator_ops[] = {
    [MUTATOR_OP_FLIP_BIT] = {"flip_bit", op_flip_bit},
    [MUTATOR_OP_SET_BYTE] = {"set_byte", op_set_byte},
    [MUTATOR_OP_INTERESTING8] = {"interesting8", op_interesting8},
    [MUTATOR_OP_INTERESTING16] = {"interesting16", op_interesting16},
    [MUTATOR_OP_INTERESTING32] = {"interesting32", op_interesting32},
    [MUTATOR_OP_INTERESTING64] = {"interesting64", op_interesting64},
    [MUTATOR_OP_ARITH8] = {"arith8", op_arith8},
    [MUTATOR_OP_ARITH16] = {"arith16", op_arith16},
    [MUTATOR_OP_ARITH32] = {"arith32", op_arith32},
    [MUTATOR_OP_ARITH64] = {"arith64", op_arith64},
    [MUTATOR_OP_INSERT_BYTES] = {"insert_bytes", op_insert_bytes},
    [MUTATOR_OP_ERASE_BYTES] = {"erase_bytes", op_erase_bytes},
    [MUTATOR_OP_DUPLICATE_RANGE] = {"duplicate_range", op_duplicate_range},
    [MUTATOR_OP_COPY_RANGE] = {"copy_range", op_copy_range},
    [MUTATOR_OP_SHUFFLE_BYTES] = {"shuffle_bytes", op_shuffle_bytes},
    [MUTATOR_OP_ASCII_NUMBER] = {"ascii_number", op_ascii_number},
    [MUTATOR_OP_CROSSOVER_INSERT] = {"crossover_insert", op_crossover_insert},
    [MUTATOR_OP_CROSSOVER_OVERWRITE] = {"crossover_overwrite", op_crossover_overwrite},
    [MUTATOR_OP_CROSSOVER_SPLICE] = {"crossover_splice", op_crossover_splice},
    [MUTATOR_OP_DICT_INSERT] = {"dict_insert", op_dict_insert},
    [MUTATOR_OP_DICT_OVERWRITE] = {"dict_overwrite", op_dict_overwrite},
    [MUTATOR_OP_CMP_INT] = {"cmp_int", op_cmp_int},
    [MUTATOR_OP_CMP_MEM] = {"cmp_mem", op_cmp_mem},
    [MUTATOR_OP_CMP_RUN] = {"cmp_run", op_cmp_run},
};

_Static_assert(ARRAY_SIZE(mutator_ops) == MUTATOR_OP__COUNT, "one table entry per MutatorOp");

uint32_t mutator_dict_parse(MutatorDict *ret, const uint8_t *table, size_t table_len)
{
        size_t off = 0;

        ret->count = 0;
        ret->table = table;
        if (!table)
                return 0;
        while (off < table_len && ret->count < MUTATOR_DICT_MAX_ENTRIES) {
                size_t n = table[off];

                if (n == 0)
                        break;
                /* A truncated last entry is dropped rather than read short. */
                if (n > table_len - off - 1)
                        break;
                /* An overlong entry still says where the next one starts, so
                 * it is skipped instead of ending the table. */
                if (n <= MUTATOR_DICT_MAX_TOKEN) {
                        ret->offset[ret->count] = (uint32_t)(off + 1);
                        ret->len[ret->count] = (uint8_t)n;
                        ret->count++;
                }
                off += 1 + n;
        }
        return ret->count;
}

size_t mutator_dict_serialize(uint8_t *table, size_t cap, const uint8_t *const *tokens,
                              const size_t *lens, size_t count)
{
        size_t used = 0;
        uint32_t written = 0;

        /* One byte stays reserved for the terminating zero length, so that a
         * reader never runs into stale bytes after the last entry. */
        if (cap == 0)
                return 0;
        for (size_t i = 0; i < count && written < MUTATOR_DICT_MAX_ENTRIES; i++) {
                size_t n = lens[i];

                if (n == 0 || n > MUTATOR_DICT_MAX_TOKEN || !tokens[i])
                        continue;
                if (n + 1 > cap - 1 - used)
                        continue;
                table[used] = (uint8_t)n;
                memcpy(table + used + 1, tokens[i], n);
                used += 1 + n;
                written++;
        }
        table[used++] = 0;
        return used;
}

size_t mutator_apply(MutatorOp op, const MutatorCtx *ctx, SfPrng *rng, uint8_t *data, size_t len,
                     size_t max_len)
{
        if ((unsigned)op >= MUTATOR_OP__COUNT || len > max_len)
                return SIZE_MAX;

        Mutation m = {
            .ctx = ctx ? ctx : &empty_ctx,
            .rng = rng,
            .data = data,
            .len = len,
            .max_len = max_len,
        };
        return mutator_ops[op].fn(&m);
}

/* The operators that read the partner, the dictionary or the comparison
 * table sit at the end of MutatorOp, so they can be left out of the draw
 * when the context has none, instead of being drawn only to decline. A
 * context without a comparison table draws exactly as version 1 did. */
_Static_assert(MUTATOR_OP_CROSSOVER_OVERWRITE == MUTATOR_OP_CROSSOVER_INSERT + 1 &&
                   MUTATOR_OP_CROSSOVER_SPLICE == MUTATOR_OP_CROSSOVER_INSERT + 2 &&
                   MUTATOR_OP_DICT_INSERT == MUTATOR_OP_CROSSOVER_INSERT + 3 &&
                   MUTATOR_OP_DICT_OVERWRITE == MUTATOR_OP_CROSSOVER_INSERT + 4 &&
                   MUTATOR_OP_CMP_INT == MUTATOR_OP_CROSSOVER_INSERT + 5 &&
                   MUTATOR_OP_CMP_MEM == MUTATOR_OP_CROSSOVER_INSERT + 6 &&
                   MUTATOR_OP_CMP_RUN == MUTATOR_OP_CROSSOVER_INSERT + 7 &&
                   MUTATOR_OP__COUNT == MUTATOR_OP_CROSSOVER_INSERT + 8,
               "context-dependent operators come last: crossover, dictionary, comparisons");

static inline MutatorOp pick_op(SfPrng *rng, bool has_partner, bool has_dict, bool has_cmp)
{
        uint32_t n = (uint32_t)MUTATOR_OP_CROSSOVER_INSERT + (has_partner ? 3u : 0u) +
                     (has_dict ? 2u : 0u) + (has_cmp ? 3u : 0u);
        uint32_t i = prng_below(rng, n);

        if (i >= MUTATOR_OP_CROSSOVER_INSERT && !has_partner)
                i += 3;
        if (i >= MUTATOR_OP_DICT_INSERT && !has_dict)
                i += 2;
        return (MutatorOp)i;
}

/* Whether combination @combo of a plan (bit 0 partner, bit 1 dictionary,
 * bit 2 comparison table) offers operator @op. */
static bool plan_offers(unsigned combo, unsigned op)
{
        if (op >= MUTATOR_OP_CMP_INT)
                return combo & 4;
        if (op >= MUTATOR_OP_DICT_INSERT)
                return combo & 2;
        if (op >= MUTATOR_OP_CROSSOVER_INSERT)
                return combo & 1;
        return true;
}

bool mutator_plan_init(MutatorPlan *ret, const uint8_t *weights)
{
        bool any = false;
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                any |= weights[op] != 0;
        if (!any)
                return false;
        for (unsigned combo = 0; combo < 8; combo++) {
                uint32_t w[MUTATOR_OP__COUNT], total = 0, weighted = 0;
                for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                        w[op] = plan_offers(combo, op) ? weights[op] : 0;
                        total += w[op];
                        weighted += w[op] != 0;
                }
                if (total == 0) {
                        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                                w[op] = plan_offers(combo, op);
                                total += w[op];
                                weighted += w[op];
                        }
                }
                /* One slot for every operator with a weight, the rest in
                 * proportion (cumulative rounding: the counts add up). */
                uint32_t rest = MUTATOR_PLAN_SLOTS - weighted, cum = 0, given = 0, slot = 0;
                for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++) {
                        if (!w[op])
                                continue;
                        cum += w[op];
                        uint32_t upto = (uint32_t)((uint64_t)rest * cum / total);
                        uint32_t k = 1 + upto - given;
                        given = upto;
                        while (k-- > 0)
                                ret->pick[combo][slot++] = (uint8_t)op;
                }
        }
        return true;
}

static inline MutatorOp plan_pick(const MutatorPlan *plan, SfPrng *rng, unsigned combo)
{
        _Static_assert(MUTATOR_PLAN_SLOTS == 256u, "the top byte of a draw indexes a slot");
        return (MutatorOp)plan->pick[combo][prng_next32(rng) >> 24];
}

/* How many operators one call stacks: 1, 2, 4 or 8 alike (mean 3.75).
 * Shallower stacks (1 or 2, or a geometric count of mean 2) make a step
 * 25-45% cheaper, but measured on the bundled targets, tests/targets'
 * cmp_guard and libxml2 they needed 2-4x as many executions to find the
 * planted bugs, and found them no sooner in time (bench/results,
 * speed-2026-11-21.md); on a real parser, where the target's time
 * dominates, only the executions count. */
static inline unsigned draw_depth(SfPrng *rng)
{
        return 1u << prng_below(rng, 4);
}

size_t mutator_mutate(const MutatorCtx *ctx, SfPrng *rng, uint8_t *data, size_t len, size_t max_len)
{
        if (max_len == 0)
                return 0;
        if (len > max_len)
                len = max_len;

        Mutation m = {
            .ctx = ctx ? ctx : &empty_ctx,
            .rng = rng,
            .data = data,
            .len = len,
            .max_len = max_len,
        };
        /* The proof that the stack changed the input, without a copy of it:
         * either the final length differs, or byte `witness_at` no longer
         * holds `witness_old`, its value in the original input. The first
         * operator that keeps the length names a byte it changed; until one
         * does, the middle byte, read now, serves. */
        size_t witness_at = len / 2;
        uint8_t witness_old = len > 0 ? data[len / 2] : 0;
        bool applied = false;
        bool has_partner = m.ctx->partner && m.ctx->partner_len > 0;
        bool has_dict = m.ctx->dict && m.ctx->dict->table && m.ctx->dict->count > 0;
        bool has_cmp = m.ctx->cmp && (m.ctx->cmp->n_int > 0 || m.ctx->cmp->n_mem > 0);
        const MutatorPlan *plan = m.ctx->plan;
        unsigned combo = (has_partner ? 1u : 0u) | (has_dict ? 2u : 0u) | (has_cmp ? 4u : 0u);
        MutatorTrace *trace = m.ctx->trace;
        uint32_t ops = 0;

        unsigned depth = draw_depth(rng);
        if (depth > MUTATOR_MAX_STACK)
                depth = MUTATOR_MAX_STACK;
        for (unsigned slot = 0; slot < depth; slot++) {
                for (unsigned tries = 0; tries < MUTATOR_PICK_TRIES; tries++) {
                        MutatorOp op = plan ? plan_pick(plan, rng, combo)
                                            : pick_op(rng, has_partner, has_dict, has_cmp);
                        size_t r = mutator_ops[op].fn(&m);

                        if (r == SIZE_MAX)
                                continue;
                        if (!applied && r == m.len) {
                                witness_at = m.diff_at;
                                witness_old = m.diff_old;
                        }
                        applied = true;
                        ops |= 1u << op;
                        if (trace)
                                trace->applied[op]++;
                        m.len = r;
                        break;
                }
        }
        if (!applied) {
                /* Every pick missed (an empty input rejects most operators).
                 * Growing is possible whenever there is room, and a full
                 * input has at least one byte to flip. */
                MutatorOp op = m.len < max_len ? MUTATOR_OP_INSERT_BYTES : MUTATOR_OP_FLIP_BIT;
                size_t r = mutator_ops[op].fn(&m);
                ops |= 1u << op;
                if (trace)
                        trace->applied[op]++;
                if (r == m.len) {
                        witness_at = m.diff_at;
                        witness_old = m.diff_old;
                }
                m.len = r;
        }
        /* Later operators can undo earlier ones (flip the same bit twice,
         * insert then erase the same bytes). When the proof fails, flipping
         * a bit of the witness byte makes it differ from the original. */
        if (m.len == len && len > 0 && data[witness_at] == witness_old)
                data[witness_at] ^= (uint8_t)(1u << prng_below(rng, 8));
        if (trace)
                trace->ops = ops;
        return m.len;
}

const char *mutator_op_name(MutatorOp op)
{
        if ((unsigned)op >= MUTATOR_OP__COUNT)
                return "unknown";
        return mutator_ops[op].name;
}
