#include "sparkctl.h"

#include <math.h>

#include "exporter/metrics.h"
#include "lib/xalloc.h"

static bool name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (colon && c == ':')
		return true;
	return !first && c >= '0' && c <= '9';
}

bool metric_name_valid(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, p == name, true))
			return false;
	return true;
}

bool metric_label_name_valid(const char *name)
{
	if (!name || !*name || starts_with(name, "__"))
		return false;
	for (const char *p = name; *p; p++)
		if (!name_char(*p, p == name, false))
			return false;
	return true;
}

void metric_escape_label(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(out, "\\\\");
		else if (*s == '"')
			strbuf_addstr(out, "\\\"");
		else if (*s == '\n')
			strbuf_addstr(out, "\\n");
		else
			strbuf_addch(out, *s);
	}
}

void metric_escape_help(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_addstr(out, "\\\\");
		else if (*s == '\n')
			strbuf_addstr(out, "\\n");
		else
			strbuf_addch(out, *s);
	}
}

static void family_release(struct metric_family *f)
{
	for (size_t i = 0; i < f->nr; i++)
		free(f->samples[i].labels);
	free(f->samples);
	free(f->name);
	free(f->help);
}

void metric_set_release(struct metric_set *set)
{
	for (size_t i = 0; i < set->nr; i++)
		family_release(&set->families[i]);
	free(set->families);
	memset(set, 0, sizeof(*set));
}

static struct metric_family *find_family(struct metric_set *set, const char *name)
{
	if (set->last < set->nr && streq(set->families[set->last].name, name))
		return &set->families[set->last];
	for (size_t i = 0; i < set->nr; i++) {
		if (streq(set->families[i].name, name)) {
			set->last = i;
			return &set->families[i];
		}
	}
	return NULL;
}

static int render_labels(const struct metric_label *labels, size_t nr, struct strbuf *out)
{
	bool any = false;

	if (nr > METRIC_MAX_LABELS)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++) {
		if (!metric_label_name_valid(labels[i].name))
			return -EINVAL;
		for (size_t j = 0; j < i; j++)
			if (streq(labels[i].name, labels[j].name))
				return -EINVAL;
		if (!labels[i].value)
			continue;
		strbuf_addstr(out, any ? "," : "{");
		strbuf_addf(out, "%s=\"", labels[i].name);
		metric_escape_label(out, labels[i].value);
		strbuf_addch(out, '"');
		any = true;
	}
	if (any)
		strbuf_addch(out, '}');
	return 0;
}

static int add_sample(struct metric_set *set, const char *name, const char *help,
		      enum metric_type type, const struct metric_label *labels, size_t nr_labels,
		      const struct metric_sample *value)
{
	struct strbuf text = STRBUF_INIT;
	struct metric_family *f;
	int r;

	if (!metric_name_valid(name))
		return -EINVAL;
	r = render_labels(labels, nr_labels, &text);
	if (r < 0)
		goto out;
	f = find_family(set, name);
	if (!f) {
		if (set->nr == set->alloc) {
			set->alloc = set->alloc ? 2 * set->alloc : 32;
			set->families =
				xrealloc(set->families, set->alloc * sizeof(*set->families));
		}
		f = &set->families[set->nr];
		memset(f, 0, sizeof(*f));
		f->name = xstrdup(name);
		f->help = xstrdup(help ? help : "");
		f->type = type;
		set->last = set->nr++;
	} else if (f->type != type) {
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < f->nr; i++) {
		if (streq(f->samples[i].labels, text.buf)) {
			r = -EEXIST;
			goto out;
		}
	}
	if (f->nr == f->alloc) {
		f->alloc = f->alloc ? 2 * f->alloc : 4;
		f->samples = xrealloc(f->samples, f->alloc * sizeof(*f->samples));
	}
	f->samples[f->nr] = *value;
	f->samples[f->nr].labels = strbuf_detach(&text, NULL);
	f->nr++;
out:
	strbuf_release(&text);
	return r;
}

int metric_add_u64(struct metric_set *set, const char *name, const char *help,
		   enum metric_type type, const struct metric_label *labels, size_t nr_labels,
		   uint64_t value)
{
	struct metric_sample s = { .is_uint = true, .u = value };
	return add_sample(set, name, help, type, labels, nr_labels, &s);
}

int metric_add_double(struct metric_set *set, const char *name, const char *help,
		      enum metric_type type, const struct metric_label *labels, size_t nr_labels,
		      double value)
{
	struct metric_sample s = { .is_uint = false, .d = value };
	return add_sample(set, name, help, type, labels, nr_labels, &s);
}

/* The shortest of %.15g, %.17g that reads back as d, so 0.37 stays "0.37". */
static void add_double(struct strbuf *out, double d)
{
	char buf[40];

	if (isnan(d)) {
		strbuf_addstr(out, "NaN");
		return;
	}
	if (isinf(d)) {
		strbuf_addstr(out, d > 0 ? "+Inf" : "-Inf");
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof(buf), "%.17g", d);
	strbuf_addstr(out, buf);
}

void metric_set_render(const struct metric_set *set, struct strbuf *out)
{
	for (size_t i = 0; i < set->nr; i++) {
		const struct metric_family *f = &set->families[i];

		strbuf_addf(out, "# HELP %s ", f->name);
		metric_escape_help(out, f->help);
		strbuf_addf(out, "\n# TYPE %s %s\n", f->name,
			    f->type == METRIC_COUNTER ? "counter" : "gauge");
		for (size_t j = 0; j < f->nr; j++) {
			const struct metric_sample *s = &f->samples[j];

			strbuf_addstr(out, f->name);
			strbuf_addstr(out, s->labels);
			strbuf_addch(out, ' ');
			if (s->is_uint)
				strbuf_addf(out, "%" PRIu64, s->u);
			else
				add_double(out, s->d);
			strbuf_addch(out, '\n');
		}
	}
}

int metric_set_value(const struct metric_set *set, const char *name, const char *label,
		     const char *value, double *ret)
{
	struct strbuf want = STRBUF_INIT;
	int r = -ENOENT;

	if (label) {
		strbuf_addf(&want, "%s=\"", label);
		metric_escape_label(&want, value);
		strbuf_addch(&want, '"');
	}
	for (size_t i = 0; r == -ENOENT && i < set->nr; i++) {
		const struct metric_family *f = &set->families[i];
		if (!streq(f->name, name))
			continue;
		for (size_t k = 0; k < f->nr; k++) {
			const struct metric_sample *s = &f->samples[k];
			const char *at = label ? strstr(s->labels, want.buf) : s->labels;
			/* The pair starts the label set or follows a comma. */
			if (!at || (label && at[-1] != '{' && at[-1] != ','))
				continue;
			*ret = s->is_uint ? (double)s->u : s->d;
			r = 0;
			break;
		}
	}
	strbuf_release(&want);
	return r;
}
