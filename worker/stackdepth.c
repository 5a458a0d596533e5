/*
 * The stack-depth feature map (the rules are in worker/stackdepth.h). The
 * runner writes it between executions; the coverage scan reads and zeroes
 * it with the target's counters.
 */
#include "worker/stackdepth.h"
#include "core/coverage.h"

#include "snapfuzz/banned.h"

/* Exported to the target (the executable is linked with --export-dynamic),
 * as the other symbols it binds to (worker/sancov.c): its stack-depth code
 * refers to it by name. */
__attribute__((visibility("default"))) __thread uintptr_t __sancov_lowest_stack;

uint8_t stackdepth_map[STACKDEPTH_COUNTERS] __attribute__((aligned(64)));
static int stackdepth_enabled;

void stackdepth_enable(void)
{
        if (stackdepth_enabled)
                return;
        coverage_register_features(stackdepth_map, stackdepth_map + STACKDEPTH_COUNTERS);
        stackdepth_enabled = 1;
}
