/*
 * Only what snapfuzz and libFuzzer print is modelled; each rule names the
 * ClusterFuzz regex it re-expresses (POSIX extended syntax: \\s is
 * [[:space:]], \\d is [0-9]). Lines are matched from their start, as
 * Python's re.match does.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lfcbucket.h"

/* The crash bucket ClusterFuzz's stack parser gives the output
 * (clusterfuzz src/clusterfuzz/stacktraces/__init__.py StackParser.parse,
 * the rules for Linux sanitizer and libFuzzer output; regexes from
 * stacktraces/constants.py). Only what snapfuzz and libFuzzer print is
 * modelled: extra-sanitizer lines, SAN_SEGV_REGEX, SAN_ADDR_REGEX, the
 * ABRT/ILL/TRAP skip after a sticky type, libFuzzer's deadly signal /
 * target exited / timeout (applied only while no type is set), and
 * SAN_STACK_FRAME_REGEX frames for the state. */

static const char *const LFC_STICKY[] = {"Arbitrary file open", "Command injection", "Timeout",
                                         "Out-of-memory", NULL};

static bool lfc_sticky(const char *type)
{
        for (int i = 0; LFC_STICKY[i]; i++)
                if (!strcmp(type, LFC_STICKY[i]))
                        return true;
        return false;
}

/* fix_sanitizer_crash_type: lower, '_' to '-', capitalised. */
static void lfc_fix_type(char *t)
{
        for (char *p = t; *p; p++) {
                *p = (char)(*p == '_' ? '-' : (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p));
        }
        if (t[0] >= 'a' && t[0] <= 'z')
                t[0] = (char)(t[0] - 32);
        size_t n = strlen(t);
        while (n && t[n - 1] == ' ')
                t[--n] = '\0';
}

/* Frames ClusterFuzz ignores (STACK_FRAME_IGNORE_REGEXES, the entries
 * that can appear here): the fuzzing engine, sanitizer runtimes, libc. */
static bool lfc_ignored_frame(const char *fn)
{
        static const char *const prefixes[] = {
            "fuzzer::", "__sanitizer", "__asan",  "__ubsan", "__interceptor_", "__libc_",
            "__GI_",    "_start",      "abort",   "raise",   "libc.so",        "snapfuzz",
            "sf_",      "lfrt_",       "dropin_", NULL};
        for (int i = 0; prefixes[i]; i++)
                if (!strncmp(fn, prefixes[i], strlen(prefixes[i])))
                        return true;
        return !strcmp(fn, "main") || !strcmp(fn, "LLVMFuzzerTestOneInput");
}

static void lfc_bucket_line(LfcBucket *b, const char *l, bool *has_fuzz_frame)
{
        regmatch_t m[8];
        regex_t rx;
#define LFC_ON(re) (regcomp(&rx, (re), REG_EXTENDED) == 0 && (regexec(&rx, l, 8, m, 0) == 0))
#define LFC_DONE regfree(&rx)
        if (strstr(l, "SUMMARY:"))
                return;
        if (LFC_ON("^(Address|Leak|Memory|UndefinedBehavior|Thread)Sanitizer:DEADLYSIGNAL")) {
                LFC_DONE;
                return;
        }
        LFC_DONE;
        if (LFC_ON("^.*[a-zA-Z]+Sanitizer: (ABRT|ILL|TRAP|breakpoint) ") && lfc_sticky(b->type)) {
                LFC_DONE;
                return;
        }
        LFC_DONE;
        if (LFC_ON("^.*([a-zA-Z]+Sanitizer).*(SEGV|access-violation) on unknown address "
                   "([xX0-9a-fA-F]+)")) {
                snprintf(b->type, sizeof(b->type), "UNKNOWN");
                b->nframes = 0;
                LFC_DONE;
                return;
        }
        LFC_DONE;
        if (!lfc_sticky(b->type) &&
            LFC_ON("^.*(ERROR: [a-zA-Z]+Sanitizer)[: ]*(.*) on (unknown address |address |)"
                   "([xX0-9a-fA-F]+)")) {
                snprintf(b->type, sizeof(b->type), "%.*s", (int)(m[2].rm_eo - m[2].rm_so),
                         l + m[2].rm_so);
                lfc_fix_type(b->type);
                if (!strcmp(b->type, "Unknown-crash"))
                        snprintf(b->type, sizeof(b->type), "UNKNOWN");
                b->nframes = 0;
        }
        LFC_DONE;
        if (!strcmp(b->type, "UNKNOWN") &&
            LFC_ON("^.*The signal is caused by a ([A-Z]+) memory access.")) {
                if (strncmp(l + m[1].rm_so, "UNKNOWN", 7))
                        snprintf(b->type, sizeof(b->type), "UNKNOWN %.*s",
                                 (int)(m[1].rm_eo - m[1].rm_so), l + m[1].rm_so);
        }
        LFC_DONE;
        static const char *const extra[][2] = {
            {"===BUG DETECTED: Shell (corruption|injection)===", "Command injection"},
            {"===BUG DETECTED: Arbitrary file open===", "Arbitrary file open"},
            {"===BUG DETECTED: Arbitrary domain name resolution===", "Arbitrary DNS resolution"},
        };
        for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
                if (LFC_ON(extra[i][0]))
                        snprintf(b->type, sizeof(b->type), "%s", extra[i][1]);
                LFC_DONE;
        }
        if (LFC_ON("^.*ERROR:[[:space:]]*libFuzzer:[[:space:]]*timeout")) {
                snprintf(b->type, sizeof(b->type), "Timeout");
                b->nframes = 0;
        }
        LFC_DONE;
        /* OUT_OF_MEMORY_REGEX, the libFuzzer and sanitizer entries. */
        if (LFC_ON("^.*(libFuzzer: out-of-memory \\(|rss limit exhausted|Sanitizer: out of "
                   "memory|ERROR.*Sanitizer failed to allocate)")) {
                snprintf(b->type, sizeof(b->type), "Out-of-memory");
                b->nframes = 0;
        }
        LFC_DONE;
        static const char *const lf[][2] = {
            {"^.*ERROR:[[:space:]]*libFuzzer:[[:space:]]*deadly signal", "Fatal-signal"},
            {"^.*ERROR:[[:space:]]*libFuzzer:[[:space:]]*fuzz target exited", "Unexpected-exit"},
            {"^.*ERROR:[[:space:]]*libFuzzer:[[:space:]]*fuzz target overwrites its const input",
             "Overwrites-const-input"},
        };
        for (size_t i = 0; i < sizeof(lf) / sizeof(lf[0]); i++) {
                if (!b->type[0] && LFC_ON(lf[i][0])) {
                        snprintf(b->type, sizeof(b->type), "%s", lf[i][1]);
                        b->nframes = 0;
                }
                LFC_DONE;
        }
        /* SAN_STACK_FRAME_REGEX, the "in FUNC FILE:LINE[:COL]" and the
         * "in FUNC (MODULE+OFF)" forms. */
        if (LFC_ON(
                "^[[:space:]]*#([0-9]+)[[:space:]]+([xX0-9a-fA-F]+)[[:space:]]+in[[:space:]]*"
                "([^ ]+)( ([^ ]+):([0-9]+)(:([0-9]+))?| \\(([^+]+)(\\+([xX0-9a-fA-F]+))?\\))?")) {
                char fn[256];
                snprintf(fn, sizeof(fn), "%.*s", (int)(m[3].rm_eo - m[3].rm_so), l + m[3].rm_so);
                if (!strcmp(fn, "LLVMFuzzerTestOneInput"))
                        *has_fuzz_frame = true;
                if (!lfc_ignored_frame(fn) && b->nframes < 3)
                        snprintf(b->frames[b->nframes++], sizeof(b->frames[0]), "%s", fn);
        }
        LFC_DONE;
#undef LFC_ON
#undef LFC_DONE
}

void lfc_bucket(const char *out, LfcBucket *b, bool *has_fuzz_frame)
{
        memset(b, 0, sizeof(*b));
        *has_fuzz_frame = false;
        const char *p = out;
        while (*p) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char *l = strndup(p, len);
                lfc_bucket_line(b, l, has_fuzz_frame);
                free(l);
                p += len + (e ? 1 : 0);
        }
}
