/*
 * Binds a dlopen()ed target to its own symbols (worker/selfbind.c): calls
 * the target makes to functions it defines itself go to its definitions,
 * not to same-named ones of the snapfuzz executable's libraries.
 */
#pragma once

#include <link.h>
#include <stdbool.h>

/* Rebinds the GOT slots of the target @handle (and of the libraries its
 * dlopen loaded) whose symbols the target defines strongly. Call once,
 * right after dlopen, before the target's initialization. Returns 0 and
 * the number of slots rebound, or a negative errno. */
int selfbind_apply(void *handle, unsigned *ret_rebound);

/* Whether the target @handle or a library its dlopen loaded calls @name
 * through its GOT (a symbol it uses and does not define: one of the
 * SanitizerCoverage callbacks, say). */
bool selfbind_references(void *handle, const char *name);

/* Calls @fn for every GOT slot (JUMP_SLOT, GLOB_DAT) of the target
 * @handle and of the libraries its dlopen loaded whose symbol the object
 * does not define: @lm the object, @name the symbol, @slot the slot (which
 * holds the address the dynamic linker bound it to). 0 or a negative
 * errno. */
typedef void (*SelfbindImportFn)(const struct link_map *lm, const char *name, void **slot,
                                 void *arg);
int selfbind_imports(void *handle, SelfbindImportFn fn, void *arg);
