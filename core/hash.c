/*
 * hash64 reads eight bytes at a time and mixes each word with a multiply
 * and a rotate, then finishes with a full avalanche, so that a single
 * flipped bit anywhere changes about half the output bits. It only has to
 * catch torn writes, wild writes and accidental collisions between crash
 * signatures, not an adversary.
 *
 * sha1 follows FIPS 180-4 section 6.1 directly; it names corpus files.
 */
#include <string.h>

#include "core/hash.h"

#include "snapfuzz/banned.h"

#define HASH_K1 UINT64_C(0x9e3779b97f4a7c15)
#define HASH_K2 UINT64_C(0xbf58476d1ce4e5b9)
#define HASH_K3 UINT64_C(0x94d049bb133111eb)

static inline uint64_t rotl64(uint64_t x, unsigned r)
{
        return (x << r) | (x >> (64 - r));
}

static inline uint64_t avalanche(uint64_t z)
{
        z = (z ^ (z >> 30)) * HASH_K2;
        z = (z ^ (z >> 27)) * HASH_K3;
        return z ^ (z >> 31);
}

uint64_t hash64_mix(uint64_t h, uint64_t v)
{
        return avalanche(rotl64(h ^ (v * HASH_K1), 29) * HASH_K2 + HASH_K3);
}

uint64_t hash64(const void *data, size_t len, uint64_t seed)
{
        const uint8_t *p = data;
        uint64_t h = seed ^ (len * HASH_K1);
        size_t i = 0;

        for (; i + 8 <= len; i += 8) {
                uint64_t w;
                memcpy(&w, p + i, 8);
                h = rotl64(h ^ (w * HASH_K2), 31) * HASH_K1;
        }
        if (i < len) {
                uint64_t w = 0;
                memcpy(&w, p + i, len - i);
                h = rotl64(h ^ (w * HASH_K2), 31) * HASH_K1;
        }
        return avalanche(h ^ len);
}

uint64_t hash64_lanes(const void *data, size_t len, uint64_t seed)
{
        if (len < 64)
                return hash64(data, len, seed);
        const uint8_t *p = data;
        uint64_t h[4] = {seed ^ HASH_K1, seed ^ HASH_K2, seed ^ HASH_K3, seed ^ (len * HASH_K1)};
        size_t i = 0;

        for (; i + 32 <= len; i += 32) {
                for (unsigned j = 0; j < 4; j++) {
                        uint64_t w;
                        memcpy(&w, p + i + 8 * j, 8);
                        h[j] = rotl64(h[j] ^ (w * HASH_K2), 31) * HASH_K1;
                }
        }
        uint64_t r = hash64(p + i, len - i, h[0]);
        for (unsigned j = 1; j < 4; j++)
                r = hash64_mix(r, h[j]);
        return avalanche(r ^ len);
}

static inline uint32_t rotl32(uint32_t x, unsigned r)
{
        return (x << r) | (x >> (32 - r));
}

static void sha1_block(uint32_t st[5], const uint8_t blk[64])
{
        uint32_t w[80];
        for (int t = 0; t < 16; t++)
                w[t] = (uint32_t)blk[4 * t] << 24 | (uint32_t)blk[4 * t + 1] << 16 |
                       (uint32_t)blk[4 * t + 2] << 8 | blk[4 * t + 3];
        for (int t = 16; t < 80; t++)
                w[t] = rotl32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

        uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4];
        for (int t = 0; t < 80; t++) {
                uint32_t f, k;
                if (t < 20) {
                        f = (b & c) | (~b & d);
                        k = 0x5a827999;
                } else if (t < 40) {
                        f = b ^ c ^ d;
                        k = 0x6ed9eba1;
                } else if (t < 60) {
                        f = (b & c) | (b & d) | (c & d);
                        k = 0x8f1bbcdc;
                } else {
                        f = b ^ c ^ d;
                        k = 0xca62c1d6;
                }
                uint32_t tmp = rotl32(a, 5) + f + e + k + w[t];
                e = d;
                d = c;
                c = rotl32(b, 30);
                b = a;
                a = tmp;
        }
        st[0] += a;
        st[1] += b;
        st[2] += c;
        st[3] += d;
        st[4] += e;
}

void sha1(const void *data, size_t len, uint8_t ret[SHA1_DIGEST_LEN])
{
        uint32_t st[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
        const uint8_t *p = data;
        size_t full = len / 64 * 64;
        uint8_t tail[128] = {0};

        for (size_t i = 0; i < full; i += 64)
                sha1_block(st, p + i);

        size_t rest = len - full;
        if (rest)
                memcpy(tail, p + full, rest);
        tail[rest] = 0x80;
        size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
        uint64_t bits = (uint64_t)len * 8;
        for (int i = 0; i < 8; i++)
                tail[tail_len - 1 - i] = (uint8_t)(bits >> (8 * i));
        for (size_t i = 0; i < tail_len; i += 64)
                sha1_block(st, tail + i);

        for (int i = 0; i < 5; i++) {
                ret[4 * i] = (uint8_t)(st[i] >> 24);
                ret[4 * i + 1] = (uint8_t)(st[i] >> 16);
                ret[4 * i + 2] = (uint8_t)(st[i] >> 8);
                ret[4 * i + 3] = (uint8_t)st[i];
        }
}

void sha1_hex(const void *data, size_t len, char ret[SHA1_HEX_LEN])
{
        static const char digits[] = "0123456789abcdef";
        uint8_t d[SHA1_DIGEST_LEN];

        sha1(data, len, d);
        for (int i = 0; i < SHA1_DIGEST_LEN; i++) {
                ret[2 * i] = digits[d[i] >> 4];
                ret[2 * i + 1] = digits[d[i] & 15];
        }
        ret[SHA1_HEX_LEN - 1] = '\0';
}
