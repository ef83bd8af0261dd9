/*
 * strvec.h - a NULL-terminated, growable array of owned strings.
 *
 * v is never NULL once initialised (STRVEC_INIT points it at a shared
 * empty array) and v[nr] is always NULL, so it can be passed as argv.
 */
#ifndef SPARKCTL_STRVEC_H
#define SPARKCTL_STRVEC_H

#include "sparkctl.h"

struct strvec {
	char **v;     /* the strings, v[nr] == NULL */
	size_t nr;    /* number of strings */
	size_t alloc; /* slots allocated, 0 while v is the shared empty array */
};

extern char *strvec_empty[];
#define STRVEC_INIT                                                                                \
	{                                                                                          \
		strvec_empty, 0, 0                                                                 \
	}

void strvec_init(struct strvec *sv);
/* Append a copy of s. */
void strvec_push(struct strvec *sv, const char *s);
/* Append s itself; the vector takes ownership. */
void strvec_push_nodup(struct strvec *sv, char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* Append copies of the strings up to a NULL. */
void strvec_pushl(struct strvec *sv, ...) ATTR_SENTINEL;
void strvec_clear(struct strvec *sv);
/* Sort with strcmp. */
void strvec_sort(struct strvec *sv);
/* True when s is one of the strings. */
bool strvec_contains(const struct strvec *sv, const char *s);

#endif
