/*
 * One job at a time, in the order the coordinator sends them. The
 * verification worker is started on the first job (so a run that finds
 * nothing never pays for it) and started again if it ever goes away.
 * Verification runs the rebuilt bytes exactly once, with the run's timeout
 * and memory limit, in a runner forked from the snapshot: the same code
 * path as fuzzing and as `snapfuzz reproduce`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/crashstore.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/wproc.h"
#include "recovery/classify.h"
#include "recovery/recovery.h"
#include "recovery/replay.h"

#include "snapfuzz/banned.h"

static void add_hex(cJSON *j, const char *key, uint64_t v)
{
        char hex[24];
        snprintf(hex, sizeof(hex), "0x%016" PRIx64, v);
        cJSON_AddStringToObject(j, key, hex);
}

/* The replay record as it stood at the death, for the report: everything
 * needed to rebuild the input by hand. */
static cJSON *record_json(const void *region, const RecordLayout *l)
{
        const RecordHeader *h = region;
        char sha[SHA1_HEX_LEN];
        cJSON *j = cJSON_CreateObject();
        if (!j)
                return NULL;
        cJSON_AddNumberToObject(j, "version", h->version);
        cJSON_AddNumberToObject(j, "mutator_version", h->mutator_version);
        cJSON_AddNumberToObject(j, "batch_id", (double)h->batch_id);
        cJSON_AddStringToObject(j, "mode", h->mode == RECORD_MODE_EXEC ? "exec" : "fuzz");
        cJSON_AddNumberToObject(j, "iteration", (double)h->count);
        cJSON_AddNumberToObject(j, "iters", (double)h->iters);
        add_hex(j, "seed", h->seed);
        cJSON_AddNumberToObject(j, "chain_len", h->chain_len);
        cJSON_AddNumberToObject(j, "max_len", h->max_len);
        cJSON_AddNumberToObject(j, "base_len", h->base_len);
        sha1_hex(record_base((void *)region, l), h->base_len, sha);
        cJSON_AddStringToObject(j, "base_sha1", sha);
        cJSON_AddNumberToObject(j, "partner_len", h->partner_len);
        cJSON_AddNumberToObject(j, "table_len", h->table_len);
        if (h->mode == RECORD_MODE_FUZZ && h->count) {
                uint64_t chain = (h->count - 1) / h->chain_len;
                const RecordChainSlot *s = &h->slot[chain & 1];
                cJSON *slot = cJSON_AddObjectToObject(j, "chain");
                if (slot) {
                        cJSON_AddNumberToObject(slot, "index", (double)s->chain);
                        cJSON_AddNumberToObject(slot, "step",
                                                (double)((h->count - 1) % h->chain_len));
                        add_hex(slot, "rng_state", s->rng.state);
                        add_hex(slot, "rng_inc", s->rng.inc);
                        /* The comparison table the chain's mutations read
                         * (0: none); its entries are in the record. */
                        cJSON_AddNumberToObject(slot, "cmp_gen", (double)s->cmp_gen);
                }
        }
        return j;
}

typedef struct Helper {
        const RecoveryConfig *cfg;
        Wproc *verifier;
        uint8_t *buf;
        RecordLayout layout;
} Helper;

static int helper_verify(Helper *hp, const uint8_t *data, size_t len, cJSON **ret)
{
        char err[512];
        for (int attempt = 0; attempt < 2; attempt++) {
                if (!hp->verifier) {
                        WprocConfig wc = {
                            .target = hp->cfg->target,
                            .max_len = hp->cfg->max_len,
                            .timeout_ms = hp->cfg->timeout_ms,
                            .rss_limit_mb = hp->cfg->rss_limit_mb,
                            .sandbox = hp->cfg->sandbox,
                            .cov_fd = -1,
                        };
                        int r = wproc_spawn(&hp->verifier, &wc, err, sizeof(err));
                        if (r < 0) {
                                log_warn("recovery: cannot start the verification worker: %s", err);
                                return r;
                        }
                }
                int r = wproc_exec(hp->verifier, data, len, ret);
                if (r == 0)
                        return 0;
                wproc_free(hp->verifier);
                hp->verifier = NULL;
        }
        return -EIO;
}

static cJSON *helper_job(Helper *hp, const cJSON *cmd, void *job)
{
        int64_t started = clock_now_ms();
        const cJSON *died = cJSON_GetObjectItemCaseSensitive(cmd, "died");
        int64_t died_at = msg_int(cmd, "died_at_ms", started);
        size_t len = 0;
        cJSON *out;

        int r = replay_input(job, &hp->layout, hp->buf, &len);
        if (r < 0) {
                out = msg_new("lost");
                if (out) {
                        cJSON_AddNumberToObject(out, "job", (double)msg_int(cmd, "job", 0));
                        cJSON_AddStringToObject(out, "why", record_problem_str((RecordProblem)-r));
                }
                return out;
        }
        int64_t rebuilt = clock_now_ms();

        Classification c;
        classify_death(died, &c);

        cJSON *verify = NULL;
        Classification vc = {0};
        bool reproduced = false;
        if (helper_verify(hp, hp->buf, len, &verify) == 0) {
                if (strcmp(msg_str(verify, "type", ""), "died") == 0) {
                        classify_death(verify, &vc);
                        reproduced = vc.is_crash;
                }
        }
        int64_t verified = clock_now_ms();

        /* The report's stack comes from the original death; when that one
         * has none (a SIGKILL leaves no chance to unwind) and verification
         * reproduced the same kind, its stack is used instead. */
        const cJSON *death = cJSON_GetObjectItemCaseSensitive(died, "death");
        if (!death && reproduced && strcmp(vc.kind, c.kind) == 0)
                death = cJSON_GetObjectItemCaseSensitive(verify, "death");

        cJSON *report = cJSON_CreateObject();
        char sha[SHA1_HEX_LEN];
        sha1_hex(hp->buf, len, sha);
        cJSON_AddStringToObject(report, "id", c.id);
        cJSON_AddStringToObject(report, "kind", c.kind);
        cJSON_AddStringToObject(report, "message", c.message);
        cJSON_AddStringToObject(report, "signature", c.signature);
        if (cJSON_GetObjectItemCaseSensitive(died, "signal")) {
                int sig = (int)msg_int(died, "signal", 0);
                const char *abbrev = sigabbrev_np(sig);
                char name[32];
                snprintf(name, sizeof(name), "SIG%s", abbrev ? abbrev : "?");
                cJSON_AddNumberToObject(report, "signal", sig);
                cJSON_AddStringToObject(report, "signal_name", name);
        }
        if (cJSON_GetObjectItemCaseSensitive(died, "exit_code"))
                cJSON_AddNumberToObject(report, "exit_status",
                                        (double)msg_int(died, "exit_code", 0));
        cJSON_AddStringToObject(report, "target", hp->cfg->target);
        cJSON_AddNumberToObject(report, "input_len", (double)len);
        cJSON_AddStringToObject(report, "input_sha1", sha);
        cJSON_AddBoolToObject(report, "reproduced", reproduced);
        if (reproduced && strcmp(vc.kind, c.kind) != 0)
                cJSON_AddStringToObject(report, "reproduced_kind", vc.kind);
        if (death)
                cJSON_AddItemToObject(report, "stack", cJSON_Duplicate(death, 1));
        /* What the target printed last before it died (assertion messages,
         * sanitizer reports). */
        const char *output = msg_str(died, "output", NULL);
        if (!output && reproduced)
                output = msg_str(verify, "output", NULL);
        if (output)
                cJSON_AddStringToObject(report, "output", output);
        cJSON_AddItemToObject(report, "record", record_json(job, &hp->layout));
        cJSON *limits = cJSON_AddObjectToObject(report, "limits");
        if (limits) {
                cJSON_AddNumberToObject(limits, "timeout_ms", hp->cfg->timeout_ms);
                cJSON_AddNumberToObject(limits, "rss_limit_mb", hp->cfg->rss_limit_mb);
                cJSON_AddNumberToObject(limits, "max_len", (double)hp->cfg->max_len);
                cJSON_AddStringToObject(limits, "sandbox", hp->cfg->sandbox);
        }
        cJSON *times = cJSON_AddObjectToObject(report, "recovery");
        if (times) {
                cJSON_AddNumberToObject(times, "rebuild_ms", (double)(rebuilt - started));
                cJSON_AddNumberToObject(times, "verify_ms", (double)(verified - rebuilt));
                cJSON_AddNumberToObject(times, "death_to_verified_ms",
                                        (double)(verified - died_at));
        }

        bool is_new = false;
        r = crashstore_put(hp->cfg->out_dir, report, hp->buf, len, &is_new);
        int64_t stored = clock_now_ms();
        cJSON_Delete(verify);
        cJSON_Delete(report);

        out = msg_new(r < 0 ? "lost" : "stored");
        if (!out)
                return NULL;
        cJSON_AddNumberToObject(out, "job", (double)msg_int(cmd, "job", 0));
        if (r < 0) {
                char why[256];
                snprintf(why, sizeof(why), "cannot write the crash to %s/crashes: %s",
                         hp->cfg->out_dir, strerror(-r));
                cJSON_AddStringToObject(out, "why", why);
                return out;
        }
        cJSON_AddStringToObject(out, "id", c.id);
        cJSON_AddStringToObject(out, "kind", c.kind);
        cJSON_AddStringToObject(out, "message", c.message);
        cJSON_AddBoolToObject(out, "new", is_new);
        cJSON_AddBoolToObject(out, "reproduced", reproduced);
        cJSON_AddNumberToObject(out, "input_len", (double)len);
        cJSON_AddNumberToObject(out, "death_to_stored_ms", (double)(stored - died_at));
        return out;
}

int recovery_main(const RecoveryConfig *cfg, int cmd_fd, int evt_fd, void *job_region)
{
        Helper hp = {.cfg = cfg};
        MsgReader reader;
        int r;

        r = record_layout(cfg->max_len, &hp.layout);
        if (r < 0)
                return r;
        hp.buf = malloc(cfg->max_len ? cfg->max_len : 1);
        if (!hp.buf)
                return -ENOMEM;
        msg_reader_init(&reader, cmd_fd);
        for (;;) {
                cJSON *cmd = NULL;
                r = msg_recv(&reader, &cmd, -1);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                const char *type = msg_str(cmd, "type", "");
                cJSON *reply = NULL;
                if (strcmp(type, "recover") == 0)
                        reply = helper_job(&hp, cmd, job_region);
                else if (strcmp(type, "ping") == 0)
                        reply = msg_new("pong");
                cJSON_Delete(cmd);
                if (reply) {
                        r = msg_send(evt_fd, reply);
                        cJSON_Delete(reply);
                        if (r < 0)
                                break;
                }
        }
        msg_reader_deinit(&reader);
        wproc_free(hp.verifier);
        free(hp.buf);
        return r == -EPIPE ? 0 : r;
}
