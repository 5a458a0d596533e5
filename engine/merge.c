/*
 * Corpus merge (engine_merge, include/snapfuzz/engine.h): libFuzzer's
 * -merge=1 and afl-cmin, on snapfuzz's engine. Phases, one function each:
 *
 *   list      the output corpus's files, then the input directories'
 *             (recursively, dot files left out), each group by size
 *   resume    the control file's results for the same files (by name and
 *             size), when it is a control file of this target's
 *   run       every other input once, in order, in batches: a batch is a
 *             seed list for one runner under the sandbox (about 250 ms of
 *             inputs, at most RECORD_FINDS_SLOTS), which hands back every
 *             input with all the features it reaches (worker/runner.c, as
 *             the coordinator's seeds); an input with more features than
 *             a slot holds runs again alone, and its features are the
 *             buckets it left in the coverage map, zeroed before it. A
 *             crash or OOM skips the input, counted; a hang is confirmed
 *             alone first (in a batch, its features' run shares its
 *             timeout); the batch goes on after it
 *   select    the output corpus's features count first; the other inputs,
 *             smallest first, are kept when they add a feature (libFuzzer's
 *             greedy pass), then every kept input whose features the
 *             others cover is dropped again, largest first
 *   write     the kept inputs into the output corpus, named by SHA-1:
 *             temporary files, one syncfs, the renames, one fsync of the
 *             directory
 *
 * Invariants: the output corpus's coverage after the merge is the union of
 * every input's that ran to its end (no feature is lost: a kept input is
 * only dropped when each of its features has another holder); the result
 * of an input that has run is in the control file at the next checkpoint,
 * which replaces the file atomically (checkpoints are spaced by what
 * writing costs, so they stay a small share of the time); nothing is ever
 * removed from the output corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/coverage.h"
#include "core/featcover.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/termsafe.h"
#include "engine/merge.h"
#include "engine/mergectl.h"
#include "recovery/classify.h"
#include "worker/proto.h"
#include "worker/wproc.h"

#include "snapfuzz/banned.h"

/* libFuzzer's merge cuts inputs at 1 MiB (kDefaultMaxMergeLen). */
#define MERGE_DEFAULT_MAX_LEN (1u << 20)
#define MERGE_MAX_DEPTH 32           /* directory levels followed */
#define MERGE_PROGRESS_MS 3000       /* a progress line this often */
#define MERGE_CHECKPOINT_MIN_MS 1000 /* control file rewritten at most this often */
#define MERGE_CHECKPOINT_SHARE 20    /* ... and after 20 times what the last write took */
#define MERGE_FAILS_SHOWN 20         /* skipped inputs named one by one */
#define MERGE_WORKER_RESTARTS 3      /* a worker lost this often in a row ends the merge */
/* A batch lasts about this long (from the inputs' speed so far), so that
 * a killed merge loses little and a slow input's batch stays short. */
#define MERGE_BATCH_MS 250.0

typedef struct Listed {
        char *path;
        uint64_t size;
        bool first; /* in the output corpus */
} Listed;

typedef struct Listing {
        Listed *v;
        size_t n, cap;
        size_t odd_names; /* names with a newline: a control file cannot list them */
} Listing;

typedef struct Merge {
        const SfMergeConfig *cfg;
        const SfRunConfig *run;
        SfMergeResult *res;
        MergeCtl cur; /* the inputs in run order, and their results */
        size_t max_len;
        uint8_t *buf;
        char ctl_path[4096];
        bool ctl_temp;
        int cov_fd;
        CoverageShared *cov;
        size_t counters;
        size_t target_counters; /* the first counters are the target's edges */
        Wproc *w;
        WprocConfig wc;
        uint8_t *pack; /* a batch's inputs (the record's base area) */
        uint64_t batch_id;
        double input_ms; /* how long an input of a batch took, on average; 0: unknown */
        size_t singles;  /* after a worker was lost in a batch: inputs to run alone */
        int64_t last_ckpt_ms, ckpt_cost_ms, last_progress_ms;
        size_t shown;
} Merge;

/* ---- list ---- */

static int listing_add(Listing *l, const char *path, uint64_t size, bool first)
{
        if (strchr(path, '\n')) {
                l->odd_names++;
                return 0;
        }
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 256;
                Listed *v = realloc(l->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v;
                l->cap = cap;
        }
        l->v[l->n].path = strdup(path);
        if (!l->v[l->n].path)
                return -ENOMEM;
        l->v[l->n].size = size;
        l->v[l->n++].first = first;
        return 0;
}

/* The regular files under @dir (symbolic links followed, names starting
 * with a dot left out: temporary files, .git). 0 or -errno of @dir itself;
 * a subdirectory that cannot be read is skipped with a warning. */
static int list_subdir(Listing *l, const char *path, bool first, int depth);

static int list_dir(Listing *l, const char *dir, bool first, int depth)
{
        DIR *d = opendir(dir);
        if (!d)
                return -errno;
        int r = 0;
        struct dirent *de;
        while (r == 0 && (de = readdir(d))) {
                char path[4096];
                struct stat st;
                if (de->d_name[0] == '.' ||
                    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
                        sizeof(path) ||
                    stat(path, &st) < 0)
                        continue;
                if (S_ISREG(st.st_mode))
                        r = listing_add(l, path, (uint64_t)st.st_size, first);
                else if (S_ISDIR(st.st_mode) && depth < MERGE_MAX_DEPTH)
                        r = list_subdir(l, path, first, depth + 1);
        }
        closedir(d);
        return r;
}

/* A subdirectory: one that cannot be read is left out, with a warning. */
static int list_subdir(Listing *l, const char *path, bool first, int depth)
{
        int r = list_dir(l, path, first, depth);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                char shown[TERMSAFE_BUF];
                log_warn("%s cannot be read (%s); its files are left out",
                         termsafe_str(shown, sizeof(shown), path, 512), strerror(-r));
        }
        return 0;
}

/* The output corpus first, then the rest; each by size, then name. */
static int listed_cmp(const void *a, const void *b)
{
        const Listed *x = a, *y = b;
        if (x->first != y->first)
                return x->first ? -1 : 1;
        if (x->size != y->size)
                return x->size < y->size ? -1 : 1;
        return strcmp(x->path, y->path);
}

static int merge_list(Merge *m)
{
        Listing l = {0};
        int r = fs_mkdir_p(m->cfg->out_corpus, 0755);
        const char *dir = m->cfg->out_corpus;
        for (int i = -1; r == 0 && i < m->cfg->n_in_dirs; i++) {
                dir = i < 0 ? m->cfg->out_corpus : m->cfg->in_dirs[i];
                r = list_dir(&l, dir, i < 0, 0);
        }
        if (r < 0) {
                char shown[TERMSAFE_BUF];
                log_error("corpus directory %s: %s", termsafe_str(shown, sizeof(shown), dir, 512),
                          strerror(-r));
                goto out;
        }
        if (l.odd_names)
                log_warn("%zu files whose names hold a newline are left out", l.odd_names);
        if (l.n)
                qsort(l.v, l.n, sizeof(*l.v), listed_cmp);
        m->cur.n = l.n;
        m->cur.e = calloc(l.n ? l.n : 1, sizeof(*m->cur.e));
        if (!m->cur.e) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < l.n; i++) {
                m->cur.e[i].name = l.v[i].path;
                m->cur.e[i].size = l.v[i].size < m->max_len ? l.v[i].size : m->max_len;
                l.v[i].path = NULL;
                m->cur.m += l.v[i].first;
        }
        m->res->inputs = l.n;
        m->res->in_out_corpus = m->cur.m;
out:
        for (size_t i = 0; i < l.n; i++)
                free(l.v[i].path);
        free(l.v);
        return r;
}

/* ---- resume ---- */

/* What the features are of: the target's bytes and the options that
 * change what an input reaches. 0 or -errno after a line. */
static int merge_key(Merge *m)
{
        uint8_t *so;
        size_t len;
        int r = fs_read_file(AT_FDCWD, m->run->target_abs, (size_t)1 << 31, &so, &len);
        if (r < 0) {
                log_error("%s: %s", m->run->target, strerror(-r));
                return r;
        }
        uint64_t k = hash64_lanes(so, len, 0x6d65726765ull);
        k = hash64_mix(k, m->run->value_profile);
        m->cur.key = hash64_mix(k, m->max_len);
        free(so);
        return 0;
}

/* An entry of the old control file, for sorting by name. */
typedef struct EntryRef {
        MergeCtlEntry *e;
} EntryRef;

static int entry_name_cmp(const void *a, const void *b)
{
        const EntryRef *x = a, *y = b;
        return strcmp(x->e->name, y->e->name);
}

/* Takes the results @old has for the same files (name and size) into
 * m->cur; features outside this target's map make an entry run again. */
static int merge_reuse(Merge *m, MergeCtl *old)
{
        EntryRef *by_name = malloc((old->done ? old->done : 1) * sizeof(*by_name));
        if (!by_name)
                return -ENOMEM;
        for (size_t i = 0; i < old->done; i++)
                by_name[i].e = &old->e[i];
        if (old->done)
                qsort(by_name, old->done, sizeof(*by_name), entry_name_cmp);
        for (size_t i = 0; i < m->cur.n && old->done; i++) {
                MergeCtlEntry *e = &m->cur.e[i], probe = {.name = e->name};
                EntryRef key = {.e = &probe};
                EntryRef *ref = bsearch(&key, by_name, old->done, sizeof(*by_name), entry_name_cmp);
                MergeCtlEntry *hit = ref ? ref->e : NULL;
                if (!hit || hit->size != e->size || hit->state == MERGECTL_NOT_RUN)
                        continue;
                if (hit->state == MERGECTL_DONE && hit->n_ft &&
                    hit->ft[hit->n_ft - 1] >= m->counters * 8)
                        continue;
                e->state = hit->state;
                memcpy(e->failure, hit->failure, sizeof(e->failure));
                e->ft = hit->ft;
                e->n_ft = hit->n_ft;
                hit->ft = NULL;
        }
        free(by_name);
        return 0;
}

/* Why the control file cannot be used: replaced (cfg->replace_bad_control)
 * or refused. */
static int refuse_control(Merge *m, const char *why)
{
        char shown[TERMSAFE_BUF];
        termsafe_str(shown, sizeof(shown), m->ctl_path, 512);
        if (m->cfg->replace_bad_control) {
                log_warn("%s %s; it is replaced", shown, why);
                return 1;
        }
        log_error("%s %s; remove it, or name another file with --control-file", shown, why);
        return -EINVAL;
}

/* Reads the control file into @old. 0 (results to reuse), 1 (none: no
 * file, an empty one, or one replaced), or a negative errno after a line. */
static int merge_load_control(Merge *m, MergeCtl *old)
{
        char err[512], shown[TERMSAFE_BUF];
        uint8_t *text;
        size_t len;

        if (!m->cfg->control_file) {
                const char *tmp = getenv("TMPDIR");
                snprintf(m->ctl_path, sizeof(m->ctl_path), "%s/snapfuzz-merge-%ld.txt",
                         tmp && *tmp ? tmp : "/tmp", (long)getpid());
                m->ctl_temp = true;
                return 1;
        }
        snprintf(m->ctl_path, sizeof(m->ctl_path), "%s", m->cfg->control_file);
        int r = fs_read_file(AT_FDCWD, m->ctl_path, (size_t)1 << 31, &text, &len);
        if (r == -ENOENT)
                return 1;
        if (r < 0) {
                log_error("the control file %s cannot be read: %s",
                          termsafe_str(shown, sizeof(shown), m->ctl_path, 512), strerror(-r));
                return r;
        }
        r = len ? mergectl_parse((const char *)text, len, old, err, sizeof(err)) : 1;
        free(text);
        if (r == -EINVAL) {
                char why[700];
                snprintf(why, sizeof(why), "is not a merge control file (%s)", err);
                return refuse_control(m, why);
        }
        if (r != 0)
                return r;
        if (!old->ours || old->key != m->cur.key) {
                r = refuse_control(m, old->ours ? "was written for another build of the target "
                                                  "or other --max-len/--use-value-profile"
                                                : "was written by libFuzzer: its features are "
                                                  "not snapfuzz's");
                mergectl_deinit(old);
        }
        return r;
}

/* ---- run ---- */

static int merge_worker_start(Merge *m)
{
        char err[1024], shown[TERMSAFE_BUF];
        int r = wproc_spawn(&m->w, &m->wc, err, sizeof(err));
        if (r < 0) {
                log_error("%s: %s", termsafe_str(shown, sizeof(shown), m->run->target, 512), err);
                m->w = NULL;
                return r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED || r == WPROC_ERR_TIMEOUT
                           ? -ENOEXEC
                           : r;
        }
        m->counters = wproc_counters(m->w);
        m->target_counters = wproc_target_counters(m->w);
        return 0;
}

static int merge_setup(Merge *m)
{
        m->cov_fd = coverage_shared_create();
        if (m->cov_fd < 0)
                return m->cov_fd;
        int r = coverage_shared_map(m->cov_fd, &m->cov);
        if (r < 0)
                return r;
        m->buf = malloc(m->max_len ? m->max_len : 1);
        m->pack = malloc(RECORD_AREA_MIN > m->max_len ? RECORD_AREA_MIN : m->max_len);
        if (!m->buf || !m->pack)
                return -ENOMEM;
        m->wc = (WprocConfig){
            .target = m->run->target_abs,
            .builtin = m->run->builtin_target,
            .max_len = m->max_len,
            .timeout_ms = m->run->timeout_ms,
            .rss_limit_mb = m->run->rss_limit_mb,
            .malloc_limit_mb = m->run->malloc_limit_mb,
            .sandbox = m->run->sandbox ? m->run->sandbox : "strict",
            .cov_fd = m->cov_fd,
            .value_profile = m->run->value_profile,
            .sandbox_policy = m->run->sandbox_policy,
            .target_output = "discard",
            .close_fd_mask = m->run->close_fd_mask,
        };
        return merge_worker_start(m);
}

/* Reads the first max_len bytes of @e's file into m->buf. 0 or -errno. */
static int merge_read(Merge *m, const MergeCtlEntry *e, size_t *ret_len, bool *ret_cut)
{
        *ret_len = 0;
        *ret_cut = false;
        /* The file was listed as a regular one; whatever replaced it since
         * (a FIFO, say) is refused, not waited on. */
        int fd = open(e->name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        struct stat st = {0};
        int r = fstat(fd, &st) < 0 ? -errno : 0;
        if (r == 0 && !S_ISREG(st.st_mode))
                r = -EINVAL;
        while (r == 0 && len < m->max_len) {
                ssize_t n = read(fd, m->buf + len, m->max_len - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : 0;
                        break;
                }
                len += (size_t)n;
        }
        close(fd);
        *ret_len = len;
        *ret_cut = (uint64_t)st.st_size > m->max_len;
        return r;
}

/* The features the last input left in the map (ascending), into @e. */
static int merge_collect(Merge *m, MergeCtlEntry *e)
{
        const uint8_t *seen = m->cov->seen;
        size_t n = 0;
        for (size_t i = 0; i < m->counters; i++)
                n += (size_t)__builtin_popcount(seen[i]);
        uint32_t *ft = malloc((n ? n : 1) * sizeof(*ft));
        if (!ft)
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < m->counters; i++)
                for (unsigned b = seen[i]; b; b &= b - 1)
                        ft[n++] = (uint32_t)(i * 8 + (unsigned)__builtin_ctz(b));
        free(e->ft);
        e->ft = ft;
        e->n_ft = (uint32_t)n;
        return 0;
}

/* An input that did not run to its end: counted, named (the first few). */
static void merge_fail(Merge *m, MergeCtlEntry *e, const char *what, const char *detail)
{
        e->state = MERGECTL_FAILED;
        snprintf(e->failure, sizeof(e->failure), "%s", what);
        if (strcmp(what, "timeout") == 0)
                m->res->timeouts++;
        else if (strcmp(what, "oom") == 0)
                m->res->ooms++;
        else if (strcmp(what, "unreadable") == 0)
                m->res->unreadable++;
        else
                m->res->crashed++;
        if (m->cfg->quiet || m->shown++ >= MERGE_FAILS_SHOWN)
                return;
        char a[TERMSAFE_BUF], b[TERMSAFE_BUF];
        log_warn("skipped %s: %s", termsafe_str(a, sizeof(a), e->name, 512),
                 termsafe_str(b, sizeof(b), detail, 300));
}

/* The verdict of a runner's "died" event, as a failure. */
static void merge_died(Merge *m, MergeCtlEntry *e, const cJSON *ev)
{
        Classification c;
        char detail[600];
        classify_death(ev, &c);
        const char *what = strcmp(c.kind, "timeout") == 0 ? "timeout"
                           : strcmp(c.kind, "oom") == 0   ? "oom"
                                                          : "crash";
        snprintf(detail, sizeof(detail), "%s (%s)", c.kind, c.message);
        merge_fail(m, e, what, detail);
}

/* Runs input @i. 0, or a negative errno when the worker failed (the input
 * is then marked failed, and the caller restarts the worker). */
static int merge_run_one(Merge *m, size_t i)
{
        MergeCtlEntry *e = &m->cur.e[i];
        size_t len;
        bool cut;
        int r = merge_read(m, e, &len, &cut);
        if (r < 0) {
                merge_fail(m, e, "unreadable", strerror(-r));
                return 0;
        }
        m->res->truncated += cut;
        e->size = len;
        memset(m->cov->seen, 0, m->counters);
        WprocBatch b = {
            .batch_id = ++m->batch_id,
            .mode = RECORD_MODE_EXEC,
            .iters = 1,
            .chain_len = 1,
            .base = m->buf,
            .base_len = len,
            .replay = 1,
            .quiet = 1,
        };
        cJSON *ev = NULL;
        r = wproc_run_batch(m->w, &b, &ev);
        if (r < 0) {
                merge_fail(m, e, "crash", "the worker process was lost while running it");
                return r;
        }
        if (proto_is(ev, PROTO_DIED))
                merge_died(m, e, ev);
        else if ((r = merge_collect(m, e)) == 0)
                e->state = MERGECTL_DONE;
        cJSON_Delete(ev);
        return r;
}

/* Rewrites the control file when it is due (or @force). 0 or -errno after
 * a line. */
static int merge_checkpoint(Merge *m, bool force)
{
        int64_t now = clock_now_ms();
        int64_t every = MERGE_CHECKPOINT_SHARE * m->ckpt_cost_ms;
        if (!force && now - m->last_ckpt_ms <
                          (every > MERGE_CHECKPOINT_MIN_MS ? every : MERGE_CHECKPOINT_MIN_MS))
                return 0;
        int r = mergectl_write(m->ctl_path, &m->cur);
        m->last_ckpt_ms = clock_now_ms();
        m->ckpt_cost_ms = m->last_ckpt_ms - now;
        if (r < 0) {
                char shown[TERMSAFE_BUF];
                log_error("the control file %s cannot be written: %s",
                          termsafe_str(shown, sizeof(shown), m->ctl_path, 512), strerror(-r));
        }
        return r;
}

static void merge_progress(Merge *m, size_t i)
{
        int64_t now = clock_now_ms();
        if (m->cfg->quiet || now - m->last_progress_ms < MERGE_PROGRESS_MS)
                return;
        m->last_progress_ms = now;
        SfMergeResult *s = m->res;
        log_info("merge: %zu of %zu inputs done (%zu from the control file), %zu skipped", i,
                 m->cur.n, s->reused,
                 s->crashed + s->timeouts + s->ooms + s->unreadable + s->failed_before);
}

/* A batch: up to RECORD_FINDS_SLOTS inputs without a result, in order,
 * packed as a seed list (record_seed_at's format) for one runner. */
typedef struct MergeBatch {
        size_t idx[RECORD_FINDS_SLOTS]; /* iteration k runs input idx[k - 1] */
        size_t n;
        size_t used; /* bytes of m->pack */
} MergeBatch;

/* Packs the inputs from @i on that have no result into @b, until one has
 * a result, the list is full or an input does not fit (an input that does
 * not fit an empty list is left to merge_run_one). A file that cannot be
 * read fails here. Returns the index after the last input looked at. */
static size_t merge_pack(Merge *m, size_t i, MergeBatch *b)
{
        size_t cap = wproc_layout(m->w)->area_len;
        double want = m->input_ms > 0 ? MERGE_BATCH_MS / m->input_ms : 4;
        size_t most = want < 1 ? 1 : want > RECORD_FINDS_SLOTS ? RECORD_FINDS_SLOTS : (size_t)want;
        b->n = b->used = 0;
        for (; i < m->cur.n && b->n < most; i++) {
                MergeCtlEntry *e = &m->cur.e[i];
                size_t len;
                bool cut;
                if (e->state != MERGECTL_NOT_RUN || e->size + 4 > cap - b->used)
                        break;
                int r = merge_read(m, e, &len, &cut);
                if (r < 0) {
                        merge_fail(m, e, "unreadable", strerror(-r));
                        continue;
                }
                if (len + 4 > cap - b->used)
                        break; /* it grew since it was listed: read again, alone */
                m->res->truncated += cut;
                e->size = len;
                uint8_t *p = m->pack + b->used;
                p[0] = (uint8_t)len;
                p[1] = (uint8_t)(len >> 8);
                p[2] = (uint8_t)(len >> 16);
                p[3] = (uint8_t)(len >> 24);
                memcpy(p + 4, m->buf, len);
                b->used += 4 + len;
                b->idx[b->n++] = i;
        }
        return i;
}

/* The features the runner wrote next to each input it handed back (the
 * runner hands back every seed and runs it once more for them,
 * worker/runner.c). Inputs whose features did not fit the slot are marked
 * for a run alone (@redo). */
static int merge_take_finds(Merge *m, const MergeBatch *b, bool *redo)
{
        void *region = wproc_region(m->w);
        const RecordLayout *l = wproc_layout(m->w);
        uint32_t used = __atomic_load_n(&record_finds(region, l)->used, __ATOMIC_ACQUIRE);
        for (uint32_t s = 0; s < used && s < RECORD_FINDS_SLOTS; s++) {
                const RecordFindSlot *fs = record_find_slot(region, l, s);
                const RecordFindFeatures *ff = record_find_features(region, l, s);
                uint32_t complete = __atomic_load_n(&ff->complete, __ATOMIC_ACQUIRE);
                if (fs->iteration < 1 || fs->iteration > b->n || ff->n > RECORD_FIND_FEATURES)
                        continue;
                size_t k = (size_t)fs->iteration - 1;
                MergeCtlEntry *e = &m->cur.e[b->idx[k]];
                if (complete == RECORD_FEATURES_TRUNCATED)
                        redo[k] = true;
                if (complete != RECORD_FEATURES_COMPLETE)
                        continue;
                uint32_t *ft = malloc((ff->n ? ff->n : 1) * sizeof(*ft));
                if (!ft)
                        return -ENOMEM;
                memcpy(ft, ff->id, ff->n * sizeof(*ft));
                free(e->ft);
                e->ft = ft;
                e->n_ft = ff->n;
                e->state = MERGECTL_DONE;
        }
        return 0;
}

/* Runs @b in one runner. Inputs before the one a runner died on (all of
 * them when none did) get their results; a rejected input (no features
 * handed back) reaches nothing. The one it died on fails, except a hang,
 * which is confirmed alone (in the batch, its second run for the features
 * counts against the same timeout). Inputs after it keep no result and go
 * into the next batch. 0, or a negative errno as merge_run_one. */
static int merge_run_batch(Merge *m, const MergeBatch *b)
{
        WprocBatch wb = {
            .batch_id = ++m->batch_id,
            .mode = RECORD_MODE_SEEDS,
            .iters = b->n,
            .chain_len = 1,
            .base = m->pack,
            .base_len = b->used,
            .quiet = 1,
        };
        cJSON *ev = NULL;
        ProtoEnd end;
        bool redo[RECORD_FINDS_SLOTS] = {0};
        int64_t t0 = clock_now_ns();
        int r = wproc_run_batch(m->w, &wb, &ev);
        double ms = (double)(clock_now_ns() - t0) / 1e6 / (double)b->n + 1e-3;
        m->input_ms = m->input_ms > 0 ? 0.7 * m->input_ms + 0.3 * ms : ms;
        if (r == 0)
                r = proto_end_parse(ev, &end) < 0 ? -EPROTO : merge_take_finds(m, b, redo);
        size_t died = r == 0 && end.died ? (size_t)end.count : 0;
        for (size_t k = 0; r == 0 && k < b->n && (!died || k + 1 < died); k++) {
                MergeCtlEntry *e = &m->cur.e[b->idx[k]];
                if (redo[k])
                        r = merge_run_one(m, b->idx[k]);
                else if (e->state == MERGECTL_NOT_RUN)
                        e->state = MERGECTL_DONE; /* rejected: no features */
        }
        if (r == 0 && died >= 1 && died <= b->n) {
                MergeCtlEntry *e = &m->cur.e[b->idx[died - 1]];
                Classification c;
                classify_death(ev, &c);
                if (strcmp(c.kind, "timeout") == 0)
                        r = merge_run_one(m, b->idx[died - 1]);
                else
                        merge_died(m, e, ev);
        } else if (r == 0 && end.died) {
                r = merge_run_one(m, b->idx[0]); /* died before any input: alone */
        }
        cJSON_Delete(ev);
        return r;
}

/* After the worker failed: a new one, unless that happened too often. */
static int merge_worker_restart(Merge *m, int why, unsigned *lost)
{
        wproc_free(m->w);
        m->w = NULL;
        if (++*lost >= MERGE_WORKER_RESTARTS) {
                log_error("the worker process was lost %u times in a row: %s", *lost,
                          strerror(-why));
                return why;
        }
        log_warn("the worker process was lost (%s); a new one goes on", strerror(-why));
        return merge_worker_start(m);
}

/* Runs every input the control file had no result for, in order, in
 * batches; the control file's prefix of results grows as they end. */
static int merge_run_all(Merge *m)
{
        unsigned lost = 0;
        size_t i = 0;
        m->last_progress_ms = clock_now_ms();
        for (size_t k = 0; k < m->cur.n; k++) {
                m->res->reused += m->cur.e[k].state != MERGECTL_NOT_RUN;
                m->res->failed_before += m->cur.e[k].state == MERGECTL_FAILED;
        }
        while (i < m->cur.n) {
                MergeCtlEntry *e = &m->cur.e[i];
                int r = 0;
                MergeBatch b;
                if (e->state != MERGECTL_NOT_RUN) {
                        /* a result from the control file */
                } else if (m->singles == 0 && (merge_pack(m, i, &b), b.n > 0)) {
                        r = merge_run_batch(m, &b);
                        /* Which input lost the worker? Each alone, for a while. */
                        m->singles = r < 0 && r != -ENOMEM ? b.n : 0;
                } else if (e->state == MERGECTL_NOT_RUN) {
                        m->singles -= m->singles > 0;
                        r = merge_run_one(m, i);
                }
                if (r == -ENOMEM)
                        return r;
                if (r < 0 && (r = merge_worker_restart(m, r, &lost)) < 0)
                        return r;
                if (r == 0 && e->state != MERGECTL_NOT_RUN)
                        lost = 0;
                /* Results may end before the batch did (a death): go on
                 * from the first input without one. */
                while (i < m->cur.n && m->cur.e[i].state != MERGECTL_NOT_RUN)
                        i++;
                m->cur.done = i;
                r = merge_checkpoint(m, false);
                if (r < 0)
                        return r;
                merge_progress(m, i);
        }
        return merge_checkpoint(m, true);
}

/* ---- select ---- */

static const MergeCtl *sort_ctl; /* for qsort's comparison */

/* Smaller first; for the same size more features first; then by name. */
static int candidate_cmp(const void *a, const void *b)
{
        const MergeCtlEntry *x = &sort_ctl->e[*(const size_t *)a];
        const MergeCtlEntry *y = &sort_ctl->e[*(const size_t *)b];
        if (x->size != y->size)
                return x->size < y->size ? -1 : 1;
        if (x->n_ft != y->n_ft)
                return x->n_ft > y->n_ft ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* A candidate's features, for featcover_select. */
static const uint32_t *merge_features(const void *ctx, size_t i, uint32_t *ret_n)
{
        const MergeCtlEntry *e = &((const MergeCtl *)ctx)->e[i];
        *ret_n = e->n_ft;
        return e->ft;
}

/* Sets @keep for the inputs to add (core/featcover.h). holders[f] counts
 * the kept inputs that reach feature f (FEATCOVER_PINNED: the output corpus
 * has it). */
static int merge_select(Merge *m, bool *keep)
{
        size_t nf = m->counters * 8, n = 0;
        uint32_t *holders = calloc(nf ? nf : 1, sizeof(*holders));
        size_t *order = malloc((m->cur.n ? m->cur.n : 1) * sizeof(*order));
        if (!holders || !order) {
                free(holders);
                free(order);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->cur.n; i++) {
                const MergeCtlEntry *e = &m->cur.e[i];
                if (e->state != MERGECTL_DONE || !e->n_ft || e->ft[e->n_ft - 1] >= nf)
                        continue;
                if (i < m->cur.m)
                        featcover_pin(holders, e->ft, e->n_ft);
                else
                        order[n++] = i;
        }
        sort_ctl = &m->cur;
        qsort(order, n, sizeof(*order), candidate_cmp);
        (void)featcover_select(order, n, merge_features, &m->cur, holders, keep);
        for (size_t f = 0; f < nf; f++) {
                m->res->features += holders[f] != 0;
                m->res->new_features += holders[f] != 0 && holders[f] != FEATCOVER_PINNED;
        }
        /* A feature is a counter's hit-count bucket (id = counter * 8 +
         * bucket): an edge is one of the target's counters (they come
         * before snapfuzz's feedback maps) with any feature held, a new one
         * a counter the output corpus reached with none. */
        for (size_t c = 0; c < m->target_counters && c < m->counters; c++) {
                bool held = false, pinned = false;
                for (size_t b = 0; b < 8; b++) {
                        held = held || holders[c * 8 + b] != 0;
                        pinned = pinned || holders[c * 8 + b] == FEATCOVER_PINNED;
                }
                m->res->edges += held;
                m->res->new_edges += held && !pinned;
        }
        free(order);
        free(holders);
        return 0;
}

/* ---- write ---- */

/* A kept input on its way into the output corpus: written to a
 * temporary file first, renamed once every one is durable. */
typedef struct Pending {
        char name[SHA1_HEX_LEN];
        char tmp[FS_TMP_NAME_MAX];
        size_t len;
} Pending;

/* Writes the kept inputs that are not there yet to temporary files in
 * @dfd (no fsync each: one syncfs for all). Returns how many in *@ret_n,
 * 0 or -errno. */
static int merge_write_tmps(Merge *m, const bool *keep, int dfd, Pending *p, size_t *ret_n)
{
        char shown[TERMSAFE_BUF];
        size_t n = 0;
        for (size_t i = 0; i < m->cur.n; i++) {
                size_t len;
                bool cut;
                if (!keep[i])
                        continue;
                if (merge_read(m, &m->cur.e[i], &len, &cut) < 0 || len != m->cur.e[i].size) {
                        log_warn("%s changed or vanished during the merge; not added",
                                 termsafe_str(shown, sizeof(shown), m->cur.e[i].name, 512));
                        continue;
                }
                sha1_hex(m->buf, len, p[n].name);
                if (faccessat(dfd, p[n].name, F_OK, 0) == 0)
                        continue; /* the same bytes are there already */
                int r =
                    fs_write_tmp(dfd, p[n].name, m->buf, len, false, p[n].tmp, sizeof(p[n].tmp));
                if (r < 0) {
                        *ret_n = n;
                        return r;
                }
                p[n++].len = len;
        }
        *ret_n = n;
        return 0;
}

/* Into the output corpus, atomically and durably: every file written to a
 * temporary name, one syncfs, then the renames and one fsync of the
 * directory (one fsync per file would cost more than the merge on a busy
 * disk). */
static int merge_write(Merge *m, const bool *keep)
{
        char shown[TERMSAFE_BUF];
        size_t n = 0;
        Pending *p = calloc(m->cur.n ? m->cur.n : 1, sizeof(*p));
        int dfd = open(m->cfg->out_corpus, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
        int r = !p ? -ENOMEM : dfd < 0 ? -errno : 0;
        if (r == 0)
                r = merge_write_tmps(m, keep, dfd, p, &n);
        if (r == 0 && syncfs(dfd) < 0)
                r = -errno;
        for (size_t k = 0; k < n; k++) {
                int c = r == 0 ? fs_commit_tmp(dfd, p[k].tmp, p[k].name) : -ECANCELED;
                if (c < 0)
                        unlinkat(dfd, p[k].tmp, 0);
                if (c < 0 && r == 0)
                        r = c;
                m->res->added += c == 0;
                m->res->added_bytes += c == 0 ? p[k].len : 0;
        }
        if (r == 0)
                r = fs_fsync_dir(dfd);
        if (r < 0 && r != -ENOMEM)
                log_error("cannot write into the output corpus %s: %s",
                          termsafe_str(shown, sizeof(shown), m->cfg->out_corpus, 512),
                          strerror(-r));
        if (dfd >= 0)
                close(dfd);
        free(p);
        return r;
}

/* ---- the whole ---- */

/* One phase after the other; the cleanup undoes what merge_setup made. */
int merge_run(const SfMergeConfig *cfg, SfMergeResult *ret)
{
        Merge m = {.cfg = cfg, .run = cfg->run, .res = ret, .cov_fd = -1};
        MergeCtl old = {0};
        bool *keep = NULL;

        *ret = (SfMergeResult){0};
        m.max_len = cfg->run->max_len ? cfg->run->max_len : MERGE_DEFAULT_MAX_LEN;
        ret->max_len = m.max_len;
        int r = merge_key(&m);
        if (r == 0)
                r = merge_list(&m);
        if (r == 0 && m.cur.n == 0)
                goto out; /* nothing to merge */
        if (r == 0)
                r = merge_load_control(&m, &old);
        bool reuse = r == 0;
        if (r >= 0)
                r = merge_setup(&m);
        if (r == 0 && reuse)
                r = merge_reuse(&m, &old);
        if (r == 0)
                r = merge_checkpoint(&m, true);
        if (r == 0)
                r = merge_run_all(&m);
        keep = r == 0 ? calloc(m.cur.n, sizeof(*keep)) : NULL;
        if (r == 0 && !keep)
                r = -ENOMEM;
        if (r == 0)
                r = merge_select(&m, keep);
        if (r == 0)
                r = merge_write(&m, keep);
out:
        if (m.ctl_temp)
                unlink(m.ctl_path);
        free(keep);
        wproc_free(m.w);
        free(m.buf);
        free(m.pack);
        coverage_shared_unmap(m.cov);
        if (m.cov_fd >= 0)
                close(m.cov_fd);
        mergectl_deinit(&old);
        mergectl_deinit(&m.cur);
        if (r == -ENOMEM)
                log_error("out of memory");
        return r;
}
