/*
 * What a fork of the coordinator gives its child: no lock held by one of
 * its helper threads (the fork gate), and a worker's environment built
 * before the fork, so the child has nothing left to allocate before exec.
 * Without both, a drop-in built with AddressSanitizer hung at start about
 * once in 1000 runs: the worker's child waited forever for an ASan
 * allocator lock the corpus writer thread held at the fork.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/forkgate.h"
#include "core/sanitizer.h"

/* A helper thread that spends nearly all its time holding @held, always
 * inside the gate. */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool stop_busy;
static atomic_ulong busy_rounds;

static void *busy_thread(void *arg)
{
        (void)arg;
        while (!atomic_load(&stop_busy)) {
                forkgate_enter();
                pthread_mutex_lock(&held);
                for (volatile int i = 0; i < 20000; i++) {
                }
                pthread_mutex_unlock(&held);
                forkgate_leave();
                atomic_fetch_add(&busy_rounds, 1);
        }
        return NULL;
}

Test(forksafe, a_fork_never_inherits_a_lock_a_gated_thread_held)
{
        forkgate_init();
        pthread_t t;
        cr_assert_eq(pthread_create(&t, NULL, busy_thread, NULL), 0);
        while (atomic_load(&busy_rounds) < 10) {
        }
        int caught = 0, forks = 300;
        for (int i = 0; i < forks; i++) {
                pid_t pid = fork();
                cr_assert_geq(pid, 0);
                if (pid == 0)
                        _exit(pthread_mutex_trylock(&held) == 0 ? 0 : 1);
                int st;
                cr_assert_eq(waitpid(pid, &st, 0), pid);
                cr_assert(WIFEXITED(st));
                caught += WEXITSTATUS(st);
        }
        unsigned long rounds = atomic_load(&busy_rounds);
        atomic_store(&stop_busy, true);
        pthread_join(t, NULL);
        cr_expect_eq(caught, 0, "%d of %d children were born with the thread's lock held", caught,
                     forks);
        /* The thread kept working between the forks: the gate lets it in
         * again after each one. */
        cr_expect_gt(rounds, 10);
}

static const char *env_value(char **envp, const char *name)
{
        size_t len = strlen(name);
        for (; *envp; envp++)
                if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
                        return *envp + len + 1;
        return NULL;
}

Test(forksafe, a_workers_environment_is_built_without_touching_ours)
{
        /* (The sanitizer build of the tests sets these for itself; its
         * runtime has read them already.) */
        unsetenv("UBSAN_OPTIONS");
        unsetenv("LSAN_OPTIONS");
        cr_assert_eq(setenv("ASAN_OPTIONS", "verbosity=0", 1), 0);
        cr_assert_eq(setenv("LD_PRELOAD", "/users/own.so", 1), 0);
        cr_assert_eq(setenv("SF_FORKSAFE_OTHER", "kept", 1), 0);
        SanitizerInfo san = {.asan = true, .ubsan = true};
        snprintf(san.preload, sizeof(san.preload), "/rt/libclang_rt.asan.so");

        char **envp = sanitizer_env(&san, 512, true, true);
        cr_assert_not_null(envp);
        /* The user's options first, the sandbox's after them (the last
         * value of a flag wins), and the confirmation's handlers last. */
        const char *asan = env_value(envp, "ASAN_OPTIONS");
        cr_assert_not_null(asan);
        cr_expect_eq(strncmp(asan, "verbosity=0:", 12), 0, "%s", asan);
        cr_expect_not_null(strstr(asan, "max_allocation_size_mb=512"), "%s", asan);
        /* A quarantine OSS-Fuzz's size, where the user named none. */
        cr_expect_not_null(strstr(asan, ":quarantine_size_mb=10:"), "%s", asan);
        cr_expect_not_null(strstr(asan, "detect_leaks=1:leak_check_at_exit=0"), "%s", asan);
        const char *off = strstr(asan, "handle_segv=0"), *on = strstr(asan, "handle_segv=1");
        cr_expect(off && on && on > off, "%s", asan);
        cr_expect_not_null(strstr(env_value(envp, "UBSAN_OPTIONS"), "halt_on_error=1"));
        cr_expect_not_null(strstr(env_value(envp, "LSAN_OPTIONS"), "symbolize=0"));
        /* The sanitizer runtime is loaded first, the user's preload after. */
        cr_expect_str_eq(env_value(envp, "LD_PRELOAD"), "/rt/libclang_rt.asan.so:/users/own.so");
        cr_expect_str_eq(env_value(envp, "SF_FORKSAFE_OTHER"), "kept");
        /* Each name once. */
        int n_asan = 0;
        for (char **p = envp; *p; p++)
                n_asan += strncmp(*p, "ASAN_OPTIONS=", 13) == 0;
        cr_expect_eq(n_asan, 1);
        sanitizer_env_free(envp);

        /* This process's own environment is as it was. */
        cr_expect_str_eq(getenv("ASAN_OPTIONS"), "verbosity=0");
        cr_expect_str_eq(getenv("LD_PRELOAD"), "/users/own.so");
        cr_expect_null(getenv("UBSAN_OPTIONS"));

        /* The user's quarantine is the one in force. */
        cr_assert_eq(setenv("ASAN_OPTIONS", "verbosity=0,quarantine_size_mb=256", 1), 0);
        envp = sanitizer_env(&san, 0, true, false);
        cr_assert_not_null(envp);
        cr_expect_null(strstr(env_value(envp, "ASAN_OPTIONS"), "quarantine_size_mb=10"), "%s",
                       env_value(envp, "ASAN_OPTIONS"));
        sanitizer_env_free(envp);
        cr_assert_eq(setenv("ASAN_OPTIONS", "verbosity=0", 1), 0);

        /* A plain target: no confirmation handlers, no leak checks. */
        SanitizerInfo plain = {0};
        envp = sanitizer_env(&plain, 0, false, false);
        cr_assert_not_null(envp);
        cr_expect_null(strstr(env_value(envp, "ASAN_OPTIONS"), "handle_segv=1"));
        cr_expect_null(strstr(env_value(envp, "ASAN_OPTIONS"), "quarantine"));
        cr_expect_not_null(strstr(env_value(envp, "ASAN_OPTIONS"), "detect_leaks=0"));
        cr_expect_str_eq(env_value(envp, "LD_PRELOAD"), "/users/own.so");
        sanitizer_env_free(envp);
}
