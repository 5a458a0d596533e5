/*
 * Creates a file outside the output directory and writes to it.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        int fd = open(escape_path("created"), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);

        if (fd >= 0) {
                (void)!write(fd, "escaped\n", 8);
                close(fd);
        }
}
