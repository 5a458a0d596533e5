/*
 * Reads a secret file the test left next to the output directory and prints
 * it, where it would end up in snapfuzz's output and crash.json.
 */
#include <fcntl.h>

#include "escape.h"

static void escape_attempt(void)
{
        char buf[256];
        int fd = open(escape_path("secret"), O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf));
        if (n > 0)
                (void)!write(STDOUT_FILENO, buf, (size_t)n);
        close(fd);
}
