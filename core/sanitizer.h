/*
 * Targets built with a sanitizer runtime as a shared library
 * (-fsanitize=address,fuzzer-no-link -shared-libasan, or gcc's
 * -fsanitize=address) need that runtime loaded first in the process, which
 * only works from the start of a program. sanitizer_detect() reads the
 * target's dynamic section, finds the runtime it needs on this machine, and
 * workers are exec'd with it preloaded and with options that make
 * sanitizers work inside the sandbox (no symbolizer process, no leak check
 * at exit, abort on error so the runner's handler records the stack). A
 * target built with clang's static runtime (the default) names none: its
 * undefined __asan_/__ubsan_ entry points tell, and clang's shared build of
 * that runtime is preloaded. The user does nothing special.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct SanitizerInfo {
        bool asan;
        bool ubsan;
        bool msan;
        /* The LD_PRELOAD value for the worker ("" when nothing is needed). */
        char preload[PATH_MAX];
} SanitizerInfo;

/* Inspects @target. Returns 0 (with *ret filled, possibly with nothing to
 * preload), or a negative errno with a reason for a person in @why: a
 * runtime the target needs that cannot be found on this machine. */
int sanitizer_detect(const char *target, SanitizerInfo *ret, char *why, size_t whylen);

/* The environment a worker is exec'd with: this process's, with
 * LD_PRELOAD and the sanitizer options set. It is built before the fork:
 * the child of a multithreaded process may only make async-signal-safe
 * calls, and a sanitizer's malloc (unlike glibc's) is not made consistent
 * across fork, so a setenv there could wait forever for a lock another
 * thread held. Options the user already set in ASAN_OPTIONS/UBSAN_OPTIONS
 * are kept; the ones the sandbox depends on are appended, so they win.
 * @malloc_limit_mb (0: none) becomes ASan's max_allocation_size_mb, or, for
 * a target without a sanitizer that replaces malloc, the limit of
 * libsnapfuzz-malloc.so, preloaded from where sanitizer_malloc_shim() finds
 * it (nothing when it finds none). With @detect_leaks, LeakSanitizer is on
 * but never checks by itself (no check at exit): the runner asks for a
 * check when it wants one. With @confirm (a worker that confirms crashes,
 * WprocConfig.sanitizer_confirm), AddressSanitizer and UBSan handle
 * SIGSEGV, SIGBUS and SIGFPE themselves and print their report ("SEGV on
 * unknown address ..."), then abort as for any error they find. Returns a
 * NULL-terminated array for execve(2), or NULL when out of memory; free it
 * with sanitizer_env_free. */
char **sanitizer_env(const SanitizerInfo *s, unsigned malloc_limit_mb, bool detect_leaks,
                     bool confirm);
void sanitizer_env_free(char **envp);

/* The path of libsnapfuzz-malloc.so into @ret: next to the running binary
 * (a build tree, or a copy with the library beside it), where an install
 * puts it relative to the binary (../lib/<arch>/snapfuzz), or where this
 * build installs it. Returns 0, or -ENOENT (none of them exists; @ret
 * then says where it was looked for, for a person). */
int sanitizer_malloc_shim(char *ret, size_t cap);

/* Whether --malloc-limit-mb @malloc_limit_mb (0: none) goes unenforced for
 * a target described by @s: it needs the shim, which cannot be found. */
bool sanitizer_malloc_limit_missing(const SanitizerInfo *s, unsigned malloc_limit_mb);
