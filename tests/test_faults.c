/*
 * Faults of snapfuzz's own processes, on the real binary: the recovery
 * helper (comm "sf-recovery", a child of the coordinator) is SIGKILLed at
 * chosen moments - as soon as it exists, while it verifies a hang, at
 * random moments while crashes keep coming - and the campaign goes on:
 * a new helper takes the job again from its saved record, the crash is
 * stored byte-exact and reproduces, and nothing is counted lost.
 *
 * Random choices (the seed's bytes and where the needle goes, the delays
 * before kills) come from one seed, printed; SF_FAULTS_SEED=N replays it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/sfrun.h"

#define NEEDLE "FUZZ!!"
#define SEED_LEN 4096

static uint64_t rng;

static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static void rng_init(void)
{
        const char *e = getenv("SF_FAULTS_SEED");
        uint64_t seed =
            e ? strtoull(e, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        fprintf(stderr, "test_faults: SF_FAULTS_SEED=%llu\n", (unsigned long long)seed);
        rng = seed | 1;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A seed directory with one file of random bytes holding the needle;
 * its bytes into @ret (SEED_LEN). */
static void write_seed(const char *dir, uint8_t *ret)
{
        char path[512];
        snprintf(path, sizeof(path), "%s/seeds", dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        snprintf(path, sizeof(path), "%s/seeds/needle", dir);
        for (size_t i = 0; i < SEED_LEN; i++)
                ret[i] = (uint8_t)rnd();
        /* No second needle by chance: 'F' only where it is put. */
        for (size_t i = 0; i < SEED_LEN; i++)
                if (ret[i] == 'F')
                        ret[i] = 'f';
        memcpy(ret + rnd() % (SEED_LEN - 6), NEEDLE, 6);
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(ret, 1, SEED_LEN, f), SEED_LEN);
        fclose(f);
}

/* Seconds since boot. */
static double uptime_s(void)
{
        double up = 0;
        FILE *f = fopen("/proc/uptime", "r");
        if (f) {
                if (fscanf(f, "%lf", &up) != 1)
                        up = 0;
                fclose(f);
        }
        return up;
}

/* From /proc/PID/stat: comm, ppid, and how long ago the process started
 * (in seconds). */
static bool proc_stat(pid_t pid, char *comm, size_t commlen, pid_t *ppid, double *age)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "r");
        if (!f)
                return false;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        char *open = strchr(buf, '('), *close = strrchr(buf, ')');
        if (!open || !close)
                return false;
        snprintf(comm, commlen, "%.*s", (int)(close - open - 1), open + 1);
        char state;
        int pp;
        unsigned long long start;
        /* Fields 3 (state), 4 (ppid), ..., 22 (starttime, in clock ticks). */
        if (sscanf(close + 2,
                   "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
                   "%llu",
                   &state, &pp, &start) != 3)
                return false;
        /* A process that has died (not yet reaped) is no one to look at. */
        if (state == 'Z' || state == 'X')
                return false;
        *ppid = pp;
        *age = uptime_s() - (double)start / (double)sysconf(_SC_CLK_TCK);
        return true;
}

/* The first child of @parent (whose comm is @comm when not NULL) that has
 * lived at least @min_age seconds; 0 when there is none. */
static pid_t child_of(pid_t parent, const char *comm, double min_age)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        pid_t found = 0;
        while (d && !found && (de = readdir(d)) != NULL) {
                pid_t pid = (pid_t)atoi(de->d_name);
                char c[64];
                pid_t pp;
                double age;
                if (pid <= 0 || !proc_stat(pid, c, sizeof(c), &pp, &age) || pp != parent)
                        continue;
                if ((!comm || strcmp(c, comm) == 0) && age >= min_age)
                        found = pid;
        }
        if (d)
                closedir(d);
        return found;
}

/* The coordinator's helper, other than @killed: a helper just sent
 * SIGKILL may still be listed for a moment, with its verification worker
 * and that worker's runner. */
static pid_t find_helper(pid_t coordinator, pid_t killed)
{
        pid_t h = child_of(coordinator, "sf-recovery", 0);
        return h == killed ? 0 : h;
}

/* Whether the helper runs an input that has run for a while: its
 * verification worker forks a runner for each input, which ends with it,
 * and only the hang's lasts 0.5 s. */
static bool helper_verifies_a_hang(pid_t helper)
{
        pid_t verifier = child_of(helper, NULL, 0);
        return verifier && child_of(verifier, NULL, 0.5) != 0;
}

/* Waits until @pred holds for the coordinator's current helper (not
 * @killed); returns that helper (0 when the run ended first or @timeout_s
 * passed). */
static pid_t wait_helper(pid_t coordinator, pid_t killed, bool (*pred)(pid_t), int timeout_s)
{
        int64_t deadline = now_ms() + timeout_s * 1000;
        while (now_ms() < deadline) {
                siginfo_t si = {0};
                if (waitid(P_PID, (id_t)coordinator, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
                    si.si_pid != 0)
                        return 0; /* the run ended */
                pid_t h = find_helper(coordinator, killed);
                if (h && (!pred || pred(h)))
                        return h;
                usleep(5000);
        }
        return 0;
}

static cJSON *read_stats(const char *out)
{
        char path[600];
        snprintf(path, sizeof(path), "%s/stats.json", out);
        size_t len;
        uint8_t *s = sf_read(path, &len);
        cJSON *j = s ? cJSON_ParseWithLength((const char *)s, len) : NULL;
        free(s);
        return j;
}

static double stat_num(const char *out, const char *key)
{
        cJSON *j = read_stats(out);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
        double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
        cJSON_Delete(j);
        return d;
}

static char *read_text(const char *dir, const char *name)
{
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        size_t len;
        uint8_t *s = sf_read(path, &len);
        cr_assert_not_null(s, "no %s", path);
        char *t = realloc(s, len + 1);
        t[len] = 0;
        return t;
}

static int count_of(const char *hay, const char *needle)
{
        int n = 0;
        for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
                n++;
        return n;
}

/* `snapfuzz reproduce` on the stored crash: it still crashes, as @kind. */
static void expect_reproduces(const char *out, const char *id, const char *kind)
{
        SfRun r;
        const char *args[] = {"reproduce", id, "--out", out, NULL};
        sf_run(&r, 120, args);
        cr_expect_eq(r.exit_code, 1, "reproduce should exit 1 (still crashes); stderr:\n%s", r.err);
        char want[64];
        snprintf(want, sizeof(want), "REPRODUCED: %s", kind);
        cr_expect(strstr(r.out, want), "reproduce output lacks '%s':\n%s", want, r.out);
        sf_run_free(&r);
}

Test(faults, a_helper_killed_while_it_verifies_a_hang_is_replaced_and_the_hang_stored,
     .timeout = 400)
{
        rng_init();
        char *dir = sf_tmpdir();
        uint8_t seed[SEED_LEN];
        write_seed(dir, seed);
        char seeds[512], out[512];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run", sf_target("magic6_hang"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--timeout",
                              "3",   "--seed",
                              "1",   "--max-total-time",
                              "200", "--status-every",
                              "1",   NULL};
        pid_t run = sf_start(dir, args);

        /* 1: as soon as there is a helper (before the first crash). */
        pid_t h = wait_helper(run, 0, NULL, 60);
        cr_assert_gt(h, 0, "no helper process (comm sf-recovery) under %d", (int)run);
        cr_assert_eq(kill(h, SIGKILL), 0);
        /* 2, 3: twice while it verifies the hang, the same job each time
         * (a job is lost only at its third death). */
        for (int i = 0; i < 2; i++) {
                pid_t v = wait_helper(run, h, helper_verifies_a_hang, 120);
                cr_assert_gt(v, 0, "kill %d: no helper verifying the hang", i + 2);
                cr_assert_neq(v, h, "a new helper");
                cr_assert_eq(kill(v, SIGKILL), 0);
                h = v;
        }
        int code = sf_wait(run, 240);
        char *err = read_text(dir, "stderr");
        cr_assert_eq(code, 1, "exit 1 (crash found), got %d; stderr:\n%s", code, err);
        cr_expect_eq(count_of(err, "starting a new one"), 3, "one line per death:\n%s", err);
        cr_expect_eq(count_of(err, "while it recovered a crash"), 2, "%s", err);
        cr_expect_eq(stat_num(out, "inputs_lost"), 0, "stderr:\n%s", err);
        cr_expect_eq(stat_num(out, "crashes"), 1);
        cr_expect_eq(stat_num(out, "helper_restarts"), 3);

        char *id = sf_only_crash(out);
        char path[700];
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *input = sf_read(path, &len);
        cr_assert_not_null(input);
        cr_expect_eq(len, SEED_LEN, "the stored input is the seed");
        cr_expect_arr_eq(input, seed, len < SEED_LEN ? len : SEED_LEN, "byte for byte");
        char *kind = sf_crash_field(out, id, "kind");
        cr_expect_str_eq(kind, "timeout");
        expect_reproduces(out, id, "timeout");
        free(kind);
        free(input);
        free(id);
        free(err);
        free(dir);
}

Test(faults, a_helper_that_dies_after_storing_a_crash_stores_it_once_as_new, .timeout = 300)
{
        rng_init();
        char *dir = sf_tmpdir();
        uint8_t seed[SEED_LEN];
        write_seed(dir, seed);
        char seeds[512], out[512];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {
            "run", sf_target("magic6"), seeds, "--out",           out,  "--workers", "1", "--seed",
            "1",   "--max-total-time",  "200", "--minimize-time", "60", NULL};
        /* The helper kills itself between the store and the answer. */
        setenv("SNAPFUZZ_HELPER_FAULT", "after-store", 1);
        pid_t run = sf_start(dir, args);
        unsetenv("SNAPFUZZ_HELPER_FAULT");
        int code = sf_wait(run, 240);
        char *err = read_text(dir, "stderr");
        cr_assert_eq(code, 1, "exit 1 (crash found), got %d; stderr:\n%s", code, err);
        cr_expect_eq(count_of(err, "while it recovered a crash"), 1, "%s", err);
        cr_expect_null(strstr(err, "seen before"), "the redo is not a second sighting:\n%s", err);
        cr_expect(strstr(err, "1 crash stored (1 new)"), "%s", err);
        cr_expect_eq(stat_num(out, "inputs_lost"), 0);
        cr_expect_eq(stat_num(out, "crashes"), 1);
        cr_expect_eq(stat_num(out, "unique_crashes"), 1);
        char *id = sf_only_crash(out);
        char *count = sf_crash_field(out, id, "count");
        cr_expect_str_eq(count, "1", "stored once");
        char path[700];
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *input = sf_read(path, &len);
        cr_assert_not_null(input);
        cr_expect_eq(len, SEED_LEN);
        cr_expect_arr_eq(input, seed, len < SEED_LEN ? len : SEED_LEN, "byte for byte");
        /* Minimized as a new crash is, by the helper that answered. */
        snprintf(path, sizeof(path), "%s/crashes/%s/minimized", out, id);
        struct stat st;
        cr_expect_eq(stat(path, &st), 0, "no %s", path);
        expect_reproduces(out, id, "abort");
        free(input);
        free(count);
        free(id);
        free(err);
        free(dir);
}

Test(faults, a_crash_no_helper_survives_is_counted_lost_once_and_the_run_exits_1, .timeout = 300)
{
        rng_init();
        char *dir = sf_tmpdir();
        uint8_t seed[SEED_LEN];
        write_seed(dir, seed);
        char seeds[512], out[512];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run", sf_target("magic6"), seeds, "--out",
                              out,   "--workers",         "1",   "--seed",
                              "1",   "--max-total-time",  "200", NULL};
        /* Every helper kills itself as a job starts. */
        setenv("SNAPFUZZ_HELPER_FAULT", "on-recover", 1);
        pid_t run = sf_start(dir, args);
        unsetenv("SNAPFUZZ_HELPER_FAULT");
        int code = sf_wait(run, 240);
        char *err = read_text(dir, "stderr");
        cr_assert_eq(code, 1, "a crash was found, even if lost: exit 1, got %d; stderr:\n%s", code,
                     err);
        cr_expect_eq(stat_num(out, "inputs_lost"), 1, "stderr:\n%s", err);
        cr_expect_eq(stat_num(out, "crashes"), 0);
        cr_expect_eq(stat_num(out, "helper_restarts"), 3);
        cr_expect_eq(count_of(err, "died 3 times while recovering it"), 1, "one line:\n%s", err);
        cr_expect(strstr(err, "1 crash could not be rebuilt"), "%s", err);
        cr_expect_null(strstr(err, "no crash found"), "%s", err);
        free(err);
        free(dir);
}

/* Waits until stats.json shows a helper that was started after the
 * @kills-th kill and that has answered since: crashes + inputs_lost above
 * what that helper's first snapshot shows. The first job a new helper gets
 * is the one its predecessor held, so each job dies at most once. False
 * after @timeout_s. */
static bool wait_answer_after_kill(const char *out, int kills, int timeout_s)
{
        int64_t deadline = now_ms() + timeout_s * 1000;
        double base = -1;
        while (now_ms() < deadline) {
                cJSON *j = read_stats(out);
                double restarts = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "helper_restarts"));
                double answered = cJSON_GetNumberValue(cJSON_GetObjectItem(j, "crashes")) +
                                  cJSON_GetNumberValue(cJSON_GetObjectItem(j, "inputs_lost"));
                cJSON_Delete(j);
                if (restarts >= kills && base < 0)
                        base = answered;
                else if (base >= 0 && answered > base)
                        return true;
                usleep(20000);
        }
        return false;
}

Test(faults, a_helper_killed_at_random_moments_loses_nothing, .timeout = 400)
{
        rng_init();
        char *dir = sf_tmpdir();
        uint8_t seed[SEED_LEN];
        write_seed(dir, seed);
        char seeds[512], out[512];
        snprintf(seeds, sizeof(seeds), "%s/seeds", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        /* Every mutation that keeps the needle aborts: a stream of deaths
         * for the helper to recover, while fuzzing goes on. */
        const char *args[] = {"run",
                              sf_target("magic6"),
                              seeds,
                              "--out",
                              out,
                              "--workers",
                              "1",
                              "--keep-going",
                              "--seed",
                              "1",
                              "--max-total-time",
                              "300",
                              "--status-every",
                              "1",
                              NULL};
        pid_t run = sf_start(dir, args);
        int kills = 0;
        pid_t last_killed = 0;
        double execs_at_first_kill = -1;
        /* The first kill at once, the next ones at random moments of the
         * work of a helper that has answered since the last one. */
        while (kills < 6) {
                if (kills && !wait_answer_after_kill(out, kills, 120))
                        break;
                usleep((useconds_t)(rnd() % 500) * 1000);
                pid_t h = wait_helper(run, last_killed, NULL, 30);
                if (!h)
                        break;
                if (kill(h, SIGKILL) == 0) {
                        kills++;
                        last_killed = h;
                }
                if (kills == 1)
                        execs_at_first_kill = stat_num(out, "execs");
        }
        /* Then Ctrl-C, once the last new helper has answered too. */
        bool answered = wait_answer_after_kill(out, kills, 120);
        kill(run, SIGINT);
        int code = sf_wait(run, 240);
        char *err = read_text(dir, "stderr");
        cr_assert_eq(kills, 6, "the run ended after %d kills; stderr:\n%s", kills, err);
        cr_expect(answered, "the last helper answered; stderr:\n%s", err);
        cr_assert_eq(code, 1, "exit 1 (crash found), got %d; stderr:\n%s", code, err);
        cr_expect_eq(stat_num(out, "inputs_lost"), 0, "stderr:\n%s", err);
        cr_expect_geq(stat_num(out, "helper_restarts"), kills);
        cr_expect_gt(stat_num(out, "crashes"), kills, "crashes were stored all along");
        cr_expect_gt(stat_num(out, "execs"), execs_at_first_kill, "and fuzzing went on");
        cr_expect_null(strstr(err, "could not be rebuilt"), "%s", err);

        char *id = sf_only_crash(out);
        char path[700];
        snprintf(path, sizeof(path), "%s/crashes/%s/input", out, id);
        size_t len;
        uint8_t *input = sf_read(path, &len);
        cr_assert_not_null(input);
        cr_expect(memmem(input, len, NEEDLE, 6), "the stored input holds the needle");
        int st = sf_plainrun(sf_target("magic6"), path, 30);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
                  "the stored input aborts an independent loader (status %d)", st);
        expect_reproduces(out, id, "abort");
        free(input);
        free(id);
        free(err);
        free(dir);
}
