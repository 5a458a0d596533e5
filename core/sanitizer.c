/*
 * The dynamic section is read with pread(2) through the program headers, so
 * a target of any size costs a few small reads. A runtime is searched where
 * the target says (DT_RUNPATH/DT_RPATH, with $ORIGIN), then where clang and
 * gcc install them; a gcc runtime (libasan.so.N) is left to the dynamic
 * loader's default search.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sanitizer.h"

#include "snapfuzz/banned.h"

#define SAN_MAX_NEEDED 64

typedef struct DynInfo {
        char needed[SAN_MAX_NEEDED][128];
        int n_needed;
        char runpath[1024];
        /* Sanitizer entry points the target calls but does not define
         * (built with the default static runtime, which a shared object
         * leaves to the executable): SAN_* bits. */
        unsigned undefined;
} DynInfo;

enum {
        SAN_UNDEF_ASAN = 1u << 0,
        SAN_UNDEF_UBSAN = 1u << 1,
        SAN_UNDEF_MSAN = 1u << 2,
        SAN_UNDEF_TSAN = 1u << 3,
        SAN_UNDEF_HWASAN = 1u << 4,
};

static int read_at(int fd, void *buf, size_t len, off_t off)
{
        ssize_t n = pread(fd, buf, len, off);
        return n == (ssize_t)len ? 0 : -EIO;
}

/* File offset of a virtual address, through the PT_LOAD segments. */
static off_t vaddr_to_off(const Elf64_Phdr *ph, int n, Elf64_Addr a)
{
        for (int i = 0; i < n; i++)
                if (ph[i].p_type == PT_LOAD && a >= ph[i].p_vaddr &&
                    a < ph[i].p_vaddr + ph[i].p_filesz)
                        return (off_t)(a - ph[i].p_vaddr + ph[i].p_offset);
        return -1;
}

/* Which sanitizers' runtime entry points the dynamic symbol table leaves
 * undefined. Read through the section headers (.dynsym and its string
 * table); a stripped file without them reports nothing. */
static unsigned read_undefined(int fd, const Elf64_Ehdr *eh)
{
        static const struct {
                const char *prefix;
                unsigned bit;
        } probes[] = {
            {"__asan_", SAN_UNDEF_ASAN},     {"__ubsan_handle_", SAN_UNDEF_UBSAN},
            {"__msan_", SAN_UNDEF_MSAN},     {"__tsan_", SAN_UNDEF_TSAN},
            {"__hwasan_", SAN_UNDEF_HWASAN},
        };
        unsigned found = 0;
        if (eh->e_shnum == 0 || eh->e_shnum > 4096 || eh->e_shentsize != sizeof(Elf64_Shdr))
                return 0;
        Elf64_Shdr *sh = calloc(eh->e_shnum, sizeof(Elf64_Shdr));
        if (!sh || read_at(fd, sh, eh->e_shnum * sizeof(Elf64_Shdr), (off_t)eh->e_shoff) < 0)
                goto out;
        for (unsigned i = 0; i < eh->e_shnum; i++) {
                if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum ||
                    sh[i].sh_entsize != sizeof(Elf64_Sym))
                        continue;
                const Elf64_Shdr *str = &sh[sh[i].sh_link];
                size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
                if (n > (1u << 20) || str->sh_size > (64u << 20))
                        break;
                Elf64_Sym *syms = calloc(n ? n : 1, sizeof(Elf64_Sym));
                char *names = malloc(str->sh_size + 1);
                if (syms && names &&
                    read_at(fd, syms, n * sizeof(Elf64_Sym), (off_t)sh[i].sh_offset) == 0 &&
                    read_at(fd, names, str->sh_size, (off_t)str->sh_offset) == 0) {
                        names[str->sh_size] = 0;
                        for (size_t k = 0; k < n; k++) {
                                if (syms[k].st_shndx != SHN_UNDEF ||
                                    syms[k].st_name >= str->sh_size)
                                        continue;
                                const char *name = names + syms[k].st_name;
                                for (size_t p = 0; p < sizeof(probes) / sizeof(probes[0]); p++)
                                        if (strncmp(name, probes[p].prefix,
                                                    strlen(probes[p].prefix)) == 0)
                                                found |= probes[p].bit;
                        }
                }
                free(syms);
                free(names);
                break;
        }
out:
        free(sh);
        return found;
}

static int read_dynamic(const char *path, DynInfo *d)
{
        Elf64_Ehdr eh;
        Elf64_Phdr ph[64];
        int r = -EINVAL;
        memset(d, 0, sizeof(*d));
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (read_at(fd, &eh, sizeof(eh), 0) < 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
            eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phnum == 0 || eh.e_phnum > 64 ||
            eh.e_phentsize != sizeof(Elf64_Phdr))
                goto out;
        if (read_at(fd, ph, eh.e_phnum * sizeof(Elf64_Phdr), (off_t)eh.e_phoff) < 0)
                goto out;
        d->undefined = read_undefined(fd, &eh);
        const Elf64_Phdr *dyn = NULL;
        for (int i = 0; i < eh.e_phnum; i++)
                if (ph[i].p_type == PT_DYNAMIC)
                        dyn = &ph[i];
        r = 0;
        if (!dyn)
                goto out; /* static: nothing is needed */
        size_t n = dyn->p_filesz / sizeof(Elf64_Dyn);
        if (n > 4096)
                n = 4096;
        Elf64_Dyn *ents = calloc(n ? n : 1, sizeof(Elf64_Dyn));
        if (!ents || read_at(fd, ents, n * sizeof(Elf64_Dyn), (off_t)dyn->p_offset) < 0) {
                free(ents);
                r = -EIO;
                goto out;
        }
        Elf64_Addr strtab = 0;
        for (size_t i = 0; i < n && ents[i].d_tag != DT_NULL; i++)
                if (ents[i].d_tag == DT_STRTAB)
                        strtab = ents[i].d_un.d_ptr;
        off_t stroff = vaddr_to_off(ph, eh.e_phnum, strtab);
        for (size_t i = 0; stroff >= 0 && i < n && ents[i].d_tag != DT_NULL; i++) {
                char name[1024];
                if (ents[i].d_tag != DT_NEEDED && ents[i].d_tag != DT_RUNPATH &&
                    ents[i].d_tag != DT_RPATH)
                        continue;
                ssize_t got = pread(fd, name, sizeof(name) - 1, stroff + (off_t)ents[i].d_un.d_val);
                if (got <= 0)
                        continue;
                name[got] = 0;
                if (ents[i].d_tag == DT_NEEDED && d->n_needed < SAN_MAX_NEEDED)
                        snprintf(d->needed[d->n_needed++], sizeof(d->needed[0]), "%s", name);
                else if (ents[i].d_tag != DT_NEEDED && !d->runpath[0])
                        snprintf(d->runpath, sizeof(d->runpath), "%s", name);
        }
        free(ents);
out:
        close(fd);
        return r;
}

static bool file_exists(const char *p)
{
        return access(p, R_OK) == 0;
}

/* Finds @name: in the target's run path, then where toolchains put it. */
static bool find_runtime(const char *target, const DynInfo *d, const char *name, char *ret,
                         size_t cap)
{
        char origin[PATH_MAX];
        snprintf(origin, sizeof(origin), "%s", target);
        char *slash = strrchr(origin, '/');
        if (slash)
                *slash = 0;
        else
                snprintf(origin, sizeof(origin), ".");

        char rp[1024];
        snprintf(rp, sizeof(rp), "%s", d->runpath);
        for (char *save = NULL, *dir = strtok_r(rp, ":", &save); dir;
             dir = strtok_r(NULL, ":", &save)) {
                char path[PATH_MAX];
                if (strncmp(dir, "$ORIGIN", 7) == 0)
                        snprintf(path, sizeof(path), "%s%s/%s", origin, dir + 7, name);
                else
                        snprintf(path, sizeof(path), "%s/%s", dir, name);
                if (file_exists(path)) {
                        snprintf(ret, cap, "%s", path);
                        return true;
                }
        }
        static const char *const patterns[] = {
            "/usr/lib/llvm-*/lib/clang/*/lib/linux/",
            "/usr/lib/clang/*/lib/linux/",
            "/usr/local/lib/clang/*/lib/linux/",
            "/usr/lib/llvm-*/lib/clang/*/lib/x86_64-pc-linux-gnu/",
        };
        for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
                char pat[PATH_MAX];
                glob_t g;
                snprintf(pat, sizeof(pat), "%s%s", patterns[i], name);
                if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
                        /* The newest toolchain sorts last. */
                        snprintf(ret, cap, "%s", g.gl_pathv[g.gl_pathc - 1]);
                        globfree(&g);
                        return true;
                }
                globfree(&g);
        }
        return false;
}

static bool has_prefix(const char *s, const char *p)
{
        return strncmp(s, p, strlen(p)) == 0;
}

#if defined(__x86_64__)
#define SAN_ARCH "x86_64"
#elif defined(__aarch64__)
#define SAN_ARCH "aarch64"
#elif defined(__i386__)
#define SAN_ARCH "i386"
#else
#define SAN_ARCH "unknown"
#endif

/* A target built with clang's default, static sanitizer runtime
 * (-fsanitize=address,fuzzer-no-link without -shared-libasan) calls the
 * runtime without naming it: a shared object leaves it to the program.
 * clang's shared build of the same runtime serves it, preloaded. ASan's
 * runtime has UBSan's handlers in it. */
static int preload_static_build(const char *target, const DynInfo *d, SanitizerInfo *s, char *why,
                                size_t whylen)
{
        const char *name = NULL;
        if (d->undefined & SAN_UNDEF_ASAN) {
                name = "libclang_rt.asan-" SAN_ARCH ".so";
                s->asan = true;
        } else if (d->undefined & SAN_UNDEF_UBSAN) {
                name = "libclang_rt.ubsan_standalone-" SAN_ARCH ".so";
                s->ubsan = true;
        } else {
                const char *which = d->undefined & SAN_UNDEF_MSAN   ? "MemorySanitizer"
                                    : d->undefined & SAN_UNDEF_TSAN ? "ThreadSanitizer"
                                                                    : "HWAddressSanitizer";
                snprintf(why, whylen,
                         "the target was built with %s, which snapfuzz cannot load into its "
                         "workers: rebuild it with -fsanitize=address and/or undefined, or "
                         "without a sanitizer",
                         which);
                return -ENOTSUP;
        }
        if (!find_runtime(target, d, name, s->preload, sizeof(s->preload))) {
                snprintf(why, whylen,
                         "the target was built with clang's static %s runtime and needs its "
                         "shared build %s, which is not installed here (Debian: apt-get install "
                         "libclang-rt-14-dev)",
                         s->asan ? "AddressSanitizer" : "UBSan", name);
                return -ENOENT;
        }
        return 0;
}

int sanitizer_detect(const char *target, SanitizerInfo *ret, char *why, size_t whylen)
{
        DynInfo d;
        SanitizerInfo s = {0};
        int r = read_dynamic(target, &d);
        if (r < 0) {
                snprintf(why, whylen, "cannot read the target's dynamic section: %s", strerror(-r));
                return r;
        }
        for (int i = 0; i < d.n_needed; i++) {
                const char *n = d.needed[i];
                bool clang_rt = has_prefix(n, "libclang_rt.");
                bool gcc_rt = has_prefix(n, "libasan.so") || has_prefix(n, "libubsan.so");
                if (!clang_rt && !gcc_rt)
                        continue;
                if (strstr(n, "asan"))
                        s.asan = true;
                else if (strstr(n, "ubsan"))
                        s.ubsan = true;
                else if (strstr(n, "msan"))
                        s.msan = true;
                else
                        continue;
                char path[PATH_MAX];
                if (gcc_rt) {
                        snprintf(path, sizeof(path), "%s", n);
                } else if (!find_runtime(target, &d, n, path, sizeof(path))) {
                        snprintf(why, whylen,
                                 "the target needs the sanitizer runtime %s, which is not "
                                 "installed here (Debian: apt-get install libclang-rt-14-dev)",
                                 n);
                        return -ENOENT;
                }
                size_t used = strlen(s.preload);
                snprintf(s.preload + used, sizeof(s.preload) - used, "%s%s", used ? ":" : "", path);
        }
        if (!s.preload[0] && d.undefined) {
                r = preload_static_build(target, &d, &s, why, whylen);
                if (r < 0)
                        return r;
        }
        *ret = s;
        return 0;
}

/* Where a build puts libsnapfuzz-malloc.so, relative to the directory of
 * the binary and as an absolute path (meson.build: lib/<arch>/snapfuzz
 * under the prefix); the build tree has it next to the binary. */
#ifndef SNAPFUZZ_SHIM_RELDIR
#define SNAPFUZZ_SHIM_RELDIR "../lib/snapfuzz"
#endif
#ifndef SNAPFUZZ_SHIM_DIR
#define SNAPFUZZ_SHIM_DIR "/usr/local/lib/snapfuzz"
#endif
#define SHIM_NAME "libsnapfuzz-malloc.so"

int sanitizer_malloc_shim(char *ret, size_t cap)
{
        char exe[PATH_MAX] = "";
        /* /proc/self/exe is the binary's real location, symbolic links
         * resolved: a link in ~/bin to an installed snapfuzz still finds
         * the installed library. */
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
        if (slash) {
                *slash = 0;
                snprintf(ret, cap, "%s/" SHIM_NAME, exe);
                if (file_exists(ret))
                        return 0;
                snprintf(ret, cap, "%s/" SNAPFUZZ_SHIM_RELDIR "/" SHIM_NAME, exe);
                if (file_exists(ret))
                        return 0;
        }
        snprintf(ret, cap, SNAPFUZZ_SHIM_DIR "/" SHIM_NAME);
        if (file_exists(ret))
                return 0;
        snprintf(ret, cap,
                 SHIM_NAME " is neither in %s nor in %s/" SNAPFUZZ_SHIM_RELDIR
                           " nor in " SNAPFUZZ_SHIM_DIR,
                 slash ? exe : "the binary's directory", slash ? exe : "");
        return -ENOENT;
}

/* Whether the shim goes into a worker for @s: the target's runtime, or
 * snapfuzz's own (a sanitizer build of snapfuzz), replaces malloc and
 * limits allocations itself, or nothing does. */
static bool malloc_shim_wanted(const SanitizerInfo *s, unsigned malloc_limit_mb)
{
        bool own_sanitizer =
            dlsym(RTLD_DEFAULT, "__asan_init") || dlsym(RTLD_DEFAULT, "__msan_init");
        return malloc_limit_mb && !s->asan && !s->msan && !own_sanitizer;
}

bool sanitizer_malloc_limit_missing(const SanitizerInfo *s, unsigned malloc_limit_mb)
{
        char shim[PATH_MAX];
        return malloc_shim_wanted(s, malloc_limit_mb) &&
               sanitizer_malloc_shim(shim, sizeof(shim)) < 0;
}

/* A copy of the process's environment being changed for a worker; the
 * strings are its own. */
typedef struct Env {
        char **v;
        size_t n;
        bool failed; /* out of memory: the result is NULL */
} Env;

extern char **environ;

/* The slot of @name in @e, or e->n. */
static size_t env_find(const Env *e, const char *name)
{
        size_t len = strlen(name);
        for (size_t i = 0; i < e->n; i++)
                if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=')
                        return i;
        return e->n;
}

static const char *env_get(const Env *e, const char *name)
{
        size_t i = env_find(e, name);
        return i < e->n ? e->v[i] + strlen(name) + 1 : NULL;
}

/* Sets @name to @value or, with @append, to OLD:@value (for options, of
 * which a sanitizer takes the last value of a flag: the ones the sandbox
 * depends on go after the user's). The array has room for every name
 * sanitizer_env sets. */
static void env_put(Env *e, const char *name, const char *value, bool append)
{
        const char *old = append ? env_get(e, name) : NULL;
        char *s = NULL;
        int n = old && *old ? asprintf(&s, "%s=%s:%s", name, old, value)
                            : asprintf(&s, "%s=%s", name, value);
        if (n < 0) {
                e->failed = true;
                return;
        }
        size_t i = env_find(e, name);
        if (i < e->n)
                free(e->v[i]);
        else
                e->n++;
        e->v[i] = s;
}

/* Whether the sanitizer options in @opts (flags separated as a sanitizer
 * separates them: ':', ',', space, tab or newline) set a flag whose name
 * starts with @prefix. */
static bool options_name(const char *opts, const char *prefix)
{
        size_t len = strlen(prefix);
        for (const char *p = opts; p && *p;) {
                p += strspn(p, ":, \t\n");
                if (strncmp(p, prefix, len) == 0)
                        return true;
                p += strcspn(p, ":, \t\n");
        }
        return false;
}

void sanitizer_env_free(char **envp)
{
        if (!envp)
                return;
        for (char **p = envp; *p; p++)
                free(*p);
        free(envp);
}

/* LD_PRELOAD for a worker: the sanitizer runtime the target needs, then
 * the malloc shim when a limit wants it (with its limit), then the user's
 * own preloads. */
static void env_preload(Env *e, const SanitizerInfo *s, unsigned malloc_limit_mb)
{
        char preload[PATH_MAX * 2];
        snprintf(preload, sizeof(preload), "%s", s->preload);
        if (malloc_shim_wanted(s, malloc_limit_mb)) {
                char shim[PATH_MAX], limit[32];
                if (sanitizer_malloc_shim(shim, sizeof(shim)) == 0) {
                        size_t used = strlen(preload);
                        snprintf(preload + used, sizeof(preload) - used, "%s%s", used ? ":" : "",
                                 shim);
                        snprintf(limit, sizeof(limit), "%u", malloc_limit_mb);
                        env_put(e, "SNAPFUZZ_MALLOC_LIMIT_MB", limit, false);
                }
        }
        if (preload[0]) {
                /* Ours first: a sanitizer runtime must be the first library
                 * loaded. */
                const char *old = env_get(e, "LD_PRELOAD");
                char buf[PATH_MAX * 3];
                snprintf(buf, sizeof(buf), "%s%s%s", preload, old && *old ? ":" : "",
                         old && *old ? old : "");
                env_put(e, "LD_PRELOAD", buf, false);
        }
}

/* ASan's quarantine in the workers unless the user's ASAN_OPTIONS sets
 * one: what OSS-Fuzz's runner gives libFuzzer. */
#define SANITIZER_QUARANTINE_MB "10"

/* The names sanitizer_env may add to the environment. */
#define SAN_ENV_NAMES 5

char **sanitizer_env(const SanitizerInfo *s, unsigned malloc_limit_mb, bool detect_leaks,
                     bool confirm)
{
        Env e = {0};
        size_t have = 0;
        while (environ && environ[have])
                have++;
        e.v = calloc(have + SAN_ENV_NAMES + 1, sizeof(*e.v));
        if (!e.v)
                return NULL;
        for (; e.n < have; e.n++)
                if (!(e.v[e.n] = strdup(environ[e.n]))) {
                        sanitizer_env_free(e.v);
                        return NULL;
                }

        env_preload(&e, s, malloc_limit_mb);
        /* ASan keeps freed memory out of use for as long as its quarantine
         * holds (256 MB by default) to catch a use after free. A runner is
         * a fresh fork of the worker, so with the default every allocation
         * of its whole life is memory it has never touched: page faults
         * and fills made a YAML parser 3.7x slower than with OSS-Fuzz's
         * 10 MB (bench/results/asan-quarantine-2026-12-07.md), which still
         * holds everything one input frees. The user's setting wins. */
        if (s->asan && !options_name(env_get(&e, "ASAN_OPTIONS"), "quarantine_size"))
                env_put(&e, "ASAN_OPTIONS", "quarantine_size_mb=" SANITIZER_QUARANTINE_MB, true);
        if (malloc_limit_mb && s->asan) {
                char opt[64];
                snprintf(opt, sizeof(opt), "max_allocation_size_mb=%u", malloc_limit_mb);
                env_put(&e, "ASAN_OPTIONS", opt, true);
        }
        /* The runner records fatal signals itself (so the replay record gets
         * the stack); the sanitizer reports its own errors and then aborts.
         * Symbolizing would start a process (the sandbox forbids it, and
         * snapfuzz symbolizes outside it). A leak check stops the world with
         * ptrace, which only the leak-checking runner's sandbox allows, so
         * LeakSanitizer never checks on its own (not at exit either): the
         * runner calls it. */
        const char *leaks = detect_leaks ? "detect_leaks=1:leak_check_at_exit=0" : "detect_leaks=0";
        env_put(&e, "ASAN_OPTIONS", leaks, true);
        env_put(&e, "LSAN_OPTIONS", leaks, true);
        env_put(&e, "ASAN_OPTIONS",
                "abort_on_error=1:symbolize=0:handle_segv=0:"
                "handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
                "allow_user_segv_handler=1:detect_odr_violation=0:"
                "allocator_may_return_null=0:print_summary=1",
                true);
        env_put(&e, "UBSAN_OPTIONS",
                "halt_on_error=1:abort_on_error=1:print_stacktrace=1:symbolize=0:"
                "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                "handle_abort=0",
                true);
        env_put(&e, "LSAN_OPTIONS", "symbolize=0", true);
        if (confirm) {
                /* After the "=0" above: a sanitizer reads its options in
                 * order, and the last value of a flag wins. */
                env_put(&e, "ASAN_OPTIONS", "handle_segv=1:handle_sigbus=1:handle_sigfpe=1", true);
                env_put(&e, "UBSAN_OPTIONS", "handle_segv=1:handle_sigbus=1:handle_sigfpe=1", true);
        }
        if (e.failed) {
                sanitizer_env_free(e.v);
                return NULL;
        }
        return e.v;
}
