/*
 * AFL++-style sync directories (engine/sync.h). Invariants:
 *   - DIR/NAME/queue holds ids 0, 1, 2, ... without gaps, each file
 *     complete under its name: it is written in DIR/NAME/.sf-tmp (which no
 *     peer reads), fsynced, then renamed in. afl-fuzz looks for the name
 *     "id:%06u" of the next id it expects, so a gap would stall it.
 *   - .synced/PEER never runs ahead of what ran: it is the smaller of the
 *     next id to read and the oldest id handed to the schedule and not yet
 *     known to have run. A run killed at any moment re-reads at most the
 *     inputs that had not run; nothing that ran is read again.
 *   - A peer is untrusted: its directory, queue and files are opened
 *     without following symbolic links, only regular files are read, never
 *     more than max_len bytes, never a file that is still changing; its
 *     name reaches the terminal escaped. What goes wrong with one file is
 *     said once per peer, not once per file.
 *   - The sync directory failing (gone, full, read-only) is said once when
 *     it starts and once when it ends; meanwhile finds to export are held
 *     in memory (up to SYNC_MAX_HELD bytes: they are in OUT/corpus anyway,
 *     and the next run exports what the queue lacks) and fuzzing goes on.
 *   - Inputs are known by their SHA-1: one seen before (imported, or in
 *     the own queue) is not run again, one in the own queue is not
 *     exported again. Own queue names carry it (",sha1:<hex>"), so a
 *     restart rebuilds the set from a directory listing.
 * All filesystem work is done by one thread; the coordinator only moves
 * lists under the mutex.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/forkgate.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/termsafe.h"
#include "engine/sync.h"

#include "snapfuzz/banned.h"

/* Finds to export held in memory while the sync directory fails. */
#define SYNC_MAX_HELD (64u << 20)
/* Inputs read from peers and not yet taken by the coordinator: a scan
 * stops there and goes on at the next one (a peer with a million files
 * does not fill the memory). */
#define SYNC_INBOX_MAX 4096
#define SYNC_INBOX_BYTES (64u << 20)
/* How often exports that failed are tried again. */
#define SYNC_RETRY_MS 2000
/* How long sync_finish waits for the thread's last writes. */
#define SYNC_STOP_MS 5000
#define SYNC_MAX_PEERS 4096
/* Longer instance names are skipped: .synced/NAME's temporary name must
 * fit NAME_MAX. */
#define SYNC_PEER_NAME_MAX 200
#define SYNC_NONE UINT32_MAX
#define SYNC_TMP_DIR ".sf-tmp"
/* An instance's name, escaped (at most 256 bytes of it are shown). */
#define SYNC_ESC_BUF 1200

/* What is said once per peer. */
enum {
        SYNC_WARN_LINK = 1u << 0,     /* the peer's directory or queue is a symlink */
        SYNC_WARN_LARGE = 1u << 1,    /* a file longer than max_len */
        SYNC_WARN_ODD = 1u << 2,      /* a queue entry that is not a regular file */
        SYNC_WARN_PROGRESS = 1u << 3, /* .synced/PEER is damaged */
        SYNC_WARN_RESET = 1u << 4,    /* the peer's queue restarted */
};

/* Failures of the sync directory as a whole, each said once. */
enum { SYNC_PROB_READ, SYNC_PROB_WRITE, SYNC_PROB_COUNT };

typedef struct SyncItem {
        struct SyncItem *next;
        uint8_t *data;
        size_t len;
        char *peer;    /* the peer it came from; NULL: this run's own */
        size_t peer_i; /* an import: its peer's index, and its id there */
        uint32_t id;
} SyncItem;

typedef struct SyncList {
        SyncItem *head, **tail;
        size_t n, bytes;
} SyncList;

typedef struct Peer {
        char *name;
        uint32_t read_next; /* the thread's: the next id to read */
        uint32_t committed; /* what .synced/PEER holds */
        uint32_t unrun_lo;  /* under the mutex: the oldest id not known to have run */
        bool loaded;
        unsigned warned; /* SYNC_WARN_* */
        /* A file that was still changing, and how it looked then. */
        bool waiting;
        uint32_t wait_id;
        off_t wait_size;
        struct timespec wait_mtime;
        int64_t wait_seen_ms;
        /* The queue directory as it was when all of it was read: while it
         * is unchanged, it is not listed again (queue_unchanged). */
        bool listed;
        dev_t q_dev;
        ino_t q_ino;
        struct timespec q_mtime;
} Peer;

typedef struct HashSet {
        uint64_t *slot; /* 0: empty */
        size_t cap, n;
} HashSet;

struct Sync {
        char *dir, *name;
        size_t max_len;
        unsigned every_s;

        pthread_t thread;
        bool started;
        pthread_mutex_t mu;
        pthread_cond_t cond;
        /* Under the mutex. */
        SyncList out, in;
        bool out_new, commit_new, stop, thread_done;
        bool in_ready; /* atomic: the inbox has something */
        Peer *peers;
        size_t n_peers;

        /* The thread's. */
        size_t cap_peers;
        HashSet seen, exported;
        uint32_t next_id;
        bool own_loaded, name_taken, lock_warned;
        dev_t queue_dev; /* the own queue directory own_load listed */
        ino_t queue_ino;
        int lock_fd;
        int problem[SYNC_PROB_COUNT];
        bool too_many_peers, held_full, long_name_said;
        int64_t next_scan_ms, retry_ms;

        /* The coordinator's. */
        size_t first_import;
        bool have_first;
        uint64_t taken_unconfirmed;

        /* Figures (atomic). */
        uint64_t n_scans, n_read, n_kept, n_dups, n_skipped, n_exported, n_dropped, n_resumed;
        uint64_t n_ran, scan_us; /* scan_us: time spent in scans */
        uint64_t n_unchanged;    /* peer queues not listed: unchanged */
};

/* --- small pieces --- */

static bool name_char(char ch);

bool sync_name_valid(const char *name)
{
        size_t n = strlen(name);
        if (n == 0 || n > SYNC_NAME_MAX || name[0] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!name_char(name[i]))
                        return false;
        return true;
}

static void stat_add(uint64_t *v, uint64_t n)
{
        __atomic_fetch_add(v, n, __ATOMIC_RELAXED);
}

static uint64_t stat_get(const uint64_t *v)
{
        return __atomic_load_n(v, __ATOMIC_RELAXED);
}

static uint64_t content_key(const uint8_t *data, size_t len)
{
        uint8_t d[SHA1_DIGEST_LEN];
        uint64_t k = 0;
        sha1(data, len, d);
        for (int i = 0; i < 8; i++)
                k = k << 8 | d[i];
        return k | 1;
}

static bool hset_has(const HashSet *h, uint64_t k)
{
        if (!h->cap)
                return false;
        for (size_t i = k % h->cap;; i = (i + 1) % h->cap) {
                if (h->slot[i] == k)
                        return true;
                if (h->slot[i] == 0)
                        return false;
        }
}

static int hset_add(HashSet *h, uint64_t k)
{
        if (hset_has(h, k))
                return 0;
        if ((h->n + 1) * 2 > h->cap) {
                size_t cap = h->cap ? h->cap * 2 : 1024;
                uint64_t *slot = calloc(cap, sizeof(*slot));
                if (!slot)
                        return -ENOMEM;
                for (size_t i = 0; i < h->cap; i++) {
                        if (!h->slot[i])
                                continue;
                        size_t j = h->slot[i] % cap;
                        while (slot[j])
                                j = (j + 1) % cap;
                        slot[j] = h->slot[i];
                }
                free(h->slot);
                h->slot = slot;
                h->cap = cap;
        }
        size_t i = k % h->cap;
        while (h->slot[i])
                i = (i + 1) % h->cap;
        h->slot[i] = k;
        h->n++;
        return 0;
}

static void item_free(SyncItem *it)
{
        if (!it)
                return;
        free(it->data);
        free(it->peer);
        free(it);
}

static void list_init(SyncList *l)
{
        *l = (SyncList){.tail = &l->head};
}

static void list_push(SyncList *l, SyncItem *it)
{
        it->next = NULL;
        *l->tail = it;
        l->tail = &it->next;
        l->n++;
        l->bytes += it->len;
}

/* Moves all of @from to the end of @to. */
static void list_splice(SyncList *to, SyncList *from)
{
        if (!from->head)
                return;
        *to->tail = from->head;
        to->tail = from->tail;
        to->n += from->n;
        to->bytes += from->bytes;
        list_init(from);
}

static void list_clear(SyncList *l)
{
        SyncItem *it = l->head;
        while (it) {
                SyncItem *next = it->next;
                item_free(it);
                it = next;
        }
        list_init(l);
}

/* @name as one printable line. */
static const char *esc(char *buf, size_t cap, const char *name)
{
        return termsafe_str(buf, cap, name, 256);
}

/* Whether @what is to be said about @p: the first time only. */
static bool peer_first(Peer *p, unsigned what)
{
        if (p->warned & what)
                return false;
        p->warned |= what;
        return true;
}

static void problem_set(Sync *s, int cls, int err, const char *what)
{
        if (s->problem[cls] == 0)
                log_warn("%s %s: %s; fuzzing goes on, and it is tried again every few seconds",
                         what, s->dir, strerror(err));
        s->problem[cls] = err;
}

static void problem_clear(Sync *s, int cls)
{
        if (s->problem[cls] == 0)
                return;
        s->problem[cls] = 0;
        log_info("the sync directory %s can be %s again", s->dir,
                 cls == SYNC_PROB_READ ? "read" : "written");
}

/* --- the own directory --- */

/* Opens DIR/NAME/@sub, creating it if missing (DIR itself is never made
 * again once the run started: a network filesystem that went away would
 * get a local directory in its place). Returns a descriptor or -errno. */
static int open_own(Sync *s, const char *sub)
{
        int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int r = -1;
        if (mkdirat(dfd, s->name, 0755) < 0 && errno != EEXIST)
                goto out;
        int ofd = openat(dfd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ofd < 0)
                goto out;
        if (!sub) {
                close(dfd);
                return ofd;
        }
        if (mkdirat(ofd, sub, 0755) < 0 && errno != EEXIST) {
                close(ofd);
                goto out;
        }
        r = openat(ofd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(ofd);
out:
        if (r < 0)
                r = -errno;
        close(dfd);
        return r;
}

/* The id of a queue file's name ("id:NNNNNN" then ',' or the end), or -1. */
static int64_t queue_id(const char *name)
{
        if (strncmp(name, "id:", 3) != 0)
                return -1;
        uint64_t v = 0;
        size_t i = 3;
        for (; name[i] >= '0' && name[i] <= '9' && i < 13; i++)
                v = v * 10 + (uint64_t)(name[i] - '0');
        if (i == 3 || (name[i] != ',' && name[i] != 0) || v >= SYNC_NONE)
                return -1;
        return (int64_t)v;
}

/* An own queue file's content key: from its ",sha1:" field, else read. */
static int own_key(Sync *s, int qfd, const char *name, uint64_t *ret)
{
        const char *h = strstr(name, ",sha1:");
        if (h && strlen(h + 6) >= 16) {
                uint64_t k = 0;
                for (int i = 0; i < 16; i++) {
                        char ch = h[6 + i];
                        int v = ch >= '0' && ch <= '9'   ? ch - '0'
                                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                                                         : -1;
                        if (v < 0)
                                goto read;
                        k = k << 4 | (uint64_t)v;
                }
                *ret = k | 1;
                return 0;
        }
read:;
        uint8_t *data;
        size_t len;
        int r = fs_read_file(qfd, name, RECORD_MAX_LEN_LIMIT, &data, &len);
        if (r < 0)
                return r;
        *ret = content_key(data, len);
        free(data);
        return 0;
}

/* What the last run with this name left: the next id of the own queue and
 * the keys of what it holds; and no temporary file. Returns 0 or -errno. */
static int own_load(Sync *s)
{
        int tfd = open_own(s, SYNC_TMP_DIR);
        if (tfd < 0)
                return tfd;
        fs_sweep_tmp(tfd); /* a killed run's half-written exports */
        close(tfd);
        int qfd = open_own(s, "queue");
        if (qfd < 0)
                return qfd;
        struct stat st;
        DIR *d = fstat(qfd, &st) < 0 ? NULL : fdopendir(qfd);
        if (!d) {
                int r = -errno;
                close(qfd);
                return r;
        }
        s->queue_dev = st.st_dev;
        s->queue_ino = st.st_ino;
        struct dirent *e;
        uint32_t next = 0;
        while ((e = readdir(d))) {
                int64_t id = queue_id(e->d_name);
                uint64_t k;
                if (id < 0)
                        continue;
                if ((uint32_t)id + 1 > next)
                        next = (uint32_t)id + 1;
                if (own_key(s, dirfd(d), e->d_name, &k) == 0 &&
                    (hset_add(&s->exported, k) < 0 || hset_add(&s->seen, k) < 0)) {
                        closedir(d);
                        return -ENOMEM;
                }
        }
        closedir(d);
        s->next_id = next;
        return 0;
}

/* The own directory's lock: one instance per name. A filesystem without
 * locks (some network ones) is run without it. */
static void own_lock(Sync *s)
{
        int ofd = open_own(s, NULL);
        pid_t holder = 0;
        if (ofd < 0)
                return;
        int r = fs_lock_dir(ofd, ".lock", &s->lock_fd, &holder);
        close(ofd);
        if (r == -EBUSY) {
                s->name_taken = true;
                log_error("another instance named %s (pid %ld) uses the sync directory %s; "
                          "give each instance its own --name",
                          s->name, (long)holder, s->dir);
        } else if ((r == -ENOLCK || r == -EOPNOTSUPP || r == -EINVAL) && !s->lock_warned) {
                /* A filesystem without locks. Other failures (read-only,
                 * full) are said by the write that fails next; the lock is
                 * tried again then. */
                s->lock_warned = true;
                log_warn("cannot lock %s/%s/.lock (%s): make sure no other instance is named %s",
                         s->dir, s->name, strerror(-r), s->name);
        }
}

/* The own queue directory is not the one listed at start (the sync
 * directory was removed and made again, say): its ids start again from
 * what it holds, so that a peer finds them without a gap. */
static void own_replaced(Sync *s)
{
        log_warn("%s/%s/queue was removed or replaced while running; its numbering starts again "
                 "from what it holds",
                 s->dir, s->name);
        s->own_loaded = false;
        free(s->exported.slot);
        s->exported = (HashSet){0};
        if (s->lock_fd >= 0)
                close(s->lock_fd);
        s->lock_fd = -1;
}

/* Ready to write: the own queue loaded once. Returns 0 or -errno. */
static int own_ready(Sync *s)
{
        if (s->own_loaded)
                return 0;
        if (s->lock_fd < 0 && !s->name_taken)
                own_lock(s);
        int r = own_load(s);
        if (r == 0)
                s->own_loaded = true;
        return r;
}

/* --- exports --- */

static bool name_char(char ch)
{
        return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
               ch == '_' || ch == '-' || ch == '.';
}

/* The queue name of an export: AFL++'s fields, and the content's SHA-1. */
static void export_name(const Sync *s, const SyncItem *it, const char *hex, char *buf, size_t cap)
{
        char peer[40];
        size_t n = 0;
        for (const char *p = it->peer; p && *p && n + 1 < sizeof(peer); p++)
                peer[n++] = name_char(*p) ? *p : '_';
        peer[n] = 0;
        if (it->peer)
                snprintf(buf, cap, "id:%06" PRIu32 ",sync:%s,op:snapfuzz,sha1:%s", s->next_id, peer,
                         hex);
        else
                snprintf(buf, cap, "id:%06" PRIu32 ",op:snapfuzz,sha1:%s", s->next_id, hex);
}

/* Writes one export (temporary file in .sf-tmp, fsync, rename into the
 * queue). Returns 0 or -errno; the id is used only on success. */
static int export_one(Sync *s, int tfd, int qfd, SyncItem *it)
{
        char hex[SHA1_HEX_LEN], name[256], tmp[64];
        sha1_hex(it->data, it->len, hex);
        uint64_t k = content_key(it->data, it->len);
        if (hset_has(&s->exported, k))
                return 0;
        export_name(s, it, hex, name, sizeof(name));
        snprintf(tmp, sizeof(tmp), FS_TMP_PREFIX "%" PRIu32 ".%ld", s->next_id, (long)getpid());
        int fd = openat(tfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        int r = fs_write_all(fd, it->data, it->len);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(tfd, tmp, qfd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(tfd, tmp, 0);
                return r;
        }
        s->next_id++;
        stat_add(&s->n_exported, 1);
        if (hset_add(&s->exported, k) < 0 || hset_add(&s->seen, k) < 0)
                return 0; /* out of memory: at worst, exported or run twice */
        return 0;
}

/* Writes @todo in order; what fails stays in @todo (to be held). Returns 0
 * or the first error. */
static int export_list(Sync *s, SyncList *todo)
{
        struct stat st;
        int qfd = open_own(s, "queue");
        if (qfd < 0)
                return qfd;
        if (s->own_loaded && fstat(qfd, &st) == 0 &&
            (st.st_dev != s->queue_dev || st.st_ino != s->queue_ino))
                own_replaced(s);
        int r = own_ready(s);
        if (r == 0 && s->name_taken) {
                stat_add(&s->n_dropped, todo->n);
                list_clear(todo);
        }
        int tfd = r < 0 || s->name_taken ? -1 : open_own(s, SYNC_TMP_DIR);
        if (tfd < 0) {
                close(qfd);
                return r < 0 ? r : s->name_taken ? 0 : tfd;
        }
        bool wrote = false;
        while (todo->head) {
                SyncItem *it = todo->head;
                r = export_one(s, tfd, qfd, it);
                if (r < 0)
                        break;
                wrote = true;
                todo->head = it->next;
                todo->n--;
                todo->bytes -= it->len;
                item_free(it);
        }
        if (!todo->head)
                todo->tail = &todo->head;
        if (wrote)
                (void)fs_fsync_dir(qfd);
        close(qfd);
        close(tfd);
        return r < 0 ? r : 0;
}

/* --- progress --- */

/* Reads .synced/PEER: four bytes; anything else is said once and read as
 * nothing (the peer's queue is read from the start; what was seen before
 * is still not run twice). */
static void progress_load(Sync *s, Peer *p)
{
        char nb[SYNC_ESC_BUF];
        p->loaded = true;
        int sfd = open_own(s, ".synced");
        if (sfd < 0)
                return;
        int fd = openat(sfd, p->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        close(sfd);
        if (fd < 0)
                return;
        struct stat st;
        uint32_t v = 0;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4 &&
            pread(fd, &v, 4, 0) == 4) {
                p->read_next = p->committed = v;
                stat_add(&s->n_resumed, v);
        } else if (!(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)) {
                char what[64];
                snprintf(what, sizeof(what), "%s",
                         S_ISREG(st.st_mode) ? "not 4 bytes" : "not a file");
                if (peer_first(p, SYNC_WARN_PROGRESS))
                        log_warn("the progress file .synced/%s is damaged (%s); reading that "
                                 "instance's queue from the start",
                                 esc(nb, sizeof(nb), p->name), what);
        }
        close(fd);
}

/* Writes every peer's progress that moved. */
static void progress_commit(Sync *s)
{
        int sfd = -1;
        for (size_t i = 0;; i++) {
                pthread_mutex_lock(&s->mu);
                if (i >= s->n_peers) {
                        pthread_mutex_unlock(&s->mu);
                        break;
                }
                Peer *p = &s->peers[i];
                uint32_t want = p->read_next < p->unrun_lo ? p->read_next : p->unrun_lo;
                bool moved = p->loaded && want != p->committed;
                const char *name = p->name;
                pthread_mutex_unlock(&s->mu);
                if (!moved)
                        continue;
                if (sfd < 0)
                        sfd = open_own(s, ".synced");
                int r = sfd < 0 ? sfd : fs_write_atomic(sfd, name, &want, sizeof(want));
                if (r < 0) {
                        problem_set(s, SYNC_PROB_WRITE, -r, "cannot write into the sync directory");
                        break;
                }
                pthread_mutex_lock(&s->mu);
                s->peers[i].committed = want;
                pthread_mutex_unlock(&s->mu);
        }
        if (sfd >= 0)
                close(sfd);
}

/* --- imports --- */

/* The peer named @name (added if new), or NULL (too many peers, memory). */
static Peer *peer_get(Sync *s, const char *name)
{
        for (size_t i = 0; i < s->n_peers; i++)
                if (strcmp(s->peers[i].name, name) == 0)
                        return &s->peers[i];
        if (s->n_peers >= SYNC_MAX_PEERS) {
                if (!s->too_many_peers)
                        log_warn("the sync directory %s has more than %d instances; the others "
                                 "are not read",
                                 s->dir, SYNC_MAX_PEERS);
                s->too_many_peers = true;
                return NULL;
        }
        char *copy = strdup(name);
        if (!copy)
                return NULL;
        pthread_mutex_lock(&s->mu);
        if (s->n_peers == s->cap_peers) {
                size_t cap = s->cap_peers ? s->cap_peers * 2 : 16;
                Peer *np = realloc(s->peers, cap * sizeof(Peer));
                if (!np) {
                        pthread_mutex_unlock(&s->mu);
                        free(copy);
                        return NULL;
                }
                s->peers = np;
                s->cap_peers = cap;
        }
        Peer *p = &s->peers[s->n_peers++];
        *p = (Peer){.name = copy, .unrun_lo = SYNC_NONE};
        pthread_mutex_unlock(&s->mu);
        return p;
}

/* Outcomes of reading one queue file. */
enum { READ_NEXT, READ_WAIT };

/* Whether a file is still being written: changed less than SYNC_SETTLE_MS
 * ago by the clock, unless it looked the same SYNC_SETTLE_MS ago already
 * (a peer whose clock runs ahead of ours). */
static bool still_changing(Peer *p, uint32_t id, const struct stat *st)
{
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t age_ms = (int64_t)(now.tv_sec - st->st_mtim.tv_sec) * 1000 +
                         (now.tv_nsec - st->st_mtim.tv_nsec) / 1000000;
        if (age_ms >= SYNC_SETTLE_MS)
                return false;
        int64_t t = clock_now_ms();
        if (p->waiting && p->wait_id == id && p->wait_size == st->st_size &&
            p->wait_mtime.tv_sec == st->st_mtim.tv_sec &&
            p->wait_mtime.tv_nsec == st->st_mtim.tv_nsec)
                return t - p->wait_seen_ms < SYNC_SETTLE_MS;
        p->waiting = true;
        p->wait_id = id;
        p->wait_size = st->st_size;
        p->wait_mtime = st->st_mtim;
        p->wait_seen_ms = t;
        return true;
}

/* Reads exactly @st's size from @fd; -EAGAIN when the file is not that
 * size any more. Returns 0 and a buffer in *@ret, or -errno. */
static int read_exact(int fd, const struct stat *st, uint8_t **ret)
{
        size_t len = (size_t)st->st_size, got = 0;
        uint8_t *buf = malloc(len + 1);
        if (!buf)
                return -ENOMEM;
        while (got <= len) {
                ssize_t n = read(fd, buf + got, len + 1 - got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                got += (size_t)n;
        }
        if (got != len) {
                free(buf);
                return -EAGAIN;
        }
        *ret = buf;
        return 0;
}

/* Hands an input read from @p to the coordinator. */
static void inbox_put(Sync *s, Peer *p, uint32_t id, uint8_t *data, size_t len)
{
        SyncItem *it = calloc(1, sizeof(*it));
        char *peer = strdup(p->name);
        if (!it || !peer) {
                free(it);
                free(peer);
                free(data);
                return;
        }
        *it = (SyncItem){
            .data = data, .len = len, .peer = peer, .peer_i = (size_t)(p - s->peers), .id = id};
        pthread_mutex_lock(&s->mu);
        list_push(&s->in, it);
        __atomic_store_n(&s->in_ready, true, __ATOMIC_RELEASE);
        if (id < p->unrun_lo)
                p->unrun_lo = id;
        pthread_mutex_unlock(&s->mu);
        stat_add(&s->n_read, 1);
}

/* One file of a peer's queue. READ_WAIT: it may still be written (or
 * cannot be read now); it and the ones after it are read at a later scan. */
static int read_one(Sync *s, int qfd, Peer *p, uint32_t id, const char *name)
{
        char nb[SYNC_ESC_BUF];
        struct stat st, st2;
        if (fstatat(qfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? READ_NEXT : READ_WAIT;
        if (!S_ISREG(st.st_mode)) {
                if (peer_first(p, SYNC_WARN_ODD))
                        log_warn("instance %s has queue entries that are not regular files (%s); "
                                 "they are skipped",
                                 esc(nb, sizeof(nb), p->name),
                                 S_ISLNK(st.st_mode) ? "a symbolic link" : "a special file");
                stat_add(&s->n_skipped, 1);
                return READ_NEXT;
        }
        if (st.st_size == 0 || (uint64_t)st.st_size > s->max_len) {
                char what[64];
                snprintf(what, sizeof(what), "%" PRIu64 " bytes", (uint64_t)st.st_size);
                if (st.st_size && peer_first(p, SYNC_WARN_LARGE))
                        log_warn("instance %s has queue files longer than --max-len %zu (%s); "
                                 "they are skipped",
                                 esc(nb, sizeof(nb), p->name), s->max_len, what);
                stat_add(&s->n_skipped, 1);
                return READ_NEXT;
        }
        if (still_changing(p, id, &st))
                return READ_WAIT;
        int fd = openat(qfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ELOOP)) {
                /* Never readable: skipped, not waited for. */
                if (peer_first(p, SYNC_WARN_ODD))
                        log_warn("instance %s has queue files snapfuzz may not read (%s); they "
                                 "are skipped",
                                 esc(nb, sizeof(nb), p->name), strerror(errno));
                stat_add(&s->n_skipped, 1);
                return READ_NEXT;
        }
        if (fd < 0)
                return errno == ENOENT ? READ_NEXT : READ_WAIT;
        uint8_t *data = NULL;
        int r = fstat(fd, &st2) < 0 ? -errno : 0;
        if (r == 0 && (st2.st_ino != st.st_ino || st2.st_dev != st.st_dev ||
                       st2.st_size != st.st_size || !S_ISREG(st2.st_mode)))
                r = -EAGAIN;
        if (r == 0)
                r = read_exact(fd, &st, &data);
        close(fd);
        if (r < 0)
                return READ_WAIT;
        p->waiting = false;
        uint64_t k = content_key(data, (size_t)st.st_size);
        if (hset_has(&s->seen, k)) {
                stat_add(&s->n_dups, 1);
                free(data);
                return READ_NEXT;
        }
        (void)hset_add(&s->seen, k);
        inbox_put(s, p, id, data, (size_t)st.st_size);
        return READ_NEXT;
}

typedef struct QueueEnt {
        uint32_t id;
        char name[256];
} QueueEnt;

static int ent_cmp(const void *a, const void *b)
{
        uint32_t x = ((const QueueEnt *)a)->id, y = ((const QueueEnt *)b)->id;
        return x < y ? -1 : x > y;
}

/* The entries of a peer's queue from id @from on, sorted by id, in
 * *@ret; their number, or -errno. *@ret_max: the largest id (-1: none). */
static ssize_t queue_list(int qfd, uint32_t from, QueueEnt **ret, int64_t *ret_max)
{
        int fd = dup(qfd);
        DIR *d = fd < 0 ? NULL : fdopendir(fd);
        QueueEnt *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        *ret_max = -1;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return -errno;
        }
        while ((e = readdir(d))) {
                int64_t id = queue_id(e->d_name);
                if (id > *ret_max)
                        *ret_max = id;
                if (id < 0 || (uint32_t)id < from)
                        continue;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 64;
                        QueueEnt *nv = realloc(v, nc * sizeof(*nv));
                        if (!nv)
                                break;
                        v = nv;
                        cap = nc;
                }
                v[n].id = (uint32_t)id;
                snprintf(v[n].name, sizeof(v[n].name), "%s", e->d_name);
                n++;
        }
        closedir(d);
        if (!v)
                n = 0; /* nothing listed: qsort may not be given NULL */
        else
                qsort(v, n, sizeof(*v), ent_cmp);
        *ret = v;
        return (ssize_t)n;
}

static bool inbox_full(Sync *s)
{
        pthread_mutex_lock(&s->mu);
        bool full = s->in.n >= SYNC_INBOX_MAX || s->in.bytes >= SYNC_INBOX_BYTES;
        pthread_mutex_unlock(&s->mu);
        return full;
}

/*
 * Whether @p's queue directory is as it was when all of it was read: the
 * same directory, the same modification time (adding or renaming a file
 * changes it), and that time older than SYNC_SETTLE_MS, so that a file
 * added within the same tick of a coarse clock (some network filesystems
 * keep seconds) is not missed. Saves listing the queues that did not
 * change: with hundreds of peers, most of them (docs/scaling.md).
 */
static bool queue_unchanged(Peer *p, int qfd, struct stat *st)
{
        if (fstat(qfd, st) < 0)
                return false;
        if (!p->listed || st->st_dev != p->q_dev || st->st_ino != p->q_ino ||
            st->st_mtim.tv_sec != p->q_mtime.tv_sec || st->st_mtim.tv_nsec != p->q_mtime.tv_nsec)
                return false;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        int64_t age_ms = (int64_t)(now.tv_sec - st->st_mtim.tv_sec) * 1000 +
                         (now.tv_nsec - st->st_mtim.tv_nsec) / 1000000;
        return age_ms >= SYNC_SETTLE_MS;
}

/* Reads @p's new queue files. Returns whether the scan should come back
 * soon (a file still changing, a full inbox). */
static bool scan_peer(Sync *s, int dfd, Peer *p)
{
        char nb[SYNC_ESC_BUF];
        int pfd = openat(dfd, p->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (pfd < 0)
                return false;
        int qfd = openat(pfd, "queue", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (qfd < 0 && fstatat(pfd, "queue", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode) && peer_first(p, SYNC_WARN_LINK))
                log_warn("instance %s's queue is a symbolic link; not followed",
                         esc(nb, sizeof(nb), p->name));
        close(pfd);
        if (qfd < 0)
                return false;
        if (!p->loaded)
                progress_load(s, p);
        struct stat qst;
        if (queue_unchanged(p, qfd, &qst)) {
                stat_add(&s->n_unchanged, 1);
                close(qfd);
                return false;
        }
        p->listed = false;
        QueueEnt *v = NULL;
        int64_t max;
        ssize_t n = queue_list(qfd, p->read_next, &v, &max);
        bool soon = false;
        if (n == 0 && max >= 0 && (uint64_t)max + 1 < p->read_next) {
                /* Ids below what was read: a new queue (or a bad .synced). */
                if (peer_first(p, SYNC_WARN_RESET))
                        log_warn("instance %s's queue has fewer files than were read from it "
                                 "before (a new queue, or a damaged .synced file); reading it "
                                 "from the start",
                                 esc(nb, sizeof(nb), p->name));
                p->read_next = 0;
                soon = true;
        }
        for (ssize_t i = 0; v && i < n; i++) { /* v is NULL only when n is 0 */
                if (inbox_full(s) || read_one(s, qfd, p, v[i].id, v[i].name) == READ_WAIT) {
                        soon = true;
                        break;
                }
                p->read_next = v[i].id + 1;
        }
        if (!soon && n >= 0) {
                p->listed = true;
                p->q_dev = qst.st_dev;
                p->q_ino = qst.st_ino;
                p->q_mtime = qst.st_mtim;
        }
        free(v);
        close(qfd);
        return soon;
}

/* One look at every peer. Returns whether to come back soon. */
static bool scan(Sync *s)
{
        char nb[SYNC_ESC_BUF];
        int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
        if (!d) {
                int err = errno;
                if (dfd >= 0)
                        close(dfd);
                problem_set(s, SYNC_PROB_READ, err, "cannot read the sync directory");
                return false;
        }
        problem_clear(s, SYNC_PROB_READ);
        bool soon = false;
        struct dirent *e;
        while ((e = readdir(d))) {
                struct stat st;
                if (e->d_name[0] == '.' || strcmp(e->d_name, s->name) == 0)
                        continue;
                if (strlen(e->d_name) > SYNC_PEER_NAME_MAX) {
                        if (!s->long_name_said)
                                log_warn("the sync directory %s has entries with names longer "
                                         "than %d bytes; they are not read",
                                         s->dir, SYNC_PEER_NAME_MAX);
                        s->long_name_said = true;
                        continue;
                }
                if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode))
                        continue;
                Peer *p = peer_get(s, e->d_name);
                if (!p)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        if (peer_first(p, SYNC_WARN_LINK))
                                log_warn("instance %s is a symbolic link; not followed",
                                         esc(nb, sizeof(nb), p->name));
                        continue;
                }
                soon |= scan_peer(s, dfd, p);
        }
        closedir(d);
        stat_add(&s->n_scans, 1);
        return soon;
}

/* --- the thread --- */

/* Exports what was queued; what fails is held (put back in front). */
static void do_exports(Sync *s)
{
        SyncList todo;
        pthread_mutex_lock(&s->mu);
        todo = s->out;
        if (!todo.head)
                todo.tail = &todo.head;
        list_init(&s->out);
        s->out_new = false;
        pthread_mutex_unlock(&s->mu);
        if (!todo.head)
                return;
        int r = export_list(s, &todo);
        if (r < 0)
                problem_set(s, SYNC_PROB_WRITE, -r, "cannot write into the sync directory");
        else
                problem_clear(s, SYNC_PROB_WRITE);
        pthread_mutex_lock(&s->mu);
        list_splice(&todo, &s->out);
        s->out = todo;
        if (!s->out.head)
                s->out.tail = &s->out.head;
        pthread_mutex_unlock(&s->mu);
        s->retry_ms = r < 0 ? clock_now_ms() + SYNC_RETRY_MS : 0;
}

static void wait_until(Sync *s, int64_t deadline_ms)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t now = clock_now_ms();
        int64_t ms = deadline_ms > now ? deadline_ms - now : 0;
        ts.tv_sec += ms / 1000;
        ts.tv_nsec += (ms % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->cond, &s->mu, &ts);
}

/* The thread's loop: exports as they come (or every SYNC_RETRY_MS while
 * they fail), a scan and the progress every every_s seconds (sooner when a
 * file was still changing). */
static void *sync_main(void *arg)
{
        Sync *s = arg;
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);

        pthread_mutex_lock(&s->mu);
        while (!s->stop) {
                int64_t now = clock_now_ms();
                bool exports =
                    (s->out_new || s->out.head) && (s->retry_ms == 0 || now >= s->retry_ms);
                bool commit = s->commit_new;
                if (!exports && !commit && now < s->next_scan_ms) {
                        int64_t until = s->next_scan_ms;
                        if (s->retry_ms && s->out.head && s->retry_ms < until)
                                until = s->retry_ms;
                        wait_until(s, until);
                        continue;
                }
                s->commit_new = false;
                pthread_mutex_unlock(&s->mu);
                forkgate_enter();
                if (exports)
                        do_exports(s);
                bool due = now >= s->next_scan_ms;
                int64_t t0 = clock_now_ns();
                bool soon = due && scan(s);
                if (due)
                        stat_add(&s->scan_us, (uint64_t)(clock_now_ns() - t0) / 1000);
                if (due || commit)
                        progress_commit(s);
                if (due)
                        s->next_scan_ms =
                            clock_now_ms() + (soon ? SYNC_SETTLE_MS : (int64_t)s->every_s * 1000);
                forkgate_leave();
                pthread_mutex_lock(&s->mu);
        }
        pthread_mutex_unlock(&s->mu);
        s->retry_ms = 0;
        forkgate_enter();
        do_exports(s);
        progress_commit(s);
        forkgate_leave();
        pthread_mutex_lock(&s->mu);
        s->thread_done = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->mu);
        return NULL;
}

/* --- the coordinator's side --- */

int sync_new(Sync **ret, const SyncConfig *cfg)
{
        if (!sync_name_valid(cfg->name)) {
                char buf[SYNC_ESC_BUF];
                log_error("--name '%s' is not a valid instance name: 1 to %d letters, digits, "
                          "'_', '-' or '.', not starting with '.'",
                          esc(buf, sizeof(buf), cfg->name), SYNC_NAME_MAX);
                return -EINVAL;
        }
        Sync *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->dir = strdup(cfg->dir);
        s->name = strdup(cfg->name);
        if (!s->dir || !s->name) {
                sync_free(s);
                return -ENOMEM;
        }
        s->max_len = cfg->max_len;
        s->every_s = cfg->every_s ? cfg->every_s : SYNC_EVERY_S_DEFAULT;
        s->lock_fd = -1;
        list_init(&s->out);
        list_init(&s->in);
        pthread_mutex_init(&s->mu, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->cond, &ca);
        pthread_condattr_destroy(&ca);
        /* The directory is made once, at start, as afl-fuzz makes -o. */
        int r = fs_mkdir_p(s->dir, 0755);
        if (r < 0)
                problem_set(s, SYNC_PROB_WRITE, -r, "cannot create the sync directory");
        else
                own_lock(s);
        if (s->name_taken) {
                sync_free(s);
                return -EBUSY;
        }
        forkgate_init();
        r = pthread_create(&s->thread, NULL, sync_main, s);
        if (r != 0) {
                sync_free(s);
                return -r;
        }
        s->started = true;
        *ret = s;
        return 0;
}

/* Stops the thread; whether it ended within SYNC_STOP_MS. */
static bool stop_thread(Sync *s)
{
        if (!s->started)
                return true;
        int64_t deadline = clock_now_ms() + SYNC_STOP_MS;
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_broadcast(&s->cond);
        while (!s->thread_done && clock_now_ms() < deadline)
                wait_until(s, deadline);
        bool done = s->thread_done;
        pthread_mutex_unlock(&s->mu);
        if (done)
                pthread_join(s->thread, NULL);
        s->started = !done;
        return done;
}

void sync_free(Sync *s)
{
        if (!s)
                return;
        if (!stop_thread(s)) {
                /* Stuck in the filesystem: it keeps its memory. */
                log_warn("the sync directory %s did not answer within %d s; what was not "
                         "written yet is not exported",
                         s->dir, SYNC_STOP_MS / 1000);
                return;
        }
        list_clear(&s->out);
        list_clear(&s->in);
        for (size_t i = 0; i < s->n_peers; i++)
                free(s->peers[i].name);
        free(s->peers);
        free(s->seen.slot);
        free(s->exported.slot);
        if (s->lock_fd >= 0)
                close(s->lock_fd);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->mu);
        free(s->dir);
        free(s->name);
        free(s);
}

/* Every input handed out ran: the oldest unrun id of each peer is now that
 * of the inputs still in the inbox. */
static void confirm_ran(Sync *s)
{
        pthread_mutex_lock(&s->mu);
        for (size_t i = 0; i < s->n_peers; i++)
                s->peers[i].unrun_lo = SYNC_NONE;
        for (SyncItem *it = s->in.head; it; it = it->next)
                if (it->id < s->peers[it->peer_i].unrun_lo)
                        s->peers[it->peer_i].unrun_lo = it->id;
        s->commit_new = true; /* the thread writes the progress that moved */
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->mu);
        stat_add(&s->n_ran, s->taken_unconfirmed);
        s->taken_unconfirmed = 0;
}

/* Moves the inbox into the schedule's seeds. */
static void take_inbox(Sync *s, Schedule *sched)
{
        SyncList l;
        pthread_mutex_lock(&s->mu);
        l = s->in;
        if (!l.head)
                l.tail = &l.head;
        list_init(&s->in);
        __atomic_store_n(&s->in_ready, false, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&s->mu);
        if (!l.n)
                return;
        CorpusSeed *seeds = calloc(l.n, sizeof(*seeds));
        size_t n = 0;
        for (SyncItem *it = l.head; it && seeds; it = it->next, n++) {
                seeds[n] = (CorpusSeed){.path = it->peer, .data = it->data, .len = it->len};
                it->peer = NULL;
                it->data = NULL;
        }
        if (seeds && schedule_add_seeds(sched, seeds, n) == 0)
                s->taken_unconfirmed += n;
        else if (seeds)
                corpus_seeds_free(seeds, n);
        list_clear(&l);
}

void sync_phase(Sync *s, Schedule *sched, bool seed_batches_busy)
{
        if (!s->have_first) {
                s->first_import = schedule_n_seeds(sched);
                s->have_first = true;
        }
        if (__atomic_load_n(&s->in_ready, __ATOMIC_ACQUIRE))
                take_inbox(s, sched);
        if (s->taken_unconfirmed && !seed_batches_busy && !schedule_seeds_left(sched))
                confirm_ran(s);
}

const char *sync_seed_origin(const Sync *s, const Schedule *sched, size_t seed_index)
{
        if (!s || !s->have_first || seed_index < s->first_import)
                return NULL;
        const CorpusSeed *sd = schedule_seed(sched, seed_index);
        return sd ? sd->path : NULL;
}

void sync_export(Sync *s, const uint8_t *data, size_t len, const char *peer)
{
        SyncItem *it = calloc(1, sizeof(*it));
        if (it) {
                it->len = len;
                it->data = malloc(len ? len : 1);
                it->peer = peer ? strdup(peer) : NULL;
        }
        if (!it || !it->data || (peer && !it->peer)) {
                item_free(it);
                stat_add(&s->n_dropped, 1);
                return;
        }
        memcpy(it->data, data, len);
        pthread_mutex_lock(&s->mu);
        if (s->out.bytes + len > SYNC_MAX_HELD) {
                bool said = s->held_full;
                s->held_full = true;
                pthread_mutex_unlock(&s->mu);
                item_free(it);
                stat_add(&s->n_dropped, 1);
                if (!said)
                        log_warn("%u MiB of finds wait for the sync directory %s; more are not "
                                 "exported (they are in the output corpus: the next run exports "
                                 "them)",
                                 SYNC_MAX_HELD >> 20, s->dir);
                return;
        }
        list_push(&s->out, it);
        s->out_new = true;
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->mu);
}

void sync_note_kept(Sync *s)
{
        stat_add(&s->n_kept, 1);
}

void sync_finish(Sync *s, Schedule *sched)
{
        if (!s)
                return;
        if (s->taken_unconfirmed && !schedule_seeds_left(sched))
                confirm_ran(s);
        bool stopped = stop_thread(s);
        pthread_mutex_lock(&s->mu);
        size_t held = s->out.n;
        pthread_mutex_unlock(&s->mu);
        log_info("sync: %" PRIu64 " inputs taken from other instances (%" PRIu64
                 " added coverage), %" PRIu64 " not run again (already here), %" PRIu64
                 " exported to %s/%s/queue%s",
                 stat_get(&s->n_read), stat_get(&s->n_kept), stat_get(&s->n_dups),
                 stat_get(&s->n_exported), s->dir, s->name,
                 stopped && held ? " (some could not be written)" : "");
}

void sync_add_stats(Sync *s, cJSON *j)
{
        size_t peers, held;
        pthread_mutex_lock(&s->mu);
        peers = s->n_peers;
        held = s->out.n;
        pthread_mutex_unlock(&s->mu);
        cJSON_AddNumberToObject(j, "sync_peers", (double)peers);
        cJSON_AddNumberToObject(j, "sync_scans", (double)stat_get(&s->n_scans));
        /* Wall time the scans took, in all (docs/scaling.md). */
        cJSON_AddNumberToObject(j, "sync_scan_ms", (double)stat_get(&s->scan_us) / 1000.0);
        cJSON_AddNumberToObject(j, "sync_listings_skipped", (double)stat_get(&s->n_unchanged));
        /* Files of peers' queues read and handed to the workers, those of
         * them that added coverage, and those not run because the same
         * bytes were here already. */
        cJSON_AddNumberToObject(j, "sync_imported", (double)stat_get(&s->n_read));
        cJSON_AddNumberToObject(j, "sync_imported_kept", (double)stat_get(&s->n_kept));
        cJSON_AddNumberToObject(j, "sync_duplicates_skipped", (double)stat_get(&s->n_dups));
        /* Files of peers' queues skipped at start: .synced said they were
         * read by an earlier run. */
        cJSON_AddNumberToObject(j, "sync_resumed_skipped", (double)stat_get(&s->n_resumed));
        cJSON_AddNumberToObject(j, "sync_skipped", (double)stat_get(&s->n_skipped));
        cJSON_AddNumberToObject(j, "sync_exported", (double)stat_get(&s->n_exported));
        cJSON_AddNumberToObject(j, "sync_export_pending", (double)held);
        cJSON_AddNumberToObject(j, "sync_export_dropped", (double)stat_get(&s->n_dropped));
}
