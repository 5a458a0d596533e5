/*
 * A count of threads inside and a flag for a fork under way, under one
 * mutex. The fork's prepare handler raises the flag, waits for the count to
 * reach zero and keeps the mutex through the fork; the parent's handler
 * lowers the flag and lets waiting threads in; the child, which has only
 * the forking thread, starts the gate again from nothing.
 */
#include <pthread.h>
#include <stdbool.h>

#include "core/forkgate.h"

#include "snapfuzz/banned.h"

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static unsigned gate_inside;
static bool gate_forking;
static pthread_once_t gate_once = PTHREAD_ONCE_INIT;

static void gate_prepare(void)
{
        pthread_mutex_lock(&gate_lock);
        gate_forking = true;
        while (gate_inside)
                pthread_cond_wait(&gate_cond, &gate_lock);
}

static void gate_parent(void)
{
        gate_forking = false;
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
}

static void gate_child(void)
{
        /* The threads that could use it are gone; the copies of the mutex
         * and the condition are started again rather than unlocked. */
        gate_forking = false;
        gate_inside = 0;
        pthread_mutex_init(&gate_lock, NULL);
        pthread_cond_init(&gate_cond, NULL);
}

static void gate_install(void)
{
        pthread_atfork(gate_prepare, gate_parent, gate_child);
}

void forkgate_init(void)
{
        pthread_once(&gate_once, gate_install);
}

void forkgate_enter(void)
{
        pthread_mutex_lock(&gate_lock);
        while (gate_forking)
                pthread_cond_wait(&gate_cond, &gate_lock);
        gate_inside++;
        pthread_mutex_unlock(&gate_lock);
}

void forkgate_leave(void)
{
        pthread_mutex_lock(&gate_lock);
        if (--gate_inside == 0 && gate_forking)
                pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
}
