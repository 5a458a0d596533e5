/*
 * A test target that records every input it receives, labelled with the
 * iteration snapfuzz's replay record says is running, so a test can compare
 * the input a runner was executing when it died with the one snapfuzz
 * recovers. The layout of the shared file and the rules for reading it are
 * in recorder.h.
 *
 * LLVMFuzzerInitialize maps the file named by SNAPFUZZ_TEST_RECORD and finds
 * the replay record in /proc/self/maps; it runs in the worker before the
 * sandbox exists, and both mappings are inherited by every runner forked
 * from it. LLVMFuzzerTestOneInput then only uses memory (and getpid() once
 * per process), which a sandboxed runner may use. After recording, the
 * input goes through a small tokenizer with many branches, so coverage keeps
 * growing and the fuzzer keeps producing new inputs; the target never
 * crashes on its own. Without the variable set it only tokenizes.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"
#include "snapfuzz/record.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Per-process state, on purpose: the worker initializes it, and each runner
 * gets its own copy at fork, so call counts start at 0 in every runner and
 * each runner claims its own lane.
 */
static RecorderShm *recorder_shm;
static const RecordHeader *recorder_replay;
static uint64_t recorder_calls;
static RecorderLane *recorder_lane;
static uint64_t recorder_lane_index;
static pid_t recorder_pid;

/* The tokenizer's result, exported so the compiler keeps the branches that compute it. */
extern uint64_t recorder_digest;
uint64_t recorder_digest;

/* A forked process (each runner) counts its calls from 0 in a lane of its
 * own, whatever its parent did. */
static void recorder_forked(void)
{
        recorder_calls = 0;
        recorder_lane = NULL;
}

/* The worker's replay record: the shared mapping of the memfd snapfuzz
 * names "snapfuzz-record", its header at offset 0. NULL when there is none
 * (the target loaded by something else than a snapfuzz worker). */
static const RecordHeader *recorder_find_replay_record(void)
{
        FILE *maps = fopen("/proc/self/maps", "re");
        char line[1024];
        const RecordHeader *found = NULL;

        if (!maps)
                return NULL;
        while (!found && fgets(line, sizeof(line), maps)) {
                unsigned long lo, hi, off;
                if (strstr(line, "/memfd:snapfuzz-record") &&
                    sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && off == 0 &&
                    hi - lo >= sizeof(RecordHeader))
                        found = (const RecordHeader *)(uintptr_t)lo;
        }
        fclose(maps);
        return found;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        const char *path = getenv(RECORDER_ENV);
        void *p;
        int fd;

        (void)argc;
        (void)argv;
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

        /* pid and lane describe calls only: a process that merely
         * initializes (the recovery helper's verification worker) must not
         * make the test take it for the runner. */
        recorder_shm = p;
        pthread_atfork(NULL, NULL, recorder_forked);
        recorder_replay = recorder_find_replay_record();
        if (!recorder_replay)
                __atomic_fetch_add(&recorder_shm->unlabelled_inits, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&recorder_shm->inits, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&recorder_shm->magic, RECORDER_MAGIC, __ATOMIC_RELEASE);
        return 0;
}

/*
 * The recording path is not instrumented: from the runner's count store to
 * the end of the copy the input is not observable (a kill there is judged
 * as such by the test), and SanitizerCoverage's comparison callbacks into
 * snapfuzz would make that window many times longer.
 */
#define RECORDER_UNINSTRUMENTED __attribute__((no_sanitize("coverage")))

/* A process's first call claims a lane and forgets what its last owner
 * left in it. */
RECORDER_UNINSTRUMENTED static void recorder_claim_lane(RecorderShm *shm)
{
        recorder_pid = getpid();
        recorder_lane_index =
            __atomic_fetch_add(&shm->claimed, 1, __ATOMIC_RELAXED) % RECORDER_LANES;
        recorder_lane = &shm->lanes[recorder_lane_index];
        __atomic_store_n(&recorder_lane->n, 0, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < RECORDER_RING; i++) {
                __atomic_store_n(&recorder_lane->ring[i].seq, 1, __ATOMIC_RELAXED);
                recorder_lane->ring[i].n = 0;
        }
        __atomic_store_n(&recorder_lane->pid, recorder_pid, __ATOMIC_RELEASE);
}

/* Records call @n; returns its slot, for the call to mark as returned. */
RECORDER_UNINSTRUMENTED static RecorderSlot *recorder_record(RecorderShm *shm, uint64_t n,
                                                             const uint8_t *data, size_t size)
{
        const RecordHeader *h = recorder_replay;
        /* The label first: count names this input from before the call. */
        uint64_t count = h ? __atomic_load_n(&h->count, __ATOMIC_RELAXED) : 0;
        uint64_t batch_id = h ? h->batch_id : 0;
        uint64_t iters = h ? h->iters : 0;

        if (!recorder_lane)
                recorder_claim_lane(shm);
        RecorderLane *lane = recorder_lane;
        RecorderSlot *slot = &lane->ring[n % RECORDER_RING];
        size_t keep = size < RECORDER_MAX_DATA ? size : RECORDER_MAX_DATA;

        shm->pid = recorder_pid;
        shm->lane = recorder_lane_index;
        __atomic_store_n(&lane->n, n, __ATOMIC_RELEASE);

        /*
         * A runner killed mid-write leaves an odd seq behind; rounding up to
         * the next odd value keeps "odd means incomplete" true for the next
         * writer as well.
         */
        uint64_t seq = (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) + 1) | 1;
        __atomic_store_n(&slot->seq, seq, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        slot->n = n;
        slot->len = size;
        slot->batch_id = batch_id;
        slot->count = count;
        slot->iters = iters;
        slot->labelled = h != NULL;
        slot->returned = 0;
        memcpy(slot->data, data, keep);
        __atomic_store_n(&slot->seq, seq + 1, __ATOMIC_RELEASE);
        return slot;
}

/*
 * A tokenizer for a made-up expression language: numbers, names, operators
 * and brackets. Each kind of byte, and each pair of token kinds in a row,
 * takes a different branch, so new inputs keep finding new edges.
 */
__attribute__((noinline)) static uint64_t recorder_tokenize(const uint8_t *data, size_t size)
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

RECORDER_UNINSTRUMENTED int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t n = ++recorder_calls;
        RecorderSlot *slot = NULL;

        if (recorder_shm)
                slot = recorder_record(recorder_shm, n, data, size);
        recorder_digest = recorder_tokenize(data, size);
        if (slot)
                __atomic_store_n(&slot->returned, 1, __ATOMIC_RELEASE);
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
