/*
 * The regression check (engine/regress.h), in three phases:
 *   stored   every crash of OUT/crashes runs once against the target
 *            (engine/reproduce.c's reproduce_check: the stored limits, the
 *            sandbox decided by recovery/crashconf.c, the sequence/ files
 *            or record of a state-dependent crash); its verdict is
 *            reproduced, quarantined, fixed or unreadable
 *   corpus   the corpus runs once, each input as a seed of an ordinary run
 *            (SfRunConfig.seeds_only, keep_going): a crash is recovered,
 *            verified and stored as in fuzzing; a crash id the run stored
 *            (new, or seen again: its count grew) is a finding
 *   report   OUT/regress.json, written atomically, and the summary
 * Invariants: a verdict comes from running the target, never from what
 * crash.json says; the output directory's lock is held while the stored
 * crashes run (a live campaign's directory is refused), and the corpus
 * replay takes it as any run does; nothing stored is removed or rewritten
 * here but by the corpus replay's crash store.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "engine/quarantine.h"
#include "engine/regress.h"
#include "engine/reproduce.h"

#include "snapfuzz/banned.h"

typedef struct Regress {
        RegressConfig *cfg;
        Quarantine *quarantine;
        cJSON *report;  /* regress.json */
        cJSON *crashes; /* its "crashes" array (owned by report) */
        cJSON *found;   /* its "corpus"."found" array (owned by report) */
        char **ids;     /* the crashes stored before the corpus replay */
        uint64_t *counts;
        size_t n_ids;
        unsigned reproduced, fixed, quarantined, unreadable, corpus_new, corpus_quarantined;
} Regress;

/* One line of the summary for crash @id, its stored text made inert. */
static void say(const char *verdict, const char *id, const char *kind, const char *text)
{
        char shown[TERMSAFE_BUF];
        printf("%-12s %s  %s%s%s\n", verdict, id, kind, text && text[0] ? "  " : "",
               termsafe_str(shown, sizeof(shown), text, 160));
}

/* A stored crash that could not be replayed: its record is corrupt or
 * refused (the line was printed). */
static void stored_unreadable(Regress *g, cJSON *item, const char *id)
{
        g->unreadable++;
        cJSON_AddStringToObject(item, "verdict", "unreadable");
        say("UNREADABLE", id, "-", "the record cannot be replayed (see the error above)");
}

/* The verdict of crash @id from reproduce_check's outcome @r. */
static void stored_verdict(Regress *g, cJSON *item, const char *id, int r, const Crashconf *conf,
                           const Classification *now)
{
        const char *why = quarantine_find(g->quarantine, id, conf->signature);
        if (!why && r == REPRODUCE_CRASHES)
                why = quarantine_find(g->quarantine, now->id, now->signature);
        cJSON_AddStringToObject(item, "kind", conf->kind);
        /* The stored sandbox was not used (or a looser one is): a verdict
         * to read with that in mind. */
        if (conf->note[0]) {
                log_info("crash %s: note: %s", id, conf->note);
                cJSON_AddStringToObject(item, "sandbox_note", conf->note);
        }
        if (why)
                cJSON_AddStringToObject(item, "quarantine_reason", why);
        if (r == REPRODUCE_FIXED) {
                g->fixed++;
                cJSON_AddStringToObject(item, "verdict", "fixed");
                say("fixed", id, conf->kind,
                    why ? "no longer crashes (still quarantined: snapfuzz crashes --unquarantine)"
                        : "no longer crashes");
                return;
        }
        cJSON_AddStringToObject(item, "now_kind", now->kind);
        cJSON_AddStringToObject(item, "now_id", now->id);
        cJSON_AddStringToObject(item, "now_message", now->message);
        cJSON_AddBoolToObject(item, "same_id", strcmp(now->id, id) == 0);
        if (why) {
                g->quarantined++;
                cJSON_AddStringToObject(item, "verdict", "quarantined");
                say("quarantined", id, now->kind, why[0] ? why : "still crashes; quarantined");
        } else {
                g->reproduced++;
                cJSON_AddStringToObject(item, "verdict", "reproduced");
                say("REPRODUCED", id, now->kind, now->message);
        }
}

/* Phase 1: every stored crash, once. A target that cannot be loaded ends
 * the check (-ENOEXEC); a corrupt record is a verdict; other failures are
 * snapfuzz's (a negative errno). */
static int phase_stored(Regress *g)
{
        for (size_t i = 0; i < g->n_ids; i++) {
                ReproduceConfig rc = {
                    .id = g->ids[i], .out_dir = g->cfg->run.out_dir, .trust = g->cfg->trust};
                Crashconf conf;
                Classification now;
                cJSON *item = cJSON_CreateObject();
                if (!item || !cJSON_AddItemToArray(g->crashes, item) ||
                    !cJSON_AddStringToObject(item, "id", g->ids[i]))
                        return -ENOMEM;
                int r = reproduce_check(&rc, &conf, &now);
                if (r == -EBADMSG) {
                        stored_unreadable(g, item, g->ids[i]);
                        continue;
                }
                if (r < 0)
                        return r;
                stored_verdict(g, item, g->ids[i], r, &conf, &now);
                crashconf_deinit(&conf);
        }
        return 0;
}

/* crash.json's count of crash @id (0 when it cannot be read). */
static uint64_t stored_count(const char *out_dir, const char *id, cJSON **ret_report)
{
        cJSON *report = NULL;
        uint8_t *input = NULL;
        size_t len;
        char err[1024];

        *ret_report = NULL;
        if (crashstore_load(out_dir, id, &report, &input, &len, err, sizeof(err)) < 0)
                return 0;
        free(input);
        int64_t n = msg_int(report, "count", 1);
        *ret_report = report;
        return n > 0 ? (uint64_t)n : 1;
}

/* The index of @id among the crashes stored before the corpus replay, or
 * SIZE_MAX. */
static size_t known_index(const Regress *g, const char *id)
{
        for (size_t i = 0; i < g->n_ids; i++)
                if (strcmp(g->ids[i], id) == 0)
                        return i;
        return SIZE_MAX;
}

/* A crash the corpus replay stored: new, or a known one seen again. */
static int corpus_finding(Regress *g, const char *id, const cJSON *report, bool is_new)
{
        const char *kind = msg_str(report, "kind", "?");
        const char *why = quarantine_find(g->quarantine, id, msg_str(report, "signature", NULL));
        cJSON *item = cJSON_CreateObject();
        if (!item || !cJSON_AddItemToArray(g->found, item) ||
            !cJSON_AddStringToObject(item, "id", id) ||
            !cJSON_AddStringToObject(item, "kind", kind) ||
            !cJSON_AddBoolToObject(item, "new", is_new) ||
            !cJSON_AddBoolToObject(item, "quarantined", why != NULL))
                return -ENOMEM;
        if (why) {
                g->corpus_quarantined++;
                say("quarantined", id, kind, "found by the corpus replay; quarantined");
        } else {
                g->corpus_new++;
                say(is_new ? "NEW" : "REPRODUCED", id, kind,
                    is_new ? msg_str(report, "message", "") : "found again by the corpus replay");
        }
        return 0;
}

/* Phase 2: the corpus, once, through the engine; then what it stored. */
static int phase_corpus(Regress *g)
{
        SfRunConfig *run = &g->cfg->run;
        char **ids = NULL;
        size_t n = 0;

        run->seeds_only = true;
        run->keep_going = true;
        run->no_reduce = true; /* the corpus is replayed, not edited */
        int ran = engine_run(run);
        if (ran < 0)
                return ran;
        int r = crashstore_list(run->out_dir, &ids, &n);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                log_error("cannot read %s/crashes: %s", run->out_dir, strerror(-r));
                return r;
        }
        for (size_t i = 0; i < n && r == 0; i++) {
                cJSON *report;
                uint64_t count = stored_count(run->out_dir, ids[i], &report);
                size_t k = known_index(g, ids[i]);
                if (report && (k == SIZE_MAX || count > g->counts[k]))
                        r = corpus_finding(g, ids[i], report, k == SIZE_MAX);
                cJSON_Delete(report);
        }
        crashstore_ids_free(ids, n);
        /* A crash the replay found but could not rebuild (its warning was
         * printed) is a failure all the same. */
        if (r == 0 && ran == ENGINE_RUN_CRASHED && g->corpus_new == 0) {
                g->corpus_new++;
                say("LOST", "-", "-", "the corpus replay found a crash it could not store");
        }
        return r;
}

/* The crashes stored now, and their counts (to tell what the corpus
 * replay adds). */
static int list_stored(Regress *g)
{
        int r = crashstore_list(g->cfg->run.out_dir, &g->ids, &g->n_ids);
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                log_error("cannot read %s/crashes: %s", g->cfg->run.out_dir, strerror(-r));
                return r;
        }
        g->counts = calloc(g->n_ids + 1, sizeof(*g->counts));
        if (!g->counts)
                return -ENOMEM;
        for (size_t i = 0; i < g->n_ids; i++) {
                cJSON *report;
                g->counts[i] = stored_count(g->cfg->run.out_dir, g->ids[i], &report);
                cJSON_Delete(report);
        }
        return 0;
}

static int outcome(const Regress *g)
{
        if (g->reproduced || g->corpus_new)
                return REGRESS_FAILED;
        return g->unreadable ? REGRESS_UNREADABLE : REGRESS_PASSED;
}

/* @s as XML character data or an attribute value: made printable first
 * (core/termsafe.h: XML 1.0 has no place for most control characters),
 * then the five markup characters escaped. */
static void xml_put(FILE *f, const char *s)
{
        char safe[TERMSAFE_BUF];
        termsafe_str(safe, sizeof(safe), s, 1024);
        for (const char *p = safe; *p; p++) {
                switch (*p) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&apos;", f);
                        break;
                default:
                        fputc(*p, f);
                }
        }
}

/* One <testcase> for a verdict of regress.json (@item: a stored crash, or
 * a crash the corpus replay stored when @corpus). */
static void junit_case(FILE *f, const cJSON *item, bool corpus)
{
        const char *verdict = msg_str(item, "verdict", "");
        bool quarantined =
            corpus ? msg_bool(item, "quarantined", 0) : !strcmp(verdict, "quarantined");
        fputs("    <testcase classname=\"snapfuzz.", f);
        fputs(corpus ? "corpus" : "stored", f);
        fputs("\" name=\"", f);
        xml_put(f, msg_str(item, "id", "?"));
        fputs(" (", f);
        xml_put(f, msg_str(item, "kind", "?"));
        fputs(")\">\n", f);
        if (quarantined) {
                fputs("      <skipped message=\"quarantined: ", f);
                xml_put(f, msg_str(item, "quarantine_reason", ""));
                fputs("\"/>\n", f);
        } else if (corpus || !strcmp(verdict, "reproduced")) {
                fputs("      <failure type=\"", f);
                xml_put(f, msg_str(item, corpus ? "kind" : "now_kind", "?"));
                fputs("\" message=\"", f);
                xml_put(f, corpus ? (msg_bool(item, "new", 0)
                                         ? "a new crash found by the corpus replay"
                                         : "found again by the corpus replay")
                                  : msg_str(item, "now_message", "it still crashes"));
                fputs("\"/>\n", f);
        } else if (!strcmp(verdict, "unreadable")) {
                fputs("      <error message=\"the crash record cannot be replayed\"/>\n", f);
        }
        fputs("    </testcase>\n", f);
}

/* --junit FILE: the verdicts as JUnit XML, one test per crash (a failure
 * when it reproduced or is new, skipped when quarantined, an error when
 * its record cannot be replayed), written atomically. 0 or -errno after a
 * line. */
static int write_junit(const Regress *g)
{
        char *xml = NULL;
        size_t len = 0;
        const cJSON *item;
        FILE *f = open_memstream(&xml, &len);
        if (!f)
                return -ENOMEM;
        unsigned tests = cJSON_GetArraySize(g->crashes) + cJSON_GetArraySize(g->found);
        fprintf(f,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<testsuites>\n"
                "  <testsuite name=\"snapfuzz regress\" tests=\"%u\" failures=\"%u\" "
                "errors=\"%u\" skipped=\"%u\">\n",
                tests, g->reproduced + g->corpus_new, g->unreadable,
                g->quarantined + g->corpus_quarantined);
        cJSON_ArrayForEach(item, g->crashes) junit_case(f, item, false);
        cJSON_ArrayForEach(item, g->found) junit_case(f, item, true);
        fputs("  </testsuite>\n</testsuites>\n", f);
        if (fclose(f) != 0) {
                free(xml);
                return -ENOMEM;
        }
        /* Atomically, next to the file: a temporary in its directory. */
        const char *path = g->cfg->junit_path, *slash = strrchr(path, '/');
        const char *base = slash ? slash + 1 : path;
        char dir[PATH_MAX];
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = dirfd < 0 ? -errno : fs_write_atomic(dirfd, base, xml, len);
        if (dirfd >= 0)
                close(dirfd);
        free(xml);
        if (r < 0)
                log_error("cannot write %s: %s", g->cfg->junit_path, strerror(-r));
        return r;
}

/* Phase 3: OUT/regress.json. 0 or a negative errno after a line. */
static int write_report(Regress *g)
{
        static const char *const results[] = {"pass", "fail", "unreadable"};
        char at[40], *text;
        size_t len;
        cJSON *counts = cJSON_AddObjectToObject(g->report, "counts");

        crashstore_now_iso(at, sizeof(at));
        if (!counts || !cJSON_AddStringToObject(g->report, "result", results[outcome(g)]) ||
            !cJSON_AddStringToObject(g->report, "at", at) ||
            !cJSON_AddNumberToObject(counts, "reproduced", g->reproduced) ||
            !cJSON_AddNumberToObject(counts, "fixed", g->fixed) ||
            !cJSON_AddNumberToObject(counts, "quarantined", g->quarantined) ||
            !cJSON_AddNumberToObject(counts, "unreadable", g->unreadable) ||
            !cJSON_AddNumberToObject(counts, "corpus_crashes", g->corpus_new) ||
            !cJSON_AddNumberToObject(counts, "corpus_quarantined", g->corpus_quarantined))
                return -ENOMEM;
        int r = msg_format_line(g->report, 1, &text, &len);
        if (r < 0)
                return r;
        int dirfd = open(g->cfg->run.out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = dirfd < 0 ? -errno : fs_write_atomic(dirfd, REGRESS_REPORT_FILE, text, len);
        if (dirfd >= 0)
                close(dirfd);
        free(text);
        if (r < 0)
                log_error("cannot write %s/%s: %s", g->cfg->run.out_dir, REGRESS_REPORT_FILE,
                          strerror(-r));
        return r;
}

static void summary(const Regress *g)
{
        printf("regress: %zu stored crash%s: %u reproduced, %u fixed, %u quarantined", g->n_ids,
               g->n_ids == 1 ? "" : "es", g->reproduced, g->fixed, g->quarantined);
        if (g->unreadable)
                printf(", %u unreadable", g->unreadable);
        printf("; corpus replay: %u crash%s", g->corpus_new, g->corpus_new == 1 ? "" : "es");
        if (g->corpus_quarantined)
                printf(" (and %u quarantined)", g->corpus_quarantined);
        printf("\nregress: %s (%s/%s)\n",
               outcome(g) == REGRESS_FAILED       ? "FAIL"
               : outcome(g) == REGRESS_UNREADABLE ? "FAIL: stored crashes could not be replayed"
                                                  : "PASS",
               g->cfg->run.out_dir, REGRESS_REPORT_FILE);
}

/* The report's skeleton. */
static int report_new(Regress *g)
{
        g->report = cJSON_CreateObject();
        cJSON *corpus = cJSON_AddObjectToObject(g->report, "corpus");
        g->crashes = cJSON_AddArrayToObject(g->report, "crashes");
        g->found = corpus ? cJSON_AddArrayToObject(corpus, "found") : NULL;
        if (!g->report || !g->crashes || !g->found ||
            !cJSON_AddNumberToObject(g->report, "version", 1) ||
            !cJSON_AddStringToObject(g->report, "target", g->cfg->run.target_abs))
                return -ENOMEM;
        return 0;
}

/* The lock of an existing output directory, held while the stored crashes
 * run: 0 with the lock's descriptor in *@ret_fd (-1: no directory yet),
 * -EBUSY after a line, or another -errno. */
static int lock_out(const char *out_dir, int *ret_fd)
{
        pid_t holder = 0;
        *ret_fd = -1;
        int dirfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return errno == ENOENT ? 0 : -errno;
        int r = fs_lock_dir(dirfd, ".lock", ret_fd, &holder);
        close(dirfd);
        if (r == -EBUSY)
                log_error("%s is in use by a run (pid %ld); regress once it has ended", out_dir,
                          (long)holder);
        else if (r < 0)
                log_error("cannot lock %s: %s", out_dir, strerror(-r));
        return r;
}

int regress_run(RegressConfig *cfg)
{
        Regress g = {.cfg = cfg};
        char err[1024];
        int lock_fd = -1;

        cfg->trust.target = cfg->run.target_abs;
        int r = quarantine_load(cfg->run.out_dir, &g.quarantine, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                return r == -EBADMSG ? -EINVAL : r;
        }
        if ((r = report_new(&g)) < 0 || (r = lock_out(cfg->run.out_dir, &lock_fd)) < 0 ||
            (r = list_stored(&g)) < 0 || (r = phase_stored(&g)) < 0)
                goto out;
        /* The corpus replay is a run: it takes the lock itself. */
        if (lock_fd >= 0)
                close(lock_fd);
        lock_fd = -1;
        if ((r = phase_corpus(&g)) < 0 || (r = write_report(&g)) < 0 ||
            (cfg->junit_path && (r = write_junit(&g)) < 0))
                goto out;
        summary(&g);
        r = outcome(&g);
out:
        if (r == -ENOMEM)
                log_error("out of memory");
        if (lock_fd >= 0)
                close(lock_fd);
        crashstore_ids_free(g.ids, g.n_ids);
        free(g.counts);
        cJSON_Delete(g.report);
        quarantine_free(g.quarantine);
        return r;
}
