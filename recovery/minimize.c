/*
 * Invariants: `cur` always holds an input that crashed the wanted way (the
 * starting input once it has been checked, then every accepted candidate),
 * so the minimization can be stopped after any trial with a valid result.
 * It ends on its own because every pass is bounded and a new round starts
 * only when the previous one made the input shorter. A candidate is built
 * in a second buffer of the same capacity and the two are swapped when it
 * is accepted. The budget is checked before each trial, never during one.
 *
 * Cost: a trial is one fork from the worker's snapshot plus a few pipe
 * messages (a millisecond or so, more when the candidate crashes and its
 * stack is collected). Chunk removal with halving sizes needs about four
 * trials per halving when the crash depends on one small region, so a
 * 4 KiB input whose crash needs 6 bytes takes well under a hundred trials.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/crashstore.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "recovery/minimize.h"
#include "recovery/symbolize.h"
#include "worker/proto.h"

#include "snapfuzz/banned.h"

/* Internal: the budget is spent (not an error; the result stands). */
#define MIN_STOPPED (-ETIME)
/* Sliding windows of 2 up to this many bytes, on inputs up to this long. */
#define MIN_WINDOW_MAX 16
#define MIN_WINDOW_INPUT_MAX 64

typedef struct Min {
        MinimizeOracle oracle;
        void *ctx;
        const MinimizeBudget *b;
        int64_t started;
        MinimizeStats *stats;
        uint8_t *cur; /* the smallest input so far that crashes the wanted way */
        size_t len;
        uint8_t *cand; /* scratch for candidates, same capacity as cur */
} Min;

bool minimize_same_crash(const Classification *want, const Classification *got)
{
        if (!got->is_crash || strcmp(want->kind, got->kind) != 0)
                return false;
        if (strcmp(want->kind, "timeout") == 0 || strcmp(want->kind, "oom") == 0 ||
            !want->signature[0])
                return true;
        return strcmp(want->signature, got->signature) == 0;
}

const char *minimize_stop_str(MinimizeStop s)
{
        switch (s) {
        case MINIMIZE_STOP_MAX_TRIALS:
                return "max-trials";
        case MINIMIZE_STOP_MAX_TIME:
                return "max-time";
        case MINIMIZE_STOP_INTERRUPTED:
                return "interrupted";
        default:
                return "done";
        }
}

/* Runs one candidate. 1: it crashed the wanted way; 0: it did not;
 * MIN_STOPPED: the budget is spent and nothing ran; another negative errno
 * from the oracle. */
static int min_try(Min *m, const uint8_t *data, size_t len)
{
        if (m->b->stop && *m->b->stop) {
                m->stats->stopped = MINIMIZE_STOP_INTERRUPTED;
                return MIN_STOPPED;
        }
        if (m->b->max_trials && m->stats->trials >= m->b->max_trials) {
                m->stats->stopped = MINIMIZE_STOP_MAX_TRIALS;
                return MIN_STOPPED;
        }
        if (m->b->max_ms && clock_now_ms() - m->started >= m->b->max_ms) {
                m->stats->stopped = MINIMIZE_STOP_MAX_TIME;
                return MIN_STOPPED;
        }
        m->stats->trials++;
        int v = m->oracle(m->ctx, data, len);
        switch (v) {
        case MINIMIZE_SAME:
                m->stats->same++;
                return 1;
        case MINIMIZE_OTHER_CRASH:
                m->stats->other_crash++;
                return 0;
        case MINIMIZE_NO_CRASH:
                m->stats->no_crash++;
                return 0;
        default:
                return v < 0 ? v : -EINVAL;
        }
}

/* Makes the candidate of @len bytes the current input. */
static void min_accept(Min *m, size_t len)
{
        uint8_t *t = m->cur;
        m->cur = m->cand;
        m->cand = t;
        m->len = len;
}

static size_t pow2_floor(size_t n)
{
        size_t p = 1;
        while (p <= n / 2)
                p *= 2;
        return p;
}

/* One pass over the input removing @chunk bytes at a time (the last chunk
 * may be shorter), at positions @step apart: @chunk apart for ddmin's
 * aligned chunks, 1 for a sliding window. After a removal the same
 * position is tried again, since it now holds the bytes that followed.
 * Returns 1 when anything went, 0 when nothing did, or a negative error. */
static int min_remove_pass(Min *m, size_t chunk, size_t step)
{
        int removed = 0;
        size_t pos = 0;
        while (pos < m->len) {
                size_t n = chunk < m->len - pos ? chunk : m->len - pos;
                if (n < chunk && step < chunk)
                        break; /* a short window at the end repeats a shorter pass */
                memcpy(m->cand, m->cur, pos);
                memcpy(m->cand + pos, m->cur + pos + n, m->len - pos - n);
                int r = min_try(m, m->cand, m->len - n);
                if (r < 0)
                        return r;
                if (r == 1) {
                        min_accept(m, m->len - n);
                        removed = 1;
                } else {
                        pos += step;
                }
        }
        return removed;
}

/* Single bytes until a whole pass removes nothing (a removal can make
 * another byte unnecessary). */
static int min_remove_bytes(Min *m)
{
        int r;
        do
                r = min_remove_pass(m, 1, 1);
        while (r == 1 && m->len > 0);
        return r < 0 ? r : 0;
}

/* Phase 1: chunks of halving size down to single bytes; then, on short
 * inputs, windows of 2 to 16 bytes at every offset, which aligned
 * power-of-two chunks miss (a 12-byte record at offset 4, say), each
 * success followed by single bytes again. On a 64-byte input that is at
 * most 840 trials, and far fewer once the input is short. */
static int min_remove(Min *m)
{
        int r;
        if (m->len == 0)
                return 0;
        for (size_t chunk = pow2_floor(m->len > 1 ? m->len / 2 : 1); chunk > 1; chunk /= 2) {
                r = min_remove_pass(m, chunk, chunk);
                if (r < 0)
                        return r;
        }
        r = min_remove_bytes(m);
        for (size_t w = 2; r == 0 && w <= MIN_WINDOW_MAX && m->len > w; w++) {
                if (m->len > MIN_WINDOW_INPUT_MAX)
                        break;
                r = min_remove_pass(m, w, 1);
                if (r == 1)
                        r = min_remove_bytes(m);
        }
        return r < 0 ? r : 0;
}

/* Text inputs (nearly all printable) simplify toward these, simpler first;
 * a byte is only ever replaced by a simpler one. */
static const uint8_t simple_values[] = {0x00, '0', 'A', ' '};

static bool is_printable(uint8_t b)
{
        return (b >= 0x20 && b < 0x7f) || b == '\t' || b == '\n' || b == '\r';
}

static int simplicity(uint8_t b)
{
        for (size_t i = 0; i < sizeof(simple_values); i++)
                if (b == simple_values[i])
                        return (int)i;
        return (int)sizeof(simple_values) + !is_printable(b);
}

/* At least 90% printable: a text format, where '0', 'A' and ' ' read
 * better than small numbers. */
static bool min_is_text(const Min *m)
{
        size_t printable = 0;
        for (size_t i = 0; i < m->len; i++)
                printable += is_printable(m->cur[i]);
        return m->len > 0 && printable * 10 >= m->len * 9;
}

/* Runs the current input with byte @i set to @v; keeps it when it still
 * crashes. 1 kept, 0 not, or a negative error. */
static int min_try_byte(Min *m, size_t i, uint8_t v)
{
        memcpy(m->cand, m->cur, m->len);
        m->cand[i] = v;
        int r = min_try(m, m->cand, m->len);
        if (r == 1)
                min_accept(m, m->len);
        return r;
}

/* Zeroes whole blocks, halving down to two bytes, so that runs of
 * don't-care bytes (padding, fixed-size fields) cost a few trials, not a
 * few per byte. Sets *changed when anything was kept. */
static int min_zero_blocks(Min *m, bool *changed)
{
        if (m->len < 4)
                return 0;
        for (size_t chunk = pow2_floor(m->len / 2); chunk >= 2; chunk /= 2) {
                for (size_t pos = 0; pos < m->len; pos += chunk) {
                        size_t n = chunk < m->len - pos ? chunk : m->len - pos;
                        size_t nz = 0;
                        for (size_t i = pos; i < pos + n; i++)
                                nz += m->cur[i] != 0;
                        if (nz == 0)
                                continue;
                        memcpy(m->cand, m->cur, m->len);
                        memset(m->cand + pos, 0, n);
                        int r = min_try(m, m->cand, m->len);
                        if (r < 0)
                                return r;
                        if (r == 1) {
                                min_accept(m, m->len);
                                *changed = true;
                        }
                }
        }
        return 0;
}

/* A binary byte: 0, else the smallest value that keeps the crash, found by
 * bisection between 0 (known not to) and the current value (known to), as
 * if the crash were monotone in it. Length and count fields shrink this
 * way, which lets the next removal pass take the bytes they covered. */
static int min_shrink_binary(Min *m, size_t i, bool *changed)
{
        unsigned lo = 0, hi = m->cur[i];
        if (hi == 0)
                return 0;
        int r = min_try_byte(m, i, 0);
        if (r != 0) {
                *changed |= r == 1;
                return r < 0 ? r : 0;
        }
        while (hi - lo > 1) {
                unsigned mid = lo + (hi - lo) / 2;
                r = min_try_byte(m, i, (uint8_t)mid);
                if (r < 0)
                        return r;
                if (r == 1) {
                        hi = mid;
                        *changed = true;
                } else {
                        lo = mid;
                }
        }
        return 0;
}

/* A text byte: the first of simple_values, in order, that is simpler than
 * it and keeps the crash. */
static int min_shrink_text(Min *m, size_t i, bool *changed)
{
        for (size_t k = 0; k < sizeof(simple_values); k++) {
                uint8_t v = simple_values[k];
                if (simplicity(v) >= simplicity(m->cur[i]))
                        break;
                int r = min_try_byte(m, i, v);
                if (r < 0)
                        return r;
                if (r == 1) {
                        *changed = true;
                        break;
                }
        }
        return 0;
}

/* Phase 2: one pass over the bytes (after zeroing blocks, for binary
 * inputs). Sets *changed when any byte changed. */
static int min_simplify(Min *m, bool *changed)
{
        bool text = min_is_text(m);
        int r;
        *changed = false;
        if (!text) {
                r = min_zero_blocks(m, changed);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < m->len; i++) {
                r = text ? min_shrink_text(m, i, changed) : min_shrink_binary(m, i, changed);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Rounds of removal and simplification. A simplified byte (a smaller
 * length field, say) can make more bytes removable, so after a round that
 * changed bytes, removal runs again; the rounds end when removal finds
 * nothing new or simplification changes nothing. Every round but the last
 * shortens the input, so they end. */
static int min_rounds(Min *m)
{
        for (int round = 0;; round++) {
                size_t before = m->len;
                bool changed;
                int r = min_remove(m);
                if (r < 0)
                        return r;
                if (round > 0 && m->len == before)
                        return 0;
                r = min_simplify(m, &changed);
                if (r < 0 || !changed)
                        return r;
        }
}

int minimize_input(MinimizeOracle oracle, void *ctx, const uint8_t *in, size_t len,
                   const MinimizeBudget *b, uint8_t **ret, size_t *ret_len, MinimizeStats *stats)
{
        Min m = {
            .oracle = oracle,
            .ctx = ctx,
            .b = b,
            .started = clock_now_ms(),
            .stats = stats,
            .len = len,
        };
        int r;

        memset(stats, 0, sizeof(*stats));
        stats->from_len = stats->to_len = len;
        m.cur = malloc(len ? len : 1);
        m.cand = malloc(len ? len : 1);
        if (!m.cur || !m.cand) {
                r = -ENOMEM;
                goto out_free;
        }
        if (len)
                memcpy(m.cur, in, len);

        /* The starting input must itself crash the wanted way, in this
         * worker: everything after compares against it. This check is never
         * refused by the budget. */
        MinimizeBudget unlimited = {0};
        m.b = &unlimited;
        r = min_try(&m, m.cur, m.len);
        m.b = b;
        if (r < 0)
                goto out_free;
        if (r == 0) {
                r = MINIMIZE_NOT_REPRODUCED;
                goto out_free;
        }

        r = min_rounds(&m);
        if (r < 0 && r != MIN_STOPPED)
                goto out_free;
        stats->to_len = m.len;
        stats->ms = clock_now_ms() - m.started;
        *ret = m.cur;
        *ret_len = m.len;
        free(m.cand);
        return 0;

out_free:
        stats->ms = clock_now_ms() - m.started;
        free(m.cur);
        free(m.cand);
        return r;
}

/* The worker as an oracle. Stored signatures name functions from debug
 * info (recovery/symbolize.h), which takes a symbolizer process per call;
 * so a trial is compared first by an exact key (its raw signature plus the
 * module offsets of the frames the signature uses) against the first trial
 * that crashed the wanted way: equal offsets symbolize to equal names. Only
 * a crash of the wanted kind with other offsets is symbolized. */
typedef struct WprocOracle {
        Wproc *w;
        const Classification *want;
        char ref_key[1024]; /* exact key of the first trial that crashed the wanted way */
        bool have_ref;
} WprocOracle;

static void exact_key(const cJSON *ev, const Classification *raw, char *buf, size_t cap)
{
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(ev, "death");
        const cJSON *frames = cJSON_GetObjectItemCaseSensitive(death, "frames");
        const cJSON *f;
        int taken = 0;
        size_t n = (size_t)snprintf(buf, cap, "%s", raw->signature);
        cJSON_ArrayForEach(f, frames)
        {
                if (taken == CLASSIFY_TOP_FRAMES || n >= cap)
                        break;
                if (classify_frame_is_runtime(f) || !cJSON_GetObjectItemCaseSensitive(f, "module"))
                        continue;
                n += (size_t)snprintf(buf + n, cap - n, "#%s+%s", msg_str(f, "module", "?"),
                                      msg_str(f, "offset", "?"));
                taken++;
        }
}

static bool wproc_oracle_same(WprocOracle *o, cJSON *ev, const Classification *raw)
{
        char key[sizeof(o->ref_key)];
        exact_key(ev, raw, key, sizeof(key));
        if (o->have_ref && strcmp(key, o->ref_key) == 0)
                return true;
        Classification c = *raw;
        if (!minimize_same_crash(o->want, &c)) {
                cJSON *death = cJSON_GetObjectItemCaseSensitive(ev, "death");
                if (symbolize_frames(cJSON_GetObjectItemCaseSensitive(death, "frames"), true) <= 0)
                        return false;
                classify_death(ev, &c);
                if (!minimize_same_crash(o->want, &c))
                        return false;
        }
        if (!o->have_ref) {
                snprintf(o->ref_key, sizeof(o->ref_key), "%s", key);
                o->have_ref = true;
        }
        return true;
}

static int wproc_oracle(void *ctx, const uint8_t *data, size_t len)
{
        WprocOracle *o = ctx;
        cJSON *ev = NULL;
        /* A leak shows only when LeakSanitizer looks, after the input. */
        int r = strcmp(o->want->kind, "leak") == 0 ? wproc_exec_leak_check(o->w, data, len, 1, &ev)
                                                   : wproc_exec_quiet(o->w, data, len, &ev);
        if (r < 0)
                return r;
        int v = MINIMIZE_NO_CRASH;
        if (proto_is(ev, PROTO_DIED)) {
                Classification c;
                classify_death(ev, &c);
                if (!c.is_crash)
                        v = -EINTR; /* the worker was told to stop */
                else if (strcmp(c.kind, o->want->kind) != 0)
                        v = MINIMIZE_OTHER_CRASH;
                else
                        v = wproc_oracle_same(o, ev, &c) ? MINIMIZE_SAME : MINIMIZE_OTHER_CRASH;
        }
        cJSON_Delete(ev);
        return v;
}

int minimize_run(Wproc *w, const uint8_t *in, size_t len, const Classification *want,
                 const MinimizeBudget *b, uint8_t **ret, size_t *ret_len, MinimizeStats *stats)
{
        WprocOracle o = {.w = w, .want = want};
        return minimize_input(wproc_oracle, &o, in, len, b, ret, ret_len, stats);
}

cJSON *minimize_stats_json(const MinimizeStats *s, const char *mode)
{
        char now[32];
        cJSON *j = cJSON_CreateObject();
        if (!j)
                return NULL;
        crashstore_now_iso(now, sizeof(now));
        cJSON_AddStringToObject(j, "mode", mode);
        cJSON_AddNumberToObject(j, "from_len", (double)s->from_len);
        cJSON_AddNumberToObject(j, "to_len", (double)s->to_len);
        cJSON_AddNumberToObject(j, "trials", (double)s->trials);
        cJSON_AddNumberToObject(j, "ms", (double)s->ms);
        cJSON_AddNumberToObject(j, "same_crash", (double)s->same);
        cJSON_AddNumberToObject(j, "other_crash", (double)s->other_crash);
        cJSON_AddNumberToObject(j, "no_crash", (double)s->no_crash);
        cJSON_AddStringToObject(j, "stopped", minimize_stop_str(s->stopped));
        cJSON_AddStringToObject(j, "at", now);
        return j;
}

int minimize_store(const char *out_dir, const char *id, const uint8_t *data, size_t len,
                   const MinimizeStats *s, const char *mode)
{
        char sha[SHA1_HEX_LEN];
        int r = crashstore_put_minimized(out_dir, id, data, len);
        if (r < 0)
                return r;
        cJSON *fields = cJSON_CreateObject();
        cJSON *stats = minimize_stats_json(s, mode);
        if (!fields || !stats) {
                cJSON_Delete(fields);
                cJSON_Delete(stats);
                return -ENOMEM;
        }
        sha1_hex(data, len, sha);
        cJSON_AddNumberToObject(fields, "minimized_len", (double)len);
        cJSON_AddStringToObject(fields, "minimized_sha1", sha);
        cJSON_AddItemToObject(fields, "minimize", stats);
        r = crashstore_update(out_dir, id, fields);
        cJSON_Delete(fields);
        return r;
}

/* Notes in crash.json why the automatic pass left a crash alone. */
static void note_skipped(const char *out_dir, const char *id, const char *why)
{
        cJSON *fields = cJSON_CreateObject();
        cJSON *note = cJSON_AddObjectToObject(fields, "minimize");
        if (note) {
                cJSON_AddStringToObject(note, "mode", "auto");
                cJSON_AddStringToObject(note, "skipped", why);
                (void)crashstore_update(out_dir, id, fields);
        }
        cJSON_Delete(fields);
}

int minimize_auto(Wproc *w, const char *out_dir, const Classification *want, const uint8_t *in,
                  size_t len, unsigned budget_ms)
{
        MinimizeBudget b = {.max_ms = budget_ms};
        MinimizeStats st;
        uint8_t *min = NULL;
        size_t min_len = 0;

        if (!w || !budget_ms)
                return 0;
        if (strcmp(want->kind, "timeout") == 0) {
                note_skipped(
                    out_dir, want->id,
                    "a hang costs the whole --timeout per trial; run snapfuzz minimize ID");
                return 0;
        }
        int r = minimize_run(w, in, len, want, &b, &min, &min_len, &st);
        if (r == MINIMIZE_NOT_REPRODUCED) {
                note_skipped(out_dir, want->id,
                             "the stored input did not crash the same way again (flaky?)");
                log_warn("crash %s: not minimized: the input did not crash the same way again",
                         want->id);
                return r;
        }
        if (r < 0) {
                log_warn("crash %s: not minimized: %s", want->id, strerror(-r));
                return r;
        }
        r = minimize_store(out_dir, want->id, min, min_len, &st, "auto");
        if (r < 0)
                log_warn("crash %s: cannot store the minimized input: %s", want->id, strerror(-r));
        else
                log_info("crash %s: minimized %zu -> %zu bytes in %llu trials, %lld ms%s: "
                         "%s/crashes/%s/minimized",
                         want->id, st.from_len, st.to_len, (unsigned long long)st.trials,
                         (long long)st.ms,
                         st.stopped == MINIMIZE_STOP_DONE ? ""
                                                          : " (budget spent; continue "
                                                            "with snapfuzz minimize ID)",
                         out_dir, want->id);
        free(min);
        return r;
}
