/*
 * Stores a key in the session keyring.
 */
#include <sys/syscall.h>

#include "escape.h"

static void escape_attempt(void)
{
        syscall(__NR_add_key, "user", "snapfuzz-escape", "secret", 6, -3 /* session keyring */);
}
