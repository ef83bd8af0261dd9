/*
 * launch_view.h - how a launch ended: the outcome line's companion table
 * on stderr, and DIR/summary.json for scripts (docs/launch.md), from the
 * same calls.
 */
#ifndef SPARKCTL_LAUNCH_VIEW_H
#define SPARKCTL_LAUNCH_VIEW_H

#include "sparkctl.h"
#include "launch/launcher.h"
#include "view/emit.h"

/* The version of launch's summary.json (docs/schemas/launch-summary.schema.json). */
#define LAUNCH_SUMMARY_SCHEMA_VERSION 1

/*
 * The job (JSON only: id, outcome, exit status, master, time) and one row
 * per unit: its rank (node with --torchrun), host, status, time, and
 * whether it was the first to fail or was ended by sparkctl.
 */
void launch_summary_emit(const struct launch_options *o, const struct launch_result *res,
			 struct emitter *e);

/* "ok", "failed", "interrupted", "timeout", "node-failed". */
const char *launch_end_name(enum launch_end end);

#endif
