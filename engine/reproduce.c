/*
 * Reproduction rebuilds the conditions (target, sandbox, limits) from
 * crash.json through recovery/crashconf.c, which checks every field and
 * never lets the record loosen the sandbox unless the person asks; the
 * verdict comes from running the stored bytes again, never from the stored
 * report. Everything stored or printed by the target reaches the terminal
 * through core/termsafe.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/instrcheck.h"
#include "engine/reproduce.h"
#include "worker/proto.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "worker/wproc.h"
#include "recovery/classify.h"
#include "recovery/replay.h"
#include "recovery/sanstack.h"
#include "recovery/symbolize.h"

#include "snapfuzz/banned.h"

static void print_hexdump(const uint8_t *data, size_t len, size_t limit)
{
        size_t n = len < limit ? len : limit;
        for (size_t off = 0; off < n; off += 16) {
                printf("  %08zx ", off);
                for (size_t i = 0; i < 16; i++) {
                        if (off + i < n)
                                printf(" %02x", data[off + i]);
                        else
                                printf("   ");
                }
                printf("  |");
                for (size_t i = 0; i < 16 && off + i < n; i++) {
                        uint8_t b = data[off + i];
                        putchar(b >= 0x20 && b < 0x7f ? b : '.');
                }
                printf("|\n");
        }
        if (n < len)
                printf("  ... %zu more bytes\n", len - n);
}

static void print_stack(cJSON *death)
{
        cJSON *frames = death ? cJSON_GetObjectItemCaseSensitive(death, "frames") : NULL;
        const cJSON *f;
        int i = 0;
        symbolize_frames(frames, false);
        cJSON_ArrayForEach(f, frames)
        {
                char fn[1100], file[1100], module[1100], where[1200] = "";
                termsafe_str(fn, sizeof(fn), msg_str(f, "function", msg_str(f, "symbol", "??")),
                             256);
                termsafe_str(module, sizeof(module), msg_str(f, "module", "?"), 256);
                if (msg_str(f, "file", NULL)) {
                        termsafe_str(file, sizeof(file), msg_str(f, "file", NULL), 256);
                        snprintf(where, sizeof(where), " %s:%d", file, (int)msg_int(f, "line", 0));
                }
                printf("  #%-2d %s in %s%s (%s+%s)%s\n", i++, msg_str(f, "pc", "?"), fn, where,
                       module, msg_str(f, "offset", "?"),
                       classify_frame_is_runtime(f) ? "  [runtime]" : "");
        }
        if (i == 0)
                printf("  (no stack: the runner had no chance to unwind)\n");
}

/* A state-dependent crash's sequence/ files, in the order of their names,
 * packed as a seed list (record_seed_at's format) for one runner. */
typedef struct Sequence {
        uint8_t *pack;
        size_t len;
        uint64_t n;
} Sequence;

static int skip_dots(const struct dirent *d)
{
        return d->d_name[0] != '.';
}

/* Appends @data to @s's list. 0 or -ENOMEM. */
static int sequence_put(Sequence *s, const uint8_t *data, size_t len)
{
        uint8_t *p = realloc(s->pack, s->len + 4 + len);
        if (!p)
                return -ENOMEM;
        s->pack = p;
        p += s->len;
        p[0] = (uint8_t)len;
        p[1] = (uint8_t)(len >> 8);
        p[2] = (uint8_t)(len >> 16);
        p[3] = (uint8_t)(len >> 24);
        memcpy(p + 4, data, len);
        s->len += 4 + len;
        s->n++;
        return 0;
}

/* Reads OUT/crashes/<id>/sequence/ into @ret: 0, 1 when there is none (the
 * record is what replays), or -EBADMSG after a line (a file that cannot be
 * read or is longer than @max_len), -ENOMEM. */
static int load_sequence(const ReproduceConfig *cfg, size_t max_len, Sequence *ret)
{
        char dir[4096], path[4400];
        struct dirent **names = NULL;
        snprintf(dir, sizeof(dir), "%s/crashes/%s/sequence", cfg->out_dir, cfg->id);
        int n = scandir(dir, &names, skip_dots, alphasort);
        if (n <= 0) {
                free(names);
                return 1;
        }
        int r = 0;
        for (int i = 0; i < n; i++) {
                uint8_t *data = NULL;
                size_t len = 0;
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
                if (r == 0 && fs_read_file(AT_FDCWD, path, max_len, &data, &len) < 0) {
                        char shown[TERMSAFE_BUF];
                        log_error("%s cannot be read, or is longer than the crash's max_len "
                                  "(%zu); the crash record is corrupt",
                                  termsafe_str(shown, sizeof(shown), path, 512), max_len);
                        r = -EBADMSG;
                }
                if (r == 0)
                        r = sequence_put(ret, data, len);
                free(data);
                free(names[i]);
        }
        free(names);
        return r;
}

/* Runs @seq, in order, in one runner of @w: the stored executions of a
 * state-dependent crash. 0, 1 when the list does not fit the runner's
 * (the record replays then), or wproc_run_batch's error. */
static int run_sequence(Wproc *w, const Sequence *seq, bool quiet, cJSON **ret)
{
        if (seq->len > wproc_layout(w)->area_len)
                return 1;
        WprocBatch b = {
            .batch_id = 1,
            .mode = RECORD_MODE_SEEDS,
            .iters = seq->n,
            .chain_len = 1,
            .base = seq->pack,
            .base_len = seq->len,
            .replay = 1,
        };
        if (!quiet)
                printf("state-dependent: replaying %llu inputs (sequence/, in order) in one "
                       "runner\n",
                       (unsigned long long)seq->n);
        return wproc_run_batch(w, &b, ret);
}

/* A state-dependent crash is replayed from its stored record: the same
 * batch, running iterations first..last in one runner. Returns 0 and the
 * record in *ret_region (layout in *ret_layout), or -EBADMSG after a line. */
static int load_history(const ReproduceConfig *cfg, const Crashconf *conf, uint8_t **ret_region,
                        RecordLayout *ret_layout)
{
        char path[4096];
        uint8_t *rec;
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/record", cfg->out_dir, cfg->id);
        int r = fs_read_file(AT_FDCWD, path, RECORD_MAX_LEN_LIMIT * 3u, &rec, &len);
        if (r < 0) {
                log_error("the crash is state-dependent but %s cannot be read (%s); the crash "
                          "record is incomplete",
                          path, strerror(-r));
                return -EBADMSG;
        }
        const RecordHeader *h = (const RecordHeader *)rec;
        if (len < sizeof(RecordHeader) || record_layout(h->max_len, ret_layout) < 0 ||
            len != ret_layout->record_size || record_validate(rec, ret_layout) != RECORD_OK ||
            conf->last > h->iters) {
                log_error("%s is not a valid replay record; the crash record is corrupt", path);
                free(rec);
                return -EBADMSG;
        }
        *ret_region = rec;
        return 0;
}

/* The note about the sandbox, when there is one. */
static void print_sandbox_note(const Crashconf *conf)
{
        if (!conf->note[0])
                return;
        if (conf->note_is_warning)
                log_warn("%s", conf->note);
        else
                log_info("note: %s", conf->note);
}

/* What was stored and what runs now. */
static void print_header(const ReproduceConfig *cfg, const Crashconf *conf)
{
        char a[TERMSAFE_BUF], b[TERMSAFE_BUF];

        printf("crash %s: %s\n", cfg->id, termsafe_str(a, sizeof(a), conf->message, TERMSAFE_MAX));
        printf("  target   %s\n", termsafe_str(a, sizeof(a), conf->target, TERMSAFE_MAX));
        printf("  stored   kind %s, signature %s\n", conf->kind,
               termsafe_str(b, sizeof(b), conf->signature, TERMSAFE_MAX));
        printf("  input    %zu bytes (%s/crashes/%s/input)\n", conf->input_len, cfg->out_dir,
               cfg->id);
        if (conf->minimized_len >= 0)
                printf("  minimized %lld bytes (%s/crashes/%s/minimized)\n",
                       (long long)conf->minimized_len, cfg->out_dir, cfg->id);
        printf("  sandbox  %s%s (%s)\n", conf->sandbox, conf->policy_json ? ", with a policy" : "",
               conf->sandbox_from);
        print_hexdump(conf->input, conf->input_len, 256);
}

void reproduce_print_death(const cJSON *died, Classification *ret)
{
        char shown[TERMSAFE_BUF];
        classify_death(died, ret);
        printf("%s — %s\n", ret->kind,
               termsafe_str(shown, sizeof(shown), ret->message, TERMSAFE_MAX));
        if (cJSON_GetObjectItemCaseSensitive(died, "signal")) {
                int sig = (int)msg_int(died, "signal", 0);
                const char *abbrev = sigabbrev_np(sig);
                printf("  signal   %d (SIG%s)\n", sig, abbrev ? abbrev : "?");
        } else if (strcmp(ret->kind, "leak") == 0) {
                printf("  check    LeakSanitizer, after the input returned; the stack "
                       "is where the lost memory was allocated\n");
        } else if (cJSON_GetObjectItemCaseSensitive(died, "exit_code")) {
                printf("  status   exit %d\n", (int)msg_int(died, "exit_code", 0));
        }
        printf("  stack:\n");
        print_stack(cJSON_GetObjectItemCaseSensitive(died, "death"));
}

/* Prints the verdict of @result; REPRODUCE_CRASHES or REPRODUCE_FIXED. */
static int print_verdict(const Crashconf *conf, const cJSON *result)
{
        if (!proto_is(result, PROTO_DIED)) {
                printf("\nNOT REPRODUCED: the input ran to completion; the bug looks fixed "
                       "(stored as %s)\n",
                       conf->kind);
                if (conf->note[0] && !conf->note_is_warning)
                        printf("  note     it ran under the default strict sandbox, not the "
                               "one stored in crash.json; --trust-record uses that one\n");
                return REPRODUCE_FIXED;
        }
        Classification c;
        printf("\nREPRODUCED: ");
        reproduce_print_death(result, &c);
        if (strcmp(c.kind, conf->kind) != 0)
                printf("  note     stored as %s, now %s\n", conf->kind, c.kind);
        /* The sanitizer's own report, its stacks symbolized (the worker
         * made its bytes printable). */
        const char *report = msg_str(result, "sanitizer_report", NULL);
        if (report) {
                printf("  sanitizer report%s:\n", conf->sanitizer_confirm
                                                      ? " (input in an exact-size heap buffer, the "
                                                        "sanitizer's fault handlers on)"
                                                      : "");
                fflush(stdout);
                (void)sanstack_put_text(stdout, report, false);
        }
        return REPRODUCE_CRASHES;
}

/*
 * Runs crash @cfg->id once under @conf (loaded by the caller): the
 * sequence/ files or the record of a state-dependent crash, else the
 * input (with a leak check for a leak). Returns 0 with the worker's
 * answer in *@ret, or a negative errno after one line (-EBADMSG: the
 * record is corrupt, -ENOEXEC: the target cannot be loaded). Prints the
 * state-dependent replay's line unless @quiet.
 */
static int replay_stored(const ReproduceConfig *cfg, const Crashconf *conf, bool quiet, cJSON **ret)
{
        char err[1024];
        Wproc *w = NULL;
        uint8_t *history = NULL;
        Sequence seq = {0};
        RecordLayout hl;
        WprocConfig wc;
        int r;

        crashconf_wproc_config(conf, &wc);
        if (conf->state_dependent) {
                r = load_history(cfg, conf, &history, &hl);
                if (r)
                        goto out;
                wc.max_len = hl.max_len;
                r = load_sequence(cfg, wc.max_len, &seq);
                if (r < 0)
                        goto out;
                /* A list longer than the runner's room for inputs runs in a
                 * worker with room for it (the recovery helper shrank it
                 * in one too); only the record's own replay needs the
                 * crash's max_len, which inputs are mutated within. */
                if (seq.len > hl.area_len && seq.len <= RECORD_MAX_LEN_LIMIT)
                        wc.max_len = seq.len;
        }
        r = wproc_spawn(&w, &wc, err, sizeof(err));
        if (r < 0) {
                char shown[TERMSAFE_BUF];
                log_error("%s: %s", termsafe_str(shown, sizeof(shown), conf->target, 512), err);
                /* A target that cannot be loaded is the user's to fix. */
                r = r == WPROC_ERR_LOAD || r == WPROC_ERR_CRASHED ? -ENOEXEC : r;
                goto out;
        }
        /* A state-dependent crash: its sequence/ files, or the record when
         * there are none or they do not fit a runner's list. */
        r = seq.n ? run_sequence(w, &seq, quiet, ret) : 1;
        if (r != 1) {
                /* The sequence ran, or the worker failed. */
        } else if (history) {
                WprocBatch b;
                if (!quiet)
                        printf("state-dependent: replaying %" PRIu64 " inputs (iterations %" PRIu64
                               "..%" PRIu64 " of the batch) in one runner\n",
                               (uint64_t)(conf->last - conf->first + 1), (uint64_t)conf->first,
                               (uint64_t)conf->last);
                replay_history_batch(history, &hl, conf->first, conf->last, &b);
                r = wproc_run_batch(w, &b, ret);
        } else if (wc.detect_leaks) {
                /* A leak shows only when LeakSanitizer checks after the input. */
                r = wproc_exec_leak_check(w, conf->input, conf->input_len, 0, ret);
        } else {
                r = wproc_exec(w, conf->input, conf->input_len, ret);
        }
        if (r < 0 && r != -EBADMSG && r != -ENOEXEC)
                log_error("the worker failed while running the input: %s", strerror(-r));
out:
        free(seq.pack);
        free(history);
        wproc_free(w);
        return r < 0 ? r : 0;
}

int reproduce_check(const ReproduceConfig *cfg, Crashconf *ret_conf, Classification *ret_now)
{
        cJSON *result = NULL;
        char err[1024];

        memset(ret_now, 0, sizeof(*ret_now));
        int r = crashconf_load(cfg->out_dir, cfg->id, &cfg->trust, ret_conf, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return r == -ENOMEM ? r : -EBADMSG;
        }
        r = replay_stored(cfg, ret_conf, true, &result);
        if (r == 0 && proto_is(result, PROTO_DIED)) {
                cJSON *death = cJSON_GetObjectItemCaseSensitive(result, "death");
                /* Named as recovery names it, so that the ids compare. */
                symbolize_frames(death ? cJSON_GetObjectItemCaseSensitive(death, "frames") : NULL,
                                 false);
                classify_death(result, ret_now);
                r = ret_now->is_crash ? REPRODUCE_CRASHES : REPRODUCE_FIXED;
        } else if (r == 0) {
                r = REPRODUCE_FIXED;
        }
        cJSON_Delete(result);
        if (r < 0)
                crashconf_deinit(ret_conf);
        return r;
}

int reproduce_run(const ReproduceConfig *cfg)
{
        Crashconf conf;
        cJSON *result = NULL;
        char err[1024];
        int code;

        int r = crashconf_load(cfg->out_dir, cfg->id, &cfg->trust, &conf, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return r == -ENOMEM ? r : -EBADMSG;
        }
        print_sandbox_note(&conf);
        instrcheck_malloc_limit(conf.target, conf.malloc_limit_mb, conf.rss_limit_mb);
        code = replay_stored(cfg, &conf, false, &result);
        if (code == 0) {
                print_header(cfg, &conf);
                code = print_verdict(&conf, result);
        }
        cJSON_Delete(result);
        crashconf_deinit(&conf);
        return code;
}
