/*
 * A look at a target file before anything loads it, so that a wrong path
 * or a wrong kind of file gets one clear line instead of a dlopen error
 * from deep inside a worker.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* 0 when @path is a readable ELF shared object for this machine; otherwise
 * a negative errno and a reason for a person in @why. */
int elf_check_shared_object(const char *path, char *why, size_t whylen);

/* Finds the allocated section named @name in the 64-bit ELF file at @path
 * (a loaded object's file): its address as linked (add the object's load
 * bias) in *ret_addr and its size in *ret_size. 0; -ENOENT when the file
 * has no such section; another negative errno when it cannot be read or
 * its headers are not a well-formed 64-bit ELF's. */
int elf_find_section(const char *path, const char *name, uint64_t *ret_addr, uint64_t *ret_size);
