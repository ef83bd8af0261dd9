/*
 * clock.h - the monotonic clock, for deadlines and durations (never the
 * wall clock, which can jump).
 */
#ifndef SPARKCTL_CLOCK_H
#define SPARKCTL_CLOCK_H

#include "sparkctl.h"

uint64_t monotonic_ns(void);
static inline uint64_t monotonic_ms(void)
{
	return monotonic_ns() / 1000000u;
}

#endif
