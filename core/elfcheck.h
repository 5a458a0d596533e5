/*
 * A look at a target file before anything loads it, so that a wrong path
 * or a wrong kind of file gets one clear line instead of a dlopen error
 * from deep inside a worker.
 */
#pragma once

#include <stddef.h>

/* 0 when @path is a readable ELF shared object for this machine; otherwise
 * a negative errno and a reason for a person in @why. */
int elf_check_shared_object(const char *path, char *why, size_t whylen);
