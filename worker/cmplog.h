/*
 * Comparison feedback, the runner's side: the live table of recent
 * comparison operands that the trace-cmp callbacks and the interposed
 * memcmp family (worker/cmphooks.c) write while the target runs, and the
 * freezing of that table into the replay record at chain starts, where
 * mutations read it (include/snapfuzz/cmptable.h, snapfuzz/record.h).
 *
 * The recording functions are inline and run on every comparison the
 * target makes: one hashed slot write each, no lock, no allocation, no
 * syscall. A slot is picked by the comparison's call site and, for a
 * comparison against a constant, by the constant too, so that a switch or a
 * keyword loop fills several slots instead of overwriting one. A newer
 * comparison that lands on a taken slot replaces it: the table holds recent
 * operands, not all of them.
 *
 * Mutations never read the live table. It is process-private state of the
 * runner (a fork of the worker, so it starts as the worker's and is cleared
 * before the first input).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/cmptable.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

typedef struct CmpLog {
        CmpIntEntry ints[CMPTABLE_INTS]; /* width 0: free */
        CmpMemEntry mems[CMPTABLE_MEMS]; /* len_b 0: free */
        uint32_t switch_turn;            /* which case of a switch to record next */
} CmpLog;

extern CmpLog cmplog_live;

/* What the hooks do with a comparison: cmplog_mode is a set of these bits,
 * and zero (nothing at all) whenever the target is not running, so the
 * interposed memcmp family never records snapfuzz's own calls. */
enum {
        /* Record operands into the live table. The runner sets it for the
         * first input of some chains (cmplog_chain_records()): one mutation
         * away from the batch's base, so its operands most likely still
         * appear in the inputs that later chains mutate (an operand found in
         * the input is what input-to-state needs), where a deeper input's
         * operands are mostly its own mutations. */
        CMPLOG_RECORD = 1,
        /* Value profile (--use-value-profile): how close the operands came
         * is coverage, a feature per call site and distance in
         * cmplog_vp_map. Set for every input when enabled. */
        CMPLOG_VALUE_PROFILE = 2,
};

extern int cmplog_mode;

/* A recording input records from its first CMPLOG_RECORD_BUDGET
 * comparisons (equal or not), then runs on as if it did not record: a
 * decoder's inner loops compare millions of times an input, and recorded
 * each of them in a 128-slot table that its last few thousand decided.
 * On libjpeg-turbo, recording cost a quarter of the CPU time with a
 * sixteenth of the inputs recording. 2048 rather than 8192: recording
 * went from 5% of libxml2's runner CPU to 2% (sqlite3: 6% of it), and 10
 * minutes on libxml2 and sqlite3 covered as many branches or more
 * (bench/results/budget-2026-11-25.md). Whoever sets CMPLOG_RECORD sets
 * cmplog_record_left too. */
#ifndef CMPLOG_RECORD_BUDGET /* can be set at build time for A/B runs */
#define CMPLOG_RECORD_BUDGET 2048u
#endif
extern uint32_t cmplog_record_left;

/* Counts one comparison against the budget: true while it may be recorded. */
static inline bool cmplog_record_take(int mode)
{
        if (!(mode & CMPLOG_RECORD))
                return false;
        if (__builtin_expect(--cmplog_record_left == 0, 0))
                cmplog_mode = mode & ~CMPLOG_RECORD;
        return true;
}
/* CMPLOG_VALUE_PROFILE once cmplog_value_profile_enable() ran, else 0. */
extern int cmplog_value_profile;

/* 256 call-site buckets times 64 distances. Sites that share a bucket share
 * their distance features: with 64 buckets, the decisive check of
 * libFuzzer's FullCoverageSetTest shared one and the program was not found
 * in 30 s (libFuzzer: 10 s). A bucket is one 64-byte block, marked in
 * cmplog_vp_touched when written, so a scan reads the buckets an input
 * touched, not the whole map (coverage_register_sparse_features). */
#define CMPLOG_VP_SITE_BITS 8u
#define CMPLOG_VP_COUNTERS ((1u << CMPLOG_VP_SITE_BITS) * 64u)
extern uint8_t cmplog_vp_map[CMPLOG_VP_COUNTERS];
extern uint64_t cmplog_vp_touched[(1u << CMPLOG_VP_SITE_BITS) / 64u];

/* The target's load address: call sites are filed by their offset from
 * it, so that the same comparison lands in the same slot and the same
 * value-profile feature in every run, whatever address space layout the
 * run's processes got (a seeded run is reproducible with ASLR on). Set
 * once when the target is loaded (cmplog_set_base); call sites outside the
 * target keep a layout-dependent offset, which only costs them that. */
extern uintptr_t cmplog_pc_base;
void cmplog_set_base(uintptr_t base);

static inline size_t cmplog_slot(uintptr_t pc, uint64_t salt, unsigned bits)
{
        pc -= cmplog_pc_base;
        return (size_t)(((uint64_t)pc ^ (salt * UINT64_C(0xff51afd7ed558ccd))) *
                            UINT64_C(0x9e3779b97f4a7c15) >>
                        (64 - bits));
}

/* Marks the feature "the comparison at @pc came within @distance" (0..63:
 * differing bits for integers, matching leading bytes for strings). */
static inline void cmplog_vp(uintptr_t pc, unsigned distance)
{
        size_t site = cmplog_slot(pc, 0, CMPLOG_VP_SITE_BITS);
        cmplog_vp_map[(site << 6) | (distance & 63)] = 1;
        cmplog_vp_touched[site >> 6] |= UINT64_C(1) << (site & 63);
}

/* Equal comparisons, counted per call site: the feature "a comparison at
 * a call site in this bucket found its operands equal k times in one
 * input" for k = 1..CMPLOG_EQ_LEVELS-1, in CMPLOG_EQ_SITES rows of
 * CMPLOG_EQ_LEVELS bytes. A row's byte 0 counts (a hit counter like an
 * edge's: the hidden branch of a comparison compiled without one) and byte
 * k marks the count reached, so an input that makes one more comparison
 * come out equal than any before reaches a new feature.
 *
 * This is what finds a loop that counts matching bytes with branchless
 * compares (n += data[i] == key[i], compiled to sete): the loop has no
 * branch per byte, every byte is compared at the same call site, and the
 * compared values are not in the input at a place input-to-state can
 * find, so neither edges, nor the value profile (distance per site), nor
 * the comparison table see one more byte matching. Only one-byte
 * comparisons whose two operands are both computed (trace_cmp1, not
 * const_cmp1) count: those are the loops over two byte strings. Counting
 * wider ones too rewarded loop bounds that come out equal once per
 * record, and so longer inputs: tlv_parser's average input grew from 53
 * to 64 bytes and it ran 14% fewer executions per CPU-second. A
 * tokenizer's tests against constants are branches the edges already
 * count. Always on (cmplog_eq_enable()).
 *
 * The map is scanned after every input like the target's counters, so it
 * is small: 4096 bytes (with every width counted) cost tiny targets (3-4M
 * executions a second) 14-23% of their speed; 512 bytes, counting one-byte
 * comparisons only, 0-4% (bench/ab.sh, 3 trials). Sites share rows, and a count past
 * CMPLOG_EQ_LEVELS-1 (a key longer than 31 bytes) is not told apart. */
#define CMPLOG_EQ_SITES 16u
#define CMPLOG_EQ_LEVELS 32u
#define CMPLOG_EQ_COUNTERS (CMPLOG_EQ_SITES * CMPLOG_EQ_LEVELS)
extern uint8_t cmplog_eq_map[CMPLOG_EQ_COUNTERS];

static inline void cmplog_eq(uintptr_t pc)
{
        uint8_t *row = &cmplog_eq_map[cmplog_slot(pc, 1, 4) * CMPLOG_EQ_LEVELS];
        unsigned k = row[0];

        if (k < CMPLOG_EQ_LEVELS - 1) {
                row[0] = (uint8_t)(k + 1);
                row[k + 1] = 1;
        }
}

/* Registers cmplog_eq_map as coverage counters. Called once in a worker,
 * after the target's own counters are registered and before the value
 * profile's map, so counter offsets agree across workers. */
void cmplog_eq_enable(void);

/* Records an integer comparison of @width bytes made at @pc. Operands that
 * are already equal teach nothing and are skipped. For CMPTABLE_F_CONST, @b
 * is the constant. */
static inline void cmplog_int(uintptr_t pc, uint64_t a, uint64_t b, unsigned width, unsigned flags)
{
        _Static_assert(CMPTABLE_INTS == 128, "7 bits of slot index");
        int mode = cmplog_mode;

        if (__builtin_expect(mode == 0, 1))
                return;
        if (mode & CMPLOG_VALUE_PROFILE) {
                unsigned d = (unsigned)__builtin_popcountll(a ^ b);
                cmplog_vp(pc, d > 63 ? 63 : d);
        }
        if (!cmplog_record_take(mode) || a == b)
                return;
        CmpIntEntry *e = &cmplog_live.ints[cmplog_slot(pc, (flags & CMPTABLE_F_CONST) ? b : 0, 7)];
        e->a = a;
        e->b = b;
        e->width = (uint8_t)width;
        e->flags = (uint8_t)flags;
}

/* Records a byte-string comparison: @la bytes at @a against @lb bytes at @b
 * (each at most CMPTABLE_MEM_MAX; @la may be 0 for a needle). The slot
 * follows the call site and the first bytes of @b, usually the constant.
 * Only while CMPLOG_RECORD is set. */
static inline void cmplog_mem(uintptr_t pc, const uint8_t *a, size_t la, const uint8_t *b,
                              size_t lb, unsigned flags)
{
        _Static_assert(CMPTABLE_MEMS == 32, "5 bits of slot index");
        uint64_t salt = 0;
        size_t i;

        if (__builtin_expect(!cmplog_record_take(cmplog_mode), 1) || lb == 0)
                return;
        for (i = 0; i < lb && i < 8; i++)
                salt = (salt << 8) | b[i];
        CmpMemEntry *e = &cmplog_live.mems[cmplog_slot(pc, salt ^ lb, 5)];
        for (i = 0; i < la; i++)
                e->a[i] = a[i];
        for (i = 0; i < lb; i++)
                e->b[i] = b[i];
        e->len_a = (uint8_t)la;
        e->len_b = (uint8_t)lb;
        e->flags = (uint8_t)flags;
}

/* Registers cmplog_vp_map as coverage counters and turns value profile on
 * for every input from now on. Called once in a worker, after the target's
 * own counters are registered, so counter offsets agree across workers. */
void cmplog_value_profile_enable(void);

/* Forgets every recorded comparison. */
void cmplog_clear(void);

/* Copies the entries in use of @live into @ret (compacted, entries in use
 * first), as generation @gen of batch @batch_id, first read by chain
 * @chain, and seals its checksum. Returns the number of entries copied. */
size_t cmplog_freeze(const CmpLog *live, CmpTable *ret, uint32_t gen, uint64_t chain,
                     uint64_t batch_id);

/* The runner's comparison tables for one batch. A fuzzing batch freezes
 * the live table into the record at chains 1, 2, 4, 8, ... (often while the
 * batch is young, rarely once it has settled, and never more than
 * RECORD_CMP_TABLES times, so every table stays in the record). Operands
 * are recorded from the first input of every CMPLOG_RECORD_EVERY-th chain,
 * so that comparisons only some inputs reach still find their way into a
 * table, and of each of the CMPLOG_RECORD_CHAINS chains before a freeze, so
 * that the table is fresh: at most a sixteenth of the inputs pay for
 * recording once the batch has settled (half as many records found the
 * cmp_guard bug half as fast). Chain 0 reads no table (nothing of this
 * batch has run yet). A history replay (RECORD_BATCH_REPLAY) brings the
 * tables of the batch it replays and freezes none. */
#define CMPLOG_RECORD_EVERY 4u
#define CMPLOG_RECORD_CHAINS 8u

typedef struct CmpFreezer {
        void *region;
        const RecordLayout *layout;
        bool given;           /* the batch brought its tables */
        RecordCmpIndex index; /* those tables */
        uint32_t gen;         /* the newest table frozen; 0: none yet */
        uint64_t next_chain;  /* the next chain that freezes */
        const CmpTable *table;
} CmpFreezer;

void cmplog_freezer_init(CmpFreezer *f, void *region, const RecordLayout *l);

/* Called at the start of every chain, before record_chain_begin(): freezes
 * @live into the record when the schedule says so (and it holds anything),
 * and returns the table chain @chain reads (NULL: none), its generation in
 * *ret_gen. Writes only the next table and cmp_gens. */
const CmpTable *cmplog_chain_begin(CmpFreezer *f, const CmpLog *live, uint64_t chain,
                                   uint64_t *ret_gen);

/* Whether the first input of chain @chain should record its comparisons
 * (CMPLOG_RECORD): on every CMPLOG_RECORD_EVERY-th chain, and when a freeze
 * is near. */
bool cmplog_chain_records(const CmpFreezer *f, uint64_t chain);

/* Appends the byte strings in @trace (what the comparison operators wrote
 * into an input that reached new coverage) to the record's tokens area,
 * skipping ones already there. */
void cmplog_push_tokens(void *region, const RecordLayout *l, const MutatorTrace *trace);
