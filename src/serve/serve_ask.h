/*
 * serve_ask.h - asking the nodes of a serve plan what the preflight needs
 * of them (serve_facts_script, every node at once): what listens, the
 * image, the NCCL in the image.  'sparkctl serve' and 'sparkctl doctor
 * --engine' both ask through here.
 */
#ifndef SPARKCTL_SERVE_ASK_H
#define SPARKCTL_SERVE_ASK_H

#include "sparkctl.h"

#include "check/check.h"
#include "remote/session.h"
#include "serve/serve_plan.h"

struct serve_ask_options {
	const char *title; /* in the progress line: "serve", "doctor" */
	bool progress;	   /* say what it waits for (view/progress.h) */
	/* The plan's one node is this host, named by its hostname: asked here, not over ssh. */
	bool here;
};

/*
 * Every node's facts into facts[0..plan->nr_nodes) (release each with
 * serve_node_facts_release()): the script's answers over rm, and its own
 * NCCL from in[i], plan->nodes[i]'s input.  A node that cannot be asked
 * has facts[i].error.
 */
void serve_ask_nodes(struct remote_session *rm, const struct serve_plan *plan,
		     const struct serve_node_input *in, const struct serve_ask_options *o,
		     struct serve_node_facts *facts);

/* serve_ask_nodes(), then serve_check_node_facts() into out. */
void serve_check_nodes(struct remote_session *rm, const struct serve_plan *plan,
		       const struct serve_node_input *in, const struct serve_ask_options *o,
		       struct findings *out);

#endif
