/*
 * Entries are found by SHA-1 in an open-addressing table, so adding is O(1)
 * and a duplicate is never stored twice, in memory or on disk.
 *
 * Scheduling (corpus.h): feature ids are interned into dense indices (an
 * open-addressing table), so an entry's features are an array of small
 * integers and the per-feature data (the best entry, how many active
 * entries reach it) are plain arrays. Keeping the best entry per feature is
 * incremental (an entry's count of features it is best for only falls as
 * better entries arrive, so a superseded entry stays superseded); the
 * rarity, the means and the favoured cover are recomputed when an entry
 * was added since the last pick, which costs one pass over every active
 * entry's features.
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
#include "core/featcover.h"
#include "core/fsutil.h"
#include "core/hash.h"

#include "snapfuzz/banned.h"

typedef enum EntryFeatures {
        ENTRY_FEATURES_NONE = 0, /* unknown: never superseded */
        ENTRY_FEATURES_PARTIAL,  /* some: never superseded */
        ENTRY_FEATURES_COMPLETE,
} EntryFeatures;

typedef struct Entry {
        uint8_t *data;
        size_t len;
        uint8_t sha[SHA1_DIGEST_LEN];
        /* Scheduling. */
        uint32_t *feat; /* dense feature indices */
        uint32_t n_feat;
        uint32_t n_best; /* features this entry is the best input for */
        uint8_t known;   /* EntryFeatures */
        bool favored;
        bool seed;    /* an input the run started from (corpus_mark_seed) */
        bool on_disk; /* a file in OUT/corpus holds it (corpus_mark_on_disk) */
        bool filed;   /* had one at some time: corpus_disk_cover may want it back */
        uint64_t exec_ns;
        uint64_t execs;     /* executions of batches based on it */
        uint32_t batches;   /* such batches */
        uint32_t fruitless; /* such batches in a row that found nothing */
        double weight;      /* the energy's part that changes with the corpus */
} Entry;

struct Corpus {
        Entry *entries;
        size_t n, cap;
        uint32_t *slots; /* index+1 into entries; 0 = empty */
        size_t n_slots;
        int dirfd;

        /* Feature ids interned to dense indices 0..n_feat-1. */
        uint32_t *fkey;  /* the id */
        uint32_t *fval;  /* dense index + 1; 0 = empty */
        size_t n_fslots; /* a power of two */
        uint32_t *best;  /* per dense index: entry index + 1 */
        uint32_t *fid;   /* per dense index: the feature's id */
        uint32_t *freq;  /* per dense index: active entries reaching it */
        double *rarity;  /* per dense index: 1 / freq, from the last recompute */
        uint8_t *mark;   /* per dense index: scratch */
        size_t n_feat, cap_feat;

        bool dirty;         /* an entry came or went since the last recompute */
        bool keep_seeds;    /* seeds are never superseded (corpus_set_keep_seeds) */
        uint32_t *seed_idx; /* entry indices of the seeds, for partner picks */
        size_t n_seed_idx, cap_seed_idx;
        /* Entries that stopped being the best for any feature since the
         * last corpus_take_superseded (at most once each: n_best never
         * rises again). */
        uint32_t *gone;
        size_t n_gone, cap_gone;
        uint32_t *active; /* active entry indices, from the last recompute */
        double *cum;      /* corpus_schedule_many's running energies */
        size_t n_active, n_favored;
        size_t n_computed;    /* entries when it was computed */
        double mean_weight;   /* of the active entries then */
        uint64_t cost;        /* features it went through */
        uint64_t picks_since; /* picks since */
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
        for (size_t i = 0; i < c->n; i++) {
                free(c->entries[i].data);
                free(c->entries[i].feat);
        }
        free(c->entries);
        free(c->slots);
        free(c->fkey);
        free(c->fval);
        free(c->best);
        free(c->fid);
        free(c->freq);
        free(c->rarity);
        free(c->mark);
        free(c->active);
        free(c->cum);
        free(c->seed_idx);
        free(c->gone);
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
        *e = (Entry){0};
        e->data = malloc(len ? len : 1);
        if (!e->data)
                return -ENOMEM;
        if (len)
                memcpy(e->data, data, len); /* data may be NULL for the empty input */
        e->len = len;
        memcpy(e->sha, sha, SHA1_DIGEST_LEN);
        c->slots[k] = (uint32_t)(c->n + 1);
        c->n++;
        c->dirty = true;
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

/* --- scheduling --- */

static size_t fslot_of(uint32_t id, size_t n_slots)
{
        return (size_t)(((uint64_t)id * UINT64_C(0x9e3779b97f4a7c15)) >> 40) & (n_slots - 1);
}

static int grow_features(Corpus *c)
{
        if (c->n_feat == c->cap_feat) {
                size_t cap = c->cap_feat ? c->cap_feat * 2 : 4096;
                uint32_t *b = realloc(c->best, cap * sizeof(uint32_t));
                if (!b)
                        return -ENOMEM;
                c->best = b;
                uint32_t *id = realloc(c->fid, cap * sizeof(uint32_t));
                if (!id)
                        return -ENOMEM;
                c->fid = id;
                uint32_t *f = realloc(c->freq, cap * sizeof(uint32_t));
                if (!f)
                        return -ENOMEM;
                c->freq = f;
                double *rr = realloc(c->rarity, cap * sizeof(double));
                if (!rr)
                        return -ENOMEM;
                c->rarity = rr;
                uint8_t *m = realloc(c->mark, cap);
                if (!m)
                        return -ENOMEM;
                c->mark = m;
                c->cap_feat = cap;
        }
        if ((c->n_feat + 1) * 2 <= c->n_fslots)
                return 0;
        size_t n = c->n_fslots ? c->n_fslots * 2 : 8192;
        uint32_t *key = calloc(n, sizeof(uint32_t));
        uint32_t *val = calloc(n, sizeof(uint32_t));
        if (!key || !val) {
                free(key);
                free(val);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->n_fslots; i++) {
                if (!c->fval[i])
                        continue;
                size_t k = fslot_of(c->fkey[i], n);
                while (val[k])
                        k = (k + 1) & (n - 1);
                key[k] = c->fkey[i];
                val[k] = c->fval[i];
        }
        free(c->fkey);
        free(c->fval);
        c->fkey = key;
        c->fval = val;
        c->n_fslots = n;
        return 0;
}

/* The dense index of feature @id, added when new. Returns 0 or -ENOMEM. */
static int feature_intern(Corpus *c, uint32_t id, uint32_t *ret)
{
        if (c->n_fslots) {
                size_t k = fslot_of(id, c->n_fslots);
                while (c->fval[k]) {
                        if (c->fkey[k] == id) {
                                *ret = c->fval[k] - 1;
                                return 0;
                        }
                        k = (k + 1) & (c->n_fslots - 1);
                }
        }
        int r = grow_features(c);
        if (r < 0)
                return r;
        size_t k = fslot_of(id, c->n_fslots);
        while (c->fval[k])
                k = (k + 1) & (c->n_fslots - 1);
        c->fkey[k] = id;
        c->fval[k] = (uint32_t)(c->n_feat + 1);
        c->best[c->n_feat] = 0;
        c->fid[c->n_feat] = id;
        *ret = (uint32_t)c->n_feat++;
        return 0;
}

/* The order in which inputs are preferred for a feature: shorter, then
 * faster, then older. A total order, fixed once both have features. */
static bool entry_better(const Corpus *c, size_t a, size_t b)
{
        const Entry *x = &c->entries[a], *y = &c->entries[b];
        if (x->len != y->len)
                return x->len < y->len;
        if (x->exec_ns != y->exec_ns)
                return x->exec_ns < y->exec_ns;
        return a < b;
}

/* Entry @i is no longer the best for any feature: noted for
 * corpus_take_superseded. Seeds are not: a run resumed from OUT/corpus
 * re-measures its seeds' speeds, and an equal-length seed that now comes
 * out slower than another must not lose its file to timing noise. Without
 * memory, the note is lost and the entry's file stays. */
static void note_gone(Corpus *c, size_t i)
{
        if (c->entries[i].known != ENTRY_FEATURES_COMPLETE || c->entries[i].seed)
                return;
        if (c->n_gone == c->cap_gone) {
                size_t cap = c->cap_gone ? c->cap_gone * 2 : 64;
                uint32_t *g = realloc(c->gone, cap * sizeof(*g));
                if (!g)
                        return;
                c->gone = g;
                c->cap_gone = cap;
        }
        c->gone[c->n_gone++] = (uint32_t)i;
}

size_t corpus_take_superseded(Corpus *c, uint32_t *ids, size_t cap)
{
        size_t n = c->n_gone < cap ? c->n_gone : cap;
        if (n == 0)
                return 0; /* c->gone may still be NULL */
        memcpy(ids, c->gone + (c->n_gone - n), n * sizeof(*ids));
        c->n_gone -= n;
        return n;
}

static int u32_cmp(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return (x > y) - (x < y);
}

int corpus_set_features(Corpus *c, size_t i, const uint32_t *ids, size_t n, bool complete,
                        uint64_t exec_ns)
{
        Entry *e = &c->entries[i];
        if (e->known != ENTRY_FEATURES_NONE)
                return 0;
        uint32_t *feat = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!feat)
                return -ENOMEM;
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
                uint32_t d;
                int r = feature_intern(c, ids[k], &d);
                if (r < 0) {
                        free(feat);
                        return r;
                }
                feat[m++] = d;
        }
        /* Each feature once, whatever the runner wrote (corpus_disk_cover
         * counts an entry once per feature). A runner writes its ids in
         * ascending order, so the sort is for a list scribbled on: sorting
         * every find's list cost 1% of a core on PCRE2. */
        bool ascending = true;
        for (size_t k = 1; k < n && ascending; k++)
                ascending = ids[k] > ids[k - 1];
        if (!ascending) {
                qsort(feat, m, sizeof(*feat), u32_cmp);
                size_t u = 0;
                for (size_t k = 0; k < m; k++)
                        if (u == 0 || feat[k] != feat[u - 1])
                                feat[u++] = feat[k];
                m = u;
        }
        e->feat = feat;
        e->n_feat = (uint32_t)m;
        e->exec_ns = exec_ns;
        e->known = complete ? ENTRY_FEATURES_COMPLETE : ENTRY_FEATURES_PARTIAL;
        for (size_t k = 0; k < m; k++) {
                uint32_t d = feat[k];
                uint32_t holder = c->best[d];
                if (holder == i + 1)
                        continue; /* a repeated id */
                if (holder && !entry_better(c, i, holder - 1))
                        continue;
                if (holder && --c->entries[holder - 1].n_best == 0)
                        note_gone(c, holder - 1);
                c->best[d] = (uint32_t)(i + 1);
                e->n_best++;
        }
        c->dirty = true;
        return 0;
}

static bool entry_active(const Corpus *c, const Entry *e)
{
        return e->known != ENTRY_FEATURES_COMPLETE || e->n_best > 0 || (e->seed && c->keep_seeds);
}

/* 2r / (1 + r): 1 at r = 1, towards 2 above, towards 0 below. */
static double ratio_factor(double r)
{
        double f = 2 * r / (1 + r);
        return f < 0.1 ? 0.1 : f;
}

/* Recomputes who is active, the favoured cover, and the energies' parts
 * that depend on the whole corpus. */
static int corpus_recompute(Corpus *c)
{
        if (!c->dirty)
                return 0;
        uint32_t *act = realloc(c->active, (c->n ? c->n : 1) * sizeof(uint32_t));
        if (!act)
                return -ENOMEM;
        c->active = act;
        c->n_active = 0;
        double sum_len = 0, sum_ns = 0;
        size_t n_ns = 0;
        if (c->n_feat)
                memset(c->freq, 0, c->n_feat * sizeof(uint32_t));
        for (size_t i = 0; i < c->n; i++) {
                Entry *e = &c->entries[i];
                e->favored = false;
                if (!entry_active(c, e))
                        continue;
                act[c->n_active++] = (uint32_t)i;
                sum_len += (double)e->len;
                if (e->exec_ns) {
                        sum_ns += (double)e->exec_ns;
                        n_ns++;
                }
                for (uint32_t k = 0; k < e->n_feat; k++)
                        c->freq[e->feat[k]]++;
        }
        /* The favoured cover, as AFL culls its queue: features in the order
         * they were first seen; one not covered yet makes its best entry
         * favoured, which covers all of that entry's features. */
        if (c->n_feat)
                memset(c->mark, 0, c->n_feat);
        c->n_favored = 0;
        for (size_t f = 0; f < c->n_feat; f++) {
                if (c->mark[f] || !c->best[f])
                        continue;
                Entry *e = &c->entries[c->best[f] - 1];
                e->favored = true;
                c->n_favored++;
                for (uint32_t k = 0; k < e->n_feat; k++)
                        c->mark[e->feat[k]] = 1;
        }
        /* One division per feature, not one per feature of every entry
         * (expat's corpus: some 10^6 of them a recompute). */
        for (size_t f = 0; f < c->n_feat; f++)
                c->rarity[f] = c->freq[f] ? 1.0 / (double)c->freq[f] : 0;
        double mean_len = c->n_active ? sum_len / (double)c->n_active : 1;
        double sum_w = 0;
        uint64_t cost = 0;
        double mean_ns = n_ns ? sum_ns / (double)n_ns : 0;
        for (size_t a = 0; a < c->n_active; a++) {
                Entry *e = &c->entries[act[a]];
                double rare = 0;
                for (uint32_t k = 0; k < e->n_feat; k++)
                        rare += c->rarity[e->feat[k]];
                double w = 1 + (rare < 8 ? rare : 8);
                w *= ratio_factor((mean_len + 64) / ((double)e->len + 64));
                if (e->exec_ns && mean_ns > 0)
                        w *= ratio_factor(mean_ns / (double)e->exec_ns);
                if (e->favored)
                        w *= 2;
                e->weight = w;
                sum_w += w;
                cost += e->n_feat;
        }
        c->mean_weight = c->n_active ? sum_w / (double)c->n_active : 1;
        c->n_computed = c->n;
        c->cost = cost + c->n;
        c->picks_since = 0;
        c->dirty = false;
        return 0;
}

/* The energy's part that changes with the entry's own batches. */
static double entry_freshness(const Entry *e)
{
        if (e->batches == 0)
                return 2;
        double f = 4.0 / (4.0 + (double)e->fruitless);
        return f < 0.05 ? 0.05 : f;
}

/* The energy an entry is picked with: what the last recompute gave it, or
 * for an entry added since, the mean; 0 once superseded. */
static double entry_energy(const Corpus *c, size_t i)
{
        const Entry *e = &c->entries[i];
        if (!entry_active(c, e))
                return 0;
        return (i < c->n_computed ? e->weight : c->mean_weight) * entry_freshness(e);
}

/* A recompute goes through every active entry's features: on a large
 * corpus it is done once its cost is spread over enough picks (some 10^5
 * features a pick), so that the coordinator stays cheap; in between, new
 * entries are picked with the mean energy. */
#ifndef CORPUS_COST_PER_PICK /* can be set at build time for A/B runs */
#define CORPUS_COST_PER_PICK 100000u
#endif

size_t corpus_schedule_many(Corpus *c, SfPrng *rng, size_t *ret, size_t n)
{
        if (n == 0)
                return 0;
        c->picks_since++;
        if (c->dirty && (c->n_computed == 0 || c->picks_since * CORPUS_COST_PER_PICK >= c->cost))
                (void)corpus_recompute(c);
        size_t m = c->n_active + (c->n - c->n_computed);
        double *cum = c->n_computed ? realloc(c->cum, (m ? m : 1) * sizeof(double)) : NULL;
        if (cum)
                c->cum = cum;
        /* Candidates and their running energy: the active entries, then
         * those added since the last recompute. */
        double total = 0;
        for (size_t a = 0; cum && a < m; a++) {
                size_t i = a < c->n_active ? c->active[a] : c->n_computed + (a - c->n_active);
                total += entry_energy(c, i);
                cum[a] = total;
        }
        if (!cum || total <= 0) {
                for (size_t k = 0; k < n; k++)
                        ret[k] = corpus_pick(c, rng);
                return n;
        }
        for (size_t k = 0; k < n; k++) {
                /* 53 random bits: a uniform point in [0, total); the first
                 * candidate whose running energy passes it. */
                double at = (double)(prng_next64(rng) >> 11) * 0x1p-53 * total;
                size_t lo = 0, hi = m - 1;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (cum[mid] > at)
                                hi = mid;
                        else
                                lo = mid + 1;
                }
                ret[k] = lo < c->n_active ? c->active[lo] : c->n_computed + (lo - c->n_active);
        }
        return n;
}

size_t corpus_schedule(Corpus *c, SfPrng *rng)
{
        size_t i;
        corpus_schedule_many(c, rng, &i, 1);
        return i;
}

size_t corpus_pick_partner(Corpus *c, SfPrng *rng)
{
        if (c->n_computed == 0)
                (void)corpus_recompute(c);
        /* The seeds stay partners when shorter inputs took their place as
         * bases: a bug that needs two of them put together needs the
         * whole of one. A pick is a seed as often as the seeds' share of
         * the active entries and seeds together. */
        if (c->n_seed_idx &&
            prng_below(rng, (uint32_t)(c->n_active + c->n_seed_idx)) < c->n_seed_idx)
                return c->seed_idx[prng_below(rng, (uint32_t)c->n_seed_idx)];
        /* The active list may be a little behind (see corpus_schedule): an
         * entry superseded since is skipped. */
        for (int tries = 0; c->n_active && tries < 8; tries++) {
                size_t i = c->active[prng_below(rng, (uint32_t)c->n_active)];
                if (entry_active(c, &c->entries[i]))
                        return i;
        }
        return prng_below(rng, (uint32_t)c->n);
}

uint64_t corpus_exec_ns(const Corpus *c, size_t i)
{
        return i < c->n ? c->entries[i].exec_ns : 0;
}

size_t corpus_best_features(const Corpus *c, size_t i, uint32_t *ids, size_t cap)
{
        if (i >= c->n)
                return 0;
        const Entry *e = &c->entries[i];
        if (e->known != ENTRY_FEATURES_COMPLETE || e->n_best == 0 || e->n_best > cap)
                return 0;
        size_t n = 0;
        for (uint32_t k = 0; k < e->n_feat && n < cap; k++)
                if (c->best[e->feat[k]] == i + 1)
                        ids[n++] = c->fid[e->feat[k]];
        return n;
}

void corpus_inherit(Corpus *c, size_t i, size_t from)
{
        if (i >= c->n || from >= c->n || i == from)
                return;
        Entry *e = &c->entries[i];
        const Entry *f = &c->entries[from];
        e->execs = f->execs;
        e->batches = f->batches;
        e->fruitless = f->fruitless;
}

void corpus_note_batch(Corpus *c, size_t i, uint64_t execs, uint64_t finds)
{
        if (i >= c->n)
                return;
        Entry *e = &c->entries[i];
        e->execs += execs;
        e->batches++;
        e->fruitless = finds ? 0 : e->fruitless + 1;
}

bool corpus_is_active(Corpus *c, size_t i)
{
        return entry_active(c, &c->entries[i]);
}

bool corpus_is_favored(Corpus *c, size_t i)
{
        (void)corpus_recompute(c);
        return c->entries[i].favored;
}

double corpus_energy(Corpus *c, size_t i)
{
        (void)corpus_recompute(c);
        return entry_energy(c, i);
}

size_t corpus_active_count(Corpus *c)
{
        (void)corpus_recompute(c);
        return c->n_active;
}

size_t corpus_favored_count(Corpus *c)
{
        (void)corpus_recompute(c);
        return c->n_favored;
}

void corpus_report_counts(const Corpus *c, size_t *active, size_t *favored)
{
        size_t n = 0;
        for (size_t i = 0; i < c->n; i++)
                n += entry_active(c, &c->entries[i]);
        *active = n;
        *favored = c->n_favored;
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

int corpus_mark_seed(Corpus *c, size_t i)
{
        if (i >= c->n || c->entries[i].seed)
                return 0;
        if (c->n_seed_idx == c->cap_seed_idx) {
                size_t cap = c->cap_seed_idx ? c->cap_seed_idx * 2 : 64;
                uint32_t *idx = realloc(c->seed_idx, cap * sizeof(uint32_t));
                if (!idx)
                        return -ENOMEM;
                c->seed_idx = idx;
                c->cap_seed_idx = cap;
        }
        c->seed_idx[c->n_seed_idx++] = (uint32_t)i;
        c->entries[i].seed = true;
        c->dirty = true;
        return 0;
}

void corpus_set_keep_seeds(Corpus *c, bool keep)
{
        c->keep_seeds = keep;
        c->dirty = true;
}

void corpus_mark_on_disk(Corpus *c, size_t i, bool on_disk)
{
        if (i >= c->n)
                return;
        c->entries[i].on_disk = on_disk;
        c->entries[i].filed = c->entries[i].filed || on_disk;
}

bool corpus_on_disk(const Corpus *c, size_t i)
{
        return i < c->n && c->entries[i].on_disk;
}

static const Corpus *cover_corpus; /* for qsort's comparison */

/* Shorter first; for the same length more features first; then older. */
static int cover_cmp(const void *a, const void *b)
{
        size_t i = *(const size_t *)a, j = *(const size_t *)b;
        const Entry *x = &cover_corpus->entries[i], *y = &cover_corpus->entries[j];
        if (x->len != y->len)
                return x->len < y->len ? -1 : 1;
        if (x->n_feat != y->n_feat)
                return x->n_feat > y->n_feat ? -1 : 1;
        return i < j ? -1 : 1;
}

/* An entry's features, for featcover_select. */
static const uint32_t *cover_features(const void *ctx, size_t i, uint32_t *ret_n)
{
        const Entry *e = &((const Corpus *)ctx)->entries[i];
        *ret_n = e->n_feat;
        return e->feat;
}

ssize_t corpus_disk_cover(Corpus *c, uint8_t *want)
{
        uint32_t *holders = calloc(c->n_feat ? c->n_feat : 1, sizeof(*holders));
        size_t *order = malloc((c->n ? c->n : 1) * sizeof(*order));
        bool *keep = calloc(c->n ? c->n : 1, sizeof(*keep));
        size_t n = 0, pinned = 0;
        if (!holders || !order || !keep) {
                free(holders);
                free(order);
                free(keep);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->n; i++) {
                const Entry *e = &c->entries[i];
                want[i] = CORPUS_COVER_NONE;
                if (!e->filed || !(entry_active(c, e) || e->seed))
                        continue;
                if (e->known == ENTRY_FEATURES_COMPLETE) {
                        order[n++] = i;
                        continue;
                }
                /* Features not all known: nothing can stand in for it. */
                want[i] = CORPUS_COVER_IN;
                pinned++;
                featcover_pin(holders, e->feat, e->n_feat);
        }
        cover_corpus = c;
        qsort(order, n, sizeof(*order), cover_cmp);
        size_t kept = featcover_select(order, n, cover_features, c, holders, keep);
        for (size_t j = 0; j < n; j++)
                want[order[j]] = keep[order[j]] ? CORPUS_COVER_IN : CORPUS_COVER_OUT;
        free(keep);
        free(order);
        free(holders);
        return (ssize_t)(pinned + kept);
}
