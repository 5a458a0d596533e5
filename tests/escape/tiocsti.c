/*
 * Types a command into the terminal with ioctl(TIOCSTI).
 */
#include <sys/ioctl.h>

#include "escape.h"

static void escape_attempt(void)
{
        char c = '\n';

        ioctl(STDERR_FILENO, TIOCSTI, &c);
}
