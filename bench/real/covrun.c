/*
 * covrun: the coverage judge's driver. Linked with a harness and its library
 * built with -fprofile-instr-generate -fcoverage-mapping (and no fuzzer
 * instrumentation), it runs every file named on the command line, or found
 * in a directory named there, through LLVMFuzzerTestOneInput once, so that
 * the profile written at exit holds the union of what those inputs reach.
 *
 * An input that crashes would lose the profile of the whole run, so each
 * input runs in a forked child that writes its own profile (LLVM_PROFILE_FILE
 * with %p gives each child a file); the caller merges them with
 * llvm-profdata. Forking per input costs little next to the fuzzing it
 * measures.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Children run this many inputs each before writing their profile. */
#define COVRUN_BATCH 64

static char **paths;
static size_t npaths, cap;

static void add_path(const char *p)
{
        if (npaths == cap) {
                cap = cap ? 2 * cap : 256;
                paths = realloc(paths, cap * sizeof(*paths));
                if (!paths)
                        abort();
        }
        paths[npaths++] = strdup(p);
}

static void collect(const char *p)
{
        struct stat st;
        if (stat(p, &st) != 0)
                return;
        if (!S_ISDIR(st.st_mode)) {
                if (S_ISREG(st.st_mode))
                        add_path(p);
                return;
        }
        DIR *d = opendir(p);
        if (!d)
                return;
        struct dirent *e;
        while ((e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                char buf[4096];
                snprintf(buf, sizeof(buf), "%s/%s", p, e->d_name);
                collect(buf);
        }
        closedir(d);
}

static void run_one(const char *p)
{
        FILE *f = fopen(p, "rb");
        if (!f)
                return;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n)
                LLVMFuzzerTestOneInput(buf, (size_t)n);
        free(buf);
        fclose(f);
}

int main(int argc, char **argv)
{
        for (int i = 1; i < argc; i++)
                collect(argv[i]);
        if (LLVMFuzzerInitialize)
                LLVMFuzzerInitialize(&argc, &argv);
        /* A batch that crashes is rerun one input per child, so only the
           crashing input's own profile is lost. */
        for (size_t i = 0; i < npaths; i += COVRUN_BATCH) {
                size_t end = i + COVRUN_BATCH < npaths ? i + COVRUN_BATCH : npaths;
                pid_t pid = fork();
                if (pid == 0) {
                        alarm(30);
                        for (size_t j = i; j < end; j++)
                                run_one(paths[j]);
                        exit(0);
                }
                int st = 0;
                waitpid(pid, &st, 0);
                if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                        continue;
                for (size_t j = i; j < end; j++) {
                        pid = fork();
                        if (pid == 0) {
                                alarm(5);
                                run_one(paths[j]);
                                exit(0);
                        }
                        waitpid(pid, &st, 0);
                }
        }
        printf("covrun: %zu inputs\n", npaths);
        return 0;
}
