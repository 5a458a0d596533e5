/*
 * One mutex guards the list, the counters and the error; the thread takes
 * the whole list at once, writes it without the lock, then counts it as
 * done. "queued" and "written" only grow, so a flush waits for the value
 * of "queued" it saw, not for an empty queue that a busy producer might
 * never leave.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/forkgate.h"
#include "core/fsutil.h"
#include "core/writeq.h"

#include "snapfuzz/banned.h"

#define WRITEQ_NAME_MAX 256

typedef struct WriteItem {
        struct WriteItem *next;
        uint64_t seq; /* its place in the order of puts (from 1) */
        size_t len;
        bool remove; /* an unlink of @name, not a write */
        bool undone; /* a later item of its name undoes it (writeq_drop_undone) */
        char name[WRITEQ_NAME_MAX];
        char tmp[FS_TMP_NAME_MAX];
        uint8_t data[];
} WriteItem;

struct WriteQueue {
        int dirfd;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake;    /* to the thread: work, a flush, a new directory, or quit */
        pthread_cond_t done;    /* from the thread: a pass ended */
        WriteItem *head, *tail; /* queued, not tried yet */
        WriteItem *held;        /* tried and failed: kept, in order, and tried again */
        size_t n_held;
        uint64_t queued;    /* items put (the last seq given) */
        uint64_t attempted; /* every item with a seq up to this was tried at least once */
        uint64_t written;   /* items written (or removed) for good */
        uint64_t started;   /* passes of the thread begun, for writeq_flush */
        uint64_t passes;    /* passes of the thread ended */
        size_t bytes;       /* queued or held, not yet written */
        int error;          /* the last pass's error while items are held; 0 otherwise */
        int quit;
        unsigned flushes;    /* callers waiting in writeq_flush: no gathering */
        uint64_t flush_want; /* the pass a waiting writeq_flush needs to see end */
        bool retry_now;      /* a new directory (writeq_redirect): try the held items */
        int64_t retry_at_ms; /* when held items are tried again */
};

static int64_t writeq_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One fsync per file costs the disk a flush each, and on a virtual
 * machine's disk a trap to the host each: a list this long is made durable
 * with one syncfs instead. */
#define WRITEQ_SYNCFS_MIN 4

/* Writes a list of files as one storm: temporaries first, synced together,
 * then renamed in order (a later write of a name still wins). Returns 0,
 * or an error after which no temporary is left and the caller writes the
 * list file by file. */
static int writeq_write_storm(int dirfd, WriteItem *list)
{
        int err = 0;
        WriteItem *it;
        for (it = list; it && !err; it = it->next)
                err = fs_write_tmp(dirfd, it->name, it->data, it->len, false, it->tmp,
                                   sizeof(it->tmp));
        if (!err && syncfs(dirfd) < 0)
                err = -errno;
        WriteItem *w;
        for (w = list; w != it && !err; w = w->next)
                err = fs_commit_tmp(dirfd, w->tmp, w->name);
        /* After a failure, the temporaries not renamed go; the files
         * renamed before it are written twice by the caller, harmlessly. */
        for (; err && w && w != it; w = w->next)
                unlinkat(dirfd, w->tmp, 0);
        return err;
}

/* Moves the items of *@list for which @removal is @want, in order, to the
 * end of *@tail. */
static void writeq_split(WriteItem **list, bool want, WriteItem ***tail)
{
        WriteItem **at = list;
        while (*at) {
                WriteItem *it = *at;
                if (it->remove != want) {
                        at = &it->next;
                        continue;
                }
                *at = it->next;
                it->next = NULL;
                **tail = it;
                *tail = &it->next;
        }
}

/* Writes (or removes) the items of @list one by one: those that fail go to
 * *@tail in order. Returns the last error (0: none failed). */
static int writeq_each(int dirfd, WriteItem *list, WriteItem ***tail, size_t *done, size_t *bytes)
{
        int err = 0;
        for (WriteItem *it = list; it;) {
                WriteItem *next = it->next;
                int r = 0;
                if (it->remove) {
                        /* A file that is already gone is removed. */
                        if (unlinkat(dirfd, it->name, 0) < 0 && errno != ENOENT)
                                r = -errno;
                } else {
                        r = fs_write_atomic_file(dirfd, it->name, it->data, it->len);
                }
                if (r < 0) {
                        err = r;
                        it->next = NULL;
                        **tail = it;
                        *tail = &it->next;
                } else {
                        (*done)++;
                        *bytes += it->len;
                        free(it);
                }
                it = next;
        }
        return err;
}

/* Whether a later item of @list (whose removals are @rm, @n_rm of them)
 * undoes @it: a removal of the name it writes, or a write of the name it
 * removes. */
static bool writeq_undone(const WriteItem *it, WriteItem *const *rm, size_t n_rm)
{
        if (!it->remove) {
                for (size_t k = 0; k < n_rm; k++)
                        if (rm[k]->seq > it->seq && strcmp(rm[k]->name, it->name) == 0)
                                return true;
                return false;
        }
        for (const WriteItem *w = it->next; w; w = w->next)
                if (!w->remove && strcmp(w->name, it->name) == 0)
                        return true;
        return false;
}

/* Takes out of *@list the items a later item of the same name undoes
 * (counted as done): the writes go before the removals, so a file removed
 * and then written again in one list (the output corpus's cover took it
 * out and wanted it back) would otherwise end up removed. O(items x
 * removals); nothing when the list removes nothing. */
static void writeq_drop_undone(WriteItem **list, size_t *done, size_t *bytes)
{
        size_t n_rm = 0;
        for (const WriteItem *it = *list; it; it = it->next)
                n_rm += it->remove;
        if (n_rm == 0)
                return;
        WriteItem **rm = malloc(n_rm * sizeof(WriteItem *));
        if (!rm)
                return; /* out of memory: writes then removals, as before */
        n_rm = 0;
        for (WriteItem *it = *list; it; it = it->next)
                if (it->remove)
                        rm[n_rm++] = it;
        for (WriteItem *it = *list; it; it = it->next)
                it->undone = writeq_undone(it, rm, n_rm);
        free(rm);
        WriteItem **at = list;
        while (*at) {
                WriteItem *it = *at;
                if (!it->undone) {
                        at = &it->next;
                        continue;
                }
                *at = it->next;
                (*done)++;
                *bytes += it->len;
                free(it);
        }
}

/* Tries every item of @list: the writes first (a long list as one storm),
 * then the removals. A removal names a file queued for writing before it
 * (writeq_drop_undone leaves no later write of its name), so doing the
 * removals after the writes keeps their order. The items that fail go to
 * *@ret_failed, in order. Returns the last error (0: none failed); counts
 * what was done. */
static int writeq_try(int dirfd, WriteItem *list, WriteItem **ret_failed, size_t *ret_done,
                      size_t *ret_bytes)
{
        WriteItem *writes = NULL, **wtail = &writes, *removals = NULL, **rtail = &removals;
        WriteItem *failed = NULL, **ftail = &failed;
        size_t n = 0, done = 0, bytes = 0;
        int err = 0;

        writeq_drop_undone(&list, &done, &bytes);
        writeq_split(&list, false, &wtail);
        writeq_split(&list, true, &rtail);
        for (WriteItem *it = writes; it; it = it->next)
                n++;
        if (n >= WRITEQ_SYNCFS_MIN && writeq_write_storm(dirfd, writes) == 0 &&
            fs_fsync_dir(dirfd) == 0) {
                for (WriteItem *it = writes; it;) {
                        WriteItem *next = it->next;
                        bytes += it->len;
                        done++;
                        free(it);
                        it = next;
                }
                writes = NULL;
        }
        err = writeq_each(dirfd, writes, &ftail, &done, &bytes);
        if (writes && done && fs_fsync_dir(dirfd) < 0 && !err)
                err = -errno;
        int r = writeq_each(dirfd, removals, &ftail, &done, &bytes);
        if (r < 0)
                err = r;
        *ret_failed = failed;
        *ret_done = done;
        *ret_bytes = bytes;
        return err;
}

/* How long held items wait before they are tried again. */
#define WRITEQ_RETRY_MS 1000

/* Whether the thread has something to do now. */
static bool writeq_due(const WriteQueue *q)
{
        return q->head || q->quit ||
               (q->n_held &&
                (q->flush_want > q->passes || q->retry_now || writeq_now_ms() >= q->retry_at_ms));
}

static void writeq_wait(WriteQueue *q)
{
        while (!writeq_due(q)) {
                struct timespec until;
                clock_gettime(CLOCK_MONOTONIC, &until);
                int64_t ms = q->n_held ? q->retry_at_ms - writeq_now_ms() : 3600 * 1000;
                ms = ms < 1 ? 1 : ms;
                until.tv_sec += ms / 1000;
                until.tv_nsec += (ms % 1000) * 1000000L;
                until.tv_sec += until.tv_nsec / 1000000000L;
                until.tv_nsec %= 1000000000L;
                pthread_cond_timedwait(&q->wake, &q->lock, &until);
        }
}

/* A find storm comes as a stream of single files: waits a little for the
 * rest of it, to write it as one list. */
static void writeq_gather(WriteQueue *q)
{
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += WRITEQ_GATHER_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        while (!q->quit && q->flushes == 0 && q->bytes < WRITEQ_MAX_BYTES / 2 &&
               pthread_cond_timedwait(&q->wake, &q->lock, &until) == 0) {
        }
}

/* One pass: the held items first (they were queued first), then the new
 * ones. Called and returns with the lock held. */
static void writeq_pass(WriteQueue *q)
{
        WriteItem *list = q->held, *fresh = q->head;
        uint64_t upto = q->tail ? q->tail->seq : q->attempted;
        /* n_held stays as it is until the pass ends: a flush that looks
         * meanwhile must still see them as held. */
        q->held = NULL;
        q->head = q->tail = NULL;
        q->retry_now = false;
        q->started++;
        /* Held, then fresh: one list in the order of the puts. */
        WriteItem **end = &list;
        while (*end)
                end = &(*end)->next;
        *end = fresh;
        int dirfd = q->dirfd;
        pthread_mutex_unlock(&q->lock);

        WriteItem *failed;
        size_t done, bytes;
        forkgate_enter();
        int err = writeq_try(dirfd, list, &failed, &done, &bytes);
        forkgate_leave();

        pthread_mutex_lock(&q->lock);
        q->held = failed;
        q->n_held = 0;
        for (WriteItem *it = failed; it; it = it->next)
                q->n_held++;
        q->error = q->n_held ? err : 0;
        q->written += done;
        q->bytes -= bytes;
        if (upto > q->attempted)
                q->attempted = upto;
        q->passes++;
        q->retry_at_ms = writeq_now_ms() + WRITEQ_RETRY_MS;
        pthread_cond_broadcast(&q->done);
}

static void *writeq_thread(void *arg)
{
        WriteQueue *q = arg;

        pthread_mutex_lock(&q->lock);
        for (;;) {
                writeq_wait(q);
                if (q->quit && !q->head) {
                        if (q->n_held)
                                writeq_pass(q); /* a last try */
                        break;
                }
                if (q->head)
                        writeq_gather(q);
                writeq_pass(q);
        }
        pthread_mutex_unlock(&q->lock);
        return NULL;
}

int writeq_new(WriteQueue **ret, int dirfd)
{
        WriteQueue *q = calloc(1, sizeof(*q));
        sigset_t all, old;
        int r;

        if (!q)
                return -ENOMEM;
        q->dirfd = dirfd;
        pthread_mutex_init(&q->lock, NULL);
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&q->wake, &attr);
        pthread_condattr_destroy(&attr);
        pthread_cond_init(&q->done, NULL);
        /* Signals are the main thread's (a signalfd reads them there). */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        forkgate_init();
        r = pthread_create(&q->thread, NULL, writeq_thread, q);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0) {
                pthread_cond_destroy(&q->done);
                pthread_cond_destroy(&q->wake);
                pthread_mutex_destroy(&q->lock);
                free(q);
                return -r;
        }
        *ret = q;
        return 0;
}

void writeq_free(WriteQueue *q)
{
        if (!q)
                return;
        pthread_mutex_lock(&q->lock);
        q->quit = 1;
        pthread_cond_signal(&q->wake);
        pthread_mutex_unlock(&q->lock);
        pthread_join(q->thread, NULL);
        while (q->held) {
                WriteItem *it = q->held;
                q->held = it->next;
                free(it);
        }
        pthread_cond_destroy(&q->done);
        pthread_cond_destroy(&q->wake);
        pthread_mutex_destroy(&q->lock);
        free(q);
}

/* Queues @it, or refuses it when the disk has failed and memory holds
 * WRITEQ_MAX_HELD bytes already. */
static int writeq_queue(WriteQueue *q, WriteItem *it)
{
        pthread_mutex_lock(&q->lock);
        /* Back-pressure: a queue that outgrows its budget waits for the
         * disk rather than for memory to run out. One item always fits.
         * While the disk fails, items are held in memory instead, up to a
         * larger budget. */
        while (!q->error && q->bytes && q->bytes + it->len > WRITEQ_MAX_BYTES)
                pthread_cond_wait(&q->done, &q->lock);
        int r = 0;
        if (q->error && q->bytes + it->len > WRITEQ_MAX_HELD) {
                r = q->error;
        } else {
                it->seq = ++q->queued;
                if (q->tail)
                        q->tail->next = it;
                else
                        q->head = it;
                q->tail = it;
                q->bytes += it->len;
                pthread_cond_signal(&q->wake);
                it = NULL;
        }
        pthread_mutex_unlock(&q->lock);
        free(it);
        return r;
}

static WriteItem *writeq_item(const char *name, const void *data, size_t len)
{
        size_t name_len = strlen(name);
        if (strchr(name, '/') || name_len == 0 || name_len >= WRITEQ_NAME_MAX)
                return NULL;
        WriteItem *it = malloc(sizeof(*it) + len);
        if (!it)
                return NULL;
        *it = (WriteItem){0};
        it->len = len;
        memcpy(it->name, name, name_len + 1);
        if (len)
                memcpy(it->data, data, len);
        return it;
}

static bool writeq_name_ok(const char *name)
{
        size_t n = strlen(name);
        return n && n < WRITEQ_NAME_MAX && !strchr(name, '/');
}

int writeq_put(WriteQueue *q, const char *name, const void *data, size_t len)
{
        if (!writeq_name_ok(name))
                return -EINVAL;
        WriteItem *it = writeq_item(name, data, len);
        return it ? writeq_queue(q, it) : -ENOMEM;
}

int writeq_remove(WriteQueue *q, const char *name)
{
        if (!writeq_name_ok(name))
                return -EINVAL;
        WriteItem *it = writeq_item(name, NULL, 0);
        if (!it)
                return -ENOMEM;
        it->remove = true;
        return writeq_queue(q, it);
}

void writeq_redirect(WriteQueue *q, int dirfd)
{
        pthread_mutex_lock(&q->lock);
        q->dirfd = dirfd;
        q->retry_now = true;
        pthread_cond_signal(&q->wake);
        pthread_mutex_unlock(&q->lock);
}

int writeq_flush(WriteQueue *q)
{
        pthread_mutex_lock(&q->lock);
        uint64_t target = q->queued;
        /* A pass that begins after this call: one in progress may be
         * writing to a directory writeq_redirect has just replaced. */
        uint64_t pass = q->started + 1;
        if (q->flush_want < pass)
                q->flush_want = pass;
        q->flushes++;
        pthread_cond_signal(&q->wake);
        /* Everything queued so far tried, and the held items tried once
         * more since the call. */
        while (q->attempted < target || (q->n_held && q->passes < pass))
                pthread_cond_wait(&q->done, &q->lock);
        q->flushes--;
        int r = q->error;
        pthread_mutex_unlock(&q->lock);
        return r;
}

int writeq_error(WriteQueue *q)
{
        pthread_mutex_lock(&q->lock);
        int r = q->error;
        pthread_mutex_unlock(&q->lock);
        return r;
}

size_t writeq_pending(WriteQueue *q)
{
        pthread_mutex_lock(&q->lock);
        size_t n = (size_t)(q->queued - q->written);
        pthread_mutex_unlock(&q->lock);
        return n;
}
