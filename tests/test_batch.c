/*
 * The batch module (worker/batch.h) against the real runner loop
 * (worker/runner.c): a runner forked from the test runs a recorded batch on a
 * target that keeps, in memory shared with the test, a checksum of every
 * input it is called with and what recovery rebuilt from the record at
 * that instant (from the chain's slot, as after a death there). The test
 * then rebuilds every iteration from the batch's seed and checks, one by
 * one, that recovery's inputs are the ones the runner executed. Fuzz
 * batches with several chains, a dictionary, comparison tables, operator
 * weights, a length limit and packed bases, a seed batch and a history
 * replay.
 *
 * Random: the batches' seeds and inputs come from SF_BATCH_SEED (printed;
 * set it to replay a run).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/runner.h"
#include "worker/batch.h"
#include "worker/cmplog.h"
#include "core/coverage.h"
#include "recovery/replay.h"
#include "sandbox/sandbox.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"
#include "snapfuzz/record.h"

#define MAX_CALLS 20000u
#define MAX_LEN 512u

/* One call into the target, as the target saw it. */
typedef struct Call {
        uint64_t k;        /* the record's count during the call */
        uint64_t len;      /* the input's length */
        uint64_t check;    /* record_exec_check() of the input */
        int32_t slot_rc;   /* replay_input_at(k) at that instant */
        uint32_t slot_len; /* what it rebuilt */
        uint64_t slot_check;
} Call;

typedef struct Calls {
        uint64_t n;
        Call call[MAX_CALLS];
} Calls;

/* Shared with the runner (a fork): the calls, the region. */
static Calls *calls;
static void *run_region;
static RecordLayout run_layout;
static uint8_t *rebuild_buf; /* the runner's own copy, after the fork */
static uint8_t counters[512];
/* The target's custom mutator, for batches that use one. */
static const CustomMutator *run_custom;

static uint64_t load_le(const uint8_t *p, size_t n)
{
        uint64_t v = 0;
        for (size_t i = n; i-- > 0;)
                v = (v << 8) | p[i];
        return v;
}

/* The target the runner runs: notes the call, and what recovery rebuilds
 * from the record as it stands while the input runs; then compares (the
 * runner's comparison table is filled as the hooks would fill it) and
 * hits counters that depend on the input, so that some inputs are finds
 * and run twice. */
static int recording_target(const uint8_t *d, size_t n)
{
        uint64_t k = __atomic_load_n(&record_header(run_region)->count, __ATOMIC_RELAXED);
        if (calls->n < MAX_CALLS) {
                Call *c = &calls->call[calls->n];
                size_t len = 0;
                c->k = k;
                c->len = n;
                c->check = record_exec_check(d, n);
                c->slot_rc = run_custom
                                 ? replay_custom_at(run_region, &run_layout, run_custom, k,
                                                    rebuild_buf, &len)
                                 : replay_input_at(run_region, &run_layout, k, rebuild_buf, &len);
                c->slot_len = (uint32_t)len;
                c->slot_check = c->slot_rc == 0 ? record_exec_check(rebuild_buf, len) : 0;
                /* A custom step's input is noted before count names it. */
                if (run_custom && !record_exec_matches(record_header(run_region), k, d, n))
                        c->slot_rc = 1000;
        }
        calls->n++;

        if (n >= 4)
                cmplog_int(0x1000, load_le(d, 4), 0x41424344, 4, CMPTABLE_F_CONST);
        if (n >= 12)
                cmplog_int(0x2000, load_le(d + 4, 8), UINT64_C(0x1122334455667788), 8, 0);
        if (n >= 20)
                cmplog_mem(0x4000, d + 12, 8, (const uint8_t *)"MAGICVAL", 8, 0);
        cmplog_mem(0x5000, d, n < 5 ? n : 5, (const uint8_t *)"hello", 5, CMPTABLE_F_STRING);

        counters[n % 8]++;
        if (n >= 1)
                counters[8 + d[0] % 8]++;
        if (n >= 4 && memcmp(d, "DCBA", 4) == 0)
                counters[16]++;
        return 0;
}

static uint64_t test_seed;
static CoverageShared *coverage;
static Sandbox *sandbox;

static void setup(void)
{
        const char *env = getenv("SF_BATCH_SEED");
        test_seed =
            env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
        fprintf(stderr, "test_batch: SF_BATCH_SEED=%" PRIu64 "\n", test_seed);

        cr_assert_eq(record_layout(MAX_LEN, &run_layout), 0);
        run_region = mmap(NULL, run_layout.region_size, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        calls =
            mmap(NULL, sizeof(Calls), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(run_region, MAP_FAILED);
        cr_assert_neq(calls, MAP_FAILED);
        rebuild_buf = malloc(MAX_LEN);
        coverage_register_counters(counters, counters + sizeof(counters));
        int fd = coverage_shared_create();
        cr_assert_geq(fd, 0);
        cr_assert_eq(coverage_shared_map(fd, &coverage), 0);
        close(fd);
        cr_assert_eq(sandbox_new(&sandbox, SANDBOX_OFF), 0);
        runner_prepare();
}

TestSuite(batch, .init = setup);

/* Random bytes from the test's PRNG. */
static void fill(SfPrng *rng, uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t)prng_next64(rng);
}

/* Runs the batch in the region in a real runner, as the worker forks it,
 * and waits for it; with @rebuild, the runner rebuilds the input `count`
 * names instead (RECORD_REBUILT_*). */
static void run_runner_as(int rebuild)
{
        RecordHeader *h = record_header(run_region);
        calls->n = 0;
        RunnerArgs a = {
            .region = run_region,
            .layout = &run_layout,
            .coverage = coverage,
            .sandbox = sandbox,
            .test = recording_target,
            .worker_pid = getpid(),
            .output_fd = -1,
            .ctl_fd = -1,
            .custom = run_custom,
            .rebuild = rebuild,
        };
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                runner_main(&a);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_DONE,
                  "the runner ended with status %#x", status);
        cr_assert(h->runner_state == RECORD_RUNNER_DONE || h->runner_state == RECORD_RUNNER_FULL,
                  "runner state %u", h->runner_state);
        cr_assert_leq(calls->n, MAX_CALLS);
}

static void run_runner(void)
{
        run_runner_as(0);
}

typedef struct Rebuilt {
        uint64_t n;
        uint64_t *check;
        uint64_t *len;
} Rebuilt;

static int note_rebuilt(void *ctx, uint64_t k, const uint8_t *data, size_t len)
{
        Rebuilt *r = ctx;
        cr_assert_eq(k, r->n + 1);
        r->n = k;
        r->check[k] = record_exec_check(data, len);
        r->len[k] = len;
        return 0;
}

/* Every call the runner made is the input the batch module rebuilds for
 * its iteration, from the chain's slot (while it ran) and from the seed
 * (afterwards); every iteration from @first to the last ran, in order,
 * once and again for each rerun the record notes. Returns the number of
 * iterations that ran. */
static uint64_t expect_rebuilt(uint64_t first)
{
        const RecordHeader *h = record_header(run_region);
        uint64_t last = h->count;
        Rebuilt r = {.check = calloc(last + 1, 8), .len = calloc(last + 1, 8)};

        cr_assert_geq(last, first);
        if (run_custom) {
                /* replay_range refuses a custom mutator's batch. */
                for (uint64_t k = 1; k <= last; k++) {
                        size_t len;
                        cr_assert_eq(replay_custom_from_seed(run_region, &run_layout, run_custom, k,
                                                             rebuild_buf, &len),
                                     0);
                        note_rebuilt(&r, k, rebuild_buf, len);
                }
        } else {
                cr_assert_eq(
                    replay_range(run_region, &run_layout, 1, last, note_rebuilt, &r, rebuild_buf),
                    0);
        }
        cr_assert_eq(r.n, last, "the seed path rebuilt %" PRIu64 " of %" PRIu64, r.n, last);
        uint64_t reruns = 0;
        for (uint32_t i = 0; i < h->n_reruns; i++)
                reruns += h->reruns[i] >= first;
        cr_assert_eq(calls->n, last - first + 1 + reruns, "%" PRIu64 " calls", calls->n);
        uint64_t want = first;
        for (uint64_t i = 0; i < calls->n; i++) {
                const Call *c = &calls->call[i];
                if (c->k != want) {
                        cr_assert_eq(c->k, want - 1, "call %" PRIu64 " ran iteration %" PRIu64, i,
                                     c->k);
                } else {
                        want++;
                }
                cr_assert_eq(c->slot_rc, 0, "iteration %" PRIu64 ": replay_input_at gave %d", c->k,
                             c->slot_rc);
                cr_assert(c->slot_len == c->len && c->slot_check == c->check,
                          "iteration %" PRIu64 ": the slot path rebuilt %u bytes, %" PRIu64 " ran",
                          c->k, c->slot_len, c->len);
                cr_assert(r.len[c->k] == c->len && r.check[c->k] == c->check,
                          "iteration %" PRIu64 ": the seed path rebuilt %" PRIu64 " bytes, %" PRIu64
                          " ran",
                          c->k, r.len[c->k], c->len);
        }
        cr_assert_eq(want, last + 1);

        /* Spot checks of the one-iteration seed path. */
        for (uint64_t k = first; k <= last && !run_custom; k += 97) {
                size_t len;
                cr_assert_eq(replay_input_from_seed(run_region, &run_layout, k, rebuild_buf, &len),
                             0);
                cr_assert(len == r.len[k] && record_exec_check(rebuild_buf, len) == r.check[k]);
        }
        free(r.check);
        free(r.len);
        return last - first + 1;
}

/* A fuzz batch: @n_bases bases (packed when more than one), partners, a
 * dictionary, operator weights and a length limit. */
static void seal_fuzz(SfPrng *rng, uint32_t n_bases, uint32_t chain_len, uint64_t iters)
{
        uint8_t *base = record_base(run_region, &run_layout);
        uint8_t *partner = record_partner(run_region, &run_layout);
        uint32_t bl = 0, pl = 0;
        memset(run_region, 0, run_layout.region_size);
        for (uint32_t i = 0; i < n_bases; i++) {
                uint32_t n = 8 + (uint32_t)(prng_next64(rng) % 120);
                uint8_t *at = base + bl + (n_bases > 1 ? 4 : 0);
                if (n_bases > 1)
                        memcpy(base + bl, &n, 4); /* little-endian, as x86-64 and aarch64 are */
                fill(rng, at, n);
                memcpy(at, "hello", 5); /* some comparisons are half right */
                bl += n + (n_bases > 1 ? 4 : 0);
        }
        for (uint32_t i = 0; i < (n_bases > 1 ? 3u : 1u); i++) {
                uint32_t n = 4 + (uint32_t)(prng_next64(rng) % 60);
                uint8_t *at = partner + pl + (n_bases > 1 ? 4 : 0);
                if (n_bases > 1)
                        memcpy(partner + pl, &n, 4);
                fill(rng, at, n);
                pl += n + (n_bases > 1 ? 4 : 0);
        }
        const uint8_t *tokens[] = {(const uint8_t *)"MAGIC", (const uint8_t *)"\x7f\x45",
                                   (const uint8_t *)"DCBA"};
        size_t tl[] = {5, 2, 4};
        size_t table_len = mutator_dict_serialize(record_table(run_region, &run_layout),
                                                  RECORD_TABLE_BYTES, tokens, tl, 3);
        record_begin_batch(run_region, &run_layout, prng_next64(rng), RECORD_MODE_FUZZ, iters,
                           prng_next64(rng), chain_len, bl, pl, (uint32_t)table_len);
        uint8_t weights[MUTATOR_WEIGHTS] = {0};
        for (unsigned op = 0; op < MUTATOR_OP__COUNT; op++)
                weights[op] = (uint8_t)(1 + prng_next64(rng) % 20);
        record_set_mutation(run_region, 200, weights);
        if (n_bases > 1)
                record_set_flags(run_region, RECORD_F_PACKED);
}

Test(batch, the_runner_executes_what_recovery_rebuilds_in_a_fuzz_batch)
{
        SfPrng rng;
        prng_seed(&rng, test_seed, 1);
        seal_fuzz(&rng, 1, 5, 4000);
        run_runner();
        const RecordHeader *h = record_header(run_region);
        uint64_t ran = expect_rebuilt(1);
        cr_expect_geq(ran, 1000, "%" PRIu64 " iterations ran", ran);
        cr_expect_gt(h->cmp_gens, 3, "comparison tables frozen: %u", h->cmp_gens);
        cr_expect_gt(h->n_reruns, 0, "finds ran twice");
}

Test(batch, the_runner_executes_what_recovery_rebuilds_with_packed_bases)
{
        SfPrng rng;
        prng_seed(&rng, test_seed, 2);
        seal_fuzz(&rng, 7, 3, 3000);
        run_runner();
        const RecordHeader *h = record_header(run_region);
        cr_assert(h->flags & RECORD_F_PACKED);
        expect_rebuilt(1);
        cr_expect_gt(h->cmp_gens, 3, "comparison tables frozen: %u", h->cmp_gens);
}

Test(batch, the_runner_executes_what_recovery_rebuilds_in_a_seed_batch)
{
        SfPrng rng;
        prng_seed(&rng, test_seed, 3);
        uint8_t *list = record_base(run_region, &run_layout);
        uint32_t used = 0, n_seeds = 40;
        memset(run_region, 0, run_layout.region_size);
        for (uint32_t i = 0; i < n_seeds; i++) {
                uint32_t n = (uint32_t)(prng_next64(&rng) % MAX_LEN);
                memcpy(list + used, &n, 4);
                fill(&rng, list + used + 4, n);
                used += 4 + n;
        }
        /* More iterations than seeds: the batch ends with the list. */
        record_begin_batch(run_region, &run_layout, 9, RECORD_MODE_SEEDS, n_seeds + 5, 1, 1, used,
                           0, 0);
        run_runner();
        cr_expect_eq(expect_rebuilt(1), n_seeds);
        cr_expect_eq(record_header(run_region)->n_reruns, n_seeds, "each seed ran twice");
}

/* A history replay (RECORD_BATCH_REPLAY from first_exec on, with the
 * original's tables and reruns) runs exactly the original's inputs. */
Test(batch, a_history_replay_executes_what_the_original_runner_did)
{
        SfPrng rng;
        prng_seed(&rng, test_seed, 4);
        seal_fuzz(&rng, 1, 4, 2000);
        run_runner();
        RecordHeader *h = record_header(run_region);
        uint64_t last = h->count;
        expect_rebuilt(1);
        uint64_t *orig = malloc((last + 1) * sizeof(uint64_t));
        for (uint64_t i = 0; i < calls->n; i++)
                orig[calls->call[i].k] = calls->call[i].check;
        uint32_t gens = h->cmp_gens;
        cr_assert_gt(gens, 0);

        /* The same record, replayed from its middle: the tables and the
         * description stay, count and the runner's fields start over. */
        uint64_t first = last / 2 + 1;
        h->count = 0;
        h->first_exec = first;
        h->batch_flags = RECORD_BATCH_REPLAY;
        h->iters = last;
        h->desc_check = record_desc_check(h);
        run_runner();
        cr_expect_eq(h->cmp_gens, gens, "the replay froze nothing");
        expect_rebuilt(first);
        for (uint64_t i = 0; i < calls->n; i++)
                cr_assert_eq(calls->call[i].check, orig[calls->call[i].k],
                             "iteration %" PRIu64 " differs from the original's", calls->call[i].k);
        free(orig);
}

/* A custom mutator that calls LLVMFuzzerMutate (snapfuzz's mutations, from
 * the same PRNG) and then uses its Seed: deterministic given the Seed, as
 * libFuzzer asks. */
static size_t test_custom_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
        size = custom_builtin_mutate(data, size, max_size);
        if (size > 0)
                data[seed % size] ^= (uint8_t)(seed >> 8 | 1);
        return size;
}

/* A batch made with the target's custom mutator: every step is noted
 * before count names it, and recovery, given the same mutator, rebuilds
 * what ran. */
Test(batch, the_runner_executes_what_recovery_rebuilds_with_a_custom_mutator)
{
        SfPrng rng;
        static uint8_t scratch[MAX_LEN];
        static const CustomMutator cm = {.mutate = test_custom_mutate, .scratch = scratch};
        prng_seed(&rng, test_seed, 5);
        seal_fuzz(&rng, 3, 4, 600);
        record_set_flags(run_region, RECORD_F_PACKED | custom_record_flags(&cm));
        run_custom = &cm;
        run_runner();
        expect_rebuilt(1);
        size_t len;
        cr_expect_eq(replay_input(run_region, &run_layout, rebuild_buf, &len),
                     -(int)RECORD_NEEDS_TARGET, "without the mutator, no replay");

        /* Recovery's way: a runner of the same target rebuilds the input
         * count names, from the slot and from the seed, into finds slot 0. */
        const RecordHeader *h = record_header(run_region);
        const Call *ran = &calls->call[calls->n - 1];
        cr_assert_eq(ran->k, h->count);
        for (int how = RECORD_REBUILT_SLOT; how <= (int)RECORD_REBUILT_SEED; how++) {
                record_finds(run_region, &run_layout)->used = 0;
                run_runner_as(how);
                const RecordFindSlot *f = record_find_slot(run_region, &run_layout, 0);
                cr_assert_eq(record_finds(run_region, &run_layout)->used, 1);
                cr_expect_eq(f->flags, (uint32_t)how);
                cr_expect_eq(f->iteration, h->count);
                cr_expect(f->len == ran->len &&
                              record_exec_check((const uint8_t *)(f + 1), f->len) == ran->check,
                          "rebuild %d: %u bytes, %" PRIu64 " ran", how, f->len, ran->len);
        }
        run_custom = NULL;
}
