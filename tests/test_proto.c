/*
 * The worker protocol (worker/proto.h): what a builder makes, its parser
 * reads back unchanged; the wire format is the one the worker has always
 * spoken; and every malformed value is refused with -EINVAL (and, for the
 * command line, a line that names the option) rather than read as a
 * default or a garbage number.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/proto.h"

/* ---- The command line ---- */

static WorkerArgs full_args(void)
{
        return (WorkerArgs){
            .target = "/tmp/some target.so",
            .cmd_fd = 3,
            .evt_fd = 6,
            .shm_fd = 7,
            .cov_fd = 2147483647,
            .max_len = 4096,
            .timeout_ms = 1200,
            .rss_limit_mb = 4294967295u,
            .sandbox = "log",
            .sandbox_policy = "{\"allow\":[\"openat\"]}",
            .value_profile = true,
            .detect_leaks = true,
            .runner_lifetime_ms = 250,
            .runner_batches = 12,
            .target_output = "discard",
            .output_log = "/tmp/out dir/logs/worker-2.log",
            .close_fd_mask = 3,
            .sanitizer_confirm = true,
        };
}

static int argc_of(char *const *argv)
{
        int n = 0;
        while (argv[n])
                n++;
        return n;
}

/* Parses a built command line as worker_main sees it (argv + 1). */
static int parse_built(const ProtoArgv *pa, unsigned flags, WorkerArgs *ret, char *err,
                       size_t errlen)
{
        return proto_args_parse(argc_of(pa->argv) - 1, pa->argv + 1, flags, ret, err, errlen);
}

Test(proto, a_built_command_line_parses_back_to_the_same_settings)
{
        WorkerArgs in = full_args(), out;
        ProtoArgv pa;
        char err[256] = "";

        cr_assert_eq(proto_args_build(&in, &pa), 0);
        cr_assert_str_eq(pa.argv[0], "snapfuzz");
        cr_assert_str_eq(pa.argv[1], "__worker");
        cr_assert_eq(parse_built(&pa, 0, &out, err, sizeof(err)), 0, "%s", err);
        cr_expect_str_eq(out.target, in.target);
        cr_expect_eq(out.cmd_fd, 3);
        cr_expect_eq(out.evt_fd, 6);
        cr_expect_eq(out.shm_fd, 7);
        cr_expect_eq(out.cov_fd, 2147483647);
        cr_expect_eq(out.max_len, 4096);
        cr_expect_eq(out.timeout_ms, 1200);
        cr_expect_eq(out.rss_limit_mb, 4294967295u);
        cr_expect_str_eq(out.sandbox, "log");
        cr_expect_str_eq(out.sandbox_policy, in.sandbox_policy);
        cr_expect(out.value_profile);
        cr_expect(out.detect_leaks);
        cr_expect_eq(out.runner_lifetime_ms, 250);
        cr_expect_eq(out.runner_batches, 12);
        cr_expect_str_eq(out.target_output, "discard");
        cr_expect_str_eq(out.output_log, in.output_log);
        cr_expect_eq(out.close_fd_mask, 3);
        cr_expect(out.sanitizer_confirm);
}

Test(proto, without_a_policy_or_mode_the_command_line_says_strict_and_no_policy)
{
        WorkerArgs in = full_args(), out;
        ProtoArgv pa;
        char err[256] = "";

        in.sandbox = NULL;
        in.sandbox_policy = NULL;
        in.value_profile = in.detect_leaks = in.sanitizer_confirm = false;
        cr_assert_eq(proto_args_build(&in, &pa), 0);
        for (int i = 0; pa.argv[i]; i++) {
                cr_expect_str_neq(pa.argv[i], "--sandbox-policy");
                /* Off is left out: a fuzzing worker's command line as before. */
                cr_expect_str_neq(pa.argv[i], "--sanitizer-confirm");
        }
        cr_assert_eq(parse_built(&pa, 0, &out, err, sizeof(err)), 0, "%s", err);
        cr_expect_str_eq(out.sandbox, "strict");
        cr_expect_null(out.sandbox_policy);
        cr_expect_not(out.value_profile);
        cr_expect_not(out.detect_leaks);
        cr_expect_not(out.sanitizer_confirm);
}

/* The libFuzzer drop-in's workers run the executable's own target. */
Test(proto, the_executables_own_target_is_named_self_and_reads_back)
{
        WorkerArgs in = full_args(), out;
        ProtoArgv pa;
        char err[256] = "";

        in.target = PROTO_TARGET_SELF;
        cr_assert_eq(proto_args_build(&in, &pa), 0);
        cr_assert_eq(parse_built(&pa, 0, &out, err, sizeof(err)), 0, "%s", err);
        cr_expect_str_eq(out.target, PROTO_TARGET_SELF);
        cr_expect_neq(PROTO_TARGET_SELF[0], '/', "a path could be taken for it");
}

Test(proto, a_command_line_is_not_built_from_settings_the_worker_would_refuse)
{
        ProtoArgv pa;
        WorkerArgs a = full_args();
        a.target = NULL;
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "no target");
        a = full_args();
        a.shm_fd = -1;
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "a negative descriptor");
        a = full_args();
        a.max_len = 0;
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "max_len 0");
        a = full_args();
        a.sandbox = "lax";
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "an unknown sandbox mode");
        a = full_args();
        a.target_output = "terminal";
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "an unknown output mode");
        a = full_args();
        a.close_fd_mask = 4;
        cr_expect_eq(proto_args_build(&a, &pa), -EINVAL, "a close_fd_mask over 3");
}

Test(proto, output_settings_left_out_mean_pass_and_nothing_closed)
{
        WorkerArgs in = full_args(), out;
        ProtoArgv pa;
        char err[256] = "";

        in.target_output = NULL;
        in.output_log = NULL;
        in.close_fd_mask = 0;
        cr_assert_eq(proto_args_build(&in, &pa), 0);
        for (int i = 0; pa.argv[i]; i++) {
                cr_expect_str_neq(pa.argv[i], "--target-output");
                cr_expect_str_neq(pa.argv[i], "--close-fd-mask");
        }
        cr_assert_eq(parse_built(&pa, 0, &out, err, sizeof(err)), 0, "%s", err);
        cr_expect_null(out.target_output);
        cr_expect_null(out.output_log);
        cr_expect_eq(out.close_fd_mask, 0);
}

/* A valid worker command line with option @opt's value replaced by @value
 * (or, @value NULL, the option and its value left out), parsed. */
static int parse_with(const char *opt, const char *value, unsigned flags, char *err, size_t errlen)
{
        const char *base[] = {"--target",        "t.so", "--cmd-fd",       "3",
                              "--evt-fd",        "4",    "--shm-fd",       "5",
                              "--cov-fd",        "6",    "--max-len",      "100",
                              "--timeout-ms",    "10",   "--sandbox",      "off",
                              "--value-profile", "0",    "--detect-leaks", "1"};
        char *argv[64];
        int n = 0;
        WorkerArgs out;

        argv[n++] = (char *)"__worker";
        for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i += 2) {
                if (strcmp(base[i], opt) == 0) {
                        if (!value)
                                continue;
                        argv[n++] = (char *)base[i];
                        argv[n++] = (char *)value;
                } else {
                        argv[n++] = (char *)base[i];
                        argv[n++] = (char *)base[i + 1];
                }
        }
        argv[n] = NULL;
        err[0] = '\0';
        return proto_args_parse(n, argv, flags, &out, err, errlen);
}

Test(proto, the_unchanged_sample_command_line_parses)
{
        char err[256];
        cr_assert_eq(parse_with("", NULL, 0, err, sizeof(err)), 0, "%s", err);
}

Test(proto, a_descriptor_that_is_negative_or_not_a_number_is_refused_by_name)
{
        static const char *bad[] = {
            "-1", "abc", "3x", "", " 3", "+3", "0x3", "2147483648", "99999999999999999999999"};
        char err[256];
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_expect_eq(parse_with("--evt-fd", bad[i], 0, err, sizeof(err)), -EINVAL,
                             "'%s' accepted", bad[i]);
                cr_expect(strstr(err, "--evt-fd") != NULL, "'%s': %s", bad[i], err);
        }
        cr_expect_eq(parse_with("--evt-fd", "2147483647", 0, err, sizeof(err)), 0, "%s", err);
}

Test(proto, numbers_out_of_their_range_are_refused)
{
        char err[256];
        cr_expect_eq(parse_with("--timeout-ms", "4294967296", 0, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "--timeout-ms") != NULL, "%s", err);
        cr_expect_eq(parse_with("--timeout-ms", "4294967295", 0, err, sizeof(err)), 0, "%s", err);
        cr_expect_eq(parse_with("--max-len", "0", 0, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "--max-len") != NULL, "%s", err);
        cr_expect_eq(parse_with("--max-len", "16777217", 0, err, sizeof(err)), -EINVAL);
        cr_expect_eq(parse_with("--max-len", "16777216", 0, err, sizeof(err)), 0, "%s", err);
        cr_expect_eq(parse_with("--max-len", "-100", 0, err, sizeof(err)), -EINVAL);
}

Test(proto, booleans_are_0_or_1_and_the_sandbox_a_known_mode)
{
        char err[256];
        cr_expect_eq(parse_with("--value-profile", "2", 0, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "--value-profile") != NULL, "%s", err);
        cr_expect_eq(parse_with("--detect-leaks", "yes", 0, err, sizeof(err)), -EINVAL);
        cr_expect_eq(parse_with("--sandbox", "lax", 0, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "--sandbox") != NULL, "%s", err);
}

Test(proto, a_missing_target_or_descriptor_is_named)
{
        static const char *required[] = {"--target", "--cmd-fd", "--evt-fd",
                                         "--shm-fd", "--cov-fd", "--max-len"};
        char err[256];
        for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
                cr_expect_eq(parse_with(required[i], NULL, 0, err, sizeof(err)), -EINVAL,
                             "without %s", required[i]);
                cr_expect(strstr(err, required[i]) && strstr(err, "missing"), "%s", err);
        }
        cr_expect_eq(parse_with("--target", "", 0, err, sizeof(err)), -EINVAL, "an empty target");
}

Test(proto, an_unknown_option_is_an_error_unless_the_caller_skips_them)
{
        char *argv[] = {"__worker", "--target",     "t.so",     "--cmd-fd", "3", "--evt-fd",
                        "4",        "--frobnicate", "--shm-fd", "--shm-fd", "5", "--cov-fd",
                        "6",        "--max-len",    "100",      NULL};
        int argc = argc_of(argv);
        WorkerArgs out;
        char err[256] = "";

        cr_expect_eq(proto_args_parse(argc, argv, 0, &out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "--frobnicate") != NULL, "%s", err);
        /* Skipped with its value (the next argument, here "--shm-fd"). */
        cr_assert_eq(proto_args_parse(argc, argv, PROTO_ARGS_SKIP_UNKNOWN, &out, err, sizeof(err)),
                     0, "%s", err);
        cr_expect_eq(out.shm_fd, 5);
        cr_expect_eq(out.max_len, 100);
}

Test(proto, a_repeated_option_a_missing_value_or_a_stray_argument_is_refused)
{
        char err[256] = "";
        WorkerArgs out;
        char *twice[] = {"__worker", "--target", "a.so", "--target", "b.so", NULL};
        cr_expect_eq(proto_args_parse(5, twice, 0, &out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "twice") != NULL, "%s", err);
        char *no_value[] = {"__worker", "--target", NULL};
        cr_expect_eq(proto_args_parse(2, no_value, 0, &out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "needs a value") != NULL, "%s", err);
        char *stray[] = {"__worker", "t.so", "--target", NULL};
        cr_expect_eq(proto_args_parse(3, stray, 0, &out, err, sizeof(err)), -EINVAL);
        cr_expect(strstr(err, "not an option") != NULL, "%s", err);
}

/* ---- "fuzz" ---- */

static RecordLayout layout_of(size_t max_len)
{
        RecordLayout l;
        cr_assert_eq(record_layout(max_len, &l), 0);
        return l;
}

static ProtoBatch full_batch(void)
{
        ProtoBatch b = {
            .batch_id = 7,
            .mode = RECORD_MODE_FUZZ,
            .iters = 1000,
            .seed = 0xdeadbeefcafef00dull,
            .chain_len = 4,
            .base_len = 10,
            .partner_len = 3,
            .table_len = 0,
            .first = 5,
            .cmp_gens = 2,
            .len_limit = 64,
            .has_weights = true,
            .n_reruns = 2,
            .reruns = {3, 9},
            .replay = true,
            .leak_watch = true,
            .leak_check = true,
            .quiet = true,
            .fresh = true,
            .packed = true,
        };
        for (unsigned i = 0; i < MUTATOR_WEIGHTS; i++)
                b.op_weights[i] = (uint8_t)(i * 8 + 1);
        return b;
}

static void expect_same_batch(const ProtoBatch *a, const ProtoBatch *b)
{
        cr_expect_eq(a->batch_id, b->batch_id);
        cr_expect_eq(a->mode, b->mode);
        cr_expect_eq(a->iters, b->iters);
        cr_expect_eq(a->seed, b->seed);
        cr_expect_eq(a->chain_len, b->chain_len);
        cr_expect_eq(a->base_len, b->base_len);
        cr_expect_eq(a->partner_len, b->partner_len);
        cr_expect_eq(a->table_len, b->table_len);
        cr_expect_eq(a->first, b->first);
        cr_expect_eq(a->cmp_gens, b->cmp_gens);
        cr_expect_eq(a->len_limit, b->len_limit);
        cr_expect_eq(a->has_weights, b->has_weights);
        cr_expect_arr_eq(a->op_weights, b->op_weights, MUTATOR_WEIGHTS);
        cr_expect_eq(a->n_reruns, b->n_reruns);
        cr_expect_arr_eq(a->reruns, b->reruns, a->n_reruns * sizeof(a->reruns[0]));
        cr_expect_eq(a->replay, b->replay);
        cr_expect_eq(a->leak_watch, b->leak_watch);
        cr_expect_eq(a->leak_check, b->leak_check);
        cr_expect_eq(a->quiet, b->quiet);
        cr_expect_eq(a->fresh, b->fresh);
        cr_expect_eq(a->packed, b->packed);
}

/* Builds @b, sends it through text (as the pipe does) and parses it. */
static int batch_round_trip(const ProtoBatch *b, const RecordLayout *l, ProtoBatch *ret)
{
        cJSON *m = NULL;
        cr_assert_eq(proto_batch_build(b, &m), 0);
        char *text = cJSON_PrintUnformatted(m);
        cJSON_Delete(m);
        cJSON *back = cJSON_Parse(text);
        free(text);
        int r = proto_batch_parse(back, l, ret);
        cJSON_Delete(back);
        return r;
}

Test(proto, a_batch_with_every_field_set_parses_back_unchanged)
{
        RecordLayout l = layout_of(4096);
        ProtoBatch in = full_batch(), out;
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        expect_same_batch(&in, &out);

        /* Every mode, and the largest numbers the wire carries exactly
         * (cJSON prints 15 significant digits; the seed goes as hex). */
        in.mode = RECORD_MODE_SEEDS;
        in.seed = UINT64_MAX;
        in.batch_id = in.iters = 999999999999999ull;
        in.chain_len = PROTO_CHAIN_MAX;
        in.base_len = in.partner_len = (uint32_t)l.area_len;
        in.table_len = RECORD_TABLE_BYTES;
        in.cmp_gens = RECORD_CMP_TABLES;
        in.n_reruns = RECORD_MAX_RERUNS;
        for (unsigned i = 0; i < RECORD_MAX_RERUNS; i++)
                in.reruns[i] = 1000 + i;
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        expect_same_batch(&in, &out);
        in.mode = RECORD_MODE_EXEC;
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        cr_expect_eq(out.mode, RECORD_MODE_EXEC);
}

Test(proto, a_plain_batch_leaves_its_defaults_off_the_wire)
{
        RecordLayout l = layout_of(4096);
        ProtoBatch in = {.batch_id = 1,
                         .mode = RECORD_MODE_EXEC,
                         .iters = 1,
                         .chain_len = 1,
                         .base_len = 5,
                         .first = 1},
                   out;
        cJSON *m = NULL;
        cr_assert_eq(proto_batch_build(&in, &m), 0);
        char *text = cJSON_PrintUnformatted(m);
        cr_expect_str_eq(text, "{\"type\":\"fuzz\",\"batch_id\":1,\"mode\":\"exec\",\"iters\":1,"
                               "\"seed\":\"0\",\"chain_len\":1,\"base_len\":5,\"partner_len\":0,"
                               "\"table_len\":0}");
        free(text);
        cJSON_Delete(m);
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        expect_same_batch(&in, &out);
}

/* The exact text the coordinator has always sent for full_batch() (the
 * keys in wproc_send_batch's order): the wire format does not change. */
Test(proto, a_full_batch_is_the_same_text_as_before)
{
        ProtoBatch in = full_batch();
        cJSON *m = NULL;
        cr_assert_eq(proto_batch_build(&in, &m), 0);
        char *text = cJSON_PrintUnformatted(m);
        cr_expect_str_eq(
            text,
            "{\"type\":\"fuzz\",\"batch_id\":7,\"mode\":\"fuzz\",\"iters\":1000,"
            "\"seed\":\"deadbeefcafef00d\",\"chain_len\":4,\"base_len\":10,\"partner_len\":3,"
            "\"table_len\":0,\"first\":5,\"replay\":true,\"cmp_gens\":2,\"len_limit\":64,"
            "\"op_weights\":\"0109111921293139414951596169717981899199a1a9b1b9c1c9d1d9e1e9f1f9\","
            "\"quiet\":true,\"leak_watch\":true,\"fresh\":true,\"packed\":true,"
            "\"reruns\":[3,9],\"leak_check\":true}");
        free(text);
        cJSON_Delete(m);
}

/* full_batch() as JSON with @key set to the JSON value @json (NULL: removed),
 * parsed for a 4096-byte layout. */
static int parse_batch_with(const char *key, const char *json)
{
        RecordLayout l = layout_of(4096);
        ProtoBatch in = full_batch(), out;
        cJSON *m = NULL;
        cr_assert_eq(proto_batch_build(&in, &m), 0);
        cJSON_DeleteItemFromObjectCaseSensitive(m, key);
        if (json) {
                cJSON *v = cJSON_Parse(json);
                cr_assert_not_null(v, "bad test value %s", json);
                cJSON_AddItemToObject(m, key, v);
        }
        int r = proto_batch_parse(m, &l, &out);
        cJSON_Delete(m);
        return r;
}

Test(proto, a_batch_with_a_bad_value_is_refused)
{
        static const struct {
                const char *key, *json;
        } bad[] = {
            {"type", "\"fuzzz\""},
            {"batch_id", NULL},
            {"batch_id", "-1"},
            {"batch_id", "\"7\""},
            {"iters", "0"},
            {"iters", "1.5"},
            {"iters", "1e300"},
            {"iters", NULL},
            {"mode", "\"bogus\""},
            {"mode", "3"},
            {"seed", "\"xyz\""},
            {"seed", "\"\""},
            {"seed", "\"1234567890abcdef0\""},
            {"seed", "12"},
            {"chain_len", "0"},
            {"chain_len", "1025"},
            {"base_len", "-1"},
            {"partner_len", "1e9"},
            {"table_len", "65537"},
            {"cmp_gens", "25"},
            {"len_limit", "-5"},
            {"op_weights", "\"0102\""},
            {"op_weights", "\"zz09111921293139414951596169717981899199a1a9b1b9c1c9d1d9e1e9f1f9\""},
            {"reruns", "[1, \"2\"]"},
            {"reruns", "[-1]"},
            {"reruns", "3"},
            {"replay", "1"},
            {"packed", "\"yes\""},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_expect_eq(parse_batch_with(bad[i].key, bad[i].json), -EINVAL, "%s: %s accepted",
                             bad[i].key, bad[i].json ? bad[i].json : "(missing)");
        cr_expect_eq(parse_batch_with("chain_len", "1024"), 0);

        /* The payload lengths against the record's areas. */
        RecordLayout l = layout_of(4096);
        char n[32];
        snprintf(n, sizeof(n), "%zu", l.area_len);
        cr_expect_eq(parse_batch_with("base_len", n), 0);
        cr_expect_eq(parse_batch_with("partner_len", n), 0);
        snprintf(n, sizeof(n), "%zu", l.area_len + 1);
        cr_expect_eq(parse_batch_with("base_len", n), -EINVAL);
        cr_expect_eq(parse_batch_with("partner_len", n), -EINVAL);
}

Test(proto, more_reruns_than_the_record_holds_are_refused_both_ways)
{
        ProtoBatch in = full_batch();
        cJSON *m = NULL;
        in.n_reruns = RECORD_MAX_RERUNS + 1;
        cr_expect_eq(proto_batch_build(&in, &m), -EINVAL);
        in.cmp_gens = RECORD_CMP_TABLES + 1;
        in.n_reruns = 0;
        cr_expect_eq(proto_batch_build(&in, &m), -EINVAL);

        char list[4096] = "[";
        for (unsigned i = 0; i <= RECORD_MAX_RERUNS; i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%u", i ? "," : "", i);
        strcat(list, "]");
        cr_expect_eq(parse_batch_with("reruns", list), -EINVAL);
}

Test(proto, a_length_limit_beyond_the_layout_means_none)
{
        RecordLayout l = layout_of(100);
        ProtoBatch in = full_batch(), out;
        in.len_limit = 101;
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        cr_expect_eq(out.len_limit, 0);
        in.len_limit = 100;
        cr_assert_eq(batch_round_trip(&in, &l, &out), 0);
        cr_expect_eq(out.len_limit, 100);
}

/* ---- "rebuild", "hello", "done"/"died", "error" ---- */

Test(proto, a_rebuild_says_from_where)
{
        cJSON *m = NULL;
        uint32_t how = 0;
        cr_assert_eq(proto_rebuild_build(RECORD_REBUILT_SEED, &m), 0);
        cr_expect(proto_is(m, PROTO_REBUILD));
        cr_expect_eq(proto_rebuild_parse(m, &how), 0);
        cr_expect_eq(how, RECORD_REBUILT_SEED);
        cJSON_Delete(m);
        cr_assert_eq(proto_rebuild_build(RECORD_REBUILT_SLOT, &m), 0);
        cr_expect_eq(proto_rebuild_parse(m, &how), 0);
        cr_expect_eq(how, RECORD_REBUILT_SLOT);
        cJSON_ReplaceItemInObject(m, "from", cJSON_CreateString("elsewhere"));
        cr_expect_eq(proto_rebuild_parse(m, &how), -EINVAL);
        cJSON_Delete(m);
        cr_expect_eq(proto_rebuild_build(0, &m), -EINVAL);
}

Test(proto, a_hello_parses_back_and_a_bad_one_is_refused)
{
        ProtoHello in = {.pid = 4242, .counters = 123456, .custom_mutator = true, .leaks = true},
                   out;
        cJSON *m = NULL;
        cr_assert_eq(proto_hello_build(&in, &m), 0);
        cr_assert_eq(proto_hello_parse(m, &out), 0);
        cr_expect_eq(out.pid, 4242);
        cr_expect_eq(out.counters, 123456);
        cr_expect(out.custom_mutator);
        cr_expect_not(out.custom_crossover);
        cr_expect(out.leaks);
        cJSON_ReplaceItemInObject(m, "counters", cJSON_CreateString("many"));
        cr_expect_eq(proto_hello_parse(m, &out), -EINVAL);
        cJSON_Delete(m);
        m = proto_msg_new(PROTO_PONG);
        cr_expect_eq(proto_hello_parse(m, &out), -EINVAL, "a pong is no hello");
        cJSON_Delete(m);
}

Test(proto, a_done_and_a_died_event_parse_back)
{
        ProtoEnd done = {.batch_id = 9,
                         .count = 500,
                         .iters = 500,
                         .finds = 3,
                         .new_features = 12,
                         .elapsed_ms = 20.5,
                         .forked = true,
                         .loop_ms = 19.25},
                 died = {.died = true,
                         .batch_id = 10,
                         .count = 17,
                         .iters = 500,
                         .elapsed_ms = 3,
                         .reason = "timeout",
                         .signal = 9,
                         .exit_code = -1,
                         .runner_state = 2},
                 out;
        cJSON *m = NULL;

        cr_assert_eq(proto_end_build(&done, &m), 0);
        cr_expect(proto_is(m, PROTO_DONE));
        cr_assert_eq(proto_end_parse(m, &out), 0);
        cr_expect_not(out.died);
        cr_expect_eq(out.batch_id, 9);
        cr_expect_eq(out.count, 500);
        cr_expect_eq(out.finds, 3);
        cr_expect_eq(out.new_features, 12);
        cr_expect_eq(out.elapsed_ms, 20.5);
        cr_expect(out.forked);
        cr_expect_eq(out.loop_ms, 19.25);
        cr_expect_null(cJSON_GetObjectItem(m, "reason"), "a done event has no reason");
        cJSON_Delete(m);

        cr_assert_eq(proto_end_build(&died, &m), 0);
        cr_expect(proto_is(m, PROTO_DIED));
        cr_assert_eq(proto_end_parse(m, &out), 0);
        cr_expect(out.died);
        cr_expect_eq(out.count, 17);
        cr_expect_str_eq(out.reason, "timeout");
        cr_expect_eq(out.signal, 9);
        cr_expect_eq(out.exit_code, -1);
        cr_expect_eq(out.runner_state, 2);
        cr_expect_null(cJSON_GetObjectItem(m, "exit_code"));
        cJSON_Delete(m);

        died.signal = 0;
        died.exit_code = 77;
        cr_assert_eq(proto_end_build(&died, &m), 0);
        cr_assert_eq(proto_end_parse(m, &out), 0);
        cr_expect_eq(out.signal, 0);
        cr_expect_eq(out.exit_code, 77);
        cr_expect_null(cJSON_GetObjectItem(m, "signal"));
        cJSON_Delete(m);
}

Test(proto, a_malformed_end_event_is_refused)
{
        ProtoEnd died = {.died = true, .count = 1, .iters = 1, .reason = "crash", .signal = 11},
                 out;
        cJSON *m = NULL;
        static const char *required[] = {"batch_id", "count",        "iters",
                                         "finds",    "new_features", "elapsed_ms",
                                         "forked",   "reason",       "runner_state"};
        for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
                cr_assert_eq(proto_end_build(&died, &m), 0);
                cJSON_DeleteItemFromObjectCaseSensitive(m, required[i]);
                cr_expect_eq(proto_end_parse(m, &out), -EINVAL, "without %s", required[i]);
                cJSON_Delete(m);
        }
        cr_assert_eq(proto_end_build(&died, &m), 0);
        cJSON_ReplaceItemInObject(m, "finds", cJSON_CreateNumber(RECORD_FINDS_SLOTS + 1));
        cr_expect_eq(proto_end_parse(m, &out), -EINVAL, "more finds than slots");
        cJSON_Delete(m);
        died.reason = NULL;
        cr_expect_eq(proto_end_build(&died, &m), -EINVAL, "a death without a reason");
}

Test(proto, an_error_event_says_what_and_why)
{
        cJSON *m = NULL;
        const char *what = NULL, *message = NULL;
        cr_assert_eq(proto_error_build(PROTO_WHAT_LOAD, "cannot open t.so", &m), 0);
        cr_assert_eq(proto_error_parse(m, &what, &message), 0);
        cr_expect_str_eq(what, "load");
        cr_expect_str_eq(message, "cannot open t.so");
        cJSON_DeleteItemFromObjectCaseSensitive(m, "message");
        cr_expect_eq(proto_error_parse(m, &what, &message), -EINVAL);
        cJSON_Delete(m);
}
