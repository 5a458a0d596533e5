/*
 * Writes to a file it opened in LLVMFuzzerInitialize, before the sandbox;
 * the runner closed every inherited descriptor, so the write goes nowhere.
 * Not reported (a write to a closed descriptor is just EBADF); the test
 * checks that the file stays empty.
 */
#include <fcntl.h>

#include "escape.h"

static int escape_inherited_fd = -1;

/* Opened before the sandbox, as a harness might open a log file. */
__attribute__((constructor)) static void open_before_the_sandbox(void)
{
        const char *dir = getenv("SNAPFUZZ_ESCAPE_DIR");
        char path[2048];

        if (!dir)
                return;
        snprintf(path, sizeof(path), "%s/inherited", dir);
        escape_inherited_fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0644);
}

static void escape_attempt(void)
{
        static const char line[] = "escaped through an inherited descriptor\n";

        if (escape_inherited_fd >= 0)
                (void)!write(escape_inherited_fd, line, sizeof(line) - 1);
}
