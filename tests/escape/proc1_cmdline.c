/*
 * Reads /proc/1/cmdline: the command line of pid 1 of its pid namespace.
 * Whatever it reads goes to standard output (so a leak would show in
 * snapfuzz's output and in crash.json), then the runner aborts, which
 * makes a successful read a crash of kind abort; stopped, it is a crash of
 * kind sandbox naming openat.
 */
#include "environ_read.h"

static void escape_attempt(void)
{
        environ_read("/proc/1/cmdline");
}
