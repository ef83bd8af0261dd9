/*
 * clock.h - the monotonic clock, for deadlines and durations (never the
 * wall clock, which can jump); and the wall clock, only to order what
 * happened on different hosts.
 */
#ifndef SPARKCTL_CLOCK_H
#define SPARKCTL_CLOCK_H

#include "sparkctl.h"

uint64_t monotonic_ns(void);
static inline uint64_t monotonic_ms(void)
{
	return monotonic_ns() / 1000000u;
}

/* CLOCK_REALTIME in microseconds since the epoch. */
uint64_t wall_clock_us(void);

#endif
