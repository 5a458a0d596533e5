/*
 * The CI reports: SARIF (`--sarif`) checked by Microsoft's SARIF validator
 * (@microsoft/sarif-multitool, installed by scripts/setup.sh into
 * tests/sarif/node_modules; the tests fail when it is missing), and JUnit
 * XML (`--junit`) read by a real XML parser (xmllint, libxml2). Crashes
 * come from real runs on real targets (one per kind of bug), from crash
 * directories written here by hand (what an entry looks like in detail),
 * and from hostile crash.json files, which must be skipped with one line
 * each and never break either report.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

/* Microsoft's validator: its own binary, not the npm wrapper (which
 * passes its arguments through a shell). */
static const char *validator(void)
{
        const char *m = getenv("SF_SARIF_MULTITOOL");
        cr_assert(m && access(m, X_OK) == 0,
                  "Microsoft's SARIF validator is not installed (%s): run scripts/setup.sh, "
                  "which runs npm ci in tests/sarif",
                  m ? m : "SF_SARIF_MULTITOOL unset");
        return m;
}

static const char *xmllint(void)
{
        const char *x = getenv("SF_XMLLINT");
        cr_assert(x && access(x, X_OK) == 0,
                  "xmllint is not installed (%s): run scripts/setup.sh (Debian's libxml2-utils)",
                  x ? x : "SF_XMLLINT unset");
        return x;
}

static cJSON *load_json(const char *path)
{
        size_t len;
        uint8_t *text = sf_read(path, &len);
        cr_assert_not_null(text, "%s exists", path);
        cJSON *j = cJSON_ParseWithLength((const char *)text, len);
        cr_assert_not_null(j, "%s is JSON:\n%.2000s", path, (const char *)text);
        free(text);
        return j;
}

/*
 * The validator prints its findings ("FILE(line,col): error SARIF1009:
 * ...") and exits 0 whatever it found, so its own SARIF log (-o) is read:
 * a result whose level is "error" is an error. Returns the number of
 * errors; *ret_text (caller frees) is what it printed.
 */
static int sarif_errors(const char *sarif, char **ret_text)
{
        char report[700], cmd[2048];
        snprintf(report, sizeof(report), "%s.validation.json", sarif);
        unlink(report);
        snprintf(cmd, sizeof(cmd), "'%s' validate -o '%s' '%s'", validator(), report, sarif);
        char *text;
        int st = sf_shell(&text, "%s", cmd);
        cr_assert_eq(st, 0, "the validator ran:\n%s", text);
        cJSON *log = load_json(report);
        int errors = 0;
        const cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItem(log, "runs"), 0);
        const cJSON *res;
        cJSON_ArrayForEach(res, cJSON_GetObjectItem(run, "results"))
        {
                const cJSON *level = cJSON_GetObjectItem(res, "level");
                errors += cJSON_IsString(level) && strcmp(level->valuestring, "error") == 0;
        }
        /* Its printed lines say the same; both are counted, so that a
         * change in either form cannot hide an error. */
        int printed = 0;
        for (const char *p = text; (p = strstr(p, ": error ")); p++)
                printed++;
        cJSON_Delete(log);
        *ret_text = text;
        return errors > printed ? errors : printed;
}

static void expect_valid_sarif(const char *sarif)
{
        char *text;
        int errors = sarif_errors(sarif, &text);
        cr_expect_eq(errors, 0, "%s: the SARIF validator found %d errors:\n%s", sarif, errors,
                     text);
        free(text);
}

/* xmllint's answer to XPath @expr on @xml (caller frees). */
static char *xpath(const char *xml, const char *expr)
{
        char cmd[2048], *text;
        snprintf(cmd, sizeof(cmd), "'%s' --xpath \"%s\" '%s'", xmllint(), expr, xml);
        int st = sf_shell(&text, "%s", cmd);
        cr_assert_eq(st, 0, "xmllint --xpath %s %s:\n%s", expr, xml, text);
        size_t n = strlen(text);
        if (n && text[n - 1] == '\n')
                text[n - 1] = 0;
        return text;
}

static void expect_well_formed_xml(const char *xml)
{
        char cmd[1024], *text;
        snprintf(cmd, sizeof(cmd), "'%s' --noout '%s'", xmllint(), xml);
        int st = sf_shell(&text, "%s", cmd);
        cr_expect_eq(st, 0, "%s is well-formed XML:\n%s", xml, text);
        free(text);
}

static void write_file(const char *path, const char *text, size_t len)
{
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fwrite(text, 1, len, f);
        fclose(f);
}

/* A crash directory OUT/crashes/ID with crash.json @json (as bytes) and
 * an input of @input_len bytes (none when negative). */
static void put_crash(const char *out, const char *id, const char *json, size_t json_len,
                      long input_len)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/crashes", out);
        mkdir(out, 0755);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/crashes/%s", out, id);
        cr_assert_eq(mkdir(path, 0755), 0, "%s", path);
        snprintf(path, sizeof(path), "%s/crashes/%s/crash.json", out, id);
        write_file(path, json, json_len);
        if (input_len >= 0) {
                char *in = calloc(1, (size_t)input_len + 1);
                snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
                write_file(path, in, (size_t)input_len);
                free(in);
        }
}

/* A crash.json as snapfuzz writes it, for a heap overflow in
 * tests/targets/asan_kinds.c (the file exists under the source root). */
static char *fixture_json(const char *root)
{
        char *j = malloc(8192);
        snprintf(j, 8192,
                 "{\"id\":\"00000000000000aa\",\"kind\":\"asan\","
                 "\"message\":\"AddressSanitizer: heap-buffer-overflow on address 0x6020\","
                 "\"signature\":\"asan|heap-buffer-overflow|t.so!asan_kinds_bug:42\","
                 "\"target\":\"/nonexistent/t.so\",\"input_len\":3,\"reproduced\":true,"
                 "\"count\":5,\"first_seen\":\"2026-11-26T10:00:00Z\","
                 "\"last_seen\":\"2026-11-26T11:00:00Z\","
                 "\"stack\":{\"frames\":["
                 "{\"module\":\"libc.so.6\",\"offset\":\"0x8aeec\",\"symbol\":\"abort\"},"
                 "{\"module\":\"t.so\",\"offset\":\"0x3ab3\",\"function\":\"asan_kinds_bug\","
                 "\"file\":\"%s/build/../tests/targets/asan_kinds.c\",\"line\":42},"
                 "{\"module\":\"t.so\",\"offset\":\"0x39b8\",\"function\":\"inlined\","
                 "\"file\":\"/usr/include/x86_64-linux-gnu/bits/string_fortified.h\","
                 "\"line\":29},"
                 "{\"module\":\"t.so\",\"offset\":\"0x39b8\","
                 "\"function\":\"LLVMFuzzerTestOneInput\","
                 "\"file\":\"%s/tests/targets/asan_kinds.c\",\"line\":57},"
                 "{\"module\":\"snapfuzz\",\"offset\":\"0x390ff\"}]}}",
                 root, root);
        return j;
}

static const cJSON *get(const cJSON *j, const char *path)
{
        /* "a.b.0.c": object keys and array indexes. */
        char buf[256], *save, *tok;
        snprintf(buf, sizeof(buf), "%s", path);
        for (tok = strtok_r(buf, ".", &save); tok && j; tok = strtok_r(NULL, ".", &save))
                j = (*tok >= '0' && *tok <= '9') ? cJSON_GetArrayItem(j, atoi(tok))
                                                 : cJSON_GetObjectItemCaseSensitive(j, tok);
        cr_assert_not_null(j, "SARIF has %s", path);
        return j;
}

static const char *str(const cJSON *j, const char *path)
{
        const cJSON *s = get(j, path);
        cr_assert(cJSON_IsString(s), "%s is a string", path);
        return s->valuestring;
}

static void report(const char *out, const char *sarif, const char *junit, const char *root,
                   SfRun *r)
{
        const char *args[12] = {"report", out};
        int n = 2;
        if (sarif) {
                args[n++] = "--sarif";
                args[n++] = sarif;
        }
        if (junit) {
                args[n++] = "--junit";
                args[n++] = junit;
        }
        if (root) {
                args[n++] = "--source-root";
                args[n++] = root;
        }
        args[n] = NULL;
        sf_run(r, 60, args);
}

Test(sarif, a_stored_crash_becomes_a_result_with_its_rule_location_stack_and_command)
{
        const char *root = sf_env("SF_SOURCE_ROOT");
        char *dir = sf_tmpdir();
        char out[512], sarif[600], junit[600], path[800];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        snprintf(junit, sizeof(junit), "%s/r.xml", dir);
        char *json = fixture_json(root);
        put_crash(out, "00000000000000aa", json, strlen(json), 3);
        snprintf(path, sizeof(path), "%s/crashes/00000000000000aa/minimized", out);
        write_file(path, "x", 1);
        SfRun r;
        report(out, sarif, junit, root, &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        cr_expect(strstr(r.out, "1 crash reported"), "%s", r.out);
        sf_run_free(&r);
        expect_valid_sarif(sarif);

        cJSON *log = load_json(sarif);
        cr_expect_str_eq(str(log, "version"), "2.1.0");
        const cJSON *run = get(log, "runs.0");
        char base[700];
        snprintf(base, sizeof(base), "file://%s/", root);
        cr_expect_str_eq(str(run, "originalUriBaseIds.SRCROOT.uri"), base);
        cr_expect_eq(cJSON_GetArraySize(get(run, "results")), 1);
        const cJSON *res = get(run, "results.0");
        cr_expect_str_eq(str(res, "ruleId"), "heap-buffer-overflow");
        int idx = get(res, "ruleIndex")->valueint;
        const cJSON *rule = cJSON_GetArrayItem(get(run, "tool.driver.rules"), idx);
        cr_assert_not_null(rule);
        cr_expect_str_eq(str(rule, "id"), "heap-buffer-overflow");
        cr_expect_gt(strlen(str(rule, "shortDescription.text")), 5);
        cr_expect_gt(strlen(str(rule, "fullDescription.text")), 20);
        cr_expect_gt(strlen(str(rule, "help.text")), 20);
        cr_expect_str_eq(str(rule, "name"), "HeapBufferOverflow");
        /* The top frame in the project, ".." resolved, relative to SRCROOT. */
        const cJSON *pl = get(res, "locations.0.physicalLocation");
        cr_expect_str_eq(str(pl, "artifactLocation.uri"), "tests/targets/asan_kinds.c");
        cr_expect_str_eq(str(pl, "artifactLocation.uriBaseId"), "SRCROOT");
        cr_expect_eq(get(pl, "region.startLine")->valueint, 42);
        const char *msg = str(res, "message.text");
        cr_expect(strstr(msg, "snapfuzz reproduce 00000000000000aa --out "), "%s", msg);
        cr_expect(strstr(msg, "crashes/00000000000000aa/minimized (1 bytes)"), "%s", msg);
        cr_expect(strstr(msg, "asan_kinds_bug at tests/targets/asan_kinds.c:42"), "%s", msg);
        cr_expect(strstr(msg, "seen 5 times"), "%s", msg);
        cr_expect_eq(strlen(str(res, "partialFingerprints.snapfuzzCrashSignature/v1")), 16);
        cr_expect(strstr(str(res, "properties.reproduce"), "snapfuzz reproduce 00000000000000aa"));
        cr_expect(strstr(str(res, "properties.minimizedInput"), "/minimized"));
        /* The whole stack, outermost call first; a header outside the root
         * stays absolute; the frame of the location is the essential one. */
        const cJSON *locs = get(res, "codeFlows.0.threadFlows.0.locations");
        cr_assert_eq(cJSON_GetArraySize(locs), 5);
        cr_expect(strstr(str(locs, "0.location.message.text"), "snapfuzz+0x390ff"));
        cr_expect_str_eq(str(locs, "1.location.physicalLocation.artifactLocation.uri"),
                         "tests/targets/asan_kinds.c");
        cr_expect_str_eq(str(locs, "2.location.physicalLocation.artifactLocation.uri"),
                         "file:///usr/include/x86_64-linux-gnu/bits/string_fortified.h");
        cr_expect_str_eq(str(locs, "3.importance"), "essential");
        cr_expect_str_eq(str(locs, "4.location.logicalLocations.0.name"), "abort");
        cJSON_Delete(log);

        /* The same crash as a JUnit failure. */
        expect_well_formed_xml(junit);
        char *v = xpath(junit, "count(//testsuite)");
        cr_expect_str_eq(v, "1");
        free(v);
        v = xpath(junit, "string(//testcase/failure/@type)");
        cr_expect_str_eq(v, "heap-buffer-overflow");
        free(v);
        v = xpath(junit, "string(//testcase/@file)");
        cr_expect_str_eq(v, "tests/targets/asan_kinds.c");
        free(v);
        v = xpath(junit, "string(//testcase/failure)");
        cr_expect(strstr(v, "reproduce: snapfuzz reproduce 00000000000000aa --out"), "%s", v);
        cr_expect(strstr(v, "#1 asan_kinds_bug at tests/targets/asan_kinds.c:42"), "%s", v);
        free(v);
        free(json);
        free(dir);
}

Test(sarif, source_root_decides_what_paths_are_relative_to)
{
        const char *root = sf_env("SF_SOURCE_ROOT");
        char *dir = sf_tmpdir();
        char out[512], sarif[600], sub[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        snprintf(sub, sizeof(sub), "%s/tests", root);
        char *json = fixture_json(root);
        put_crash(out, "00000000000000aa", json, strlen(json), 3);
        SfRun r;
        report(out, sarif, NULL, sub, &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        expect_valid_sarif(sarif);
        cJSON *log = load_json(sarif);
        cr_expect_str_eq(
            str(log, "runs.0.results.0.locations.0.physicalLocation.artifactLocation.uri"),
            "targets/asan_kinds.c");
        cJSON_Delete(log);
        /* A root the stack is not under: no frame is in the project, the
         * location is the first target frame's file, as an absolute URI. */
        report(out, sarif, NULL, "/proc", &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        expect_valid_sarif(sarif);
        log = load_json(sarif);
        const char *uri =
            str(log, "runs.0.results.0.locations.0.physicalLocation.artifactLocation.uri");
        cr_expect(strncmp(uri, "file:///", 8) == 0 && strstr(uri, "tests/targets/asan_kinds.c"),
                  "%s", uri);
        cJSON_Delete(log);
        free(json);
        free(dir);
}

/* The validator is a real check: SARIF broken in ways a writer could
 * break it is rejected (so the tests above could fail). */
Test(sarif, the_validator_rejects_broken_sarif)
{
        const char *root = sf_env("SF_SOURCE_ROOT");
        char *dir = sf_tmpdir();
        char out[512], sarif[600], bad[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        char *json = fixture_json(root);
        put_crash(out, "00000000000000aa", json, strlen(json), 3);
        SfRun r;
        report(out, sarif, NULL, root, &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        expect_valid_sarif(sarif);

        const char *breaks[] = {"no tool", "rule index out of range", "base URI without slash",
                                "line 0", "not JSON"};
        for (size_t i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
                cJSON *log = load_json(sarif);
                cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItem(log, "runs"), 0);
                cJSON *res = cJSON_GetArrayItem(cJSON_GetObjectItem(run, "results"), 0);
                switch (i) {
                case 0:
                        cJSON_DeleteItemFromObject(run, "tool");
                        break;
                case 1:
                        cJSON_ReplaceItemInObject(res, "ruleIndex", cJSON_CreateNumber(7));
                        break;
                case 2:
                        cJSON_ReplaceItemInObject(
                            cJSON_GetObjectItem(cJSON_GetObjectItem(run, "originalUriBaseIds"),
                                                "SRCROOT"),
                            "uri", cJSON_CreateString("file:///src"));
                        break;
                case 3:
                        cJSON_ReplaceItemInObject(
                            (cJSON *)get(res, "locations.0.physicalLocation.region"), "startLine",
                            cJSON_CreateNumber(0));
                        break;
                }
                char *text = cJSON_Print(log);
                snprintf(bad, sizeof(bad), "%s/bad%zu.sarif", dir, i);
                write_file(bad, text, i == 4 ? strlen(text) / 2 : strlen(text));
                free(text);
                cJSON_Delete(log);
                char *said;
                int errors = sarif_errors(bad, &said);
                cr_expect_gt(errors, 0, "%s: the validator finds an error:\n%s", breaks[i], said);
                free(said);
        }
        free(json);
        free(dir);
}

Test(sarif, nothing_found_is_an_empty_run_and_one_passing_testcase)
{
        char *dir = sf_tmpdir();
        char out[512], sarif[600], junit[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        snprintf(junit, sizeof(junit), "%s/r.xml", dir);
        /* A real run that finds nothing in 2000 executions. */
        SfRun r;
        const char *args[] = {"run",       sf_target("tlv_parser"),
                              "--out",     out,
                              "--workers", "1",
                              "--runs",    "2000",
                              "--sarif",   sarif,
                              "--junit",   junit,
                              NULL};
        sf_run(&r, 120, args);
        cr_assert_eq(r.exit_code, 0, "nothing found:\n%s", r.err);
        sf_run_free(&r);
        expect_valid_sarif(sarif);
        cJSON *log = load_json(sarif);
        cr_expect_eq(cJSON_GetArraySize(get(log, "runs.0.results")), 0);
        cJSON_Delete(log);
        expect_well_formed_xml(junit);
        char *v = xpath(junit, "count(//testcase)");
        cr_expect_str_eq(v, "1");
        free(v);
        v = xpath(junit, "count(//failure)");
        cr_expect_str_eq(v, "0");
        free(v);
        free(dir);
}

/* Crash directories someone else wrote: each bad one is skipped with one
 * line, the others reported, and neither report can be broken by what a
 * crash.json holds (control characters, bytes that are not UTF-8, XML
 * markup, absurd numbers, wrong types). */
Test(sarif, hostile_crash_json_files_are_skipped_or_made_harmless)
{
        char *dir = sf_tmpdir();
        char out[512], sarif[600], junit[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        snprintf(junit, sizeof(junit), "%s/r.xml", dir);
        static const char *bad[] = {
            "not json at all",
            "[1,2,3]",
            "{\"kind\":\"segv\"}", /* no target */
            "{\"kind\":\"se\\u001b[2Jgv\",\"target\":\"t\",\"signature\":\"s\"}",
            "{\"kind\":\"segv\",\"target\":\"t\"}", /* no signature */
            "{\"kind\":7,\"target\":\"t\",\"signature\":\"s\"}",
            "{\"kind\":\"segv\",\"target\":\"t\",\"signature\":\"s\"", /* truncated */
            "",
        };
        const size_t n_bad = sizeof(bad) / sizeof(bad[0]);
        char id[32];
        for (size_t i = 0; i < n_bad; i++) {
                snprintf(id, sizeof(id), "bad%zu", i);
                put_crash(out, id, bad[i], strlen(bad[i]), 1);
        }
        /* A good crash.json without its input is not a crash either. */
        const char *ok = "{\"kind\":\"abort\",\"target\":\"t\",\"signature\":\"abort|t\"}";
        put_crash(out, "noinput", ok, strlen(ok), -1);
        /* A FIFO for crash.json (opening it would wait for ever), and a
         * device. */
        char fifo[700];
        put_crash(out, "fifo", "", 0, 1);
        snprintf(fifo, sizeof(fifo), "%s/crashes/fifo/crash.json", out);
        cr_assert_eq(unlink(fifo), 0);
        cr_assert_eq(mkfifo(fifo, 0644), 0);
        put_crash(out, "device", "", 0, 1);
        snprintf(fifo, sizeof(fifo), "%s/crashes/device/crash.json", out);
        cr_assert_eq(unlink(fifo), 0);
        cr_assert_eq(symlink("/dev/zero", fifo), 0);
        /* Readable, but every field as nasty as it can be. */
        static const char nasty[] =
            "{\"kind\":\"asan\",\"target\":\"/t\\u0007.so\",\"signature\":\"asan|SEGV|\\u001b]0;x"
            "\\u0007\",\"message\":\"AddressSanitizer: SEGV on unknown address 0x000000000010 "
            "]]></failure><x a='\\\"'>&amp;\\u001b[31m\\u202e\xff\xfe\xc3\",\"count\":-5,"
            "\"input_len\":1e300,\"reproduced\":\"yes\",\"first_seen\":{},"
            "\"reproduction\":{\"class\":\"history\",\"history_len\":-3},"
            "\"stack\":{\"frames\":[7,null,\"x\",{\"file\":\"/etc/\\u001b[2J\",\"line\":1},"
            "{\"file\":\"../../../etc/passwd\",\"line\":99999999999,\"function\":\"<x>\"},"
            "{\"file\":\"/a b/%#?.c\",\"line\":3,\"function\":\"f\\u0000g\",\"module\":\"m\"}]}}";
        put_crash(out, "nasty", nasty, sizeof(nasty) - 1, 1);
        static const char unknown_kind[] =
            "{\"kind\":\"quantum-flip\",\"target\":\"t\",\"signature\":\"q\",\"stack\":7}";
        put_crash(out, "unknown", unknown_kind, sizeof(unknown_kind) - 1, 1);

        SfRun r;
        report(out, sarif, junit, NULL, &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        cr_expect(strstr(r.out, "2 crashes reported (11 unreadable, skipped)"), "%s", r.out);
        int lines = 0;
        for (const char *p = r.err; (p = strstr(p, "snapfuzz: warning: skipped crash ")); p++)
                lines++;
        cr_expect_eq(lines, (int)n_bad + 3, "one line per skipped crash:\n%s", r.err);
        cr_expect(!strchr(r.err, '\x1b'), "no escape reaches the terminal:\n%s", r.err);
        sf_run_free(&r);

        expect_valid_sarif(sarif);
        size_t len;
        uint8_t *text = sf_read(sarif, &len);
        for (size_t i = 0; i < len; i++)
                cr_assert(text[i] >= 0x20 || text[i] == '\n' || text[i] == '\t',
                          "no control byte in the SARIF (0x%02x at %zu)", text[i], i);
        free(text);
        cJSON *log = load_json(sarif);
        const cJSON *results = get(log, "runs.0.results");
        cr_expect_eq(cJSON_GetArraySize(results), 2);
        const cJSON *res;
        bool saw_null = false, saw_crash = false;
        cJSON_ArrayForEach(res, results)
        {
                const char *rule = str(res, "ruleId");
                if (strcmp(str(res, "properties.crashId"), "nasty") == 0) {
                        /* ASan's SEGV at 0x10 is a null dereference. */
                        cr_expect_str_eq(rule, "null-deref");
                        saw_null = true;
                        cr_expect_eq(get(res, "properties.count")->valuedouble, 1);
                } else {
                        cr_expect_str_eq(rule, "crash", "an unknown kind gets the generic rule");
                        cr_expect_str_eq(str(res, "properties.kind"), "quantum-flip");
                        saw_crash = true;
                }
        }
        cr_expect(saw_null && saw_crash);
        cJSON_Delete(log);

        expect_well_formed_xml(junit);
        char *v = xpath(junit, "count(//testcase/failure)");
        cr_expect_str_eq(v, "2");
        free(v);
        v = xpath(junit, "count(//x)");
        cr_expect_str_eq(v, "0", "markup in a message stays text");
        free(v);
        free(dir);
}

/* One kind of bug each: [target, rule, extra run arguments]. */
typedef struct KindCase {
        const char *target;
        const char *rule;
        const char *seed; /* the only seed input, or NULL: fuzz from nothing */
        const char *extra[8];
} KindCase;

static const KindCase kind_cases[] = {
    {"deaths_segv", "null-deref", NULL, {NULL}},
    {"asan_wild", "segv", NULL, {NULL}},
    {"deaths_abort", "abort", NULL, {NULL}},
    {"deaths_fpe", "fpe", NULL, {NULL}},
    {"deaths_stack_overflow", "stack-overflow", NULL, {NULL}},
    {"deaths_asan_overflow", "heap-buffer-overflow", NULL, {NULL}},
    {"deaths_asan_uaf", "heap-use-after-free", NULL, {NULL}},
    {"asan_double_free", "double-free", NULL, {NULL}},
    {"asan_stack_overflow", "stack-buffer-overflow", NULL, {NULL}},
    {"asan_global_overflow", "global-buffer-overflow", NULL, {NULL}},
    {"deaths_ubsan_overflow", "signed-integer-overflow", NULL, {NULL}},
    {"deaths_asan_leak", "leak", NULL, {NULL}},
    {"sandbox_escape_exec", "sandbox-violation", NULL, {NULL}},
    {"deaths_oom",
     "oom",
     NULL,
     {"--rss-limit-mb", "200", "--malloc-limit-mb", "0", "--timeout", "20", NULL}},
    {"grow", "timeout", "T", {"--timeout", "1", "--no-minimize", NULL}},
    {"deaths_state", "abort", NULL, {"--runner-lifetime-ms", "0", NULL}},
};
#define N_KIND_CASES (sizeof(kind_cases) / sizeof(kind_cases[0]))

/* Runs case @k into @dir/<target>, with --sarif; returns the crash id. */
static char *run_case(const char *dir, const KindCase *k)
{
        char out[700], seeds[700], sarif[700], path[800];
        snprintf(out, sizeof(out), "%s/%s", dir, k->target);
        snprintf(sarif, sizeof(sarif), "%s/%s.sarif", dir, k->target);
        const char *args[32] = {"run", sf_target(k->target)};
        int n = 2;
        if (k->seed) {
                snprintf(seeds, sizeof(seeds), "%s/%s.seeds", dir, k->target);
                cr_assert_eq(mkdir(seeds, 0755), 0);
                snprintf(path, sizeof(path), "%s/seed", seeds);
                write_file(path, k->seed, strlen(k->seed));
                args[n++] = seeds;
        }
        const char *common[] = {"--out",
                                out,
                                "--workers",
                                "1",
                                "--max-total-time",
                                "120",
                                "--sarif",
                                sarif,
                                "--source-root",
                                sf_env("SF_SOURCE_ROOT")};
        for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
                args[n++] = common[i];
        for (int i = 0; k->extra[i]; i++)
                args[n++] = k->extra[i];
        args[n] = NULL;
        SfRun r;
        sf_run(&r, 300, args);
        cr_assert_eq(r.exit_code, 1, "%s: a crash (exit 1):\n%s", k->target, r.err);
        sf_run_free(&r);
        /* What run --sarif wrote at the end has the crash too. */
        cJSON *log = load_json(sarif);
        cr_expect_eq(cJSON_GetArraySize(get(log, "runs.0.results")), 1, "%s", k->target);
        cJSON_Delete(log);
        return sf_only_crash(out);
}

static void expect_result_of_case(const cJSON *res, const KindCase *k, const char *root)
{
        cr_expect_str_eq(str(res, "ruleId"), k->rule, "%s: rule (message: %s)", k->target,
                         str(res, "message.text"));
        const cJSON *pl = get(res, "locations.0.physicalLocation");
        const char *uri = str(pl, "artifactLocation.uri");
        cr_expect_str_eq(str(pl, "artifactLocation.uriBaseId"), "SRCROOT", "%s: %s", k->target,
                         uri);
        char file[1024];
        struct stat st;
        snprintf(file, sizeof(file), "%s/%s", root, uri);
        cr_expect(uri[0] != '/' && stat(file, &st) == 0, "%s: %s is a file under the root",
                  k->target, uri);
        cr_expect_geq(get(pl, "region.startLine")->valueint, 1, "%s", k->target);
        char want[64];
        snprintf(want, sizeof(want), "snapfuzz reproduce %s --out ",
                 str(res, "properties.crashId"));
        cr_expect(strstr(str(res, "message.text"), want), "%s: %s", k->target,
                  str(res, "message.text"));
        cr_expect_gt(cJSON_GetArraySize(get(res, "codeFlows.0.threadFlows.0.locations")), 1);
        if (strcmp(k->target, "deaths_state") == 0) {
                cr_expect(cJSON_IsTrue(get(res, "properties.stateDependent")));
                cr_expect(strstr(str(res, "message.text"), "State-dependent"));
        }
}

/* The rules of every kind, from real crashes of real targets, in one
 * output directory (the crash directories of one run each, put
 * together): one result per crash, each with its rule and a location in
 * the project; the validator finds no error. */
Test(sarif, every_kind_of_crash_gets_its_rule_and_a_location_in_the_project, .timeout = 900)
{
        const char *root = sf_env("SF_SOURCE_ROOT");
        char *dir = sf_tmpdir();
        char all[600], cmd[2048], sarif[700], junit[700];
        char *ids[N_KIND_CASES];
        snprintf(all, sizeof(all), "%s/all", dir);
        snprintf(cmd, sizeof(cmd), "%s/crashes", all);
        cr_assert_eq(mkdir(all, 0755), 0);
        cr_assert_eq(mkdir(cmd, 0755), 0);
        for (size_t i = 0; i < N_KIND_CASES; i++) {
                ids[i] = run_case(dir, &kind_cases[i]);
                snprintf(cmd, sizeof(cmd), "cp -r '%s/%s/crashes/%s' '%s/crashes/'", dir,
                         kind_cases[i].target, ids[i], all);
                char *text;
                cr_assert_eq(sf_shell(&text, "%s", cmd), 0, "%s", text);
                free(text);
        }
        snprintf(sarif, sizeof(sarif), "%s/all.sarif", dir);
        snprintf(junit, sizeof(junit), "%s/all.xml", dir);
        SfRun r;
        report(all, sarif, junit, root, &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        sf_run_free(&r);
        expect_valid_sarif(sarif);
        cJSON *log = load_json(sarif);
        const cJSON *results = get(log, "runs.0.results");
        cr_expect_eq(cJSON_GetArraySize(results), (int)N_KIND_CASES);
        for (size_t i = 0; i < N_KIND_CASES; i++) {
                const cJSON *res, *found = NULL;
                cJSON_ArrayForEach(res, results) if (strcmp(str(res, "properties.crashId"),
                                                            ids[i]) == 0) found = res;
                cr_assert_not_null(found, "%s: crash %s has a result", kind_cases[i].target,
                                   ids[i]);
                expect_result_of_case(found, &kind_cases[i], root);
        }
        cJSON_Delete(log);

        expect_well_formed_xml(junit);
        char *v = xpath(junit, "count(//testsuite/testcase/failure)");
        char want[16];
        snprintf(want, sizeof(want), "%zu", N_KIND_CASES);
        cr_expect_str_eq(v, want);
        free(v);
        v = xpath(junit, "string(//testcase[failure/@type='double-free']/failure)");
        cr_expect(strstr(v, "reproduce: snapfuzz reproduce "), "%s", v);
        cr_expect(strstr(v, "asan_kinds.c:"), "%s", v);
        free(v);
        for (size_t i = 0; i < N_KIND_CASES; i++)
                free(ids[i]);
        free(dir);
}

/* A CI job killed mid-run still has the report: it is written as soon as
 * a crash is stored, not only at the end. */
Test(sarif, a_killed_run_leaves_a_valid_report_of_what_it_found, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char out[512], sarif[600];
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(sarif, sizeof(sarif), "%s/r.sarif", dir);
        const char *args[] = {"run",
                              sf_target("deaths_segv"),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--sarif",
                              sarif,
                              "--status-every",
                              "1",
                              NULL};
        pid_t pid = sf_start(dir, args);
        int results = 0;
        bool minimized = false;
        for (int i = 0; i < 1200 && !minimized; i++) {
                usleep(100 * 1000);
                size_t len;
                uint8_t *text = sf_read(sarif, &len);
                cJSON *log = text ? cJSON_ParseWithLength((const char *)text, len) : NULL;
                cr_assert(!text || log, "the report is never half written");
                const cJSON *run = cJSON_GetArrayItem(cJSON_GetObjectItem(log, "runs"), 0);
                results = cJSON_GetArraySize(cJSON_GetObjectItem(run, "results"));
                /* The minimized input, which comes after the crash is
                 * stored, reaches the report with a later status line. */
                const cJSON *props = cJSON_GetObjectItem(
                    cJSON_GetArrayItem(cJSON_GetObjectItem(run, "results"), 0), "properties");
                minimized = cJSON_GetObjectItem(props, "minimizedInput") != NULL;
                cJSON_Delete(log);
                free(text);
        }
        cr_assert_eq(results, 1, "the crash reached the report while the run went on");
        cr_assert(minimized, "and so did its minimized input");
        kill(pid, SIGKILL);
        sf_wait(pid, 30);
        expect_valid_sarif(sarif);
        free(dir);
}

Test(sarif, bad_usage_is_one_line_and_exit_2)
{
        char *dir = sf_tmpdir();
        char file[600];
        snprintf(file, sizeof(file), "%s/x.sarif", dir);
        const char *cases[][8] = {
            {"report", dir, NULL},
            {"report", "/nonexistent-out", "--sarif", file, NULL},
            {"report", dir, "--sarif", "/nonexistent-dir/x.sarif", NULL},
            {"report", dir, "--sarif", dir, NULL},
            {"report", dir, "--junit", file, "--source-root", "/nonexistent-root", NULL},
            {"run", sf_target("deaths_segv"), "--sarif", "/nonexistent-dir/x.sarif", NULL},
            {"run", sf_target("deaths_segv"), "--junit", file, "--source-root", file, NULL},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SfRun r;
                sf_run(&r, 30, cases[i]);
                cr_expect_eq(r.exit_code, 2, "case %zu: exit 2, got %d:\n%s", i, r.exit_code,
                             r.err);
                cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0 &&
                              strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
                          "case %zu: one line:\n%s", i, r.err);
                sf_run_free(&r);
        }
        const char *help[] = {"report", "--help", NULL};
        SfRun r;
        sf_run(&r, 30, help);
        cr_expect_eq(r.exit_code, 0);
        cr_expect(strstr(r.out, "examples:") && strstr(r.out, "--source-root"), "%s", r.out);
        sf_run_free(&r);
        free(dir);
}
