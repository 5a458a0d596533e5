/*
 * Conformance of a libFuzzer-compatible binary with what ClusterFuzz and
 * OSS-Fuzz rely on (docs/libfuzzer.md is the contract, with the sources it
 * was read from). Every test runs the binary with the exact command line
 * one of those tools uses and checks the output with that tool's own
 * rules, re-expressed here in POSIX regular expressions; each rule names
 * the file it comes from.
 *
 * The binaries under test come from the environment, so the same tests
 * run on real libFuzzer (suite lfcompat-ref: `clang -fsanitize=fuzzer`,
 * which proves the tests encode libFuzzer's behaviour) and on snapfuzz's
 * drop-in runtime:
 *   LFC_BIN        tests/lfcompat/lfc_target.c, no sanitizer
 *   LFC_BIN_ASAN   the same with AddressSanitizer
 *   LFC_BIN_BIG    a real-size harness (snapfuzz's dictionary parser)
 *   LFC_ENGINE     "libfuzzer" or "snapfuzz"
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lfcbucket.h"

/* ---- running a binary ------------------------------------------------ */

typedef struct LfcRun {
        int code;  /* exit status, or 128 + signal */
        char *out; /* stdout and stderr, interleaved as a driver sees them */
} LfcRun;

static const char *lfc_env(const char *name)
{
        const char *v = getenv(name);
        cr_assert(v && *v, "environment variable %s is not set (run with meson test)", name);
        return v;
}

static bool lfc_is_libfuzzer(void)
{
        return strcmp(lfc_env("LFC_ENGINE"), "libfuzzer") == 0;
}

static char *lfc_slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        if (!f)
                return NULL;
        size_t cap = 4096, len = 0;
        char *buf = malloc(cap + 1);
        size_t n;
        while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
                len += n;
                if (len == cap) {
                        cap *= 2;
                        buf = realloc(buf, cap + 1);
                }
        }
        fclose(f);
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return buf;
}

/* Runs @argv (argv[0] is the binary) in @cwd (NULL: the current one),
 * stdin from /dev/null, output to one file; kills it after @timeout_s and
 * fails the test then. */
static void lfc_run(LfcRun *r, const char *cwd, int timeout_s, const char *const *argv)
{
        char log[] = "/tmp/lfc-out-XXXXXX";
        int fd = mkstemp(log);
        cr_assert(fd >= 0);
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_RDONLY);
                dup2(devnull, 0);
                dup2(fd, 1);
                dup2(fd, 2);
                if (cwd && chdir(cwd) != 0)
                        _exit(126);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        close(fd);
        int status = 0;
        time_t deadline = time(NULL) + timeout_s;
        for (;;) {
                pid_t w = waitpid(pid, &status, WNOHANG);
                if (w == pid)
                        break;
                if (time(NULL) > deadline) {
                        kill(pid, SIGKILL);
                        waitpid(pid, &status, 0);
                        r->out = lfc_slurp(log, NULL);
                        unlink(log);
                        cr_assert_fail("%s did not finish within %d s; output:\n%s", argv[0],
                                       timeout_s, r->out ? r->out : "");
                }
                usleep(20 * 1000);
        }
        r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r->out = lfc_slurp(log, NULL);
        unlink(log);
        cr_assert_not_null(r->out);
}

/* argv from a NULL-terminated list of strings built by the caller. */
#define LFC_ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static char *lfc_tmpdir(void)
{
        char *d = strdup("/tmp/lfc-test-XXXXXX");
        cr_assert_not_null(mkdtemp(d));
        return d;
}

static char *lfc_path(const char *dir, const char *name)
{
        char *p = NULL;
        cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

static char *lfc_mkdir(const char *dir, const char *name)
{
        char *p = lfc_path(dir, name);
        cr_assert(mkdir(p, 0755) == 0, "mkdir %s: %s", p, strerror(errno));
        return p;
}

static char *lfc_write(const char *dir, const char *name, const void *data, size_t len)
{
        char *p = lfc_path(dir, name);
        FILE *f = fopen(p, "wb");
        cr_assert_not_null(f);
        cr_assert(fwrite(data, 1, len, f) == len);
        cr_assert(fclose(f) == 0);
        return p;
}

static int lfc_count_files(const char *dir)
{
        DIR *d = opendir(dir);
        cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

static char *lfc_arg(const char *fmt, ...)
{
        char *s = NULL;
        va_list ap;
        va_start(ap, fmt);
        cr_assert(vasprintf(&s, fmt, ap) > 0);
        va_end(ap);
        return s;
}

/* ---- the drivers' rules ---------------------------------------------- */

/* First match of extended regex @re on any line of @text (the line is
 * matched from its start, as Python's re.match does). Fills @m (up to 8
 * groups) and returns the line, or NULL. Groups index into the line. */
static const char *lfc_match_line(const char *text, const char *re, regmatch_t *m, char **line)
{
        regex_t rx;
        int rc = regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE);
        cr_assert(rc == 0, "bad regex %s", re);
        const char *p = text;
        const char *found = NULL;
        while (*p) {
                const char *e = strchr(p, '\n');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                char *l = strndup(p, len);
                regmatch_t mm[8];
                if (regexec(&rx, l, 8, mm, 0) == 0 && mm[0].rm_so == 0) {
                        if (m)
                                memcpy(m, mm, sizeof(mm));
                        *line = l;
                        found = p;
                        break;
                }
                free(l);
                p += len + (e ? 1 : 0);
        }
        regfree(&rx);
        return found;
}

static bool lfc_has_line(const char *text, const char *re)
{
        char *line = NULL;
        bool ok = lfc_match_line(text, re, NULL, &line) != NULL;
        free(line);
        return ok;
}

static char *lfc_group(const char *line, regmatch_t g)
{
        if (g.rm_so < 0)
                return strdup("");
        return strndup(line + g.rm_so, (size_t)(g.rm_eo - g.rm_so));
}

/* oss-fuzz infra/base-images/base-runner/bad_build_check, check_engine:
 * grep -Po "INFO: Loaded [[:digit:]]+ module.*\(.*(counters|guards)\):[[:space:]]+\K[[:digit:]]+"
 * Returns the edge count, -1 when the line is missing. */
static long lfc_edges_oss(const char *out)
{
        regmatch_t m[8];
        char *line = NULL;
        if (!lfc_match_line(out,
                            ".*INFO: Loaded [[:digit:]]+ module.*\\(.*(counters|guards)\\):"
                            "[[:space:]]+([[:digit:]]+)",
                            m, &line))
                return -1;
        char *n = lfc_group(line, m[2]);
        long v = atol(n);
        free(n);
        free(line);
        return v;
}

/* clusterfuzz bot/fuzzers/libFuzzer/stats.py LIBFUZZER_MODULES_LOADED_REGEX:
 * ^INFO:\s+Loaded\s+\d+\s+(modules|PC tables)\s+\((\d+)\s+.*\).* */
static long lfc_edges_cf(const char *out)
{
        regmatch_t m[8];
        char *line = NULL;
        if (!lfc_match_line(out,
                            "INFO:[[:space:]]+Loaded[[:space:]]+[0-9]+[[:space:]]+(modules|PC "
                            "tables)[[:space:]]+\\(([0-9]+)[[:space:]]+.*\\).*",
                            m, &line))
                return -1;
        char *n = lfc_group(line, m[2]);
        long v = atol(n);
        free(n);
        free(line);
        return v;
}

/* clusterfuzz bot/fuzzers/libfuzzer.py CRASH_TESTCASE_REGEX:
 * .*Test unit written to\s*(.*(crash|oom|timeout|leak)-.*)
 * Returns the testcase path ClusterFuzz would store, or NULL. */
static char *lfc_testcase_path(const char *out)
{
        regmatch_t m[8];
        char *line = NULL;
        if (!lfc_match_line(
                out, ".*Test unit written to[[:space:]]*(.*(crash|oom|timeout|leak)-.*)", m, &line))
                return NULL;
        char *p = lfc_group(line, m[1]);
        free(line);
        return p;
}

/* clusterfuzz bot/fuzzers/libfuzzer.py parse_log_stats:
 * stat::([A-Za-z_]+):\s*([^\s]+), values must be digits. Returns the
 * number of well-formed stat lines and checks @name is among them. */
static long lfc_stat(const char *out, const char *name)
{
        char *re = lfc_arg("stat::(%s):[[:space:]]*([^[:space:]]+)", name);
        regmatch_t m[8];
        char *line = NULL;
        long v = -1;
        if (lfc_match_line(out, re, m, &line)) {
                char *val = lfc_group(line, m[2]);
                cr_assert(strspn(val, "0123456789") == strlen(val) && *val,
                          "stat::%s is not a number: %s", name, val);
                v = atol(val);
                free(val);
                free(line);
        }
        free(re);
        return v;
}

/* clusterfuzz bot/fuzzers/libFuzzer/stats.py LIBFUZZER_CRASH_START_MARKER */
static bool lfc_has_crash_marker(const char *out)
{
        return lfc_has_line(out, ".*ERROR: (libFuzzer|.*Sanitizer):");
}

/* SHA-1 of a file's bytes, with sha1sum (coreutils), lower-case hex. */
static char *lfc_sha1(const char *path)
{
        char *cmd = lfc_arg("sha1sum '%s'", path);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        char buf[64] = {0};
        cr_assert(fread(buf, 1, 40, p) == 40);
        pclose(p);
        free(cmd);
        return strdup(buf);
}

static void lfc_free_run(LfcRun *r)
{
        free(r->out);
        r->out = NULL;
}

/* ---- OSS-Fuzz's build checks ----------------------------------------- */

/* bad_build_check check_engine and check_startup_crash: "$FUZZER --
 * -seed=1337 -runs=4" must print "Done 4 runs", and the Loaded line must
 * report at least THRESHOLD_FOR_NUMBER_OF_EDGES=100 edges. */
Test(lfcompat, bad_build_check_engine_and_startup)
{
        LfcRun r;
        const char *bin = lfc_env("LFC_BIN_BIG");
        lfc_run(&r, NULL, 120, LFC_ARGV(bin, "--", "-seed=1337", "-runs=4"));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        cr_assert(!lfc_has_line(r.out, ".*ERROR: no interesting inputs were found. Is the code "
                                       "instrumented"),
                  "%s", r.out);
        cr_assert(lfc_has_line(r.out, ".*Done 4 runs"), "no 'Done 4 runs':\n%s", r.out);
        long edges = lfc_edges_oss(r.out);
        cr_assert(edges >= 100, "bad_build_check reads %ld edges (needs >= 100):\n%s", edges,
                  r.out);
        cr_assert_eq(lfc_edges_cf(r.out), edges, "ClusterFuzz's edges_total differs:\n%s", r.out);
        cr_assert(lfc_has_line(r.out, "INFO: Seed: 1337"), "%s", r.out);
        lfc_free_run(&r);
}

/* test_all.py find_fuzz_targets: an executable ELF file containing the
 * bytes LLVMFuzzerTestOneInput; bad_build_check check_architecture:
 * x86-64 on this machine. ClusterFuzz engine.py
 * _is_multistep_merge_supported: the binary holds the text "fuzz target
 * overwrites its const input", or merges run in one step without stats. */
Test(lfcompat, test_all_finds_an_instrumented_executable)
{
        const char *bin = lfc_env("LFC_BIN");
        struct stat st;
        cr_assert(stat(bin, &st) == 0 && (st.st_mode & S_IXUSR));
        size_t len = 0;
        char *data = lfc_slurp(bin, &len);
        cr_assert_not_null(data);
        cr_assert(len > 20 && !memcmp(data, "\177ELF", 4), "not an ELF file");
        uint16_t machine;
        memcpy(&machine, data + 18, 2);
        cr_assert_eq(machine, 62, "not x86-64 (e_machine %u)", machine);
        cr_assert_not_null(memmem(data, len, "LLVMFuzzerTestOneInput", 22));
        const char *tok = "fuzz target overwrites its const input";
        cr_assert_not_null(memmem(data, len, tok, strlen(tok)),
                           "ClusterFuzz would fall back to a one-step merge");
        free(data);
}

/* run_fuzzer's command: "$OUT/$FUZZER -- $FUZZER_ARGS $* $CORPUS_DIR
 * $CUSTOM_LIBFUZZER_OPTIONS -dict=$FUZZER.dict < /dev/null": flags after
 * the corpus, the options file's flags last (last one wins). */
Test(lfcompat, run_fuzzer_command_line_with_options_and_dict)
{
        char *tmp = lfc_tmpdir();
        char *corpus = lfc_mkdir(tmp, "corpus");
        const char dict[] = "# tokens\nkw1=\"abc\"\n\"CRSH\"\n\"\\x41\\x42\"\n";
        char *dict_path = lfc_write(tmp, "lfc.dict", dict, sizeof(dict) - 1);
        char *dict_arg = lfc_arg("-dict=%s", dict_path);
        LfcRun r;
        lfc_run(&r, tmp, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "--", "-rss_limit_mb=2560", "-timeout=25",
                         "-seed=1337", "-runs=4", corpus, "-runs=6", "-max_len=64", dict_arg));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        cr_assert(lfc_has_line(r.out, "Done 6 runs"), "the later -runs=6 must win:\n%s", r.out);
        /* stats.py LIBFUZZER_LOG_DICTIONARY_REGEX: Dictionary: \d+ entries */
        cr_assert(lfc_has_line(r.out, ".*Dictionary: 3 entries"), "%s", r.out);
        lfc_free_run(&r);
}

/* engine.py DICT_PARSING_FAILED_REGEX: ParseDictionaryFile: error in line
 * (\d+), and a dictionary that cannot be read is an engine error (exit 1). */
Test(lfcompat, bad_dictionary_is_reported_with_its_line)
{
        char *tmp = lfc_tmpdir();
        const char dict[] = "\"ok\"\nthis is not a token\n";
        char *dict_arg = lfc_arg("-dict=%s", lfc_write(tmp, "bad.dict", dict, sizeof(dict) - 1));
        LfcRun r;
        lfc_run(&r, tmp, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=2", dict_arg));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(lfc_has_line(r.out, ".*ParseDictionaryFile: error in line 2"), "%s", r.out);
        lfc_free_run(&r);
}

/* ---- ClusterFuzz: reproduce ------------------------------------------ */

/* engine.py Engine.reproduce: "-timeout=T -rss_limit_mb=2560 -runs=100
 * TESTCASE". A crash must exit non-zero, with a report the stack parser
 * buckets and a frame in the harness. */
Test(lfcompat, reproduce_plain_crash_is_bucketed)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "SEGVxxxx", 8);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=20", "-rss_limit_mb=2560", "-runs=100", tc));
        cr_assert(r.code != 0 && r.code != 72 && r.code != 128 + SIGTERM,
                  "a crash must exit non-zero (got %d):\n%s", r.code, r.out);
        cr_assert(lfc_has_crash_marker(r.out), "no crash start marker:\n%s", r.out);
        LfcBucket b;
        bool fuzz_frame;
        lfc_bucket(r.out, &b, &fuzz_frame);
        cr_assert(!strcmp(b.type, "UNKNOWN WRITE") || !strcmp(b.type, "UNKNOWN") ||
                      !strcmp(b.type, "Fatal-signal"),
                  "bucketed as '%s':\n%s", b.type, r.out);
        cr_assert(fuzz_frame, "no '#N 0xADDR in LLVMFuzzerTestOneInput' frame:\n%s", r.out);
        cr_assert(lfc_has_line(r.out, "[[:space:]]*#[0-9]+ 0x[0-9a-f]+ in LLVMFuzzerTestOneInput "
                                      ".*lfc_target\\.c:[0-9]+(:[0-9]+)?"),
                  "the harness frame has no file:line:\n%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, reproduce_asan_report_is_the_sanitizers)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "HEAPxxxx", 8);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN_ASAN"), "-timeout=20", "-rss_limit_mb=2560", "-runs=100",
                         tc));
        cr_assert(r.code != 0, "exit 0:\n%s", r.out);
        LfcBucket b;
        bool fuzz_frame;
        lfc_bucket(r.out, &b, &fuzz_frame);
        cr_assert_str_eq(b.type, "Heap-buffer-overflow", "%s", r.out);
        cr_assert(b.nframes >= 1 && !strcmp(b.frames[0], "lfc_heap_overread"),
                  "state starts with '%s':\n%s", b.nframes ? b.frames[0] : "", r.out);
        cr_assert(lfc_has_line(r.out, "==[0-9]+==ERROR: AddressSanitizer: heap-buffer-overflow"),
                  "%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, reproduce_input_that_does_not_crash_exits_zero)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "abcdefgh", 8);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=20", "-rss_limit_mb=2560", "-runs=100", tc));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        cr_assert(!lfc_has_crash_marker(r.out), "%s", r.out);
        cr_assert_null(lfc_testcase_path(r.out), "reproducing must not write artifacts");
        lfc_free_run(&r);
}

/* A timeout while reproducing: "ERROR: libFuzzer: timeout" (constants.py
 * LIBFUZZER_TIMEOUT_REGEX), libFuzzer's timeout exit code 70. */
Test(lfcompat, reproduce_timeout)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "SLOW", 4);
        LfcRun r;
        lfc_run(&r, NULL, 60,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=1", "-rss_limit_mb=2560", "-runs=100", tc));
        cr_assert_eq(r.code, 70, "exit %d:\n%s", r.code, r.out);
        LfcBucket b;
        bool fuzz_frame;
        lfc_bucket(r.out, &b, &fuzz_frame);
        cr_assert_str_eq(b.type, "Timeout", "%s", r.out);
        lfc_free_run(&r);
}

/* ---- ClusterFuzz: fuzz ----------------------------------------------- */

/* libfuzzer.py LibFuzzerCommon.fuzz: "-timeout=25 -rss_limit_mb=2560
 * -artifact_prefix=R/ -max_total_time=N -print_final_stats=1 NEW CORPUS".
 * The crash's file is the one named by CRASH_TESTCASE_REGEX, in R/, named
 * crash-<sha1 of its bytes>, holding the crashing bytes. */
Test(lfcompat, fuzz_finds_crash_and_names_the_artifact)
{
        char *tmp = lfc_tmpdir();
        char *repro = lfc_mkdir(tmp, "repro");
        char *fresh = lfc_mkdir(tmp, "new");
        char *corpus = lfc_mkdir(tmp, "corpus");
        lfc_write(corpus, "seed1", "abcz", 4);
        lfc_write(corpus, "seed2", "SEGV", 4);
        char *prefix = lfc_arg("-artifact_prefix=%s/", repro);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=25", "-rss_limit_mb=2560", prefix,
                         "-max_total_time=30", "-print_final_stats=1", fresh, corpus));
        cr_assert(r.code != 0 && r.code != 72, "exit %d:\n%s", r.code, r.out);
        char *tc = lfc_testcase_path(r.out);
        cr_assert_not_null(tc, "no 'Test unit written to' line:\n%s", r.out);
        char *want_prefix = lfc_arg("%s/crash-", repro);
        cr_assert(!strncmp(tc, want_prefix, strlen(want_prefix)), "artifact %s", tc);
        size_t len = 0;
        char *bytes = lfc_slurp(tc, &len);
        cr_assert_not_null(bytes, "%s missing", tc);
        cr_assert(len >= 4 && !memcmp(bytes, "SEGV", 4), "artifact holds other bytes");
        char *sha = lfc_sha1(tc);
        cr_assert_str_eq(tc + strlen(want_prefix), sha, "name is not the sha1 of the bytes");
        cr_assert(lfc_stat(r.out, "number_of_executed_units") >= 1,
                  "-print_final_stats=1 prints the stats on a crash too:\n%s", r.out);
        lfc_free_run(&r);
}

/* The same run without a crash: exit 0, the engine's lines (INITED ...
 * DONE, "Done N runs"), the five stat:: lines, new units in NEW. */
Test(lfcompat, fuzz_without_crash_prints_stats)
{
        char *tmp = lfc_tmpdir();
        char *repro = lfc_mkdir(tmp, "repro");
        char *fresh = lfc_mkdir(tmp, "new");
        char *corpus = lfc_mkdir(tmp, "corpus");
        lfc_write(corpus, "seed1", "abzz", 4);
        char *prefix = lfc_arg("-artifact_prefix=%s/", repro);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=25", "-rss_limit_mb=2560", prefix,
                         "-max_total_time=3", "-print_final_stats=1", "-max_len=3", fresh, corpus));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        /* stats.py LIBFUZZER_LOG_START_INITED_REGEX and LIBFUZZER_LOG_LINE_REGEX */
        cr_assert(lfc_has_line(r.out, "#[0-9]+[[:space:]]+INITED[[:space:]]+.*"), "%s", r.out);
        cr_assert(lfc_has_line(r.out, "#[0-9]+[[:space:]]*(NEW|REDUCE|pulse|DONE)[[:space:]].*"),
                  "%s", r.out);
        cr_assert(lfc_has_line(r.out, "#[0-9]+[[:space:]]+DONE[[:space:]]+cov: [0-9]+ ft: [0-9]+ "
                                      "corp: [0-9]+/[0-9]+[bKM]?b?.*exec/s: [0-9]+ rss: "
                                      "[0-9]+Mb"),
                  "%s", r.out);
        cr_assert(lfc_has_line(r.out, "Done[[:space:]]+[0-9]+[[:space:]]+runs.*"), "%s", r.out);
        const char *names[] = {"number_of_executed_units", "average_exec_per_sec",
                               "new_units_added", "slowest_unit_time_sec", "peak_rss_mb"};
        for (int i = 0; i < 5; i++)
                cr_assert(lfc_stat(r.out, names[i]) >= 0, "no stat::%s:\n%s", names[i], r.out);
        cr_assert(lfc_stat(r.out, "number_of_executed_units") > 100, "%s", r.out);
        cr_assert(lfc_stat(r.out, "new_units_added") >= 1, "%s", r.out);
        cr_assert(lfc_count_files(fresh) >= 1, "new units go to the first corpus directory");
        cr_assert_eq(lfc_count_files(repro), 0);
        lfc_free_run(&r);
}

/* -exact_artifact_path overrides -artifact_prefix: the artifact is that
 * file, named so in the "Test unit written to" line. */
Test(lfcompat, exact_artifact_path)
{
        char *tmp = lfc_tmpdir();
        char *corpus = lfc_mkdir(tmp, "corpus");
        lfc_write(corpus, "seed", "ABRT", 4);
        char *exact = lfc_path(tmp, "the-crash");
        char *exact_arg = lfc_arg("-exact_artifact_path=%s", exact);
        char *prefix = lfc_arg("-artifact_prefix=%s/", tmp);
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), prefix, exact_arg, "-max_total_time=30", corpus));
        cr_assert(r.code != 0, "%s", r.out);
        cr_assert(lfc_has_line(r.out, ".*Test unit written to .*the-crash$"), "%s", r.out);
        size_t len = 0;
        char *bytes = lfc_slurp(exact, &len);
        cr_assert(bytes && len >= 4 && !memcmp(bytes, "ABRT", 4));
        lfc_free_run(&r);
}

/* -runs=0 over a seed directory runs the seeds and stops (OSS-Fuzz
 * check_seed_corpus: a crashing seed must make it exit non-zero). */
Test(lfcompat, runs0_runs_the_seeds_only)
{
        char *tmp = lfc_tmpdir();
        char *out = lfc_mkdir(tmp, "out");
        char *seeds = lfc_mkdir(tmp, "seeds");
        lfc_write(seeds, "a", "abcx", 4);
        lfc_write(seeds, "b", "zzzz", 4);
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=0", out, seeds));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        cr_assert(lfc_has_line(r.out, "#[0-9]+[[:space:]]+INITED"), "%s", r.out);
        cr_assert(lfc_has_line(r.out, "Done [0-9]+ runs"), "%s", r.out);
        lfc_free_run(&r);
        lfc_write(seeds, "c", "SEGV", 4);
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=0", out, seeds));
        cr_assert(r.code != 0, "a crashing seed must fail -runs=0:\n%s", r.out);
        lfc_free_run(&r);
}

/* ---- ClusterFuzz: merge ---------------------------------------------- */

/* engine.py _minimize_corpus_two_step: two -merge=1 runs sharing one
 * -merge_control_file, the second with the new units added; stats from
 * LIBFUZZER_MERGE_LOG_STATS_REGEX. */
static void lfc_merge_step(LfcRun *r, const char *prefix, const char *mcf, const char *out,
                           const char *a, const char *b)
{
        char *mcf_arg = lfc_arg("-merge_control_file=%s", mcf);
        const char *bin = lfc_env("LFC_BIN");
        if (b)
                lfc_run(r, NULL, 120,
                        LFC_ARGV(bin, "-timeout=25", "-rss_limit_mb=2560", "-merge=1", prefix,
                                 mcf_arg, out, a, b));
        else
                lfc_run(r, NULL, 120,
                        LFC_ARGV(bin, "-timeout=25", "-rss_limit_mb=2560", "-merge=1", prefix,
                                 mcf_arg, out, a));
        free(mcf_arg);
}

static void lfc_merge_stats(const char *out, long *features, long *edges)
{
        regmatch_t m[8];
        char *line = NULL;
        cr_assert_not_null(lfc_match_line(out,
                                          "MERGE-OUTER:[[:space:]]+[0-9]+[[:space:]]+new files "
                                          "with[[:space:]]+([0-9]+)[[:space:]]+new features "
                                          "added;[[:space:]]+([0-9]+)[[:space:]]+new coverage "
                                          "edges.*",
                                          m, &line),
                           "no MERGE-OUTER stats line:\n%s", out);
        char *f = lfc_group(line, m[1]);
        char *e = lfc_group(line, m[2]);
        *features = atol(f);
        *edges = atol(e);
        free(f);
        free(e);
        free(line);
}

Test(lfcompat, two_step_merge)
{
        char *tmp = lfc_tmpdir();
        char *mcfdir = lfc_mkdir(tmp, "mcf");
        char *mcf = lfc_path(mcfdir, "MCF");
        char *out = lfc_mkdir(tmp, "out");
        char *old = lfc_mkdir(tmp, "old");
        char *fresh = lfc_mkdir(tmp, "new");
        char *prefix = lfc_arg("-artifact_prefix=%s/", tmp);
        for (int i = 0; i < 6; i++) {
                char name[16], data[8];
                snprintf(name, sizeof(name), "o%d", i);
                snprintf(data, sizeof(data), "zz%d", i);
                lfc_write(old, name, data, strlen(data));
        }
        lfc_write(old, "abc", "abcx", 4);
        lfc_write(fresh, "abcd", "abcd", 4);
        lfc_write(fresh, "dup", "zz9", 3);
        LfcRun r;
        long f1, e1, f2, e2;
        lfc_merge_step(&r, prefix, mcf, out, old, NULL);
        /* Until the drop-in has -merge=1 (issue 16 item 4), it says so in
         * one line; the skip names it, and ends when the line does. */
        if (r.code == 1 && strstr(r.out, "-merge=1 is not supported"))
                cr_skip_test("the drop-in has no -merge=1 yet: %s", r.out);
        cr_assert_eq(r.code, 0, "step 1 exit %d:\n%s", r.code, r.out);
        lfc_merge_stats(r.out, &f1, &e1);
        int kept1 = lfc_count_files(out);
        cr_assert(kept1 >= 1 && kept1 < 7, "step 1 kept %d of 7", kept1);
        lfc_free_run(&r);
        /* ClusterFuzz recreates the output directory between the steps. */
        char *cmd = lfc_arg("rm -f '%s'/*", out);
        cr_assert_eq(system(cmd), 0);
        lfc_merge_step(&r, prefix, mcf, out, old, fresh);
        cr_assert_eq(r.code, 0, "step 2 exit %d:\n%s", r.code, r.out);
        lfc_merge_stats(r.out, &f2, &e2);
        cr_assert(f2 > f1 && e2 >= e1, "new units add coverage: %ld/%ld then %ld/%ld", f1, e1, f2,
                  e2);
        int kept2 = lfc_count_files(out);
        cr_assert(kept2 > kept1 && kept2 <= 9, "step 2 kept %d", kept2);
        char *abcd = lfc_path(out, "81fe8bfe87576c3ecb22426f8e57847382917acf");
        cr_assert_not_null(lfc_slurp(abcd, NULL), "the new unit is kept under its sha1 name");
        lfc_free_run(&r);
}

/* Merge with one directory: libFuzzer says it needs two and exits 0
 * without writing; a drop-in may instead refuse with one line, exit 1. */
Test(lfcompat, merge_with_one_directory)
{
        char *tmp = lfc_tmpdir();
        char *out = lfc_mkdir(tmp, "out");
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-merge=1", out));
        cr_assert(r.code == 0 || r.code == 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "two or more") || strstr(r.out, "merge"), "%s", r.out);
        cr_assert_eq(lfc_count_files(out), 0);
        lfc_free_run(&r);
}

/* ---- ClusterFuzz: minimize and cleanse ------------------------------- */

/* libfuzzer.py minimize_crash: "-timeout=25 -rss_limit_mb=2560
 * -max_total_time=M -exact_artifact_path=OUT -minimize_crash=1
 * -artifact_prefix=TMP/ TESTCASE". OUT must be smaller and still crash. */
Test(lfcompat, minimize_crash)
{
        char *tmp = lfc_tmpdir();
        char *work = lfc_mkdir(tmp, "minimize-workdir");
        const char crash[] = "CRSHBUG!some-padding-the-bug-does-not-need";
        char *tc = lfc_write(tmp, "testcase", crash, sizeof(crash) - 1);
        char *outp = lfc_path(tmp, "minimized");
        char *exact = lfc_arg("-exact_artifact_path=%s", outp);
        char *prefix = lfc_arg("-artifact_prefix=%s/", work);
        LfcRun r;
        /* ClusterFuzz passes -timeout=25; here 3: libFuzzer's minimizer can
         * reach the target's SLOW input (its dictionary has the word), and
         * each such step then waits out the whole timeout (25 s ones made
         * this test overrun its budget on real libFuzzer). */
        lfc_run(&r, NULL, 180,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=3", "-rss_limit_mb=2560",
                         "-max_total_time=5", exact, "-minimize_crash=1", prefix, tc));
        size_t len = 0;
        char *bytes = lfc_slurp(outp, &len);
        cr_assert_not_null(bytes, "no minimized file (exit %d):\n%s", r.code, r.out);
        /* Without a sanitizer's dedup token the minimizer may reach another
         * of the target's crashes; it must be smaller and crash. */
        cr_assert(len >= 4 && len < sizeof(crash) - 1, "minimized to %zu bytes", len);
        lfc_free_run(&r);
        /* As ClusterFuzz reproduces (-timeout=20): another crash the
         * minimizer reached may be the target's hang. */
        lfc_run(
            &r, NULL, 90,
            LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=20", "-rss_limit_mb=2560", "-runs=100", outp));
        cr_assert(r.code != 0, "the minimized input does not crash:\n%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, minimize_input_that_does_not_crash)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "harmless", 8);
        char *exact = lfc_arg("-exact_artifact_path=%s/min", tmp);
        LfcRun r;
        lfc_run(&r, NULL, 60,
                LFC_ARGV(lfc_env("LFC_BIN"), "-max_total_time=5", exact, "-minimize_crash=1", tc));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "did not crash"), "%s", r.out);
        lfc_free_run(&r);
}

/* libfuzzer.py cleanse_crash: "-cleanse_crash=1 -exact_artifact_path=OUT
 * -artifact_prefix=TMP/ TESTCASE": bytes the crash does not need become
 * ' ' or 0xff, the length is kept, the result still crashes. */
Test(lfcompat, cleanse_crash)
{
        char *tmp = lfc_tmpdir();
        char *work = lfc_mkdir(tmp, "cleanse-workdir");
        const char crash[] = "CRSHBUG!secretsecret";
        char *tc = lfc_write(tmp, "testcase", crash, sizeof(crash) - 1);
        char *outp = lfc_path(tmp, "cleansed");
        char *exact = lfc_arg("-exact_artifact_path=%s", outp);
        char *prefix = lfc_arg("-artifact_prefix=%s/", work);
        LfcRun r;
        lfc_run(&r, NULL, 180,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=25", "-rss_limit_mb=2560",
                         "-cleanse_crash=1", exact, prefix, tc));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        size_t len = 0;
        char *bytes = lfc_slurp(outp, &len);
        cr_assert_not_null(bytes, "no cleansed file:\n%s", r.out);
        cr_assert_eq(len, sizeof(crash) - 1);
        cr_assert(!memcmp(bytes, "CRSHBUG!", 8));
        for (size_t i = 8; i < len; i++)
                cr_assert(bytes[i] == ' ' || (unsigned char)bytes[i] == 0xff, "byte %zu kept: %c",
                          i, bytes[i]);
        lfc_free_run(&r);
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=100", outp));
        cr_assert(r.code != 0, "the cleansed input does not crash:\n%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, cleanse_without_exact_path_is_an_error)
{
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", "CRSHBUG!", 8);
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-cleanse_crash=1", tc));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "exact_artifact_path"), "%s", r.out);
        lfc_free_run(&r);
}

/* ---- bad input ------------------------------------------------------- */

/* Unknown flags are warned about and ignored; "--" and "--flag=x" are
 * ignored (run_fuzzer always passes "--"). */
Test(lfcompat, unknown_flags_are_warned_and_ignored)
{
        LfcRun r;
        lfc_run(&r, NULL, 60,
                LFC_ARGV(lfc_env("LFC_BIN"), "--", "-bogus_flag=1", "--runs=9", "-runs=3"));
        cr_assert_eq(r.code, 0, "exit %d:\n%s", r.code, r.out);
        cr_assert(lfc_has_line(r.out, ".*WARNING: .*-bogus_flag=1"), "%s", r.out);
        cr_assert(lfc_has_line(r.out, "Done 3 runs"), "%s", r.out);
        lfc_free_run(&r);
}

/* A flag with a bad value: libFuzzer reads the number's prefix (-runs=abc
 * is -runs=0); a drop-in may refuse it instead, one line, exit 1. */
Test(lfcompat, flag_with_bad_value)
{
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=abc"));
        if (r.code == 0) {
                cr_assert(lfc_has_line(r.out, "Done [0-9]+ runs"), "%s", r.out);
        } else {
                cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
                cr_assert(strstr(r.out, "-runs") && strstr(r.out, "abc"), "%s", r.out);
        }
        lfc_free_run(&r);
}

Test(lfcompat, corpus_directory_that_does_not_exist)
{
        char *tmp = lfc_tmpdir();
        char *missing = lfc_path(tmp, "no-such-dir");
        char *out = lfc_mkdir(tmp, "out");
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=2", missing));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "no-such-dir"), "the message names the directory:\n%s", r.out);
        lfc_free_run(&r);
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=2", out, missing));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "no-such-dir"), "%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, artifact_prefix_directory_that_does_not_exist)
{
        char *tmp = lfc_tmpdir();
        char *prefix = lfc_arg("-artifact_prefix=%s/none/", tmp);
        LfcRun r;
        lfc_run(&r, NULL, 60, LFC_ARGV(lfc_env("LFC_BIN"), "-runs=2", prefix));
        cr_assert_eq(r.code, 1, "exit %d:\n%s", r.code, r.out);
        cr_assert(strstr(r.out, "none"), "%s", r.out);
        lfc_free_run(&r);
}

/* ---- the sandbox (snapfuzz only) ------------------------------------- */

/* A blocked execve is a crash ClusterFuzz files as "Command injection"
 * (the extra-sanitizer line "===BUG DETECTED: Shell injection==="), an
 * open of a file the policy does not allow as "Arbitrary file open". */
static void lfc_sandbox_case(const char *input, const char *want_type)
{
        if (lfc_is_libfuzzer())
                cr_skip_test("libFuzzer has no sandbox");
        char *tmp = lfc_tmpdir();
        char *tc = lfc_write(tmp, "testcase", input, strlen(input));
        LfcRun r;
        lfc_run(&r, NULL, 120,
                LFC_ARGV(lfc_env("LFC_BIN"), "-timeout=20", "-rss_limit_mb=2560", "-runs=100", tc));
        cr_assert(r.code != 0, "a sandbox violation must exit non-zero:\n%s", r.out);
        LfcBucket b;
        bool fuzz_frame;
        lfc_bucket(r.out, &b, &fuzz_frame);
        cr_assert_str_eq(b.type, want_type, "%s", r.out);
        cr_assert(fuzz_frame, "no harness frame:\n%s", r.out);
        lfc_free_run(&r);
}

Test(lfcompat, sandbox_exec_is_command_injection)
{
        lfc_sandbox_case("EXECxxxx", "Command injection");
}

Test(lfcompat, sandbox_open_is_arbitrary_file_open)
{
        lfc_sandbox_case("OPENxxxx", "Arbitrary file open");
}
