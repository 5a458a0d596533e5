/*
 * Forks a child that leaves the runner's process group and outlives it,
 * then leaves a marker file.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        if (fork() == 0) {
                setsid();
                sleep(2);
                close(open(escape_path("outlived"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
                _exit(0);
        }
}
