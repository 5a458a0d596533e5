/*
 * The bad-input catalogue: every case is a command line (and the files it
 * names) a user, a script or someone else's crash directory can hand to
 * snapfuzz. Each must give exactly one line on stderr, starting
 * "snapfuzz: error:", saying what is wrong, and exit 2 — never a crash,
 * never an internal error, never a second line of noise.
 *
 * In the arguments, "@T" is a working target, "@D" a directory holding the
 * fixture files made below.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/sfrun.h"

typedef struct BadCase {
        const char *args[10];
        const char *needle; /* what the one line must say */
} BadCase;

static BadCase cases[] = {
    {{"run"}, "run needs a target"},
    {{"run", "/nonexistent.so"}, "cannot open the target"},
    {{"run", "/tmp"}, "the target is not a regular file"},
    {{"run", "@D/text"}, "not an ELF file"},
    {{"run", "@D/empty"}, "not an ELF file"},
    {{"run", "@T", "--workers", "0"}, "--workers takes a whole number from 1 to 256"},
    {{"run", "@T", "--workers", "999"}, "--workers takes a whole number from 1 to 256"},
    {{"run", "@T", "--timeout", "-1"}, "--timeout takes a number of seconds"},
    {{"run", "@T", "--timeout", "abc"}, "--timeout takes a number of seconds"},
    {{"run", "@T", "--max-len", "0"}, "--max-len takes a whole number"},
    {{"run", "@T", "--rss-limit-mb", "x"}, "--rss-limit-mb takes a whole number"},
    {{"run", "@T", "--malloc-limit-mb", "-1"}, "--malloc-limit-mb takes a whole number"},
    {{"run", "@T", "--seed", "nan"}, "--seed takes a whole number"},
    {{"run", "@T", "--max-total-time", "1e99"}, "--max-total-time takes a whole number"},
    {{"run", "@T", "--detect-leaks", "2"}, "--detect-leaks takes a whole number from 0 to 1"},
    {{"run", "@T", "--status-every", "0"}, "--status-every takes a whole number"},
    {{"run", "@T", "--minimize-time", "-1"}, "--minimize-time takes a number of seconds"},
    {{"run", "@T", "--runner-lifetime-ms", "x"}, "--runner-lifetime-ms takes a whole number"},
    {{"run", "@T", "--sandbox", "bogus"}, "--sandbox takes 'strict', 'log' or 'off'"},
    {{"run", "@T", "--sandbox-policy", "/nonexistent"}, "cannot read the sandbox policy"},
    {{"run", "@T", "--sandbox-policy", "@D/badpol.json"}, "not valid JSON"},
    {{"run", "@T", "--sandbox", "off", "--sandbox-policy", "@D/badpol.json"},
     "has no effect with --sandbox off"},
    {{"run", "@T", "--dict", "/nonexistent"}, "cannot read the dictionary"},
    {{"run", "@T", "@D", "@D/text"}, "corpus directories (to fuzz) or input files"},
    {{"run", "@T", "@D/missing-input"}, "no corpus directory or input file"},
    {{"merge", "@T", "@D"}, "merge needs a target, an output corpus and at least one input"},
    {{"merge", "@T", "@D/o", "@D/missing"}, "input directory"},
    {{"merge", "@T", "@D/text", "@D"}, "is not a directory"},
    {{"merge", "@T", "@D/o", "@D", "--timeout", "0"}, "--timeout takes a number of seconds"},
    {{"merge", "@T", "@D/o", "@D", "--control-file", "@D/text"}, "is not a merge control file"},
    {{"run", "@T", "--out", "@D/text"}, "cannot create the output directory"},
    {{"run", "@T", "--out"}, "--out needs a value"},
    {{"run", "@T", "--frobnicate"}, "unknown option --frobnicate"},
    {{"run", "@T", "--m", "3"}, "ambiguous option --m: it could be --max-total-time"},
    {{"run", "@T", "--max", "3"}, "ambiguous option --max"},
    {{"cflags", "--cc", "tcc"}, "--cc takes clang or gcc"},
    {{"cflags", "--sanitize", "thread"}, "--sanitize takes a comma-separated list"},
    {{"cflags", "extra"}, "cflags takes no operands"},
    {{"reproduce"}, "reproduce needs exactly one crash id"},
    {{"reproduce", "../../etc", "--out", "@D"}, "is not a crash id"},
    {{"reproduce", "0123456789abcdef", "--out", "/nonexistent"}, "no crash with id"},
    {{"minimize"}, "minimize needs exactly one crash id"},
    {{"minimize", "abc", "--max-time", "-3"}, "--max-time takes a number of seconds"},
    {{"crashes", "--out", "/nonexistent"}, "no output directory /nonexistent"},
    {{"status", "/nonexistent"}, "cannot open the output directory"},
    {{"status", "@D/camp"}, "is not a stats file"},
    {{"launch"}, "unknown command 'launch'"},
    {{"run", "@T", "--reproducible"}, "--reproducible needs --seed N and --workers 1"},
    {{"run", "@T", "--reproducible", "--seed", "1", "--workers", "2"}, "--reproducible needs"},
    {{"run", "@T", "--reproducible", "--no-reproducible", "--seed", "1", "--workers", "1"},
     "--reproducible and --no-reproducible contradict each other"},
};

/* Files the cases name, made once per test process. */
static void make_fixtures(const char *d)
{
        char path[600];
        struct {
                const char *name, *text;
        } files[] = {
            {"text", "hello\n"},
            {"empty", ""},
            {"badpol.json", "{bad json"},
            {"camp/stats.json", "nope"},
        };
        snprintf(path, sizeof(path), "%s/camp", d);
        cr_assert_eq(mkdir(path, 0755), 0);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", d, files[i].name);
                FILE *f = fopen(path, "w");
                cr_assert_not_null(f, "%s", path);
                fputs(files[i].text, f);
                fclose(f);
        }
}

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* The parameters are case numbers: a test runs in a process of its own,
 * where pointers into this one's data mean nothing. */
static int case_numbers[N_CASES];

ParameterizedTestParameters(badinput, one_line_and_exit_2)
{
        for (size_t i = 0; i < N_CASES; i++)
                case_numbers[i] = (int)i;
        return cr_make_param_array(int, case_numbers, N_CASES);
}

ParameterizedTest(int *number, badinput, one_line_and_exit_2, .timeout = 60)
{
        const BadCase *c = &cases[*number];
        char *dir = sf_tmpdir();
        make_fixtures(dir);
        char store[10][700];
        const char *args[11] = {0};
        char shown[2048] = "";
        for (int i = 0; i < 10 && c->args[i]; i++) {
                const char *a = c->args[i];
                if (strcmp(a, "@T") == 0)
                        snprintf(store[i], sizeof(store[i]), "%s", sf_target("recorder"));
                else if (strncmp(a, "@D", 2) == 0)
                        snprintf(store[i], sizeof(store[i]), "%s%s", dir, a + 2);
                else
                        snprintf(store[i], sizeof(store[i]), "%s", a);
                args[i] = store[i];
                strncat(shown, store[i], sizeof(shown) - strlen(shown) - 2);
                strncat(shown, " ", sizeof(shown) - strlen(shown) - 1);
        }
        SfRun r;
        sf_run(&r, 30, args);
        cr_expect_eq(r.exit_code, 2, "snapfuzz %s: exit %d; stderr:\n%s", shown, r.exit_code,
                     r.err);
        cr_expect(strncmp(r.err, "snapfuzz: error: ", 17) == 0, "snapfuzz %s:\n%s", shown, r.err);
        const char *nl = strchr(r.err, '\n');
        cr_expect(nl && nl[1] == '\0', "snapfuzz %s: one line, not:\n%s", shown, r.err);
        cr_expect(strstr(r.err, c->needle), "snapfuzz %s: the line says '%s':\n%s", shown,
                  c->needle, r.err);
        sf_run_free(&r);
}
