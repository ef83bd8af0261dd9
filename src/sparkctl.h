/*
 * sparkctl.h - the first include of every sparkctl source file.
 *
 * It pulls in the C library headers nearly every file needs, the few
 * compiler attributes the tree uses, and, last, banned.h, which turns
 * unsafe libc calls into compile errors.  _GNU_SOURCE is set by the
 * build (meson.build), so it is in effect before any system header.
 */
#ifndef SPARKCTL_H
#define SPARKCTL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define ATTR_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define ATTR_NORETURN	       __attribute__((noreturn))
#define ATTR_UNUSED	       __attribute__((unused))
#define ATTR_SENTINEL	       __attribute__((sentinel))
#define ATTR_WARN_UNUSED       __attribute__((warn_unused_result))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* True when the two NUL-terminated strings are equal (either may be NULL). */
static inline bool streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

/* True when s begins with prefix. */
static inline bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

#include "lib/banned.h"

#endif
