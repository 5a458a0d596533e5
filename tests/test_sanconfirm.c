/*
 * Sanitizer confirmations: a crash of a target built with AddressSanitizer
 * or UBSan carries the sanitizer's own report and bug type (an input
 * over-read is ASan's heap-buffer-overflow, not a SEGV at the guard page;
 * a NULL write is ASan's SEGV on the zero page, kind null-deref), saved as
 * OUT/crashes/<id>/sanitizer.txt, and `reproduce` prints it. Each run
 * fuzzes tests/targets/sanconfirm.c from nothing; snapfuzz prints its seed
 * (shown with a failure).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

typedef struct Found {
        char *dir;
        char out[512];
        char *id;
        cJSON *crash; /* crash.json */
        char *report; /* sanitizer.txt, or NULL */
} Found;

/* Fuzzes @target into a fresh directory until its one crash is stored. */
static void find_crash(const char *target, Found *f)
{
        SfRun r;
        char path[800];
        size_t len;
        memset(f, 0, sizeof(*f));
        f->dir = sf_tmpdir();
        snprintf(f->out, sizeof(f->out), "%s/out", f->dir);
        const char *args[] = {"run", sf_target(target),  "--out", f->out, "--workers",
                              "1",   "--max-total-time", "120",   NULL};
        sf_run(&r, 300, args);
        cr_assert_eq(r.exit_code, 1, "%s: a crash (exit 1):\n%s", target, r.err);
        sf_run_free(&r);
        f->id = sf_only_crash(f->out);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", f->out, f->id);
        uint8_t *json = sf_read(path, &len);
        cr_assert_not_null(json, "%s", path);
        f->crash = cJSON_ParseWithLength((const char *)json, len);
        free(json);
        cr_assert_not_null(f->crash, "%s is JSON", path);
        snprintf(path, sizeof(path), "%s/crashes/%s/sanitizer.txt", f->out, f->id);
        f->report = (char *)sf_read(path, &len);
        if (f->report) {
                char *s = realloc(f->report, len + 1);
                cr_assert_not_null(s);
                s[len] = '\0';
                f->report = s;
        }
}

static void found_free(Found *f)
{
        cJSON_Delete(f->crash);
        free(f->report);
        free(f->id);
        free(f->dir);
}

static const char *field(const cJSON *o, const char *path)
{
        char key[64];
        const char *dot = strchr(path, '.');
        if (!dot)
                return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, path));
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        return field(cJSON_GetObjectItemCaseSensitive(o, key), dot + 1);
}

/* `snapfuzz reproduce` of the crash: its stdout (the caller frees it). */
static char *reproduce(const Found *f)
{
        SfRun r;
        const char *args[] = {"reproduce", f->id, "--out", f->out, NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 1, "reproduce: it still crashes (exit 1):\n%s\n%s", r.out, r.err);
        char *out = r.out;
        r.out = NULL;
        sf_run_free(&r);
        return out;
}

/* The ruleId `snapfuzz report --sarif` gives the crash (the caller frees
 * it). */
static char *sarif_rule(const Found *f)
{
        SfRun r;
        char sarif[700];
        size_t len;
        snprintf(sarif, sizeof(sarif), "%s/crashes.sarif", f->dir);
        const char *args[] = {"report", "--out", f->out, "--sarif", sarif, NULL};
        sf_run(&r, 60, args);
        cr_assert_eq(r.exit_code, 0, "report --sarif:\n%s", r.err);
        sf_run_free(&r);
        uint8_t *json = sf_read(sarif, &len);
        cr_assert_not_null(json, "%s", sarif);
        cJSON *log = cJSON_ParseWithLength((const char *)json, len);
        free(json);
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(log, "runs");
        const cJSON *results =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "results");
        const char *rule = field(cJSON_GetArrayItem(results, 0), "ruleId");
        char *ret = strdup(rule ? rule : "(none)");
        cJSON_Delete(log);
        return ret;
}

/* ASan's "0x... is located 0 bytes after 3-byte region" (LLVM 16 on;
 * earlier: "0 bytes to the right of"). */
static bool just_past_the_input(const char *text)
{
        return strstr(text, "is located 0 bytes after 3-byte region") ||
               strstr(text, "is located 0 bytes to the right of 3-byte region");
}

Test(sanconfirm, a_read_past_the_input_is_asan_heap_buffer_overflow, .timeout = 600)
{
        Found f;
        find_crash("sanconfirm_overread", &f);
        const cJSON *c = f.crash;
        cr_expect_str_eq(field(c, "kind"), "asan");
        cr_expect_str_eq(field(c, "sanitizer.bug_type"), "heap-buffer-overflow");
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(c, "sanitizer"), "confirmed")));
        /* Fuzzing saw it as the guard page's fault. */
        cr_expect_str_eq(field(c, "sanitizer.found_as.kind"), "segv");
        cr_expect(strncmp(field(c, "signature"), "asan|heap-buffer-overflow|", 26) == 0, "%s",
                  field(c, "signature"));
        cr_expect_str_eq(field(c, "sanitizer.report"), "sanitizer.txt");
        cr_assert_not_null(f.report, "sanitizer.txt is saved beside the input");
        cr_expect(strstr(f.report, "ERROR: AddressSanitizer: heap-buffer-overflow"), "%s",
                  f.report);
        cr_expect(strstr(f.report, "READ of size 1"), "%s", f.report);
        cr_expect(just_past_the_input(f.report), "%s", f.report);
        /* Symbolized outside the sandbox: the bug's function by name. */
        cr_expect(strstr(f.report, " in sanconfirm_bug "), "%s", f.report);

        char *rule = sarif_rule(&f);
        cr_expect_str_eq(rule, "heap-buffer-overflow");
        free(rule);

        char *out = reproduce(&f);
        cr_expect(strstr(out, "REPRODUCED: asan"), "%s", out);
        cr_expect(strstr(out, "ERROR: AddressSanitizer: heap-buffer-overflow"), "%s", out);
        cr_expect(strstr(out, "READ of size 1"), "%s", out);
        cr_expect(just_past_the_input(out), "%s", out);
        free(out);
        found_free(&f);
}

Test(sanconfirm, a_null_write_is_asan_segv_of_kind_null_deref, .timeout = 600)
{
        Found f;
        find_crash("sanconfirm_null", &f);
        const cJSON *c = f.crash;
        cr_expect_str_eq(field(c, "kind"), "null-deref");
        cr_expect_str_eq(field(c, "sanitizer.bug_type"), "SEGV");
        cr_assert_not_null(f.report, "sanitizer.txt is saved beside the input");
        cr_expect(
            strstr(f.report, "ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000"),
            "%s", f.report);
        cr_expect(strstr(f.report, "caused by a WRITE memory access"), "%s", f.report);
        cr_expect(strstr(f.report, "zero page"), "%s", f.report);

        char *rule = sarif_rule(&f);
        cr_expect_str_eq(rule, "null-deref");
        free(rule);

        char *out = reproduce(&f);
        cr_expect(strstr(out, "REPRODUCED: null-deref"), "%s", out);
        cr_expect(strstr(out, "AddressSanitizer: SEGV on unknown address"), "%s", out);
        free(out);
        found_free(&f);
}

Test(sanconfirm, a_ubsan_target_keeps_its_runtime_error_report, .timeout = 600)
{
        Found f;
        find_crash("sanconfirm_ubsan", &f);
        const cJSON *c = f.crash;
        cr_expect_str_eq(field(c, "kind"), "ubsan");
        cr_expect_str_eq(field(c, "sanitizer.bug_type"), "signed integer overflow");
        cr_assert_not_null(f.report, "sanitizer.txt is saved beside the input");
        cr_expect(strstr(f.report, "runtime error: signed integer overflow"), "%s", f.report);
        cr_expect(strstr(f.report, "sanconfirm.c:"), "%s", f.report);

        char *out = reproduce(&f);
        cr_expect(strstr(out, "runtime error: signed integer overflow"), "%s", out);
        free(out);
        found_free(&f);
}

/* UBSan's own fault handler: the NULL write of a target built with UBSan
 * alone is its "SEGV on unknown address", kind null-deref. */
Test(sanconfirm, a_null_write_under_ubsan_alone_is_its_segv_report, .timeout = 600)
{
        Found f;
        find_crash("sanconfirm_ubsan_null", &f);
        cr_expect_str_eq(field(f.crash, "kind"), "null-deref");
        cr_expect_str_eq(field(f.crash, "sanitizer.bug_type"), "SEGV");
        cr_assert_not_null(f.report, "sanitizer.txt is saved beside the input");
        cr_expect(
            strstr(f.report,
                   "ERROR: UndefinedBehaviorSanitizer: SEGV on unknown address 0x000000000000"),
            "%s", f.report);
        cr_expect(strstr(f.report, "caused by a WRITE memory access"), "%s", f.report);
        found_free(&f);
}

/* A target without a sanitizer: no confirmation, no report file. */
Test(sanconfirm, a_target_without_a_sanitizer_is_unchanged, .timeout = 600)
{
        Found f;
        find_crash("deaths_segv", &f);
        cr_expect_str_eq(field(f.crash, "kind"), "segv");
        cr_expect_null(cJSON_GetObjectItemCaseSensitive(f.crash, "sanitizer"));
        cr_expect_null(f.report, "no sanitizer.txt");
        found_free(&f);
}
