/*
 * The flags come from include/snapfuzz/target.h, where the hint for a
 * target without coverage and the refusal of an unknown callback take
 * them too, so all three name the same instrumentation. The compiler is
 * told by name: anything whose name has "clang" in it is clang, "gcc" or
 * "g++" is gcc (so `--cc "$CC"` works for /usr/bin/gcc-12 and
 * x86_64-linux-gnu-gcc). Sanitizers are added to clang's -fsanitize=
 * list, or as gcc's own -fsanitize=; a sanitizer runtime needs nothing
 * more: `snapfuzz run` preloads it (core/sanitizer.c).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "app/cflags_cmd.h"
#include "app/cliopt.h"
#include "core/log.h"
#include "snapfuzz/exitcode.h"
#include "snapfuzz/target.h"

#include "snapfuzz/banned.h"

static void help(void)
{
        printf("usage: snapfuzz cflags [--cc COMPILER] [--sanitize LIST]\n"
               "Print the compiler flags that build a harness for snapfuzz: the coverage\n"
               "instrumentation it gives feedback for, and -fPIC -shared. For the header\n"
               "(snapfuzz.h: the harness ABI), use pkg-config --cflags snapfuzz.\n"
               "  --cc COMPILER    clang (default) or gcc; a path or a versioned name\n"
               "                   (gcc-12, /usr/bin/clang-14) says which\n"
               "  --sanitize LIST  sanitizers to add, comma-separated (address,undefined)\n"
               "examples:\n"
               "  clang $(snapfuzz cflags) -o parser.so parser_fuzzer.c\n"
               "  gcc $(snapfuzz cflags --cc gcc) -o parser.so parser_fuzzer.c\n"
               "  clang $(snapfuzz cflags --sanitize address,undefined) -o parser.so fuzzer.c\n"
               "exit status: 0, or 2 for bad usage.\n");
}

/* Whether @cc names gcc (1), clang (0), or neither (-1). */
static int compiler_is_gcc(const char *cc)
{
        const char *base = strrchr(cc, '/');
        base = base ? base + 1 : cc;
        if (strstr(base, "clang"))
                return 0;
        if (strstr(base, "gcc") || strstr(base, "g++") || strcmp(base, "cc") == 0)
                return 1;
        return -1;
}

/* A comma-separated list of sanitizer names, each one we know. */
static bool sanitizers_ok(const char *list)
{
        char buf[256];
        snprintf(buf, sizeof(buf), "%s", list);
        char *save = NULL;
        for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save))
                if (strcmp(s, "address") != 0 && strcmp(s, "undefined") != 0 &&
                    strcmp(s, "leak") != 0)
                        return false;
        return list[0] && strlen(list) < sizeof(buf);
}

int cflags_cmd(int argc, char **argv)
{
        enum { OPT_CC = 1000, OPT_SANITIZE, OPT_HELP };
        static const struct option opts[] = {
            {"cc", required_argument, NULL, OPT_CC},
            {"sanitize", required_argument, NULL, OPT_SANITIZE},
            {"help", no_argument, NULL, OPT_HELP},
            {0},
        };
        const char *cc = "clang", *san = NULL;
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                switch (c) {
                case OPT_CC:
                        cc = optarg;
                        break;
                case OPT_SANITIZE:
                        san = optarg;
                        break;
                case 'h':
                case OPT_HELP:
                        help();
                        return SF_EXIT_OK;
                default:
                        return cliopt_bad_in(c, argv, opts, "cflags");
                }
        }
        if (argc - optind != 0) {
                log_error("cflags takes no operands: snapfuzz cflags [--cc COMPILER]");
                return SF_EXIT_USAGE;
        }
        int gcc = compiler_is_gcc(cc);
        if (gcc < 0) {
                log_error("--cc takes clang or gcc (or a name with one of them in it), not '%s'",
                          cc);
                return SF_EXIT_USAGE;
        }
        if (san && !sanitizers_ok(san)) {
                log_error("--sanitize takes a comma-separated list of address, undefined and "
                          "leak, not '%s'",
                          san);
                return SF_EXIT_USAGE;
        }
        if (gcc)
                printf("%s%s%s -fPIC -shared\n", TARGET_CFLAGS_GCC, san ? " -fsanitize=" : "",
                       san ? san : "");
        else if (san)
                printf("-fsanitize=%s,%s -fPIC -shared\n", san,
                       TARGET_CFLAGS_CLANG + strlen("-fsanitize="));
        else
                printf("%s -fPIC -shared\n", TARGET_CFLAGS_CLANG);
        return SF_EXIT_OK;
}
