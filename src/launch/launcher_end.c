/*
 * launcher_end.c - how the launcher ends a job: the end requests to the
 * agents, the first reason the job ended, and the job's deadlines (the
 * nodes' readiness, --job-timeout, --stall, the SIGKILL request and the
 * hang-up), each a loop timer armed where its wait begins.
 */
#include "sparkctl.h"

#include <signal.h>

#include "launch/launcher_state.h"

/* ---- ending the job ----------------------------------------------------- */

void node_send_control(struct node *nd, char what)
{
	if (nd->l->srun) {
		srun_send_control(nd->l, what);
		return;
	}
	if (nd->agent.in_fd < 0 || nd->state == NODE_DONE || nd->sent == 'K' || nd->sent == what)
		return;
	strbuf_addch(&nd->tx, what);
	strbuf_addch(&nd->tx, '\n');
	nd->sent = what;
}

/*
 * End the job on every node: 'T' (SIGTERM, then SIGKILL after the grace)
 * or 'K' (SIGKILL now).  A node still starting has no ranks yet: its ssh
 * client is stopped instead.  The first call sets the end's deadlines.
 */
void launcher_end_job(struct launcher *l, char how)
{
	if (!l->ending) {
		uint64_t grace = l->o->job->grace_ms;
		l->ending = true;
		loop_timer_cancel(&l->loop, &l->ready);
		loop_timer_cancel(&l->loop, &l->timeout);
		loop_timer_cancel(&l->loop, &l->stall);
		loop_timer_arm_in(&l->loop, &l->end_kill, grace + END_KILL_AFTER_MS);
		loop_timer_arm_in(&l->loop, &l->hangup, grace + END_HANGUP_AFTER_MS);
	}
	if (l->srun) {
		srun_end_job(l, how);
		return;
	}
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		if (!node_agent_running(nd))
			continue;
		if (nd->state == NODE_STARTING) {
			node_close_pipe(nd, &nd->agent.in_fd);
			child_signal(&nd->agent, SIGTERM);
		} else {
			node_send_control(nd, how);
		}
	}
}

void launcher_set_end(struct launcher *l, enum launch_end end, int status)
{
	if (l->res->end != LAUNCH_END_OK)
		return; /* the first reason stands */
	l->res->end = end;
	l->res->exit_status = status;
}

void node_failed(struct launcher *l, struct node *nd)
{
	if (l->res->end == LAUNCH_END_OK)
		l->res->failed_node = nd->index;
	launcher_set_end(l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
	launcher_end_job(l, 'T');
}

/* ---- timers ------------------------------------------------------------- */

/* Armed at the start, cancelled by the go or the end. */
static void ready_deadline(struct loop *loop, void *data)
{
	struct launcher *l = data;

	(void)loop;
	for (size_t i = 0; i < l->nr; i++)
		if (l->nodes[i].state == NODE_STARTING) {
			launcher_notice(l, "%s: no answer within %" PRIu64 " s",
					l->nodes[i].n->host, l->ready_wait_ms / 1000);
			node_failed(l, &l->nodes[i]);
			break;
		}
}

/* Armed by the go, cancelled by the end. */
static void timeout_reached(struct loop *loop, void *data)
{
	struct launcher *l = data;

	(void)loop;
	launcher_notice(l, "--job-timeout %u s reached: ending the job", l->o->timeout_s);
	launcher_set_end(l, LAUNCH_END_TIMEOUT, LAUNCH_EXIT_TIMEOUT);
	launcher_end_job(l, 'T');
}

static bool any_unit_running(const struct launcher *l)
{
	for (size_t i = 0; i < l->res->nr_units; i++)
		if (l->res->units[i].started && !l->res->units[i].ended)
			return true;
	return false;
}

/* Armed by the go and again by each output line, cancelled by the end. */
static void stall_advice(struct loop *loop, void *data)
{
	struct launcher *l = data;

	(void)loop;
	if (!any_unit_running(l))
		return;
	if (l->o->quiet)
		return;
	launcher_notice(l,
			"no output for %u s while ranks still run.  A job that hangs silently at "
			"start-up is most often:",
			l->o->stall_s);
	strbuf_addstr(
		&l->errout,
		"  - GPUDirect RDMA where the GPU cannot do it (GB10 has no nvidia_peermem):\n"
		"    the node's 'sparkctl env' sets NCCL_NET_GDR_LEVEL and NCCL_DMABUF_ENABLE "
		"for it\n"
		"  - the wrong bootstrap interface: NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME must "
		"reach\n"
		"    MASTER_ADDR and every other node\n"
		"  - a pinned NCCL_IB_GID_INDEX that is not the RoCE v2 IPv4 GID on every port\n"
		"  - a firewall between the nodes (MASTER_PORT and NCCL's own ports)\n"
		"  NCCL_DEBUG=INFO (--env NCCL_DEBUG=INFO) shows where it stops.  Check the nodes "
		"with:\n");
	strbuf_addf(&l->errout, "    sparkctl doctor -H %s\n", l->o->hosts_arg);
}

/* Armed by the end: the grace is over, the agents are asked for SIGKILL. */
static void request_kill(struct loop *loop, void *data)
{
	struct launcher *l = data;

	(void)loop;
	l->kill_requested = true;
	for (size_t i = 0; i < l->nr; i++)
		node_send_control(&l->nodes[i], 'K');
}

/*
 * Armed by the end, later than request_kill(): an agent that does not
 * answer has its input closed, so that it ends the job itself, and gets
 * SIGTERM; SIGKILL HANGUP_KILL_AFTER_MS later if it is still there.
 */
static void hang_up(struct loop *loop, void *data)
{
	struct launcher *l = data;

	l->hangup_sig = l->hangup_sig ? SIGKILL : SIGTERM;
	if (l->srun)
		srun_hang_up(l, l->hangup_sig);
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		if (!node_agent_running(nd))
			continue;
		node_close_pipe(nd, &nd->agent.in_fd);
		child_signal(&nd->agent, l->hangup_sig);
	}
	for (size_t i = 0; i < l->nr_reapers; i++)
		child_signal(l->reapers[i], l->hangup_sig);
	if (l->hangup_sig == SIGTERM)
		loop_timer_arm_in(loop, &l->hangup, HANGUP_KILL_AFTER_MS);
}

/*
 * Each LAUNCH_PING_MS while the job runs: 'P' to every agent, which ends
 * the job on its node when the pings stop (protocol.h).  Not queued behind
 * lines an agent has not read yet: it hears from the launcher all the same.
 */
static void ping_agents(struct loop *loop, void *data)
{
	struct launcher *l = data;

	for (size_t i = 0; i < l->nr && !l->srun; i++) {
		struct node *nd = &l->nodes[i];
		if (nd->agent.in_fd >= 0 && nd->state != NODE_DONE && !nd->tx.len)
			strbuf_addstr(&nd->tx, "P\n");
	}
	loop_timer_arm_in(loop, &l->ping, LAUNCH_PING_MS);
}

void launcher_timers_init(struct launcher *l)
{
	loop_timer_init(&l->ready, ready_deadline, l);
	loop_timer_init(&l->timeout, timeout_reached, l);
	loop_timer_init(&l->stall, stall_advice, l);
	loop_timer_init(&l->end_kill, request_kill, l);
	loop_timer_init(&l->hangup, hang_up, l);
	loop_timer_init(&l->ping, ping_agents, l);
}
