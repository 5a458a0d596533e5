/*
 * The table is built from crash.json alone (and the size of `minimized`
 * when crash.json does not give it); nothing is run. Each entry is loaded
 * with crashstore_load, so an entry that is not a crash record at all is
 * shown as corrupt, with the reason, and the listing goes on; the finer
 * checks of recovery/crashconf.c (field types and ranges, the stored
 * sandbox, the target) are left to `reproduce` and `minimize`. Every stored
 * string reaches the terminal through core/termsafe.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cliopt.h"
#include "app/crashes_cmd.h"
#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/log.h"
#include "core/msg.h"
#include "core/termsafe.h"
#include "engine/quarantine.h"
#include "snapfuzz/exitcode.h"

#include "snapfuzz/banned.h"

#define CRASHES_MESSAGE_WIDTH 60

typedef struct CrashesArgs {
        const char *out_dir;
        const char *quarantine;   /* --quarantine ID */
        const char *unquarantine; /* --unquarantine ID */
        const char *reason;       /* --reason TEXT */
} CrashesArgs;

static void help(void)
{
        printf("usage: snapfuzz crashes [--out DIR]\n"
               "       snapfuzz crashes [--out DIR] --quarantine ID [--reason TEXT]\n"
               "       snapfuzz crashes [--out DIR] --unquarantine ID\n"
               "List the crashes stored in an output directory (default\n"
               "./snapfuzz-out): id, kind, count, lengths, when, and the message.\n"
               "  --quarantine ID    a known crash: kept, counted when found again, but it\n"
               "                     no longer stops `run` or fails `regress` (written to\n"
               "                     OUT/quarantine.json)\n"
               "  --reason TEXT      why (shown by `crashes` and `regress`)\n"
               "  --unquarantine ID  take it off the list again\n"
               "examples:\n"
               "  snapfuzz crashes --out out\n"
               "  snapfuzz reproduce ID --out out     # then replay one\n"
               "  snapfuzz crashes --out out --quarantine ID --reason 'upstream bug #12'\n");
}

static int parse_args(int argc, char **argv, CrashesArgs *a)
{
        enum { OPT_OUT = 1000, OPT_HELP, OPT_QUARANTINE, OPT_UNQUARANTINE, OPT_REASON };
        static const struct option opts[] = {
            {"out", required_argument, NULL, OPT_OUT},
            {"help", no_argument, NULL, OPT_HELP},
            {"quarantine", required_argument, NULL, OPT_QUARANTINE},
            {"unquarantine", required_argument, NULL, OPT_UNQUARANTINE},
            {"reason", required_argument, NULL, OPT_REASON},
            {0},
        };
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_OUT:
                        a->out_dir = optarg;
                        break;
                case OPT_QUARANTINE:
                        a->quarantine = optarg;
                        break;
                case OPT_UNQUARANTINE:
                        a->unquarantine = optarg;
                        break;
                case OPT_REASON:
                        a->reason = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        help();
                        return -1;
                default:
                        return cliopt_bad_in(c, argv, opts, "crashes");
                }
        }
        if (argc - optind != 0) {
                log_error("crashes takes no operands: snapfuzz crashes [--out DIR]");
                return SF_EXIT_USAGE;
        }
        if (a->quarantine && a->unquarantine) {
                log_error("give --quarantine or --unquarantine, not both");
                return SF_EXIT_USAGE;
        }
        if (a->reason && !a->quarantine) {
                log_error("--reason goes with --quarantine ID");
                return SF_EXIT_USAGE;
        }
        if (a->reason && strlen(a->reason) > QUARANTINE_MAX_REASON) {
                log_error("--reason is longer than %u bytes", QUARANTINE_MAX_REASON);
                return SF_EXIT_USAGE;
        }
        return 0;
}

/* --quarantine ID: the crash must be stored (its signature is kept with
 * it, so that the same bug under another id is held too). */
static int quarantine_put(const CrashesArgs *a, Quarantine *q)
{
        cJSON *report = NULL;
        uint8_t *input = NULL;
        size_t len;
        char err[1024], safe[TERMSAFE_BUF];

        if (!crashstore_id_valid(a->quarantine)) {
                log_error("'%s' is not a crash id; snapfuzz crashes --out %s lists them",
                          termsafe_str(safe, sizeof(safe), a->quarantine, 128), a->out_dir);
                return SF_EXIT_USAGE;
        }
        int r = crashstore_load(a->out_dir, a->quarantine, &report, &input, &len, err, sizeof(err));
        if (r < 0) {
                log_error("%s", termsafe_str(safe, sizeof(safe), err, TERMSAFE_MAX));
                return r == -ENOMEM ? SF_EXIT_INTERNAL : SF_EXIT_USAGE;
        }
        const char *sig = msg_str(report, "signature", "");
        r = quarantine_add(q, a->quarantine, strlen(sig) <= QUARANTINE_MAX_SIGNATURE ? sig : "",
                           a->reason);
        cJSON_Delete(report);
        free(input);
        if (r == -E2BIG) {
                log_error("%s/%s already holds %u crashes; take some off with --unquarantine",
                          a->out_dir, QUARANTINE_FILE, QUARANTINE_MAX_ENTRIES);
                return SF_EXIT_USAGE;
        }
        return r < 0 ? SF_EXIT_INTERNAL : 0;
}

/* Two edits of the list at once would lose one: each holds
 * OUT/.quarantine.lock (a campaign holds OUT/.lock, and may run on). 0 with
 * the lock in *@ret_fd, or an exit status after a line. */
static int edit_lock(const char *out_dir, int *ret_fd)
{
        pid_t holder = 0;
        *ret_fd = -1;
        int dirfd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int r = dirfd < 0 ? -EACCES : fs_lock_dir(dirfd, ".quarantine.lock", ret_fd, &holder);
        if (dirfd >= 0)
                close(dirfd);
        if (r == -EBUSY) {
                log_error("another snapfuzz (pid %ld) is changing %s/%s; try again when it is done",
                          (long)holder, out_dir, QUARANTINE_FILE);
                return SF_EXIT_USAGE;
        }
        if (r < 0) {
                log_error("cannot lock %s/%s: %s", out_dir, QUARANTINE_FILE, strerror(-r));
                return SF_EXIT_INTERNAL;
        }
        return 0;
}

/* --quarantine or --unquarantine: the list is read, changed and written
 * back atomically, under edit_lock. */
static int quarantine_edit(const CrashesArgs *a)
{
        Quarantine *q;
        char err[1024], safe[TERMSAFE_BUF];
        const char *id = a->quarantine ? a->quarantine : a->unquarantine;

        int lock_fd = -1;
        int r = edit_lock(a->out_dir, &lock_fd);
        if (r)
                return r;
        r = quarantine_load(a->out_dir, &q, err, sizeof(err));
        if (r < 0) {
                log_error("%s", err);
                close(lock_fd);
                return r == -EBADMSG ? SF_EXIT_USAGE : SF_EXIT_INTERNAL;
        }
        if (a->quarantine) {
                r = quarantine_put(a, q);
        } else if (quarantine_remove(q, id) < 0) {
                log_error("crash %s is not quarantined in %s/%s",
                          termsafe_str(safe, sizeof(safe), id, 128), a->out_dir, QUARANTINE_FILE);
                r = SF_EXIT_USAGE;
        }
        if (r == 0 && (r = quarantine_save(q, a->out_dir)) < 0) {
                log_error("cannot write %s/%s: %s", a->out_dir, QUARANTINE_FILE, strerror(-r));
                r = SF_EXIT_INTERNAL;
        }
        if (r == 0)
                printf("crash %s %s (%s/%s: %zu quarantined)\n", id,
                       a->quarantine ? "quarantined: it no longer stops a run or fails regress"
                                     : "is no longer quarantined",
                       a->out_dir, QUARANTINE_FILE, quarantine_count(q));
        quarantine_free(q);
        close(lock_fd);
        return r;
}

/* The minimized length: crash.json's minimized_len, else the size of the
 * file, else -1. */
static long long minimized_len(const char *out_dir, const char *id, const cJSON *report)
{
        int64_t n = msg_int(report, "minimized_len", -1);
        if (n >= 0)
                return n;
        char path[4096];
        struct stat st;
        snprintf(path, sizeof(path), "%s/crashes/%s/minimized", out_dir, id);
        return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Prints @s on one line, made inert (core/termsafe.h), at most @width
 * characters; "..." marks a cut. */
static void print_clipped(const char *s, size_t width)
{
        char safe[TERMSAFE_BUF];
        size_t chars = 0, i = 0;

        termsafe_str(safe, sizeof(safe), s, TERMSAFE_MAX);
        /* Count characters, not bytes: the text is valid UTF-8 now. */
        for (; safe[i]; i++) {
                if (((unsigned char)safe[i] & 0xc0) == 0x80)
                        continue;
                if (chars == width - 3) {
                        size_t rest = 0;
                        for (size_t k = i; safe[k]; k++)
                                rest += ((unsigned char)safe[k] & 0xc0) != 0x80;
                        if (rest > 3)
                                break;
                }
                chars++;
        }
        fwrite(safe, 1, i, stdout);
        if (safe[i])
                fputs("...", stdout);
        putchar('\n');
}

static void print_row(const char *out_dir, const char *id, const cJSON *report)
{
        char min[24];
        long long m = minimized_len(out_dir, id, report);
        if (m >= 0)
                snprintf(min, sizeof(min), "%lld", m);
        else
                snprintf(min, sizeof(min), "-");
        char kind[80], first[100], last[100];
        termsafe_str(kind, sizeof(kind), msg_str(report, "kind", "?"), 15);
        termsafe_str(first, sizeof(first), msg_str(report, "first_seen", "-"), 20);
        termsafe_str(last, sizeof(last), msg_str(report, "last_seen", "-"), 20);
        printf("%-16s  %-15s  %5lld  %7lld  %9s  %-20s  %-20s  %-5s  ", id, kind,
               (long long)msg_int(report, "count", 1), (long long)msg_int(report, "input_len", -1),
               min, first, last, msg_bool(report, "reproduced", 0) ? "yes" : "no");
        print_clipped(msg_str(report, "message", ""), CRASHES_MESSAGE_WIDTH);
}

/* The quarantined crashes under the table, one line each, with the
 * reason; a list that cannot be read is a warning here (the listing goes
 * on), an error for the commands that act on it. */
static void print_quarantine(const char *out_dir, char **ids, size_t n)
{
        Quarantine *q;
        char err[1024], safe[TERMSAFE_BUF];

        if (quarantine_load(out_dir, &q, err, sizeof(err)) < 0) {
                log_warn("%s", err);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const char *why = quarantine_find(q, ids[i], NULL);
                if (why)
                        printf("quarantined %s%s%s\n", ids[i], why[0] ? ": " : "",
                               termsafe_str(safe, sizeof(safe), why, 512));
        }
        quarantine_free(q);
}

int crashes_cmd(int argc, char **argv)
{
        CrashesArgs a = {.out_dir = "snapfuzz-out"};
        char **ids = NULL;
        size_t n = 0, corrupt = 0;
        const char *example = NULL; /* an id for the hint */
        struct stat st;

        int r = parse_args(argc, argv, &a);
        if (r)
                return r < 0 ? SF_EXIT_OK : r;
        const char *out_dir = a.out_dir;
        if (stat(out_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
                log_error("no output directory %s (name one with --out DIR)", out_dir);
                return SF_EXIT_USAGE;
        }
        if (a.quarantine || a.unquarantine)
                return quarantine_edit(&a);
        r = crashstore_list(out_dir, &ids, &n);
        if (r == -ENOENT || (r == 0 && n == 0)) {
                printf("no crashes stored in %s/crashes\n", out_dir);
                return SF_EXIT_OK;
        }
        if (r < 0) {
                log_error("cannot read %s/crashes: %s", out_dir, strerror(-r));
                return SF_EXIT_INTERNAL;
        }
        printf("%-16s  %-15s  %5s  %7s  %9s  %-20s  %-20s  %-5s  %s\n", "ID", "KIND", "COUNT",
               "INPUT", "MINIMIZED", "FIRST SEEN", "LAST SEEN", "REPRO", "MESSAGE");
        for (size_t i = 0; i < n; i++) {
                cJSON *report = NULL;
                uint8_t *input = NULL;
                size_t len;
                char err[1024];
                if (crashstore_load(out_dir, ids[i], &report, &input, &len, err, sizeof(err)) < 0) {
                        char safe[TERMSAFE_BUF];
                        printf("%-16s  %-15s  %s\n", ids[i], "CORRUPT",
                               termsafe_str(safe, sizeof(safe), err, TERMSAFE_MAX));
                        corrupt++;
                        continue;
                }
                print_row(out_dir, ids[i], report);
                if (!example)
                        example = ids[i];
                cJSON_Delete(report);
                free(input);
        }
        printf("%zu crash%s in %s/crashes", n, n == 1 ? "" : "es", out_dir);
        if (corrupt)
                printf(", %zu corrupt", corrupt);
        /* The hint names a real id, one whose record loads. */
        if (example) {
                char safe[TERMSAFE_BUF];
                printf("; replay one with: snapfuzz reproduce %s --out %s\n",
                       termsafe_str(safe, sizeof(safe), example, 64), out_dir);
        } else {
                printf("\n");
        }
        print_quarantine(out_dir, ids, n);
        crashstore_ids_free(ids, n);
        return SF_EXIT_OK;
}
