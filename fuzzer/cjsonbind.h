/*
 * The engine's cJSON, kept apart from the harness's (fuzzer/cjsonbind.c):
 * in the drop-in archive every call the engine makes to cJSON_X is renamed
 * sf_cJSON_X (objcopy --redefine-syms, fuzzer/mkarchive.sh), and those
 * names are defined here as calls into the system's libcjson.so.1, opened
 * privately, so that a harness that carries its own cJSON keeps it.
 */
#pragma once

#include <stddef.h>

/* Opens libcjson.so.1 (RTLD_LOCAL), binds its own internal calls to its
 * own definitions (worker/selfbind.h) and resolves every function the
 * engine uses. Idempotent. 0, or a negative errno with a line for a person
 * in @err. */
int cjsonbind_load(char *err, size_t errlen);
