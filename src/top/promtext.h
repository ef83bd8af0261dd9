/*
 * promtext.h - the Prometheus text format read back into a metric set.
 *
 * 'sparkctl top -H' runs 'sparkctl exporter --once' on each node and
 * reads its output here, so remote and local samples end up in the same
 * struct metric_set (exporter/metrics.h).  The parser is strict: what
 * metric_set_render() can write is accepted (plus timestamps, "untyped"
 * and other comments), anything else is an error naming the line.  It
 * is pure and bounded by its input, so it is fuzzed (tests/fuzz/).
 */
#ifndef SPARKCTL_TOP_PROMTEXT_H
#define SPARKCTL_TOP_PROMTEXT_H

#include "sparkctl.h"
#include "exporter/metrics.h"
#include "lib/strbuf.h"

/*
 * Add the samples of the text (len bytes, no NUL inside) to set.
 * Returns 0, or -EINVAL with "line N: why" in err (set then holds the
 * samples before that line).
 */
int promtext_parse(const char *text, size_t len, struct metric_set *set, struct strbuf *err);

/*
 * The value of label name in a rendered label set ('{a="x",b="y"}', as
 * struct metric_sample holds it), unescaped, appended to out.  Returns 0,
 * -ENOENT when there is no such label, -EINVAL for a malformed set.
 */
int metric_labels_get(const char *labels, const char *name, struct strbuf *out);

#endif
