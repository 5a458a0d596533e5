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
 * The queue owns copies of what it is given, and drops none of them: a
 * file that cannot be written (a full disk, a directory made read-only) is
 * held in memory and tried again every WRITEQ_RETRY_MS, or at once in
 * another directory (writeq_redirect). While files are held, the last
 * error is what writeq_error and writeq_flush return, and puts go on being
 * accepted up to WRITEQ_MAX_HELD bytes in memory.
 */
#pragma once

#include <stddef.h>

typedef struct WriteQueue WriteQueue;

/* Most bytes queued at once; a put beyond it waits for the thread. */
#define WRITEQ_MAX_BYTES (64u << 20)

/* Most bytes held in memory while writes fail; a put beyond it is refused
 * with the write error (the caller counts the file as lost). */
#define WRITEQ_MAX_HELD (256u << 20)

/* How long a put may wait in the queue for others to join it. */
#define WRITEQ_GATHER_MS 200

/* Starts a queue writing into @dirfd (borrowed: it must stay open until
 * writeq_free). The thread blocks every signal. Returns 0 or -errno. */
int writeq_new(WriteQueue **ret, int dirfd);

/* Tries every queued and held file once more, stops the thread and frees
 * the queue; what still fails is dropped: call writeq_flush and
 * writeq_pending first to know. NULL is a no-op. */
void writeq_free(WriteQueue *q);

/* Queues a copy of @data to be written as @name. Returns 0, -EINVAL for a
 * name with a '/' or too long, -ENOMEM, or the write error while
 * WRITEQ_MAX_HELD bytes are held (the file is then not queued). */
int writeq_put(WriteQueue *q, const char *name, const void *data, size_t len);

/* Queues the removal of @name, done after every write queued before it (a
 * file replaced by another). A file already gone counts as removed.
 * Returns as writeq_put. */
int writeq_remove(WriteQueue *q, const char *name);

/* Writes from now on go to @dirfd (borrowed, as in writeq_new), the held
 * files first, at once. */
void writeq_redirect(WriteQueue *q, int dirfd);

/* Waits until everything queued before the call was tried, and the held
 * files tried once more. Returns 0 when nothing is held, or the last
 * write error. */
int writeq_flush(WriteQueue *q);

/* The last write error while files are held (0: none), without waiting. */
int writeq_error(WriteQueue *q);

/* Files (and removals) queued or held and not yet done. */
size_t writeq_pending(WriteQueue *q);
