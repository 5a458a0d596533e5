/*
 * The recovery helper's job queue (engine/helperq.c), with a scripted
 * helper: a real process forked by the queue, talking the real protocol
 * over the real pipes, that does what the first byte of each job's record
 * says (answer, die once, die always, wait to be killed). Deaths are real
 * SIGKILLs; the queue cannot tell this helper from recovery_main.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/msg.h"
#include "engine/helperq.h"

#define REC 32

/* Shared between the test and every helper it forks (MAP_SHARED). */
typedef struct Script {
        unsigned attempts[256]; /* per job key (record[1]) */
        unsigned prepares;
        unsigned holding; /* a 'W' job is being held */
        bool broken;      /* every helper exits at once */
} Script;

static Script *script_new(void)
{
        Script *s =
            mmap(NULL, sizeof(Script), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(s, MAP_FAILED);
        memset(s, 0, sizeof(*s));
        return s;
}

/*
 * The scripted helper. A record is a string: its first byte says what to
 * do, its second is the job's key:
 *   S  answer "stored", with the record as "data"
 *   O  die by SIGKILL on the first attempt, then as S
 *   K  die by SIGKILL on every attempt
 *   W  on the first attempt wait to be killed from outside, then as S
 */
static int scripted_main(void *ctx, int cmd_fd, int evt_fd, void *job_region)
{
        Script *sc = ctx;
        MsgReader rd;
        if (sc->broken)
                return -EINVAL;
        msg_reader_init(&rd, cmd_fd);
        for (;;) {
                cJSON *cmd = NULL;
                int r = msg_recv(&rd, &cmd, -1);
                if (r < 0)
                        return 0;
                if (r == 0)
                        continue;
                const char *type = msg_str(cmd, "type", "");
                if (strcmp(type, "prepare") == 0)
                        __atomic_add_fetch(&sc->prepares, 1, __ATOMIC_SEQ_CST);
                if (strcmp(type, "recover") != 0) {
                        cJSON_Delete(cmd);
                        continue;
                }
                const char *rec = job_region;
                unsigned attempt =
                    __atomic_add_fetch(&sc->attempts[(uint8_t)rec[1]], 1, __ATOMIC_SEQ_CST);
                if (rec[0] == 'K' || (rec[0] == 'O' && attempt == 1))
                        raise(SIGKILL);
                if (rec[0] == 'W' && attempt == 1) {
                        __atomic_store_n(&sc->holding, 1, __ATOMIC_SEQ_CST);
                        for (;;)
                                pause();
                }
                cJSON *out = msg_new("stored");
                cJSON_AddNumberToObject(out, "job", (double)msg_int(cmd, "job", 0));
                cJSON_AddStringToObject(out, "data", rec);
                const cJSON *died = cJSON_GetObjectItemCaseSensitive(cmd, "died");
                cJSON_AddNumberToObject(out, "died_n", (double)msg_int(died, "n", -1));
                cJSON_AddNumberToObject(out, "attempt", attempt);
                r = msg_send(evt_fd, out);
                cJSON_Delete(out);
                cJSON_Delete(cmd);
                if (r < 0)
                        return 0;
        }
}

static HelperQueue *queue_new(Script *sc, unsigned job_deaths)
{
        /* As snapfuzz's main() does: a dead helper is an EPIPE. */
        signal(SIGPIPE, SIG_IGN);
        HelperQueueConfig cfg = {
            .record_size = REC, .main = scripted_main, .ctx = sc, .job_deaths = job_deaths};
        HelperQueue *q = NULL;
        cr_assert_eq(helperq_new(&q, &cfg), 0);
        return q;
}

static void put(HelperQueue *q, const char *rec, int n, unsigned flags)
{
        char buf[REC] = {0};
        snprintf(buf, sizeof(buf), "%s", rec);
        cJSON *died = msg_new("died");
        cJSON_AddNumberToObject(died, "n", n);
        cr_assert_eq(helperq_put(q, buf, died, clock_now_ms(), flags), 0);
        cJSON_Delete(died);
}

/* The next answer within @timeout_ms (NULL if none), dispatching as the
 * coordinator's loop does; -ECHILD into *@err when the queue gives up. */
static cJSON *next_answer(HelperQueue *q, int timeout_ms, int *err)
{
        int64_t deadline = clock_now_ms() + timeout_ms;
        for (;;) {
                helperq_dispatch(q);
                cJSON *m = NULL;
                int t = helperq_read(q, &m);
                if (t == 1)
                        return m;
                if (t < 0) {
                        cr_assert(err, "helperq_read: %s", strerror(-t));
                        *err = t;
                        return NULL;
                }
                int64_t left = deadline - clock_now_ms();
                if (left <= 0)
                        return NULL;
                struct pollfd p = {.fd = helperq_fd(q), .events = POLLIN};
                poll(&p, 1, left > 50 ? 50 : (int)left);
        }
}

static double stat_of(HelperQueue *q, const char *key)
{
        cJSON *j = cJSON_CreateObject();
        helperq_add_stats(q, j);
        double v = msg_num(j, key, -1);
        cJSON_Delete(j);
        return v;
}

static void expect_stored(cJSON *m, const char *data, int died_n)
{
        cr_assert_not_null(m, "no answer for %s", data);
        cr_expect_str_eq(msg_str(m, "type", ""), "stored");
        cr_expect_str_eq(msg_str(m, "data", ""), data, "the job's record, byte for byte");
        cr_expect_eq(msg_int(m, "died_n", -1), died_n, "and its died event");
        cJSON_Delete(m);
}

Test(helperq, jobs_are_answered_in_the_order_queued)
{
        Script *sc = script_new();
        HelperQueue *q = queue_new(sc, 0);
        put(q, "S1", 1, 0);
        put(q, "S2", 2, 0);
        put(q, "S3", 3, 0);
        cr_expect_eq(helperq_waiting(q), 3);
        cr_expect_eq(helperq_pending(q), 3);
        expect_stored(next_answer(q, 10000, NULL), "S1", 1);
        expect_stored(next_answer(q, 10000, NULL), "S2", 2);
        expect_stored(next_answer(q, 10000, NULL), "S3", 3);
        cr_expect_eq(helperq_pending(q), 0);
        cr_expect_eq(stat_of(q, "helper_restarts"), 0);
        helperq_free(q);
}

Test(helperq, a_leak_suspect_is_checked_before_the_crashes_waiting)
{
        Script *sc = script_new();
        HelperQueue *q = queue_new(sc, 0);
        put(q, "S1", 1, 0);
        put(q, "S2", 2, 0);
        put(q, "L3", 3, HELPERQ_LEAK_SUSPECT);
        cJSON *m = next_answer(q, 10000, NULL);
        cr_assert_not_null(m);
        cr_expect(msg_bool(m, "leak_suspect", 0), "the suspect's answer says so");
        cr_expect_str_eq(msg_str(m, "data", ""), "L3");
        cJSON_Delete(m);
        m = next_answer(q, 10000, NULL);
        cr_assert_not_null(m);
        cr_expect_not(msg_bool(m, "leak_suspect", 0));
        expect_stored(m, "S1", 1);
        expect_stored(next_answer(q, 10000, NULL), "S2", 2);
        helperq_free(q);
}

Test(helperq, a_helper_death_requeues_the_job_in_flight)
{
        Script *sc = script_new();
        HelperQueue *q = queue_new(sc, 0);
        pid_t first = helperq_pid(q);
        put(q, "O1", 1, 0);
        put(q, "S2", 2, 0);
        cJSON *m = next_answer(q, 10000, NULL);
        cr_assert_not_null(m);
        cr_expect_eq(msg_int(m, "attempt", 0), 2, "answered by its second attempt");
        expect_stored(m, "O1", 1);
        expect_stored(next_answer(q, 10000, NULL), "S2", 2);
        cr_expect_eq(stat_of(q, "helper_restarts"), 1);
        cr_expect_neq(helperq_pid(q), first, "a new helper");
        cr_expect_gt(helperq_pid(q), 0);
        cr_expect_eq(helperq_pending(q), 0);
        helperq_free(q);
}

Test(helperq, a_helper_killed_from_outside_is_replaced_and_told_to_prepare_again)
{
        Script *sc = script_new();
        HelperQueue *q = queue_new(sc, 0);
        helperq_prepare(q);
        put(q, "W1", 1, 0);
        helperq_dispatch(q);
        int64_t deadline = clock_now_ms() + 10000;
        while (!__atomic_load_n(&sc->holding, __ATOMIC_SEQ_CST) && clock_now_ms() < deadline)
                usleep(1000);
        cr_assert(sc->holding, "the helper never took the job");
        cr_expect_eq(helperq_waiting(q), 0);
        cr_expect_eq(helperq_pending(q), 1, "the job is in flight");
        cr_assert_eq(kill(helperq_pid(q), SIGKILL), 0);
        expect_stored(next_answer(q, 10000, NULL), "W1", 1);
        cr_expect_eq(__atomic_load_n(&sc->prepares, __ATOMIC_SEQ_CST), 2,
                     "the new helper was told to prepare as the first one was");
        /* And it goes on taking jobs. */
        put(q, "S2", 2, 0);
        expect_stored(next_answer(q, 10000, NULL), "S2", 2);
        helperq_free(q);
}

Test(helperq, a_job_that_kills_the_helper_every_time_is_lost_exactly_once)
{
        Script *sc = script_new();
        HelperQueue *q = queue_new(sc, 0);
        put(q, "K1", 1, 0);
        put(q, "S2", 2, 0);
        cJSON *m = next_answer(q, 20000, NULL);
        cr_assert_not_null(m);
        cr_expect_str_eq(msg_str(m, "type", ""), "lost");
        cr_expect_eq(msg_int(m, "job_deaths", 0), HELPERQ_JOB_DEATHS);
        cr_expect(strstr(msg_str(m, "why", ""), "died 3 times"), "why: %s", msg_str(m, "why", ""));
        cr_expect_not(msg_bool(m, "leak_suspect", 0), "a crash, not a check");
        cJSON_Delete(m);
        cr_expect_eq(sc->attempts['1'], HELPERQ_JOB_DEATHS, "tried exactly that many times");
        expect_stored(next_answer(q, 10000, NULL), "S2", 2);
        m = next_answer(q, 500, NULL);
        cr_expect_null(m, "one answer per job: %s", m ? msg_str(m, "type", "") : "");
        cr_expect_eq(helperq_pending(q), 0);
        cr_expect_eq(stat_of(q, "helper_restarts"), HELPERQ_JOB_DEATHS);
        cr_expect_gt(helperq_pid(q), 0, "a helper is still there for the next job");
        helperq_free(q);
}

Test(helperq, a_helper_that_cannot_run_is_given_up_and_its_jobs_counted)
{
        Script *sc = script_new();
        sc->broken = true;
        /* More deaths per job than in a row: no job is answered "lost",
         * so every one of them is left for helperq_abandon. */
        HelperQueue *q = queue_new(sc, 100);
        put(q, "S1", 1, 0);
        put(q, "S2", 2, 0);
        put(q, "L3", 3, HELPERQ_LEAK_SUSPECT);
        int err = 0;
        cJSON *m = next_answer(q, 30000, &err);
        cr_expect_null(m);
        cJSON_Delete(m);
        cr_assert_eq(err, -ECHILD, "the queue gives up");
        cr_expect_eq(helperq_fd(q), -1);
        cr_expect_eq(helperq_pending(q), 3);
        cr_expect_eq(helperq_abandon(q), 2, "the two crashes are lost, the check is not");
        cr_expect_eq(helperq_pending(q), 0);
        char rec[REC] = "S4";
        cr_expect_eq(helperq_put(q, rec, NULL, 0, 0), -ECHILD, "no job is taken any more");
        helperq_free(q);
}
