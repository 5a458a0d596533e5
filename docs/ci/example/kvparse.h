/*
 * kvparse: a small parser for "key=value" lines, the example of untrusted
 * input that the CI recipes in docs/ci/ fuzz. A value "@N" stands for the
 * value of entry N (0-based).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define KV_MAX_ENTRIES 64
#define KV_MAX_KEY 32

struct kv_doc {
        char keys[KV_MAX_ENTRIES][KV_MAX_KEY];
        char *values[KV_MAX_ENTRIES]; /* malloc'd */
        size_t count;
};

/* Parses @len bytes of @data into @doc (free it with kv_free, whatever
 * the result). Returns the number of entries, or -1 for input that is
 * not a document. */
int kv_parse(const uint8_t *data, size_t len, struct kv_doc *doc);
void kv_free(struct kv_doc *doc);
