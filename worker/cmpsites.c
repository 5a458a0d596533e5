/*
 * Idle comparison hooks cost nothing: the worker turns the target's calls
 * to the trace-cmp callbacks that do nothing for the whole run into NOPs,
 * once, before any runner is forked. Without --use-value-profile those are
 * __sanitizer_cov_trace_const_cmp1 and __sanitizer_cov_trace_gep (they
 * only feed the value profile: worker/cmphooks.c), and always gcc's
 * __sanitizer_cov_trace_cmpf and __sanitizer_cov_trace_cmpd. A tokenizer
 * makes a const_cmp1 per byte it reads; each was a call through the PLT,
 * a load, a branch and a return.
 *
 * Invariants:
 * - Only a call that would reach snapfuzz's own definition of an idle
 *   hook is removed: the object's GOT slot for the hook holds the address
 *   of the definition in the executable that holds this module. A target
 *   bound elsewhere (a preloaded runtime's definition) keeps its calls.
 * - A call site is a `call rel32` (E8) whose target is the object's PLT
 *   stub for such a slot (a `jmp *slot(%rip)`, FF 25, with or without
 *   endbr64 and bnd before it), or a `call *slot(%rip)` (FF 15) for
 *   -fno-plt builds. Code is not disassembled: such five or six bytes that
 *   are not an instruction would have to encode, by chance, the exact
 *   distance to one stub or slot (one value in 2^32), and two candidates
 *   that overlap are both left alone.
 * - A removed call is replaced by a NOP of the same length: the hook
 *   returns nothing, and a call may clobber the registers the compiler
 *   treated as clobbered, so not clobbering them is as valid.
 * - The worker patches its own private copy of the target's code
 *   (copy-on-write pages of the file mapping, which /proc/PID/maps still
 *   names after the file), with the pages writable only for the moment;
 *   runners inherit the patched pages and write none. Recovery,
 *   reproduction and the minimizer patch alike, so every input runs the
 *   same code in each of them; the hooks removed could not change what an
 *   input does.
 * - The executable's own target (the libFuzzer drop-in) is not patched:
 *   its calls are direct and nothing here finds them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/cmpsites.h"
#include "worker/selfbind.h"

#include "snapfuzz/banned.h"

#define CMPSITES_SLOTS_MAX 64
#define CMPSITES_STUBS_MAX (3 * CMPSITES_SLOTS_MAX)
#define CMPSITES_SEGS_MAX 8

/* One object's slots for idle hooks, and its executable segments. */
typedef struct CmpObject {
        const struct link_map *lm;
        uintptr_t slot[CMPSITES_SLOTS_MAX];
        size_t n_slot;
        uintptr_t stub[CMPSITES_STUBS_MAX];
        size_t n_stub;
        uintptr_t seg_lo[CMPSITES_SEGS_MAX], seg_hi[CMPSITES_SEGS_MAX];
        uintptr_t page_lo[CMPSITES_SEGS_MAX], page_hi[CMPSITES_SEGS_MAX]; /* patchable */
        size_t n_seg;
} CmpObject;

/* A call site found: @len bytes at @at. */
typedef struct CmpSite {
        uintptr_t at;
        uint8_t len;
        bool keep;
} CmpSite;

typedef struct CmpScan {
        const char *const *idle;
        size_t n_idle;
        uintptr_t own_base;          /* the load address of the executable holding us */
        CmpObject obj;               /* the object being gathered */
        const struct link_map *want; /* gather only slots of this object */
} CmpScan;

static const char *const cmpsites_always[] = {
    "__sanitizer_cov_trace_cmpf",
    "__sanitizer_cov_trace_cmpd",
};

static const char *const cmpsites_no_vp[] = {
    "__sanitizer_cov_trace_cmpf",
    "__sanitizer_cov_trace_cmpd",
    "__sanitizer_cov_trace_const_cmp1",
    "__sanitizer_cov_trace_gep",
};

/* Whether @addr is a definition in the executable that holds this code. */
static bool own_definition(uintptr_t own_base, const void *addr)
{
        Dl_info info;
        return addr && dladdr(addr, &info) && (uintptr_t)info.dli_fbase == own_base;
}

static bool is_idle(const CmpScan *s, const char *name)
{
        for (size_t i = 0; i < s->n_idle; i++)
                if (strcmp(s->idle[i], name) == 0)
                        return true;
        return false;
}

static void gather_slot(const struct link_map *lm, const char *name, void **slot, void *arg)
{
        CmpScan *s = arg;
        if (lm != s->want || !is_idle(s, name) || s->obj.n_slot == CMPSITES_SLOTS_MAX)
                return;
        void *bound = __atomic_load_n(slot, __ATOMIC_RELAXED);
        if (bound != dlsym(RTLD_DEFAULT, name) || !own_definition(s->own_base, bound))
                return;
        s->obj.slot[s->obj.n_slot++] = (uintptr_t)slot;
}

/* Whether a loaded segment of @info other than @self touches [lo, hi). */
static bool page_shared(const struct dl_phdr_info *info, int self, uintptr_t lo, uintptr_t hi)
{
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t a = info->dlpi_addr + ph->p_vaddr;
                if (i != self && ph->p_type == PT_LOAD && a < hi && a + ph->p_memsz > lo)
                        return true;
        }
        return false;
}

/* The object's code segments, and the whole pages of each that hold no
 * other segment (a page shared with one keeps its calls). */
static int gather_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
        CmpObject *o = arg;
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        (void)size;
        if (info->dlpi_addr != o->lm->l_addr)
                return 0;
        for (int i = 0; i < info->dlpi_phnum && o->n_seg < CMPSITES_SEGS_MAX; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || (ph->p_flags & PF_W))
                        continue;
                uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
                uintptr_t plo = lo & ~(page - 1), phi = (hi + page - 1) & ~(page - 1);
                if (plo < lo && page_shared(info, i, plo, lo))
                        plo += page;
                if (phi > hi && page_shared(info, i, hi, phi))
                        phi -= page;
                o->seg_lo[o->n_seg] = lo;
                o->seg_hi[o->n_seg] = hi;
                o->page_lo[o->n_seg] = plo;
                o->page_hi[o->n_seg] = plo < phi ? phi : plo;
                o->n_seg++;
        }
        return 1;
}

static bool in_list(const uintptr_t *list, size_t n, uintptr_t v)
{
        for (size_t i = 0; i < n; i++)
                if (list[i] == v)
                        return true;
        return false;
}

/* The target of the rel32 at @p (the displacement's end is @end). */
static uintptr_t rel32_target(const uint8_t *p, const uint8_t *end)
{
        int32_t d;
        memcpy(&d, p, sizeof(d));
        return (uintptr_t)end + (uintptr_t)(intptr_t)d;
}

/* The PLT stubs that jump through one of @o's slots: the `jmp *slot(%rip)`
 * and the endbr64 and bnd prefix that may come before it. */
static void find_stubs(CmpObject *o)
{
        for (size_t g = 0; g < o->n_seg; g++) {
                const uint8_t *lo = (const uint8_t *)o->seg_lo[g];
                const uint8_t *hi = (const uint8_t *)o->seg_hi[g];
                for (const uint8_t *p = lo; p + 6 <= hi; p++) {
                        if (p[0] != 0xff || p[1] != 0x25 ||
                            !in_list(o->slot, o->n_slot, rel32_target(p + 2, p + 6)) ||
                            o->n_stub + 3 > CMPSITES_STUBS_MAX)
                                continue;
                        const uint8_t *at = p;
                        o->stub[o->n_stub++] = (uintptr_t)at;
                        if (at > lo && at[-1] == 0xf2)
                                o->stub[o->n_stub++] = (uintptr_t)--at;
                        if (at >= lo + 4 && memcmp(at - 4, "\xf3\x0f\x1e\xfa", 4) == 0)
                                o->stub[o->n_stub++] = (uintptr_t)(at - 4);
                }
        }
}

/* Appends @o's call sites to @sites (grown as needed). */
static int find_calls(const CmpObject *o, CmpSite **sites, size_t *n, size_t *cap)
{
        for (size_t g = 0; g < o->n_seg; g++) {
                const uint8_t *hi = (const uint8_t *)o->seg_hi[g];
                for (const uint8_t *p = (const uint8_t *)o->seg_lo[g]; p + 5 <= hi; p++) {
                        uint8_t len = 0;
                        if (p[0] == 0xe8 && in_list(o->stub, o->n_stub, rel32_target(p + 1, p + 5)))
                                len = 5;
                        else if (p + 6 <= hi && p[0] == 0xff && p[1] == 0x15 &&
                                 in_list(o->slot, o->n_slot, rel32_target(p + 2, p + 6)))
                                len = 6;
                        if (!len)
                                continue;
                        if (*n == *cap) {
                                size_t c = *cap ? 2 * *cap : 1024;
                                CmpSite *s = realloc(*sites, c * sizeof(*s));
                                if (!s)
                                        return -ENOMEM;
                                *sites = s;
                                *cap = c;
                        }
                        (*sites)[(*n)++] = (CmpSite){(uintptr_t)p, len, true};
                }
        }
        return 0;
}

/* Leaves alone both of any two sites (found in address order) that
 * overlap: at most one of them is an instruction. */
static void drop_overlaps(CmpSite *sites, size_t n)
{
        bool prev_overlaps = false;
        for (size_t i = 0; i < n; i++) {
                bool overlaps = i + 1 < n && sites[i].at + sites[i].len > sites[i + 1].at;
                if (overlaps || prev_overlaps)
                        sites[i].keep = false;
                prev_overlaps = overlaps;
        }
}

static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
static const uint8_t nop6[6] = {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00};

/* Writes a NOP over each site kept in segment @g of @o. The pages are
 * writable only while the NOPs are written, and executable throughout (a
 * thread of the target may be running). */
static int patch_segment(const CmpObject *o, size_t g, const CmpSite *sites, size_t n,
                         unsigned *patched)
{
        uintptr_t lo = o->page_lo[g], hi = o->page_hi[g];
        size_t todo = 0;

        for (size_t i = 0; i < n; i++)
                todo += sites[i].keep && sites[i].at >= lo && sites[i].at + sites[i].len <= hi;
        if (!todo || lo == hi)
                return 0;
        if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                if (!sites[i].keep || sites[i].at < lo || sites[i].at + sites[i].len > hi)
                        continue;
                memcpy((void *)sites[i].at, sites[i].len == 5 ? nop5 : nop6, sites[i].len);
                (*patched)++;
        }
        if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC) < 0)
                return -errno;
        return 0;
}

/* Finds and removes @o's calls to idle hooks. */
static int patch_object(CmpObject *o, unsigned *patched)
{
        CmpSite *sites = NULL;
        size_t n = 0, cap = 0;
        int r;

        dl_iterate_phdr(gather_segments, o);
        find_stubs(o);
        r = find_calls(o, &sites, &n, &cap);
        if (r < 0)
                goto free_sites;
        drop_overlaps(sites, n);
        for (size_t g = 0; g < o->n_seg && r == 0; g++)
                r = patch_segment(o, g, sites, n, patched);
free_sites:
        free(sites);
        return r;
}

int cmpsites_patch_idle(void *handle, bool value_profile, unsigned *ret_patched)
{
        struct link_map *first = NULL;
        CmpScan s = {
            .idle = value_profile ? cmpsites_always : cmpsites_no_vp,
            .n_idle = value_profile ? sizeof(cmpsites_always) / sizeof(cmpsites_always[0])
                                    : sizeof(cmpsites_no_vp) / sizeof(cmpsites_no_vp[0]),
        };
        Dl_info self;
        unsigned patched = 0;

        if (dlinfo(handle, RTLD_DI_LINKMAP, &first) < 0 || !first ||
            !dladdr((void *)cmpsites_patch_idle, &self))
                return -EINVAL;
        s.own_base = (uintptr_t)self.dli_fbase;
        for (const struct link_map *lm = first; lm; lm = lm->l_next) {
                s.want = lm;
                s.obj = (CmpObject){.lm = lm};
                int r = selfbind_imports(handle, gather_slot, &s);
                if (r < 0)
                        return r;
                if (s.obj.n_slot == 0)
                        continue;
                r = patch_object(&s.obj, &patched);
                if (r < 0)
                        return r;
        }
        *ret_patched = patched;
        return 0;
}
