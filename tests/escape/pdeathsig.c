/*
 * Turns off its parent-death signal, to outlive the worker.
 */
#include <sys/prctl.h>

#include "escape.h"

static void escape_attempt(void)
{
        prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
}
