/*
 * clock.c - the monotonic clock.
 */
#include "sparkctl.h"

#include <time.h>

#include "lib/clock.h"

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail with a valid pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
