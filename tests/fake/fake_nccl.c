/*
 * fake_nccl.c - a stand-in libnccl.so.2 for the tests.
 *
 * ncclGetVersion answers SPARKCTL_FAKE_NCCL_VERSION, a version code as
 * NCCL_VERSION_CODE writes it (22809 for 2.28.9, 2708 for 2.7.8 in the
 * encoding before 2.9), 22809 when unset.  A value that is not a whole
 * number makes it fail with ncclInvalidUsage.
 *
 * Built with FAKE_BROKEN, it lacks ncclGetVersion, which sparkctl requires.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "fake_gpu.h"

#ifdef HAVE_NCCL_H
/* The real declarations: the compiler checks the definitions below against them. */
#include <nccl.h>
#else
/* The subset of nccl.h defined here, with its names. */
typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
} ncclResult_t;

ncclResult_t ncclGetVersion(int *version);
const char *ncclGetErrorString(ncclResult_t result);
#endif

#define DEFAULT_VERSION_CODE 22809

#ifndef FAKE_BROKEN
FAKE_EXPORT ncclResult_t ncclGetVersion(int *version)
{
	const char *s = getenv("SPARKCTL_FAKE_NCCL_VERSION");
	char *end;
	long v;

	if (!version)
		return ncclInvalidArgument;
	if (!s) {
		*version = DEFAULT_VERSION_CODE;
		return ncclSuccess;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT_MAX)
		return ncclInvalidUsage;
	*version = (int)v;
	return ncclSuccess;
}
#endif

/* Also in the broken library, which would otherwise be empty. */
FAKE_EXPORT const char *ncclGetErrorString(ncclResult_t result)
{
	switch (result) {
	case ncclSuccess:
		return "no error";
	case ncclInvalidArgument:
		return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage:
		return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	default:
		return "unknown result code";
	}
}
