/*
 * Conformance target for the libFuzzer-compatibility tests: a harness
 * whose input picks what goes wrong, so one binary shows every ending
 * ClusterFuzz and OSS-Fuzz tell apart. The first four bytes choose:
 *   "SEGV"  a write through a null pointer (a deadly signal)
 *   "ABRT"  abort()
 *   "HEAP"  a one-byte read past a heap block (AddressSanitizer's report
 *           when the build has it, a silent read otherwise)
 *   "EXIT"  exit(0) from inside the target
 *   "SLOW"  a busy loop for @c LFC_SLOW_SECONDS seconds (a timeout)
 *   "EXEC"  execve("/bin/true"): outside any fuzzing sandbox
 *   "OPEN"  open("/etc/passwd"): outside any fuzzing sandbox
 *   "CRSH"  the same null write as SEGV, reached only after the input's
 *           bytes 4..7 are "BUG!" (a crash the minimizer can shrink to 8
 *           bytes whatever padding follows)
 * Inputs starting "abc" (three bytes are enough) and "abcd" reach code of
 * their own, so that fuzzing with -max_len=3 finds new coverage and no
 * crash; anything else returns 0.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LFC_SLOW_SECONDS 30

static volatile int *volatile lfc_null;
static volatile int lfc_seen_abc, lfc_seen_abcd;

static void lfc_spin(int seconds)
{
        time_t end = time(NULL) + seconds;
        while (time(NULL) < end) {
        }
}

static int lfc_heap_overread(void)
{
        char *p = malloc(8);
        if (!p)
                return 0;
        memset(p, 'x', 8);
        int v = ((volatile char *)p)[8];
        free(p);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= 3 && data[0] == 'a' && data[1] == 'b' && data[2] == 'c') {
                if (size >= 4 && data[3] == 'd')
                        lfc_seen_abcd++;
                else
                        lfc_seen_abc++;
        }
        if (size < 4)
                return 0;
        if (!memcmp(data, "SEGV", 4))
                *lfc_null = 1;
        if (!memcmp(data, "ABRT", 4))
                abort();
        if (!memcmp(data, "HEAP", 4))
                return lfc_heap_overread() == 1234;
        if (!memcmp(data, "EXIT", 4))
                exit(0);
        if (!memcmp(data, "SLOW", 4))
                lfc_spin(LFC_SLOW_SECONDS);
        if (!memcmp(data, "EXEC", 4)) {
                char *argv[] = {"/bin/true", NULL};
                char *envp[] = {NULL};
                execve("/bin/true", argv, envp);
        }
        if (!memcmp(data, "OPEN", 4)) {
                int fd = open("/etc/passwd", O_RDONLY);
                if (fd >= 0)
                        close(fd);
        }
        if (!memcmp(data, "CRSH", 4) && size >= 8 && !memcmp(data + 4, "BUG!", 4))
                *lfc_null = 2;
        return 0;
}
