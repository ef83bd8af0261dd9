/*
 * launch_view.c - the summary of a launch, as a table or as JSON.
 */
#include "sparkctl.h"

#include "view/color.h"
#include "view/launch_view.h"

const char *launch_end_name(enum launch_end end)
{
	static const char *const names[] = {
		[LAUNCH_END_OK] = "ok",
		[LAUNCH_END_UNIT_FAILED] = "failed",
		[LAUNCH_END_INTERRUPTED] = "interrupted",
		[LAUNCH_END_TIMEOUT] = "timeout",
		[LAUNCH_END_NODE_FAILED] = "node-failed",
	};
	return names[end];
}

static void emit_unit(const struct launch_options *o, const struct launch_result *res,
		      const struct launch_unit_result *u, struct emitter *e)
{
	struct strbuf status = STRBUF_INIT;
	bool first = res->end == LAUNCH_END_UNIT_FAILED && u->id == res->failed_unit;
	/*
	 * As doctor's PASS, WARN and FAIL: exit 0 green; a rank that sparkctl
	 * ended, or that never started, yellow; a failed or lost one red.
	 */
	bool ok = u->ended && !u->signaled && u->status == 0;
	bool spared = !u->started || (u->ended_by_launch && !first);
	const char *color = ok ? COLOR_PASS : spared ? COLOR_WARN : COLOR_FAIL;

	if (!u->started)
		strbuf_addstr(&status, "not started");
	else if (!u->ended)
		strbuf_addstr(&status, "lost");
	else
		launch_describe_status(u->status, u->signaled, &status);
	emit_row_open(e);
	emit_cellf(e, o->job->torchrun ? "node" : "rank", jint(u->id), "%u", u->id);
	emit_cell(e, "host", jstr(o->nodes[u->node].host), o->nodes[u->node].host);
	emit_value(e, "started", jbool(u->started), NULL);
	emit_value(e, "exit_status", u->ended && !u->signaled ? jint(u->status) : json_null(),
		   NULL);
	emit_value(e, "signal", u->ended && u->signaled ? jint(u->status - 128) : json_null(),
		   NULL);
	emit_cell_color(e, "status", jstr(status.buf), color, status.buf);
	if (u->ended)
		emit_cellf(e, "duration_seconds", jreal_rounded((double)u->ms / 1000.0, 3),
			   "%.2f s", (double)u->ms / 1000.0);
	else
		emit_cell(e, "duration_seconds", json_null(), "-");
	emit_value(e, "ended_by_launch", jbool(u->ended_by_launch), NULL);
	emit_value(e, "first_to_fail", jbool(first), NULL);
	emit_cell(e, NULL, NULL,
		  first		       ? "first to fail"
		  : u->ended_by_launch ? "ended by sparkctl"
				       : "");
	emit_row_close(e);
	strbuf_release(&status);
}

/* JSON only: how each node contained the job. */
static void emit_nodes(const struct launch_options *o, const struct launch_result *res,
		       struct emitter *e)
{
	emit_array_open(e, "nodes");
	for (size_t i = 0; i < res->nr_nodes; i++) {
		const struct launch_node_result *n = &res->nodes[i];
		emit_object_open(e, NULL);
		emit_value(e, "host", jstr(o->nodes[i].host), NULL);
		emit_value(e, "containment",
			   n->containment == CONTAIN_AUTO ? json_null()
							  : jstr(contain_mode_name(n->containment)),
			   NULL);
		emit_value(e, "containment_note", jstr(n->note), NULL);
		emit_close(e);
	}
	emit_close(e);
}

void launch_summary_emit(const struct launch_options *o, const struct launch_result *res,
			 struct emitter *e)
{
	static const char *const headers[] = { ">RANK", "HOST", "STATUS", ">TIME", "" };
	static const char *const torchrun_headers[] = { ">NODE", "HOST", "STATUS", ">TIME", "" };

	emit_value(e, "schema_version", jint(LAUNCH_SUMMARY_SCHEMA_VERSION), NULL);
	emit_value(e, "job_id", jstr(o->job->job_id), NULL);
	emit_value(e, "outcome", jstr(launch_end_name(res->end)), NULL);
	emit_value(e, "exit_status", jint(res->exit_status), NULL);
	emit_value(e, "master_addr", jstr(res->master_addr[0] ? res->master_addr : NULL), NULL);
	emit_value(e, "master_port", res->port ? jint(res->port) : json_null(), NULL);
	emit_value(e, "duration_seconds", jreal_rounded(res->seconds, 3), NULL);
	if (o->srun)
		emit_value(e, "slurm_step",
			   jstr(res->slurm_step[0] ? res->slurm_step : o->srun->job_id), NULL);
	emit_value(e, "torchrun", jbool(o->job->torchrun), NULL);
	/* Width 0: one blank between columns, as compact as it gets on stderr. */
	emit_nodes(o, res, e);
	emit_table_open(e, "units", o->job->torchrun ? torchrun_headers : headers, 5, 0);
	for (size_t i = 0; i < res->nr_units; i++)
		emit_unit(o, res, &res->units[i], e);
	emit_table_close(e);
}
