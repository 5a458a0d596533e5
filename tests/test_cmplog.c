/*
 * The live comparison table: what the hooks record and when, how a freeze
 * copies it into the record, the schedule of freezes, the tokens area, and
 * the value profile's features.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "worker/cmplog.h"
#include "snapfuzz/record.h"

static void fresh(void)
{
        cmplog_clear();
        cmplog_mode = 0;
        cmplog_record_left = CMPLOG_RECORD_BUDGET;
}

static size_t live_ints(void)
{
        size_t n = 0;
        for (size_t i = 0; i < CMPTABLE_INTS; i++)
                n += cmplog_live.ints[i].width != 0;
        return n;
}

Test(cmplog, nothing_is_recorded_unless_the_runner_says_so, .init = fresh)
{
        cmplog_int(0x100, 1, 2, 4, 0);
        cmplog_mem(0x200, (const uint8_t *)"ab", 2, (const uint8_t *)"cd", 2, 0);
        cr_expect_eq(live_ints(), 0);
        cmplog_mode = CMPLOG_VALUE_PROFILE; /* distances only */
        cmplog_int(0x100, 1, 2, 4, 0);
        cr_expect_eq(live_ints(), 0);
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 1, 2, 4, 0);
        cr_expect_eq(live_ints(), 1);
}

Test(cmplog, an_input_records_only_from_its_first_comparisons, .init = fresh)
{
        /* A decoder's inner loop: far more comparisons than the budget,
         * equal ones included, before the one at 0x900. */
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 1, 2, 4, 0);
        for (uint32_t k = 0; k < 2 * CMPLOG_RECORD_BUDGET; k++)
                cmplog_int(0x200, k & 1, 0, 4, 0);
        cmplog_int(0x900, 5, 6, 4, 0);
        cmplog_mem(0x400, (const uint8_t *)"ab", 2, (const uint8_t *)"cd", 2, 0);
        cr_expect_neq(cmplog_live.ints[cmplog_slot(0x100, 0, 7)].width, 0, "the first is kept");
        cr_expect_eq(cmplog_live.ints[cmplog_slot(0x900, 0, 7)].width, 0,
                     "nothing is recorded once the budget is spent");
        cr_expect_eq(cmplog_mode, 0, "the rest of the input takes the hooks' fast path");

        /* The next recording input has a budget of its own. */
        cmplog_record_left = CMPLOG_RECORD_BUDGET;
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x900, 5, 6, 4, 0);
        cr_expect_neq(cmplog_live.ints[cmplog_slot(0x900, 0, 7)].width, 0);
}

Test(cmplog, equal_operands_are_skipped_and_a_site_keeps_its_latest, .init = fresh)
{
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 7, 7, 4, 0);
        cr_expect_eq(live_ints(), 0);
        cmplog_int(0x100, 1, 9, 4, 0);
        cmplog_int(0x100, 2, 9, 4, 0);
        cr_expect_eq(live_ints(), 1, "one site, one slot");
        size_t i = cmplog_slot(0x100, 0, 7);
        cr_expect_eq(cmplog_live.ints[i].a, 2);
        cr_expect_eq(cmplog_live.ints[i].b, 9);
        cr_expect_eq(cmplog_live.ints[i].width, 4);
}

Test(cmplog, constants_of_one_site_get_slots_of_their_own, .init = fresh)
{
        /* A switch or a keyword loop compares one site with many constants. */
        cmplog_mode = CMPLOG_RECORD;
        for (uint64_t k = 0; k < 16; k++)
                cmplog_int(0x100, 1000, 0x10000 + k * 0x1111, 8, CMPTABLE_F_CONST);
        cr_expect_geq(live_ints(), 12, "only %zu slots for 16 constants", live_ints());
}

Test(cmplog, freezing_compacts_the_entries_in_use_and_seals_them, .init = fresh)
{
        static CmpTable t;
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 1, 2, 2, 0);
        cmplog_int(0x300, 3, 4, 8, CMPTABLE_F_CONST);
        cmplog_mem(0x400, (const uint8_t *)"abc", 3, (const uint8_t *)"hello", 5,
                   CMPTABLE_F_STRING);
        memset(&t, 0xee, sizeof(t));
        cr_assert_eq(cmplog_freeze(&cmplog_live, &t, 3, 17, 42), 3);
        cr_expect_eq(t.chain, 17);
        cr_expect_eq(t.gen, 3);
        cr_expect_eq(t.n_int, 2);
        cr_expect_eq(t.n_mem, 1);
        cr_expect_eq(t.check, record_cmp_check(&t, 42));
        cr_expect_eq(t.mems[0].len_a, 3);
        cr_expect_eq(t.mems[0].len_b, 5);
        cr_expect_eq(t.mems[0].flags, CMPTABLE_F_STRING);
        cr_expect_arr_eq(t.mems[0].a, "abc\0\0", 5, "unused bytes zeroed");
        cr_expect_arr_eq(t.mems[0].b, "hello\0", 6);

        /* A scribbled live length is clamped, never trusted. */
        for (size_t k = 0; k < CMPTABLE_MEMS; k++)
                if (cmplog_live.mems[k].len_b)
                        cmplog_live.mems[k].len_a = 200;
        cr_assert_eq(cmplog_freeze(&cmplog_live, &t, 4, 18, 42), 3);
        cr_expect_eq(t.mems[0].len_a, CMPTABLE_MEM_MAX);
}

Test(cmplog, freezes_double_and_keep_every_table, .init = fresh)
{
        RecordLayout l;
        cr_assert_eq(record_layout(64, &l), 0);
        void *region = calloc(1, l.region_size);
        record_begin_batch(region, &l, 9, RECORD_MODE_FUZZ, 100000, 1, 4, 0, 0, 0);
        CmpFreezer f;
        cmplog_freezer_init(&f, region, &l);
        uint64_t gen, last_gen = 0;
        int frozen_at[64], n = 0;

        /* Chain 0 reads nothing; with an empty live table nothing freezes. */
        cr_expect_null(cmplog_chain_begin(&f, &cmplog_live, 0, &gen));
        cr_expect_eq(gen, 0);
        cr_expect_null(cmplog_chain_begin(&f, &cmplog_live, 1, &gen));
        cr_expect_eq(record_header(region)->cmp_gens, 0);

        cmplog_mode = CMPLOG_RECORD;
        for (uint64_t c = 2; c < 5000; c++) {
                cmplog_int(0x100, c, 0xabcdef, 4, CMPTABLE_F_CONST);
                cr_expect_eq(cmplog_chain_records(&f, c),
                             c % CMPLOG_RECORD_EVERY == 0 ||
                                 c + CMPLOG_RECORD_CHAINS >= f.next_chain);
                const CmpTable *t = cmplog_chain_begin(&f, &cmplog_live, c, &gen);
                cr_assert_not_null(t);
                cr_assert_eq(t, record_cmp(region, &l, gen), "generation g lives in table g");
                cr_assert_eq(t->gen, gen);
                if (gen != last_gen) {
                        cr_assert_eq(gen, last_gen + 1);
                        cr_assert_eq(t->chain, c);
                        cr_assert_eq(record_header(region)->cmp_gens, gen);
                        frozen_at[n++] = (int)c;
                        last_gen = gen;
                }
        }
        static const int want[] = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
        cr_assert_eq(n, (int)(sizeof(want) / sizeof(want[0])));
        for (int i = 0; i < n; i++)
                cr_expect_eq(frozen_at[i], want[i], "freeze %d at chain %d", i, frozen_at[i]);

        /* Every table is still there, intact, and says which chains read
         * it. */
        RecordCmpIndex ix;
        cr_assert_eq(record_cmp_index(region, &l, &ix), RECORD_OK);
        cr_assert_eq(ix.n, (uint32_t)n);
        cr_expect_null(record_cmp_lookup(&ix, 1));
        cr_expect_eq(record_cmp_lookup(&ix, 2)->gen, 1);
        cr_expect_eq(record_cmp_lookup(&ix, 3)->gen, 1);
        cr_expect_eq(record_cmp_lookup(&ix, 100)->gen, 6);
        cr_expect_eq(record_cmp_lookup(&ix, 4999)->gen, 12);

        /* Hooks record in every few chains, and in each just before a
         * freeze. */
        cr_expect(!cmplog_chain_records(&f, 5001));
        cr_expect(cmplog_chain_records(&f, 5004));
        cr_expect(cmplog_chain_records(&f, 8192 - CMPLOG_RECORD_CHAINS + 1));
        free(region);
}

Test(cmplog, the_schedule_stops_when_the_tables_run_out, .init = fresh)
{
        RecordLayout l;
        cr_assert_eq(record_layout(64, &l), 0);
        void *region = calloc(1, l.region_size);
        record_begin_batch(region, &l, 9, RECORD_MODE_FUZZ, 100000, 1, 4, 0, 0, 0);
        CmpFreezer f;
        cmplog_freezer_init(&f, region, &l);
        uint64_t gen;

        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 1, 2, 4, 0);
        for (uint64_t c = 1; c < UINT64_C(1) << 40; c *= 2)
                (void)cmplog_chain_begin(&f, &cmplog_live, c, &gen);
        cr_expect_eq(gen, RECORD_CMP_TABLES);
        cr_expect_eq(record_header(region)->cmp_gens, RECORD_CMP_TABLES);
        cr_expect(!cmplog_chain_records(&f, UINT64_C(1) << 41));
        free(region);
}

Test(cmplog, a_history_replay_reads_the_tables_it_brings_and_freezes_none, .init = fresh)
{
        RecordLayout l;
        cr_assert_eq(record_layout(64, &l), 0);
        void *region = calloc(1, l.region_size);
        record_begin_batch(region, &l, 9, RECORD_MODE_FUZZ, 100000, 1, 4, 0, 0, 0);
        cmplog_mode = CMPLOG_RECORD;
        cmplog_int(0x100, 1, 2, 4, 0);
        cmplog_freeze(&cmplog_live, record_cmp(region, &l, 1), 1, 3, 9);
        cmplog_int(0x200, 5, 6, 4, 0);
        cmplog_freeze(&cmplog_live, record_cmp(region, &l, 2), 2, 10, 9);
        record_header(region)->cmp_gens = 2;
        record_header(region)->batch_flags = RECORD_BATCH_REPLAY;

        CmpFreezer f;
        cmplog_freezer_init(&f, region, &l);
        uint64_t gen;
        for (uint64_t c = 0; c < 40; c++) {
                const CmpTable *t = cmplog_chain_begin(&f, &cmplog_live, c, &gen);
                cr_expect_eq(gen, c < 3 ? 0 : c < 10 ? 1 : 2, "chain %lu", (unsigned long)c);
                cr_expect_eq(t, gen ? record_cmp(region, &l, gen) : NULL);
                cr_expect(!cmplog_chain_records(&f, c));
        }
        cr_expect_eq(record_header(region)->cmp_gens, 2);
        free(region);
}

Test(cmplog, tokens_are_appended_once_and_never_past_the_area, .init = fresh)
{
        RecordLayout l;
        cr_assert_eq(record_layout(64, &l), 0);
        void *region = calloc(1, l.region_size);
        record_begin_batch(region, &l, 9, RECORD_MODE_FUZZ, 10, 1, 4, 0, 0, 0);
        MutatorTrace tr = {.n = 2, .len = {4, 8}};
        memcpy(tr.bytes[0], "ABCD", 4);
        memcpy(tr.bytes[1], "SNAPFUZZ", 8);

        cmplog_push_tokens(region, &l, &tr);
        cmplog_push_tokens(region, &l, &tr);
        RecordTokens *t = record_tokens(region, &l);
        cr_assert_eq(t->used, 2);
        cr_expect_eq(t->token[1].len, 8);
        cr_expect_arr_eq(t->token[1].data, "SNAPFUZZ", 8);

        tr.n = 100; /* more than the trace holds: only its entries are read */
        for (uint32_t i = 0; i < 2 * RECORD_TOKEN_SLOTS; i++) {
                tr.len[0] = 4;
                memcpy(tr.bytes[0], &i, 4);
                cmplog_push_tokens(region, &l, &tr);
        }
        cr_expect_eq(t->used, RECORD_TOKEN_SLOTS);
        free(region);
}

Test(cmplog, value_profile_marks_site_and_distance, .init = fresh)
{
        memset(cmplog_vp_map, 0, sizeof(cmplog_vp_map));
        cmplog_mode = CMPLOG_VALUE_PROFILE;
        cmplog_int(0x100, 0xff, 0x0f, 4, 0); /* 4 bits apart */
        cmplog_int(0x100, 5, 5, 4, 0);       /* equal: distance 0, still a feature */
        size_t site = cmplog_slot(0x100, 0, CMPLOG_VP_SITE_BITS) << 6;
        cr_expect_eq(cmplog_vp_map[site + 4], 1);
        cr_expect_eq(cmplog_vp_map[site + 0], 1);
        size_t marked = 0;
        for (size_t i = 0; i < CMPLOG_VP_COUNTERS; i++)
                marked += cmplog_vp_map[i];
        cr_expect_eq(marked, 2);
        cr_expect_eq(live_ints(), 0, "value profile alone records no operands");
}
