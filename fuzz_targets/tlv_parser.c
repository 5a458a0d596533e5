/*
 * A parser for a small type-length-value configuration container, the kind
 * a device keeps in flash: a header, then records that set named values and
 * fill a table of 64 value slots.
 *
 *   header   'T' 'L' 'V' '1', version (u8, must be 1)
 *   record   type (u8), length (u8), value[length]
 *     0x00 PAD    ignored
 *     0x01 NAME   the container's name, 1..31 printable bytes
 *     0x02 U32    a big-endian u32, exactly 4 bytes, added to a checksum
 *     0x03 SLOT   ref (u32 big-endian) + 1..56 payload bytes stored in a slot;
 *                 ref's top byte is the addressing mode: 0 absolute (slot
 *                 number in the low 24 bits), 1 relative (a signed delta in
 *                 the low byte from the last slot written)
 *     0x04 GROUP  nested records, at most 4 levels deep
 *     0xff END    stops parsing; trailing bytes are ignored
 *
 * Planted bug: a relative SLOT record checks the slot it computes but then
 * indexes the table with the raw ref instead of the computed slot. The mode
 * byte 1 in ref's top byte puts the write 1..2 GiB beyond the 4 KiB slot
 * table, in unmapped memory, so the parser dies by SIGSEGV on the first store
 * every time (no AddressSanitizer needed). Any other input is safe.
 *
 * Crashing input (hex): 544c5631 01 0305 01000000 41
 *
 * Built with -DSNAPFUZZ_NO_PLANTED_BUG, the bug is replaced by the safe
 * code, for benchmarks (bench/) that must not stop at the first crash.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TLV_VERSION 1
#define TLV_SLOTS 64
#define TLV_SLOT_BYTES 56
#define TLV_NAME_MAX 31
#define TLV_MAX_DEPTH 4

enum {
        TLV_PAD = 0x00,
        TLV_NAME = 0x01,
        TLV_U32 = 0x02,
        TLV_SLOT = 0x03,
        TLV_GROUP = 0x04,
        TLV_END = 0xff,
};

enum {
        TLV_REF_ABSOLUTE = 0,
        TLV_REF_RELATIVE = 1,
};

/* One value slot; 64 bytes, so a wild slot index moves the write far. */
struct tlv_slot {
        uint32_t used;
        uint32_t len;
        uint8_t value[TLV_SLOT_BYTES];
};

struct tlv_doc {
        char name[TLV_NAME_MAX + 1];
        uint32_t checksum;
        uint32_t last_slot;
        unsigned int records;
};

/*
 * The slot table is a fixed global, as it would be in firmware, exported
 * for the code that applies the configuration (which also keeps the
 * compiler from dropping the stores). It is cleared at the start of every
 * call so nothing carries over from one input to the next.
 */
extern struct tlv_slot tlv_slots[TLV_SLOTS];
struct tlv_slot tlv_slots[TLV_SLOTS];

static uint32_t read_be32(const uint8_t *p)
{
        return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int parse_name(struct tlv_doc *doc, const uint8_t *v, size_t len)
{
        if (len == 0 || len > TLV_NAME_MAX)
                return -1;
        for (size_t i = 0; i < len; i++) {
                if (v[i] < 0x20 || v[i] > 0x7e)
                        return -1;
                doc->name[i] = (char)v[i];
        }
        doc->name[len] = '\0';
        return 0;
}

static int parse_slot(struct tlv_doc *doc, const uint8_t *v, size_t len)
{
        struct tlv_slot *slot;
        uint32_t ref;
        int64_t index;

        if (len < 5 || len - 4 > TLV_SLOT_BYTES)
                return -1;
        ref = read_be32(v);

        switch (ref >> 24) {
        case TLV_REF_ABSOLUTE:
                index = ref & 0xffffff;
                if (index >= TLV_SLOTS)
                        return -1;
                slot = &tlv_slots[index];
                break;
        case TLV_REF_RELATIVE:
                index = (int64_t)doc->last_slot + (int8_t)(ref & 0xff);
                if (index < 0 || index >= TLV_SLOTS)
                        return -1;
#ifndef SNAPFUZZ_NO_PLANTED_BUG
                /* The planted bug: the raw ref is used where index was meant. */
                slot = &tlv_slots[doc->last_slot + ref];
#else
                slot = &tlv_slots[index];
#endif
                break;
        default:
                return -1;
        }

        slot->used = 1;
        slot->len = (uint32_t)(len - 4);
        memcpy(slot->value, v + 4, len - 4);
        doc->last_slot = (uint32_t)index;
        return 0;
}

/* Parses records from buf[0..len); returns 1 after an END record, 0 at the
 * end of the buffer, -1 on malformed input. */
static int parse_records(struct tlv_doc *doc, const uint8_t *buf, size_t len, int depth)
{
        size_t pos = 0;

        while (pos < len) {
                const uint8_t *value;
                uint8_t type, vlen;
                int r = 0;

                if (len - pos < 2)
                        return -1;
                type = buf[pos];
                vlen = buf[pos + 1];
                pos += 2;
                if (vlen > len - pos)
                        return -1;
                value = buf + pos;
                pos += vlen;
                doc->records++;

                switch (type) {
                case TLV_PAD:
                        break;
                case TLV_NAME:
                        r = parse_name(doc, value, vlen);
                        break;
                case TLV_U32:
                        if (vlen != 4)
                                return -1;
                        doc->checksum += read_be32(value);
                        break;
                case TLV_SLOT:
                        r = parse_slot(doc, value, vlen);
                        break;
                case TLV_GROUP:
                        /* Groups nest; the depth limit keeps the recursion bounded. */
                        if (depth >= TLV_MAX_DEPTH)
                                return -1;
                        r = parse_records(doc, value, vlen, depth + 1);
                        break;
                case TLV_END:
                        return 1;
                default:
                        return -1;
                }
                if (r < 0)
                        return -1;
                if (r == 1)
                        return 1;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct tlv_doc doc;

        /* One comparison per magic byte, as a hand-written reader would do. */
        if (size < 5)
                return 0;
        if (data[0] != 'T')
                return 0;
        if (data[1] != 'L')
                return 0;
        if (data[2] != 'V')
                return 0;
        if (data[3] != '1')
                return 0;
        if (data[4] != TLV_VERSION)
                return 0;

        memset(tlv_slots, 0, sizeof(tlv_slots));
        memset(&doc, 0, sizeof(doc));
        /*
         * A malformed container is an ordinary outcome. It must not return -1:
         * that would keep half-valid inputs, the fuzzer's stepping stones,
         * out of the corpus.
         */
        (void)parse_records(&doc, data + 5, size - 5, 0);
        return 0;
}
