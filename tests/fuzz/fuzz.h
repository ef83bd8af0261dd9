/*
 * fuzz.h - shared by the libFuzzer targets of tests/fuzz/.
 *
 * Each target defines LLVMFuzzerTestOneInput(); the prototype is here
 * because the tree builds with -Wmissing-prototypes.  A target aborts on
 * a broken invariant so that libFuzzer records the input as a crash.
 */
#ifndef SPARKCTL_FUZZ_H
#define SPARKCTL_FUZZ_H

#include "sparkctl.h"

#include "lib/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data; the parsers take C strings. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);

	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Report a broken invariant and abort: libFuzzer saves the input. */
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
