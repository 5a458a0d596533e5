/*
 * Three parts behind three 8-byte keys (SYNC_KEY_A, _B, _C), checked by
 * a hash so that no comparison tells a fuzzer the bytes: an instance that
 * starts from one key's seed reaches that part only, unless another
 * instance in the same sync directory hands it an input with another key
 * (tests/test_sync.c). Each part has a few easy branches beyond its key,
 * so every instance goes on finding inputs of its own part.
 */
#include <stddef.h>
#include <stdint.h>

/* No byte in common at any position: no mutation of one key's input
 * comes near another key. */
#define SYNC_KEY_A "Kx9#Lm2!"
#define SYNC_KEY_B "Zq4$Rt7&"
#define SYNC_KEY_C "Hv8@Wj3%"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FNV-1a and a finalizer of xor-shifts: the compiler cannot turn the
 * comparison of the result into comparisons of input bytes (as it can
 * with FNV-1a alone, whose steps it inverts), so comparison tracing does
 * not reveal a key. */
static uint32_t key_hash(const uint8_t *p, size_t n)
{
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        return h;
}

static volatile int sink;

static void part(int which, const uint8_t *data, size_t size)
{
        sink = which;
        if (size > 8 && data[8] == 'x')
                sink = which * 10 + 1;
        if (size > 9 && data[9] >= 0x80)
                sink = which * 10 + 2;
        if (size > 10 && (data[10] & 7) == 3)
                sink = which * 10 + 3;
        if (size > 12)
                sink = which * 10 + 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 8)
                return 0;
        uint32_t h = key_hash(data, 8);
        if (h == key_hash((const uint8_t *)SYNC_KEY_A, 8))
                part(1, data, size);
        else if (h == key_hash((const uint8_t *)SYNC_KEY_B, 8))
                part(2, data, size);
        else if (h == key_hash((const uint8_t *)SYNC_KEY_C, 8))
                part(3, data, size);
        return 0;
}
