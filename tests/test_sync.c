/*
 * AFL++-style sync directories (engine/sync.h), driven through the real
 * binary: instances that share a directory get each other's finds, a
 * restart does not read again what ran, and a sync directory that fails or
 * a peer that misbehaves costs a message, never the run.
 *
 * The target (tests/targets/sync_parts.c) has three parts behind three
 * 8-byte keys no fuzzer finds by itself within a test: an instance that
 * holds an input with a key it was not given got it from a peer.
 */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sfrun.h"

static const char KEY_A[] = "Kx9#Lm2!";
static const char KEY_B[] = "Zq4$Rt7&";
static const char KEY_C[] = "Hv8@Wj3%";

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put_file(const char *path, const void *data, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
        cr_assert_eq(write(fd, data, len), (ssize_t)len);
        close(fd);
}

static void mkdirs(const char *path)
{
        char buf[1024];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = 0;
                mkdir(buf, 0755);
                *p = '/';
        }
        cr_assert(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", buf, strerror(errno));
}

/* A directory holding one seed: @key followed by @tail. */
static void seed_dir(const char *dir, const char *key, const char *tail)
{
        char path[1024], data[64];
        mkdirs(dir);
        snprintf(path, sizeof(path), "%s/seed", dir);
        int n = snprintf(data, sizeof(data), "%s%s", key, tail);
        put_file(path, data, (size_t)n);
}

/* Whether a regular file in @dir, whose name contains @name_part (NULL:
 * any), starts with @key. */
static bool dir_has_key(const char *dir, const char *key, const char *name_part)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        bool found = false;
        if (!d)
                return false;
        while (!found && (e = readdir(d))) {
                char path[1024], head[8];
                if (e->d_name[0] == '.' || (name_part && !strstr(e->d_name, name_part)))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                int fd = open(path, O_RDONLY | O_NOFOLLOW);
                if (fd < 0)
                        continue;
                found = read(fd, head, 8) == 8 && memcmp(head, key, 8) == 0;
                close(fd);
        }
        closedir(d);
        return found;
}

static int count_names(const char *dir, const char *part)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;
        if (!d)
                return 0;
        while ((e = readdir(d)))
                n += e->d_name[0] != '.' && strstr(e->d_name, part) != NULL;
        closedir(d);
        return n;
}

static int count_of(const char *text, const char *needle)
{
        int n = 0;
        for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static char *read_text(const char *path)
{
        size_t len;
        char *t = (char *)sf_read(path, &len);
        return t ? t : strdup("");
}

static double stat_num(const char *out, const char *key)
{
        char path[1024];
        size_t len;
        snprintf(path, sizeof(path), "%s/stats.json", out);
        char *text = (char *)sf_read(path, &len);
        cr_assert_not_null(text, "%s", path);
        cJSON *j = cJSON_Parse(text);
        free(text);
        cr_assert_not_null(j);
        cJSON *v = cJSON_GetObjectItem(j, key);
        cr_assert(cJSON_IsNumber(v), "stats.json has no %s", key);
        double d = v->valuedouble;
        cJSON_Delete(j);
        return d;
}

/* `snapfuzz run sync_parts.so SEEDS --out OUT --sync-dir SD --name NAME`,
 * in the background, its output in LOG/{stdout,stderr}. */
static pid_t start_instance(const char *log, const char *seeds, const char *out, const char *sd,
                            const char *name, const char *secs)
{
        mkdirs(log);
        const char *args[] = {"run", sf_target("sync_parts"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--sync-dir",
                              sd,    "--name",
                              name,  "--sync-every",
                              "1",   "--max-total-time",
                              secs,  NULL};
        return sf_start(log, args);
}

static const char *find_afl_fuzz(void)
{
        static char path[1024];
        const char *env = getenv("PATH");
        char *dirs = strdup(env ? env : "/usr/bin:/bin");
        char *save = NULL;
        bool found = false;
        for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
                snprintf(path, sizeof(path), "%s/afl-fuzz", d);
                found = access(path, X_OK) == 0;
        }
        free(dirs);
        cr_assert(found, "afl-fuzz is not installed: scripts/setup.sh installs Debian's afl++");
        return path;
}

/* afl-fuzz -M NAME on the AFL++ build of the target, for @secs seconds. */
static pid_t start_afl(const char *log, const char *seeds, const char *sd, const char *name,
                       int secs)
{
        const char *afl = find_afl_fuzz();
        const char *bin = getenv("SF_AFL_TARGET_sync_parts");
        cr_assert(bin && access(bin, X_OK) == 0,
                  "the AFL++ build of sync_parts is missing: afl-clang-fast was not found when "
                  "the build was configured (scripts/setup.sh installs afl++)");
        char secs_s[16], path[1024];
        snprintf(secs_s, sizeof(secs_s), "%d", secs);
        mkdirs(log);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                setpgid(0, 0);
                snprintf(path, sizeof(path), "%s/afl.log", log);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                dup2(fd, 1);
                dup2(fd, 2);
                /* What afl-fuzz needs in a container, without a terminal,
                 * importing what is in the sync directory at start. */
                setenv("AFL_SKIP_CPUFREQ", "1", 1);
                setenv("AFL_NO_AFFINITY", "1", 1);
                setenv("AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES", "1", 1);
                setenv("AFL_NO_UI", "1", 1);
                setenv("AFL_IMPORT_FIRST", "1", 1);
                setenv("AFL_SYNC_TIME", "1", 1);
                setenv("AFL_FAST_CAL", "1", 1);
                setenv("AFL_NO_CRASH_README", "1", 1);
                execl(afl, "afl-fuzz", "-i", seeds, "-o", sd, "-M", name, "-V", secs_s, "--", bin,
                      (char *)NULL);
                _exit(127);
        }
        return pid;
}

/* Three instances on one sync directory: A (snapfuzz, seed with key A), B
 * (snapfuzz, key B), C (afl-fuzz -M, key C). Each ends up with the other
 * two keys, and C's queue has files synced from A and B. */
Test(sync, three_instances_share_finds, .timeout = 300)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], sb[600], sc[600], oa[600], ob[600], la[600], lb[600], lc[600];
        char qa[700], qb[700], qc[700], ca[700], cb[700];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(sb, sizeof(sb), "%s/sb", dir);
        snprintf(sc, sizeof(sc), "%s/sc", dir);
        snprintf(oa, sizeof(oa), "%s/oa", dir);
        snprintf(ob, sizeof(ob), "%s/ob", dir);
        snprintf(la, sizeof(la), "%s/la", dir);
        snprintf(lb, sizeof(lb), "%s/lb", dir);
        snprintf(lc, sizeof(lc), "%s/lc", dir);
        snprintf(qa, sizeof(qa), "%s/A/queue", sd);
        snprintf(qb, sizeof(qb), "%s/B/queue", sd);
        snprintf(qc, sizeof(qc), "%s/C/queue", sd);
        snprintf(ca, sizeof(ca), "%s/corpus", oa);
        snprintf(cb, sizeof(cb), "%s/corpus", ob);
        seed_dir(sa, KEY_A, "");
        seed_dir(sb, KEY_B, "");
        seed_dir(sc, KEY_C, "");
        find_afl_fuzz(); /* fail before anything starts when it is missing */

        double t0 = now_s();
        pid_t pa = start_instance(la, sa, oa, sd, "A", "120");
        pid_t pb = start_instance(lb, sb, ob, sd, "B", "120");
        /* afl-fuzz imports what is there when it starts (AFL_IMPORT_FIRST);
         * its next sync would be after a queue cycle or a minute. */
        double exp_a = 0, exp_b = 0;
        while (now_s() - t0 < 60 && !(exp_a && exp_b)) {
                if (!exp_a && dir_has_key(qa, KEY_A, NULL))
                        exp_a = now_s() - t0;
                if (!exp_b && dir_has_key(qb, KEY_B, NULL))
                        exp_b = now_s() - t0;
                usleep(50000);
        }
        cr_assert(exp_a && exp_b, "A and B export their seeds into %s", sd);
        double t_afl = now_s() - t0;
        pid_t pc = start_afl(lc, sc, sd, "C", 30);

        /* has[r][f]: when instance r first held instance f's key. */
        double has[3][3] = {{0}}, exp_c = 0;
        const char *keys[3] = {KEY_A, KEY_B, KEY_C};
        bool all = false;
        while (!all && now_s() - t0 < t_afl + 90) {
                if (!exp_c && dir_has_key(qc, KEY_C, NULL))
                        exp_c = now_s() - t0;
                all = true;
                for (int r = 0; r < 3; r++)
                        for (int f = 0; f < 3; f++) {
                                if (r == f || has[r][f])
                                        continue;
                                /* afl-fuzz names an import after the
                                 * instance it read it from: A's key may
                                 * come to it through B's queue. */
                                bool got = r == 0   ? dir_has_key(ca, keys[f], NULL)
                                           : r == 1 ? dir_has_key(cb, keys[f], NULL)
                                                    : dir_has_key(qc, keys[f], ",sync:");
                                if (got)
                                        has[r][f] = now_s() - t0;
                                all &= got;
                        }
                usleep(50000);
        }
        kill(pa, SIGINT);
        kill(pb, SIGINT);
        int rca = sf_wait(pa, 60), rcb = sf_wait(pb, 60);
        kill(-pc, SIGINT);
        int st;
        waitpid(pc, &st, 0);

        char path[700];
        snprintf(path, sizeof(path), "%s/stderr", la);
        char *ea = read_text(path);
        snprintf(path, sizeof(path), "%s/stderr", lb);
        char *eb = read_text(path);
        snprintf(path, sizeof(path), "%s/afl.log", lc);
        char *ec = read_text(path);
        const char *names = "ABC";
        for (int r = 0; r < 3; r++)
                for (int f = 0; f < 3; f++)
                        if (r != f)
                                cr_expect(has[r][f],
                                          "%c got %c's key; A:\n%.3000s\nB:\n%.3000s\nC:\n%.3000s",
                                          names[r], names[f], ea, eb, ec);
        cr_expect_eq(rca, 0, "%.3000s", ea);
        cr_expect_eq(rcb, 0, "%.3000s", eb);
        cr_expect_gt(count_names(qc, ",sync:A,") + count_names(qc, ",sync:B,"), 0);

        /* The figures (docs/scaling.md, the issue's closing note): when each
         * key first reached each instance, counted from when its finder
         * put it in its queue. */
        double exp[3] = {exp_a, exp_b, exp_c};
        fprintf(stderr, "sync figures (s since the test started; afl-fuzz started at %.1f):\n",
                t_afl);
        for (int r = 0; r < 3; r++)
                for (int f = 0; f < 3; f++)
                        if (r != f && has[r][f])
                                fprintf(stderr,
                                        "  %c has %c's key at %.1f (%.1f after %c exported it)\n",
                                        names[r], names[f], has[r][f], has[r][f] - exp[f],
                                        names[f]);
        const char *outs[2] = {oa, ob};
        for (int i = 0; i < 2; i++)
                fprintf(stderr,
                        "  %c: %.0f inputs taken from peers, %.0f added coverage, %.0f not run "
                        "(already here), %.0f exported\n",
                        names[i], stat_num(outs[i], "sync_imported"),
                        stat_num(outs[i], "sync_imported_kept"),
                        stat_num(outs[i], "sync_duplicates_skipped"),
                        stat_num(outs[i], "sync_exported"));
        fprintf(stderr, "  C (afl-fuzz): %d queue files synced from A, %d from B, %d in all\n",
                count_names(qc, ",sync:A,"), count_names(qc, ",sync:B,"), count_names(qc, "id:"));
        free(ea);
        free(eb);
        free(ec);
}

/* A peer in AFL++'s layout, made by hand: DIR/P/queue/id:NNNNNN,... */
static void peer_file(const char *sd, const char *peer, unsigned id, const char *data)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s/queue", sd, peer);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/%s/queue/id:%06u,orig:t", sd, peer, id);
        put_file(path, data, strlen(data));
        /* Written a while ago: complete (engine/sync.h, SYNC_SETTLE_MS). */
        struct timespec old[2] = {{.tv_sec = time(NULL) - 60}, {.tv_sec = time(NULL) - 60}};
        utimensat(AT_FDCWD, path, old, 0);
}

static void run_once(const char *dir, const char *seeds, const char *out, const char *sd,
                     const char *secs, SfRun *r)
{
        const char *args[] = {"run", sf_target("sync_parts"),
                              seeds, "--out",
                              out,   "--workers",
                              "1",   "--sync-dir",
                              sd,    "--name",
                              "A",   "--sync-every",
                              "1",   "--max-total-time",
                              secs,  NULL};
        (void)dir;
        sf_run(r, 120, args);
}

/* A restart reads only the peer's files that came after what ran: the
 * progress is in DIR/NAME/.synced/PEER, four bytes, as AFL++ keeps it. */
Test(sync, restart_does_not_read_again, .timeout = 180)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], out[600], path[700];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        seed_dir(sa, KEY_A, "");
        peer_file(sd, "P", 0, "Zq4$Rt7&x");
        peer_file(sd, "P", 1, "Hv8@Wj3%y");
        peer_file(sd, "P", 2, "no key here");

        SfRun r1;
        run_once(dir, sa, out, sd, "4", &r1);
        cr_assert_eq(r1.exit_code, 0, "%s", r1.err);
        cr_expect_eq(stat_num(out, "sync_imported"), 3, "%s", r1.err);
        snprintf(path, sizeof(path), "%s/corpus", out);
        cr_expect(dir_has_key(path, KEY_B, NULL));
        cr_expect(dir_has_key(path, KEY_C, NULL));
        size_t len;
        snprintf(path, sizeof(path), "%s/A/.synced/P", sd);
        uint8_t *progress = sf_read(path, &len);
        cr_assert_not_null(progress);
        uint32_t v;
        cr_assert_eq(len, 4);
        memcpy(&v, progress, 4);
        cr_expect_eq(v, 3, "the next id of P to read");
        free(progress);
        snprintf(path, sizeof(path), "%s/A/queue", sd);
        int queued = count_names(path, "id:");

        peer_file(sd, "P", 3, "Zq4$Rt7&\x80zz");
        SfRun r2;
        run_once(dir, sa, out, sd, "4", &r2);
        cr_assert_eq(r2.exit_code, 0, "%s", r2.err);
        cr_expect_eq(stat_num(out, "sync_imported"), 1, "only the new file: %s", r2.err);
        cr_expect_eq(stat_num(out, "sync_resumed_skipped"), 3);
        /* What the first run exported is not exported again. */
        cr_expect_eq(count_names(path, "id:"), queued + (int)stat_num(out, "sync_exported"));
        cr_expect_eq(stat_num(out, "sync_exported") <= 2, true,
                     "the second run exports its new finds only, not its resumed corpus");
        fprintf(stderr,
                "restart: first run read 3 files of P; the second skipped %.0f by .synced/P and "
                "read %.0f\n",
                stat_num(out, "sync_resumed_skipped"), stat_num(out, "sync_imported"));
        sf_run_free(&r1);
        sf_run_free(&r2);
}

/* A file a peer is still writing (afl-fuzz writes queue files in place) is
 * read once complete, not before: read half-written, its id would count
 * as done and the whole input never come. */
Test(sync, half_written_file_is_read_when_complete, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], out[600], q[700], path[800], log[700];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(log, sizeof(log), "%s/log", dir);
        snprintf(q, sizeof(q), "%s/P/queue", sd);
        seed_dir(sa, KEY_A, "");
        mkdirs(q);
        pid_t pa = start_instance(log, sa, out, sd, "A", "8");
        usleep(500000);
        /* The key, a byte every 300 ms: "Zq4$", "Zq4$R", ... */
        snprintf(path, sizeof(path), "%s/id:000000,orig:slow", q);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, KEY_B, 4), 4);
        for (int i = 4; i < 8; i++) {
                usleep(300000);
                cr_assert_eq(write(fd, KEY_B + i, 1), 1);
        }
        close(fd);
        int rc = sf_wait(pa, 60);
        snprintf(path, sizeof(path), "%s/stderr", log);
        char *err = read_text(path);
        cr_assert_eq(rc, 0, "%s", err);
        snprintf(path, sizeof(path), "%s/corpus", out);
        cr_expect(dir_has_key(path, KEY_B, NULL), "the complete file was imported:\n%s", err);
        free(err);
}

/* The sync directory goes away under a running instance and comes back:
 * one line when reading fails, one when it works again; fuzzing goes on,
 * and what the new directory holds is imported. */
Test(sync, vanished_sync_dir_is_said_once_and_retried, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], out[600], q[700], path[800], log[700], cmd[2000];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        snprintf(log, sizeof(log), "%s/log", dir);
        snprintf(q, sizeof(q), "%s/A/queue", sd);
        seed_dir(sa, KEY_A, "");
        pid_t pa = start_instance(log, sa, out, sd, "A", "12");
        double t0 = now_s();
        while (!dir_has_key(q, KEY_A, NULL) && now_s() - t0 < 30)
                usleep(50000);
        cr_assert(dir_has_key(q, KEY_A, NULL), "A exported its seed");
        /* Renamed away at once, as a mount that went away (removing it
         * could race with a write the instance has under way in it). */
        snprintf(cmd, sizeof(cmd), "mv '%s' '%s.gone'", sd, sd);
        cr_assert_eq(system(cmd), 0);
        sleep(4);
        peer_file(sd, "P", 0, "Zq4$Rt7&x");
        int rc = sf_wait(pa, 60);
        snprintf(path, sizeof(path), "%s/stderr", log);
        char *err = read_text(path);
        cr_assert_eq(rc, 0, "%s", err);
        cr_expect_eq(count_of(err, "cannot read the sync directory"), 1, "%s", err);
        cr_expect_eq(count_of(err, "can be read again"), 1, "%s", err);
        snprintf(path, sizeof(path), "%s/corpus", out);
        cr_expect(dir_has_key(path, KEY_B, NULL), "imported after the directory came back");
        /* A's new queue starts at id 0 again: an AFL++ peer finds it. */
        cr_expect_eq(count_names(q, "id:000000,"), 1, "%s", err);
        free(err);
}

/*
 * A full or read-only sync directory (a tmpfs in a mount namespace of the
 * test's own, unshare -m): one line, imports go on, exports are held and
 * written once the directory takes them again.
 */
static const char sync_fault_script[] =
    "set -u\n"
    "D=$1; B=$2; T=$3; MODE=$4\n"
    "mount --make-rprivate / && mount -t tmpfs -o size=16m tmpfs \"$D/sd\" || exit 99\n"
    "mkdir -p \"$D/sd/P/queue\" && printf 'Zq4$Rt7&x' >\"$D/sd/P/queue/id:000000,orig:p\"\n"
    "touch -d '1 minute ago' \"$D/sd/P/queue/id:000000,orig:p\"\n"
    "if [ \"$MODE\" = full ]; then dd if=/dev/zero of=\"$D/sd/fill\" bs=4k 2>/dev/null; "
    "else mount -o remount,ro \"$D/sd\" || exit 98; fi\n"
    "\"$B\" run \"$T\" \"$D/sa\" --out \"$D/out\" --workers 1 --sync-dir \"$D/sd\" --name A "
    "--sync-every 1 --max-total-time 9 >\"$D/stdout\" 2>\"$D/stderr\" &\n"
    "pid=$!\n"
    "sleep 4\n"
    "if [ \"$MODE\" = full ]; then rm -f \"$D/sd/fill\"; else mount -o remount,rw \"$D/sd\"; fi\n"
    "wait $pid; echo $? >\"$D/rc\"\n"
    "cp -r \"$D/sd/A/queue\" \"$D/queue\" 2>/dev/null\n"
    "exit 0\n";

static void sync_fault(const char *mode)
{
        char *dir = sf_tmpdir();
        char script[700], sd[700], sa[700], cmd[3000], path[800];
        snprintf(script, sizeof(script), "%s/fault.sh", dir);
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        mkdirs(sd);
        seed_dir(sa, KEY_A, "");
        put_file(script, sync_fault_script, strlen(sync_fault_script));
        snprintf(cmd, sizeof(cmd), "unshare -m --propagation unchanged sh '%s' '%s' '%s' '%s' %s",
                 script, dir, sf_env("SNAPFUZZ_BIN"), sf_target("sync_parts"), mode);
        int rc = system(cmd);
        if (WIFEXITED(rc) && WEXITSTATUS(rc) == 99)
                cr_skip_test("cannot make a private mount namespace here (not root, or a chroot "
                             "whose / is no mount point)");
        cr_assert_eq(rc, 0, "%s", cmd);
        snprintf(path, sizeof(path), "%s/stderr", dir);
        char *err = read_text(path);
        snprintf(path, sizeof(path), "%s/rc", dir);
        char *code = read_text(path);
        cr_expect_eq(atoi(code), 0, "%s", err);
        cr_expect_eq(count_of(err, "cannot write into the sync directory"), 1, "%s", err);
        cr_expect_eq(count_of(err, "can be written again"), 1, "%s", err);
        snprintf(path, sizeof(path), "%s/out/corpus", dir);
        cr_expect(dir_has_key(path, KEY_B, NULL), "imports go on while exports fail:\n%s", err);
        snprintf(path, sizeof(path), "%s/queue", dir);
        cr_expect(dir_has_key(path, KEY_A, NULL), "the held export was written:\n%s", err);
        cr_expect(dir_has_key(path, KEY_B, ",sync:P,"), "%s", err);
        cr_expect_eq(count_names(path, "id:000000,"), 1);
        free(err);
        free(code);
}

Test(sync, full_sync_dir_holds_exports, .timeout = 120)
{
        sync_fault("full");
}

Test(sync, read_only_sync_dir_holds_exports, .timeout = 120)
{
        sync_fault("ro");
}

/* A hostile peer: symbolic links (its directory, its queue, queue
 * entries), a FIFO, a huge file, a name with control characters, and a
 * damaged progress file. None is followed, read or printed raw; the run
 * ends as planned and the one good file is imported. */
Test(sync, hostile_peer_is_contained, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], out[600], path[900], secret[700], outside[700];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        seed_dir(sa, KEY_A, "");
        /* Key C is only ever outside the sync directory: if it shows up in
         * the corpus, a link was followed or a big file read. */
        snprintf(secret, sizeof(secret), "%s/secret", dir);
        put_file(secret, "Hv8@Wj3%secret", 14);
        snprintf(outside, sizeof(outside), "%s/outside", dir);
        peer_file(outside, "X", 0, "Hv8@Wj3%outside");

        snprintf(path, sizeof(path), "%s/P/queue", sd);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/P/queue/id:000000,link", sd);
        cr_assert_eq(symlink(secret, path), 0);
        snprintf(path, sizeof(path), "%s/P/queue/id:000001,fifo", sd);
        cr_assert_eq(mkfifo(path, 0644), 0);
        snprintf(path, sizeof(path), "%s/P/queue/id:000002,big", sd);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        cr_assert_eq(write(fd, KEY_C, 8), 8);
        cr_assert_eq(ftruncate(fd, 64 << 20), 0);
        close(fd);
        peer_file(sd, "P", 3, "Zq4$Rt7&ok");
        snprintf(path, sizeof(path), "%s/evil", sd);
        cr_assert_eq(symlink(outside, path), 0);
        snprintf(path, sizeof(path), "%s/Q", sd);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/Q/queue", sd);
        char target[800];
        snprintf(target, sizeof(target), "%s/X/queue", outside);
        cr_assert_eq(symlink(target, path), 0);
        snprintf(path, sizeof(path), "%s/E\x1b]0;pwned\x07vil/queue", sd);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/E\x1b]0;pwned\x07vil/queue/id:000000,x", sd);
        cr_assert_eq(symlink(secret, path), 0);
        /* A name too long for .synced/NAME's temporary name. */
        char longname[251];
        memset(longname, 'x', 250);
        longname[250] = 0;
        snprintf(path, sizeof(path), "%s/%s", sd, longname);
        mkdirs(path);
        peer_file(sd, longname, 0, "Hv8@Wj3%long");
        /* The progress of P, damaged: read from the start. */
        snprintf(path, sizeof(path), "%s/A/.synced", sd);
        mkdirs(path);
        snprintf(path, sizeof(path), "%s/A/.synced/P", sd);
        put_file(path, "garbage!!", 9);

        SfRun r;
        run_once(dir, sa, out, sd, "5", &r);
        cr_assert_eq(r.exit_code, 0, "%s", r.err);
        snprintf(path, sizeof(path), "%s/corpus", out);
        cr_expect(dir_has_key(path, KEY_B, NULL), "the good file after the bad ones:\n%s", r.err);
        cr_expect_not(dir_has_key(path, KEY_C, NULL), "nothing outside was read:\n%s", r.err);
        cr_expect_null(strchr(r.err, '\x1b'), "no escape reaches the terminal:\n%s", r.err);
        cr_expect_null(strchr(r.err, '\x07'), "%s", r.err);
        cr_expect(strstr(r.err, "E\\x1b]0;pwned\\x07vil"), "the name is shown escaped:\n%s", r.err);
        cr_expect_eq(count_of(r.err, "damaged"), 1, "%s", r.err);
        cr_expect_eq(count_of(r.err, "longer than 200 bytes"), 1, "%s", r.err);
        cr_expect_null(strstr(r.err, "cannot write"), "%s", r.err);
        cr_expect_eq(count_of(r.err, "longer than --max-len"), 1, "%s", r.err);
        cr_expect_eq(count_of(r.err, "instance evil is a symbolic link"), 1, "%s", r.err);
        cr_expect_eq(count_of(r.err, "instance Q's queue is a symbolic link"), 1, "%s", r.err);
        size_t len;
        snprintf(path, sizeof(path), "%s/A/.synced/P", sd);
        uint8_t *progress = sf_read(path, &len);
        cr_assert_not_null(progress);
        cr_expect_eq(len, 4, "the progress file is rewritten whole");
        free(progress);
        sf_run_free(&r);
}

/* The command line: --sync-dir needs a name; a name is a plain file name;
 * one live instance per name. */
Test(sync, usage_errors)
{
        char *dir = sf_tmpdir();
        char sd[600], out[600];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        SfRun r;
        const char *no_name[] = {"run", sf_target("sync_parts"), "--out", out, "--sync-dir", sd,
                                 NULL};
        sf_run(&r, 30, no_name);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, "--sync-dir needs --name"), "%s", r.err);
        sf_run_free(&r);
        const char *bad[] = {"../up", ".hidden", "a/b", "x\x1b[2J", ""};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const char *args[] = {"run",        sf_target("sync_parts"),
                                      "--out",      out,
                                      "--sync-dir", sd,
                                      "--name",     bad[i],
                                      NULL};
                sf_run(&r, 30, args);
                cr_expect_eq(r.exit_code, 2, "%s: %s", bad[i], r.err);
                cr_expect_null(strchr(r.err, '\x1b'), "%s", r.err);
                sf_run_free(&r);
        }
        const char *no_dir[] = {"run", sf_target("sync_parts"), "--out", out, "--name", "A", NULL};
        sf_run(&r, 30, no_dir);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        sf_run_free(&r);
}

Test(sync, one_instance_per_name, .timeout = 120)
{
        char *dir = sf_tmpdir();
        char sd[600], sa[600], o1[600], o2[600], log[600], lock[700];
        snprintf(sd, sizeof(sd), "%s/sd", dir);
        snprintf(sa, sizeof(sa), "%s/sa", dir);
        snprintf(o1, sizeof(o1), "%s/o1", dir);
        snprintf(o2, sizeof(o2), "%s/o2", dir);
        snprintf(log, sizeof(log), "%s/log", dir);
        snprintf(lock, sizeof(lock), "%s/A/.lock", sd);
        seed_dir(sa, KEY_A, "");
        pid_t p1 = start_instance(log, sa, o1, sd, "A", "10");
        double t0 = now_s();
        size_t len = 0;
        uint8_t *pid = NULL;
        while (now_s() - t0 < 30 && !((pid = sf_read(lock, &len)) && len > 0)) {
                free(pid);
                pid = NULL;
                usleep(50000);
        }
        cr_assert(len > 0, "the first instance holds %s", lock);
        free(pid);
        SfRun r;
        const char *args[] = {"run", sf_target("sync_parts"),
                              sa,    "--out",
                              o2,    "--workers",
                              "1",   "--sync-dir",
                              sd,    "--name",
                              "A",   "--max-total-time",
                              "3",   NULL};
        sf_run(&r, 60, args);
        cr_expect_eq(r.exit_code, 2, "%s", r.err);
        cr_expect(strstr(r.err, "another instance named A"), "%s", r.err);
        sf_run_free(&r);
        kill(p1, SIGINT);
        cr_expect_eq(sf_wait(p1, 30), 0);
}
