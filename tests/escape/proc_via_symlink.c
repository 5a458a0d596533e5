/*
 * Reads DIR/allowed/proc/self/environ, where the test made DIR/allowed/proc a
 * symlink to /proc, inside a directory its policy lets it read.
 * Whatever it reads goes to standard output (so a leak would show in
 * snapfuzz's output and in crash.json), then the runner aborts, which
 * makes a successful read a crash of kind abort; stopped, it is a crash of
 * kind sandbox naming openat.
 */
#include "environ_read.h"

static void escape_attempt(void)
{
        environ_read(escape_path("allowed/proc/self/environ"));
}
