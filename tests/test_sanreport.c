/*
 * The drop-in's crash reports (fuzzer/sanreport.c), bucketed the way
 * ClusterFuzz's stack parser buckets them (tests/lfcbucket.c): each kind
 * of crash record must get the crash type libFuzzer's report would get,
 * a sandbox violation ClusterFuzz's extra-sanitizer type, and the state
 * the target's frames, not the fuzzer's.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzzer/sanreport.h"
#include "tests/lfcbucket.h"

/* A crash record as crash.json stores one: @kind, @extra (JSON members
 * added to the top object, may be ""), the stack: crash site in
 * parse_chunk (target.c:41), called from LLVMFuzzerTestOneInput
 * (target.c:77), called from the fuzzer's run_one. */
static cJSON *record(const char *kind, const char *stack_extra, const char *extra)
{
        char json[4096];
        snprintf(json, sizeof(json),
                 "{\"kind\": \"%s\", \"message\": \"what happened\", %s"
                 "\"limits\": {\"timeout_ms\": 25000, \"rss_limit_mb\": 2560},"
                 "\"stack\": {%s \"frames\": ["
                 "{\"pc\": \"0x55550001\", \"path\": \"/out/t\", \"offset\": \"0x1001\","
                 " \"function\": \"parse_chunk\", \"file\": \"/src/target.c\", \"line\": 41},"
                 "{\"pc\": \"0x55550002\", \"path\": \"/out/t\", \"offset\": \"0x1002\","
                 " \"function\": \"LLVMFuzzerTestOneInput\", \"file\": \"/src/target.c\","
                 " \"line\": 77},"
                 "{\"pc\": \"0x55550003\", \"path\": \"/out/t\", \"offset\": \"0x2003\","
                 " \"symbol\": \"runner_run_one\"}]}}",
                 kind, extra, stack_extra);
        cJSON *j = cJSON_Parse(json);
        cr_assert_not_null(j, "bad test JSON: %s", json);
        return j;
}

static char *report(const cJSON *crash)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        cr_assert_eq(sanreport_write(f, crash, 4242), 0);
        fclose(f);
        return buf;
}

static void expect(const char *kind, const char *stack_extra, const char *extra,
                   const char *want_type)
{
        cJSON *c = record(kind, stack_extra, extra);
        char *out = report(c);
        LfcBucket b;
        bool fuzz_frame;
        lfc_bucket(out, &b, &fuzz_frame);
        cr_assert_str_eq(b.type, want_type, "kind %s bucketed as '%s':\n%s", kind, b.type, out);
        cr_assert(fuzz_frame, "no LLVMFuzzerTestOneInput frame:\n%s", out);
        cr_assert(b.nframes >= 1 && !strcmp(b.frames[0], "parse_chunk"),
                  "state starts with '%s':\n%s", b.nframes ? b.frames[0] : "", out);
        cr_assert_null(strstr(out, "runner_run_one"), "the fuzzer's frames are printed:\n%s", out);
        cr_assert_not_null(strstr(out, "    #0 0x55550001 in parse_chunk /src/target.c:41"), "%s",
                           out);
        free(out);
        cJSON_Delete(c);
}

Test(sanreport, signals_are_deadly_signals)
{
        expect("segv", "", "", "Fatal-signal");
        expect("abort", "", "", "Fatal-signal");
        expect("stack-overflow", "", "", "Fatal-signal");
}

Test(sanreport, libfuzzer_endings_keep_their_types)
{
        expect("timeout", "", "", "Timeout");
        expect("oom", "", "", "Out-of-memory");
        expect("exit", "", "", "Unexpected-exit");
        expect("overwrite-input", "", "", "Overwrites-const-input");
}

Test(sanreport, sandbox_exec_is_command_injection)
{
        expect("sandbox", "\"syscall_name\": \"execve\",", "", "Command injection");
        expect("sandbox", "\"syscall_name\": \"execveat\",", "", "Command injection");
}

Test(sanreport, sandbox_open_is_arbitrary_file_open)
{
        expect("sandbox", "\"syscall_name\": \"openat\",", "", "Arbitrary file open");
        expect("sandbox", "\"syscall_name\": \"creat\",", "", "Arbitrary file open");
}

/* A syscall ClusterFuzz has no type for: a deadly signal, and the line
 * that names the syscall for the person reading the report. */
Test(sanreport, other_sandbox_violations_are_deadly_signals)
{
        expect("sandbox", "\"syscall_name\": \"ptrace\",", "", "Fatal-signal");
        cJSON *c = record("sandbox", "\"syscall_name\": \"ptrace\",", "");
        char *out = report(c);
        cr_assert_not_null(strstr(out, "snapfuzz: sandbox: what happened"), "%s", out);
        cr_assert_null(strstr(out, "BUG DETECTED"), "%s", out);
        free(out);
        cJSON_Delete(c);
}

/* A sanitizer's kind prints the sanitizer's own report, stored with the
 * crash, unchanged. */
Test(sanreport, sanitizer_report_is_passed_through)
{
        const char *asan =
            "\"output\": \"=================================================================\\n"
            "==77==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000058 at pc "
            "0x1 bp 0x2 sp 0x3\\nREAD of size 1 at 0x602000000058 thread T0\\n"
            "    #0 0x55550001 in parse_chunk /src/target.c:41:17\\n"
            "    #1 0x55550002 in LLVMFuzzerTestOneInput /src/target.c:77:3\\n\",";
        expect("asan", "", asan, "Heap-buffer-overflow");
}

/* What the record says is untrusted: control characters in a function
 * name or message never reach the output. */
Test(sanreport, record_text_is_made_terminal_safe)
{
        cJSON *c = record("sandbox", "\"syscall_name\": \"ptrace\",", "");
        cJSON_ReplaceItemInObject(c, "message", cJSON_CreateString("evil\x1b[2Jtext"));
        cJSON *frames = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "stack"), "frames");
        cJSON_ReplaceItemInObject(cJSON_GetArrayItem(frames, 0), "function",
                                  cJSON_CreateString("fn\x1b]0;x\x07"));
        char *out = report(c);
        cr_assert_null(strchr(out, '\x1b'), "%s", out);
        cr_assert_null(strchr(out, '\x07'), "%s", out);
        free(out);
        cJSON_Delete(c);
}

Test(sanreport, frame_forms)
{
        char buf[256];
        cJSON *f = cJSON_Parse("{\"pc\": \"0x10\", \"path\": \"/lib/libc.so.6\", \"offset\": "
                               "\"0xd4ad7\", \"symbol\": \"execve\"}");
        sanreport_frame(buf, sizeof(buf), 0, f);
        cr_assert_str_eq(buf, "    #0 0x10 in execve (/lib/libc.so.6+0xd4ad7)");
        cJSON_DeleteItemFromObject(f, "symbol");
        sanreport_frame(buf, sizeof(buf), 3, f);
        cr_assert_str_eq(buf, "    #3 0x10 (/lib/libc.so.6+0xd4ad7)");
        cJSON_Delete(f);
}

/* The drop-in reports a stored crash from its directory; a record that
 * cannot be read is an error, with nothing printed. */
Test(sanreport, report_from_a_crash_directory)
{
        char dir[] = "/tmp/sanreport-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        cJSON *c = record("sandbox", "\"syscall_name\": \"execve\",", "");
        char *json = cJSON_Print(c);
        char path[64];
        snprintf(path, sizeof(path), "%s/crash.json", dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(json, f);
        fclose(f);
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        cr_assert_eq(sanreport_write_dir(out, dir, 7), 0);
        fclose(out);
        cr_assert_not_null(strstr(buf, "===BUG DETECTED: Shell injection===\n"), "%s", buf);
        free(buf);
        buf = NULL;
        out = open_memstream(&buf, &len);
        cr_assert_lt(sanreport_write_dir(out, "/nonexistent-dir", 7), 0);
        fclose(out);
        cr_assert_eq(len, 0);
        free(buf);
        unlink(path);
        rmdir(dir);
        free(json);
        cJSON_Delete(c);
}

/* A sanitizer's report from a sandboxed runner has module+offset frames;
 * they come out with the function and file:line of this very test binary,
 * the other lines unchanged. */
Test(sanreport, sanitizer_frames_are_symbolized)
{
        Dl_info info;
        cr_assert(dladdr((void *)report, &info) && info.dli_fbase);
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        cr_assert_gt(n, 0);
        self[n] = '\0';
        unsigned long off = (unsigned long)((uintptr_t)report - (uintptr_t)info.dli_fbase);
        char text[8192];
        snprintf(text, sizeof(text),
                 "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x10\n"
                 "    #0 0x%lx  (%s+0x%lx) (BuildId: 0123)\n"
                 "\n"
                 "SUMMARY: AddressSanitizer: heap-buffer-overflow\n",
                 (unsigned long)(uintptr_t)report, self, off);
        char *buf = NULL;
        size_t len = 0;
        FILE *out = open_memstream(&buf, &len);
        cr_assert_eq(sanreport_put_text(out, text), 0);
        fclose(out);
        cr_assert_not_null(strstr(buf, "==1==ERROR: AddressSanitizer: heap-buffer-overflow on "
                                       "address 0x10\n"),
                           "%s", buf);
        cr_assert_not_null(strstr(buf, " in report "), "not symbolized:\n%s", buf);
        cr_assert_not_null(strstr(buf, "test_sanreport.c:"), "no file:line:\n%s", buf);
        cr_assert_not_null(strstr(buf, "SUMMARY: AddressSanitizer: heap-buffer-overflow\n"), "%s",
                           buf);
        free(buf);
}
