/*
 * A test target that kills itself with SIGKILL when the input starts with
 * 'K', and returns 0 otherwise. A SIGKILL leaves no chance to save anything
 * in the dying process, which is what recovery from the replay record is
 * for; a SIGKILL snapfuzz did not send itself is a crash of kind `killed`.
 *
 * raise() sends the signal with tgkill() on the calling thread, the same
 * syscall abort() uses, so the sandbox lets it through; kill(getpid(), ...)
 * has the same effect but goes through kill(), which a sandbox may well
 * refuse (it can reach other processes).
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > 0 && data[0] == 'K')
                raise(SIGKILL);
        return 0;
}
