/*
 * The common part of the escape targets that try to read the worker's
 * environment or command line through /proc (proc_self_environ.c,
 * proc1_environ.c, proc1_cmdline.c, proc_via_symlink.c): the worker opens
 * files for the runner under a policy's directories, so /proc there would
 * describe the worker, whose environment holds the user's secrets.
 */
#pragma once

#include <fcntl.h>

#include "escape.h"

static void environ_read(const char *path)
{
        char buf[1 << 14];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return;
        n = read(fd, buf, sizeof(buf));
        close(fd);
        if (n <= 0)
                return;
        /* NULs separate the variables: make them lines. */
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == '\0')
                        buf[i] = '\n';
        (void)!write(STDOUT_FILENO, buf, (size_t)n);
        abort();
}
