/*
 * SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format) from the
 * crash store, for GitHub code scanning and other SARIF consumers: one
 * result per crash id, one rule per kind of bug (engine/crashreport.h),
 * the symbolized stack as a code flow, locations relative to the source
 * root (uriBaseId SRCROOT), and the crash signature as a partial
 * fingerprint so that the same bug found by two runs is one alert.
 */
#pragma once

#include <stddef.h>

#include "engine/crashreport.h"

/* The SARIF log of @r as text (pretty-printed JSON, newline-terminated) in
 * *ret (free() it) and its length in *ret_len. 0 or -ENOMEM. */
int sarif_format(const CrashReport *r, char **ret, size_t *ret_len);

/* @s as a URI path: every byte other than unreserved characters, '/' and
 * the sub-delimiters RFC 3986 allows in a path is percent-encoded. Into a
 * malloc'd string, or NULL on ENOMEM. */
char *sarif_uri_escape(const char *s);
