/*
 * Writes into the worker's memory with process_vm_writev.
 */
#include <sys/uio.h>

#include "escape.h"

static void escape_attempt(void)
{
        static char word[8] = "escaped";
        struct iovec local = {.iov_base = word, .iov_len = sizeof(word)};
        struct iovec remote = {.iov_base = word, .iov_len = sizeof(word)};

        process_vm_writev(escape_worker, &local, 1, &remote, 1, 0);
}
