/*
 * Lifts the file-size limit that stops it from growing files.
 */
#include <sys/resource.h>

#include "escape.h"

static void escape_attempt(void)
{
        struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};

        setrlimit(RLIMIT_FSIZE, &rl);
}
