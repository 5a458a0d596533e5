/*
 * `meson install` as a user gets it: the build is installed into a fresh
 * DESTDIR and the installed files are used from there. The installed
 * binary finds the installed malloc shim (an allocation over
 * --malloc-limit-mb is `oom`); a copy of the binary alone either finds it
 * (installed on this machine) or says in one line that the limit is not
 * enforced; the man page renders with groff and documents every command;
 * pkg-config --cflags gives the header, a harness that includes it builds
 * with `snapfuzz cflags` for clang and gcc and runs; the bash completion
 * completes commands, options and option values.
 *
 * The layout comes from the build (SF_PREFIX, SF_BINDIR, ... set by
 * tests/meson.build from meson's options), meson from SF_MESON.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/sfrun.h"

/* An installed file's path under @dest: @dir is one of meson's directory
 * options (relative to the prefix, or absolute). */
static char *installed(const char *dest, const char *dir_env, const char *name)
{
        const char *dir = sf_env(dir_env);
        char *p = malloc(4096);
        if (dir[0] == '/')
                snprintf(p, 4096, "%s%s/%s", dest, dir, name);
        else
                snprintf(p, 4096, "%s%s/%s/%s", dest, sf_env("SF_PREFIX"), dir, name);
        return p;
}

static bool exists(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Installs the build into a fresh DESTDIR, returned. */
static char *install(void)
{
        char *dest = malloc(1024), *out;
        snprintf(dest, 1024, "%s/dest", sf_tmpdir());
        int r = sf_shell(&out, "DESTDIR='%s' '%s' install -C '%s' --no-rebuild --quiet", dest,
                         sf_env("SF_MESON"), sf_env("SF_BUILD_ROOT"));
        cr_assert_eq(r, 0, "meson install failed (%d):\n%s", r, out);
        free(out);
        return dest;
}

Test(install, puts_every_file_where_the_layout_says, .timeout = 120)
{
        char *dest = install();
        struct {
                const char *dir, *name;
        } files[] = {
            {"SF_BINDIR", "snapfuzz"},
            {"SF_LIBDIR", "snapfuzz/libsnapfuzz-malloc.so"},
            {"SF_INCLUDEDIR", "snapfuzz/snapfuzz.h"},
            {"SF_LIBDIR", "pkgconfig/snapfuzz.pc"},
            {"SF_MANDIR", "man1/snapfuzz.1"},
            {"SF_COMPLETIONSDIR", "snapfuzz"},
        };
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char *p = installed(dest, files[i].dir, files[i].name);
                cr_expect(exists(p), "%s is installed", p);
                free(p);
        }
        free(dest);
}

/* Fuzzes deaths_malloc_limit (one 3 GiB allocation, never touched) with
 * @bin and --malloc-limit-mb 100 into @out_dir; returns what it printed,
 * the crash's kind in *@ret_kind ("" for none). */
static char *malloc_limit_run_in(const char *bin, const char *secs, const char *out_dir,
                                 char **ret_kind)
{
        char *out;
        int r = sf_shell(
            &out,
            "'%s' run '%s' --out '%s' --workers 1 --malloc-limit-mb 100 --max-total-time %s "
            "--no-minimize",
            bin, sf_target("deaths_malloc_limit"), out_dir, secs);
        *ret_kind = strdup("");
        if (r == 1) {
                char *id = sf_only_crash(out_dir);
                free(*ret_kind);
                *ret_kind = sf_crash_field(out_dir, id, "kind");
                free(id);
        }
        return out;
}

static char *malloc_limit_run(const char *bin, const char *secs, char **ret_kind)
{
        char out_dir[512];
        snprintf(out_dir, sizeof(out_dir), "%s/out", sf_tmpdir());
        return malloc_limit_run_in(bin, secs, out_dir, ret_kind);
}

/* The one line a binary without the shim says, with what still limits
 * memory, in @out. */
static void expect_not_enforced_line(const char *out)
{
        const char *w = strstr(out, "snapfuzz: warning: --malloc-limit-mb 100 is not "
                                    "enforced: libsnapfuzz-malloc.so is neither in ");
        cr_assert(w, "the copy says the limit is not enforced:\n%s", out);
        const char *rss = strstr(w, "only --rss-limit-mb 2048 limits");
        const char *eol = strchr(w, '\n');
        cr_expect(rss && eol && rss < eol, "in one line, with what still limits memory:\n%s", out);
}

Test(install, the_installed_binary_finds_the_malloc_shim, .timeout = 300)
{
        char *dest = install();
        char *bin = installed(dest, "SF_BINDIR", "snapfuzz"), *kind;
        char *out = malloc_limit_run(bin, "120", &kind);
        cr_expect_str_eq(kind, "oom", "an allocation over the limit is oom:\n%s", out);
        cr_expect_null(strstr(out, "not enforced"), "%s", out);
        free(out);
        free(kind);
        free(bin);
        free(dest);
}

Test(install, a_copied_binary_works_or_says_in_one_line_what_is_missing, .timeout = 300)
{
        char *dest = install();
        char *bin = installed(dest, "SF_BINDIR", "snapfuzz"), *kind, *out;
        char copy[1024];
        snprintf(copy, sizeof(copy), "%s/snapfuzz", sf_tmpdir());
        cr_assert_eq(sf_shell(&out, "cp '%s' '%s'", bin, copy), 0, "%s", out);
        free(out);
        char shim[4096];
        snprintf(shim, sizeof(shim), "%s/libsnapfuzz-malloc.so", sf_env("SF_SHIM_DIR"));
        bool installed_here = exists(shim);
        out = malloc_limit_run(copy, installed_here ? "120" : "5", &kind);
        if (installed_here) {
                cr_expect_str_eq(kind, "oom", "the copy finds %s:\n%s", shim, out);
        } else {
                /* What the allocation then becomes (nothing, or the
                 * timeout the issue reported) is what the line warns of. */
                expect_not_enforced_line(out);
        }
        free(out);
        free(kind);
        if (!installed_here) {
                /* Replaying an oom the installed binary found says the same. */
                char out_dir[512], *id;
                snprintf(out_dir, sizeof(out_dir), "%s/out", sf_tmpdir());
                out = malloc_limit_run_in(bin, "120", out_dir, &kind);
                cr_assert_str_eq(kind, "oom", "%s", out);
                free(out);
                free(kind);
                id = sf_only_crash(out_dir);
                sf_shell(&out, "'%s' reproduce %s --out '%s'", copy, id, out_dir);
                expect_not_enforced_line(out);
                free(out);
                free(id);
        }
        free(bin);
        free(dest);
}

Test(install, the_man_page_renders_and_documents_every_command, .timeout = 120)
{
        char *dest = install();
        char *page = installed(dest, "SF_MANDIR", "man1/snapfuzz.1"), *out, *help;
        int r = sf_shell(&out, "groff -man -Tutf8 -P-cbou -ww '%s'", page);
        cr_assert_eq(r, 0, "groff (scripts/setup.sh installs groff-base):\n%s", out);
        cr_expect(strstr(out, "SYNOPSIS") && strstr(out, "EXIT STATUS") && strstr(out, "FILES"),
                  "%s", out);
        cr_expect_null(strstr(out, "warning:"), "groff has no complaint:\n%s", out);
        /* Every command snapfuzz --help lists has its section, with its
         * options. */
        char *bin = installed(dest, "SF_BINDIR", "snapfuzz");
        cr_assert_eq(sf_shell(&help, "'%s' --help", bin), 0);
        const char *commands[] = {"run", "reproduce", "minimize", "crashes", "status", "cflags"};
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                char want[64];
                snprintf(want, sizeof(want), "snapfuzz %s", commands[i]);
                cr_expect(strstr(help, want), "--help lists %s", commands[i]);
                snprintf(want, sizeof(want), "SNAPFUZZ %s", commands[i]);
                for (char *c = want + 9; *c; c++)
                        *c = (char)(*c - 'a' + 'A');
                cr_expect(strstr(out, want), "the page has a section %s", want);
        }
        cr_expect(strstr(out, "--malloc-limit-mb MB") && strstr(out, "--require-coverage") &&
                      strstr(out, "--cc COMPILER"),
                  "options are listed:\n%s", out);
        free(help);
        free(bin);
        free(out);
        free(page);
        free(dest);
}

/* Builds a harness that includes <snapfuzz.h> with @cc, flags from
 * pkg-config and `snapfuzz cflags --cc @cc`, and fuzzes it briefly with
 * --require-coverage. */
static void harness_builds_with(const char *cc)
{
        char *dest = install();
        char *bin = installed(dest, "SF_BINDIR", "snapfuzz");
        char *pcdir = installed(dest, "SF_LIBDIR", "pkgconfig"), *out;
        char *dir = sf_tmpdir(), src[1024], so[1024];
        snprintf(src, sizeof(src), "%s/harness.c", dir);
        snprintf(so, sizeof(so), "%s/harness.so", dir);
        FILE *f = fopen(src, "w");
        cr_assert_not_null(f);
        fputs("#include <snapfuzz.h>\n"
              "int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)\n"
              "{\n"
              "        return size > 0 && data[0] == 'x' ? SNAPFUZZ_REJECT : 0;\n"
              "}\n"
              "size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,\n"
              "                               unsigned int seed)\n"
              "{\n"
              "        (void)seed;\n"
              "        return LLVMFuzzerMutate(data, size, max_size);\n"
              "}\n",
              f);
        fclose(f);
        char envs[4096];
        snprintf(envs, sizeof(envs), "PKG_CONFIG_PATH='%s' PKG_CONFIG_SYSROOT_DIR='%s'", pcdir,
                 dest);
        int r = sf_shell(&out, "%s pkg-config --cflags snapfuzz", envs);
        cr_assert_eq(r, 0, "pkg-config: %s", out);
        cr_expect(strstr(out, "-I") && strstr(out, dest), "the header's directory: %s", out);
        free(out);
        r = sf_shell(
            &out,
            "%s %s -Werror -Wall $(%s pkg-config --cflags snapfuzz) $('%s' cflags --cc %s) "
            "-o '%s' '%s'",
            envs, cc, envs, bin, cc, so, src);
        cr_assert_eq(r, 0, "%s builds the harness:\n%s", cc, out);
        free(out);
        r = sf_shell(&out,
                     "'%s' run '%s' --out '%s/out' --workers 1 --runs 3000 --require-coverage", bin,
                     so, dir);
        cr_expect_eq(r, 0, "the %s harness runs, with coverage:\n%s", cc, out);
        free(out);
        free(dir);
        free(pcdir);
        free(bin);
        free(dest);
}

Test(install, a_harness_builds_with_pkg_config_and_cflags_for_clang, .timeout = 120)
{
        harness_builds_with("clang");
}

Test(install, a_harness_builds_with_pkg_config_and_cflags_for_gcc, .timeout = 120)
{
        harness_builds_with("gcc");
}

/* What the installed completion offers for the words @words (the binary
 * first, the word being completed last). */
static char *complete(const char *dest, const char *words)
{
        char *file = installed(dest, "SF_COMPLETIONSDIR", "snapfuzz"), *out;
        char *bin = installed(dest, "SF_BINDIR", "snapfuzz");
        int r =
            sf_shell(&out,
                     "bash -c 'source \"%s\"; COMP_WORDS=(\"%s\" %s); "
                     "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _snapfuzz; echo \"${COMPREPLY[*]}\"'",
                     file, bin, words);
        cr_assert_eq(r, 0, "%s", out);
        free(bin);
        free(file);
        return out;
}

Test(install, the_bash_completion_completes_commands_options_and_values, .timeout = 60)
{
        char *dest = install();
        char *c = complete(dest, "rep");
        cr_expect_str_eq(c, "reproduce report\n");
        free(c);
        c = complete(dest, "\"\"");
        cr_expect(strstr(c, "run") && strstr(c, "minimize") && strstr(c, "cflags"), "%s", c);
        free(c);
        c = complete(dest, "run t.so --max-t");
        cr_expect_str_eq(c, "--max-total-time\n");
        free(c);
        c = complete(dest, "run t.so --require");
        cr_expect_str_eq(c, "--require-coverage\n");
        free(c);
        c = complete(dest, "run t.so --sandbox \"\"");
        cr_expect_str_eq(c, "strict log off\n");
        free(c);
        c = complete(dest, "cflags --cc g");
        cr_expect_str_eq(c, "gcc\n");
        free(c);
        free(dest);
}
