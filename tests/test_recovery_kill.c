/*
 * The replay-record invariant, proven on the real binary: runners of the
 * recorder target (which copies every input it receives into a shared file,
 * labelled with the iteration the replay record names, before doing
 * anything else) are killed with SIGKILL at random moments, in both runner
 * modes (a fresh runner per batch, and long-lived runners that take batch
 * after batch); every input snapfuzz recovers must equal, byte for byte,
 * the input the runner executed at the recovered iteration.
 *
 * Every trial is decided from what the victim recorded in its own lane of
 * the file (tests/targets/recorder.h), never from the latest call of any
 * process: the recovery helper's verification runs load the same target and
 * record too (before lanes, they overwrote the victim's last call before
 * the test could read it, and half the long-lived trials could not be
 * judged). Outcomes:
 *   - a crash is stored: the victim's call labelled with the recovered
 *     batch and iteration must hold the same bytes, else the test fails.
 *     When there is no such call, the kill must have landed between the
 *     runner's count store and the end of the recorder's copy: the victim's
 *     latest complete call is the iteration before (it returned, or a later
 *     call was being recorded), or, with no complete call, the recovered
 *     iteration is the batch's first. The input had not reached the recorder,
 *     nothing can be compared, and the trial is replaced. Anything else
 *     fails.
 *   - no crash is stored: the victim must not have been inside the target
 *     (its latest call returned), and snapfuzz must account for the runner:
 *     no death at all (the kill hit a runner that had ended its batch), or
 *     one death whose input was lost because the runner "died before it ran
 *     any input" (a long-lived runner killed after taking a new batch and
 *     before its first count store). The trial is correct but recovered
 *     nothing, and is replaced. Anything else fails.
 *
 * The seed is printed; SF_KILL_SEED=N replays the same kill delays and
 * snapfuzz seeds (the machine's timing still varies from run to run).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
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

typedef enum Outcome {
        MATCH,       /* the recovered input is the one the victim executed */
        UNSEEN,      /* killed before the recorder had the input: nothing to compare */
        NOT_RUNNING, /* no crash, rightly: the victim was running no input */
} Outcome;

typedef struct Trials {
        const char *target;
        bool fresh; /* a runner per batch (--runner-lifetime-ms 0) */
        unsigned seed;
} Trials;

#define trial_fail(T, t, ...)                                                                      \
        cr_assert_fail("%s, %s, trial %d (replay: SF_KILL_SEED=%u): %s", (T)->target,              \
                       (T)->fresh ? "a runner per batch" : "long-lived runners", t, (T)->seed,     \
                       trial_msg(__VA_ARGS__))

static const char *trial_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *trial_msg(const char *fmt, ...)
{
        static char buf[2048];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        return buf;
}

/* The slot of @lane that holds call @n, complete, or NULL. */
static const RecorderSlot *lane_call(const RecorderLane *lane, uint64_t n)
{
        if (n == 0 || n > lane->n || lane->n - n >= RECORDER_RING)
                return NULL;
        const RecorderSlot *s = &lane->ring[n % RECORDER_RING];
        return s->n == n && (s->seq & 1) == 0 ? s : NULL;
}

/* The latest complete call of @lane labelled (@batch, @count): the input's
 * first run or a rerun of it (the same bytes). */
static const RecorderSlot *lane_find(const RecorderLane *lane, uint64_t batch, uint64_t count)
{
        for (uint64_t n = lane->n; n > 0 && lane->n - n < RECORDER_RING; n--) {
                const RecorderSlot *s = lane_call(lane, n);
                if (s && s->labelled && s->batch_id == batch && s->count == count)
                        return s;
        }
        return NULL;
}

/* The latest complete call of @lane (NULL: none in the ring). */
static const RecorderSlot *lane_latest(const RecorderLane *lane)
{
        for (uint64_t n = lane->n; n > 0 && lane->n - n < RECORDER_RING; n--)
                if (lane_call(lane, n))
                        return lane_call(lane, n);
        return NULL;
}

static cJSON *read_json(const char *path)
{
        size_t len;
        char *text = (char *)sf_read(path, &len);
        cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;
        free(text);
        return j;
}

/* Decides a trial in which no crash was stored (see the top of the file). */
static Outcome judge_no_crash(const Trials *T, int trial, const RecorderLane *lane, const char *dir,
                              const char *out)
{
        char path[700];
        const RecorderSlot *last = lane_latest(lane);
        if (!last || last->n != lane->n || !last->returned)
                trial_fail(T, trial,
                           "the runner was killed inside its call %lu (iteration %lu of batch "
                           "%lu) and no crash was stored",
                           (unsigned long)lane->n, last ? (unsigned long)last->count : 0,
                           last ? (unsigned long)last->batch_id : 0);
        snprintf(path, sizeof(path), "%s/stats.json", out);
        cJSON *st = read_json(path);
        if (!st)
                trial_fail(T, trial, "no stats.json in %s", out);
        double deaths = cJSON_GetNumberValue(cJSON_GetObjectItem(st, "runner_deaths"));
        double lost = cJSON_GetNumberValue(cJSON_GetObjectItem(st, "inputs_lost"));
        cJSON_Delete(st);
        snprintf(path, sizeof(path), "%s/stderr", dir);
        size_t err_len;
        char *err = (char *)sf_read(path, &err_len);
        bool no_input = err && strstr(err, "the runner died before it ran any input");
        if (getenv("SF_KILL_DEBUG"))
                fprintf(stderr,
                        "trial %d: no crash | runner deaths %g, inputs lost %g%s | latest call "
                        "%lu: batch %lu iteration %lu of %lu, returned\n",
                        trial, deaths, lost, no_input ? " (before any input)" : "",
                        (unsigned long)last->n, (unsigned long)last->batch_id,
                        (unsigned long)last->count, (unsigned long)last->iters);
        if (!(deaths == 0 && lost == 0) && !(deaths == 1 && lost == 1 && no_input))
                trial_fail(T, trial,
                           "no crash stored, %g runner deaths, %g inputs lost, after the "
                           "runner's iteration %lu of batch %lu returned; snapfuzz said:\n%s",
                           deaths, lost, (unsigned long)last->count, (unsigned long)last->batch_id,
                           err ? err : "");
        free(err);
        return NOT_RUNNING;
}

/* Checks what the crash's record says about the batch (its replay
 * parameters, its base, the custom mutator). */
/* Whether the run removed files of OUT/corpus: an entry a shorter input
 * replaced leaves it (stats.json's corpus_files_removed), so a chain's
 * base may be gone since its batch ran. */
static bool files_removed(const char *out)
{
        char path[700];
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out);
        uint8_t *text = sf_read(path, &len);
        cJSON *st = cJSON_ParseWithLength((const char *)text, len);
        free(text);
        bool removed = cJSON_GetNumberValue(cJSON_GetObjectItem(st, "corpus_files_removed")) > 0;
        cJSON_Delete(st);
        return removed;
}

static void check_record(const char *target, const char *out, cJSON *rj, const char *record)
{
        bool fuzzed = strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(rj, "mode")), "fuzz") == 0;
        if (fuzzed) {
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
                if (cJSON_IsTrue(cJSON_GetObjectItem(rj, "packed")) && !files_removed(out)) {
                        char entry[700];
                        snprintf(entry, sizeof(entry), "%s/corpus/%s", out, sha);
                        cr_expect_eq(access(entry, F_OK), 0, "the chain's base %s is in the corpus",
                                     sha);
                }
        }
        /* A run of the custom variant must have mutated with it. */
        if (strstr(target, "custom") && fuzzed)
                cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(rj, "custom_mutator")) &&
                              cJSON_IsTrue(cJSON_GetObjectItem(rj, "custom_crossover")),
                          "the record says the custom mutator made the input: %s", record);
}

/* Decides a trial in which a crash was stored (see the top of the file). */
static Outcome judge_crash(const Trials *T, int trial, const RecorderLane *lane, const char *out)
{
        char *id = sf_only_crash(out);
        char *kind = sf_crash_field(out, id, "kind");
        cr_assert_str_eq(kind, "killed");
        char *record = sf_crash_field(out, id, "record");
        cJSON *rj = cJSON_Parse(record);
        cr_assert_not_null(rj, "crash.json has a record: %s", record);
        check_record(T->target, out, rj, record);
        uint64_t batch = (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(rj, "batch_id"));
        uint64_t k = (uint64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(rj, "iteration"));
        cJSON_Delete(rj);
        char path[700];
        size_t len;
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        uint8_t *input = sf_read(path, &len);
        cr_assert_not_null(input);

        Outcome o;
        const RecorderSlot *s = lane_find(lane, batch, k);
        const RecorderSlot *last = lane_latest(lane);
        if (getenv("SF_KILL_DEBUG"))
                fprintf(stderr,
                        "trial %d: recovered batch %lu iteration %lu, %zu bytes | lane pid %ld "
                        "calls %lu | latest complete: call %lu batch %lu iteration %lu "
                        "returned %lu | labelled call found: %s\n",
                        trial, (unsigned long)batch, (unsigned long)k, len, (long)lane->pid,
                        (unsigned long)lane->n, last ? (unsigned long)last->n : 0,
                        last ? (unsigned long)last->batch_id : 0,
                        last ? (unsigned long)last->count : 0,
                        last ? (unsigned long)last->returned : 0, s ? "yes" : "no");
        if (s) {
                size_t cmp = s->len < RECORDER_MAX_DATA ? s->len : RECORDER_MAX_DATA;
                if (s->len != len || memcmp(s->data, input, cmp) != 0)
                        trial_fail(T, trial,
                                   "iteration %lu of batch %lu: the runner executed %lu bytes, "
                                   "snapfuzz recovered %zu different ones (crash %s)",
                                   (unsigned long)k, (unsigned long)batch, (unsigned long)s->len,
                                   len, id);
                o = MATCH;
        } else {
                /* Not seen: only a kill after the count store and before
                 * the recorder's copy (or inside it) explains it, and then
                 * the victim's latest complete call is the iteration
                 * before, and it returned. */
                bool next = last && last->labelled &&
                            ((last->batch_id == batch && last->count + 1 == k) ||
                             (last->batch_id != batch && k == 1));
                bool in_copy = last && last->n != lane->n;
                /* Or in the runner's first call, before its copy ended. */
                bool first = !last && lane->n <= 1 && k == 1;
                if (!first && (!next || !(last->returned || in_copy)))
                        trial_fail(T, trial,
                                   "snapfuzz recovered iteration %lu of batch %lu (%zu bytes), "
                                   "but the runner's latest call was iteration %lu of batch %lu "
                                   "(%sreturned), call %lu of %lu",
                                   (unsigned long)k, (unsigned long)batch, len,
                                   last ? (unsigned long)last->count : 0,
                                   last ? (unsigned long)last->batch_id : 0,
                                   last && last->returned ? "" : "not ",
                                   last ? (unsigned long)last->n : 0, (unsigned long)lane->n);
                o = UNSEEN;
        }
        free(input);
        free(record);
        free(kind);
        free(id);
        return o;
}

/* One kill: starts a run, kills its runner at a random moment, decides. */
static Outcome one_trial(const Trials *T, int trial)
{
        char *dir = sf_tmpdir();
        char rec[512], out[512], seed[32];
        unsigned rng = T->seed * 2654435761u + (unsigned)trial;
        /* On tmpfs: a shared page of a disk file that writeback cleaned
         * faults on the recorder's next store, and a pending SIGKILL is
         * delivered there, right before the copy, far more often than
         * chance would put it there. */
        snprintf(rec, sizeof(rec), "/dev/shm/snapfuzz-recorder-XXXXXX");
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(seed, sizeof(seed), "%u", T->seed + (unsigned)trial);
        int fd = mkstemp(rec);
        cr_assert_geq(fd, 0, "a file in /dev/shm: %s", strerror(errno));
        cr_assert_eq(ftruncate(fd, RECORDER_FILE_SIZE), 0);
        RecorderShm *shm = mmap(NULL, RECORDER_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        cr_assert_neq(shm, MAP_FAILED);
        setenv(RECORDER_ENV, rec, 1);

        const char *args[] = {"run",
                              sf_target(T->target),
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--seed",
                              seed,
                              "--max-total-time",
                              "60",
                              "--runner-lifetime-ms",
                              T->fresh ? "0" : "500",
                              NULL};
        pid_t pid = sf_start(dir, args);

        /* Wait until a runner is calling the target, then a random moment. */
        for (int i = 0; i < 3000 && (shm->magic != RECORDER_MAGIC ||
                                     __atomic_load_n(&shm->pid, __ATOMIC_ACQUIRE) == 0);
             i++)
                sleep_ms(1);
        cr_assert_eq(shm->magic, RECORDER_MAGIC, "the recorder never ran");
        cr_assert_eq(shm->unlabelled_inits, 0, "the recorder found snapfuzz's replay record");
        sleep_ms(20 + (long)(rand_r(&rng) % 700));

        pid_t victim;
        for (;;) {
                victim = (pid_t)__atomic_load_n(&shm->pid, __ATOMIC_ACQUIRE);
                /* A runner at the last iteration of its batch is about to
                 * end it (a kill would most likely find no input running),
                 * and one that finished its batch but is not reaped yet
                 * still accepts kill(): take the next one. */
                const RecorderLane *vl = &shm->lanes[shm->lane % RECORDER_LANES];
                const RecorderSlot *vs = &vl->ring[vl->n % RECORDER_RING];
                bool ending = vl->pid == victim && vs->labelled && vs->count >= vs->iters;
                if (ending) {
                        /* Not the next runner's first instant either. */
                        sleep_ms(1 + (long)(rand_r(&rng) % 10));
                        continue;
                }
                if (!process_gone(victim) && kill(victim, SIGKILL) == 0)
                        break;
                sleep_ms(1);
        }
        while (!process_gone(victim))
                ;
        /* The victim's lane, copied at once (it changes no more, but a
         * lane is claimed again after RECORDER_LANES more processes). */
        static RecorderLane lane;
        bool found = false;
        for (unsigned i = 0; i < RECORDER_LANES && !found; i++)
                if (shm->lanes[i].pid == victim) {
                        memcpy(&lane, &shm->lanes[i], sizeof(lane));
                        found = lane.pid == victim;
                }
        if (!found)
                trial_fail(T, trial, "the victim %d has no lane in the recorder's file",
                           (int)victim);

        /* The crash appears within a moment (some 20-300 ms), or never:
         * then the run is interrupted, and its stats say what became of the
         * runner. The wait only saves time: an interrupted run still
         * stores every crash already queued, and is judged on that. */
        for (int i = 0; i < 300 && sf_count_crashes(out) == 0; i++)
                sleep_ms(10);
        Outcome o;
        if (sf_count_crashes(out) == 0) {
                kill(-pid, SIGINT);
                int code = sf_wait(pid, 60);
                if (sf_count_crashes(out) > 0) {
                        cr_assert_eq(code, 1, "an interrupted run with a crash exits 1 (%d)", code);
                        o = judge_crash(T, trial, &lane, out);
                } else {
                        cr_assert_eq(code, 0, "an interrupted run without a crash exits 0 (%d)",
                                     code);
                        o = judge_no_crash(T, trial, &lane, dir, out);
                }
        } else {
                int code = sf_wait(pid, 90);
                cr_assert_eq(code, 1, "the kill must be stored as a crash (exit %d)", code);
                o = judge_crash(T, trial, &lane, out);
        }
        munmap(shm, RECORDER_FILE_SIZE);
        close(fd);
        unlink(rec);
        free(dir);
        return o;
}

/* Runs @trials decided kills on @target. A trial that recovered nothing
 * (NOT_RUNNING) or whose input never reached the recorder (UNSEEN) is
 * correct but compares nothing, and another takes its place: at most
 * 3 x @trials of them (a kill finds a runner between batches some one time
 * in four, more with a reproducible run's short batches), and UNSEEN, a
 * window of a few instructions, at most a quarter. */
static void kill_trials(const char *target, int trials, bool fresh)
{
        const char *env = getenv("SF_KILL_SEED");
        Trials T = {.target = target,
                    .fresh = fresh,
                    .seed = env && *env ? (unsigned)strtoul(env, NULL, 0) : (unsigned)time(NULL)};
        fprintf(stderr, "recovery_kill: %s, %s: seed %u (replay with SF_KILL_SEED=%u)\n", target,
                fresh ? "a runner per batch" : "long-lived runners", T.seed, T.seed);
        int match = 0, unseen = 0, not_running = 0;
        for (int t = 0; match < trials; t++) {
                switch (one_trial(&T, t)) {
                case MATCH:
                        match++;
                        break;
                case UNSEEN:
                        unseen++;
                        break;
                case NOT_RUNNING:
                        not_running++;
                        break;
                }
                cr_assert_leq(not_running, 3 * trials,
                              "seed %u: %d kills found no runner running an input", T.seed,
                              not_running);
                cr_assert_leq(unseen, trials / 4 + 1,
                              "seed %u: %d kills landed before the recorder saw the input: too "
                              "many for a window of a few instructions",
                              T.seed, unseen);
        }
        cr_log_info("random SIGKILL (%s, %s, seed %u): %d trials byte-exact; replaced: %d with no "
                    "input running, %d killed before the recorder saw the input",
                    target, fresh ? "a runner per batch" : "long-lived runners", T.seed, match,
                    not_running, unseen);
        fprintf(stderr,
                "recovery_kill: %s, %s, seed %u: %d byte-exact; replaced: %d with no input "
                "running, %d killed before the recorder saw the input\n",
                target, fresh ? "a runner per batch" : "long-lived runners", T.seed, match,
                not_running, unseen);
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
