/*
 * Hashes: a fast 64-bit hash for checksums and ids, and SHA-1 for
 * content-addressed corpus names (the same names libFuzzer gives the same
 * bytes, so corpora can be compared across tools).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Non-cryptographic 64-bit hash; stable across runs, builds and machines. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

/* The same kind of hash for long inputs, at a few times the speed: four
 * independent lanes of 8 bytes each (so the multiplies overlap), folded
 * together at the end. Below 64 bytes it is hash64. */
uint64_t hash64_lanes(const void *data, size_t len, uint64_t seed);

/* Mixes one more 64-bit value into a running hash. */
uint64_t hash64_mix(uint64_t h, uint64_t v);

#define SHA1_DIGEST_LEN 20
#define SHA1_HEX_LEN 41 /* 40 hex digits and a NUL */

void sha1(const void *data, size_t len, uint8_t ret[SHA1_DIGEST_LEN]);
/* Writes the lower-case hex SHA-1 of data into ret (SHA1_HEX_LEN bytes). */
void sha1_hex(const void *data, size_t len, char ret[SHA1_HEX_LEN]);
