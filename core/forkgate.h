/*
 * The fork gate: a fork(2) of a process with helper threads (the corpus
 * writer, the AFL++ sync thread) waits until none of them is inside its
 * work, so the child never inherits a lock such a thread held: a
 * sanitizer's allocator lock (ASan's, unlike glibc's malloc, is not made
 * consistent across fork), a stdio stream's, a directory stream's. A
 * helper thread brackets each piece of work with forkgate_enter and
 * forkgate_leave, and only waits on its own locks in between; the gate's
 * handlers (pthread_atfork) do the rest for every fork of the process.
 *
 * Rules: no fork between enter and leave of the same thread, no nesting,
 * and no waiting inside for anything the forking thread holds.
 */
#pragma once

/* Installs the gate's fork handlers, once per process: called by the
 * thread that starts a helper thread, before it starts it (registering a
 * handler allocates, which a fork must not interrupt either). */
void forkgate_init(void);

void forkgate_enter(void);
void forkgate_leave(void);
