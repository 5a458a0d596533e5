/*
 * Kills an unrelated process the test started, with SIGKILL.
 */
#include <signal.h>

#include "escape.h"

static void escape_attempt(void)
{
        kill(escape_victim, SIGKILL);
}
