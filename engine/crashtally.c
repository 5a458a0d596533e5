/*
 * The run's crash ids and their counts (engine/crashtally.h): a plain
 * array, searched linearly. Invariants: one entry per id, in the order the
 * ids were first seen; an entry's count is at least 1; the sum of counts
 * is the number of sightings crashtally_add accepted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/crashtally.h"

#include "snapfuzz/banned.h"

typedef struct CrashTallyEntry {
        char id[24];
        char kind[32];
        char message[160];
        uint64_t count;
} CrashTallyEntry;

struct CrashTally {
        CrashTallyEntry *v;
        size_t n, cap;
        uint64_t sightings;
};

int crashtally_new(CrashTally **ret)
{
        *ret = calloc(1, sizeof(CrashTally));
        return *ret ? 0 : -ENOMEM;
}

void crashtally_free(CrashTally *t)
{
        if (!t)
                return;
        free(t->v);
        free(t);
}

static void copy_text(char *dst, size_t cap, const char *src)
{
        size_t n = src ? strnlen(src, cap - 1) : 0;
        if (n)
                memcpy(dst, src, n);
        dst[n] = '\0';
}

int crashtally_add(CrashTally *t, const char *id, const char *kind, const char *message)
{
        for (size_t i = 0; i < t->n; i++)
                if (strncmp(t->v[i].id, id, sizeof(t->v[i].id)) == 0) {
                        t->v[i].count++;
                        t->sightings++;
                        return 0;
                }
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                CrashTallyEntry *v = realloc(t->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                t->v = v;
                t->cap = cap;
        }
        CrashTallyEntry *e = &t->v[t->n++];
        copy_text(e->id, sizeof(e->id), id);
        copy_text(e->kind, sizeof(e->kind), kind);
        copy_text(e->message, sizeof(e->message), message);
        e->count = 1;
        t->sightings++;
        return 1;
}

size_t crashtally_unique(const CrashTally *t)
{
        return t ? t->n : 0;
}

uint64_t crashtally_sightings(const CrashTally *t)
{
        return t ? t->sightings : 0;
}

static int by_count_desc(const void *a, const void *b)
{
        const CrashTallyEntry *x = a, *y = b;
        return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

void crashtally_summary(const CrashTally *t)
{
        if (!t || t->sightings == t->n)
                return;
        CrashTallyEntry *v = malloc(t->n * sizeof(*v));
        if (!v)
                return;
        memcpy(v, t->v, t->n * sizeof(*v));
        qsort(v, t->n, sizeof(*v), by_count_desc);
        size_t shown = t->n < CRASHTALLY_SUMMARY_MAX ? t->n : CRASHTALLY_SUMMARY_MAX;
        uint64_t rest = 0;
        for (size_t i = 0; i < t->n; i++) {
                if (i < shown)
                        log_info("crash %s: %s (%s), seen %llu time%s", v[i].id, v[i].kind,
                                 v[i].message, (unsigned long long)v[i].count,
                                 v[i].count == 1 ? "" : "s");
                else
                        rest += v[i].count;
        }
        if (t->n > shown)
                log_info("%zu more crash ids, seen %llu times (snapfuzz crashes lists them all)",
                         t->n - shown, (unsigned long long)rest);
        free(v);
}
