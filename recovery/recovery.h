/*
 * The recovery helper: a process of its own, forked by the coordinator at
 * start-up. For each dead runner it is handed a copy of the runner's replay
 * record and the worker's report; it rebuilds the input from the record
 * alone, confirms it in a fresh runner forked from its own snapshot (a
 * verification worker it owns, so fuzzing workers never wait), for a
 * target built with ASan or UBSan confirms a crash its runner's handler
 * caught with the sanitizer's own report (a confirmation worker:
 * WprocConfig.sanitizer_confirm), classifies the crash and stores it.
 *
 * Protocol (JSON lines, core/msg.h): the coordinator sends
 *   {"type":"recover","job":N,"attempt":A,"died":{...the worker's died event...}}
 * after copying the record into the shared job area (A > 1: a helper died
 * on this job before, and may have stored its crash); the helper answers
 *   {"type":"stored","job":N,"id":..,"kind":..,"new":bool,"reproduced":bool,...}
 * or {"type":"lost","job":N,"why":..} when the record cannot be trusted.
 * {"type":"prepare"} (no answer) loads the verification worker ahead.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct RecoveryConfig {
        const char *target; /* absolute path */
        bool builtin;       /* the target is the executable's own (WprocConfig.builtin) */
        const char *out_dir;
        size_t max_len;
        unsigned timeout_ms;
        unsigned rss_limit_mb;
        unsigned malloc_limit_mb;
        const char *sandbox;
        unsigned minimize_ms;       /* budget of the automatic minimization; 0: none */
        const char *sandbox_policy; /* JSON, or NULL */
        bool detect_leaks;          /* confirm leak suspects with LeakSanitizer */
        /* The run's --target-output and --close-fd-mask: what the target
         * prints while a crash is verified goes to OUT/logs/recovery.log
         * (never the terminal: its fuzzing worker showed it already), or
         * nowhere with "discard". */
        const char *target_output;
        unsigned close_fd_mask;
} RecoveryConfig;

/* Runs the helper until its command pipe closes. @job_region is a mapping
 * of record_layout(max_len).record_size bytes shared with the coordinator.
 * Returns 0 or a negative errno. */
int recovery_main(const RecoveryConfig *cfg, int cmd_fd, int evt_fd, void *job_region);
