/*
 * The replay-record invariant, proven on the real binary: runners of the
 * recorder target (which copies every input it receives into a shared file
 * before doing anything else) are killed with SIGKILL at random moments;
 * every input snapfuzz recovers must equal, byte for byte, the input the
 * runner was executing when it died.
 *
 * A trial is inconclusive, not failed, when the kill lands inside the few
 * instructions between the runner's count++ and the recorder's own copy of
 * the input (the recorder has not seen that input yet), or in the middle of
 * the recorder's copy. The test requires most trials to be conclusive.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "snapfuzz/mutator.h"
#include "tests/sfrun.h"
#include "tests/targets/recorder.h"

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static bool process_gone(pid_t pid)
{
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY);
        if (fd < 0)
                return true;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return true;
        buf[n] = 0;
        const char *p = strrchr(buf, ')');
        return p && (p[2] == 'Z' || p[2] == 'X');
}

typedef enum Outcome { MATCH, MISMATCH, INCONCLUSIVE, LATE } Outcome;

/* With @fresh, every batch runs in a runner of its own
 * (--runner-lifetime-ms 0), so the recorder's call numbers, counted per
 * process, are the batch's: the test knows which call the kill landed in.
 * Without, a runner takes batch after batch (the default) and the test
 * compares the recovered input with the victim's latest call: a kill
 * between count++ and the recorder's copy makes the trial inconclusive
 * rather than mismatched. */
static Outcome one_trial(const char *target, int trial, unsigned *rng, bool fresh)
{
        char *dir = sf_tmpdir();
        char rec[512], out[512], seed[32];
        snprintf(rec, sizeof(rec), "%s/record", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seed, sizeof(seed), "%d", 1000 + trial);
        int fd = open(rec, O_RDWR | O_CREAT | O_TRUNC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, RECORDER_FILE_SIZE), 0);
        RecorderShm *shm = mmap(NULL, RECORDER_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        cr_assert_neq(shm, MAP_FAILED);
        setenv(RECORDER_ENV, rec, 1);

        const char *args[] = {"run",
                              sf_target(target),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--seed",
                              seed,
                              "--max-total-time",
                              "60",
                              "--runner-lifetime-ms",
                              fresh ? "0" : "500",
                              NULL};
        pid_t pid = sf_start(dir, args);

        /* Wait until a runner is calling the target, then a random moment. */
        for (int i = 0; i < 3000 && (shm->magic != RECORDER_MAGIC || shm->n < 1); i++)
                sleep_ms(1);
        cr_assert_eq(shm->magic, RECORDER_MAGIC, "the recorder never ran");
        sleep_ms(20 + (long)(rand_r(rng) % 700));

        pid_t victim;
        for (;;) {
                victim = (pid_t)__atomic_load_n(&shm->pid, __ATOMIC_ACQUIRE);
                /* A runner that finished its batch but is not reaped yet still
                 * accepts kill(): take the next one. */
                if (!process_gone(victim) && kill(victim, SIGKILL) == 0)
                        break;
                sleep_ms(1);
        }
        while (!process_gone(victim))
                ;
        /* Copy the ring at once: later the recovery helper's verification
         * run records into the same file. */
        RecorderShm snap;
        memcpy(&snap, shm, sizeof(snap));

        /* The crash appears within a moment. If it never does, the runner
         * had already ended its batch on its own in the microseconds between
         * the check and the kill (its exit status says so): the trial is
         * late, and the run is interrupted. */
        for (int i = 0; i < 1500 && sf_count_crashes(out) == 0; i++)
                sleep_ms(10);
        if (sf_count_crashes(out) == 0) {
                kill(-pid, SIGINT);
                int late = sf_wait(pid, 30);
                cr_assert_eq(late, 0, "an interrupted run without a crash exits 0 (%d)", late);
                munmap(shm, RECORDER_FILE_SIZE);
                close(fd);
                return LATE;
        }
        int code = sf_wait(pid, 90);
        cr_assert_eq(code, 1, "the kill must be stored as a crash (exit %d)", code);
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_assert_str_eq(kind, "killed");
        char *record = sf_crash_field(out, id, "record");
        cJSON *rj = cJSON_Parse(record);
        uint64_t count = (uint64_t)cJSON_GetObjectItem(rj, "iteration")->valuedouble;
        /* The recorder numbers target calls; a runner calls the target
         * again right after some iterations (each find, for its features),
         * and the record lists those. The kill landed in call `call`, or in
         * one of the reruns of `count` that follow it. */
        uint64_t call = count, again = 0;
        const cJSON *rr;
        cJSON_ArrayForEach(rr, cJSON_GetObjectItem(rj, "reruns"))
        {
                uint64_t k = (uint64_t)rr->valuedouble;
                call += k < count;
                again += k == count;
        }
        if (!fresh || (snap.n > call && snap.n <= call + again))
                call = snap.n;
        if (strcmp(cJSON_GetObjectItem(rj, "mode")->valuestring, "fuzz") == 0) {
                /* The batch's length limit and operator weights are part
                 * of its replay, so the crash's record shows them. */
                cJSON *lim = cJSON_GetObjectItem(rj, "len_limit");
                cJSON *w = cJSON_GetObjectItem(rj, "op_weights");
                cr_expect(cJSON_IsNumber(lim) && lim->valuedouble >= 4, "%s", record);
                cr_expect(cJSON_IsString(w) && strlen(w->valuestring) == 2 * MUTATOR_WEIGHTS, "%s",
                          record);
                /* The chain's base is a corpus entry, named in OUT/corpus
                 * by its hash (this run has no seeds, so every entry was
                 * written there, long before the kill was stored). */
                cJSON *chain = cJSON_GetObjectItem(rj, "chain");
                const char *sha = cJSON_GetStringValue(cJSON_GetObjectItem(chain, "base_sha1"));
                cr_assert_not_null(sha, "%s", record);
                if (cJSON_IsTrue(cJSON_GetObjectItem(rj, "packed"))) {
                        char entry[700];
                        snprintf(entry, sizeof(entry), "%s/corpus/%s", out, sha);
                        cr_expect_eq(access(entry, F_OK), 0, "the chain's base %s is in the corpus",
                                     sha);
                }
        }
        /* A run of the custom variant must have mutated with it. */
        bool custom = strstr(target, "custom") != NULL;
        bool fuzzed = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rj, "mode")), "fuzz") == 0;
        if (custom && fuzzed)
                cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(rj, "custom_mutator")) &&
                              cJSON_IsTrue(cJSON_GetObjectItem(rj, "custom_crossover")),
                          "the record says the custom mutator made the input: %s", record);
        cJSON_Delete(rj);
        char path[600];
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        uint8_t *input = sf_read(path, &len);
        cr_assert_not_null(input);

        Outcome o = INCONCLUSIVE;
        const RecorderSlot *s = &snap.ring[call % RECORDER_RING];
        if (getenv("SF_KILL_DEBUG"))
                fprintf(stderr,
                        "trial %d: victim %d count %lu call %lu | shm pid %ld n %lu | slot pid %ld "
                        "n %lu "
                        "seq %lu len %lu | recovered %zu\n",
                        trial, (int)victim, (unsigned long)count, (unsigned long)call,
                        (long)snap.pid, (unsigned long)snap.n, (long)s->pid, (unsigned long)s->n,
                        (unsigned long)s->seq, (unsigned long)s->len, len);
        if (s->pid == victim && s->n == call && (s->seq & 1) == 0) {
                size_t cmp = s->len < RECORDER_MAX_DATA ? s->len : RECORDER_MAX_DATA;
                o = (s->len == len && memcmp(s->data, input, cmp) == 0) ? MATCH
                    : fresh                                             ? MISMATCH
                                                                        : INCONCLUSIVE;
                if (o == MISMATCH)
                        cr_log_error("trial %d: iteration %lu: recorded %lu bytes, recovered %zu",
                                     trial, (unsigned long)count, (unsigned long)s->len, len);
        }
        free(input);
        free(record);
        free(kind);
        free(id);
        munmap(shm, RECORDER_FILE_SIZE);
        close(fd);
        return o;
}

/* Runs @trials kill trials on @target and checks the outcomes. A kill that
 * comes late (the runner had ended its batch, which with batches of 20 ms
 * happens to some one kill in six) is tried again, at most @trials times
 * in all. */
static void kill_trials(const char *target, int trials, bool fresh)
{
        unsigned rng = (unsigned)time(NULL);
        int match = 0, mismatch = 0, inconclusive = 0, late = 0, done = 0;
        for (int t = 0; done < trials && late <= trials; t++) {
                switch (one_trial(target, t, &rng, fresh)) {
                case MATCH:
                        match++;
                        break;
                case MISMATCH:
                        mismatch++;
                        break;
                case INCONCLUSIVE:
                        inconclusive++;
                        break;
                case LATE:
                        late++;
                        continue;
                }
                done++;
        }
        cr_log_info("random SIGKILL (%s, %s): %d trials, %d byte-exact, %d mismatched, %d "
                    "inconclusive, %d late (the runner had ended its batch)",
                    target, fresh ? "a runner per batch" : "long-lived runners", trials, match,
                    mismatch, inconclusive, late);
        cr_expect_eq(done, trials, "most kills hit a running runner (%d late)", late);
        cr_expect_eq(mismatch, 0, "every recovered input equals the running one");
        cr_expect_geq(match, trials * 2 / 3, "most trials are conclusive (%d of %d)", match,
                      trials);
}

Test(recovery_kill, sigkill_at_random_moments_recovers_the_exact_running_input, .timeout = 900)
{
        kill_trials("recorder", getenv("SF_KILL_TRIALS") ? atoi(getenv("SF_KILL_TRIALS")) : 25,
                    true);
}

Test(recovery_kill, sigkill_of_a_runner_that_took_many_batches_recovers_its_input, .timeout = 900)
{
        kill_trials("recorder", getenv("SF_KILL_TRIALS") ? atoi(getenv("SF_KILL_TRIALS")) : 15,
                    false);
}

/* The same with inputs made by the target's own custom mutator and
 * crossover (which call LLVMFuzzerMutate): recovery rebuilds them in a
 * runner of the verification worker, where the target is loaded. */
Test(recovery_kill, sigkill_recovers_inputs_of_a_custom_mutator_exactly, .timeout = 900)
{
        kill_trials("recorder_custom",
                    getenv("SF_KILL_TRIALS") ? atoi(getenv("SF_KILL_TRIALS")) : 12, true);
}
