/*
 * A write queue: files written atomically (core/fsutil.h) by a background
 * thread, in the order they were queued, so that the coordinator's event
 * loop never waits for the disk. A start-up find storm of a thousand
 * corpus entries would otherwise stall the loop, and every worker with it,
 * for seconds.
 *
 * The thread waits WRITEQ_GATHER_MS after a put for the ones that follow
 * (a flush or a full budget cuts the wait short), then writes all it has:
 * a short list file by file (fsync each), a longer one as temporary files
 * made durable by one syncfs and then renamed, and the directory fsynced
 * once at the end. Fsyncs are what a storm costs: on a virtual machine
 * each is a trap to the host, and at a few hundred a second they took a
 * tenth of a core from the fuzzer they shared it with.
 *
 * The queue owns copies of what it is given. A failed write is remembered
 * (the first error) and returned by every later call, so the caller learns
 * of it at its next put or flush and stops as it would have on a
 * synchronous write.
 */
#pragma once

#include <stddef.h>

typedef struct WriteQueue WriteQueue;

/* Most bytes queued at once; a put beyond it waits for the thread. */
#define WRITEQ_MAX_BYTES (64u << 20)

/* How long a put may wait in the queue for others to join it. */
#define WRITEQ_GATHER_MS 200

/* Starts a queue writing into @dirfd (borrowed: it must stay open until
 * writeq_free). The thread blocks every signal. Returns 0 or -errno. */
int writeq_new(WriteQueue **ret, int dirfd);

/* Finishes every queued write, stops the thread and frees the queue.
 * NULL is a no-op. */
void writeq_free(WriteQueue *q);

/* Queues a copy of @data to be written as @name. Returns 0, -EINVAL for a
 * name with a '/' or too long, -ENOMEM, or the error of an earlier write
 * (the file is then not queued). */
int writeq_put(WriteQueue *q, const char *name, const void *data, size_t len);

/* Waits until everything queued before the call is written and its
 * directory synced. Returns 0 or the first write error. */
int writeq_flush(WriteQueue *q);

/* The first write error so far (0: none), without waiting. */
int writeq_error(WriteQueue *q);

/* Files queued and not yet written. */
size_t writeq_pending(WriteQueue *q);
