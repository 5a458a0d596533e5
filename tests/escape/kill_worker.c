/*
 * Kills the runner's parent, the worker, with SIGKILL.
 */
#include <signal.h>

#include "escape.h"

static void escape_attempt(void)
{
        kill(escape_worker, SIGKILL);
}
