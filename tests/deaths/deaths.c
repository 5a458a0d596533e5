/*
 * A target that dies in one of many ways, chosen by the first byte of the
 * input, for the recovery tests and the soak benchmark. Built once per way
 * with -DDEATH_ONLY='x' (so a test knows what the fuzzer will find) and
 * once with every way compiled in.
 *
 *   'S' SIGSEGV: a write to an unmapped address
 *   'B' SIGBUS: a fault a SIGBUS handler sees (raised; the signal is what
 *       triage looks at)
 *   'F' SIGFPE: integer division by zero
 *   'I' SIGILL: a trap instruction (ud2 on x86)
 *   'A' abort()
 *   'R' stack overflow: unbounded recursion
 *   'K' SIGKILL sent to itself
 *   'X' exit(7)
 *   'M' out of memory: allocates and touches 512 MiB (run with a lower
 *       --rss-limit-mb)
 *   'H' heap corruption that breaks malloc: a double free, which glibc
 *       detects and aborts on
 *   'C' closes every file descriptor (the runner's pipes included), then
 *       SIGSEGV
 *   'W' writes into its const input
 *   'T' an infinite loop
 *   'E' execve (blocked by the sandbox)
 *   'Z' one huge allocation (3 GiB), never touched: only a malloc limit
 *       sees it, the resident size stays small
 *   'D' a wild write into snapfuzz's replay record (found through
 *       /proc/self/maps in LLVMFuzzerInitialize, before the sandbox), then
 *       SIGSEGV: recovery must detect it and refuse to store a wrong input
 *   'G' state-dependent: aborts on the third 'G' input a runner sees (a
 *       counter that survives between inputs, as a filling table does)
 *   'Q' state-dependent: a global table of 63 keys (an input "Q<key>...")
 *       that overflows, and aborts, on the 64th distinct key a runner sees;
 *       the 63 earlier keys are all it needs, however many inputs ran
 * With AddressSanitizer (-DDEATH_ASAN): 'O' heap-buffer-overflow, 'U'
 * heap-use-after-free, 'L' a memory leak (an allocation whose only pointer
 * is dropped), 'P' no leak but more allocations than frees (each 'P' input
 * adds a node to a list a global holds); and every input, on its first
 * call in a process, fills a cache a global holds (more allocations than
 * frees, once). With UBSan (-DDEATH_UBSAN): 'N' signed overflow.
 *
 * -DDEATH_SOAK leaves out the ways a plain loader cannot confirm: 'E'
 * (outside the sandbox execve succeeds), 'Z' (without a malloc limit the
 * huge malloc just fails) and 'D' (the record exists only under snapfuzz;
 * test_deaths checks that case on its own). The fuzzer picks the way by
 * the first byte, so every way compiled in is found at random: deaths_soak
 * has the plain ways, deaths_soak_asan (-DDEATH_ASAN -DDEATH_UBSAN
 * -DDEATH_SOAK) adds 'O', 'U', 'L', 'P' and 'N', and the plain ways are then
 * reported by AddressSanitizer where it catches them ('H', 'M', 'R', ...).
 *
 * Any other input returns 0 after a little parsing, so the fuzzer has
 * coverage to find before it finds a death.
 */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DEATH_ONLY
#define WANT(c) (DEATH_ONLY == (c))
#else
#define WANT(c) 1
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#ifdef DEATH_ASAN
static char *death_cache; /* 256 bytes, allocated on the first call */
static void **death_kept; /* the 'P' list */
#endif

/* snapfuzz's shared record, for 'D': the first page of the mapping of the
 * memfd named snapfuzz-record. */
static volatile uint8_t *record_page;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f)) {
                unsigned long lo;
                if (strstr(line, "snapfuzz-record") && sscanf(line, "%lx-", &lo) == 1) {
                        record_page = (volatile uint8_t *)lo;
                        break;
                }
        }
        if (f)
                fclose(f);
        return 0;
}

char *volatile death_sink;
volatile int death_zero;

__attribute__((noinline)) static int recurse(volatile const uint8_t *p, int depth)
{
        volatile char frame[256];
        frame[depth & 255] = p[0];
        return recurse(p, depth + 1) + frame[0];
}

__attribute__((noinline)) static void die(uint8_t how, const uint8_t *data, size_t size)
{
        if (WANT('S') && how == 'S')
                *(volatile int *)(uintptr_t)0x40 = 1;
        if (WANT('B') && how == 'B')
                raise(SIGBUS);
        if (WANT('F') && how == 'F')
                death_zero = 100 / death_zero;
        if (WANT('I') && how == 'I')
                __builtin_trap();
        if (WANT('A') && how == 'A')
                abort();
        if (WANT('R') && how == 'R')
                recurse(data, 0);
        if (WANT('K') && how == 'K')
                kill(getpid(), SIGKILL);
        if (WANT('X') && how == 'X')
                exit(7);
        if (WANT('M') && how == 'M') {
                /* Like a parser with xmalloc(): no memory is fatal. */
                size_t n = (size_t)512 << 20;
                char *p = malloc(n);
                if (!p)
                        abort();
                memset(p, 1, n);
                death_sink = p;
                /* Stay big until the fuzzer notices. Not one sleep(5): a
                 * signal (libFuzzer's timeout alarm) ends that early, the
                 * input returns and, being new coverage, enters the corpus,
                 * to kill every later run at start-up. */
                for (int i = 0; i < 50; i++)
                        usleep(100000);
        }
        if (WANT('H') && how == 'H') {
                char *p = malloc(32);
                death_sink = p;
                free(p);
                free(death_sink);
        }
        if (WANT('C') && how == 'C') {
                for (int fd = 0; fd < 1024; fd++)
                        close(fd);
                *(volatile int *)(uintptr_t)0x80 = 1;
        }
        if (WANT('W') && how == 'W')
                ((uint8_t *)data)[0] ^= 0xff;
        if (WANT('T') && how == 'T')
                for (volatile int spin = 1; spin;)
                        ;
#ifndef DEATH_SOAK
        if (WANT('Z') && how == 'Z') {
                char *p = malloc((size_t)3 << 30);
                death_sink = p;
                free(p);
        }
        if (WANT('D') && how == 'D' && record_page) {
                /* The batch description: seed, lengths, chain length. */
                for (int i = 16; i < 72; i++)
                        record_page[i] ^= 0x5a;
                *(volatile int *)(uintptr_t)0x40 = 1;
        }
#endif
        if (WANT('G') && how == 'G') {
                static int seen;
                if (++seen == 3)
                        abort();
        }
        if (WANT('Q') && how == 'Q' && size >= 2) {
                static uint8_t table[63];
                static int used;
                int i = 0;
                while (i < used && table[i] != data[1])
                        i++;
                if (i == used) {
                        if (used == 63)
                                abort(); /* the 64th distinct key: the table overflows */
                        table[used++] = data[1];
                }
        }
#ifndef DEATH_SOAK
        if (WANT('E') && how == 'E') {
                char *const argv[] = {"true", NULL};
                execve("/bin/true", argv, argv + 1);
        }
#endif
#ifdef DEATH_ASAN
        if (!death_cache) {
                death_cache = malloc(256);
                memset(death_cache, 0, 256);
        }
        if (WANT('L') && how == 'L') {
                char *p = malloc(40);
                memcpy(p, data, size < 40 ? size : 40);
                death_sink = p;
                death_sink = NULL;
        }
        if (WANT('P') && how == 'P') {
                void **node = malloc(2 * sizeof(void *));
                node[0] = death_kept;
                node[1] = NULL;
                death_kept = node;
        }
        if (WANT('O') && how == 'O') {
                char *p = malloc(8);
                death_sink = p;
                memcpy(p, data, size < 64 ? 64 : size);
                free(p);
        }
        if (WANT('U') && how == 'U') {
                char *p = malloc(16);
                death_sink = p;
                free(p);
                death_sink[3] = (char)size;
        }
#endif
#ifdef DEATH_UBSAN
        if (WANT('N') && how == 'N') {
                volatile int big = 0x7fffff00;
                death_zero = big + (int)size * 0x1000;
        }
#endif
        (void)size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size == 0)
                return 0;
        /* A little structure, so there is coverage besides the deaths. */
        unsigned sum = 0;
        for (size_t i = 1; i < size && i < 16; i++)
                sum += data[i] > 0x7f ? 2 : 1;
        if (sum > 40)
                return 0;
        die(data[0], data, size);
        return 0;
}
