/*
 * Refusals as findings: what one refused syscall was (its class), the
 * policy-file rule that would allow it, and whether a class can be refused
 * quietly (with an errno, counted, without killing the runner) once it has
 * been reported. Internal to sandbox/; the rest of snapfuzz goes through
 * sandbox_describe_refusal() and sandbox_quiet() (sandbox.h).
 *
 * A class is:
 *   - an open or openat: its path's directory, and whether it was a
 *     read-only open ("openat /etc read");
 *   - ioctl and fcntl: their command ("ioctl 0x5413");
 *   - any other syscall: its name ("socket").
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sandbox/policy.h"

typedef enum RefusalKind {
        REFUSAL_ANY = 0, /* the syscall, whatever its arguments */
        REFUSAL_CMD,     /* the syscall with argument .arg equal to .cmd */
        REFUSAL_OPEN,    /* open/openat of a file in .dir, read-only or not */
} RefusalKind;

typedef struct Refusal {
        int nr;
        RefusalKind kind;
        int arg;
        uint32_t cmd;
        bool write;
        char dir[PATH_MAX]; /* "" for a relative path, or one not known */
        char key[PATH_MAX + 64];
} Refusal;

/* The class of native syscall @nr refused with @args (and @path, the file an
 * open named, or NULL). */
void refusal_classify(int nr, const uint64_t args[6], const char *path, Refusal *ret);

/* Whether a call (@nr, @args, @path) is of class @r. */
bool refusal_matches(const Refusal *r, int nr, const uint64_t args[6], const char *path);

/* {"key", "syscall", "nr", "kind", ... the class's fields, "rule": the
 * policy file's rule that would allow it, or "no_rule": why none can}.
 * NULL on allocation failure. */
cJSON *refusal_to_json(const Refusal *r);

/* Reads a class back from refusal_to_json()'s output. 0 or -EINVAL. */
int refusal_from_json(const cJSON *j, Refusal *ret);

/*
 * The filter rule that sends the class to the worker (which then refuses
 * it quietly), in @ret. -ENOTSUP when the class cannot be told apart in the
 * filter from calls the policy allows (a syscall the allowlist allows under
 * conditions, other than ioctl and fcntl commands): those keep trapping.
 * Opens need no rule (the worker sees every open already), nor the process
 * creation the worker refuses: 1, @ret untouched.
 */
int refusal_filter_rule(const Refusal *r, const Policy *policy, PolicyRule *ret);
