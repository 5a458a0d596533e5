/*
 * Two ways a run silently does less than asked, made loud. A harness built
 * without SanitizerCoverage registers no counters: it loads and runs, but
 * every input looks the same to the fuzzer (coverage 0), so it fuzzes
 * blind; the check runs after the first worker's hello, that is after
 * LLVMFuzzerInitialize (which may load instrumented libraries of its own).
 * And --malloc-limit-mb needs libsnapfuzz-malloc.so for a target without a
 * sanitizer allocator: a binary copied away from it would otherwise let an
 * over-limit allocation through, to be seen (if at all) as a timeout or an
 * RSS overrun. Neither is an error unless asked (--require-coverage).
 */
#include <errno.h>

#include "core/log.h"
#include "core/sanitizer.h"
#include "engine/instrcheck.h"
#include "snapfuzz/target.h"

#include "snapfuzz/banned.h"

void instrcheck_malloc_limit(const char *target, unsigned malloc_limit_mb, unsigned rss_limit_mb)
{
        SanitizerInfo s;
        char why[512], shim[PATH_MAX];
        if (!malloc_limit_mb || sanitizer_detect(target, &s, why, sizeof(why)) < 0 ||
            !sanitizer_malloc_limit_missing(&s, malloc_limit_mb))
                return;
        (void)sanitizer_malloc_shim(shim, sizeof(shim));
        if (rss_limit_mb)
                log_warn("--malloc-limit-mb %u is not enforced: %s (meson install puts it "
                         "there); only --rss-limit-mb %u limits the target's memory",
                         malloc_limit_mb, shim, rss_limit_mb);
        else
                log_warn("--malloc-limit-mb %u is not enforced: %s (meson install puts it "
                         "there), and --rss-limit-mb is 0: nothing limits the target's memory",
                         malloc_limit_mb, shim);
}

int instrcheck_run(const SfRunConfig *cfg, size_t target_counters)
{
        instrcheck_malloc_limit(cfg->target_abs, cfg->malloc_limit_mb, cfg->rss_limit_mb);
        if (target_counters > 0)
                return 0;
        if (cfg->require_coverage) {
                log_error("%s has no coverage instrumentation (--require-coverage); build it with "
                          "clang " TARGET_CFLAGS_CLANG " or gcc " TARGET_CFLAGS_GCC
                          " (see snapfuzz cflags)",
                          cfg->target);
                return -ENOEXEC;
        }
        log_warn("%s has no coverage instrumentation: snapfuzz fuzzes it blind; build it with "
                 "clang " TARGET_CFLAGS_CLANG " or gcc " TARGET_CFLAGS_GCC " (see snapfuzz cflags)",
                 cfg->target);
        return 0;
}
