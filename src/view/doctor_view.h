/*
 * doctor_view.h - the report of 'sparkctl doctor', as text or JSON (pure).
 */
#ifndef SPARKCTL_DOCTOR_VIEW_H
#define SPARKCTL_DOCTOR_VIEW_H

#include "sparkctl.h"
#include "check/check.h"
#include "view/emit.h"

struct doctor_summary {
	size_t nodes, uninspected;
	size_t counts[4]; /* by enum check_status */
};

void doctor_summarize(const struct doctor_cluster *c, const struct findings *f,
		      struct doctor_summary *s);

/*
 * The report: findings grouped by node (in the order the nodes were given,
 * then "cluster"; a finding's node is the host as given), failures first,
 * each fix under its finding; then the totals.  quiet leaves PASS and SKIP
 * out of the text.  In JSON: docs/doctor.md.
 */
void doctor_emit(const struct doctor_cluster *c, const struct findings *f, bool quiet,
		 struct emitter *e);

/*
 * 'doctor --list': every check, one line each (id, scope, title); in JSON a
 * "checks" array of {"check", "scope": "node"|"cluster", "severity":
 * "FAIL"|"WARN" (the worst it reports), "title"} (docs/doctor.md).
 */
void doctor_emit_checks(struct emitter *e);

#endif
