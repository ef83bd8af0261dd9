/*
 * serve_view.h - 'sparkctl serve --print': every node's environment and
 * the processes to start, in order, with the preflight's findings; as
 * text (lines a POSIX shell takes as they are) or JSON
 * (docs/schemas/serve-print.schema.json).
 */
#ifndef SPARKCTL_SERVE_VIEW_H
#define SPARKCTL_SERVE_VIEW_H

#include "sparkctl.h"
#include "check/check.h"
#include "serve/serve_plan.h"
#include "view/emit.h"

void serve_plan_emit(const struct serve_plan *plan, const struct findings *preflight,
		     struct emitter *e);

#endif
