/*
 * Removes a dlopen()ed target's calls to the comparison hooks that do
 * nothing for the whole run (worker/cmpsites.c).
 */
#pragma once

#include <stdbool.h>

/* Replaces with NOPs the calls that the target @handle (and the libraries
 * its dlopen loaded) make to snapfuzz's comparison hooks that are idle for
 * a run with or without @value_profile. Call once in the worker, after the
 * target's initialization and before any runner is forked. Returns 0 and
 * the number of calls removed, or a negative errno (calls already removed
 * stay removed: each is a complete NOP). */
int cmpsites_patch_idle(void *handle, bool value_profile, unsigned *ret_patched);
