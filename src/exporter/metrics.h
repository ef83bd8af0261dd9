/*
 * metrics.h - an in-memory set of Prometheus metrics and its text form.
 *
 * Collectors add samples to a struct metric_set; metric_set_render()
 * writes the Prometheus text exposition format 0.0.4: each family once,
 * "# HELP" and "# TYPE" first, its samples together in the order they
 * were added, label values escaped.  Nothing here does I/O, so the
 * writer is tested on exact output (tests/unit/test-exporter.c).
 *
 * A family is created by its first sample; later samples of the same
 * name must have the same type.  Names and label names are checked
 * against Prometheus' grammar, so a bad one from a collector is an
 * error, never a line that breaks the whole scrape.
 */
#ifndef SPARKCTL_EXPORTER_METRICS_H
#define SPARKCTL_EXPORTER_METRICS_H

#include "sparkctl.h"
#include "lib/strbuf.h"

enum metric_type {
	METRIC_GAUGE,
	METRIC_COUNTER,
};

/* The most labels one sample may carry. */
#define METRIC_MAX_LABELS 8

struct metric_label {
	const char *name;
	const char *value;
};

struct metric_sample {
	char *labels; /* rendered: '{a="x",b="y"}' or "" */
	bool is_uint; /* value is u (exact), else d */
	uint64_t u;
	double d;
};

struct metric_family {
	char *name;
	char *help;
	enum metric_type type;
	struct metric_sample *samples;
	size_t nr, alloc;
};

struct metric_set {
	struct metric_family *families; /* in the order of their first sample */
	size_t nr, alloc;
	size_t last; /* index of the family the previous sample went to (a cheap cache) */
};

#define METRIC_SET_INIT                                                                            \
	{                                                                                          \
		NULL, 0, 0, 0                                                                      \
	}

void metric_set_release(struct metric_set *set);

/*
 * Add one sample of family name (help and type are used when the family
 * is new).  labels: nr_labels pairs (may be NULL when 0); a NULL value
 * leaves that label out.  Returns -EINVAL for a bad metric or label name,
 * too many labels, or a type other than the family's; -EEXIST when the
 * family already has a sample with these labels.
 */
int metric_add_u64(struct metric_set *set, const char *name, const char *help,
		   enum metric_type type, const struct metric_label *labels, size_t nr_labels,
		   uint64_t value);
int metric_add_double(struct metric_set *set, const char *name, const char *help,
		      enum metric_type type, const struct metric_label *labels, size_t nr_labels,
		      double value);

/*
 * The value of the first sample of family name whose labels include
 * label="value" (label NULL: the first sample at all).  -ENOENT if none.
 */
int metric_set_value(const struct metric_set *set, const char *name, const char *label,
		     const char *value, double *ret);

/* Append the text exposition of every family to out. */
void metric_set_render(const struct metric_set *set, struct strbuf *out);

/* True for a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) / label name (no ':', no "__"). */
bool metric_name_valid(const char *name);
bool metric_label_name_valid(const char *name);

/* Append s as a label value: \ " and newline escaped. */
void metric_escape_label(struct strbuf *out, const char *s);
/* Append s as HELP text: \ and newline escaped. */
void metric_escape_help(struct strbuf *out, const char *s);

#endif
