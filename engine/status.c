/*
 * `snapfuzz status`: what a campaign in an output directory is doing or
 * did, from its stats.json and its lock (engine/coordinator.c takes
 * OUT/.lock for the whole run). stats.json alone cannot say whether its
 * writer is alive — a SIGKILLed run leaves "running" behind — so the lock
 * decides: held means running; free means the campaign ended, and a
 * "running" left behind is reported as a run that was killed.
 *
 * Everything printed comes from a file someone else may have written: the
 * strings are printed with control characters escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "engine/status.h"
#include "snapfuzz/engine.h"

#include "snapfuzz/banned.h"

static void print_time(FILE *out, const char *label, double t, time_t now)
{
        char when[64];
        struct tm tm;
        time_t tt = 0;
        /* Converting a time outside time_t's range (1e300 in a stats.json
         * someone edited) is undefined behaviour: test the double first
         * (false for NaN too; no calendar date lies 1e18 s from 1970). */
        if (t > 0 && t < 1e18)
                tt = (time_t)t;
        if (tt <= 0 || !gmtime_r(&tt, &tm)) {
                fprintf(out, "  %-10s unknown\n", label);
                return;
        }
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
        fprintf(out, "  %-10s %s (%.0f s ago)\n", label, when, difftime(now, tt));
}

/* When the coverage last grew: seconds into the run, and how long the run
 * went (or, while it runs, has gone as of its last update) without. */
static void print_last_edge(FILE *out, const cJSON *st, double secs, int held)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, "last_new_edge_s");
        if (!cJSON_IsNumber(v))
                return; /* an older stats.json */
        double at = v->valuedouble;
        if (!(at >= 0 && at <= secs)) {
                fprintf(out, "last edge    no new coverage recorded\n");
                return;
        }
        fprintf(out, "last edge    new coverage %.1f s into the run; none in the %.1f s %s\n", at,
                secs - at, held ? "since, as of the last update" : "after it");
}

/* The state line: running, finished, or killed while running. */
static void print_state(FILE *out, const cJSON *st, int held, pid_t holder)
{
        char buf[TERMSAFE_BUF];
        const char *status = termsafe_str(buf, sizeof(buf), msg_str(st, "status", "?"), 200);
        bool said_running = strcmp(status, "running") == 0 || strcmp(status, "starting") == 0;
        if (held)
                fprintf(out, "state        running (pid %ld)\n", (long)holder);
        else if (said_running)
                fprintf(out,
                        "state        stopped without finishing: no process holds the campaign "
                        "(pid %.0f was killed or crashed); a new run resumes from here\n",
                        msg_num(st, "pid", 0));
        else
                fprintf(out, "state        %s\n", status);
}

int status_report(FILE *out, const char *out_dir, const char *text, size_t len, int held,
                  pid_t holder, time_t now)
{
        cJSON *st = cJSON_ParseWithLength(text, len);
        if (!cJSON_IsObject(st)) {
                cJSON_Delete(st);
                return -EBADMSG;
        }
        char buf[TERMSAFE_BUF];
        fprintf(out, "campaign     %s\n", termsafe_str(buf, sizeof(buf), out_dir, TERMSAFE_MAX));
        print_state(out, st, held, holder);
        fprintf(out, "target       %s\n",
                termsafe_str(buf, sizeof(buf), msg_str(st, "target", "?"), TERMSAFE_MAX));
        print_time(out, "started", msg_num(st, "started_at", 0), now);
        print_time(out, "updated", msg_num(st, "updated_at", 0), now);
        double secs = msg_num(st, "elapsed_s", 0), execs = msg_num(st, "execs", 0);
        fprintf(out, "elapsed      %.1f s, %.0f executions (%.0f/s), %.0f workers\n", secs, execs,
                secs > 0 ? execs / secs : 0, msg_num(st, "workers", 0));
        fprintf(out, "coverage     %.0f edges, %.0f features; corpus %.0f inputs\n",
                msg_num(st, "edges", 0), msg_num(st, "features", 0), msg_num(st, "corpus", 0));
        print_last_edge(out, st, secs, held);
        fprintf(out,
                "crashes      %.0f stored (%.0f unique), %.0f runner deaths, %.0f inputs lost\n",
                msg_num(st, "crashes", 0), msg_num(st, "unique_crashes", 0),
                msg_num(st, "runner_deaths", 0), msg_num(st, "inputs_lost", 0));
        /* Older stats.json files have neither. */
        if (cJSON_GetObjectItemCaseSensitive(st, "timeouts"))
                fprintf(out, "hangs        %.0f timeouts, %.0f out of memory (runner deaths)\n",
                        msg_num(st, "timeouts", 0), msg_num(st, "ooms", 0));
        if (msg_num(st, "rss_mb", -1) >= 0)
                fprintf(out, "memory       %.0f MB resident, the largest runner\n",
                        msg_num(st, "rss_mb", 0));
        cJSON_Delete(st);
        return 0;
}

int engine_status(const char *out_dir)
{
        int dirfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0) {
                int r = -errno;
                log_error("cannot open the output directory %s: %s", out_dir, strerror(errno));
                return r;
        }
        uint8_t *text = NULL;
        size_t len;
        int r = fs_read_file(dirfd, "stats.json", 1 << 20, &text, &len);
        if (r < 0) {
                log_error("%s/stats.json: %s; is %s a snapfuzz output directory?", out_dir,
                          strerror(-r), out_dir);
                close(dirfd);
                return r == -ENOMEM ? r : -ENOENT;
        }
        pid_t holder = 0;
        int held = fs_lock_probe(dirfd, ".lock", &holder);
        close(dirfd);
        if (held < 0)
                held = 0;
        r = status_report(stdout, out_dir, (const char *)text, len, held, holder, time(NULL));
        free(text);
        if (r == -EBADMSG)
                log_error("%s/stats.json is not a stats file (malformed JSON)", out_dir);
        return r;
}
