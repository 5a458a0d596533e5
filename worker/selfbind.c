/*
 * The target's symbols are the target's. A dlopen()ed harness resolves its
 * calls through the global lookup scope first: the snapfuzz executable,
 * then the executable's own libraries (libc, libcjson, libseccomp, ...),
 * and only then the harness itself. A harness that carries its own copy of
 * a library snapfuzz links (cJSON), or its own function with a name libc
 * also exports, would call snapfuzz's copy, uninstrumented, and the fuzzer
 * would exercise the wrong code without a word. A program linking the
 * harness directly would get the harness's own definitions: that is what
 * this module restores, once, after dlopen and before any input runs.
 *
 * For the harness and each library its dlopen loaded (the link map after
 * it), every GOT slot (JUMP_SLOT, GLOB_DAT) and every address of a symbol
 * in data (ABS64: function pointers, the PC table) whose symbol has a
 * strong definition in that group is pointed at that definition. Left alone:
 * symbols the group does not define (the SanitizerCoverage callbacks and
 * the comparison interposers snapfuzz exports, libc's functions, the
 * malloc shim), weak and unique definitions (C++ inline functions,
 * templates and typeinfo, which the dynamic linker must unify with
 * libstdc++'s copies), IFUNC and TLS symbols. Constructors that ran during
 * dlopen ran before the rebinding.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/selfbind.h"

#include "snapfuzz/banned.h"

#if defined(__x86_64__)
#define SELFBIND_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define SELFBIND_R_GLOB_DAT R_X86_64_GLOB_DAT
#define SELFBIND_R_ABS64 R_X86_64_64
#elif defined(__aarch64__)
#define SELFBIND_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define SELFBIND_R_GLOB_DAT R_AARCH64_GLOB_DAT
#define SELFBIND_R_ABS64 R_AARCH64_ABS64
#endif

/* What one object's dynamic section says of its relocations. */
typedef struct DynInfo {
        const ElfW(Sym) * symtab;
        const char *strtab;
        const ElfW(Rela) * rela[2]; /* .rela.dyn and .rela.plt */
        size_t rela_n[2];
} DynInfo;

/* glibc relocates the dynamic section's addresses in place on most
 * architectures; where it does not, they are offsets from the load base. */
static uintptr_t dyn_ptr(const struct link_map *lm, ElfW(Addr) v)
{
        return v < lm->l_addr ? lm->l_addr + v : v;
}

static bool dyn_info(const struct link_map *lm, DynInfo *ret)
{
        *ret = (DynInfo){0};
        size_t relasz = 0, pltrelsz = 0;
        bool rela_plt = true;
        for (const ElfW(Dyn) *d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
                switch (d->d_tag) {
                case DT_SYMTAB:
                        ret->symtab = (const ElfW(Sym) *)dyn_ptr(lm, d->d_un.d_ptr);
                        break;
                case DT_STRTAB:
                        ret->strtab = (const char *)dyn_ptr(lm, d->d_un.d_ptr);
                        break;
                case DT_RELA:
                        ret->rela[0] = (const ElfW(Rela) *)dyn_ptr(lm, d->d_un.d_ptr);
                        break;
                case DT_RELASZ:
                        relasz = d->d_un.d_val;
                        break;
                case DT_JMPREL:
                        ret->rela[1] = (const ElfW(Rela) *)dyn_ptr(lm, d->d_un.d_ptr);
                        break;
                case DT_PLTRELSZ:
                        pltrelsz = d->d_un.d_val;
                        break;
                case DT_PLTREL:
                        rela_plt = d->d_un.d_val == DT_RELA;
                        break;
                default:
                        break;
                }
        }
        ret->rela_n[0] = ret->rela[0] ? relasz / sizeof(ElfW(Rela)) : 0;
        ret->rela_n[1] = ret->rela[1] && rela_plt ? pltrelsz / sizeof(ElfW(Rela)) : 0;
        return ret->symtab && ret->strtab;
}

/* Whether @addr lies in one of the objects of the group that starts at
 * @first (the target and what its dlopen loaded after it). */
static bool in_group(const struct link_map *first, const void *addr)
{
        Dl_info info;
        struct link_map *owner = NULL;
        if (!dladdr1(addr, &info, (void **)&owner, RTLD_DL_LINKMAP) || !owner)
                return false;
        for (const struct link_map *lm = first; lm; lm = lm->l_next)
                if (lm == owner)
                        return true;
        return false;
}

/* A strong function or object definition. */
static bool strong_definition(const ElfW(Sym) * s)
{
        unsigned type = ELF64_ST_TYPE(s->st_info);
        return s->st_shndx != SHN_UNDEF && ELF64_ST_BIND(s->st_info) == STB_GLOBAL &&
               (type == STT_FUNC || type == STT_OBJECT);
}

/* The group's own definition of @name, or NULL: the object's own when it
 * has a strong one, else the first strong one in the group's lookup
 * scope (dlsym on the target's handle). */
static void *group_definition(void *handle, const struct link_map *first, const struct link_map *lm,
                              const ElfW(Sym) * s, const char *name)
{
        if (s->st_shndx != SHN_UNDEF)
                return strong_definition(s) ? (void *)(lm->l_addr + s->st_value) : NULL;
        void *addr = dlsym(handle, name);
        if (!addr || !in_group(first, addr))
                return NULL;
        Dl_info info;
        const ElfW(Sym) *def = NULL;
        if (!dladdr1(addr, &info, (void **)&def, RTLD_DL_SYMENT) || !def || !strong_definition(def))
                return NULL;
        return addr;
}

/* The RELRO range of the object loaded at @base: pages the dynamic linker
 * made read-only after relocating them. */
typedef struct Relro {
        uintptr_t base, lo, hi;
} Relro;

static int find_relro(struct dl_phdr_info *info, size_t size, void *arg)
{
        Relro *r = arg;
        (void)size;
        if (info->dlpi_addr != r->base)
                return 0;
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type == PT_GNU_RELRO) {
                        r->lo = r->base + ph->p_vaddr;
                        r->hi = r->lo + ph->p_memsz;
                }
        }
        return 1;
}

/* Writes @value into the GOT slot at @slot; a slot in the RELRO range is
 * made writable for the moment and read-only again, any other is written
 * as it is (its page may hold the target's own data). Returns 0 or
 * -errno. */
static int write_slot(const Relro *relro, void **slot, void *value)
{
        uintptr_t at = (uintptr_t)slot;
        if (at < relro->lo || at >= relro->hi) {
                __atomic_store_n(slot, value, __ATOMIC_RELAXED);
                return 0;
        }
        long page = sysconf(_SC_PAGESIZE);
        uintptr_t start = at & ~(uintptr_t)(page - 1);
        if (mprotect((void *)start, (size_t)page, PROT_READ | PROT_WRITE) < 0)
                return -errno;
        __atomic_store_n(slot, value, __ATOMIC_RELAXED);
        (void)mprotect((void *)start, (size_t)page, PROT_READ);
        return 0;
}

static int rebind_object(void *handle, const struct link_map *first, const struct link_map *lm,
                         unsigned *n)
{
#ifdef SELFBIND_R_JUMP_SLOT
        DynInfo di;
        if (!dyn_info(lm, &di))
                return 0;
        Relro relro = {.base = lm->l_addr};
        dl_iterate_phdr(find_relro, &relro);
        for (int t = 0; t < 2; t++) {
                for (size_t i = 0; i < di.rela_n[t]; i++) {
                        const ElfW(Rela) *r = &di.rela[t][i];
                        unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
                        size_t sym = ELF64_R_SYM(r->r_info);
                        if ((type != SELFBIND_R_JUMP_SLOT && type != SELFBIND_R_GLOB_DAT &&
                             type != SELFBIND_R_ABS64) ||
                            !sym)
                                continue;
                        const ElfW(Sym) *s = &di.symtab[sym];
                        const char *name = di.strtab + s->st_name;
                        if (!*name)
                                continue;
                        void *own = group_definition(handle, first, lm, s, name);
                        void **slot = (void **)(lm->l_addr + r->r_offset);
                        /* An address taken in data (a function pointer, a
                         * PC table's entry) carries its addend. */
                        if (own && type == SELFBIND_R_ABS64)
                                own = (char *)own + r->r_addend;
                        if (!own || *slot == own)
                                continue;
                        int e = write_slot(&relro, slot, own);
                        if (e < 0)
                                return e;
                        (*n)++;
                }
        }
#endif
        return 0;
}

/* Whether one object has a GOT relocation against undefined @name. */
static bool object_references(const struct link_map *lm, const char *name)
{
#ifdef SELFBIND_R_JUMP_SLOT
        DynInfo di;
        if (!dyn_info(lm, &di))
                return false;
        for (int t = 0; t < 2; t++) {
                for (size_t i = 0; i < di.rela_n[t]; i++) {
                        const ElfW(Rela) *r = &di.rela[t][i];
                        unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
                        size_t sym = ELF64_R_SYM(r->r_info);
                        if ((type != SELFBIND_R_JUMP_SLOT && type != SELFBIND_R_GLOB_DAT) || !sym)
                                continue;
                        const ElfW(Sym) *s = &di.symtab[sym];
                        if (s->st_shndx == SHN_UNDEF && strcmp(di.strtab + s->st_name, name) == 0)
                                return true;
                }
        }
#endif
        return false;
}

int selfbind_imports(void *handle, SelfbindImportFn fn, void *arg)
{
        struct link_map *first = NULL;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &first) < 0 || !first)
                return -EINVAL;
#ifdef SELFBIND_R_JUMP_SLOT
        for (const struct link_map *lm = first; lm; lm = lm->l_next) {
                DynInfo di;
                if (!dyn_info(lm, &di))
                        continue;
                for (int t = 0; t < 2; t++) {
                        for (size_t i = 0; i < di.rela_n[t]; i++) {
                                const ElfW(Rela) *r = &di.rela[t][i];
                                unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
                                size_t sym = ELF64_R_SYM(r->r_info);
                                if ((type != SELFBIND_R_JUMP_SLOT && type != SELFBIND_R_GLOB_DAT) ||
                                    !sym || di.symtab[sym].st_shndx != SHN_UNDEF)
                                        continue;
                                fn(lm, di.strtab + di.symtab[sym].st_name,
                                   (void **)(lm->l_addr + r->r_offset), arg);
                        }
                }
        }
#else
        (void)fn;
        (void)arg;
#endif
        return 0;
}

bool selfbind_references(void *handle, const char *name)
{
        struct link_map *first = NULL;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &first) < 0 || !first)
                return false;
        for (const struct link_map *lm = first; lm; lm = lm->l_next)
                if (object_references(lm, name))
                        return true;
        return false;
}

int selfbind_apply(void *handle, unsigned *ret_rebound)
{
        struct link_map *first = NULL;
        unsigned n = 0;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &first) < 0 || !first)
                return -EINVAL;
        for (const struct link_map *lm = first; lm; lm = lm->l_next) {
                int r = rebind_object(handle, first, lm, &n);
                if (r < 0)
                        return r;
        }
        *ret_rebound = n;
        return 0;
}
