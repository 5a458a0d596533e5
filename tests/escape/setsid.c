/*
 * Leaves the runner's process group and session, which the worker kills
 * when the runner ends.
 */

#include "escape.h"

static void escape_attempt(void)
{
        setsid();
}
