/*
 * A test target that records every input it receives, so a test can compare
 * the input a runner was executing when it died with the one snapfuzz
 * recovers from its replay record. The layout of the shared file and the
 * rules for reading it are in recorder.h.
 *
 * LLVMFuzzerInitialize maps the file named by SNAPFUZZ_TEST_RECORD; it runs
 * in the worker before the sandbox exists, and the mapping is inherited by
 * every runner forked from it. LLVMFuzzerTestOneInput then only uses
 * getpid() and memory, both of which a sandboxed runner may use. After
 * recording, the input goes through a small tokenizer with many branches, so
 * coverage keeps growing and the fuzzer keeps producing new inputs; the
 * target never crashes on its own. Without the variable set it only
 * tokenizes.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Per-process state, on purpose: the worker initializes it, and each runner
 * gets its own copy at fork, so call counts start at 0 in every runner.
 */
static RecorderShm *recorder_shm;
static uint64_t recorder_calls;

/* The tokenizer's result, exported so the compiler keeps the branches that compute it. */
extern uint64_t recorder_digest;
uint64_t recorder_digest;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        const char *path = getenv(RECORDER_ENV);
        void *p;
        int fd;

        if (!path || !*path)
                return 0;

        /*
         * A test that asked for a record and cannot get one must fail loudly,
         * not pass on an empty file, hence abort() on every error.
         */
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                perror("recorder: open " RECORDER_ENV);
                abort();
        }
        if (ftruncate(fd, (off_t)RECORDER_FILE_SIZE) < 0) {
                perror("recorder: ftruncate");
                abort();
        }
        p = mmap(NULL, RECORDER_FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
                perror("recorder: mmap");
                abort();
        }
        close(fd);

        /* pid and n describe calls only: a process that merely initializes
         * (the recovery helper's verification worker) must not make the
         * test take it for the runner. */
        recorder_shm = p;
        __atomic_fetch_add(&recorder_shm->inits, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&recorder_shm->magic, RECORDER_MAGIC, __ATOMIC_RELEASE);
        return 0;
}

static void recorder_record(RecorderShm *shm, uint64_t n, const uint8_t *data, size_t size)
{
        RecorderSlot *slot = &shm->ring[n % RECORDER_RING];
        size_t keep = size < RECORDER_MAX_DATA ? size : RECORDER_MAX_DATA;
        uint64_t seq;

        /* getpid() once per process (a runner's first call), not per call:
         * a syscall here would be where a pending SIGKILL lands, every time,
         * inside the window the test cannot judge. */
        static pid_t pid;
        if (n == 1 || pid == 0)
                pid = getpid();
        shm->pid = pid;
        __atomic_store_n(&shm->n, n, __ATOMIC_RELEASE);

        /*
         * A runner killed mid-write leaves an odd seq behind; rounding up to
         * the next odd value keeps "odd means incomplete" true for the next
         * writer as well.
         */
        seq = (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) + 1) | 1;
        __atomic_store_n(&slot->seq, seq, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        slot->n = n;
        slot->len = size;
        slot->pid = shm->pid;
        memcpy(slot->data, data, keep);
        __atomic_store_n(&slot->seq, seq + 1, __ATOMIC_RELEASE);
}

/*
 * A tokenizer for a made-up expression language: numbers, names, operators
 * and brackets. Each kind of byte, and each pair of token kinds in a row,
 * takes a different branch, so new inputs keep finding new edges.
 */
static uint64_t recorder_tokenize(const uint8_t *data, size_t size)
{
        enum { TOK_NONE, TOK_NUMBER, TOK_NAME, TOK_OP, TOK_OPEN, TOK_CLOSE } prev = TOK_NONE;
        uint64_t digest = 1469598103934665603u;
        unsigned int depth = 0, max_depth = 0;
        uint64_t number = 0;

        for (size_t i = 0; i < size; i++) {
                uint8_t c = data[i];
                int kind;

                if (c >= '0' && c <= '9') {
                        kind = TOK_NUMBER;
                        number = number * 10 + (uint64_t)(c - '0');
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
                        kind = TOK_NAME;
                } else if (c == '(' || c == '[' || c == '{') {
                        kind = TOK_OPEN;
                        if (++depth > max_depth)
                                max_depth = depth;
                } else if (c == ')' || c == ']' || c == '}') {
                        kind = TOK_CLOSE;
                        if (depth > 0)
                                depth--;
                } else if (c == '+' || c == '-' || c == '*' || c == '/' || c == '=') {
                        kind = TOK_OP;
                } else {
                        kind = TOK_NONE;
                }

                switch (prev * 6 + kind) {
                case TOK_NAME * 6 + TOK_OPEN:
                        digest += 3; /* a call */
                        break;
                case TOK_NUMBER * 6 + TOK_NAME:
                        digest += 5; /* a unit suffix */
                        break;
                case TOK_OP * 6 + TOK_OP:
                        digest ^= 7; /* a doubled operator */
                        break;
                case TOK_OPEN * 6 + TOK_CLOSE:
                        digest += 11; /* an empty group */
                        break;
                case TOK_CLOSE * 6 + TOK_OPEN:
                        digest += 13; /* juxtaposed groups */
                        break;
                default:
                        if (kind != TOK_NUMBER && prev == TOK_NUMBER) {
                                digest += number;
                                number = 0;
                        }
                        break;
                }
                digest = (digest ^ c) * 1099511628211u;
                prev = kind;
        }

        /* A few depth levels give a few more edges. */
        if (max_depth >= 2)
                digest += 17;
        if (max_depth >= 4)
                digest += 19;
        if (max_depth >= 8)
                digest += 23;
        return digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t n = ++recorder_calls;

        if (recorder_shm)
                recorder_record(recorder_shm, n, data, size);
        recorder_digest = recorder_tokenize(data, size);
        return 0;
}

#ifdef RECORDER_CUSTOM
/*
 * Built with -DRECORDER_CUSTOM, the recorder also has a custom mutator and
 * a custom crossover, so the same test can check that inputs made by the
 * target's own code are recovered exactly. Both are deterministic given
 * their Seed: the mutator has LLVMFuzzerMutate (snapfuzz's mutator) change
 * the input, then inserts one byte the Seed picks where the Seed says; the
 * crossover joins a head of one input and a tail of the other.
 */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                 size_t size2, uint8_t *out, size_t max_out_size,
                                 unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
        size_t n = LLVMFuzzerMutate(data, size, max_size);
        if (n < max_size) {
                size_t at = (seed >> 8) % (n + 1);
                memmove(data + at + 1, data + at, n - at);
                data[at] = (uint8_t)seed;
                n++;
        }
        return n;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1, const uint8_t *data2,
                                 size_t size2, uint8_t *out, size_t max_out_size, unsigned int seed)
{
        size_t a = seed % (size1 + 1);
        size_t b = (seed >> 12) % (size2 + 1);
        if (a + (size2 - b) > max_out_size)
                return 0;
        memcpy(out, data1, a);
        memcpy(out + a, data2 + b, size2 - b);
        return a + (size2 - b);
}
#endif
