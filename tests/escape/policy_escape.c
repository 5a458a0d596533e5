/*
 * Runs with a policy file that allows reading under DIR/allowed: reads the
 * file it may read, then walks out of the directory with ".." to the
 * secret next to it.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        char buf[256];
        int fd = open(escape_path("allowed/ok"), O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0 || read(fd, buf, sizeof(buf)) <= 0)
                abort(); /* the allowed read must work */
        close(fd);
        fd = open(escape_path("allowed/../secret"), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf));
        if (n > 0)
                (void)!write(STDOUT_FILENO, buf, (size_t)n);
        close(fd);
}
