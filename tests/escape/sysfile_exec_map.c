/*
 * Maps a file the runner may read (/etc/localtime, a system file) writable
 * and executable at once, writes code into the private copy and would run
 * it: file mappings may be executable only when they cannot be written.
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "escape.h"

static void escape_attempt(void)
{
        int fd = open("/etc/localtime", O_RDONLY | O_CLOEXEC);
        unsigned char *p;

        if (fd < 0)
                return;
        p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
                return;
        p[0] = 0xc3; /* ret */
        ((void (*)(void))p)();
        (void)!write(STDOUT_FILENO, "ran written code\n", 17);
}
