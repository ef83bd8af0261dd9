/*
 * link_view.h - the report of 'sparkctl bench link': per benchmark a
 * table of the paths with their figures and verdicts, the errors and the
 * likely causes; the same calls give the JSON report (docs/bench-link.md).
 */
#ifndef SPARKCTL_LINK_VIEW_H
#define SPARKCTL_LINK_VIEW_H

#include "sparkctl.h"
#include "bench/link_run.h"
#include "view/emit.h"

/* The version of bench link's JSON (docs/schemas/bench-link.schema.json). */
#define LINK_REPORT_SCHEMA_VERSION 1

void link_report_emit(const struct link_run *b, struct emitter *e);

#endif
