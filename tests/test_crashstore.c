/*
 * The crash store and triage: a crash is stored whole under a stable id,
 * the same bug twice is one id with a count, and a damaged record gets a
 * clear error instead of a wrong answer.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/crashstore.h"
#include "core/fsutil.h"
#include "core/msg.h"
#include "recovery/classify.h"

static cJSON *report(const char *id)
{
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "id", id);
        cJSON_AddStringToObject(r, "kind", "segv");
        cJSON_AddStringToObject(r, "target", "/x/target.so");
        cJSON_AddNumberToObject(r, "input_len", 4);
        return r;
}

Test(crashstore, stores_input_and_report_then_counts_duplicates)
{
        char dir[] = "/tmp/sf-cs-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        bool is_new = false;
        cJSON *r = report("00112233aabbccdd");
        cr_assert_eq(crashstore_put(dir, r, (const uint8_t *)"\x00\x01\xff\x7f", 4, &is_new), 0);
        cr_expect(is_new);
        cJSON_Delete(r);
        r = report("00112233aabbccdd");
        cr_assert_eq(crashstore_put(dir, r, (const uint8_t *)"zzzz", 4, &is_new), 0);
        cr_expect_not(is_new);
        cJSON_Delete(r);

        cJSON *got;
        uint8_t *input;
        size_t len;
        char err[256];
        cr_assert_eq(crashstore_load(dir, "00112233aabbccdd", &got, &input, &len, err, sizeof(err)),
                     0, "%s", err);
        cr_expect_eq(len, 4);
        cr_expect_arr_eq(input, "\x00\x01\xff\x7f", 4, "the first input is kept");
        cr_expect_eq(msg_int(got, "count", 0), 2);
        cr_expect_str_eq(msg_str(got, "kind", ""), "segv");
        cJSON_Delete(got);
        free(input);
}

Test(crashstore, unknown_and_malformed_ids_are_reported)
{
        char dir[] = "/tmp/sf-cs-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        cJSON *got;
        uint8_t *input;
        size_t len;
        char err[256];
        cr_expect_eq(crashstore_load(dir, "0123456789abcdef", &got, &input, &len, err, sizeof(err)),
                     CRASHSTORE_ERR_NOENT);
        cr_expect(strstr(err, "no crash with id 0123456789abcdef"), "%s", err);
        cr_expect_eq(crashstore_load(dir, "../../etc", &got, &input, &len, err, sizeof(err)),
                     CRASHSTORE_ERR_NOENT);
        cr_expect(strstr(err, "is not a crash id"), "%s", err);
}

Test(crashstore, corrupt_or_truncated_records_are_reported)
{
        char dir[] = "/tmp/sf-cs-XXXXXX", path[256];
        cr_assert_not_null(mkdtemp(dir));
        bool is_new;
        cJSON *r = report("feedfacefeedface");
        cr_assert_eq(crashstore_put(dir, r, (const uint8_t *)"abcd", 4, &is_new), 0);
        cJSON_Delete(r);
        cJSON *got;
        uint8_t *input;
        size_t len;
        char err[512];

        snprintf(path, sizeof(path), "%s/crashes/feedfacefeedface/input", dir);
        FILE *f = fopen(path, "w");
        fputs("ab", f);
        fclose(f);
        cr_expect_eq(crashstore_load(dir, "feedfacefeedface", &got, &input, &len, err, sizeof(err)),
                     CRASHSTORE_ERR_CORRUPT);
        cr_expect(strstr(err, "truncated"), "%s", err);

        snprintf(path, sizeof(path), "%s/crashes/feedfacefeedface/crash.json", dir);
        f = fopen(path, "w");
        fputs("{\"id\": \"feedfacefeedface\", \"kind\": ", f);
        fclose(f);
        cr_expect_eq(crashstore_load(dir, "feedfacefeedface", &got, &input, &len, err, sizeof(err)),
                     CRASHSTORE_ERR_CORRUPT);
        cr_expect(strstr(err, "not valid JSON"), "%s", err);
}

Test(crashstore, minimized_input_and_updated_fields_are_stored_atomically)
{
        char dir[] = "/tmp/sf-cs-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        bool is_new;
        cJSON *r = report("0000aaaa0000bbbb");
        cr_assert_eq(crashstore_put(dir, r, (const uint8_t *)"wxyz", 4, &is_new), 0);
        cJSON_Delete(r);

        uint8_t *min;
        size_t len;
        cr_expect_eq(crashstore_load_minimized(dir, "0000aaaa0000bbbb", &min, &len), -ENOENT);
        cr_assert_eq(crashstore_put_minimized(dir, "0000aaaa0000bbbb", (const uint8_t *)"y", 1), 0);
        cr_assert_eq(crashstore_load_minimized(dir, "0000aaaa0000bbbb", &min, &len), 0);
        cr_expect_eq(len, 1);
        cr_expect_eq(min[0], 'y');
        free(min);
        cr_expect_eq(crashstore_put_minimized(dir, "ffff000000000000", (const uint8_t *)"y", 1),
                     -ENOENT, "no crash, no minimized file");

        cJSON *fields = cJSON_CreateObject();
        cJSON_AddNumberToObject(fields, "minimized_len", 1);
        cJSON_AddStringToObject(fields, "kind", "abort");
        cr_assert_eq(crashstore_update(dir, "0000aaaa0000bbbb", fields), 0);
        cJSON_Delete(fields);

        cJSON *got;
        uint8_t *input;
        char err[256];
        cr_assert_eq(crashstore_load(dir, "0000aaaa0000bbbb", &got, &input, &len, err, sizeof(err)),
                     0, "%s", err);
        cr_expect_eq(msg_int(got, "minimized_len", -1), 1);
        cr_expect_str_eq(msg_str(got, "kind", ""), "abort", "a field is replaced, not doubled");
        cr_expect_str_eq(msg_str(got, "target", ""), "/x/target.so", "other fields stay");
        cr_expect_eq(msg_int(got, "count", 0), 1);
        int kinds = 0;
        const cJSON *f;
        cJSON_ArrayForEach(f, got)
        {
                kinds += strcmp(f->string, "kind") == 0;
        }
        cr_expect_eq(kinds, 1);
        cJSON_Delete(got);
        free(input);
}

Test(crashstore, list_gives_sorted_ids_and_skips_temporary_entries)
{
        char dir[] = "/tmp/sf-cs-XXXXXX", path[256];
        cr_assert_not_null(mkdtemp(dir));
        char **ids;
        size_t n;
        cr_expect_eq(crashstore_list(dir, &ids, &n), -ENOENT);
        bool is_new;
        const char *put[] = {"bbbb000000000000", "aaaa000000000000", "cccc000000000000"};
        for (int i = 0; i < 3; i++) {
                cJSON *r = report(put[i]);
                cr_assert_eq(crashstore_put(dir, r, (const uint8_t *)"abcd", 4, &is_new), 0);
                cJSON_Delete(r);
        }
        snprintf(path, sizeof(path), "%s/crashes/.tmp.dddd000000000000.1", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        cr_assert_eq(crashstore_list(dir, &ids, &n), 0);
        cr_assert_eq(n, 3);
        cr_expect_str_eq(ids[0], "aaaa000000000000");
        cr_expect_str_eq(ids[1], "bbbb000000000000");
        cr_expect_str_eq(ids[2], "cccc000000000000");
        crashstore_ids_free(ids, n);
}

static cJSON *died(const char *reason, int sig, const char *frames_json)
{
        cJSON *m = msg_new("died");
        cJSON_AddStringToObject(m, "reason", reason);
        if (sig)
                cJSON_AddNumberToObject(m, "signal", sig);
        else
                cJSON_AddNumberToObject(m, "exit_code", 3);
        if (frames_json) {
                cJSON *d = cJSON_AddObjectToObject(m, "death");
                cJSON_AddNumberToObject(d, "reason", 1);
                cJSON_AddItemToObject(d, "frames", cJSON_Parse(frames_json));
        }
        return m;
}

Test(classify, kinds_follow_the_cause_of_death)
{
        Classification c;
        struct {
                const char *reason;
                int sig;
                const char *kind;
        } cases[] = {
            {"crash", SIGSEGV, "segv"},   {"crash", SIGBUS, "bus"},
            {"crash", SIGFPE, "fpe"},     {"crash", SIGILL, "ill"},
            {"crash", SIGABRT, "abort"},  {"crash", SIGKILL, "killed"},
            {"crash", SIGSYS, "sandbox"}, {"timeout", SIGKILL, "timeout"},
            {"oom", SIGKILL, "oom"},      {"crash", 0, "exit"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cJSON *m = died(cases[i].reason, cases[i].sig, NULL);
                classify_death(m, &c);
                cr_expect_str_eq(c.kind, cases[i].kind, "case %zu", i);
                cr_expect(c.is_crash);
                cr_expect(classify_kind_is_known(c.kind));
                cJSON_Delete(m);
        }
        cJSON *m = died("stopped", SIGKILL, NULL);
        classify_death(m, &c);
        cr_expect_not(c.is_crash, "a runner stopped on purpose is not a crash");
        cJSON_Delete(m);
}

Test(classify, signature_uses_target_frames_and_ignores_addresses)
{
        const char *a =
            "[{\"pc\":\"0x7f01\",\"module\":\"libc.so.6\",\"symbol\":\"abort\"},"
            "{\"pc\":\"0x7f02\",\"module\":\"t.so\",\"function\":\"parse\",\"offset\":\"0x10\"},"
            "{\"pc\":\"0x5501\",\"module\":\"snapfuzz\"}]";
        const char *b =
            "[{\"pc\":\"0x7e01\",\"module\":\"libc.so.6\",\"symbol\":\"abort\"},"
            "{\"pc\":\"0x7e02\",\"module\":\"t.so\",\"function\":\"parse\",\"offset\":\"0x10\"}]";
        const char *other = "[{\"pc\":\"0x7f02\",\"module\":\"t.so\",\"function\":\"lex\"}]";
        Classification ca, cb, co;
        cJSON *m1 = died("crash", SIGABRT, a), *m2 = died("crash", SIGABRT, b),
              *m3 = died("crash", SIGABRT, other);
        classify_death(m1, &ca);
        classify_death(m2, &cb);
        classify_death(m3, &co);
        cr_expect_str_eq(ca.signature, "abort|t.so!parse");
        cr_expect_str_eq(ca.id, cb.id, "same bug, different addresses: one id");
        cr_expect_str_neq(ca.id, co.id);
        cr_expect(crashstore_id_valid(ca.id));
        cJSON_Delete(m1);
        cJSON_Delete(m2);
        cJSON_Delete(m3);
}

/* The reports of a sanitizer confirmation (its fault handlers on): a SEGV
 * in the zero page is kind null-deref, elsewhere it stays the sanitizer's;
 * the bug type is kept apart for crash.json. */
Test(classify, sanitizer_segv_reports_in_the_zero_page_are_null_derefs)
{
        static const struct {
                const char *report, *kind, *type;
        } cases[] = {
            {"==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000000 (pc 0x7f T0)\n",
             "null-deref", "SEGV"},
            {"==7==ERROR: AddressSanitizer: SEGV on unknown address 0x000000000ff8 (pc 0x7f T0)\n",
             "null-deref", "SEGV"},
            {"==7==ERROR: AddressSanitizer: SEGV on unknown address 0x7ff0deadbee0 (pc 0x7f T0)\n",
             "asan", "SEGV"},
            {"==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020000007f3 at pc\n",
             "asan", "heap-buffer-overflow"},
            {"==7==ERROR: UndefinedBehaviorSanitizer: SEGV on unknown address 0x000000000010 (pc\n",
             "null-deref", "SEGV"},
            {"t.c:9:5: runtime error: signed integer overflow: 2147483647 + 1 cannot be\n", "ubsan",
             "signed integer overflow"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Classification c;
                cJSON *m = died("crash", SIGABRT, NULL);
                cJSON_AddStringToObject(m, "sanitizer_report", cases[i].report);
                classify_death(m, &c);
                cr_expect_str_eq(c.kind, cases[i].kind, "case %zu", i);
                cr_expect_str_eq(c.bug_type, cases[i].type, "case %zu", i);
                cr_expect(classify_kind_is_known(c.kind));
                cJSON_Delete(m);
        }
        cJSON *m = died("crash", SIGSEGV, NULL);
        Classification c;
        classify_death(m, &c);
        cr_expect_str_eq(c.bug_type, "", "no report, no bug type");
        cJSON_Delete(m);
}

/* A frame the symbolizer did not name is module+offset: dladdr's "symbol"
 * (exported names only; a static function gets the export before it) does
 * not go into signatures. */
Test(classify, an_unsymbolized_frame_is_named_by_offset_not_by_dladdr)
{
        const char *frames =
            "[{\"pc\":\"0x7f02\",\"module\":\"t.so\",\"symbol\":\"LLVMFuzzerTestOneInput\","
            "\"symoff\":\"0x90\",\"offset\":\"0x1290\"}]";
        Classification c;
        cJSON *m = died("crash", SIGSEGV, frames);
        classify_death(m, &c);
        cr_expect_str_eq(c.signature, "segv|t.so+0x1290");
        cJSON_Delete(m);
}
