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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/writeq.h"

#include "snapfuzz/banned.h"

#define WRITEQ_NAME_MAX 256

typedef struct WriteItem {
        struct WriteItem *next;
        size_t len;
        char name[WRITEQ_NAME_MAX];
        char tmp[FS_TMP_NAME_MAX];
        uint8_t data[];
} WriteItem;

struct WriteQueue {
        int dirfd;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake; /* to the thread: work, or quit */
        pthread_cond_t done; /* from the thread: "written" grew */
        WriteItem *head, *tail;
        uint64_t queued, written;
        size_t bytes; /* queued and not yet written */
        int error;
        int quit;
        unsigned flushes; /* callers waiting in writeq_flush: no gathering */
};

/* One fsync per file costs the disk a flush each, and on a virtual
 * machine's disk a trap to the host each: a list this long is made durable
 * with one syncfs instead. */
#define WRITEQ_SYNCFS_MIN 4

/* Each file of @list durable under its name, the directory last. */
static int writeq_write_list(WriteQueue *q, WriteItem *list, size_t n)
{
        int err = 0;

        if (n < WRITEQ_SYNCFS_MIN) {
                for (WriteItem *it = list; it && !err; it = it->next)
                        err = fs_write_atomic_file(q->dirfd, it->name, it->data, it->len);
        } else {
                /* Temporaries first, synced together, then renamed in
                 * order: a later write of a name still wins. */
                WriteItem *it;
                for (it = list; it && !err; it = it->next)
                        err = fs_write_tmp(q->dirfd, it->name, it->data, it->len, false, it->tmp,
                                           sizeof(it->tmp));
                if (!err && syncfs(q->dirfd) < 0)
                        err = -errno;
                for (WriteItem *w = list; w != it; w = w->next) {
                        int r = err ? (unlinkat(q->dirfd, w->tmp, 0), 0)
                                    : fs_commit_tmp(q->dirfd, w->tmp, w->name);
                        if (r < 0)
                                err = r;
                }
        }
        return !err ? fs_fsync_dir(q->dirfd) : err;
}

static void writeq_write_all(WriteQueue *q, WriteItem *list, size_t *ret_n, size_t *ret_bytes)
{
        size_t n = 0, bytes = 0;

        for (WriteItem *it = list; it; it = it->next) {
                n++;
                bytes += it->len;
        }
        int err = n ? writeq_write_list(q, list, n) : 0;
        while (list) {
                WriteItem *it = list;
                list = it->next;
                free(it);
        }
        pthread_mutex_lock(&q->lock);
        if (err && !q->error)
                q->error = err;
        pthread_mutex_unlock(&q->lock);
        *ret_n = n;
        *ret_bytes = bytes;
}

static void *writeq_thread(void *arg)
{
        WriteQueue *q = arg;

        pthread_mutex_lock(&q->lock);
        for (;;) {
                while (!q->head && !q->quit)
                        pthread_cond_wait(&q->wake, &q->lock);
                if (!q->head)
                        break; /* quit, and nothing left */
                /* A find storm comes as a stream of single files: wait a
                 * little for the rest of it, and write it as one list. */
                struct timespec until;
                clock_gettime(CLOCK_MONOTONIC, &until);
                until.tv_nsec += WRITEQ_GATHER_MS * 1000000L;
                until.tv_sec += until.tv_nsec / 1000000000L;
                until.tv_nsec %= 1000000000L;
                while (!q->quit && q->flushes == 0 && q->bytes < WRITEQ_MAX_BYTES / 2 &&
                       pthread_cond_timedwait(&q->wake, &q->lock, &until) == 0) {
                }
                WriteItem *list = q->head;
                q->head = q->tail = NULL;
                pthread_mutex_unlock(&q->lock);
                size_t n, bytes;
                writeq_write_all(q, list, &n, &bytes);
                pthread_mutex_lock(&q->lock);
                q->written += n;
                q->bytes -= bytes;
                pthread_cond_broadcast(&q->done);
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
        pthread_cond_destroy(&q->done);
        pthread_cond_destroy(&q->wake);
        pthread_mutex_destroy(&q->lock);
        free(q);
}

int writeq_put(WriteQueue *q, const char *name, const void *data, size_t len)
{
        size_t name_len = strlen(name);
        int r;

        if (strchr(name, '/') || name_len == 0 || name_len >= WRITEQ_NAME_MAX)
                return -EINVAL;
        WriteItem *it = malloc(sizeof(*it) + len);
        if (!it)
                return -ENOMEM;
        it->next = NULL;
        it->len = len;
        memcpy(it->name, name, name_len + 1);
        if (len)
                memcpy(it->data, data, len);

        pthread_mutex_lock(&q->lock);
        /* Back-pressure: a queue that outgrows its budget waits for the
         * disk rather than for memory to run out. One item always fits. */
        while (!q->error && q->bytes && q->bytes + len > WRITEQ_MAX_BYTES)
                pthread_cond_wait(&q->done, &q->lock);
        r = q->error;
        if (!r) {
                if (q->tail)
                        q->tail->next = it;
                else
                        q->head = it;
                q->tail = it;
                q->queued++;
                q->bytes += len;
                pthread_cond_signal(&q->wake);
                it = NULL;
        }
        pthread_mutex_unlock(&q->lock);
        free(it);
        return r;
}

int writeq_flush(WriteQueue *q)
{
        pthread_mutex_lock(&q->lock);
        uint64_t target = q->queued;
        q->flushes++;
        pthread_cond_signal(&q->wake);
        while (q->written < target)
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
