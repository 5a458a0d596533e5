/*
 * The replay record: the fixed, versioned, pointer-free layout of a worker's
 * shared memory (one memfd per worker, mapped by the coordinator, the worker,
 * its runner and, as a copy, the recovery helper).
 *
 *   offset 0                      RecordHeader   (RECORD_HEADER_SIZE)
 *   RECORD_DEATH_OFFSET           RecordDeath    (RECORD_DEATH_SIZE)
 *   layout.base_off               base input or list (area_len, 64-aligned)
 *   layout.partner_off            crossover input or list (area_len, 64-aligned)
 *   layout.table_off              mutation table (RECORD_TABLE_BYTES)
 *   layout.cmp_off                RECORD_CMP_TABLES frozen comparison tables
 *   layout.finds_off              RecordFinds + RECORD_FINDS_SLOTS slots
 *   layout.tokens_off             RecordTokens (for the automatic dictionary)
 *   layout.features_off           RecordFindFeatures per find slot (scheduling)
 *   layout.best_off               RecordBaseBest (for reductions)
 *
 * Invariant: the bytes of the input executed at iteration k of a batch are a
 * deterministic function of the record alone (header, base, partner, table,
 * comparison tables).
 * The runner increments `count` *before* each call into the target, so after
 * any death `count` names the input that was running (or had just run).
 *
 * Iteration k (1-based) in RECORD_MODE_FUZZ belongs to chain
 * c = (k-1) / chain_len at step s = (k-1) % chain_len; its input is the
 * chain's base (the batch's one base, or with RECORD_F_PACKED entry c mod nb
 * of its list: record_inputs_chain) with s+1 calls of mutator_mutate()
 * applied in sequence, starting from the PRNG saved in slot[c & 1]. The
 * runner writes slot[c & 1] before count reaches the chain's first
 * iteration, so the slot of the chain `count` is in is never being
 * written: a kill at any instruction leaves a usable record.
 * In RECORD_MODE_EXEC every iteration runs the base unmodified; in
 * RECORD_MODE_SEEDS the base is a list of inputs (record_seed_at) and
 * iteration k runs the k-th, unmodified: the warm-up pass over a corpus runs
 * many seeds per runner.
 *
 * Comparison tables (include/snapfuzz/cmptable.h) follow the same rule. At
 * the start of some chains the runner freezes its live table of comparison
 * operands as generation g = 1, 2, ... of the batch into record_cmp(g),
 * complete with the first chain that reads it and a checksum, then sets
 * cmp_gens = g, then writes the chain's slot, whose cmp_gen names the table
 * the chain's mutations read (0: none); a chain reads the newest table whose
 * chain is not after its own. A table is never written again during the
 * batch, so every chain's table stays in the record: replaying from the seed
 * and re-running a runner's history (RECORD_BATCH_REPLAY, which brings the
 * original's tables and freezes none) rebuild every input exactly.
 *
 * Torn or scribbled data is detectable: the batch description and payload
 * carry checksums written by the worker before the runner starts, and each
 * chain slot carries a checksum of its own.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "snapfuzz/cmptable.h"
#include "snapfuzz/mutator.h"
#include "snapfuzz/prng.h"

#define RECORD_MAGIC UINT64_C(0x3144524f43524653) /* "SFRCORD1" little-endian */
#define RECORD_VERSION 8u

#define RECORD_HEADER_SIZE 4096u
#define RECORD_DEATH_OFFSET RECORD_HEADER_SIZE
#define RECORD_DEATH_SIZE 4096u
#define RECORD_TABLE_BYTES (64u * 1024u)
#define RECORD_MAX_FRAMES 48u
#define RECORD_FINDS_SLOTS 64u
/* Iterations a runner runs twice: each find (for its features), and at
 * most RECORD_LEAK_RERUNS leak suspects. */
#define RECORD_LEAK_RERUNS 16u
#define RECORD_MAX_RERUNS (RECORD_FINDS_SLOTS + RECORD_LEAK_RERUNS)
#define RECORD_TOKEN_SLOTS 64u
/* Tables a batch can freeze: the runner freezes at chains 1, 2, 4, 8, ...,
 * so 24 outlast any batch the coordinator sends (at most 2^20 iterations). */
#define RECORD_CMP_TABLES 24u
#define RECORD_TOKEN_MAX CMPTABLE_MEM_MAX
#define RECORD_MAX_LEN_LIMIT (16u * 1024u * 1024u)

typedef enum RecordMode {
        RECORD_MODE_EXEC = 1,  /* run the base input unmodified */
        RECORD_MODE_FUZZ = 2,  /* mutate chains from the base input */
        RECORD_MODE_SEEDS = 3, /* the base is a list of inputs, run one per iteration */
} RecordMode;

static inline const char *record_mode_name(RecordMode m)
{
        return m == RECORD_MODE_EXEC ? "exec" : m == RECORD_MODE_SEEDS ? "seeds" : "fuzz";
}

/* A seed list is entries of [u32 length, little-endian][bytes]. Finds entry
 * @k (1-based) starting from byte offset *@cursor of entry *@cursor_k (pass
 * 0 and 1 to search from the start; the cursor moves to entry k, so walking
 * the list in order costs one step per entry). Returns 0, or -1 when the
 * list ends before entry k or is malformed. */
static inline int record_seed_at(const uint8_t *list, size_t list_len, uint64_t k, size_t *cursor,
                                 uint64_t *cursor_k, const uint8_t **ret, uint32_t *ret_len)
{
        size_t off = *cursor;
        uint64_t i = *cursor_k;
        if (k < i) {
                off = 0;
                i = 1;
        }
        for (;;) {
                if (off + 4 > list_len)
                        return -1;
                uint32_t n = (uint32_t)list[off] | (uint32_t)list[off + 1] << 8 |
                             (uint32_t)list[off + 2] << 16 | (uint32_t)list[off + 3] << 24;
                if (n > list_len - off - 4)
                        return -1;
                if (i == k) {
                        *cursor = off;
                        *cursor_k = i;
                        *ret = list + off + 4;
                        *ret_len = n;
                        return 0;
                }
                off += 4 + (size_t)n;
                i++;
        }
}

/* The inputs a fuzz batch mutates: its bases and partners as entries of
 * the record's base and partner areas (one each for a batch without
 * RECORD_F_PACKED). */
#define RECORD_PACK_MAX 256u

typedef struct RecordPack {
        uint32_t n;
        uint32_t off[RECORD_PACK_MAX];
        uint32_t len[RECORD_PACK_MAX];
} RecordPack;

typedef struct RecordInputs {
        const uint8_t *base_area;
        const uint8_t *partner_area;
        RecordPack bases;    /* at least one */
        RecordPack partners; /* none when the batch has no partner */
} RecordInputs;

/* Chain @chain's base and partner (NULL and 0 when there is none). */
static inline void record_inputs_chain(const RecordInputs *in, uint64_t chain, const uint8_t **base,
                                       size_t *base_len, const uint8_t **partner,
                                       size_t *partner_len)
{
        uint32_t nb = in->bases.n, np = in->partners.n;
        uint32_t b = (uint32_t)(chain % nb);
        *base = in->base_area + in->bases.off[b];
        *base_len = in->bases.len[b];
        if (np == 0) {
                *partner = NULL;
                *partner_len = 0;
                return;
        }
        uint32_t p = (uint32_t)((chain + chain / nb + 1) % np);
        *partner = in->partner_area + in->partners.off[p];
        *partner_len = in->partners.len[p];
}

typedef enum RecordRunnerState {
        RECORD_RUNNER_IDLE = 0,
        RECORD_RUNNER_STARTING = 1, /* forked, sandbox not yet in place */
        RECORD_RUNNER_RUNNING = 2,  /* in the loop */
        RECORD_RUNNER_DONE = 3,     /* every iteration ran; exiting on purpose */
        RECORD_RUNNER_FULL = 4,     /* the finds area filled up; exiting on purpose */
        /* Rebuilding another runner's input (wproc_rebuild), not fuzzing. */
        RECORD_RUNNER_REBUILDING = 5,
} RecordRunnerState;

typedef struct RecordChainSlot {
        SfPrng rng;       /* the PRNG before the chain's first mutation */
        uint64_t chain;   /* the chain's index */
        uint64_t cmp_gen; /* the comparison table the chain reads; 0: none */
        uint64_t check;   /* record_slot_check() of the three fields above */
} RecordChainSlot;

/* The input an iteration executed, as a length and a checksum. */
typedef struct RecordExecNote {
        uint64_t iteration;
        uint64_t check; /* record_exec_check() of the input */
        uint64_t len;
} RecordExecNote;

/* RecordHeader.flags: how the batch's mutations are made. With either
 * flag, a mutation calls into the target (its LLVMFuzzerCustomMutator or
 * LLVMFuzzerCustomCrossOver, core/custom.h), so inputs can be rebuilt only
 * where the target is loaded (replay_custom_at, in a runner). */
#define RECORD_F_CUSTOM_MUTATOR 1u
#define RECORD_F_CUSTOM_CROSSOVER 2u
#define RECORD_F_CUSTOM (RECORD_F_CUSTOM_MUTATOR | RECORD_F_CUSTOM_CROSSOVER)
/* A fuzz batch whose base and partner areas are lists (record_seed_at's
 * format) of up to RECORD_PACK_MAX inputs each: chain c mutates base entry
 * c mod nb and crosses over with partner entry (c + c / nb + 1) mod np
 * (record_inputs_chain), so one runner spreads its batch over many corpus
 * entries. Without it the areas hold one input each. */
#define RECORD_F_PACKED 4u

typedef struct RecordHeader {
        uint64_t magic;
        uint32_t version;
        uint32_t header_size; /* sizeof(RecordHeader), a layout check */

        /* The batch description, written by the worker before the runner
         * forks and never modified during the batch. */
        uint64_t batch_id;
        uint64_t iters; /* iterations the runner is asked to run */
        uint64_t seed;  /* the seed the first chain's PRNG came from */
        uint32_t mode;  /* RecordMode */
        uint32_t chain_len;
        uint32_t max_len; /* capacity of base and partner; the longest input */
        uint32_t base_len;
        uint32_t partner_len;
        uint32_t table_len;
        uint32_t mutator_version; /* MUTATOR_VERSION of the runner that wrote this */
        uint32_t flags;
        /* How the batch mutates (record_set_mutation): the longest input a
         * mutation may make is max(len_limit, base_len), at most max_len
         * (0: max_len); operator op is drawn in proportion to
         * op_weights[op] (all 0: every operator alike). */
        uint32_t len_limit;
        uint8_t op_weights[MUTATOR_WEIGHTS];
        uint64_t payload_check; /* record_payload_check() of base, partner, table */
        uint64_t desc_check;    /* record_desc_check() of the fields above */

        /* Written by the runner while it runs. */
        uint64_t count __attribute__((aligned(64)));
        RecordChainSlot slot[2];
        uint32_t runner_state; /* RecordRunnerState */
        int32_t runner_pid;
        uint64_t new_features; /* coverage features this batch added */
        /* Comparison tables 1..cmp_gens are complete: written by the
         * runner after each table and before the chain slot naming it, or
         * by the worker before the fork for a batch that brings its tables
         * (history replay). */
        uint32_t cmp_gens;
        uint32_t pad3;
        /* How long the runner's loop took (its finds' second runs
         * included), written when it ends: what the batch cost beyond that (fork, sandbox, exit)
         * sets how long the coordinator makes batches. Not part of the
         * replay record. */
        uint64_t loop_ns;

        /* Which iterations run, set by the worker before the fork. They do
         * not change any input's bytes (so they are outside desc_check):
         * iterations before first_exec are mutated but not executed, which
         * replays a runner's history from any point. */
        uint64_t first_exec;
        uint32_t batch_flags; /* RECORD_BATCH_* */
        uint32_t pad2;

        /* Written by the runner at the end of a fuzz batch, for the
         * coordinator's operator weights (not part of the replay record):
         * how often each operator was applied, and how often it was in the
         * last mutation step of an input that reached new coverage. */
        uint32_t op_applied[MUTATOR_WEIGHTS];
        uint32_t op_found[MUTATOR_WEIGHTS];
        /* RECORD_F_CUSTOM_* batches only: what iteration k executed,
         * written to exec[k & 1] before count becomes k (so the note of the
         * iteration `count` names is never being written), for recovery to
         * tell a rebuilt input from one that a custom mutator that is not
         * deterministic made differently. */
        RecordExecNote exec[2];
        /* Iterations the runner executed again right after their first run
         * (a find's second run, for its features; a leak suspect's,
         * RECORD_BATCH_LEAK_WATCH), each noted before it happens, in order:
         * part of the runner's history. An iteration listed twice ran three
         * times. A fuzzing runner writes them (and stops watching leaks
         * after RECORD_LEAK_RERUNS); for a history replay the worker writes
         * the dead runner's list, and the runner runs exactly those
         * iterations again. */
        uint32_t n_reruns;
        uint32_t pad4;
        uint64_t reruns[RECORD_MAX_RERUNS];
} RecordHeader;

/* Verification and history replay: no finds, no early stop when the finds
 * area is full. */
#define RECORD_BATCH_REPLAY 1u
/* An execution that allocates more than it frees is run once more; if it
 * does so again, the runner ends the batch as a leak suspect
 * (RECORD_DEATH_LEAK_SUSPECT), for the recovery helper to confirm. The
 * second run is part of the runner's history, so a history replay of the
 * batch carries the flag too. */
#define RECORD_BATCH_LEAK_WATCH 2u
/* After its execution, the runner asks LeakSanitizer for a check; a leak
 * ends it (RECORD_DEATH_LEAK, the report on its stderr). */
#define RECORD_BATCH_LEAK_CHECK 4u

/* After a runner rebuilt another runner's input (wproc_rebuild), finds slot
 * 0 holds it and its flags say how. */
#define RECORD_REBUILT_SLOT 1u /* from the chain's PRNG slot */
#define RECORD_REBUILT_SEED 2u /* from the batch's seed */

_Static_assert(sizeof(RecordHeader) <= RECORD_HEADER_SIZE, "header fits its page");
_Static_assert(offsetof(RecordHeader, magic) == 0, "magic first");
_Static_assert(offsetof(RecordHeader, batch_id) == 16, "stable layout");
_Static_assert(offsetof(RecordHeader, payload_check) == 112, "stable layout");
_Static_assert(offsetof(RecordHeader, count) == 128, "count on its own line");
_Static_assert(sizeof(RecordChainSlot) == 40, "slot layout");
_Static_assert(offsetof(RecordHeader, cmp_gens) == 232, "stable layout");
_Static_assert(sizeof(RecordExecNote) == 24, "exec note layout");

/* Written by the runner's signal handlers (async-signal-safe writes only),
 * read by the worker after the runner is gone. `valid` is set last. */
typedef struct RecordDeath {
        uint32_t valid; /* RECORD_DEATH_VALID once the fields below are complete */
        int32_t signal;
        int32_t code;       /* si_code */
        int32_t syscall_nr; /* SIGSYS from the sandbox: the blocked syscall, else -1 */
        uint64_t addr;      /* si_addr: the faulting address */
        uint64_t pc;        /* the faulting instruction */
        uint64_t syscall_args[6];
        uint64_t count; /* the record's count when the handler ran */
        uint32_t nframes;
        uint32_t reason; /* RecordDeathReason */
        uint32_t flags;  /* RECORD_DEATH_F_* */
        uint32_t pad;
        uint64_t frames[RECORD_MAX_FRAMES];
} RecordDeath;

#define RECORD_DEATH_VALID 0x44454144u   /* "DEAD" */
#define RECORD_DEATH_F_STACK_OVERFLOW 1u /* the fault hit next to the stack pointer */

typedef enum RecordDeathReason {
        RECORD_DEATH_SIGNAL = 1,       /* a fatal signal inside the target */
        RECORD_DEATH_STACKDUMP = 2,    /* the worker asked for a stack (timeout, oom) */
        RECORD_DEATH_OVERWRITE = 3,    /* the target wrote into its const input */
        RECORD_DEATH_LEAK = 4,         /* LeakSanitizer found a leak (RECORD_BATCH_LEAK_CHECK) */
        RECORD_DEATH_LEAK_SUSPECT = 5, /* twice more allocations than frees (LEAK_WATCH) */
} RecordDeathReason;

_Static_assert(sizeof(RecordDeath) <= RECORD_DEATH_SIZE, "death info fits its page");

/* Inputs that reached new coverage, appended by the runner. */
typedef struct RecordFindSlot {
        uint32_t len;
        uint32_t flags;
        uint64_t iteration;
        /* uint8_t data[max_len] follows, padded to 64 bytes */
} RecordFindSlot;

typedef struct RecordFinds {
        uint32_t capacity;
        uint32_t used; /* slots filled; written after the slot's data */
        uint64_t pad[7];
} RecordFinds;

/* RecordFindSlot.flags: the input reached no new coverage; it is there
 * only so that its features are known (a seed, run as it is). */
#define RECORD_FIND_F_KNOWN 1u
/* The input reached no new coverage, but every feature the corpus entry
 * its chain mutated is the best input for (RecordBaseBest), in fewer bytes:
 * it can stand in for that entry (libFuzzer's -reduce_inputs). */
#define RECORD_FIND_F_SMALLER 4u

_Static_assert(sizeof(RecordFindSlot) == 16, "find slot layout");
_Static_assert(sizeof(RecordFinds) == 64, "finds header layout");

/* Byte strings the runner's comparison mutations wrote into inputs that
 * then reached new coverage: candidates for the automatic dictionary.
 * Appended by the runner, like finds; not part of the replay record. */
typedef struct RecordToken {
        uint32_t len; /* 1..RECORD_TOKEN_MAX */
        uint32_t pad;
        uint8_t data[RECORD_TOKEN_MAX];
} RecordToken;

typedef struct RecordTokens {
        uint32_t capacity;
        uint32_t used; /* tokens filled; written after the token */
        uint64_t pad[7];
        RecordToken token[RECORD_TOKEN_SLOTS];
} RecordTokens;

/* The coverage features of find slot i, for the coordinator's scheduling:
 * written by the runner right after the find, when it runs it once more
 * and reads every (counter, hit-count bucket) the input reaches. A feature
 * id is counter * 8 + the bucket's bit (0..7). Not part of the replay
 * record; `complete` is set last, and a slot whose runner died before it
 * got there has only the count of zero. An input with more features than
 * a slot holds is never superseded (core/corpus.h), so the slot is sized
 * for real parsers: sqlite3's OSS-Fuzz harness reaches up to 6342 edges
 * in one input, and with 4096 ids 11% of its corpus stayed for good. */
#define RECORD_FIND_FEATURES 16384u

typedef struct RecordFindFeatures {
        uint32_t n;        /* ids filled, at most RECORD_FIND_FEATURES */
        uint32_t complete; /* RECORD_FEATURES_* once the slot is written */
        uint64_t exec_ns;  /* how long that execution took */
        uint32_t id[RECORD_FIND_FEATURES];
} RecordFindFeatures;

/* What each base of a fuzz batch is the best input for (core/corpus.h):
 * up to RECORD_BASE_BEST feature ids per base, in the order of the batch's
 * list, written by the coordinator with the batch (n 0 for a base with more,
 * or with features not all known). A mutated input shorter than its base
 * that reaches all of them, and nothing new, is handed back
 * (RECORD_FIND_F_SMALLER): it can stand in for the base, as libFuzzer's
 * -reduce_inputs replaces an input. Not part of the replay record: it
 * changes what is handed back, never what runs. */
#define RECORD_BASE_BEST 16u

typedef struct RecordBaseBest {
        uint32_t n; /* bases described: the list's length, or 0 (a replay, a seed batch) */
        uint32_t pad;
        struct {
                uint32_t n;
                uint32_t id[RECORD_BASE_BEST];
        } base[RECORD_PACK_MAX];
} RecordBaseBest;

#define RECORD_FEATURES_COMPLETE 0x46454154u  /* every feature of the input is in id[] */
#define RECORD_FEATURES_TRUNCATED 0x5452554eu /* it reached more than id[] holds */

_Static_assert(sizeof(RecordToken) == 8 + RECORD_TOKEN_MAX, "token layout");
_Static_assert(offsetof(RecordTokens, token) == 64, "tokens header layout");

/* Where each part of a worker's region lives, for a given max_len. */
/* The base and partner areas hold at least this much, whatever max_len:
 * a fuzz batch's list of bases (RECORD_F_PACKED) is picked by energy, and
 * an area of max_len would drop every pick after the first that does not
 * fit, the long entries first. */
#define RECORD_AREA_MIN (64u * 1024u)

typedef struct RecordLayout {
        size_t max_len;
        size_t area_len; /* capacity of the base and partner areas: max(max_len, RECORD_AREA_MIN) */
        size_t base_off;
        size_t partner_off;
        size_t table_off;
        size_t cmp_off;     /* page-aligned: the runner protects everything before it */
        size_t record_size; /* header + death + base + partner + table + cmp: the replay record */
        size_t finds_off;
        size_t find_slot_size;
        size_t tokens_off;
        size_t features_off; /* RECORD_FINDS_SLOTS RecordFindFeatures */
        size_t best_off;     /* RecordBaseBest */
        size_t region_size;  /* the whole region, finds, tokens and features included */
} RecordLayout;

/* Fills @ret for @max_len (1..RECORD_MAX_LEN_LIMIT). Returns 0 or -EINVAL. */
int record_layout(size_t max_len, RecordLayout *ret);

/* Accessors for a mapped region laid out by @l. */
static inline RecordHeader *record_header(void *region)
{
        return (RecordHeader *)region;
}
static inline RecordDeath *record_death(void *region)
{
        return (RecordDeath *)((uint8_t *)region + RECORD_DEATH_OFFSET);
}
static inline uint8_t *record_base(void *region, const RecordLayout *l)
{
        return (uint8_t *)region + l->base_off;
}
static inline uint8_t *record_partner(void *region, const RecordLayout *l)
{
        return (uint8_t *)region + l->partner_off;
}
static inline uint8_t *record_table(void *region, const RecordLayout *l)
{
        return (uint8_t *)region + l->table_off;
}
/* Comparison table @gen, 1..RECORD_CMP_TABLES. */
static inline CmpTable *record_cmp(void *region, const RecordLayout *l, uint64_t gen)
{
        return (CmpTable *)((uint8_t *)region + l->cmp_off) + (gen - 1);
}
static inline RecordTokens *record_tokens(void *region, const RecordLayout *l)
{
        return (RecordTokens *)((uint8_t *)region + l->tokens_off);
}
static inline RecordFindFeatures *record_find_features(void *region, const RecordLayout *l,
                                                       size_t i)
{
        return (RecordFindFeatures *)((uint8_t *)region + l->features_off) + i;
}
static inline RecordBaseBest *record_base_best(void *region, const RecordLayout *l)
{
        return (RecordBaseBest *)((uint8_t *)region + l->best_off);
}
static inline RecordFinds *record_finds(void *region, const RecordLayout *l)
{
        return (RecordFinds *)((uint8_t *)region + l->finds_off);
}
static inline RecordFindSlot *record_find_slot(void *region, const RecordLayout *l, size_t i)
{
        return (RecordFindSlot *)((uint8_t *)region + l->finds_off + sizeof(RecordFinds) +
                                  i * l->find_slot_size);
}

/* Checksums (64-bit, non-cryptographic: they detect tearing and wild
 * writes, not an adversary). */
uint64_t record_slot_check(const SfPrng *rng, uint64_t chain, uint64_t cmp_gen);
/* Covers the table's gen, chain, counts and entries in use, and the batch
 * id, so that a table left from an earlier batch never passes for this one. */
uint64_t record_cmp_check(const CmpTable *t, uint64_t batch_id);
uint64_t record_desc_check(const RecordHeader *h);
uint64_t record_payload_check(const void *region, const RecordLayout *l, const RecordHeader *h);

/* Worker side: writes a new batch description (the payload must already be
 * in place), resets count, slots, death info and finds, and seals the
 * checksums. first_exec and batch_flags are set afterwards. */
void record_begin_batch(void *region, const RecordLayout *l, uint64_t batch_id, RecordMode mode,
                        uint64_t iters, uint64_t seed, uint32_t chain_len, uint32_t base_len,
                        uint32_t partner_len, uint32_t table_len);

/* Worker side, right after record_begin_batch: sets how the batch mutates
 * (a length limit, 0 for none, and MUTATOR_WEIGHTS operator weights, NULL
 * for none) and seals the description again. */
void record_set_mutation(void *region, uint32_t len_limit, const uint8_t *weights);

/* The longest input a mutation of a chain whose base is @base_len long may
 * make: the len_limit, but never less than the base (a long corpus entry is
 * not cut) nor more than max_len. Runner and replay both use this. */
static inline size_t record_mutation_max_len(const RecordHeader *h, const RecordLayout *l,
                                             size_t base_len)
{
        size_t lim = h->len_limit;
        if (lim == 0 || lim > l->max_len)
                lim = l->max_len;
        if (lim < base_len)
                lim = base_len;
        return lim;
}

/* Reads the batch's bases and partners out of the region into @ret.
 * Returns 0, or -1 when a RECORD_F_PACKED list is malformed, empty, holds
 * more than RECORD_PACK_MAX entries or an entry longer than max_len. */
int record_inputs(const void *region, const RecordLayout *l, RecordInputs *ret);
/* Worker side, after record_begin_batch: sets the batch's RECORD_F_* flags
 * and seals the description again. */
void record_set_flags(void *region, uint32_t flags);

/* Runner side: saves the PRNG at the start of chain @chain, and the
 * generation of the comparison table its mutations read (0: none), which
 * must already be complete in record_cmp(region, l, cmp_gen) and counted in
 * cmp_gens. */
static inline void record_chain_begin(RecordHeader *h, const SfPrng *rng, uint64_t chain,
                                      uint64_t cmp_gen)
{
        RecordChainSlot *s = &h->slot[chain & 1];
        s->rng = *rng;
        s->chain = chain;
        s->cmp_gen = cmp_gen;
        s->check = record_slot_check(rng, chain, cmp_gen);
        /* The slot must be complete before count can enter the chain. */
        __atomic_signal_fence(__ATOMIC_RELEASE);
}

/* Checksum of an executed input, for RecordExecNote. */
uint64_t record_exec_check(const uint8_t *data, size_t len);

/* Runner side, custom mutators only: notes the input of iteration @k
 * before count becomes @k. */
static inline void record_exec_note(RecordHeader *h, uint64_t k, const uint8_t *data, size_t len)
{
        RecordExecNote *n = &h->exec[k & 1];
        n->iteration = k;
        n->check = record_exec_check(data, len);
        n->len = len;
        __atomic_signal_fence(__ATOMIC_RELEASE);
}

/* Whether @data is the input iteration @k executed, by the record's note:
 * 1 yes, 0 no, -1 the record has no note of iteration @k. */
static inline int record_exec_matches(const RecordHeader *h, uint64_t k, const uint8_t *data,
                                      size_t len)
{
        const RecordExecNote *n = &h->exec[k & 1];
        if (!(h->flags & RECORD_F_CUSTOM) || n->iteration != k)
                return -1;
        return n->len == len && n->check == record_exec_check(data, len);
}

/* Why a record cannot be replayed (record_validate's positive results are
 * never used; these are negative errno-style codes returned to callers). */
typedef enum RecordProblem {
        RECORD_OK = 0,
        RECORD_BAD_MAGIC,
        RECORD_BAD_VERSION, /* another record layout or another mutator version */
        RECORD_BAD_DESC,    /* the batch description's checksum fails */
        RECORD_BAD_PAYLOAD, /* base, partner or table changed during the batch */
        RECORD_BAD_SLOT,    /* the chain slot for `count` is torn or scribbled */
        RECORD_NO_INPUT,    /* count is 0: the runner died before its first call */
        RECORD_BAD_COUNT,   /* count is beyond the batch */
        RECORD_BAD_CMP,     /* a comparison table the replay needs is scribbled on */
        /* The mutations call the target's custom mutator: replay needs it. */
        RECORD_NEEDS_TARGET,
} RecordProblem;

/* Checks that the record at @region (laid out by @l) can be replayed for its
 * current count. */
RecordProblem record_validate(const void *region, const RecordLayout *l);

/* The comparison table a chain slot names: *ret is NULL for cmp_gen 0.
 * Returns RECORD_OK, or RECORD_BAD_CMP when that table is not intact or
 * not the slot's chain's. */
RecordProblem record_chain_cmp(const void *region, const RecordLayout *l, const RecordChainSlot *s,
                               const CmpTable **ret);

/* The comparison tables of a batch, checked once: tables[g - 1] is
 * generation g, for g in 1..n. */
typedef struct RecordCmpIndex {
        uint32_t n;
        const CmpTable *tables[RECORD_CMP_TABLES];
} RecordCmpIndex;

/* Checks tables 1..cmp_gens (gen, checksum, chains in increasing order)
 * and indexes them. Returns RECORD_OK or RECORD_BAD_CMP. */
RecordProblem record_cmp_index(const void *region, const RecordLayout *l, RecordCmpIndex *ret);

/* The table chain @chain reads: the newest whose chain is not after it;
 * NULL when there is none. */
const CmpTable *record_cmp_lookup(const RecordCmpIndex *ix, uint64_t chain);
const char *record_problem_str(RecordProblem p);
