/*
 * Creates a userfaultfd, the usual tool for stretching kernel races.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "escape.h"

static void escape_attempt(void)
{
        syscall(__NR_userfaultfd, O_CLOEXEC);
}
