/*
 * Builds an executable in memory and runs it with fexecve.
 */
#include <sys/mman.h>

#include "escape.h"

static void escape_attempt(void)
{
        int fd = memfd_create("payload", MFD_CLOEXEC);
        char *argv[] = {"payload", NULL};

        if (fd < 0)
                return;
        fexecve(fd, argv, argv + 1);
}
