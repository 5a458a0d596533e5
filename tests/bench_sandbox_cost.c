/*
 * What the sandbox costs, measured on identical work: two workers of the
 * real snapfuzz binary on one target, one with --sandbox strict (and a
 * policy file, if given), one with --sandbox off, get the very same fuzzing
 * batches (same base input, crossover partner, PRNG seed and iteration
 * count; the record makes a batch's inputs a function of these alone), in
 * alternating order, and the executions per second of each are compared.
 * A batch is sized like the coordinator's (about 300 ms), so the per-runner
 * costs (fork, namespaces' root, descriptor closing, rlimits, the filter,
 * the supervisor's listener) weigh as much as they do in a real run.
 *
 * Not a test: scripts/sandbox-cost.sh runs it on the bundled targets and
 * on libxml2.
 *
 * With --against OTHER, both workers run under --sandbox strict, the
 * second one of the binary OTHER (another build, e.g. main's): what a
 * change costs, on identical work. The output's "strict" is then --bin's
 * figure and "off" OTHER's.
 *
 *   bench_sandbox_cost --bin SNAPFUZZ --target T.so --corpus DIR
 *                      [--policy FILE] [--seconds S] [--batch-ms MS] [--against OTHER]
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/msg.h"
#include "worker/wproc.h"
#include "sandbox/sandbox.h"

#define BENCH_MAX_LEN 4096
#define BENCH_MAX_INPUTS 4096

typedef struct Input {
        uint8_t *data;
        size_t len;
} Input;

typedef struct Side {
        const char *name;
        Wproc *w;
        double execs, ms;
        unsigned deaths;
} Side;

static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng_next(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

static size_t load_corpus(const char *dir, Input *inputs)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)) && n < BENCH_MAX_INPUTS) {
                char path[4096];
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                f = fopen(path, "rb");
                if (!f)
                        continue;
                inputs[n].data = malloc(BENCH_MAX_LEN);
                inputs[n].len = fread(inputs[n].data, 1, BENCH_MAX_LEN, f);
                fclose(f);
                n++;
        }
        closedir(d);
        return n;
}

static int compare_doubles(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Runs one batch on @s; returns the executions it made, or -1. Its wall
 * time goes to *@ret_ms. */
static double run_batch(Side *s, const WprocBatch *b, double *ret_ms)
{
        double start = now_ms();

        if (wproc_send_batch(s->w, b) < 0)
                return -1;
        for (;;) {
                cJSON *m = NULL;
                const char *type;

                if (wproc_recv(s->w, &m, 60000) <= 0)
                        return -1;
                type = msg_str(m, "type", "");
                if (strcmp(type, "done") == 0 || strcmp(type, "died") == 0) {
                        double count = (double)msg_int(m, "count", 0);

                        s->deaths += strcmp(type, "died") == 0;
                        cJSON_Delete(m);
                        *ret_ms = now_ms() - start;
                        s->ms += *ret_ms;
                        s->execs += count;
                        return count;
                }
                cJSON_Delete(m); /* sandbox events */
        }
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"bin", required_argument, NULL, 'b'},     {"target", required_argument, NULL, 't'},
            {"corpus", required_argument, NULL, 'c'},  {"policy", required_argument, NULL, 'p'},
            {"seconds", required_argument, NULL, 's'}, {"batch-ms", required_argument, NULL, 'm'},
            {"against", required_argument, NULL, 'a'}, {0},
        };
        const char *bin = NULL, *target = NULL, *corpus = NULL, *policy_path = NULL;
        const char *against = NULL;
        double seconds = 30, batch_ms = 300;
        static Input inputs[BENCH_MAX_INPUTS];
        char *policy = NULL, err[1024];
        Side sides[2] = {{.name = "strict"}, {.name = "off"}};
        size_t n_inputs;
        uint64_t iters, batches = 0;
        int c;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case 'b':
                        bin = optarg;
                        break;
                case 't':
                        target = optarg;
                        break;
                case 'c':
                        corpus = optarg;
                        break;
                case 'p':
                        policy_path = optarg;
                        break;
                case 'a':
                        against = optarg;
                        break;
                case 's':
                        seconds = atof(optarg);
                        break;
                case 'm':
                        batch_ms = atof(optarg);
                        break;
                default:
                        return 2;
                }
        }
        if (!bin || !target || !corpus) {
                fprintf(stderr,
                        "usage: %s --bin SNAPFUZZ --target T.so --corpus DIR "
                        "[--policy FILE] [--seconds S] [--batch-ms MS] [--against OTHER]\n",
                        argv[0]);
                return 2;
        }
        n_inputs = load_corpus(corpus, inputs);
        if (!n_inputs) {
                fprintf(stderr, "no inputs in %s\n", corpus);
                return 2;
        }
        if (policy_path && sandbox_policy_load(policy_path, &policy, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s\n", err);
                return 2;
        }
        for (int i = 0; i < 2; i++) {
                WprocConfig wc = {
                    .exe = i == 1 && against ? against : bin,
                    .target = target,
                    .max_len = BENCH_MAX_LEN,
                    .timeout_ms = 1000,
                    .rss_limit_mb = 2048,
                    .sandbox = against ? "strict" : sides[i].name,
                    .sandbox_policy = i == 0 || against ? policy : NULL,
                    .cov_fd = -1,
                };
                if (wproc_spawn(&sides[i].w, &wc, err, sizeof(err)) < 0) {
                        fprintf(stderr, "%s: %s\n", target, err);
                        return 1;
                }
        }

        /* Size batches like the coordinator does: about batch_ms each, at
         * the speed of batches that ran to the end (a crash or a hang in a
         * probe says nothing about speed). */
        {
                double best = 0;

                for (size_t i = 0; i < 8 && i < n_inputs; i++) {
                        WprocBatch b = {.batch_id = i + 1,
                                        .mode = RECORD_MODE_FUZZ,
                                        .iters = 2000,
                                        .seed = i + 1,
                                        .chain_len = 4,
                                        .base = inputs[i].data,
                                        .base_len = inputs[i].len};
                        /* On both sides, so that their coverage maps (which
                         * decide when a batch ends early) stay alike. */
                        Side probe[2] = {sides[0], sides[1]};
                        double ms = 1, count = run_batch(&probe[1], &b, &ms), unused;

                        if (run_batch(&probe[0], &b, &unused) < 0)
                                return 1;
                        if (count == 2000 && count / ms > best)
                                best = count / ms;
                }
                iters = (uint64_t)(best * batch_ms);
                if (iters < 64)
                        iters = 64;
        }

        /* Per batch, the strict runner's extra time over the off one on the
         * same work: the median is robust to a busy machine's spikes. */
        size_t cap = 1024, n_costs = 0;
        double *costs = malloc(cap * sizeof(*costs));
        double start = now_ms();
        while (now_ms() - start < 2 * seconds * 1000) {
                const Input *base = &inputs[rng_next() % n_inputs];
                const Input *partner = &inputs[rng_next() % n_inputs];
                WprocBatch b = {
                    .batch_id = ++batches,
                    .mode = RECORD_MODE_FUZZ,
                    .iters = iters,
                    .seed = rng_next(),
                    .chain_len = 4,
                    .base = base->data,
                    .base_len = base->len,
                    .partner = partner->data,
                    .partner_len = partner->len,
                };
                int first = (int)(batches & 1);
                double ms[2];

                if (run_batch(&sides[first], &b, &ms[first]) < 0 ||
                    run_batch(&sides[!first], &b, &ms[!first]) < 0) {
                        fprintf(stderr, "a worker failed\n");
                        return 1;
                }
                if (n_costs == cap)
                        costs = realloc(costs, (cap *= 2) * sizeof(*costs));
                costs[n_costs++] = (ms[0] - ms[1]) / ms[0] * 100;
        }
        qsort(costs, n_costs, sizeof(*costs), compare_doubles);

        double strict = sides[0].execs / sides[0].ms * 1000;
        double off = sides[1].execs / sides[1].ms * 1000;
        printf("strict %.0f exec/s, off %.0f exec/s: cost %.2f%% overall, %.2f%% median per "
               "batch (%" PRIu64 " batches of %" PRIu64
               " iterations; deaths %u/%u; executions %.0f/%.0f)\n",
               strict, off, (off - strict) / off * 100, costs[n_costs / 2], batches, iters,
               sides[0].deaths, sides[1].deaths, sides[0].execs, sides[1].execs);
        free(costs);
        for (int i = 0; i < 2; i++)
                wproc_free(sides[i].w);
        free(policy);
        return 0;
}
