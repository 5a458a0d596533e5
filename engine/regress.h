/*
 * `snapfuzz regress TARGET.so --out OUT [CORPUS_DIR...]`: the check a CI
 * job runs on a change. It replays every crash stored in OUT/crashes
 * against TARGET.so (a state-dependent one through its sequence/ files or
 * record), under each crash's stored limits, then every corpus input once
 * (OUT/corpus and the directories given) through the fuzzing engine, so
 * that a new crash is stored like any other. It fails only on a stored
 * crash that still reproduces and is not quarantined (OUT/quarantine.json)
 * or on a crash the corpus replay finds that is not quarantined; crashes
 * that no longer reproduce are reported as fixed. The verdicts go to
 * OUT/regress.json (atomically) and a summary to standard output.
 */
#pragma once

#include "recovery/crashconf.h"
#include "snapfuzz/engine.h"

#define REGRESS_REPORT_FILE "regress.json"

typedef struct RegressConfig {
        /* The corpus replay: target (checked, target_abs resolved), corpus
         * directories, out_dir, workers, limits, sandbox. */
        SfRunConfig run;
        /* The stored crashes: the sandbox options (--sandbox,
         * --sandbox-policy, --trust-record) and --timeout; target is set
         * to run.target_abs by regress_run. */
        CrashconfTrust trust;
        const char *junit_path; /* --junit FILE, or NULL */
} RegressConfig;

/* Outcomes of regress_run. */
enum {
        REGRESS_PASSED = 0,     /* nothing reproduced but quarantined crashes */
        REGRESS_FAILED = 1,     /* a stored crash reproduced, or the corpus found one */
        REGRESS_UNREADABLE = 2, /* nothing failed, but a stored crash could not be replayed
                                 * (a corrupt or refused record) */
};

/* Returns a REGRESS_* outcome or a negative errno after one line (-EINVAL:
 * a bad quarantine list, -EBUSY: a run holds OUT, -ENOEXEC: the target
 * cannot be loaded, others: snapfuzz's own failures). */
int regress_run(RegressConfig *cfg);
