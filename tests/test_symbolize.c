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

/* One frame at symbolize_marker, as the worker describes frames. */
static cJSON *marker_frames(void)
{
        Dl_info info;
        char exe[PATH_MAX], off[32];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

        cr_assert_gt(n, 0);
        exe[n] = 0;
        cr_assert(dladdr((void *)(uintptr_t)symbolize_marker, &info));
        snprintf(off, sizeof(off), "0x%lx",
                 (unsigned long)((uintptr_t)symbolize_marker - (uintptr_t)info.dli_fbase));
        cJSON *frames = cJSON_CreateArray();
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "module", "test_symbolize");
        cJSON_AddStringToObject(f, "path", exe);
        cJSON_AddStringToObject(f, "offset", off);
        cJSON_AddItemToArray(frames, f);
        return frames;
}

static const char *function_of(const cJSON *frames)
{
        const cJSON *f = cJSON_GetArrayItem(frames, 0);
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(f, "function");
        return cJSON_IsString(fn) ? fn->valuestring : "";
}

Test(symbolize, a_frame_seen_before_does_not_start_the_symbolizer_again)
{
        cr_assert_eq(system("command -v llvm-symbolizer >/dev/null 2>&1"), 0,
                     "llvm-symbolizer is not installed (scripts/setup.sh installs llvm)");
        char dir[] = "/tmp/snapfuzz-sym-XXXXXX", script[128], count[128], line[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(script, sizeof(script), "%s/symbolizer", dir);
        snprintf(count, sizeof(count), "%s/count", dir);
        FILE *s = fopen(script, "w");
        cr_assert_not_null(s);
        fprintf(s, "#!/bin/sh\necho started >> %s\nexec llvm-symbolizer \"$@\"\n", count);
        fclose(s);
        cr_assert_eq(chmod(script, 0755), 0);
        setenv("SNAPFUZZ_SYMBOLIZER", script, 1);

        cJSON *first = marker_frames(), *second = marker_frames();
        cr_assert_eq(symbolize_frames(first, false), 1);
        cr_expect_str_eq(function_of(first), "symbolize_marker");
        cr_assert_eq(symbolize_frames(second, false), 1);
        cr_expect_str_eq(function_of(second), "symbolize_marker");
        const cJSON *file = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(second, 0), "file");
        cr_expect(cJSON_IsString(file) && strstr(file->valuestring, "test_symbolize.c"));

        int started = 0;
        FILE *c = fopen(count, "r");
        cr_assert_not_null(c);
        while (fgets(line, sizeof(line), c))
                started++;
        fclose(c);
        cr_expect_eq(started, 1, "the symbolizer started %d times for the same frame", started);
        cJSON_Delete(first);
        cJSON_Delete(second);
        unlink(count);
        unlink(script);
        rmdir(dir);
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
