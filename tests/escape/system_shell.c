/*
 * Runs a shell command with system(), which starts it with posix_spawn and
 * every signal blocked around clone.
 */

#include "escape.h"

static void escape_attempt(void)
{
        char cmd[2100];

        snprintf(cmd, sizeof(cmd), "touch %s", escape_path("system"));
        (void)!system(cmd);
}
