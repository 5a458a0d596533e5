/*
 * A simulated worker, for measuring whether one coordinator keeps up with
 * many workers (bench/scale.sh). It speaks the real worker protocol on the
 * real pipes and shared record that `snapfuzz run` sets up, so the
 * coordinator under test is the real one, unchanged; it is started in place
 * of `snapfuzz __worker` through SNAPFUZZ_WORKER_EXE.
 *
 * It runs no target. A batch of N iterations takes N / SIMWORKER_RATE
 * seconds of sleep (the time a real worker would spend executing a tiny
 * target at that speed), so 64 of them fit on a 2-core machine and leave
 * the coordinator a core of its own. Finds follow the usual shape of a
 * fuzzing campaign: the features of the whole run grow as
 * A * ln(1 + E / E0) with E the executions of all workers together (kept
 * in the shared coverage map, which every worker of a run maps), so 64
 * workers bring the start-up find storm 64 times sooner, as real ones do.
 * Each find is a distinct random input left in the record's finds area, as
 * a runner leaves it.
 *
 * At exit (the coordinator's "stop") it appends one JSON line to
 * $SIMWORKER_LOG: batches, simulated busy time, and the time it sat idle
 * between reporting a batch and receiving the next, which is the
 * coordinator's dispatch latency as a worker sees it.
 *
 * Environment: SIMWORKER_RATE (executions per second, default 3.5e6, the
 * per-core speed of snapfuzz on the bundled tlv_parser), SIMWORKER_A
 * (default 150), SIMWORKER_E0 (default 1e5), SIMWORKER_LOG.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/coverage.h"
#include "core/msg.h"
#include "snapfuzz/record.h"
#include "worker/proto.h"

#include "snapfuzz/banned.h"

typedef struct Sim {
        int cmd_fd, evt_fd, shm_fd, cov_fd;
        size_t max_len;
        void *region;
        RecordLayout layout;
        CoverageShared *cov;
        MsgReader reader;
        double rate;
        double a, e0;
        uint64_t rng;
        /* Figures for the log line. */
        uint64_t batches, finds, execs;
        double busy_ms, idle_ms, max_idle_ms, first_wait_ms;
} Sim;

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double env_num(const char *name, double def)
{
        const char *s = getenv(name);
        return s && *s ? strtod(s, NULL) : def;
}

static uint64_t sim_next(Sim *s)
{
        s->rng ^= s->rng << 13;
        s->rng ^= s->rng >> 7;
        s->rng ^= s->rng << 17;
        return s->rng;
}

/* The real worker's command line, through the real parser; options a
 * newer snapfuzz may pass are none of ours and are skipped, so the bench
 * keeps working with a simworker built earlier. */
static int sim_parse_args(Sim *s, int argc, char **argv, char *err, size_t errlen)
{
        WorkerArgs a;
        /* argv[1] is "__worker" */
        int r = proto_args_parse(argc - 1, argv + 1, PROTO_ARGS_SKIP_UNKNOWN, &a, err, errlen);
        if (r < 0)
                return r;
        s->cmd_fd = a.cmd_fd;
        s->evt_fd = a.evt_fd;
        s->shm_fd = a.shm_fd;
        s->cov_fd = a.cov_fd;
        s->max_len = a.max_len;
        if (record_layout(s->max_len, &s->layout) < 0) {
                snprintf(err, errlen, "no record layout for --max-len %zu", s->max_len);
                return -EINVAL;
        }
        return 0;
}

/* How many features the run has found after @execs executions in all. */
static uint64_t sim_features_at(const Sim *s, uint64_t execs)
{
        return (uint64_t)(s->a * log1p((double)execs / s->e0));
}

/* Claims this batch's share of the run's new features, at most a finds
 * area's worth (a runner whose area fills stops its batch). */
static uint32_t sim_claim_finds(Sim *s, uint64_t iters)
{
        uint64_t *total = &s->cov->pad[0];
        uint64_t execs = __atomic_add_fetch(total, iters, __ATOMIC_RELAXED);
        uint64_t want = sim_features_at(s, execs);
        uint64_t cur = __atomic_load_n(&s->cov->features, __ATOMIC_RELAXED);
        uint64_t n;
        do {
                if (cur >= want)
                        return 0;
                n = want - cur;
                if (n > RECORD_FINDS_SLOTS)
                        n = RECORD_FINDS_SLOTS;
        } while (!__atomic_compare_exchange_n(&s->cov->features, &cur, cur + n, false,
                                              __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        __atomic_add_fetch(&s->cov->edges, n, __ATOMIC_RELAXED);
        return (uint32_t)n;
}

static void sim_write_finds(Sim *s, uint32_t n)
{
        RecordFinds *f = record_finds(s->region, &s->layout);
        size_t cap = s->layout.max_len < 64 ? s->layout.max_len : 64;
        for (uint32_t i = 0; i < n; i++) {
                RecordFindSlot *slot = record_find_slot(s->region, &s->layout, i);
                size_t len = cap >= 8 ? 8 + (size_t)(sim_next(s) % (cap - 7)) : cap;
                uint8_t *p = (uint8_t *)(slot + 1);
                for (size_t k = 0; k < len; k++)
                        p[k] = (uint8_t)sim_next(s);
                slot->len = (uint32_t)len;
                slot->flags = 0;
                slot->iteration = i + 1;
        }
        __atomic_store_n(&f->used, n, __ATOMIC_RELEASE);
}

/* Sleeps until @until_ms unless a "stop" arrives. Returns 1 on stop. */
static int sim_sleep(Sim *s, double until_ms)
{
        for (;;) {
                double left = until_ms - now_ms();
                if (left <= 0)
                        return 0;
                struct pollfd p = {.fd = s->cmd_fd, .events = POLLIN};
                int pr = poll(&p, 1, (int)ceil(left));
                if (pr <= 0)
                        continue;
                cJSON *m = NULL;
                int r = msg_read(&s->reader, &m);
                if (r < 0)
                        return 1;
                if (r == 0)
                        continue;
                int stop = proto_is(m, PROTO_STOP);
                cJSON_Delete(m);
                if (stop)
                        return 1;
        }
}

/* Runs one "fuzz" command @cmd. 0, 1 when a "stop" came during it, or -1
 * when the events pipe is gone. */
static int sim_batch(Sim *s, const cJSON *cmd, double started)
{
        RecordHeader *h = record_header(s->region);
        ProtoBatch b;
        cJSON *m;

        if (proto_batch_parse(cmd, &s->layout, &b) < 0) {
                if (proto_error_build(PROTO_WHAT_PROTOCOL, "bad batch parameters", &m) < 0)
                        return -1;
                int r = msg_send(s->evt_fd, m);
                cJSON_Delete(m);
                return r < 0 ? -1 : 0;
        }
        record_begin_batch(s->region, &s->layout, b.batch_id, b.mode, b.iters, b.seed, b.chain_len,
                           b.base_len, b.partner_len, b.table_len);
        double dur = (double)b.iters / s->rate * 1e3;
        if (sim_sleep(s, started + dur))
                return 1;
        uint32_t n = sim_claim_finds(s, b.iters);
        sim_write_finds(s, n);
        h->count = b.iters;
        h->new_features = n;
        h->runner_state = RECORD_RUNNER_DONE;
        double elapsed = now_ms() - started;

        ProtoEnd end = {
            .batch_id = h->batch_id,
            .count = b.iters,
            .iters = b.iters,
            .finds = n,
            .new_features = n,
            .elapsed_ms = floor(elapsed),
        };
        if (proto_end_build(&end, &m) < 0)
                return -1;
        int r = msg_send(s->evt_fd, m);
        cJSON_Delete(m);
        s->batches++;
        s->finds += n;
        s->execs += b.iters;
        s->busy_ms += elapsed;
        return r < 0 ? -1 : 0;
}

static void sim_log(const Sim *s)
{
        const char *path = getenv("SIMWORKER_LOG");
        char line[512];
        if (!path || !*path)
                return;
        int n = snprintf(line, sizeof(line),
                         "{\"pid\":%d,\"batches\":%llu,\"execs\":%llu,\"finds\":%llu,"
                         "\"busy_ms\":%.1f,\"idle_ms\":%.1f,\"max_idle_ms\":%.1f,"
                         "\"first_wait_ms\":%.1f}\n",
                         (int)getpid(), (unsigned long long)s->batches,
                         (unsigned long long)s->execs, (unsigned long long)s->finds, s->busy_ms,
                         s->idle_ms, s->max_idle_ms, s->first_wait_ms);
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        ssize_t w = write(fd, line, (size_t)n);
        (void)w;
        close(fd);
}

int main(int argc, char **argv)
{
        Sim s = {0};
        char err[256];
        if (sim_parse_args(&s, argc, argv, err, sizeof(err)) < 0) {
                fprintf(stderr, "simworker: %s\n", err);
                return 1;
        }
        s.rate = env_num("SIMWORKER_RATE", 3.5e6);
        s.a = env_num("SIMWORKER_A", 150);
        s.e0 = env_num("SIMWORKER_E0", 1e5);
        s.rng = ((uint64_t)getpid() << 32) ^ (uint64_t)now_ms() ^ 0x9e3779b97f4a7c15ull;
        msg_reader_init(&s.reader, s.cmd_fd);
        s.region =
            mmap(NULL, s.layout.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, s.shm_fd, 0);
        if (s.region == MAP_FAILED || coverage_shared_map(s.cov_fd, &s.cov) < 0)
                return 1;
        if (s.cov->counters == 0)
                s.cov->counters = 1u << 16;

        ProtoHello h = {.pid = getpid(), .counters = 1u << 16};
        cJSON *hello;
        if (proto_hello_build(&h, &hello) < 0)
                return 1;
        int r = msg_send(s.evt_fd, hello);
        cJSON_Delete(hello);
        if (r < 0)
                return 1;

        /* Idle time counts from the end of one batch to the start of the
         * next; the wait for the first batch (the coordinator starts the
         * workers one by one) is kept apart. */
        double ready = now_ms();
        int first = 1;
        for (;;) {
                cJSON *m = NULL;
                r = msg_recv(&s.reader, &m, -1);
                if (r < 0)
                        break;
                if (r == 0)
                        continue;
                double t = now_ms();
                int stop = proto_is(m, PROTO_STOP);
                if (proto_is(m, PROTO_FUZZ)) {
                        if (first)
                                s.first_wait_ms = t - ready;
                        else {
                                s.idle_ms += t - ready;
                                if (t - ready > s.max_idle_ms)
                                        s.max_idle_ms = t - ready;
                        }
                        first = 0;
                        r = sim_batch(&s, m, t);
                        ready = now_ms();
                        stop = r != 0;
                } else if (proto_is(m, PROTO_PING)) {
                        cJSON *p = proto_msg_new(PROTO_PONG);
                        if (p)
                                (void)msg_send(s.evt_fd, p);
                        cJSON_Delete(p);
                }
                cJSON_Delete(m);
                if (stop)
                        break;
        }
        sim_log(&s);
        return 0;
}
