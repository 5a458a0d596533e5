/*
 * The engine's cJSON in the drop-in: one trampoline per cJSON function the
 * engine calls (the list below; fuzzer/mkarchive.sh fails the build when
 * the engine calls one that is not in it), each a call through a pointer
 * resolved with dlsym on a private handle of libcjson.so.1.
 *
 * Why not link libcjson: a static link of the harness puts the harness's
 * own cJSON_Parse (a harness may vendor cJSON) and the engine's reference
 * to cJSON_Parse in one namespace, where one of them captures the other.
 * Why this works: dlsym on a handle searches that library (and its
 * dependencies), never the executable, so each pointer is libcjson's own
 * function; and libcjson's calls to its own exported functions, which go
 * through its PLT and would resolve to the executable's definitions first,
 * are pointed at its own definitions by selfbind_apply (the same rebinding
 * the CLI applies to a dlopen()ed harness). RTLD_DEEPBIND would do the
 * latter too, but AddressSanitizer refuses it.
 *
 * Which libcjson: the one the archive was built with, carried inside it as
 * data (fuzzer/mkarchive.sh; Debian ships no libcjson.a), written to a
 * memfd and opened from there, so a drop-in binary needs no libcjson where
 * it runs (OSS-Fuzz's runner images have none) and always gets the ABI its
 * engine was compiled against. Should the memfd fail, the system's
 * libcjson.so.1 is opened instead.
 *
 * Invariants: cjsonbind_load runs before any engine code (the first thing
 * LLVMFuzzerRunDriver does, before any fork or exec, so every worker and
 * helper has it too); after it, no pointer is NULL.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzzer/cjsonbind.h"
#include "worker/selfbind.h"

#include "snapfuzz/banned.h"

/* X(return type, name without cJSON_, (parameters), (arguments)) */
#define CJSONBIND_FUNCTIONS                                                                        \
        X(cJSON *, AddArrayToObject, (cJSON *const object, const char *const name),                \
          (object, name))                                                                          \
        X(cJSON *, AddBoolToObject,                                                                \
          (cJSON *const object, const char *const name, const cJSON_bool boolean),                 \
          (object, name, boolean))                                                                 \
        X(cJSON_bool, AddItemReferenceToObject, (cJSON * object, const char *string, cJSON *item), \
          (object, string, item))                                                                  \
        X(cJSON_bool, AddItemToArray, (cJSON * array, cJSON * item), (array, item))                \
        X(cJSON_bool, AddItemToObject, (cJSON * object, const char *string, cJSON *item),          \
          (object, string, item))                                                                  \
        X(cJSON *, AddNumberToObject,                                                              \
          (cJSON *const object, const char *const name, const double number),                      \
          (object, name, number))                                                                  \
        X(cJSON *, AddObjectToObject, (cJSON *const object, const char *const name),               \
          (object, name))                                                                          \
        X(cJSON *, AddStringToObject,                                                              \
          (cJSON *const object, const char *const name, const char *const string),                 \
          (object, name, string))                                                                  \
        X(cJSON *, CreateArray, (void), ())                                                        \
        X(cJSON *, CreateNumber, (double num), (num))                                              \
        X(cJSON *, CreateObject, (void), ())                                                       \
        X(cJSON *, CreateString, (const char *string), (string))                                   \
        X(void, Delete, (cJSON * item), (item))                                                    \
        X(void, DeleteItemFromObjectCaseSensitive, (cJSON * object, const char *string),           \
          (object, string))                                                                        \
        X(cJSON *, DetachItemFromArray, (cJSON * array, int which), (array, which))                \
        X(cJSON *, Duplicate, (const cJSON *item, cJSON_bool recurse), (item, recurse))            \
        X(int, GetArraySize, (const cJSON *array), (array))                                        \
        X(const char *, GetErrorPtr, (void), ())                                                   \
        X(cJSON *, GetObjectItemCaseSensitive,                                                     \
          (const cJSON *const object, const char *const string), (object, string))                 \
        X(cJSON_bool, IsArray, (const cJSON *const item), (item))                                  \
        X(cJSON_bool, IsBool, (const cJSON *const item), (item))                                   \
        X(cJSON_bool, IsNull, (const cJSON *const item), (item))                                   \
        X(cJSON_bool, IsNumber, (const cJSON *const item), (item))                                 \
        X(cJSON_bool, IsObject, (const cJSON *const item), (item))                                 \
        X(cJSON_bool, IsString, (const cJSON *const item), (item))                                 \
        X(cJSON_bool, IsTrue, (const cJSON *const item), (item))                                   \
        X(cJSON *, Parse, (const char *value), (value))                                            \
        X(cJSON *, ParseWithLength, (const char *value, size_t buffer_length),                     \
          (value, buffer_length))                                                                  \
        X(cJSON *, ParseWithLengthOpts,                                                            \
          (const char *value, size_t buffer_length, const char **return_parse_end,                 \
           cJSON_bool require_null_terminated),                                                    \
          (value, buffer_length, return_parse_end, require_null_terminated))                       \
        X(cJSON *, ParseWithOpts,                                                                  \
          (const char *value, const char **return_parse_end, cJSON_bool require_null_terminated),  \
          (value, return_parse_end, require_null_terminated))                                      \
        X(char *, Print, (const cJSON *item), (item))                                              \
        X(char *, PrintUnformatted, (const cJSON *item), (item))                                   \
        X(double, SetNumberHelper, (cJSON * object, double number), (object, number))              \
        X(void, free, (void *object), (object))

/* X's ret is a type, which cannot be put in parentheses:
 * NOLINTBEGIN(bugprone-macro-parentheses) */
#define X(ret, name, params, args) static ret(*p_##name) params;
CJSONBIND_FUNCTIONS
#undef X
/* NOLINTEND(bugprone-macro-parentheses) */

/* The trampolines: sf_cJSON_X, what the engine's cJSON_X became. */
#define X(ret, name, params, args)                                                                 \
        __attribute__((visibility("hidden"))) ret sf_cJSON_##name params;                          \
        ret sf_cJSON_##name params                                                                 \
        {                                                                                          \
                return p_##name args;                                                              \
        }
CJSONBIND_FUNCTIONS
#undef X

/* libcjson.so.1's bytes, put in by fuzzer/mkarchive.sh (ld -b binary);
 * weak, so that the front end's objects link without them too. */
extern const unsigned char _binary_libcjson_so_1_start[] __attribute__((weak));
extern const unsigned char _binary_libcjson_so_1_end[] __attribute__((weak));

/* The carried libcjson, opened from a memfd; NULL when there is none or it
 * cannot be written. */
static void *open_carried(void)
{
        /* Two symbols of one blob: compared as addresses. */
        uintptr_t start = (uintptr_t)_binary_libcjson_so_1_start;
        uintptr_t end = (uintptr_t)_binary_libcjson_so_1_end;
        if (!start || !end || end <= start)
                return NULL;
        const unsigned char *p = _binary_libcjson_so_1_start;
        size_t len = (size_t)(end - start);
        int fd = memfd_create("libcjson.so.1", MFD_CLOEXEC);
        if (fd < 0)
                return NULL;
        void *h = NULL;
        size_t done = 0;
        while (done < len) {
                ssize_t n = write(fd, p + done, len - done);
                if (n <= 0)
                        goto out;
                done += (size_t)n;
        }
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
out:
        close(fd);
        return h;
}

int cjsonbind_load(char *err, size_t errlen)
{
        static void *handle;
        unsigned rebound = 0;
        if (handle)
                return 0;
        void *h = open_carried();
        if (!h)
                h = dlopen("libcjson.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                const char *e = dlerror();
                snprintf(err, errlen,
                         "cannot load libcjson.so.1, which snapfuzz's engine needs (Debian: "
                         "apt-get install libcjson1): %s",
                         e ? e : "dlopen failed");
                return -ENOENT;
        }
        int r = selfbind_apply(h, &rebound);
        if (r < 0) {
                snprintf(err, errlen, "cannot bind libcjson.so.1 to its own functions (error %d)",
                         r);
                return r;
        }
        /* NOLINTBEGIN(bugprone-macro-parentheses): ret is a type */
#define X(ret, name, params, args)                                                                 \
        p_##name = (ret(*) params)dlsym(h, "cJSON_" #name);                                        \
        if (!p_##name) {                                                                           \
                snprintf(err, errlen, "libcjson.so.1 has no cJSON_%s", #name);                     \
                return -ENOENT;                                                                    \
        }
        CJSONBIND_FUNCTIONS
#undef X
        /* NOLINTEND(bugprone-macro-parentheses) */
        handle = h;
        return 0;
}
