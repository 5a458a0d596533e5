/*
 * Creates a user namespace, where it would be root.
 */
#include <sched.h>

#include "escape.h"

static void escape_attempt(void)
{
        unshare(CLONE_NEWUSER | CLONE_NEWNS);
}
