/*
 * The protocol between a worker (`snapfuzz __worker`, worker/worker.c) and
 * whoever starts it (worker/wproc.c; bench/simworker.c stands in for the
 * worker): its command line, the commands it takes and the events it
 * sends, each with one builder and one parser, so that the two ends cannot
 * drift apart.
 *
 * The command line is `snapfuzz __worker --NAME VALUE ...`: every option
 * takes exactly one value, in the next argument (a parser that skips an
 * option it does not know skips that value too). Messages are one JSON
 * object per line (core/msg.h) whose "type" is one of the PROTO_* names
 * below; inputs never travel in them, they live in the shared record
 * (snapfuzz/record.h).
 *
 * Parsers take nothing on trust: a value of the wrong type, out of range or
 * not a number is -EINVAL, never a default or atoi's guess.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "snapfuzz/mutator.h"
#include "snapfuzz/record.h"

/* Commands, to a worker. */
#define PROTO_FUZZ "fuzz"       /* run a batch (ProtoBatch) */
#define PROTO_REBUILD "rebuild" /* rebuild one input of the record in place */
#define PROTO_PING "ping"       /* answered with a pong */
#define PROTO_STOP "stop"       /* end the worker */
/* refuse a sandbox refusal class quietly from now on ("refusal": a death's
 * "refusal" object, see sandbox_quiet) */
#define PROTO_QUIET_REFUSAL "quiet_refusal"
/* Events, from a worker. */
#define PROTO_HELLO "hello"     /* the target is loaded: ready for batches (ProtoHello) */
#define PROTO_PONG "pong"       /* the answer to a ping */
#define PROTO_DONE "done"       /* a batch ran to its end (ProtoEnd) */
#define PROTO_DIED "died"       /* the runner died during a batch (ProtoEnd, and more) */
#define PROTO_ERROR "error"     /* the worker cannot go on: what and why */
#define PROTO_SANDBOX "sandbox" /* the sandbox supervisor's report of one syscall */

/* An error event's "what". */
#define PROTO_WHAT_LOAD "load"         /* the target cannot be loaded */
#define PROTO_WHAT_ENTRY "entry"       /* the target has no LLVMFuzzerTestOneInput */
#define PROTO_WHAT_SANDBOX "sandbox"   /* the sandbox cannot be set up */
#define PROTO_WHAT_INTERNAL "internal" /* a resource the worker needs was refused */
#define PROTO_WHAT_PROTOCOL "protocol" /* a command the worker cannot make sense of */
#define PROTO_WHAT_FORK "fork"         /* a runner cannot be forked */

/* The longest mutation chain a batch may ask for. */
#define PROTO_CHAIN_MAX 1024u

/* Whether @m is a message of @type (one of the PROTO_* names). */
bool proto_is(const cJSON *m, const char *type);

/* A message of @type with no fields; NULL when out of memory. */
cJSON *proto_msg_new(const char *type);

/* ---- The command line ---- */

/* The --target that names the executable's own, built-in target
 * (worker_builtin_set): no path can be this. */
#define PROTO_TARGET_SELF ":self"

typedef struct WorkerArgs {
        const char *target; /* the target .so, or PROTO_TARGET_SELF (required) */
        int cmd_fd;         /* commands come in here */
        int evt_fd;         /* events go out here */
        int shm_fd;         /* the shared record, a memfd */
        int cov_fd;         /* the shared coverage map */
        size_t max_len;     /* 1..RECORD_MAX_LEN_LIMIT */
        unsigned timeout_ms;
        unsigned rss_limit_mb;      /* 0: no limit */
        const char *sandbox;        /* "strict", "log" or "off"; NULL: "strict" */
        const char *sandbox_policy; /* the policy file's rules as JSON, or NULL */
        bool value_profile;
        bool detect_leaks;
        unsigned runner_lifetime_ms; /* 0: one batch per runner */
        /* A runner's life counted in batches instead of the clock (a
         * reproducible run: where one runner ends and the next starts, with
         * the target's state between inputs, is then a function of the
         * seed); 0: runner_lifetime_ms decides. */
        unsigned runner_batches;
        /* Where the runners' output goes (worker/outsink.h): "pass", "log"
         * or "discard"; NULL: "pass". */
        const char *target_output;
        const char *output_log; /* the log file of pass and log; NULL: none */
        unsigned close_fd_mask; /* libFuzzer's -close_fd_mask: 1 stdout, 2 stderr */
        /* Sanitizer confirmation (WprocConfig.sanitizer_confirm): each input
         * runs from a heap buffer of its exact length, and the sanitizer's
         * own fault handlers report what the runner's would have. */
        bool sanitizer_confirm;
} WorkerArgs;

/* What proto_args_build fills: argv (NULL-terminated, ready for execv) and
 * the numbers it points into. No heap: it lives on the caller's stack. */
#define PROTO_ARGV_MAX 40
typedef struct ProtoArgv {
        char *argv[PROTO_ARGV_MAX];
        char num[10][24];
} ProtoArgv;

/* Fills @ret with `snapfuzz __worker --target ...` for @a. Returns 0, or
 * -EINVAL when @a has no target, a negative descriptor, a max_len out of
 * range or an unknown sandbox mode. */
int proto_args_build(const WorkerArgs *a, ProtoArgv *ret);

/* proto_args_parse @flags */
#define PROTO_ARGS_SKIP_UNKNOWN 1u /* skip an unknown option and its value (simworker) */

/* Parses a worker's command line: @argv[0] is "__worker" and is not looked
 * at. Every value is checked (descriptors 0..INT_MAX, decimal numbers in
 * the field's range, booleans "0" or "1", a known sandbox mode); the
 * target, the four descriptors and max_len are required; an option given
 * twice, a missing value, an argument that is not an option and (unless
 * PROTO_ARGS_SKIP_UNKNOWN) an unknown option are errors. Returns 0 with
 * *@ret filled (pointing into @argv), or -EINVAL with one line for a
 * person in @err. */
int proto_args_parse(int argc, char *const *argv, unsigned flags, WorkerArgs *ret, char *err,
                     size_t errlen);

/* ---- "fuzz": a batch ---- */

/* What a "fuzz" command says; its payload (base, partner, table, the
 * comparison tables, what the bases are best for) is already in the
 * record when the command is sent. */
typedef struct ProtoBatch {
        uint64_t batch_id;
        RecordMode mode;
        uint64_t iters; /* at least 1 */
        uint64_t seed;
        uint32_t chain_len; /* 1..PROTO_CHAIN_MAX */
        uint32_t base_len;  /* at most the layout's area_len */
        uint32_t partner_len;
        uint32_t table_len; /* at most RECORD_TABLE_BYTES */
        uint64_t first;     /* first iteration to execute (0 or 1: all) */
        uint32_t cmp_gens;  /* comparison tables 1..cmp_gens in the record */
        uint32_t len_limit; /* record_set_mutation(); 0: none */
        bool has_weights;
        uint8_t op_weights[MUTATOR_WEIGHTS]; /* when has_weights */
        uint32_t n_reruns;
        uint64_t reruns[RECORD_MAX_RERUNS]; /* a history replay's doubled iterations */
        bool replay;                        /* verification or history replay: collect no finds */
        bool leak_watch; /* an execution that allocates more than it frees ends the batch */
        bool leak_check; /* a LeakSanitizer check after the (one) execution */
        bool quiet;      /* the target's output is kept for the report only */
        bool fresh;      /* in a runner forked for it */
        bool packed;     /* base and partner are lists of inputs (RECORD_F_PACKED) */
} ProtoBatch;

/* A "fuzz" command for @b. 0, -EINVAL (a count over its limit), or -ENOMEM. */
int proto_batch_build(const ProtoBatch *b, cJSON **ret);

/* Reads a "fuzz" command for a record of @layout. A len_limit above the
 * layout's max_len means none, as in record_set_mutation. 0 with *@ret
 * filled, or -EINVAL. */
int proto_batch_parse(const cJSON *m, const RecordLayout *layout, ProtoBatch *ret);

/* ---- "rebuild" ---- */

/* A "rebuild" command: @how is RECORD_REBUILT_SLOT (from the chain's PRNG
 * slot) or RECORD_REBUILT_SEED (the batch from its seed). 0, -EINVAL or
 * -ENOMEM. */
int proto_rebuild_build(uint32_t how, cJSON **ret);
/* Reads one: 0 with *@ret_how, or -EINVAL. */
int proto_rebuild_parse(const cJSON *m, uint32_t *ret_how);

/* ---- "hello" ---- */

typedef struct ProtoHello {
        int64_t pid;
        uint64_t counters;        /* coverage counters (the target's and feedback maps) */
        uint64_t target_counters; /* the target's own: 0 when it has no instrumentation */
        bool custom_mutator;
        bool custom_crossover;
        bool leaks; /* LeakSanitizer checks work */
} ProtoHello;

/* A "hello" event for @h (the worker adds its "sandbox" description).
 * 0 or -ENOMEM. */
int proto_hello_build(const ProtoHello *h, cJSON **ret);
/* Reads one: 0, or -EINVAL when @m is no hello or a field is mistyped. */
int proto_hello_parse(const cJSON *m, ProtoHello *ret);

/* ---- "done" and "died" ---- */

/* How a batch ended. A "died" event also carries what recovery reads as
 * JSON, added by the worker after proto_end_build: "death" (the record's
 * RecordDeath, frames resolved), "output" and "sanitizer_report" (the
 * target's last words) and "sandbox" (what confined the runner). */
typedef struct ProtoEnd {
        bool died;
        uint64_t batch_id;
        uint64_t count; /* iterations started */
        uint64_t iters;
        uint32_t finds; /* inputs left in the record's finds area */
        uint64_t new_features;
        double elapsed_ms;
        bool forked;    /* the batch had a runner forked for it */
        double loop_ms; /* done: time in the runner's loop */
        /* died: */
        const char *reason; /* "crash", "timeout", "oom" or "stopped" */
        int signal;         /* the signal that ended the runner; 0: none */
        int exit_code;      /* its exit status when it exited; -1: none */
        uint32_t runner_state;
} ProtoEnd;

/* A "done" or "died" event for @e. 0, -EINVAL (died without a reason) or
 * -ENOMEM. */
int proto_end_build(const ProtoEnd *e, cJSON **ret);
/* Reads one (its reason points into @m). 0, or -EINVAL when @m is neither
 * or a field is missing or mistyped. */
int proto_end_parse(const cJSON *m, ProtoEnd *ret);

/* ---- "error" ---- */

/* An "error" event: @what is a PROTO_WHAT_*, @message one line for a
 * person. 0 or -ENOMEM. */
int proto_error_build(const char *what, const char *message, cJSON **ret);
/* Reads one (pointers into @m). 0, or -EINVAL. */
int proto_error_parse(const cJSON *m, const char **ret_what, const char **ret_message);
