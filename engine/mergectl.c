/*
 * The control file is read whole and parsed line by line with a cursor;
 * numbers are strict decimals in range (never atoi's guess), and a line
 * that breaks the format's order (a STARTED out of turn, an FT for another
 * input) makes the whole file refused, as libFuzzer's parser does. Writing
 * builds the text in memory and replaces the file atomically, so a reader
 * sees the old state or the new one, never half of one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "engine/mergectl.h"

#include "snapfuzz/banned.h"

#define MERGECTL_TAG "snapfuzz-merge 1 key="

/* A cursor over the text, one line at a time. */
typedef struct Lines {
        const char *p, *end;
        size_t lineno;
} Lines;

/* The next line (without its newline) in [*@ret, *@ret_end). false at the
 * end of the text. */
static bool lines_next(Lines *l, const char **ret, const char **ret_end)
{
        if (l->p >= l->end)
                return false;
        const char *nl = memchr(l->p, '\n', (size_t)(l->end - l->p));
        *ret = l->p;
        *ret_end = nl ? nl : l->end;
        l->p = nl ? nl + 1 : l->end;
        l->lineno++;
        return true;
}

/* A decimal number at *@p (before @end) up to @max; moves *@p past it and
 * the spaces after it. false when there is none or it is out of range. */
static bool take_u64(const char **p, const char *end, uint64_t max, uint64_t *ret)
{
        const char *s = *p;
        uint64_t v = 0;
        if (s >= end || *s < '0' || *s > '9')
                return false;
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
                uint64_t d = (uint64_t)(*s - '0');
                if (d > max || v > (max - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        if (s < end && *s != ' ')
                return false;
        while (s < end && *s == ' ')
                s++;
        *p = s;
        *ret = v;
        return true;
}

/* Whether [@p, @end) starts with the word @w followed by a space. */
static bool take_word(const char **p, const char *end, const char *w)
{
        size_t n = strlen(w);
        if ((size_t)(end - *p) <= n || memcmp(*p, w, n) != 0 || (*p)[n] != ' ')
                return false;
        *p += n + 1;
        return true;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/* An FT line's features into @e: sorted, duplicates dropped. */
static int parse_features(const char *p, const char *end, MergeCtlEntry *e)
{
        size_t cap = (size_t)(end - p) / 2 + 1, n = 0;
        uint32_t *ft = malloc(cap * sizeof(*ft));
        if (!ft)
                return -ENOMEM;
        while (p < end) {
                uint64_t v;
                if (!take_u64(&p, end, UINT32_MAX, &v)) {
                        free(ft);
                        return -EINVAL;
                }
                ft[n++] = (uint32_t)v;
        }
        qsort(ft, n, sizeof(*ft), cmp_u32);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (k == 0 || ft[k - 1] != ft[i])
                        ft[k++] = ft[i];
        free(e->ft);
        e->ft = ft;
        e->n_ft = (uint32_t)k;
        return 0;
}

/* The header: N (with snapfuzz's key, or not), M and the N names. */
static int parse_header(Lines *l, MergeCtl *c, char *err, size_t errlen)
{
        const char *p, *end;
        uint64_t n, m;

        /* Each input takes a line of two bytes at least: a first line
         * promising more than the file can hold allocates nothing. */
        uint64_t most = (uint64_t)(l->end - l->p) / 2;
        if (!lines_next(l, &p, &end) || !take_u64(&p, end, MERGECTL_MAX_INPUTS, &n) || n == 0 ||
            n > most) {
                snprintf(err, errlen, "line 1 is not a number of inputs (1 to %u)",
                         MERGECTL_MAX_INPUTS);
                return -EINVAL;
        }
        size_t tag = strlen(MERGECTL_TAG);
        if ((size_t)(end - p) == tag + 16 && memcmp(p, MERGECTL_TAG, tag) == 0) {
                char hex[17];
                memcpy(hex, p + tag, 16);
                hex[16] = 0;
                char *e;
                c->key = strtoull(hex, &e, 16);
                c->ours = *e == 0 && hex[0] != '-' && hex[0] != '+' && hex[0] != ' ';
        }
        if (!lines_next(l, &p, &end) || !take_u64(&p, end, n, &m) || p != end) {
                snprintf(err, errlen, "line 2 is not a number of inputs up to %" PRIu64, n);
                return -EINVAL;
        }
        c->n = (size_t)n;
        c->m = (size_t)m;
        c->e = calloc(c->n, sizeof(*c->e));
        if (!c->e)
                return -ENOMEM;
        for (size_t i = 0; i < c->n; i++) {
                if (!lines_next(l, &p, &end) || p == end) {
                        snprintf(err, errlen, "line %zu: %zu input names expected, %zu found",
                                 l->lineno, c->n, i);
                        return -EINVAL;
                }
                c->e[i].name = strndup(p, (size_t)(end - p));
                if (!c->e[i].name)
                        return -ENOMEM;
        }
        return 0;
}

/* Keeps the word after a failed input's STARTED line when it is a plain
 * lower-case word (it is shown and written back), else "failed". */
static void take_failure(const char *p, const char *end, MergeCtlEntry *e)
{
        size_t w = (size_t)(end - p);
        bool plain = w > 0 && w < sizeof(e->failure);
        for (size_t k = 0; plain && k < w; k++)
                plain = (p[k] >= 'a' && p[k] <= 'z') || p[k] == '-';
        snprintf(e->failure, sizeof(e->failure), "%.*s", plain ? (int)w : 6, plain ? p : "failed");
}

/* One STARTED, FT or COV line; @last is the input of the last STARTED
 * (SIZE_MAX: none yet). */
static int parse_result(const char *p, const char *end, MergeCtl *c, size_t *last)
{
        uint64_t i, size;
        if (take_word(&p, end, "STARTED")) {
                if (c->done >= c->n || !take_u64(&p, end, UINT64_MAX, &i) || i != c->done ||
                    !take_u64(&p, end, UINT64_MAX, &size))
                        return -EINVAL;
                MergeCtlEntry *e = &c->e[c->done++];
                e->size = size;
                e->state = MERGECTL_FAILED;
                take_failure(p, end, e);
                *last = (size_t)i;
                return 0;
        }
        bool ft = take_word(&p, end, "FT");
        if (!ft && !take_word(&p, end, "COV"))
                return -EINVAL;
        if (!take_u64(&p, end, UINT64_MAX, &i) || *last == SIZE_MAX || i != *last)
                return -EINVAL;
        if (!ft)
                return 0; /* COV: libFuzzer's edges, not needed */
        c->e[i].state = MERGECTL_DONE;
        c->e[i].failure[0] = 0;
        return parse_features(p, end, &c->e[i]);
}

int mergectl_parse(const char *text, size_t len, MergeCtl *ret, char *err, size_t errlen)
{
        Lines l = {.p = text, .end = text + len};
        MergeCtl c = {0};
        const char *p, *end;
        size_t last = SIZE_MAX;

        int r = parse_header(&l, &c, err, errlen);
        while (r == 0 && lines_next(&l, &p, &end)) {
                if (p == end && l.p == l.end)
                        break; /* the newline that ends the file */
                r = parse_result(p, end, &c, &last);
                if (r == -EINVAL)
                        snprintf(err, errlen,
                                 "line %zu is not a STARTED or FT line of the input due "
                                 "(a number out of place or out of range)",
                                 l.lineno);
        }
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errlen, "out of memory");
                mergectl_deinit(&c);
                return r;
        }
        *ret = c;
        return 0;
}

/* Appends the text of @c to @f. */
static void write_text(FILE *f, const MergeCtl *c)
{
        fprintf(f, "%zu %s%016" PRIx64 "\n%zu\n", c->n, MERGECTL_TAG, c->key, c->m);
        for (size_t i = 0; i < c->n; i++)
                fprintf(f, "%s\n", c->e[i].name);
        for (size_t i = 0; i < c->done; i++) {
                const MergeCtlEntry *e = &c->e[i];
                if (e->state != MERGECTL_DONE) {
                        fprintf(f, "STARTED %zu %" PRIu64 " %s\n", i, e->size,
                                e->failure[0] ? e->failure : "failed");
                        continue;
                }
                fprintf(f, "STARTED %zu %" PRIu64 "\nFT %zu", i, e->size, i);
                for (uint32_t k = 0; k < e->n_ft; k++)
                        fprintf(f, " %" PRIu32, e->ft[k]);
                fputc('\n', f);
        }
}

int mergectl_write(const char *path, const MergeCtl *c)
{
        char *buf = NULL, dir[4096];
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f)
                return -errno;
        write_text(f, c);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        if (slash && (size_t)(slash - path) + 1 >= sizeof(dir)) {
                free(buf);
                return -ENAMETOOLONG;
        }
        if (slash) {
                memcpy(dir, path, (size_t)(slash - path));
                dir[slash - path] = 0;
        }
        int dfd =
            open(slash ? (slash == path ? "/" : dir) : ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        int r = dfd < 0 ? -errno : fs_write_atomic(dfd, name, buf, len);
        if (dfd >= 0)
                close(dfd);
        free(buf);
        return r;
}

void mergectl_deinit(MergeCtl *c)
{
        if (!c->e)
                return;
        for (size_t i = 0; i < c->n; i++) {
                free(c->e[i].name);
                free(c->e[i].ft);
        }
        free(c->e);
        c->e = NULL;
}
