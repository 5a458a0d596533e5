/*
 * Reads /etc/passwd through a directory every runner may read:
 * /usr/share/zoneinfo/../../../etc/passwd, and prints it. The worker
 * resolves such paths beneath the directory, so ".." cannot leave it.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        char buf[4096];
        int fd = open("/usr/share/zoneinfo/../../../etc/passwd", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf));
        if (n > 0)
                (void)!write(STDOUT_FILENO, buf, (size_t)n);
        close(fd);
}
