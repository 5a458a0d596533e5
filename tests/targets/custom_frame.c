/*
 * A test target whose bugs are reachable only through its custom mutator
 * (libFuzzer's LLVMFuzzerCustomMutator convention) or its custom crossover.
 *
 * An input is a frame:  'F' flag len payload[len] sum[4]
 * where sum is frame_sum() of flag, len and payload, little-endian. Frames
 * whose sum is wrong are ignored; the sum is compared through a product, so
 * that neither the comparison's operands nor anything else the fuzzer sees
 * tell it the right value: snapfuzz's own mutations practically never make
 * a valid frame. The custom mutator makes one: it takes the payload, has
 * LLVMFuzzerMutate (snapfuzz's mutator) change it, and writes a frame with
 * flag 0 and the right sum around it. The custom crossover (built with
 * -DCUSTOM_FRAME_CROSSOVER) joins the payloads of two frames into a frame
 * with flag 1, which the mutator never writes.
 *
 * Bugs: a valid frame whose payload starts with "BOOM" aborts; with
 * -DCUSTOM_FRAME_CROSSOVER, any valid frame with flag 1 (a crossover's)
 * aborts instead. Built with -DCUSTOM_FRAME_NO_MUTATOR it exports no
 * custom mutator (the control: nothing finds the bug); with
 * -DCUSTOM_FRAME_NONDET its mutator mixes the clock into the payload's last
 * byte, which makes it not deterministic given its Seed; with
 * -DCUSTOM_FRAME_STATEFUL it counts its own calls and mixes the count in:
 * deterministic from the runner's start, not given the Seed alone.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                 size_t size2, uint8_t *out, size_t max_out_size,
                                 unsigned int seed);

#define FRAME_HEAD 3u
#define FRAME_TAIL 4u
#define FRAME_MAX_PAYLOAD 64u

static uint32_t frame_sum(const uint8_t *p, size_t n)
{
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h ^ (h >> 15);
}

/* The payload of a valid frame, or NULL. */
static const uint8_t *frame_parse(const uint8_t *d, size_t size, uint8_t *ret_flag, size_t *ret_len)
{
        if (size < FRAME_HEAD + FRAME_TAIL || d[0] != 'F')
                return NULL;
        size_t len = d[2];
        if (size != FRAME_HEAD + len + FRAME_TAIL)
                return NULL;
        const uint8_t *t = d + FRAME_HEAD + len;
        uint32_t sum =
            (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
        /* Through a product: the comparison's operand is not the sum. */
        if ((sum - frame_sum(d + 1, 2 + len)) * 0x9e3779b1u != 0)
                return NULL;
        *ret_flag = d[1];
        *ret_len = len;
        return d + FRAME_HEAD;
}

/* Writes a frame around payload[0..len) (len <= FRAME_MAX_PAYLOAD) into
 * out (room for max bytes); returns its size or 0 when it does not fit. */
static size_t frame_write(uint8_t *out, size_t max, uint8_t flag, const uint8_t *payload,
                          size_t len)
{
        if (FRAME_HEAD + len + FRAME_TAIL > max)
                return 0;
        memmove(out + FRAME_HEAD, payload, len);
        out[0] = 'F';
        out[1] = flag;
        out[2] = (uint8_t)len;
        uint32_t sum = frame_sum(out + 1, 2 + len);
        uint8_t *t = out + FRAME_HEAD + len;
        t[0] = (uint8_t)sum;
        t[1] = (uint8_t)(sum >> 8);
        t[2] = (uint8_t)(sum >> 16);
        t[3] = (uint8_t)(sum >> 24);
        return FRAME_HEAD + len + FRAME_TAIL;
}

/* Some branches on the payload, so that coverage grows with it. */
static volatile unsigned frame_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t flag;
        size_t len;
        const uint8_t *p = frame_parse(data, size, &flag, &len);
        if (!p)
                return 0;
#ifdef CUSTOM_FRAME_CROSSOVER
        if (flag == 1)
                abort(); /* only a crossover writes flag 1 */
#else
        if (len >= 4 && memcmp(p, "BOOM", 4) == 0)
                abort();
#endif
        for (size_t i = 0; i < len; i++) {
                if (p[i] < 'A')
                        frame_sink += 1;
                else if (p[i] <= 'Z')
                        frame_sink += 2;
                else if (p[i] < 'a')
                        frame_sink += 3;
                else
                        frame_sink += 4;
                if (i > 0 && p[i] == p[i - 1])
                        frame_sink ^= 5;
        }
        switch (len) {
        case 1:
                frame_sink++;
                break;
        case 2:
                frame_sink += 2;
                break;
        case 3:
                frame_sink += 3;
                break;
        default:
                break;
        }
        return 0;
}

#ifndef CUSTOM_FRAME_NO_MUTATOR
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
        uint8_t payload[FRAME_MAX_PAYLOAD];
        uint8_t flag;
        size_t len = 0;
        const uint8_t *p = frame_parse(data, size, &flag, &len);
        if (p)
                memcpy(payload, p, len);
        else
                len = 0;
        /* The seed decides whether the payload grows by one byte first (so
         * an empty payload has something to mutate). */
        if (len < FRAME_MAX_PAYLOAD && (len == 0 || (seed & 7) == 0))
                payload[len++] = (uint8_t)(seed >> 8);
        len = LLVMFuzzerMutate(payload, len, FRAME_MAX_PAYLOAD);
        /* The variants change the last byte, after the bug's "BOOM". */
#if defined(CUSTOM_FRAME_NONDET) || defined(CUSTOM_FRAME_STATEFUL)
        /* Every output of these variants depends on what they mix in, even
         * a payload of just "BOOM" (which a length limit keeps short): it
         * gets a fifth byte for it. */
        if (len <= 4)
                payload[len++] = 0;
#endif
#ifdef CUSTOM_FRAME_NONDET
        /* The clock's nanoseconds, spread over four bytes after the bug's
         * "BOOM": a replay at another instant makes other bytes, but for a
         * chance of one in 2^32 (one byte gave 1 in 128, and the test that
         * no wrong input is stored failed now and then). */
        while (len < 8)
                payload[len++] = 0;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint32_t mix = (uint32_t)ts.tv_nsec * 2654435761u | 1u;
        for (size_t i = 0; i < 4; i++)
                payload[len - 1 - i] ^= (uint8_t)(mix >> (8 * i));
#endif
#ifdef CUSTOM_FRAME_STATEFUL
        /* Set, not mixed in: XORed in, two steps' counts could cancel out
         * (6 ^ 7 == 8 ^ 9), and a replay from the chain's slot, with fewer
         * calls behind it, made the same bytes now and then. */
        static unsigned calls;
        ++calls;
        payload[len - 1] = (uint8_t)(1 + calls % 255); /* never 0 */
#endif
        return frame_write(data, max_size, 0, payload, len);
}
#endif

#ifdef CUSTOM_FRAME_CROSSOVER
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                 size_t size2, uint8_t *out, size_t max_out_size, unsigned int seed)
{
        uint8_t payload[FRAME_MAX_PAYLOAD], f1, f2;
        size_t n1, n2;
        const uint8_t *p1 = frame_parse(data1, size1, &f1, &n1);
        const uint8_t *p2 = frame_parse(data2, size2, &f2, &n2);
        if (!p1 || !p2)
                return 0; /* libFuzzer's "did not apply" */
        size_t a = n1 ? seed % (n1 + 1) : 0;
        size_t b = n2 ? (seed >> 8) % (n2 + 1) : 0;
        if (a + (n2 - b) > FRAME_MAX_PAYLOAD)
                return 0;
        memcpy(payload, p1, a);
        memcpy(payload + a, p2 + b, n2 - b);
        return frame_write(out, max_out_size, 1, payload, a + n2 - b);
}
#endif
