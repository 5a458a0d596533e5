/*
 * A stored crash's settings, read back from OUT/crashes/<id>/crash.json:
 * the one reader that `reproduce`, `minimize` (and a libFuzzer-compatible
 * driver) rebuild a crash's worker from. crash.json is untrusted input (a
 * CI artifact, an attachment to a bug report): every field is type- and
 * range-checked, and what it says about the sandbox is never obeyed when
 * it would loosen the default strict sandbox, unless the person running
 * the command says so (CrashconfTrust).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/wproc.h"

/* What the person running the command said: these win over crash.json. */
typedef struct CrashconfTrust {
        const char *target;      /* --target PATH (already checked), or NULL */
        unsigned timeout_ms;     /* --timeout, 0: the record's */
        const char *sandbox;     /* --sandbox MODE ("strict", "log", "off"), or NULL */
        const char *policy_json; /* --sandbox-policy FILE as sandbox_policy_load gave it */
        bool trust_record;       /* --trust-record: the stored sandbox may be looser */
} CrashconfTrust;

typedef struct Crashconf {
        char *target; /* the target to load (the record's, or --target) */
        char kind[32];
        char signature[768];
        char *message; /* as stored: print it through core/termsafe.h */
        unsigned timeout_ms;
        unsigned rss_limit_mb;
        unsigned malloc_limit_mb;
        size_t max_len; /* at least the input's length, at least 1 */
        /* The sandbox the crash runs under, decided from CrashconfTrust and
         * the record: "strict", "log" or "off", and a policy or NULL. */
        const char *sandbox;
        char *policy_json;
        const char *sandbox_from; /* "default", "the command line", "crash.json" */
        /* A line for a person about the sandbox ("" when there is nothing
         * to say): the stored sandbox was ignored, or a looser one is in
         * force. note_is_warning: the sandbox is looser than the default. */
        char note[768];
        bool note_is_warning;
        bool stored_policy; /* crash.json holds a policy (used or not) */
        /* A state-dependent crash: iterations first..last of the stored
         * record (OUT/crashes/<id>/record) replay it. */
        bool state_dependent;
        uint64_t first, last;
        /* The crash was confirmed with the sanitizer's report
         * ("sanitizer.confirmed"): it runs the same way again
         * (WprocConfig.sanitizer_confirm). */
        bool sanitizer_confirm;
        int64_t minimized_len; /* -1: not stored */
        uint8_t *input;
        size_t input_len;
} Crashconf;

/*
 * Loads and checks crash @id of @out_dir and decides its worker settings.
 * On failure returns -ENOENT (no such crash), -EBADMSG (crash.json or the
 * input is corrupt, a field has the wrong type or range, the stored
 * policy is refused), -EINVAL (the options and the record cannot go
 * together, the target cannot be used) or -ENOMEM, with one line for a
 * person in @err; *@ret is left zeroed.
 */
int crashconf_load(const char *out_dir, const char *id, const CrashconfTrust *t, Crashconf *ret,
                   char *err, size_t errlen);
void crashconf_deinit(Crashconf *c);

/* The worker settings for @c (pointers into @c; cov_fd -1). */
void crashconf_wproc_config(const Crashconf *c, WprocConfig *ret);
