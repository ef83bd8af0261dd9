/*
 * doctor_view.h - the report of 'sparkctl doctor', as text or JSON (pure).
 */
#ifndef SPARKCTL_DOCTOR_VIEW_H
#define SPARKCTL_DOCTOR_VIEW_H

#include "sparkctl.h"
#include "check/check.h"
#include "lib/json.h"
#include "lib/strbuf.h"

struct doctor_summary {
	size_t nodes, uninspected;
	size_t counts[4]; /* by enum check_status */
};

void doctor_summarize(const struct doctor_cluster *c, const struct findings *f,
		      struct doctor_summary *s);

/*
 * Findings grouped by node (in the order the nodes were given, then
 * "cluster"; a finding's node is the host as given), failures first, each fix under its finding;
 * then one line of totals.  quiet leaves out PASS and SKIP; color adds ANSI colours.
 */
void doctor_render(const struct doctor_cluster *c, const struct findings *f, bool quiet, bool color,
		   struct strbuf *out);

/* The JSON report (docs/doctor.md). */
json_t *doctor_json(const struct doctor_cluster *c, const struct findings *f);

#endif
