/*
 * libFuzzer's log lines and artifacts from the engine's events. The line
 * shapes are those of the libFuzzer that ships with clang 14 (the one on
 * Debian bookworm), which ClusterFuzz's and OSS-Fuzz's parsers read:
 *   #N<TAB>WHAT cov: E ft: F corp: C/Sb exec/s: X rss: RMb
 * with WHAT one of INITED, NEW, REDUCE, pulse and DONE, and the corpus size
 * as b/Kb/Mb. "cov" is the number of coverage counters hit (libFuzzer
 * counts PCs; the counters are one per PC-table entry).
 *
 * Events arrive on the coordinator's thread, one at a time; everything is
 * printed to stderr, as libFuzzer does. An artifact is written atomically
 * (temporary file, fsync, rename) and its path printed only once it is
 * complete, so a tool that reads the line finds the whole file.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/hash.h"
#include "fuzzer/lfreport.h"
#include "fuzzer/sanreport.h"

#include "snapfuzz/banned.h"

/* libFuzzer prints an artifact in hex and Base64 up to this size. */
#define LFREPORT_PRINT_MAX 256

unsigned long lfreport_rss_mb(void)
{
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) < 0)
                return 0;
        return (unsigned long)ru.ru_maxrss >> 10;
}

static void print_stats(const SfEvent *e, const char *what)
{
        char corp[48] = "";
        uint64_t b = e->corpus_bytes;
        if (e->corpus) {
                if (b < (1u << 14))
                        snprintf(corp, sizeof(corp), " corp: %zu/%" PRIu64 "b", e->corpus, b);
                else if (b < (1u << 24))
                        snprintf(corp, sizeof(corp), " corp: %zu/%" PRIu64 "Kb", e->corpus,
                                 b >> 10);
                else
                        snprintf(corp, sizeof(corp), " corp: %zu/%" PRIu64 "Mb", e->corpus,
                                 b >> 20);
        }
        uint64_t rate = e->elapsed_s > 0 ? (uint64_t)((double)e->execs / e->elapsed_s) : 0;
        fprintf(stderr,
                "#%" PRIu64 "\t%s cov: %" PRIu64 " ft: %" PRIu64 "%s exec/s: %" PRIu64
                " rss: %luMb\n",
                e->execs, what, e->edges, e->features, corp, rate, lfreport_rss_mb());
}

const char *lfreport_artifact_kind(const char *kind)
{
        if (strcmp(kind, "timeout") == 0)
                return "timeout-";
        if (strcmp(kind, "oom") == 0)
                return "oom-";
        if (strcmp(kind, "leak") == 0)
                return "leak-";
        return "crash-";
}

int lfreport_write_artifact(const char *prefix, const char *exact, const char *kind_prefix,
                            const uint8_t *data, size_t len, char *ret_path, size_t cap)
{
        char sha[SHA1_HEX_LEN];
        char dir[4096];
        if (exact) {
                snprintf(ret_path, cap, "%s", exact);
        } else {
                sha1_hex(data, len, sha);
                snprintf(ret_path, cap, "%s%s%s", prefix, kind_prefix, sha);
        }
        const char *slash = strrchr(ret_path, '/');
        const char *name = slash ? slash + 1 : ret_path;
        if (!*name)
                return -EISDIR;
        if (slash == ret_path)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - ret_path) : 1,
                         slash ? ret_path : ".");
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        int r = fs_write_atomic(dfd, name, data, len);
        close(dfd);
        return r;
}

static void print_unit(const uint8_t *data, size_t len)
{
        static const char b64[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        if (len > LFREPORT_PRINT_MAX)
                return;
        for (size_t i = 0; i < len; i++)
                fprintf(stderr, "0x%x,", data[i]);
        fprintf(stderr, "\n");
        for (size_t i = 0; i < len; i++) {
                uint8_t c = data[i];
                if (c == '\\' || c == '"')
                        fprintf(stderr, "\\%c", c);
                else if (c >= 32 && c < 127)
                        fputc(c, stderr);
                else
                        fprintf(stderr, "\\x%02x", c);
        }
        fprintf(stderr, "\nBase64: ");
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)data[i] << 16;
                if (i + 1 < len)
                        v |= (uint32_t)data[i + 1] << 8;
                if (i + 2 < len)
                        v |= data[i + 2];
                fputc(b64[(v >> 18) & 63], stderr);
                fputc(b64[(v >> 12) & 63], stderr);
                fputc(i + 1 < len ? b64[(v >> 6) & 63] : '=', stderr);
                fputc(i + 2 < len ? b64[v & 63] : '=', stderr);
        }
        fprintf(stderr, "\n");
}

/* libFuzzer's own report lines for what no sanitizer reported (the
 * sanitizer's report, when there is one, is in the target's output that
 * went by just before). */
static void print_crash_lines(const LfReport *r, const SfEvent *e)
{
        int pid = (int)getpid();
        const char *k = e->crash_kind;
        if (strcmp(k, "timeout") == 0) {
                fprintf(stderr, "==%d== ERROR: libFuzzer: timeout after %ld seconds\n", pid,
                        r->timeout_s);
                fprintf(stderr, "snapfuzz: %s\n", e->crash_message);
                fprintf(stderr, "SUMMARY: libFuzzer: timeout\n");
        } else if (strcmp(k, "oom") == 0) {
                fprintf(stderr, "==%d== ERROR: libFuzzer: out-of-memory (exceeds: %ldMb)\n", pid,
                        r->rss_limit_mb);
                fprintf(stderr, "snapfuzz: %s\n", e->crash_message);
                fprintf(stderr, "   To change the out-of-memory limit use -rss_limit_mb=<N>\n\n");
                fprintf(stderr, "SUMMARY: libFuzzer: out-of-memory\n");
        } else if (strcmp(k, "asan") != 0 && strcmp(k, "ubsan") != 0 && strcmp(k, "leak") != 0 &&
                   strcmp(k, "stack-overflow") != 0) {
                fprintf(stderr, "==%d== ERROR: libFuzzer: deadly signal (snapfuzz: %s: %s)\n", pid,
                        k, e->crash_message);
                fprintf(stderr, "SUMMARY: libFuzzer: deadly signal\n");
        }
}

/* A leak is confirmed by the recovery helper, whose output goes to its
 * log: LeakSanitizer's report is shown from crash.json instead. */
static void print_stored_report(const SfEvent *e)
{
        char *out = NULL;
        if (strcmp(e->crash_kind, "leak") != 0 || engine_crash_field(e->crash_dir, "output", &out))
                return;
        fprintf(stderr, "%s%s", out, out[0] && out[strlen(out) - 1] != '\n' ? "\n" : "");
        free(out);
}

static void on_crash(LfReport *r, const SfEvent *e)
{
        char path[4200], in[4200];
        uint8_t *data = NULL;
        size_t len = 0;
        bool first = !r->first_kind[0];

        if (first)
                snprintf(r->first_kind, sizeof(r->first_kind), "%s", e->crash_kind);
        if (sanreport_write_dir(stderr, e->crash_dir, (int)getpid()) < 0) {
                print_stored_report(e);
                print_crash_lines(r, e);
        }
        snprintf(in, sizeof(in), "%s/input", e->crash_dir);
        int err = fs_read_file(AT_FDCWD, in, SIZE_MAX / 2, &data, &len);
        /* -exact_artifact_path names one file: the first crash's. */
        if (err == 0 && (first || !r->exact_artifact_path))
                err = lfreport_write_artifact(r->artifact_prefix, r->exact_artifact_path,
                                              lfreport_artifact_kind(e->crash_kind), data, len,
                                              path, sizeof(path));
        else if (err == 0)
                goto out;
        if (err < 0) {
                r->artifact_failed = true;
                fprintf(stderr,
                        "ERROR: snapfuzz: cannot write the artifact of crash %s: %s (it "
                        "is in %s)\n",
                        e->crash_id, strerror(-err), e->crash_dir);
                goto out;
        }
        print_unit(data, len);
        fprintf(stderr, "artifact_prefix='%s'; Test unit written to %s\n", r->artifact_prefix,
                path);
out:
        free(data);
}

void lfreport_event(const SfEvent *e, void *ctx)
{
        LfReport *r = ctx;
        r->last_execs = e->execs;
        r->last_elapsed_s = e->elapsed_s;
        /* libFuzzer's log ends with its crash report: what the engine still
         * collects while it stops (finds of batches in flight) is not
         * shown; a crash that was already queued is (it gets its artifact
         * too, as nothing found is dropped). */
        if (r->first_kind[0] && e->type != SF_EVENT_CRASH)
                return;
        switch (e->type) {
        case SF_EVENT_INITED:
                if (r->verbosity)
                        print_stats(e, "INITED");
                break;
        case SF_EVENT_NEW:
        case SF_EVENT_REDUCE:
                r->new_units += e->type == SF_EVENT_NEW;
                if (r->verbosity)
                        print_stats(e, e->type == SF_EVENT_NEW ? "NEW   " : "REDUCE");
                break;
        case SF_EVENT_PULSE:
                /* libFuzzer's rhythm: a line when the runs pass a power of
                 * two, not earlier than 2 s into the run. */
                if (r->verbosity && e->elapsed_s >= 2 && e->execs >= r->pulse_at) {
                        print_stats(e, "pulse ");
                        while (r->pulse_at <= e->execs)
                                r->pulse_at = r->pulse_at ? r->pulse_at * 2 : 1;
                }
                break;
        case SF_EVENT_CRASH:
                on_crash(r, e);
                break;
        case SF_EVENT_DONE:
                if (r->verbosity)
                        print_stats(e, "DONE  ");
                break;
        }
}

void lfreport_final_stats(const LfReport *r)
{
        if (!r->print_final_stats)
                return;
        uint64_t rate =
            r->last_elapsed_s > 0 ? (uint64_t)((double)r->last_execs / r->last_elapsed_s) : 0;
        fprintf(stderr, "stat::number_of_executed_units: %" PRIu64 "\n", r->last_execs);
        fprintf(stderr, "stat::average_exec_per_sec:     %" PRIu64 "\n", rate);
        fprintf(stderr, "stat::new_units_added:          %" PRIu64 "\n", r->new_units);
        fprintf(stderr, "stat::slowest_unit_time_sec:    0\n");
        fprintf(stderr, "stat::peak_rss_mb:              %lu\n", lfreport_rss_mb());
}
