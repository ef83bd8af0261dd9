#include "sparkctl.h"

#include <math.h>

#include "lib/parse.h"
#include "lib/xalloc.h"
#include "top/promtext.h"

/* A "# HELP" or "# TYPE" line, kept until the family's first sample. */
struct decl {
	char *name;
	char *help;
	enum metric_type type;
	bool typed;
};

struct decls {
	struct decl *v;
	size_t nr;
};

static struct decl *decl_get(struct decls *d, const char *name, size_t len)
{
	for (size_t i = 0; i < d->nr; i++)
		if (strlen(d->v[i].name) == len && !memcmp(d->v[i].name, name, len))
			return &d->v[i];
	struct decl *n = ARRAY_PUSH(d->v, d->nr);
	n->name = xstrndup(name, len);
	return n;
}

static void decls_release(struct decls *d)
{
	for (size_t i = 0; i < d->nr; i++) {
		free(d->v[i].name);
		free(d->v[i].help);
	}
	free(d->v);
}

static bool is_name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (colon && c == ':')
		return true;
	return !first && c >= '0' && c <= '9';
}

/* The length of the name at p (0: none). */
static size_t name_len(const char *p, const char *end, bool colon)
{
	size_t n = 0;

	while (p + n < end && is_name_char(p[n], n == 0, colon))
		n++;
	return n;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Parse one label set '{...}' at *pp (which points at '{'), up to end,
 * into names/values (allocated).  Returns the number of labels or
 * -EINVAL with the reason in *why.
 */
static int parse_labels(const char **pp, const char *end, char **names, char **values, size_t max,
			const char **why)
{
	const char *p = *pp + 1;
	size_t nr = 0;
	struct strbuf v = STRBUF_INIT;

	for (;;) {
		if (p < end && *p == '}') {
			p++;
			break;
		}
		size_t n = name_len(p, end, false);
		if (n == 0) {
			*why = "expected a label name or '}'";
			goto fail;
		}
		if (nr == max) {
			*why = "too many labels";
			goto fail;
		}
		char *name = xstrndup(p, n);
		if (!metric_label_name_valid(name)) {
			free(name);
			*why = "invalid label name";
			goto fail;
		}
		for (size_t i = 0; i < nr; i++) {
			if (streq(names[i], name)) {
				free(name);
				*why = "repeated label";
				goto fail;
			}
		}
		p += n;
		if (p + 1 >= end || p[0] != '=' || p[1] != '"') {
			free(name);
			*why = "expected '=\"' after a label name";
			goto fail;
		}
		p += 2;
		strbuf_reset(&v);
		for (;;) {
			if (p >= end) {
				free(name);
				*why = "unterminated label value";
				goto fail;
			}
			if (*p == '"')
				break;
			if (*p == '\\') {
				if (p + 1 >= end) {
					free(name);
					*why = "unterminated label value";
					goto fail;
				}
				if (p[1] == '\\' || p[1] == '"') {
					strbuf_addch(&v, p[1]);
				} else if (p[1] == 'n') {
					strbuf_addch(&v, '\n');
				} else {
					free(name);
					*why = "invalid escape in a label value";
					goto fail;
				}
				p += 2;
				continue;
			}
			strbuf_addch(&v, *p++);
		}
		p++;
		names[nr] = name;
		values[nr] = xstrdup(v.buf ? v.buf : "");
		nr++;
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == '}') {
			p++;
			break;
		}
		*why = "expected ',' or '}' after a label value";
		goto fail;
	}
	strbuf_release(&v);
	*pp = p;
	return (int)nr;
fail:
	strbuf_release(&v);
	for (size_t i = 0; i < nr; i++) {
		free(names[i]);
		free(values[i]);
	}
	return -EINVAL;
}

/* A sample value: an exact unsigned integer, or a float (NaN, +Inf, -Inf included). */
static int parse_value(const char *s, bool *is_uint, uint64_t *u, double *d)
{
	char *end;

	if (*s >= '0' && *s <= '9' && s[strspn(s, "0123456789")] == '\0' && parse_u64(s, u) == 0) {
		*is_uint = true;
		return 0;
	}
	*is_uint = false;
	if (streq(s, "NaN")) {
		*d = NAN;
		return 0;
	}
	if (streq(s, "+Inf") || streq(s, "Inf")) {
		*d = INFINITY;
		return 0;
	}
	if (streq(s, "-Inf")) {
		*d = -INFINITY;
		return 0;
	}
	/* strtod() alone would also take hex, "infinity" and "nan(...)". */
	if (!*s || s[strspn(s, "0123456789.eE+-")] != '\0')
		return -EINVAL;
	errno = 0;
	*d = strtod(s, &end);
	if (*end || end == s || !isfinite(*d))
		return -EINVAL;
	return 0;
}

static int parse_comment(const char *p, const char *end, struct decls *decls, const char **why)
{
	bool help;
	size_t n;
	struct strbuf text = STRBUF_INIT;

	if ((size_t)(end - p) >= 7 && !memcmp(p, "# HELP ", 7))
		help = true;
	else if ((size_t)(end - p) >= 7 && !memcmp(p, "# TYPE ", 7))
		help = false;
	else
		return 0; /* any other comment */
	p += 7;
	n = name_len(p, end, true);
	if (n == 0) {
		*why = "expected a metric name";
		return -EINVAL;
	}
	const char *name = p;
	p += n;
	if (p < end && !is_blank(*p)) {
		*why = "invalid metric name";
		return -EINVAL;
	}
	while (p < end && is_blank(*p))
		p++;
	struct decl *d = decl_get(decls, name, n);
	if (help) {
		if (d->help) {
			*why = "a second HELP for the metric";
			return -EINVAL;
		}
		for (; p < end; p++) {
			if (*p == '\\' && p + 1 < end && p[1] == 'n') {
				strbuf_addch(&text, '\n');
				p++;
			} else if (*p == '\\' && p + 1 < end && p[1] == '\\') {
				strbuf_addch(&text, '\\');
				p++;
			} else {
				strbuf_addch(&text, *p);
			}
		}
		d->help = strbuf_detach(&text, NULL);
		return 0;
	}
	if (d->typed) {
		*why = "a second TYPE for the metric";
		return -EINVAL;
	}
	size_t tl = (size_t)(end - p);
	while (tl && is_blank(p[tl - 1]))
		tl--;
	if (tl == 7 && !memcmp(p, "counter", 7)) {
		d->type = METRIC_COUNTER;
	} else if ((tl == 5 && !memcmp(p, "gauge", 5)) || (tl == 7 && !memcmp(p, "untyped", 7))) {
		d->type = METRIC_GAUGE;
	} else {
		*why = "unsupported metric type (counter, gauge, untyped)";
		return -EINVAL;
	}
	d->typed = true;
	return 0;
}

static int parse_sample(const char *p, const char *end, struct decls *decls, struct metric_set *set,
			const char **why)
{
	char *names[METRIC_MAX_LABELS], *values[METRIC_MAX_LABELS];
	struct metric_label labels[METRIC_MAX_LABELS];
	char value[64], *name;
	int nr = 0, r;
	size_t n = name_len(p, end, true);
	bool is_uint;
	uint64_t u = 0;
	double d = 0;

	if (n == 0) {
		*why = "expected a metric name";
		return -EINVAL;
	}
	name = xstrndup(p, n);
	p += n;
	if (p < end && *p == '{') {
		nr = parse_labels(&p, end, names, values, METRIC_MAX_LABELS, why);
		if (nr < 0) {
			free(name);
			return nr;
		}
	}
	r = -EINVAL;
	if (p >= end || !is_blank(*p)) {
		*why = "expected a space before the value";
		goto out;
	}
	while (p < end && is_blank(*p))
		p++;
	n = 0;
	while (p + n < end && !is_blank(p[n]))
		n++;
	if (n == 0 || n >= sizeof(value)) {
		*why = n ? "value too long" : "no value";
		goto out;
	}
	memcpy(value, p, n);
	value[n] = '\0';
	p += n;
	if (parse_value(value, &is_uint, &u, &d) < 0) {
		*why = "invalid value";
		goto out;
	}
	/* An optional timestamp (milliseconds), which a snapshot does not need. */
	while (p < end && is_blank(*p))
		p++;
	if (p < end && *p == '-')
		p++;
	n = 0;
	while (p + n < end && p[n] >= '0' && p[n] <= '9')
		n++;
	p += n;
	while (p < end && is_blank(*p))
		p++;
	if (p != end) {
		*why = "unexpected text after the value";
		goto out;
	}
	struct decl *dc = decl_get(decls, name, strlen(name));
	for (int i = 0; i < nr; i++)
		labels[i] = (struct metric_label){ names[i], values[i] };
	if (is_uint)
		r = metric_add_u64(set, name, dc->help ? dc->help : "", dc->type, labels,
				   (size_t)nr, u);
	else
		r = metric_add_double(set, name, dc->help ? dc->help : "", dc->type, labels,
				      (size_t)nr, d);
	if (r == -EEXIST)
		*why = "a second sample with the same labels";
	else if (r < 0)
		*why = "a sample of the wrong type";
	if (r < 0)
		r = -EINVAL;
out:
	for (int i = 0; i < nr; i++) {
		free(names[i]);
		free(values[i]);
	}
	free(name);
	return r;
}

int promtext_parse(const char *text, size_t len, struct metric_set *set, struct strbuf *err)
{
	struct decls decls = { NULL, 0 };
	const char *p = text, *end = text + len;
	const char *why = NULL;
	unsigned long line = 0;
	int r = 0;

	if (memchr(text, '\0', len)) {
		strbuf_addstr(err, "a NUL byte in the text");
		return -EINVAL;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *le = eol ? eol : end;
		line++;
		const char *s = p;
		while (s < le && is_blank(*s))
			s++;
		if (s == le)
			r = 0;
		else if (*s == '#')
			r = parse_comment(s, le, &decls, &why);
		else
			r = parse_sample(s, le, &decls, set, &why);
		if (r < 0) {
			strbuf_addf(err, "line %lu: %s", line, why);
			break;
		}
		p = eol ? eol + 1 : end;
	}
	decls_release(&decls);
	return r;
}

int metric_labels_get(const char *labels, const char *name, struct strbuf *out)
{
	char *names[METRIC_MAX_LABELS], *values[METRIC_MAX_LABELS];
	const char *p = labels, *end = labels + strlen(labels), *why;
	int nr, r = -ENOENT;

	if (!*labels)
		return -ENOENT;
	if (*p != '{')
		return -EINVAL;
	nr = parse_labels(&p, end, names, values, METRIC_MAX_LABELS, &why);
	if (nr < 0)
		return nr;
	if (p != end)
		r = -EINVAL;
	for (int i = 0; i < nr; i++) {
		if (r == -ENOENT && streq(names[i], name)) {
			strbuf_addstr(out, values[i]);
			r = 0;
		}
		free(names[i]);
		free(values[i]);
	}
	return r;
}
