/*
 * Entries are found by SHA-1 in an open-addressing table, so adding is O(1)
 * and a duplicate is never stored twice, in memory or on disk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/corpus.h"
#include "core/fsutil.h"
#include "core/hash.h"

#include "snapfuzz/banned.h"

typedef struct Entry {
        uint8_t *data;
        size_t len;
        uint8_t sha[SHA1_DIGEST_LEN];
} Entry;

struct Corpus {
        Entry *entries;
        size_t n, cap;
        uint32_t *slots; /* index+1 into entries; 0 = empty */
        size_t n_slots;
        int dirfd;
};

int corpus_new(Corpus **ret, const char *dir)
{
        Corpus *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->dirfd = -1;
        c->n_slots = 1024;
        c->slots = calloc(c->n_slots, sizeof(uint32_t));
        if (!c->slots) {
                free(c);
                return -ENOMEM;
        }
        if (dir) {
                int r = fs_mkdir_p(dir, 0755);
                if (r < 0) {
                        corpus_free(c);
                        return r;
                }
                c->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (c->dirfd < 0) {
                        r = -errno;
                        corpus_free(c);
                        return r;
                }
                fs_sweep_tmp(c->dirfd);
        }
        *ret = c;
        return 0;
}

void corpus_free(Corpus *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < c->n; i++)
                free(c->entries[i].data);
        free(c->entries);
        free(c->slots);
        if (c->dirfd >= 0)
                close(c->dirfd);
        free(c);
}

static size_t slot_of(const Corpus *c, const uint8_t sha[SHA1_DIGEST_LEN])
{
        size_t h;
        memcpy(&h, sha, sizeof(h));
        return h & (c->n_slots - 1);
}

static int grow_slots(Corpus *c)
{
        size_t n = c->n_slots * 2;
        uint32_t *s = calloc(n, sizeof(uint32_t));
        if (!s)
                return -ENOMEM;
        free(c->slots);
        c->slots = s;
        c->n_slots = n;
        for (size_t i = 0; i < c->n; i++) {
                size_t k = slot_of(c, c->entries[i].sha);
                while (c->slots[k])
                        k = (k + 1) & (n - 1);
                c->slots[k] = (uint32_t)(i + 1);
        }
        return 0;
}

int corpus_add(Corpus *c, const uint8_t *data, size_t len, bool persist)
{
        uint8_t sha[SHA1_DIGEST_LEN];
        sha1(data, len, sha);

        size_t k = slot_of(c, sha);
        while (c->slots[k]) {
                if (memcmp(c->entries[c->slots[k] - 1].sha, sha, SHA1_DIGEST_LEN) == 0)
                        return 0;
                k = (k + 1) & (c->n_slots - 1);
        }
        if (persist && c->dirfd >= 0) {
                char name[SHA1_HEX_LEN];
                sha1_hex(data, len, name);
                int r = fs_write_atomic(c->dirfd, name, data, len);
                if (r < 0)
                        return r;
        }
        if (c->n == c->cap) {
                size_t cap = c->cap ? c->cap * 2 : 64;
                Entry *e = realloc(c->entries, cap * sizeof(Entry));
                if (!e)
                        return -ENOMEM;
                c->entries = e;
                c->cap = cap;
        }
        Entry *e = &c->entries[c->n];
        e->data = malloc(len ? len : 1);
        if (!e->data)
                return -ENOMEM;
        if (len)
                memcpy(e->data, data, len); /* data may be NULL for the empty input */
        e->len = len;
        memcpy(e->sha, sha, SHA1_DIGEST_LEN);
        c->slots[k] = (uint32_t)(c->n + 1);
        c->n++;
        if (c->n * 2 > c->n_slots)
                return grow_slots(c) < 0 ? -ENOMEM : 1;
        return 1;
}

size_t corpus_size(const Corpus *c)
{
        return c->n;
}

const uint8_t *corpus_get(const Corpus *c, size_t i, size_t *ret_len)
{
        *ret_len = c->entries[i].len;
        return c->entries[i].data;
}

size_t corpus_pick(const Corpus *c, SfPrng *rng)
{
        /* Recent finds sit at the frontier of what has been explored, so a
         * quarter of the picks go to the newest eighth of the corpus. */
        if (c->n > 8 && prng_one_in(rng, 4)) {
                size_t recent = c->n / 8;
                return c->n - 1 - prng_below(rng, (uint32_t)recent);
        }
        return prng_below(rng, (uint32_t)c->n);
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int corpus_read_dir(const char *dir, size_t max_len, CorpusSeed **seeds, size_t *n,
                    size_t *ret_truncated)
{
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        char **names = NULL;
        size_t n_names = 0, cap = 0;
        struct dirent *de;
        int r = 0;

        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (n_names == cap) {
                        cap = cap ? cap * 2 : 64;
                        char **nn = realloc(names, cap * sizeof(char *));
                        if (!nn) {
                                r = -ENOMEM;
                                goto out;
                        }
                        names = nn;
                }
                names[n_names] = strdup(de->d_name);
                if (!names[n_names]) {
                        r = -ENOMEM;
                        goto out;
                }
                n_names++;
        }
        if (n_names)
                qsort(names, n_names, sizeof(char *), name_cmp);
        for (size_t i = 0; i < n_names; i++) {
                char path[4096];
                struct stat st;
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                uint8_t *data;
                size_t len;
                if (fs_read_file(AT_FDCWD, path, 1u << 30, &data, &len) < 0)
                        continue;
                if (len > max_len) {
                        len = max_len;
                        (*ret_truncated)++;
                }
                CorpusSeed *ns = realloc(*seeds, (*n + 1) * sizeof(CorpusSeed));
                if (!ns) {
                        free(data);
                        r = -ENOMEM;
                        goto out;
                }
                *seeds = ns;
                ns[*n] = (CorpusSeed){.path = strdup(path), .data = data, .len = len};
                (*n)++;
        }
out:
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        closedir(d);
        return r;
}

void corpus_seeds_free(CorpusSeed *seeds, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(seeds[i].path);
                free(seeds[i].data);
        }
        free(seeds);
}
