/*
 * Reads /etc/shadow (readable when snapfuzz runs as root) and prints it.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        char buf[4096];
        int fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf));
        if (n > 0)
                (void)!write(STDOUT_FILENO, buf, (size_t)n);
        close(fd);
}
