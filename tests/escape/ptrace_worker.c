/*
 * Attaches to the worker with ptrace.
 */
#include <sys/ptrace.h>

#include "escape.h"

static void escape_attempt(void)
{
        ptrace(PTRACE_ATTACH, escape_worker, NULL, NULL);
}
