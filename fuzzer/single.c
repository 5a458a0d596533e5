/*
 * Single-input runs (libFuzzer's RunIndividualFiles): "Running: FILE",
 * the target called -runs times (at least once), "Executed FILE in N ms",
 * then libFuzzer's NOTE that no fuzzing was done, exit 0. A deadly signal
 * that no sanitizer handles is reported as libFuzzer reports it and the
 * process exits with -error_exitcode; an input running past -timeout
 * seconds is a timeout (-timeout_exitcode). Handlers are installed only
 * where nothing (a sanitizer) has one already, as libFuzzer does, so
 * AddressSanitizer's report and exit status are untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "fuzzer/single.h"

#include "snapfuzz/banned.h"

static int single_error_exitcode = 77;
static int single_timeout_exitcode = 70;
static long single_timeout_s;

/* Async-signal-safe: write(2) only. */
static void say(const char *s)
{
        ssize_t n = write(STDERR_FILENO, s, strlen(s));
        (void)n;
}

/* "==PID==" without stdio, for the signal handlers. */
static void say_pid(void)
{
        char buf[24];
        size_t i = sizeof(buf);
        unsigned long v = (unsigned long)getpid();
        buf[--i] = 0;
        do
                buf[--i] = (char)('0' + v % 10);
        while ((v /= 10) && i > 0);
        say("==");
        say(buf + i);
        say("==");
}

static void single_deadly(int sig)
{
        say_pid();
        say(" ERROR: libFuzzer: deadly signal\n");
        say(sig == SIGABRT ? "NOTE: the target aborted\n" : "");
        say("SUMMARY: libFuzzer: deadly signal\n");
        _exit(single_error_exitcode);
}

static void single_alarm(int sig)
{
        (void)sig;
        say("ALARM: working on the last Unit for more than the -timeout limit\n");
        say_pid();
        say(" ERROR: libFuzzer: timeout\n");
        say("SUMMARY: libFuzzer: timeout\n");
        _exit(single_timeout_exitcode);
}

/* Our handler for @sig unless one (a sanitizer's) is there already. */
static void handle_if_free(int sig, void (*fn)(int))
{
        struct sigaction old, sa;
        if (sigaction(sig, NULL, &old) < 0)
                return;
        if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL : old.sa_handler != SIG_DFL)
                return;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = fn;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_NODEFER | SA_RESETHAND;
        sigaction(sig, &sa, NULL);
}

static long elapsed_ms(const struct timespec *t0)
{
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (long)(t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static int run_file(const LfFlags *f, TargetTestOneInput test, const char *path, long runs)
{
        uint8_t *data = NULL;
        size_t len = 0;
        struct timespec t0;

        int r = fs_read_file(AT_FDCWD, path, SIZE_MAX / 2, &data, &len);
        if (r < 0) {
                fprintf(stderr, "ERROR: cannot read %s: %s\n", path, strerror(-r));
                return 1;
        }
        if (f->max_len > 0 && len > (size_t)f->max_len)
                len = (size_t)f->max_len;
        fprintf(stderr, "Running: %s\n", path);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < runs; i++) {
                /* The target gets a copy of exactly its size, so that a read
                 * past the end is the heap overflow a sanitizer reports. */
                uint8_t *copy = malloc(len ? len : 1);
                if (!copy) {
                        free(data);
                        fprintf(stderr, "ERROR: out of memory\n");
                        return 1;
                }
                memcpy(copy, data, len);
                if (single_timeout_s > 0)
                        alarm((unsigned)single_timeout_s);
                test(copy, len);
                alarm(0);
                free(copy);
        }
        fprintf(stderr, "Executed %s in %ld ms\n", path, elapsed_ms(&t0));
        free(data);
        return 0;
}

int single_run(const LfFlags *f, TargetTestOneInput test, TargetInitialize init, int *argc,
               char ***argv)
{
        static const int deadly[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
        long runs = f->runs > 1 ? f->runs : 1;

        single_error_exitcode = (int)f->error_exitcode;
        single_timeout_exitcode = (int)f->timeout_exitcode;
        single_timeout_s = f->timeout;
        if (init)
                init(argc, argv);
        for (size_t i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
                handle_if_free(deadly[i], single_deadly);
        handle_if_free(SIGALRM, single_alarm);
        fprintf(stderr, "%s: Running %d inputs %ld time(s) each.\n", (*argv)[0], f->n_inputs, runs);
        for (int i = 0; i < f->n_inputs; i++) {
                int r = run_file(f, test, f->inputs[i], runs);
                if (r)
                        return r;
        }
        fprintf(stderr, "***\n"
                        "*** NOTE: fuzzing was not performed, you have only\n"
                        "***       executed the target code on a fixed set of inputs.\n"
                        "***\n");
        return 0;
}
