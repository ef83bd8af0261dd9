/*
 * xalloc.h - allocation that never returns NULL.
 *
 * sparkctl is a command-line tool: running out of memory is not a
 * condition it can recover from usefully, so these helpers print one
 * line and abort() instead of making every caller test for NULL.
 */
#ifndef SPARKCTL_XALLOC_H
#define SPARKCTL_XALLOC_H

#include "sparkctl.h"

void *xmalloc(size_t size) __attribute__((malloc, returns_nonnull));
void *xcalloc(size_t nmemb, size_t size) __attribute__((malloc, returns_nonnull));
void *xrealloc(void *ptr, size_t size) __attribute__((returns_nonnull));
char *xstrdup(const char *s) __attribute__((malloc, returns_nonnull));
/* xstrdup() of s, or NULL when s is NULL. */
char *xstrdup_or_null(const char *s);
char *xstrndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
char *xasprintf(const char *fmt, ...) ATTR_PRINTF(1, 2) __attribute__((returns_nonnull));

/*
 * Append one zeroed element to the array *arr of *nr elements of
 * elem_size bytes and return it.  Capacity is implied by *nr (it grows
 * at powers of two), so arrays need no separate "alloc" field.
 */
void *array_push(void *arr_ptr, size_t *nr, size_t elem_size);
#define ARRAY_PUSH(arr, nr) ((__typeof__(arr))array_push(&(arr), &(nr), sizeof(*(arr))))

/* Free *p and set it to NULL. */
static inline void free_and_null(char **p)
{
	free(*p);
	*p = NULL;
}

#endif
