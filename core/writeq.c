/*
 * One mutex guards the list, the counters and the error; the thread takes
 * the whole list at once, writes it without the lock, then counts it as
 * done. "queued" and "written" only grow, so a flush waits for the value
 * of "queued" it saw, not for an empty queue that a busy producer might
 * never leave.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/fsutil.h"
#include "core/writeq.h"

#include "snapfuzz/banned.h"

#define WRITEQ_NAME_MAX 256

typedef struct WriteItem {
        struct WriteItem *next;
        size_t len;
        char name[WRITEQ_NAME_MAX];
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
};

static void writeq_write_all(WriteQueue *q, WriteItem *list, size_t *ret_n, size_t *ret_bytes)
{
        size_t n = 0, bytes = 0;
        int err = 0;

        while (list) {
                WriteItem *it = list;
                list = it->next;
                int r = err ? 0 : fs_write_atomic_file(q->dirfd, it->name, it->data, it->len);
                if (r < 0)
                        err = r;
                n++;
                bytes += it->len;
                free(it);
        }
        if (!err && n)
                err = fs_fsync_dir(q->dirfd);
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
        pthread_cond_init(&q->wake, NULL);
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
        while (q->written < target)
                pthread_cond_wait(&q->done, &q->lock);
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
