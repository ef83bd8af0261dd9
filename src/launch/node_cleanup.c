/*
 * node_cleanup.c - ending what a job left on a node, found by its cgroups
 * (proc/contain.h) and by the marks in its processes' environment:
 * 'sparkctl agent reap' after an agent died, and --kill-stale's end of an
 * earlier job that holds the port.
 */
#include "sparkctl.h"

#include <signal.h>

#include "launch/node_agent.h"
#include "lib/xalloc.h"
#include "probe/procs.h"
#include "proc/contain.h"
#include "proc/loop.h"

/* How often a wait looks again. */
#define SWEEP_INTERVAL_MS 50

/* The processes of the list that are still alive (not gone, not zombies). */
static size_t still_alive(const struct proc_list *l)
{
	struct proc_table t;
	size_t n = 0;

	if (proc_table_scan(&t) < 0)
		return l->nr;
	for (size_t i = 0; i < t.nr; i++)
		if (t.v[i].state != 'Z' && proc_list_has(l, t.v[i].pid))
			n++;
	proc_table_release(&t);
	return n;
}

static bool all_gone(const void *procs)
{
	return !still_alive(procs);
}

/* Wait up to ms for every process of the list to be gone. */
static bool wait_gone(const struct proc_list *l, uint64_t ms)
{
	return loop_wait_until(all_gone, l, SWEEP_INTERVAL_MS, ms);
}

/*
 * End a job's part on this host (node, or CONTAIN_ANY_NODE): every process
 * in its cgroups and every one whose environment holds all the marks -
 * SIGTERM, the grace, SIGKILL (the cgroups' at once) - then remove its
 * cgroups.  Found once; then each is watched by its pid (a dying process
 * stops showing its environment before its sockets close).
 */
static void end_job_part(const char *job_id, unsigned node, const char *const *marks,
			 unsigned grace_ms)
{
	struct proc_list l = { 0 };
	struct proc_table t;

	contain_procs(job_id, node, &l);
	if (proc_table_scan(&t) == 0) {
		procs_with_env(&t, marks, &l);
		proc_table_release(&t);
	}
	procs_signal(&l, SIGTERM);
	if (!wait_gone(&l, grace_ms)) {
		contain_kill(job_id, node);
		procs_signal(&l, SIGKILL);
		wait_gone(&l, 2000);
	}
	contain_remove(job_id, node);
	proc_list_release(&l);
}

/* End every process of an earlier job on this host. */
static void end_job(const char *job_id, unsigned grace_ms)
{
	char *mark = xasprintf("%s=%s", LAUNCH_JOB_VAR, job_id);
	end_job_part(job_id, CONTAIN_ANY_NODE, (const char *const[]){ mark, NULL }, grace_ms);
	free(mark);
}

static bool port_free(const void *port)
{
	pid_t owner;

	return !tcp_port_owner(*(const unsigned *)port, &owner);
}

/* Wait up to ms for nothing to listen on port. */
static bool wait_port_free(unsigned port, uint64_t ms)
{
	return loop_wait_until(port_free, &port, SWEEP_INTERVAL_MS, ms);
}

int launch_claim_port(const struct launch_spec *s, void (*announce)(void *data, const char *msg),
		      void *data, struct strbuf *err)
{
	unsigned port = s->port;
	char *stale_job = NULL, *cmdline = NULL;
	pid_t owner = 0;
	int r = 0;

	if (!tcp_port_owner(port, &owner))
		return 0;
	if (owner == 0) {
		strbuf_addf(err, "port %u is in use by a process this user cannot see", port);
		return -EADDRINUSE;
	}
	stale_job = proc_env_value(owner, LAUNCH_JOB_VAR);
	cmdline = proc_cmdline(owner, 120);
	if (stale_job && !streq(stale_job, s->job_id) && s->kill_stale) {
		char *msg = xasprintf("ending sparkctl job %s, which holds port %u (pid %d: %s)",
				      stale_job, port, (int)owner, cmdline ? cmdline : "?");
		announce(data, msg);
		free(msg);
		end_job(stale_job, s->grace_ms);
		if (!wait_port_free(port, 2000)) {
			strbuf_addf(err, "port %u is still in use after ending job %s", port,
				    stale_job);
			r = -EADDRINUSE;
		}
	} else {
		strbuf_addf(err, "port %u is in use by pid %d (%s)", port, (int)owner,
			    cmdline ? cmdline : "?");
		if (stale_job)
			strbuf_addf(err, ", of the earlier sparkctl job %s: --kill-stale ends it",
				    stale_job);
		r = -EADDRINUSE;
	}
	free(stale_job);
	free(cmdline);
	return r;
}

int launch_agent_reap(const char *job_id, unsigned node_rank, unsigned grace_ms)
{
	char *marks[3] = { xasprintf("%s=%s", LAUNCH_JOB_VAR, job_id),
			   xasprintf("%s=%u", LAUNCH_JOB_NODE_VAR, node_rank), NULL };

	end_job_part(job_id, node_rank, (const char *const *)marks, grace_ms);
	free(marks[0]);
	free(marks[1]);
	return 0;
}
