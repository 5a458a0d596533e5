/*
 * Symbolization outside the sandbox: a frame becomes function, file and
 * line, and a frame already seen is answered from memory, without starting
 * the symbolizer again (a crash that repeats under --keep-going).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "recovery/symbolize.h"

__attribute__((noinline)) int symbolize_marker(int x);
__attribute__((noinline)) int symbolize_marker(int x)
{
        return x * 3 + 1;
}

/* A return address inside code inlined into symbolize_outer(): the call
 * to symbolize_caller_pc() is in symbolize_inlined()'s body, and the work
 * after it keeps the call from being a tail call. */
static volatile int symbolize_sink;

__attribute__((noinline)) uintptr_t symbolize_caller_pc(void);
__attribute__((noinline)) uintptr_t symbolize_caller_pc(void)
{
        return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) uintptr_t symbolize_inlined(void)
{
        uintptr_t pc = symbolize_caller_pc();
        symbolize_sink++;
        return pc;
}

__attribute__((noinline)) uintptr_t symbolize_outer(void);
__attribute__((noinline)) uintptr_t symbolize_outer(void)
{
        uintptr_t pc = symbolize_inlined();
        symbolize_sink++;
        return pc;
}

/* Appends a frame at @pc, as the worker describes frames. */
static void add_frame(cJSON *frames, uintptr_t pc)
{
        Dl_info info;
        char exe[PATH_MAX], off[32];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        cr_assert_gt(n, 0);
        exe[n] = 0;
        cr_assert(dladdr((void *)pc, &info));
        snprintf(off, sizeof(off), "0x%lx", (unsigned long)(pc - (uintptr_t)info.dli_fbase));
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "module", "test_symbolize");
        cJSON_AddStringToObject(f, "path", exe);
        cJSON_AddStringToObject(f, "offset", off);
        cJSON_AddItemToArray(frames, f);
}

/* One frame at symbolize_marker. */
static cJSON *marker_frames(void)
{
        cJSON *frames = cJSON_CreateArray();
        add_frame(frames, (uintptr_t)symbolize_marker);
        return frames;
}

/* Points SNAPFUZZ_SYMBOLIZER at a script that counts its starts in
 * @dir/count, then runs llvm-symbolizer. */
static void counting_symbolizer(char *dir)
{
        char script[128], count[128];
        cr_assert_eq(system("command -v llvm-symbolizer >/dev/null 2>&1"), 0,
                     "llvm-symbolizer is not installed (scripts/setup.sh installs llvm)");
        cr_assert_not_null(mkdtemp(dir));
        snprintf(script, sizeof(script), "%s/symbolizer", dir);
        snprintf(count, sizeof(count), "%s/count", dir);
        FILE *s = fopen(script, "w");
        cr_assert_not_null(s);
        fprintf(s, "#!/bin/sh\necho started >> %s\nexec llvm-symbolizer \"$@\"\n", count);
        fclose(s);
        cr_assert_eq(chmod(script, 0755), 0);
        setenv("SNAPFUZZ_SYMBOLIZER", script, 1);
}

/* How often the counting symbolizer in @dir started; removes @dir. */
static int symbolizer_starts(const char *dir)
{
        char path[128], line[64];
        int started = 0;
        snprintf(path, sizeof(path), "%s/count", dir);
        FILE *c = fopen(path, "r");
        while (c && fgets(line, sizeof(line), c))
                started++;
        if (c)
                fclose(c);
        unlink(path);
        snprintf(path, sizeof(path), "%s/symbolizer", dir);
        unlink(path);
        rmdir(dir);
        return started;
}

static const char *function_of(const cJSON *frames)
{
        const cJSON *f = cJSON_GetArrayItem(frames, 0);
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(f, "function");
        return cJSON_IsString(fn) ? fn->valuestring : "";
}

Test(symbolize, a_frame_seen_before_does_not_start_the_symbolizer_again)
{
        char dir[] = "/tmp/snapfuzz-sym-XXXXXX";
        counting_symbolizer(dir);

        cJSON *first = marker_frames(), *second = marker_frames();
        cr_assert_eq(symbolize_frames(first, false), 1);
        cr_expect_str_eq(function_of(first), "symbolize_marker");
        cr_assert_eq(symbolize_frames(second, false), 1);
        cr_expect_str_eq(function_of(second), "symbolize_marker");
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(second, 0), "file");
        cr_expect(cJSON_IsString(file) && strstr(file->valuestring, "test_symbolize.c"));

        int started = symbolizer_starts(dir);
        cr_expect_eq(started, 1, "the symbolizer started %d times for the same frame", started);
        cJSON_Delete(first);
        cJSON_Delete(second);
}

/* A report (the drop-in's) asks for the inlined functions alone: the one
 * symbolizer run also gives every frame its own location, which later
 * plain look-ups find in memory. */
Test(symbolize, one_run_gives_a_report_its_locations_and_inlined_code)
{
        char dir[] = "/tmp/snapfuzz-sym-XXXXXX";
        counting_symbolizer(dir);

        cJSON *frames = marker_frames();
        add_frame(frames, symbolize_outer());
        cr_assert_eq(symbolize_frames_inlined(frames), 2);
        cr_expect_str_eq(function_of(frames), "symbolize_marker");
        const cJSON *outer = cJSON_GetArrayItem(frames, 1);
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(outer, "function");
        cr_expect(cJSON_IsString(fn) && strcmp(fn->valuestring, "symbolize_outer") == 0, "%s",
                  cJSON_PrintUnformatted(outer));
        const cJSON *inl =
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(outer, "inlined"), 0);
        fn = cJSON_GetObjectItemCaseSensitive(inl, "function");
        cr_expect(cJSON_IsString(fn) && strcmp(fn->valuestring, "symbolize_inlined") == 0, "%s",
                  cJSON_PrintUnformatted(outer));
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(inl, "file");
        cr_expect(cJSON_IsString(file) && strstr(file->valuestring, "test_symbolize.c"));

        cJSON *again = marker_frames();
        cr_expect_eq(symbolize_frames(again, false), 1);
        cr_expect_str_eq(function_of(again), "symbolize_marker");
        int started = symbolizer_starts(dir);
        cr_expect_eq(started, 1, "the symbolizer started %d times", started);
        cJSON_Delete(frames);
        cJSON_Delete(again);
}

/* A symbolizer named but missing is not replaced by another one: nothing
 * is symbolized, the frame keeps only its module and offset. */
Test(symbolize, a_missing_symbolizer_leaves_frames_unnamed)
{
        setenv("SNAPFUZZ_SYMBOLIZER", "/nonexistent/llvm-symbolizer", 1);
        cJSON *frames = marker_frames();
        cr_expect_not(symbolize_available());
        cr_expect_eq(symbolize_frames(frames, false), 0);
        cr_expect_str_eq(function_of(frames), "");
        cr_expect_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(frames, 0), "file"));
        cJSON_Delete(frames);
}
