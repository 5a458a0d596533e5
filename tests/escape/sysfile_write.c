/*
 * Opens /dev/urandom, one of the system files every runner may read, for
 * writing (what is written there is mixed into the kernel's pool): only
 * read-only opens of the system files are allowed.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void)!write(fd, "snapfuzz", 8);
        close(fd);
}
