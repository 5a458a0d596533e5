/*
 * Kills the test's process through tgkill, the way raise() signals itself.
 */
#include <signal.h>
#include <sys/syscall.h>

#include "escape.h"

static void escape_attempt(void)
{
        syscall(SYS_tgkill, escape_victim, escape_victim, SIGKILL);
}
