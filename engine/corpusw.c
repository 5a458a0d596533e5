/*
 * The corpus writer (engine/corpusw.h). States, in order, each entered at
 * most once a run: writing to OUT/corpus; failing (entries held, retried
 * every second by the queue); rescuing (the queue writes into
 * ${TMPDIR:-/tmp}/snapfuzz-rescue-<pid>/corpus); given up (nothing could
 * be written there either). A failure that clears by itself returns to
 * writing. Counts are exact: every entry put is written, held, or lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/writeq.h"
#include "engine/corpusw.h"

#include "snapfuzz/banned.h"

struct CorpusWriter {
        char dir[4096];    /* OUT/corpus */
        char rescue[4096]; /* the rescue directory, once made */
        int dirfd, rescue_fd;
        WriteQueue *q;
        int64_t failing_since; /* 0: not failing */
        bool rescuing, gave_up;
        uint64_t lost;
};

int corpusw_new(CorpusWriter **ret, const char *corpus_dir)
{
        CorpusWriter *w = calloc(1, sizeof(*w));
        int r;
        if (!w)
                return -ENOMEM;
        w->rescue_fd = -1;
        snprintf(w->dir, sizeof(w->dir), "%s", corpus_dir);
        w->dirfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (w->dirfd < 0) {
                r = -errno;
                goto err_free;
        }
        r = writeq_new(&w->q, w->dirfd);
        if (r < 0)
                goto err_close;
        *ret = w;
        return 0;

err_close:
        close(w->dirfd);
err_free:
        log_error("cannot open %s for writing: %s", w->dir, strerror(-r));
        free(w);
        return r;
}

void corpusw_free(CorpusWriter *w)
{
        if (!w)
                return;
        writeq_free(w->q);
        close(w->dirfd);
        if (w->rescue_fd >= 0)
                close(w->rescue_fd);
        free(w);
}

int corpusw_put(CorpusWriter *w, const uint8_t *data, size_t len)
{
        char name[SHA1_HEX_LEN];
        sha1_hex(data, len, name);
        int r = writeq_put(w->q, name, data, len);
        if (r < 0) {
                if (w->lost++ == 0)
                        log_error("cannot keep new corpus inputs any more (%s): they are lost "
                                  "from now on; see the summary",
                                  strerror(-r));
        }
        return r;
}

void corpusw_remove(CorpusWriter *w, const uint8_t *data, size_t len)
{
        char name[SHA1_HEX_LEN];
        sha1_hex(data, len, name);
        (void)writeq_remove(w->q, name);
}

/* The rescue directory, made and handed to the queue. */
static int corpusw_rescue(CorpusWriter *w)
{
        char root[4000];
        fs_rescue_dir(root, sizeof(root), (long)getpid());
        snprintf(w->rescue, sizeof(w->rescue), "%s/corpus", root);
        int r = fs_mkdir_p(w->rescue, 0700);
        if (r == 0) {
                w->rescue_fd = open(w->rescue, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = w->rescue_fd < 0 ? -errno : 0;
        }
        w->rescuing = true;
        if (r < 0) {
                log_error("cannot make the rescue directory %s: %s", w->rescue, strerror(-r));
                return r;
        }
        log_warn("%s is still not writable: the new inputs go to %s instead (copy them into "
                 "the corpus, or give it as a corpus directory next time)",
                 w->dir, w->rescue);
        writeq_redirect(w->q, w->rescue_fd);
        w->failing_since = clock_now_ms();
        return 0;
}

bool corpusw_check(CorpusWriter *w)
{
        int r = writeq_error(w->q);
        int64_t now = clock_now_ms();
        if (r == 0) {
                if (w->failing_since)
                        log_info("%s is writable again: the inputs kept in memory are written",
                                 w->rescuing ? w->rescue : w->dir);
                w->failing_since = 0;
                return true;
        }
        if (!w->failing_since) {
                w->failing_since = now;
                log_warn("cannot write to %s: %s; %zu new inputs are kept in memory and retried "
                         "(fuzzing goes on)",
                         w->rescuing ? w->rescue : w->dir, strerror(-r), writeq_pending(w->q));
                return true;
        }
        if (now - w->failing_since < CORPUSW_RESCUE_AFTER_MS)
                return true;
        if (!w->rescuing && corpusw_rescue(w) == 0)
                return true;
        if (!w->gave_up) {
                w->gave_up = true;
                log_error("nothing can be written, neither to %s nor to the rescue directory: "
                          "stopping",
                          w->dir);
        }
        return false;
}

int corpusw_finish(CorpusWriter *w)
{
        int r = writeq_flush(w->q);
        if (r < 0 && !w->rescuing && corpusw_rescue(w) == 0)
                r = writeq_flush(w->q);
        size_t held = writeq_pending(w->q);
        if (r < 0 && held) {
                w->lost += held;
                log_error("%zu new corpus inputs could not be written anywhere and are lost "
                          "(last error: %s)",
                          held, strerror(-r));
        } else if (w->rescuing && w->rescue_fd >= 0) {
                log_warn("new corpus inputs were written to %s, not %s", w->rescue, w->dir);
        }
        return w->lost ? -EIO : 0;
}

void corpusw_add_stats(CorpusWriter *w, cJSON *stats)
{
        cJSON_AddNumberToObject(stats, "corpus_pending", (double)writeq_pending(w->q));
        cJSON_AddNumberToObject(stats, "corpus_lost", (double)w->lost);
        if (w->rescuing && w->rescue_fd >= 0)
                cJSON_AddStringToObject(stats, "corpus_rescue_dir", w->rescue);
}
