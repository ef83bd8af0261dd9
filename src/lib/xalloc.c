#include "sparkctl.h"

#include "lib/xalloc.h"

ATTR_NORETURN static void out_of_memory(size_t size)
{
	fprintf(stderr, "sparkctl: out of memory (allocating %zu bytes)\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);
	if (!p)
		out_of_memory(size);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		out_of_memory(strlen(s) + 1);
	return p;
}

char *xstrdup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		out_of_memory(n + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;

	va_start(ap, fmt);
	int n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory(strlen(fmt));
	return p;
}

void *array_push(void *arr_ptr, size_t *nr, size_t elem_size)
{
	char **arr = arr_ptr;
	size_t n = *nr;

	/* Capacity is 4 below 4 elements, else the next power of two above n. */
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t cap = n ? n * 2 : 4;
		if (cap < n || cap > SIZE_MAX / elem_size)
			out_of_memory(SIZE_MAX);
		*arr = xrealloc(*arr, cap * elem_size);
	}
	char *elem = *arr + n * elem_size;
	memset(elem, 0, elem_size);
	*nr = n + 1;
	return elem;
}
