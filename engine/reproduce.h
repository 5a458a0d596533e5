/*
 * `snapfuzz reproduce ID`: replays a stored crash once, through the same
 * worker, runner and sandbox code as fuzzing, and prints a report.
 */
#pragma once

#include <cjson/cJSON.h>

#include "recovery/classify.h"
#include "recovery/crashconf.h"

typedef struct ReproduceConfig {
        const char *id;
        const char *out_dir;
        CrashconfTrust trust; /* what the command line says over crash.json */
} ReproduceConfig;

/* Outcomes of reproduce_run. */
enum {
        REPRODUCE_FIXED = 0,   /* the input no longer crashes */
        REPRODUCE_CRASHES = 1, /* it still crashes */
};

/* Returns a REPRODUCE_* outcome, or a negative errno after one line:
 * -EBADMSG for a bad id or a corrupt or refused record, -ENOEXEC for a
 * target that cannot be loaded, another for snapfuzz's own failures. */
int reproduce_run(const ReproduceConfig *cfg);

/* Prints a runner's "died" event for a person on stdout: "KIND — message",
 * the signal or exit status, and the symbolized stack; its classification
 * in *@ret. (Shared with the single-input runs of engine/runinputs.c.) */
void reproduce_print_death(const cJSON *died, Classification *ret);
/* Runs crash @cfg->id once as reproduce_run does (the same conditions,
 * the sequence/ or record of a state-dependent crash), printing nothing
 * but error lines. Returns REPRODUCE_CRASHES with the death now in
 * *@ret_now (kind, message, signature and id, named as recovery names
 * them), REPRODUCE_FIXED, or reproduce_run's errors. On success *@ret_conf
 * holds the crash's settings (crashconf_deinit it). */
int reproduce_check(const ReproduceConfig *cfg, Crashconf *ret_conf, Classification *ret_now);
