/*
 * JUnit XML from the crash store, for CI systems that show test reports
 * (GitLab, Jenkins, Azure Pipelines): one testsuite, one failing testcase
 * per crash id (its kind, message, stack and reproduce command), and one
 * passing testcase when nothing was found, so that a clean run shows as a
 * passed test rather than an empty report.
 */
#pragma once

#include <stddef.h>

#include "engine/crashreport.h"

/* The JUnit XML of @r as text in *ret (free() it) and its length in
 * *ret_len. 0 or -ENOMEM. */
int junit_format(const CrashReport *r, char **ret, size_t *ret_len);
