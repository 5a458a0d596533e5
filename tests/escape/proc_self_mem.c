/*
 * Opens /proc/self/mem for writing, the classic way to patch its own code
 * (and the runner's) around memory protections.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

        if (fd >= 0)
                close(fd);
}
