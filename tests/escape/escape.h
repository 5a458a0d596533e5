/*
 * The hostile targets' common part. Each tests/escape/<name>.c defines
 * escape_attempt(), which tries one way out of the sandbox, then includes
 * this file for the harness around it:
 *
 * - the attempt runs only on the magic input "ESCAPE!" (tests/test_escape.c
 *   puts it in a seed directory, so it runs in the warm-up pass, first
 *   thing, unmutated);
 * - LLVMFuzzerInitialize, which runs in the worker before the sandbox
 *   exists, reads from the environment where evidence of an escape would
 *   land (SNAPFUZZ_ESCAPE_DIR), the test's TCP port
 *   (SNAPFUZZ_ESCAPE_PORT) and a process to attack (SNAPFUZZ_ESCAPE_VICTIM),
 *   and notes the worker's and the coordinator's pids.
 *
 * Outside the sandbox every attempt succeeds (tests/test_escape.c shows it
 * for some with --sandbox off), which is what makes the suite able to see
 * a sandbox that lets one through.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define ESCAPE_MAGIC "ESCAPE!"

static char escape_dir[1024] = "/tmp";
static int escape_port;
static pid_t escape_victim;
static pid_t escape_worker;      /* the runner's parent */
static pid_t escape_coordinator; /* the worker's parent */

static void escape_attempt(void);

/* @name in the test's directory. */
__attribute__((unused)) static const char *escape_path(const char *name)
{
        static char path[2048];

        snprintf(path, sizeof(path), "%s/%s", escape_dir, name);
        return path;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        const char *dir = getenv("SNAPFUZZ_ESCAPE_DIR");
        const char *port = getenv("SNAPFUZZ_ESCAPE_PORT");
        const char *victim = getenv("SNAPFUZZ_ESCAPE_VICTIM");

        (void)argc;
        (void)argv;
        if (dir && strlen(dir) < sizeof(escape_dir))
                memcpy(escape_dir, dir, strlen(dir) + 1);
        escape_port = port ? atoi(port) : 0;
        escape_victim = victim ? (pid_t)atoi(victim) : 0;
        escape_worker = getpid();
        escape_coordinator = getppid();
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size >= sizeof(ESCAPE_MAGIC) - 1 &&
            memcmp(data, ESCAPE_MAGIC, sizeof(ESCAPE_MAGIC) - 1) == 0)
                escape_attempt();
        return 0;
}
