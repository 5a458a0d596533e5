/*
 * Policy files (--sandbox-policy FILE): JSON that adds syscalls to the
 * built-in allowlist, optionally with conditions on their arguments or, for
 * open and openat, a directory under which read-only opens are allowed.
 * Internal to sandbox/; the CLI goes through sandbox_policy_load().
 *
 *   {
 *     "description": "what this harness needs and why",
 *     "allow": [
 *       "chdir",
 *       {"syscall": "ioctl", "args": [{"arg": 1, "op": "==", "value": "0x541b"}],
 *        "why": "FIONREAD on its own pipe"},
 *       {"syscall": "openat", "under": "/usr/share/zoneinfo"}
 *     ]
 *   }
 *
 * Conditions: "arg" 0-5, "op" one of == != < <= > >= and "&=" (with "mask":
 * (argument & mask) == value); values are integers or strings holding one
 * ("0x1f", "-100"); comparisons are over 64 bits, as libseccomp makes them.
 */
#pragma once

#include <stddef.h>

#include <cjson/cJSON.h>

#include "sandbox/policy.h"

/*
 * Adds the rules of policy file @root (parsed JSON) to @policy. @text is the
 * file's text, used only to name lines in messages; @name is how messages
 * name the file. On failure returns -EINVAL (or -ENOMEM) and writes one line
 * into @err: "NAME:LINE: allow[2]: unknown syscall \"opneat\"".
 */
int policyfile_apply(const char *name, const char *text, const cJSON *root, Policy *policy,
                     char *err, size_t errlen);

/*
 * Parses @text as JSON. On a syntax error returns -EINVAL with
 * "NAME:LINE:COLUMN: not valid JSON ..." in @err.
 */
int policyfile_parse_json(const char *name, const char *text, cJSON **ret, char *err,
                          size_t errlen);
