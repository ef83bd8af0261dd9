/*
 * status_view.h - 'sparkctl status': the cluster on one screen.
 *
 * Pure: drawn from each node's answer to 'sparkctl agent status' (a JSON
 * document, docs/status.md), or the reason it gave none.
 */
#ifndef SPARKCTL_STATUS_VIEW_H
#define SPARKCTL_STATUS_VIEW_H

#include "sparkctl.h"
#include "lib/json.h"
#include "view/emit.h"

struct status_node {
	const char *host;      /* as given */
	char *error;	       /* why it did not answer; NULL when doc is its answer */
	json_t *doc;	       /* its answer */
	bool sparkctl_missing; /* reached, but no sparkctl there (error says so) */
};

/*
 * One row per node - reachable, GPUs (count and name; hottest
 * temperature, mean utilisation, total power), fabric ports up with their
 * rates and MTUs, the last doctor's result and age (now: Unix seconds) -
 * then one line per node that could not be reached, with the reason.  In
 * JSON each node has its answer whole ("status") and those figures
 * ("summary").
 */
void status_emit(const struct status_node *nodes, size_t n, int64_t now, struct emitter *e);

/* "45s", "12m", "3h", "2d": a short age. */
void status_age(int64_t seconds, char buf[24]);

#endif
