/*
 * Monotonic time, in nanoseconds or milliseconds: one clock for every
 * timeout and latency figure, and the same in every process of a run (the
 * coordinator stamps a death, the recovery helper measures from it).
 */
#pragma once

#include <stdint.h>
#include <time.h>

static inline int64_t clock_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t clock_now_ms(void)
{
        return clock_now_ns() / 1000000;
}
