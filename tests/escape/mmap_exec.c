/*
 * Maps a writable and executable page for code it writes itself.
 */
#include <sys/mman.h>

#include "escape.h"

static void escape_attempt(void)
{
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);

        if (p != MAP_FAILED)
                munmap(p, 4096);
}
