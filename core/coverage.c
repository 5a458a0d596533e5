/*
 * Counter regions are kept in registration order; a counter's place in the
 * shared map is its region's offset plus its index, which is the same in
 * every worker because every worker loads the same target the same way.
 *
 * The scan reads eight counters at a time and skips zero words, so an
 * execution costs one load per eight edges plus work proportional to the
 * edges it touched. Only touched words are written back (zeroed).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/coverage.h"

#include "snapfuzz/banned.h"

#define COVERAGE_MAX_REGIONS 512u
#define COVERAGE_MAX_GUARDS (1u << 22)

typedef struct CoverageRegion {
        uint8_t *start;
        size_t len;
        size_t offset;     /* into CoverageShared.seen */
        uint64_t *touched; /* its marked blocks (coverage_register_sparse_features), or NULL */
} CoverageRegion;

static CoverageRegion regions[COVERAGE_MAX_REGIONS];
static size_t n_regions;
static size_t n_counters;
static CoverageRegion *guard_region;
static size_t n_guards;
uint8_t *coverage_guard_counters;

static const uint8_t bucket_lut[256] = {
    [0] = 0,          [1] = 1,           [2] = 2,
    [3] = 4,          [4 ... 7] = 8,     [8 ... 15] = 16,
    [16 ... 31] = 32, [32 ... 127] = 64, [128 ... 255] = 128,
};

uint8_t coverage_bucket(uint8_t hits)
{
        return bucket_lut[hits];
}

int coverage_shared_create(void)
{
        CoverageShared *s = NULL;
        int r, fd = memfd_create("snapfuzz-coverage", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, sizeof(CoverageShared)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        r = coverage_shared_map(fd, &s);
        if (r < 0) {
                close(fd);
                return r;
        }
        /* The analyzer takes a successful mmap without an address hint to
         * possibly return NULL; it never does.
         * NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        s->magic = COVERAGE_MAGIC;
        coverage_shared_unmap(s);
        return fd;
}

int coverage_shared_map(int fd, CoverageShared **ret)
{
        void *p = mmap(NULL, sizeof(CoverageShared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        *ret = p;
        return 0;
}

void coverage_shared_unmap(CoverageShared *s)
{
        if (s)
                munmap(s, sizeof(CoverageShared));
}

static void add_region(uint8_t *start, size_t len, uint64_t *touched)
{
        if (len == 0 || n_regions == COVERAGE_MAX_REGIONS)
                return;
        /* Counters past the shared map's capacity are not tracked: such a
         * target still runs, it just gets no feedback from them. */
        if (n_counters + len > COVERAGE_MAX_COUNTERS)
                len = COVERAGE_MAX_COUNTERS - n_counters;
        if (len == 0)
                return;
        regions[n_regions++] =
            (CoverageRegion){.start = start, .len = len, .offset = n_counters, .touched = touched};
        n_counters += len;
}

void coverage_register_counters(uint8_t *start, uint8_t *stop)
{
        if (start && stop > start)
                add_region(start, (size_t)(stop - start), NULL);
}

/* The first counter of the feedback maps (registered last): counters from
 * here on make features but are not edges of the target. */
static size_t first_feature_counter = SIZE_MAX;

/* A feedback map's counters, dense (@touched NULL) or sparse. */
static void register_features(uint8_t *start, uint8_t *stop, uint64_t *touched)
{
        if (first_feature_counter == SIZE_MAX)
                first_feature_counter = n_counters;
        if (start && stop > start)
                add_region(start, (size_t)(stop - start), touched);
}

void coverage_register_features(uint8_t *start, uint8_t *stop)
{
        register_features(start, stop, NULL);
}

void coverage_register_sparse_features(uint8_t *start, uint8_t *stop, uint64_t *touched)
{
        register_features(start, stop, touched);
}

/* Unmarks every block of a sparse region (its marks: one bit per 64
 * counters). */
static void unmark_all(const CoverageRegion *r)
{
        memset(r->touched, 0, (r->len + 64 * 64 - 1) / (64 * 64) * sizeof(uint64_t));
}

void coverage_register_pcs(const uintptr_t *start, const uintptr_t *stop)
{
        /* The PC table maps counters back to code; it is not needed for
         * feedback. Kept as a registration point for coverage reports. */
        (void)start;
        (void)stop;
}

void coverage_register_guards(uint32_t *start, uint32_t *stop)
{
        if (!start || stop <= start || *start)
                return; /* already initialized by an earlier call for this module */
        size_t n = (size_t)(stop - start);
        if (!coverage_guard_counters) {
                void *p = mmap(NULL, COVERAGE_MAX_GUARDS, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (p == MAP_FAILED)
                        return;
                coverage_guard_counters = p;
        }
        if (n_guards + n + 1 > COVERAGE_MAX_GUARDS)
                return;
        /* Guard 0 means "disabled" to the instrumentation, so ids start at 1
         * and counter 0 of the array is never used. */
        for (size_t i = 0; i < n; i++)
                start[i] = (uint32_t)(n_guards + 1 + i);
        if (!guard_region) {
                add_region(coverage_guard_counters + 1, n, NULL);
                if (n_regions && regions[n_regions - 1].start == coverage_guard_counters + 1)
                        guard_region = &regions[n_regions - 1];
        } else if (guard_region == &regions[n_regions - 1]) {
                /* Guards of a later module extend the same array; the region
                 * can only grow while it is the last one registered. */
                guard_region->len += n;
                n_counters += n;
        } else {
                add_region(coverage_guard_counters + 1 + n_guards, n, NULL);
        }
        n_guards += n;
}

uint8_t coverage_tracepc_counters[COVERAGE_TRACEPC_COUNTERS];
uintptr_t coverage_tracepc_base;

void coverage_register_tracepc(uintptr_t base)
{
        static bool registered;
        if (registered)
                return;
        registered = true;
        coverage_tracepc_base = base;
        add_region(coverage_tracepc_counters, COVERAGE_TRACEPC_COUNTERS, NULL);
}

size_t coverage_counters(void)
{
        return n_counters;
}

size_t coverage_target_counters(void)
{
        return first_feature_counter < n_counters ? first_feature_counter : n_counters;
}

void coverage_clear(void)
{
        for (size_t i = 0; i < n_regions; i++) {
                memset(regions[i].start, 0, regions[i].len);
                if (regions[i].touched)
                        unmark_all(&regions[i]);
        }
}

/* Merges one non-zero counter into the shared map; returns the new bits. */
static size_t merge_counter(CoverageShared *s, size_t idx, uint8_t hits)
{
        uint8_t bucket = bucket_lut[hits];
        uint8_t *seen = &s->seen[idx];
        if (!(bucket & ~*seen))
                return 0;
        uint8_t old = __atomic_fetch_or(seen, bucket, __ATOMIC_RELAXED);
        uint8_t gained = bucket & (uint8_t)~old;
        if (!gained)
                return 0; /* another worker got there first */
        __atomic_fetch_add(&s->features, 1, __ATOMIC_RELAXED);
        if (!old && idx < first_feature_counter)
                __atomic_fetch_add(&s->edges, 1, __ATOMIC_RELAXED);
        return 1;
}

/* Eight counters at once: their buckets are looked up without a branch and
 * compared with the eight seen-bytes in one test, so a word with nothing
 * new (the common case) costs eight table loads and no per-byte branch.
 * Zeroes the counters. */
static inline size_t scan_word(CoverageShared *s, uint8_t *c, size_t idx)
{
        uint64_t w, seen;
        memcpy(&w, c, 8);
        memset(c, 0, 8);
        uint64_t b = (uint64_t)bucket_lut[w & 0xff] | (uint64_t)bucket_lut[(w >> 8) & 0xff] << 8 |
                     (uint64_t)bucket_lut[(w >> 16) & 0xff] << 16 |
                     (uint64_t)bucket_lut[(w >> 24) & 0xff] << 24 |
                     (uint64_t)bucket_lut[(w >> 32) & 0xff] << 32 |
                     (uint64_t)bucket_lut[(w >> 40) & 0xff] << 40 |
                     (uint64_t)bucket_lut[(w >> 48) & 0xff] << 48 |
                     (uint64_t)bucket_lut[w >> 56] << 56;
        memcpy(&seen, &s->seen[idx], 8);
        if (__builtin_expect(!(b & ~seen), 1))
                return 0;
        size_t found = 0;
        for (unsigned j = 0; j < 8; j++) {
                uint8_t hits = (uint8_t)(w >> (8 * j));
                if (hits)
                        found += merge_counter(s, idx + j, hits);
        }
        return found;
}

static inline bool block_is_zero(const uint8_t *p)
{
        typedef uint64_t Block __attribute__((vector_size(64), aligned(1)));
        Block b;
        memcpy(&b, p, 64);
        uint64_t w = b[0] | b[1] | b[2] | b[3] | b[4] | b[5] | b[6] | b[7];
        return w == 0;
}

/* The 64 counters at @c (their first at @idx of the map) word by word:
 * merges and zeroes every word with hits. */
static inline size_t scan_block(CoverageShared *s, uint8_t *c, size_t idx)
{
        size_t found = 0;
        for (unsigned k = 0; k < 8; k++) {
                uint64_t w;
                memcpy(&w, c + 8 * k, 8);
                if (w)
                        found += scan_word(s, c + 8 * k, idx + 8 * k);
        }
        return found;
}

/* The scalar scan of one region: 64-byte blocks, then words, then bytes. */
static size_t scan_region_scalar(CoverageShared *s, uint8_t *c, size_t len, size_t base)
{
        size_t found = 0, i = 0;

        /* Most of a large target's counters are zero after any one
         * execution: a 64-byte block is skipped with one test of its eight
         * words ORed together (kept in registers: the words are loaded
         * again only for a block that has hits). */
        for (; i + 64 <= len; i += 64)
                if (!block_is_zero(c + i))
                        found += scan_block(s, c + i, base + i);
        for (; i + 8 <= len; i += 8) {
                uint64_t w;
                memcpy(&w, c + i, 8);
                if (w)
                        found += scan_word(s, c + i, base + i);
        }
        for (; i < len; i++) {
                if (c[i]) {
                        found += merge_counter(s, base + i, c[i]);
                        c[i] = 0;
                }
        }
        return found;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define COVERAGE_HAVE_AVX2 1

/* The buckets of 32 hit counts at once, without a table in memory: a count
 * under 16 is classified by its low nibble, a larger one by its high
 * nibble (two in-register shuffles, then a blend on "high nibble zero"). */
__attribute__((target("avx2"))) static inline __m256i buckets32(__m256i v)
{
        const __m256i lo_lut =
            _mm256_setr_epi8(0, 1, 2, 4, 8, 8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16, 0, 1, 2, 4, 8,
                             8, 8, 8, 16, 16, 16, 16, 16, 16, 16, 16);
        const __m256i hi_lut = _mm256_setr_epi8(
            0, 32, 64, 64, 64, 64, 64, 64, (char)128, (char)128, (char)128, (char)128, (char)128,
            (char)128, (char)128, (char)128, 0, 32, 64, 64, 64, 64, 64, 64, (char)128, (char)128,
            (char)128, (char)128, (char)128, (char)128, (char)128, (char)128);
        const __m256i nib = _mm256_set1_epi8(0x0f);
        __m256i lo = _mm256_and_si256(v, nib);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
        __m256i from_hi = _mm256_shuffle_epi8(hi_lut, hi);
        __m256i from_lo = _mm256_shuffle_epi8(lo_lut, lo);
        __m256i hi_zero = _mm256_cmpeq_epi8(hi, _mm256_setzero_si256());
        return _mm256_or_si256(from_hi, _mm256_and_si256(from_lo, hi_zero));
}

/* The scan with 256-bit vectors: a 64-byte block with hits is classified
 * and compared with its 64 seen-bytes in registers, and zeroed with two
 * stores; only a block with something new goes the scalar way. */
__attribute__((target("avx2"))) static size_t scan_region_avx2(CoverageShared *s, uint8_t *c,
                                                               size_t len, size_t base)
{
        size_t found = 0, i = 0;
        const __m256i zero = _mm256_setzero_si256();

        for (; i + 64 <= len; i += 64) {
                __m256i a = _mm256_loadu_si256((const __m256i *)(c + i));
                __m256i b = _mm256_loadu_si256((const __m256i *)(c + i + 32));
                __m256i any = _mm256_or_si256(a, b);
                if (_mm256_testz_si256(any, any))
                        continue;
                const uint8_t *seen = &s->seen[base + i];
                __m256i na =
                    _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)seen), buckets32(a));
                __m256i nb = _mm256_andnot_si256(_mm256_loadu_si256((const __m256i *)(seen + 32)),
                                                 buckets32(b));
                __m256i fresh = _mm256_or_si256(na, nb);
                if (__builtin_expect(!_mm256_testz_si256(fresh, fresh), 0)) {
                        found += scan_block(s, c + i, base + i);
                        continue;
                }
                _mm256_storeu_si256((__m256i *)(c + i), zero);
                _mm256_storeu_si256((__m256i *)(c + i + 32), zero);
        }
        return found + scan_region_scalar(s, c + i, len - i, base + i);
}

#endif

typedef size_t (*ScanRegionFn)(CoverageShared *, uint8_t *, size_t, size_t);

/* Chosen once, on the first scan, by what the CPU can do (or by
 * coverage_use_vectors). */
static ScanRegionFn scan_region;

bool coverage_use_vectors(bool on)
{
        scan_region = scan_region_scalar;
#ifdef COVERAGE_HAVE_AVX2
        if (on && __builtin_cpu_supports("avx2")) {
                scan_region = scan_region_avx2;
                return true;
        }
#endif
        return false;
}

/* A sparse region's marked blocks, each scanned and unmarked. */
static size_t scan_sparse(CoverageShared *s, const CoverageRegion *r)
{
        size_t found = 0, words = (r->len + 64 * 64 - 1) / (64 * 64);
        for (size_t w = 0; w < words; w++) {
                uint64_t m = r->touched[w];
                if (!m)
                        continue;
                r->touched[w] = 0;
                for (; m; m &= m - 1) {
                        size_t at = (w * 64 + (size_t)__builtin_ctzll(m)) * 64;
                        if (at < r->len)
                                found += scan_region(s, r->start + at,
                                                     r->len - at < 64 ? r->len - at : 64,
                                                     r->offset + at);
                }
        }
        return found;
}

size_t coverage_scan(CoverageShared *s)
{
        size_t found = 0;

        if (__builtin_expect(!scan_region, 0))
                (void)coverage_use_vectors(true);
        for (size_t r = 0; r < n_regions; r++)
                found += regions[r].touched
                             ? scan_sparse(s, &regions[r])
                             : scan_region(s, regions[r].start, regions[r].len, regions[r].offset);
        return found;
}

size_t coverage_collect(CoverageShared *s, uint32_t *ids, size_t cap, size_t *ret_n)
{
        size_t found = 0, n = 0;

        for (size_t r = 0; r < n_regions; r++) {
                uint8_t *c = regions[r].start;
                size_t len = regions[r].len;
                size_t base = regions[r].offset;
                /* A sparse region's unmarked blocks are zero: it is read
                 * whole here (an input with new coverage, not every one). */
                if (regions[r].touched)
                        unmark_all(&regions[r]);
                for (size_t i = 0; i < len; i++) {
                        /* Skip 64 zero counters at a time (most of them). */
                        if ((i & 63) == 0 && i + 64 <= len && block_is_zero(c + i)) {
                                i += 63;
                                continue;
                        }
                        if (!c[i])
                                continue;
                        uint8_t hits = c[i];
                        c[i] = 0;
                        found += merge_counter(s, base + i, hits);
                        if (n < cap)
                                ids[n] = (uint32_t)((base + i) * 8 +
                                                    (unsigned)__builtin_ctz(bucket_lut[hits]));
                        n++;
                }
        }
        *ret_n = n;
        return found;
}

bool coverage_reaches(const uint32_t *ids, size_t n)
{
        size_t r = 0;
        for (size_t k = 0; k < n; k++) {
                size_t idx = ids[k] >> 3;
                /* The regions in order of offset: most lists are sorted. */
                if (r >= n_regions || idx < regions[r].offset)
                        r = 0;
                while (r < n_regions && idx >= regions[r].offset + regions[r].len)
                        r++;
                if (r == n_regions || idx < regions[r].offset)
                        return false;
                uint8_t hits = regions[r].start[idx - regions[r].offset];
                if (bucket_lut[hits] != 1u << (ids[k] & 7))
                        return false;
        }
        return true;
}
