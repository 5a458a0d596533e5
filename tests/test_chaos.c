/*
 * Faults injected from outside, at random moments: the coordinator
 * SIGKILLed while it fuzzes, stores and minimizes crashes and writes
 * corpus files; workers SIGKILLed under a running campaign. After each
 * fault the output directory must hold nothing half-written (every
 * crash.json parses and names its input's exact bytes, every corpus file
 * is named by its content's hash), and the next run must resume from it.
 *
 * The target is deaths_soak (tests/deaths/deaths.c): a dozen kinds of
 * death picked by the input's first byte, so stores and minimizations
 * happen all the time. SF_CHAOS_SEED replays a run (the seed is printed);
 * SF_CHAOS_KILLS sets the number of coordinator kills (default 60).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
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

static unsigned chaos_seed(void)
{
        const char *s = getenv("SF_CHAOS_SEED");
        unsigned seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
        fprintf(stderr, "chaos: seed %u (replay with SF_CHAOS_SEED=%u)\n", seed, seed);
        return seed;
}

static cJSON *read_json(const char *path)
{
        size_t len;
        uint8_t *data = sf_read(path, &len);
        cJSON *j = cJSON_ParseWithLength((const char *)data, len);
        free(data);
        return j;
}

/* Every crash directory is whole: crash.json parses, names itself, and
 * its input's length and SHA-1 match the input file. */
static void check_crashes(const char *out, int *ret_n)
{
        char dir[700];
        snprintf(dir, sizeof(dir), "%s/crashes", out);
        DIR *d = opendir(dir);
        *ret_n = 0;
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char json[1200], input[1200], hex[41];
                snprintf(json, sizeof(json), "%s/%s/crash.json", dir, de->d_name);
                snprintf(input, sizeof(input), "%s/%s/input", dir, de->d_name);
                if (access(json, F_OK) != 0)
                        continue; /* a directory whose crash.json was never renamed in */
                cJSON *j = read_json(json);
                cr_assert_not_null(j, "%s does not parse", json);
                cJSON *id = cJSON_GetObjectItem(j, "id");
                cr_expect(cJSON_IsString(id) && strcmp(id->valuestring, de->d_name) == 0,
                          "%s names another id", json);
                cr_assert_eq(access(input, F_OK), 0, "%s has no input", json);
                size_t len;
                free(sf_read(input, &len));
                cJSON *want_len = cJSON_GetObjectItem(j, "input_len");
                cJSON *want_sha = cJSON_GetObjectItem(j, "input_sha1");
                cr_expect(cJSON_IsNumber(want_len) && (size_t)want_len->valuedouble == len,
                          "%s: input of %zu bytes", json, len);
                sf_sha1sum(input, hex);
                cr_expect(cJSON_IsString(want_sha) && strcmp(want_sha->valuestring, hex) == 0,
                          "%s: the input's SHA-1 is %s", json, hex);
                cJSON_Delete(j);
                (*ret_n)++;
        }
        closedir(d);
}

/* Every file under a final name in OUT/corpus is named by its content. */
static void check_corpus(const char *out)
{
        char dir[700];
        snprintf(dir, sizeof(dir), "%s/corpus", out);
        DIR *d = opendir(dir);
        if (!d)
                return;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                char path[1200], hex[41];
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                sf_sha1sum(path, hex);
                cr_expect_str_eq(de->d_name, hex, "%s holds other bytes", path);
        }
        closedir(d);
}

/* Waits until no process of the group @pgid is left (the workers and the
 * helper die with the coordinator, by PR_SET_PDEATHSIG). */
static void wait_group_gone(pid_t pgid)
{
        for (int i = 0; i < 500 && kill(-pgid, 0) == 0; i++)
                usleep(10000);
        cr_assert_neq(kill(-pgid, 0), 0, "processes of the killed run are still alive");
}

static void stats_parse(const char *out)
{
        char path[700];
        snprintf(path, sizeof(path), "%s/stats.json", out);
        if (access(path, F_OK) != 0)
                return;
        cJSON *j = read_json(path);
        cr_expect_not_null(j, "stats.json does not parse");
        cJSON_Delete(j);
}

Test(chaos, sigkill_of_the_coordinator_at_random_moments_leaves_a_resumable_directory,
     .timeout = 1200)
{
        unsigned seed = chaos_seed();
        const char *k = getenv("SF_CHAOS_KILLS");
        int kills = k ? atoi(k) : 60;
        char *dir = sf_tmpdir();
        char out[512];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {
            "run",          sf_target("deaths_soak"), "--out", out,         "--workers", "2",
            "--keep-going", "--rss-limit-mb",         "300",   "--timeout", "0.3",       NULL};
        srand(seed);
        int crashes = 0;
        for (int i = 0; i < kills; i++) {
                pid_t pid = sf_start(dir, args);
                usleep((useconds_t)(150000 + rand() % 2500000));
                kill(pid, SIGKILL);
                int st;
                waitpid(pid, &st, 0);
                wait_group_gone(pid);
                check_crashes(out, &crashes);
                check_corpus(out);
                stats_parse(out);
        }
        fprintf(stderr, "chaos: %d coordinator kills, %d crashes stored\n", kills, crashes);
        cr_expect_gt(crashes, 0, "crashes were stored between the kills");

        /* The next run resumes, and every stored crash is a record that
         * reproduce accepts (exit 0 or 1, never 2 for a corrupt record). */
        SfRun r;
        const char *again[] = {
            "run", sf_target("deaths_soak"), "--out", out, "--runs", "2000", "--workers", "1",
            NULL};
        sf_run(&r, 120, again);
        cr_expect(strstr(r.err, "resumed from"), "%s", r.err);
        cr_expect(r.exit_code == 0 || r.exit_code == 1, "exit %d; stderr:\n%s", r.exit_code, r.err);
        sf_run_free(&r);
        char cdir[700];
        snprintf(cdir, sizeof(cdir), "%s/crashes", out);
        DIR *d = opendir(cdir);
        struct dirent *de;
        int checked = 0;
        while (d && (de = readdir(d)) && checked < 12) {
                if (de->d_name[0] == '.')
                        continue;
                const char *rep[] = {"reproduce", de->d_name, "--out", out, NULL};
                sf_run(&r, 120, rep);
                cr_expect(r.exit_code == 0 || r.exit_code == 1,
                          "reproduce %s: exit %d; stderr:\n%s", de->d_name, r.exit_code, r.err);
                sf_run_free(&r);
                checked++;
        }
        if (d)
                closedir(d);
}

/* The pids of the coordinator's `snapfuzz __worker` children. */
static int worker_pids(pid_t coordinator, pid_t *pids, int cap)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)coordinator,
                 (int)coordinator);
        FILE *f = fopen(path, "r");
        int n = 0;
        long p;
        while (f && n < cap && fscanf(f, "%ld", &p) == 1) {
                char cmd[64], buf[256] = {0};
                snprintf(cmd, sizeof(cmd), "/proc/%ld/cmdline", p);
                FILE *c = fopen(cmd, "r");
                if (!c)
                        continue;
                size_t got = fread(buf, 1, sizeof(buf) - 1, c);
                fclose(c);
                /* argv[1] follows argv[0]'s NUL. */
                size_t a0 = strnlen(buf, got);
                if (a0 + 1 < got && strcmp(buf + a0 + 1, "__worker") == 0)
                        pids[n++] = (pid_t)p;
        }
        if (f)
                fclose(f);
        return n;
}

Test(chaos, workers_sigkilled_under_a_campaign_are_replaced_and_nothing_is_lost, .timeout = 600)
{
        unsigned seed = chaos_seed();
        char *dir = sf_tmpdir();
        char out[512], path[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run",          sf_target("deaths_soak"),
                              "--out",        out,
                              "--workers",    "2",
                              "--keep-going", "--rss-limit-mb",
                              "300",          "--timeout",
                              "0.3",          "--max-total-time",
                              "40",           NULL};
        srand(seed);
        pid_t pid = sf_start(dir, args);
        int kills = 0;
        sleep(2);
        for (int i = 0; i < 400 && kills < 40; i++) {
                pid_t w[8];
                int n = worker_pids(pid, w, 8);
                if (n > 0 && kill(w[rand() % n], SIGKILL) == 0)
                        kills++;
                usleep((useconds_t)(200000 + rand() % 500000));
                if (waitpid(pid, NULL, WNOHANG) == pid)
                        cr_assert_fail("the campaign ended after %d worker kills", kills);
        }
        int code = sf_wait(pid, 120);
        fprintf(stderr, "chaos: %d worker kills\n", kills);
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        cr_expect_geq(kills, 30, "workers were killed (%d)", kills);
        cr_expect_eq(code, 1, "the campaign went on and stored crashes; stderr:\n%.3000s", err);
        int crashes;
        check_crashes(out, &crashes);
        check_corpus(out);
        cr_expect_gt(crashes, 0);
        snprintf(path, sizeof(path), "%s/stats.json", out);
        cJSON *st = read_json(path);
        cr_assert_not_null(st);
        cr_expect_eq(cJSON_GetObjectItem(st, "inputs_lost")->valuedouble, 0,
                     "no crash lost; stderr:\n%.3000s", err);
        cJSON_Delete(st);
        free(err);
}

/*
 * The output directory fails under a running campaign: a tmpfs that fills
 * up, or a mount made read-only a few seconds in. Done in a mount
 * namespace of its own (unshare -m), so nothing outside the test sees the
 * mounts. Every crash found must end stored, in OUT or in the rescue
 * directory the run names ($TMPDIR/snapfuzz-rescue-<pid>), and none lost.
 */
static const char outdir_fault_script[] =
    "set -u\n"
    "D=$1; B=$2; T=$3; SIZE=$4; RO_AFTER=$5\n"
    "mount --make-rprivate / && mount -t tmpfs -o size=$SIZE tmpfs \"$D/out\" || exit 99\n"
    "export TMPDIR=$D\n"
    "\"$B\" run \"$T\" --out \"$D/out\" --workers 2 --keep-going --rss-limit-mb 300 "
    "--timeout 0.3 --max-total-time 12 >\"$D/stdout\" 2>\"$D/stderr\" &\n"
    "pid=$!\n"
    "if [ \"$RO_AFTER\" -gt 0 ]; then sleep \"$RO_AFTER\"; mount --bind \"$D/out\" \"$D/out\" "
    "&& mount -o remount,bind,ro \"$D/out\" || echo remount-failed >\"$D/remount\"; fi\n"
    "wait $pid; echo $? >\"$D/rc\"\n"
    "ls \"$D/out/crashes\" 2>/dev/null | wc -l >\"$D/out_crashes\"\n";

static int read_int_file(const char *dir, const char *name)
{
        char path[700];
        size_t len;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        char *text = (char *)sf_read(path, &len);
        int v = atoi(text);
        free(text);
        return v;
}

static void outdir_fault(const char *size, int ro_after)
{
        char *dir = sf_tmpdir();
        char script[700], out[600], cmd[2400], path[700];
        snprintf(script, sizeof(script), "%s/fault.sh", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        cr_assert_eq(mkdir(out, 0755), 0);
        FILE *f = fopen(script, "w");
        cr_assert_not_null(f);
        fputs(outdir_fault_script, f);
        fclose(f);
        /* --propagation unchanged: the script makes the namespace private
         * itself, and skips (exit 99) where it cannot (a chroot, whose /
         * is no mount point). */
        snprintf(cmd, sizeof(cmd),
                 "unshare -m --propagation unchanged sh '%s' '%s' '%s' '%s' %s %d", script, dir,
                 sf_env("SNAPFUZZ_BIN"), sf_target("deaths_soak"), size, ro_after);
        int rc = system(cmd);
        if (WIFEXITED(rc) && WEXITSTATUS(rc) == 99)
                cr_skip_test("cannot make a private mount namespace here (not root, or a chroot "
                             "whose / is no mount point)");
        cr_assert_eq(rc, 0, "%s", cmd);
        snprintf(path, sizeof(path), "%s/remount", dir);
        cr_assert_neq(access(path, F_OK), 0, "the read-only remount failed");
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        int code = read_int_file(dir, "rc");
        int in_out = read_int_file(dir, "out_crashes");
        char rescue[700];
        snprintf(rescue, sizeof(rescue), "%s/snapfuzz-rescue-", dir);
        cr_expect_eq(code, 1, "crashes were found; stderr:\n%.4000s", err);
        cr_expect_null(strstr(err, "could not be rebuilt or written"), "%.4000s", err);
        cr_expect_null(strstr(err, "nothing can be written"), "%.4000s", err);
        cr_expect_null(strstr(err, "are lost"), "%.4000s", err);
        cr_expect(strstr(err, rescue), "the rescue directory is named:\n%.4000s", err);
        cr_expect_gt(in_out, 0, "crashes from before the fault are in OUT");
        fprintf(stderr, "outdir fault (%s, read-only after %d s): %d crash ids in OUT\n", size,
                ro_after, in_out);
        free(err);
}

Test(chaos, a_full_output_directory_loses_no_crash, .timeout = 600)
{
        outdir_fault("600k", 0);
}

Test(chaos, an_output_directory_made_read_only_mid_run_loses_no_crash, .timeout = 600)
{
        outdir_fault("50m", 3);
}

/* The recovery helper's process: the coordinator's child named
 * sf-recovery (engine/helperq.c). 0 when there is none yet. */
static pid_t helper_pid_of(pid_t coordinator)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)coordinator,
                 (int)coordinator);
        FILE *f = fopen(path, "r");
        long p;
        pid_t found = 0;
        while (f && !found && fscanf(f, "%ld", &p) == 1) {
                char comm[64], name[32] = "";
                snprintf(comm, sizeof(comm), "/proc/%ld/comm", p);
                FILE *c = fopen(comm, "r");
                if (c && fgets(name, sizeof(name), c) && strncmp(name, "sf-recovery", 11) == 0)
                        found = (pid_t)p;
                if (c)
                        fclose(c);
        }
        if (f)
                fclose(f);
        return found;
}

/* The helper's verification worker, SIGKILLed again and again while the
 * campaign stores crashes: each crash is still stored (a verification
 * that cannot finish says "did not reproduce", it does not lose the
 * input), and the campaign goes on. */
Test(chaos, the_verification_worker_sigkilled_loses_nothing, .timeout = 600)
{
        unsigned seed = chaos_seed();
        char *dir = sf_tmpdir();
        char out[512], path[700];
        snprintf(out, sizeof(out), "%s/out", dir);
        const char *args[] = {"run",          sf_target("deaths_soak"),
                              "--out",        out,
                              "--workers",    "1",
                              "--keep-going", "--rss-limit-mb",
                              "300",          "--timeout",
                              "0.3",          "--max-total-time",
                              "30",           NULL};
        srand(seed);
        pid_t pid = sf_start(dir, args);
        int kills = 0;
        sleep(2);
        for (int i = 0; i < 300 && kills < 20; i++) {
                pid_t helper = helper_pid_of(pid);
                pid_t v[4];
                int n = helper ? worker_pids(helper, v, 4) : 0;
                if (n > 0 && kill(v[rand() % n], SIGKILL) == 0)
                        kills++;
                usleep((useconds_t)(100000 + rand() % 400000));
                if (waitpid(pid, NULL, WNOHANG) == pid)
                        break;
        }
        int code = sf_wait(pid, 120);
        fprintf(stderr, "chaos: %d verification worker kills\n", kills);
        size_t len;
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = (char *)sf_read(path, &len);
        cr_expect_geq(kills, 10, "verification workers were killed (%d)", kills);
        cr_expect_eq(code, 1, "stderr:\n%.3000s", err);
        int crashes;
        check_crashes(out, &crashes);
        cr_expect_gt(crashes, 0);
        snprintf(path, sizeof(path), "%s/stats.json", out);
        cJSON *st = read_json(path);
        cr_assert_not_null(st);
        cr_expect_eq(cJSON_GetObjectItem(st, "inputs_lost")->valuedouble, 0, "stderr:\n%.3000s",
                     err);
        cJSON_Delete(st);
        free(err);
}
