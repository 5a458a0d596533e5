/*
 * Closes every descriptor, the runner's output pipe included, then
 * crashes: the report must still arrive (the death record lives in shared
 * memory, not in a pipe).
 */

#include "escape.h"

static void escape_attempt(void)
{
        for (int fd = 0; fd < 1024; fd++)
                close(fd);
        *(volatile int *)(uintptr_t)16 = 1;
}
