/*
 * Writes code into a page, then makes the page executable.
 */
#include <sys/mman.h>

#include "escape.h"

static void escape_attempt(void)
{
        unsigned char *p =
            mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                return;
        p[0] = 0xc3; /* ret */
        mprotect(p, 4096, PROT_READ | PROT_EXEC);
}
