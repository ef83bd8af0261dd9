/*
 * serve_ask.c - the preflight's questions to the nodes themselves
 * (serve_ask.h).
 */
#include "sparkctl.h"

#include "lib/xalloc.h"
#include "proc/run.h"
#include "serve/serve_ask.h"
#include "view/progress.h"

/* The most the script may take on a node, connection included: docker run starts a container. */
#define ASK_TIMEOUT_MS	 30000
#define ASK_IMAGE_MS	 90000
#define ASK_FANOUT	 16
#define ASK_OUTPUT_BYTES (1u << 20)

void serve_ask_nodes(struct remote_session *rm, const struct serve_plan *plan,
		     const struct serve_node_input *in, const struct serve_ask_options *o,
		     struct serve_node_facts *facts)
{
	unsigned timeout_ms = plan->image ? ASK_IMAGE_MS : ASK_TIMEOUT_MS;
	struct run_job *jobs = xcalloc(plan->nr_nodes + 1, sizeof(*jobs));

	for (size_t i = 0; i < plan->nr_nodes; i++) {
		const char *argv[] = { "sh",
				       "-c",
				       serve_facts_script,
				       "sh",
				       plan->image ? plan->image : "",
				       serve_nccl_snippet,
				       NULL };
		const char *host = o->here ? "localhost" : plan->nodes[i].host;
		run_job_init(&jobs[i]);
		if (remote_session_argv(rm, host, argv, &jobs[i].argv) < 0)
			strvec_clear(&jobs[i].argv);
	}
	progress_begin(o->progress, "%s: asking %zu node%s", o->title, plan->nr_nodes,
		       plan->nr_nodes == 1 ? "" : "s");
	run_jobs(jobs, plan->nr_nodes, ASK_FANOUT, timeout_ms, ASK_OUTPUT_BYTES);
	progress_end();
	for (size_t i = 0; i < plan->nr_nodes; i++) {
		facts[i] = (struct serve_node_facts){ 0 };
		facts[i].error = remote_failure(&jobs[i], plan->nodes[i].host, timeout_ms);
		if (!facts[i].error)
			serve_facts_parse(jobs[i].out.buf, &facts[i]);
		serve_facts_host_nccl(&facts[i], in[i].inv);
		run_job_release(&jobs[i]);
	}
	free(jobs);
}

void serve_check_nodes(struct remote_session *rm, const struct serve_plan *plan,
		       const struct serve_node_input *in, const struct serve_ask_options *o,
		       struct findings *out)
{
	struct serve_node_facts *facts = xcalloc(plan->nr_nodes + 1, sizeof(*facts));

	serve_ask_nodes(rm, plan, in, o, facts);
	serve_check_node_facts(plan, facts, out);
	for (size_t i = 0; i < plan->nr_nodes; i++)
		serve_node_facts_release(&facts[i]);
	free(facts);
}
