#include "sparkctl.h"

#include "lib/strvec.h"
#include "lib/xalloc.h"

char *strvec_empty[1];

void strvec_init(struct strvec *sv)
{
	sv->v = strvec_empty;
	sv->nr = 0;
	sv->alloc = 0;
}

void strvec_push_nodup(struct strvec *sv, char *s)
{
	if (sv->nr + 2 > sv->alloc) {
		size_t alloc = sv->alloc ? sv->alloc * 2 : 8;
		char **v = sv->alloc ? sv->v : NULL;
		sv->v = xrealloc(v, alloc * sizeof(*sv->v));
		sv->alloc = alloc;
	}
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
	strvec_push_nodup(sv, xstrdup(s));
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	strvec_push_nodup(sv, s);
}

void strvec_pushl(struct strvec *sv, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, sv);
	while ((s = va_arg(ap, const char *)) != NULL)
		strvec_push(sv, s);
	va_end(ap);
}

void strvec_clear(struct strvec *sv)
{
	for (size_t i = 0; i < sv->nr; i++)
		free(sv->v[i]);
	if (sv->alloc)
		free(sv->v);
	strvec_init(sv);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strvec_sort(struct strvec *sv)
{
	if (sv->nr > 1)
		qsort(sv->v, sv->nr, sizeof(*sv->v), cmp_str);
}

bool strvec_contains(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->nr; i++)
		if (streq(sv->v[i], s))
			return true;
	return false;
}
