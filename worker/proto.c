/*
 * The worker protocol's builders and parsers (worker/proto.h): the
 * `__worker` command line and the messages on the command and event pipes.
 *
 * Invariants: what a builder makes its parser accepts and reads back
 * unchanged (tests/test_proto.c checks every field), and the wire format is
 * the one the worker has always spoken: the same option names, the same
 * JSON keys, optional keys left out when they hold their default. A parser
 * never guesses: a value it cannot read exactly is -EINVAL. Nothing here
 * keeps state, so both ends and the tests can call it freely.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"
#include "worker/outsink.h"
#include "worker/proto.h"

#include "snapfuzz/banned.h"

bool proto_is(const cJSON *m, const char *type)
{
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "type");
        return cJSON_IsString(t) && t->valuestring && strcmp(t->valuestring, type) == 0;
}

cJSON *proto_msg_new(const char *type)
{
        cJSON *m = cJSON_CreateObject();
        if (m && !cJSON_AddStringToObject(m, "type", type)) {
                cJSON_Delete(m);
                return NULL;
        }
        return m;
}

/* ---- The command line ---- */

/* The options, in the order proto_args_build writes them. */
enum {
        ARG_TARGET,
        ARG_CMD_FD,
        ARG_EVT_FD,
        ARG_SHM_FD,
        ARG_COV_FD,
        ARG_MAX_LEN,
        ARG_TIMEOUT_MS,
        ARG_RSS_LIMIT_MB,
        ARG_SANDBOX,
        ARG_VALUE_PROFILE,
        ARG_DETECT_LEAKS,
        ARG_RUNNER_LIFETIME_MS,
        ARG_RUNNER_BATCHES,
        ARG_SANDBOX_POLICY,
        ARG_TARGET_OUTPUT,
        ARG_OUTPUT_LOG,
        ARG_CLOSE_FD_MASK,
        ARG_SANITIZER_CONFIRM,
        ARG__COUNT,
};

static const char *const arg_names[ARG__COUNT] = {
    [ARG_TARGET] = "--target",
    [ARG_CMD_FD] = "--cmd-fd",
    [ARG_EVT_FD] = "--evt-fd",
    [ARG_SHM_FD] = "--shm-fd",
    [ARG_COV_FD] = "--cov-fd",
    [ARG_MAX_LEN] = "--max-len",
    [ARG_TIMEOUT_MS] = "--timeout-ms",
    [ARG_RSS_LIMIT_MB] = "--rss-limit-mb",
    [ARG_SANDBOX] = "--sandbox",
    [ARG_VALUE_PROFILE] = "--value-profile",
    [ARG_DETECT_LEAKS] = "--detect-leaks",
    [ARG_RUNNER_LIFETIME_MS] = "--runner-lifetime-ms",
    [ARG_RUNNER_BATCHES] = "--runner-batches",
    [ARG_SANDBOX_POLICY] = "--sandbox-policy",
    [ARG_TARGET_OUTPUT] = "--target-output",
    [ARG_OUTPUT_LOG] = "--output-log",
    [ARG_CLOSE_FD_MASK] = "--close-fd-mask",
    [ARG_SANITIZER_CONFIRM] = "--sanitizer-confirm",
};

static bool sandbox_name_ok(const char *s)
{
        SandboxMode mode;
        return sandbox_mode_parse(s, &mode) == 0;
}

static bool output_name_ok(const char *s)
{
        OutsinkMode mode;
        return outsink_mode_parse(s, &mode) == 0;
}

int proto_args_build(const WorkerArgs *a, ProtoArgv *ret)
{
        const char *sandbox = a->sandbox ? a->sandbox : "strict";
        int n = 0, k = 0;

        if (!a->target || a->cmd_fd < 0 || a->evt_fd < 0 || a->shm_fd < 0 || a->cov_fd < 0 ||
            a->max_len == 0 || a->max_len > RECORD_MAX_LEN_LIMIT || !sandbox_name_ok(sandbox) ||
            a->close_fd_mask > 3 || (a->target_output && !output_name_ok(a->target_output)))
                return -EINVAL;
        snprintf(ret->num[0], sizeof(ret->num[0]), "%d", a->cmd_fd);
        snprintf(ret->num[1], sizeof(ret->num[1]), "%d", a->evt_fd);
        snprintf(ret->num[2], sizeof(ret->num[2]), "%d", a->shm_fd);
        snprintf(ret->num[3], sizeof(ret->num[3]), "%d", a->cov_fd);
        snprintf(ret->num[4], sizeof(ret->num[4]), "%zu", a->max_len);
        snprintf(ret->num[5], sizeof(ret->num[5]), "%u", a->timeout_ms);
        snprintf(ret->num[6], sizeof(ret->num[6]), "%u", a->rss_limit_mb);
        snprintf(ret->num[7], sizeof(ret->num[7]), "%u", a->runner_lifetime_ms);
        snprintf(ret->num[8], sizeof(ret->num[8]), "%u", a->close_fd_mask);
        snprintf(ret->num[9], sizeof(ret->num[9]), "%u", a->runner_batches);

        const char *values[ARG__COUNT] = {
            [ARG_TARGET] = a->target,
            [ARG_CMD_FD] = ret->num[0],
            [ARG_EVT_FD] = ret->num[1],
            [ARG_SHM_FD] = ret->num[2],
            [ARG_COV_FD] = ret->num[3],
            [ARG_MAX_LEN] = ret->num[4],
            [ARG_TIMEOUT_MS] = ret->num[5],
            [ARG_RSS_LIMIT_MB] = ret->num[6],
            [ARG_SANDBOX] = sandbox,
            [ARG_VALUE_PROFILE] = a->value_profile ? "1" : "0",
            [ARG_DETECT_LEAKS] = a->detect_leaks ? "1" : "0",
            [ARG_RUNNER_LIFETIME_MS] = ret->num[7],
            [ARG_RUNNER_BATCHES] = a->runner_batches ? ret->num[9] : NULL, /* 0: left out */
            [ARG_SANDBOX_POLICY] = a->sandbox_policy,                      /* NULL: left out */
            [ARG_TARGET_OUTPUT] = a->target_output,                        /* NULL: left out */
            [ARG_OUTPUT_LOG] = a->output_log,                              /* NULL: left out */
            [ARG_CLOSE_FD_MASK] = a->close_fd_mask ? ret->num[8] : NULL,
            [ARG_SANITIZER_CONFIRM] = a->sanitizer_confirm ? "1" : NULL, /* off: left out */
        };
        _Static_assert(2 + 2 * ARG__COUNT + 1 <= PROTO_ARGV_MAX, "argv fits");
        ret->argv[n++] = (char *)"snapfuzz";
        ret->argv[n++] = (char *)"__worker";
        for (k = 0; k < ARG__COUNT; k++) {
                if (!values[k])
                        continue;
                ret->argv[n++] = (char *)arg_names[k];
                ret->argv[n++] = (char *)values[k];
        }
        ret->argv[n] = NULL;
        return 0;
}

/* A decimal number 0..@max: digits only, no sign, no blanks. */
static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*s)
                return -EINVAL;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                unsigned d = (unsigned)(*s - '0');
                if (v > (max - d) / 10)
                        return -EINVAL;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

/* Stores the number @value for option @k (a descriptor or an unsigned
 * count) in @a. 0, or -EINVAL with @err written. */
static int args_set_number(WorkerArgs *a, int k, const char *value, char *err, size_t errlen)
{
        bool fd = k == ARG_CMD_FD || k == ARG_EVT_FD || k == ARG_SHM_FD || k == ARG_COV_FD;
        uint64_t v, max = fd ? INT_MAX : UINT_MAX;

        if (parse_u64(value, max, &v) < 0) {
                snprintf(err, errlen, "%s: '%.64s' is not %s from 0 to %llu", arg_names[k], value,
                         fd ? "a descriptor" : "a number", (unsigned long long)max);
                return -EINVAL;
        }
        switch (k) {
        case ARG_CMD_FD:
                a->cmd_fd = (int)v;
                break;
        case ARG_EVT_FD:
                a->evt_fd = (int)v;
                break;
        case ARG_SHM_FD:
                a->shm_fd = (int)v;
                break;
        case ARG_COV_FD:
                a->cov_fd = (int)v;
                break;
        case ARG_TIMEOUT_MS:
                a->timeout_ms = (unsigned)v;
                break;
        case ARG_RSS_LIMIT_MB:
                a->rss_limit_mb = (unsigned)v;
                break;
        case ARG_RUNNER_LIFETIME_MS:
                a->runner_lifetime_ms = (unsigned)v;
                break;
        case ARG_RUNNER_BATCHES:
                a->runner_batches = (unsigned)v;
                break;
        case ARG_CLOSE_FD_MASK:
                if (v > 3) {
                        snprintf(err, errlen, "%s: '%.64s' is not 0, 1, 2 or 3", arg_names[k],
                                 value);
                        return -EINVAL;
                }
                a->close_fd_mask = (unsigned)v;
                break;
        }
        return 0;
}

/* Stores @value for option @k in @a. 0, or -EINVAL with @err written. */
static int args_set(WorkerArgs *a, int k, const char *value, char *err, size_t errlen)
{
        uint64_t v;

        switch (k) {
        case ARG_TARGET:
                if (!*value) {
                        snprintf(err, errlen, "%s: the target's path is empty", arg_names[k]);
                        return -EINVAL;
                }
                a->target = value;
                return 0;
        case ARG_SANDBOX:
                if (!sandbox_name_ok(value)) {
                        snprintf(err, errlen, "%s: '%.64s' is not strict, log or off", arg_names[k],
                                 value);
                        return -EINVAL;
                }
                a->sandbox = value;
                return 0;
        case ARG_SANDBOX_POLICY:
                a->sandbox_policy = value;
                return 0;
        case ARG_TARGET_OUTPUT:
                if (!output_name_ok(value)) {
                        snprintf(err, errlen, "%s: '%.64s' is not pass, log or discard",
                                 arg_names[k], value);
                        return -EINVAL;
                }
                a->target_output = value;
                return 0;
        case ARG_OUTPUT_LOG:
                if (!*value) {
                        snprintf(err, errlen, "%s: the log's path is empty", arg_names[k]);
                        return -EINVAL;
                }
                a->output_log = value;
                return 0;
        case ARG_VALUE_PROFILE:
        case ARG_DETECT_LEAKS:
        case ARG_SANITIZER_CONFIRM:
                if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
                        snprintf(err, errlen, "%s: '%.64s' is not 0 or 1", arg_names[k], value);
                        return -EINVAL;
                }
                *(k == ARG_VALUE_PROFILE  ? &a->value_profile
                  : k == ARG_DETECT_LEAKS ? &a->detect_leaks
                                          : &a->sanitizer_confirm) = value[0] == '1';
                return 0;
        case ARG_MAX_LEN:
                if (parse_u64(value, RECORD_MAX_LEN_LIMIT, &v) < 0 || v == 0) {
                        snprintf(err, errlen, "%s: '%.64s' is not a length from 1 to %u",
                                 arg_names[k], value, RECORD_MAX_LEN_LIMIT);
                        return -EINVAL;
                }
                a->max_len = (size_t)v;
                return 0;
        default:
                return args_set_number(a, k, value, err, errlen);
        }
}

int proto_args_parse(int argc, char *const *argv, unsigned flags, WorkerArgs *ret, char *err,
                     size_t errlen)
{
        WorkerArgs a = {.cmd_fd = -1, .evt_fd = -1, .shm_fd = -1, .cov_fd = -1};
        bool seen[ARG__COUNT] = {false};

        for (int i = 1; i < argc; i += 2) {
                const char *opt = argv[i];
                int k = 0;
                if (strncmp(opt, "--", 2) != 0) {
                        snprintf(err, errlen, "'%.64s' is not an option", opt);
                        return -EINVAL;
                }
                if (i + 1 >= argc) {
                        snprintf(err, errlen, "%.64s needs a value", opt);
                        return -EINVAL;
                }
                while (k < ARG__COUNT && strcmp(opt, arg_names[k]) != 0)
                        k++;
                if (k == ARG__COUNT) {
                        if (flags & PROTO_ARGS_SKIP_UNKNOWN)
                                continue;
                        snprintf(err, errlen, "unknown option %.64s", opt);
                        return -EINVAL;
                }
                if (seen[k]) {
                        snprintf(err, errlen, "%s is given twice", arg_names[k]);
                        return -EINVAL;
                }
                seen[k] = true;
                int r = args_set(&a, k, argv[i + 1], err, errlen);
                if (r < 0)
                        return r;
        }
        static const int required[] = {ARG_TARGET, ARG_CMD_FD, ARG_EVT_FD,
                                       ARG_SHM_FD, ARG_COV_FD, ARG_MAX_LEN};
        for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
                if (!seen[required[i]]) {
                        snprintf(err, errlen, "%s is missing", arg_names[required[i]]);
                        return -EINVAL;
                }
        *ret = a;
        return 0;
}

/* ---- Reading fields ---- */

/* The largest integer a JSON number (a double) holds exactly. */
#define JSON_INT_MAX 9007199254740992.0 /* 2^53 */

/* An optional whole number 0..@max under @key: *@ret untouched when the
 * key is absent. -EINVAL when it is not a number, not whole, or out of
 * range. */
static int get_uint(const cJSON *m, const char *key, uint64_t max, uint64_t *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        if (!v)
                return 0;
        double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
        if (!(d >= 0) || d > JSON_INT_MAX || d > (double)max || d != (double)(uint64_t)d)
                return -EINVAL;
        *ret = (uint64_t)d;
        return 0;
}

/* get_uint for a key that must be there. */
static int need_uint(const cJSON *m, const char *key, uint64_t max, uint64_t *ret)
{
        if (!cJSON_GetObjectItemCaseSensitive(m, key))
                return -EINVAL;
        return get_uint(m, key, max, ret);
}

/* An optional boolean: -EINVAL when present and not true or false. */
static int get_bool(const cJSON *m, const char *key, bool *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        if (!v)
                return 0;
        if (!cJSON_IsBool(v))
                return -EINVAL;
        *ret = cJSON_IsTrue(v);
        return 0;
}

/* An optional number (any finite value). */
static int get_num(const cJSON *m, const char *key, double *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        if (!v)
                return 0;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
                return -EINVAL;
        *ret = v->valuedouble;
        return 0;
}

/* get_num for a key that must be there. */
static int need_num(const cJSON *m, const char *key, double *ret)
{
        if (!cJSON_GetObjectItemCaseSensitive(m, key))
                return -EINVAL;
        return get_num(m, key, ret);
}

/* A boolean that must be there. */
static int need_bool(const cJSON *m, const char *key, bool *ret)
{
        if (!cJSON_GetObjectItemCaseSensitive(m, key))
                return -EINVAL;
        return get_bool(m, key, ret);
}

/* A string that must be there. */
static int need_str(const cJSON *m, const char *key, const char **ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);
        if (!cJSON_IsString(v) || !v->valuestring)
                return -EINVAL;
        *ret = v->valuestring;
        return 0;
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* ---- "fuzz" ---- */

/* Adds @key as a number when @v is not @def (the wire leaves defaults out). */
static bool add_uint_unless(cJSON *m, const char *key, uint64_t v, uint64_t def)
{
        return v == def || cJSON_AddNumberToObject(m, key, (double)v);
}

static bool add_true(cJSON *m, const char *key, bool v)
{
        return !v || cJSON_AddBoolToObject(m, key, 1);
}

int proto_batch_build(const ProtoBatch *b, cJSON **ret)
{
        char seed[24], hex[2 * MUTATOR_WEIGHTS + 1];
        bool ok;

        if (b->n_reruns > RECORD_MAX_RERUNS || b->cmp_gens > RECORD_CMP_TABLES)
                return -EINVAL;
        cJSON *m = proto_msg_new(PROTO_FUZZ);
        if (!m)
                return -ENOMEM;
        snprintf(seed, sizeof(seed), "%llx", (unsigned long long)b->seed);
        ok = cJSON_AddNumberToObject(m, "batch_id", (double)b->batch_id) &&
             cJSON_AddStringToObject(m, "mode", record_mode_name(b->mode)) &&
             cJSON_AddNumberToObject(m, "iters", (double)b->iters) &&
             cJSON_AddStringToObject(m, "seed", seed) &&
             cJSON_AddNumberToObject(m, "chain_len", b->chain_len) &&
             cJSON_AddNumberToObject(m, "base_len", b->base_len) &&
             cJSON_AddNumberToObject(m, "partner_len", b->partner_len) &&
             cJSON_AddNumberToObject(m, "table_len", b->table_len);
        ok = ok && (b->first <= 1 || cJSON_AddNumberToObject(m, "first", (double)b->first));
        ok = ok && add_true(m, "replay", b->replay) &&
             add_uint_unless(m, "cmp_gens", b->cmp_gens, 0) &&
             add_uint_unless(m, "len_limit", b->len_limit, 0);
        if (ok && b->has_weights) {
                for (unsigned i = 0; i < MUTATOR_WEIGHTS; i++)
                        snprintf(hex + 2 * i, 3, "%02x", b->op_weights[i]);
                ok = cJSON_AddStringToObject(m, "op_weights", hex) != NULL;
        }
        ok = ok && add_true(m, "quiet", b->quiet) && add_true(m, "leak_watch", b->leak_watch) &&
             add_true(m, "fresh", b->fresh) && add_true(m, "packed", b->packed);
        if (ok && b->n_reruns) {
                cJSON *list = cJSON_AddArrayToObject(m, "reruns");
                ok = list != NULL;
                for (uint32_t i = 0; ok && i < b->n_reruns; i++) {
                        cJSON *n = cJSON_CreateNumber((double)b->reruns[i]);
                        ok = n && cJSON_AddItemToArray(list, n);
                }
        }
        ok = ok && add_true(m, "leak_check", b->leak_check);
        if (!ok) {
                cJSON_Delete(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

/* The seed: at most 16 hex digits. */
static int parse_seed(const cJSON *m, uint64_t *ret)
{
        const char *s;
        uint64_t v = 0;
        size_t n;

        if (need_str(m, "seed", &s) < 0)
                return -EINVAL;
        n = strlen(s);
        if (n == 0 || n > 16)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                int d = hex_digit(s[i]);
                if (d < 0)
                        return -EINVAL;
                v = v << 4 | (uint64_t)d;
        }
        *ret = v;
        return 0;
}

/* The operator weights: 2 hex digits each, MUTATOR_WEIGHTS of them. */
static int parse_weights(const cJSON *m, ProtoBatch *b)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "op_weights");
        if (!v)
                return 0;
        if (!cJSON_IsString(v) || !v->valuestring || strlen(v->valuestring) != 2 * MUTATOR_WEIGHTS)
                return -EINVAL;
        for (unsigned i = 0; i < MUTATOR_WEIGHTS; i++) {
                int hi = hex_digit(v->valuestring[2 * i]),
                    lo = hex_digit(v->valuestring[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return -EINVAL;
                b->op_weights[i] = (uint8_t)(hi << 4 | lo);
        }
        b->has_weights = true;
        return 0;
}

static int parse_reruns(const cJSON *m, ProtoBatch *b)
{
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(m, "reruns");
        const cJSON *it;

        if (!list)
                return 0;
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > (int)RECORD_MAX_RERUNS)
                return -EINVAL;
        cJSON_ArrayForEach(it, list)
        {
                double d = cJSON_IsNumber(it) ? it->valuedouble : -1;
                if (!(d >= 0) || d > JSON_INT_MAX || d != (double)(uint64_t)d)
                        return -EINVAL;
                b->reruns[b->n_reruns++] = (uint64_t)d;
        }
        return 0;
}

static int parse_mode(const cJSON *m, RecordMode *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "mode");
        static const RecordMode modes[] = {RECORD_MODE_EXEC, RECORD_MODE_FUZZ, RECORD_MODE_SEEDS};

        if (!v) {
                *ret = RECORD_MODE_FUZZ;
                return 0;
        }
        if (!cJSON_IsString(v) || !v->valuestring)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                if (strcmp(v->valuestring, record_mode_name(modes[i])) == 0) {
                        *ret = modes[i];
                        return 0;
                }
        return -EINVAL;
}

int proto_batch_parse(const cJSON *m, const RecordLayout *layout, ProtoBatch *ret)
{
        ProtoBatch b = {.chain_len = 4, .first = 1};
        uint64_t chain = 4, base = 0, partner = 0, table = 0, cmp_gens = 0, len_limit = 0;

        if (!proto_is(m, PROTO_FUZZ))
                return -EINVAL;
        if (need_uint(m, "batch_id", UINT64_MAX, &b.batch_id) < 0 ||
            need_uint(m, "iters", UINT64_MAX, &b.iters) < 0 || b.iters == 0 ||
            parse_mode(m, &b.mode) < 0 || parse_seed(m, &b.seed) < 0 ||
            get_uint(m, "chain_len", PROTO_CHAIN_MAX, &chain) < 0 || chain == 0 ||
            get_uint(m, "base_len", layout->area_len, &base) < 0 ||
            get_uint(m, "partner_len", layout->area_len, &partner) < 0 ||
            get_uint(m, "table_len", RECORD_TABLE_BYTES, &table) < 0 ||
            get_uint(m, "first", UINT64_MAX, &b.first) < 0 ||
            get_uint(m, "cmp_gens", RECORD_CMP_TABLES, &cmp_gens) < 0 ||
            get_uint(m, "len_limit", UINT32_MAX, &len_limit) < 0 || parse_weights(m, &b) < 0 ||
            parse_reruns(m, &b) < 0 || get_bool(m, "replay", &b.replay) < 0 ||
            get_bool(m, "leak_watch", &b.leak_watch) < 0 ||
            get_bool(m, "leak_check", &b.leak_check) < 0 || get_bool(m, "quiet", &b.quiet) < 0 ||
            get_bool(m, "fresh", &b.fresh) < 0 || get_bool(m, "packed", &b.packed) < 0)
                return -EINVAL;
        b.chain_len = (uint32_t)chain;
        b.base_len = (uint32_t)base;
        b.partner_len = (uint32_t)partner;
        b.table_len = (uint32_t)table;
        b.cmp_gens = (uint32_t)cmp_gens;
        b.len_limit = len_limit <= layout->max_len ? (uint32_t)len_limit : 0;
        *ret = b;
        return 0;
}

/* ---- "rebuild" ---- */

int proto_rebuild_build(uint32_t how, cJSON **ret)
{
        if (how != RECORD_REBUILT_SEED && how != RECORD_REBUILT_SLOT)
                return -EINVAL;
        cJSON *m = proto_msg_new(PROTO_REBUILD);
        if (!m ||
            !cJSON_AddStringToObject(m, "from", how == RECORD_REBUILT_SEED ? "seed" : "slot")) {
                cJSON_Delete(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int proto_rebuild_parse(const cJSON *m, uint32_t *ret_how)
{
        const char *from;

        if (!proto_is(m, PROTO_REBUILD) || need_str(m, "from", &from) < 0)
                return -EINVAL;
        if (strcmp(from, "seed") == 0)
                *ret_how = RECORD_REBUILT_SEED;
        else if (strcmp(from, "slot") == 0)
                *ret_how = RECORD_REBUILT_SLOT;
        else
                return -EINVAL;
        return 0;
}

/* ---- "hello" ---- */

int proto_hello_build(const ProtoHello *h, cJSON **ret)
{
        cJSON *m = proto_msg_new(PROTO_HELLO);
        bool ok = m && cJSON_AddNumberToObject(m, "pid", (double)h->pid) &&
                  cJSON_AddNumberToObject(m, "counters", (double)h->counters) &&
                  cJSON_AddNumberToObject(m, "target_counters", (double)h->target_counters) &&
                  add_true(m, "custom_mutator", h->custom_mutator) &&
                  add_true(m, "custom_crossover", h->custom_crossover) &&
                  cJSON_AddBoolToObject(m, "leaks", h->leaks);
        if (!ok) {
                cJSON_Delete(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int proto_hello_parse(const cJSON *m, ProtoHello *ret)
{
        ProtoHello h = {0};
        uint64_t pid = 0;

        if (!proto_is(m, PROTO_HELLO) || need_uint(m, "pid", INT_MAX, &pid) < 0 ||
            need_uint(m, "counters", UINT64_MAX, &h.counters) < 0 ||
            need_uint(m, "target_counters", UINT64_MAX, &h.target_counters) < 0 ||
            get_bool(m, "custom_mutator", &h.custom_mutator) < 0 ||
            get_bool(m, "custom_crossover", &h.custom_crossover) < 0 ||
            need_bool(m, "leaks", &h.leaks) < 0)
                return -EINVAL;
        h.pid = (int64_t)pid;
        *ret = h;
        return 0;
}

/* ---- "done" and "died" ---- */

int proto_end_build(const ProtoEnd *e, cJSON **ret)
{
        if (e->died && !e->reason)
                return -EINVAL;
        cJSON *m = proto_msg_new(e->died ? PROTO_DIED : PROTO_DONE);
        bool ok = m && cJSON_AddNumberToObject(m, "batch_id", (double)e->batch_id) &&
                  cJSON_AddNumberToObject(m, "count", (double)e->count) &&
                  cJSON_AddNumberToObject(m, "iters", (double)e->iters) &&
                  cJSON_AddNumberToObject(m, "finds", e->finds) &&
                  cJSON_AddNumberToObject(m, "new_features", (double)e->new_features) &&
                  cJSON_AddNumberToObject(m, "elapsed_ms", e->elapsed_ms) &&
                  cJSON_AddBoolToObject(m, "forked", e->forked);
        if (ok && !e->died)
                ok = cJSON_AddNumberToObject(m, "loop_ms", e->loop_ms) != NULL;
        if (ok && e->died) {
                ok = cJSON_AddStringToObject(m, "reason", e->reason) != NULL;
                if (ok && e->signal > 0)
                        ok = cJSON_AddNumberToObject(m, "signal", e->signal) != NULL;
                else if (ok && e->exit_code >= 0)
                        ok = cJSON_AddNumberToObject(m, "exit_code", e->exit_code) != NULL;
                ok = ok && cJSON_AddNumberToObject(m, "runner_state", e->runner_state);
        }
        if (!ok) {
                cJSON_Delete(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int proto_end_parse(const cJSON *m, ProtoEnd *ret)
{
        ProtoEnd e = {.exit_code = -1};
        uint64_t finds = 0, sig = 0, code = UINT64_MAX, state = 0;

        if (proto_is(m, PROTO_DIED))
                e.died = true;
        else if (!proto_is(m, PROTO_DONE))
                return -EINVAL;
        if (need_uint(m, "batch_id", UINT64_MAX, &e.batch_id) < 0 ||
            need_uint(m, "count", UINT64_MAX, &e.count) < 0 ||
            need_uint(m, "iters", UINT64_MAX, &e.iters) < 0 ||
            need_uint(m, "finds", RECORD_FINDS_SLOTS, &finds) < 0 ||
            need_uint(m, "new_features", UINT64_MAX, &e.new_features) < 0 ||
            need_num(m, "elapsed_ms", &e.elapsed_ms) < 0 || need_bool(m, "forked", &e.forked) < 0 ||
            (e.died ? get_num(m, "loop_ms", &e.loop_ms) : need_num(m, "loop_ms", &e.loop_ms)) < 0)
                return -EINVAL;
        e.finds = (uint32_t)finds;
        if (e.died &&
            (need_str(m, "reason", &e.reason) < 0 || get_uint(m, "signal", 127, &sig) < 0 ||
             get_uint(m, "exit_code", 255, &code) < 0 ||
             need_uint(m, "runner_state", UINT32_MAX, &state) < 0))
                return -EINVAL;
        e.signal = (int)sig;
        e.exit_code = code == UINT64_MAX ? -1 : (int)code;
        e.runner_state = (uint32_t)state;
        *ret = e;
        return 0;
}

/* ---- "error" ---- */

int proto_error_build(const char *what, const char *message, cJSON **ret)
{
        cJSON *m = proto_msg_new(PROTO_ERROR);
        if (!m || !cJSON_AddStringToObject(m, "what", what) ||
            !cJSON_AddStringToObject(m, "message", message)) {
                cJSON_Delete(m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int proto_error_parse(const cJSON *m, const char **ret_what, const char **ret_message)
{
        const char *what, *message;

        if (!proto_is(m, PROTO_ERROR) || need_str(m, "what", &what) < 0 ||
            need_str(m, "message", &message) < 0)
                return -EINVAL;
        *ret_what = what;
        *ret_message = message;
        return 0;
}
