/*
 * A test target that tries to get out of the sandbox when the first byte of
 * the input asks it to:
 *
 *   'E'  execve("/bin/true"): run another program (the execve syscall)
 *   'F'  fork(): create a process (clone); the child exits at once
 *   'O'  open(SNAPFUZZ_TEST_ESCAPE_FILE, or /tmp/snapfuzz-escape-test,
 *        O_CREAT | O_WRONLY, 0600) and write a line: create a file (openat)
 *
 * Any other input returns 0. Under snapfuzz each attempt must end as a crash
 * of kind `sandbox` naming the syscall, with no program run and no file
 * created; outside the sandbox (plainrun) each attempt succeeds, which shows
 * the test would notice a sandbox that let it through.
 *
 * Built with -DSANDBOX_ESCAPE_ONLY='E' (or 'F', 'O') only that attempt is
 * compiled in, so a fuzzing test knows which escape the fuzzer will find.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define ESCAPE_ENV "SNAPFUZZ_TEST_ESCAPE_FILE"
#define ESCAPE_DEFAULT_FILE "/tmp/snapfuzz-escape-test"

#ifdef SANDBOX_ESCAPE_ONLY
#define ESCAPE_WANTS(c) (SANDBOX_ESCAPE_ONLY == (c))
#else
#define ESCAPE_WANTS(c) 1
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Chosen before the sandbox exists, so a test can give each run its own file. */
static char escape_file[4096] = ESCAPE_DEFAULT_FILE;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        const char *path = getenv(ESCAPE_ENV);

        if (path && *path && strlen(path) < sizeof(escape_file))
                memcpy(escape_file, path, strlen(path) + 1);
        return 0;
}

static void escape_exec(void)
{
        char *const argv[] = {"true", NULL};
        char *const envp[] = {NULL};

        /* Returns only when the exec failed, which outside a sandbox it should not. */
        (void)execve("/bin/true", argv, envp);
}

static void escape_fork(void)
{
        pid_t pid = fork();

        if (pid == 0)
                _exit(0);
        if (pid > 0)
                (void)waitpid(pid, NULL, 0);
}

static void escape_open(void)
{
        static const char line[] = "escaped from the snapfuzz sandbox\n";
        int fd = open(escape_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

        if (fd < 0)
                return;
        (void)!write(fd, line, sizeof(line) - 1);
        close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        if (ESCAPE_WANTS('E') && data[0] == 'E')
                escape_exec();
        else if (ESCAPE_WANTS('F') && data[0] == 'F')
                escape_fork();
        else if (ESCAPE_WANTS('O') && data[0] == 'O')
                escape_open();
        return 0;
}
