/*
 * launcher_srun.c - the launcher's side of a launch under srun (srun.h):
 * one srun runs every task, each an agent that speaks protocol.h; its
 * labelled lines are handed to the node (the task) that said them, and
 * what the launcher says goes to all tasks at once through srun's stdin.
 *
 * srun's stdin is a pipe only this process writes, as an agent's is over
 * ssh: if the launcher dies, however it dies, srun passes the end of the
 * input on to every task (--input=all) and each agent ends its rank.
 * srun also gets SIGTERM from the kernel then (PR_SET_PDEATHSIG), which
 * it forwards to the tasks.  It runs in a process group of its own, so a
 * Ctrl-C reaches the launcher alone, and the job is ended in order.
 */
#include "sparkctl.h"

#include <signal.h>

#include "launch/launcher_state.h"
#include "lib/xalloc.h"
#include "remote/ssh.h"

static bool srun_running(const struct launcher *l)
{
	return l->srun->child.pid > 0 && !l->srun->child.reaped;
}

static void srun_close_pipe(struct launcher *l, int *fd)
{
	if (*fd >= 0)
		loop_unwatch_fd(&l->loop, *fd);
	child_close_fd(fd);
	if (l->srun->child.out_fd < 0 && l->srun->child.err_fd < 0)
		loop_timer_cancel(&l->loop, &l->srun->pipe_wait);
}

/* A line of srun's stdout: a task's protocol line behind its label. */
static void srun_out_line(struct launcher *l, struct node *unused, char *line, size_t len)
{
	unsigned task;
	size_t skip;

	(void)unused;
	if (!srun_label_parse(line, len, &task, &skip) || task >= l->nr)
		return;
	/* The node's own line buffer is free under srun: it holds a line's pieces. */
	if (srun_join_line(&l->nodes[task].rx, line + skip, len - skip, &l->srun->line))
		launcher_agent_line(l, &l->nodes[task], l->srun->line.buf, l->srun->line.len);
}

static bool all_tasks_starting(const struct launcher *l)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->nodes[i].state != NODE_STARTING)
			return false;
	return true;
}

/*
 * A line of srun's stderr: a task's (its agent's, or slurmstepd's about
 * it) behind its label, else srun's own, said as a warning once the
 * tasks run; kept until then, and the last one as the reason srun failed.
 */
static void srun_err_line(struct launcher *l, struct node *unused, char *line, size_t len)
{
	struct srun_state *s = l->srun;
	struct strbuf shown = STRBUF_INIT;
	const char *visible = line;
	unsigned task;
	size_t skip;

	(void)unused;
	if (srun_label_parse(line, len, &task, &skip) && task < l->nr) {
		launcher_agent_stderr_line(l, &l->nodes[task], line + skip, len - skip);
		return;
	}
	len = ssh_line_as_shown(&visible, len);
	if (!len)
		return;
	strbuf_add_printable(&shown, visible, len, 0);
	if (!l->all_go && s->held.nr < HELD_ERR_MAX)
		strvec_push(&s->held, shown.buf);
	else if (l->all_go)
		launcher_warning(l, "%s", shown.buf);
	/* srun follows its error with advice that is no reason ("Check SLURM_JOB_ID ..."). */
	if (strstr(shown.buf, "error:")) {
		free(s->last_error);
		s->last_error = xstrdup(shown.buf);
	}
	free(s->last_err);
	s->last_err = strbuf_detach(&shown, NULL);
}

void srun_say_held(struct launcher *l)
{
	for (size_t i = 0; i < l->srun->held.nr; i++)
		launcher_warning(l, "%s", l->srun->held.v[i]);
	strvec_clear(&l->srun->held);
}

static void read_srun(struct launcher *l, bool is_err)
{
	struct srun_state *s = l->srun;
	int *fd = is_err ? &s->child.err_fd : &s->child.out_fd;

	if (*fd >= 0 && launcher_read_lines(l, NULL, *fd, is_err ? &s->erx : &s->rx,
					    is_err ? srun_err_line : srun_out_line))
		srun_close_pipe(l, fd);
}

static void srun_output(struct loop *loop, int fd, short revents, void *data)
{
	struct launcher *l = data;

	(void)loop;
	(void)revents;
	read_srun(l, fd == l->srun->child.err_fd);
}

static void write_srun(struct launcher *l)
{
	struct srun_state *s = l->srun;

	if (s->child.in_fd >= 0 && strbuf_write_pending(&s->tx, s->child.in_fd) < 0) {
		/* srun is gone; its exit says the rest */
		srun_close_pipe(l, &s->child.in_fd);
		strbuf_reset(&s->tx);
	}
}

static void srun_writable(struct loop *loop, int fd, short revents, void *data)
{
	(void)loop;
	(void)fd;
	(void)revents;
	write_srun(data);
}

/*
 * The line in which slurmstepd said it could not run the agent on a node
 * still starting, or NULL.  It need not be the node's last: a task that
 * failed elsewhere first has the step cancelled, and slurmstepd says so
 * after it.
 */
static const char *exec_failure(const struct node *nd)
{
	if (nd->state != NODE_STARTING)
		return NULL;
	for (size_t i = 0; i < nd->held_err.nr; i++)
		if (strstr(nd->held_err.v[i], "execve()"))
			return nd->held_err.v[i];
	return nd->last_err && strstr(nd->last_err, "execve()") ? nd->last_err : NULL;
}

/*
 * srun ended.  Before any task said a word it ran none: the step was
 * refused (allocation too small, no controller), which launch_run()
 * reports as one line.  Otherwise every task that did not finish was
 * lost with it (scancel, a node that failed), unless the job was ending.
 */
static void srun_exited(struct launcher *l)
{
	struct srun_state *s = l->srun;
	bool signaled;
	int status = child_status(&s->child, &signaled);
	struct node *says_why = NULL;

	read_srun(l, false);
	read_srun(l, true);
	srun_close_pipe(l, &s->child.in_fd);
	if (s->child.out_fd >= 0 || s->child.err_fd >= 0)
		loop_timer_arm_in(&l->loop, &s->pipe_wait, PIPE_CLOSE_WAIT_MS);
	if (all_tasks_starting(l) && !l->ending && status != 0) {
		bool task_said = false;
		for (size_t i = 0; i < l->nr; i++)
			task_said |= l->nodes[i].last_err != NULL;
		if (!task_said) {
			s->refused = srun_refusal_kind(s->last_error ? s->last_error : s->last_err);
			launcher_set_end(l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
			l->ending = true;
			return;
		}
	}
	srun_say_held(l);
	/*
	 * One task's loss ends the job: one node says why, the others follow.
	 * The first that could not run the agent, for the usual cause has a
	 * remedy; else the first.
	 */
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		if (nd->state == NODE_DONE || nd->failed)
			continue;
		if (!says_why || (!exec_failure(says_why) && exec_failure(nd)))
			says_why = nd;
	}
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		const char *exec_line = exec_failure(nd);
		if (nd->state == NODE_DONE || nd->failed)
			continue;
		for (size_t k = 0; k < l->res->nr_units; k++) {
			struct launch_unit_result *u = &l->res->units[k];
			if (u->node == nd->index && u->started && !u->ended)
				u->ended_by_launch = l->ending;
		}
		if (l->ending || nd != says_why)
			continue;
		if (exec_line)
			launcher_notice(
				l,
				"cannot start on %s: no sparkctl at %s there (sparkctl deploy "
				"-H %s, or --remote-sparkctl PATH): %s",
				nd->n->host, l->o->srun->sparkctl, nd->n->host, exec_line);
		else if (nd->state == NODE_STARTING)
			launcher_notice(l, "cannot start on %s: %s", nd->n->host,
					nd->last_err  ? nd->last_err
					: s->last_err ? s->last_err
						      : "srun ended before its task said a word");
		else
			launcher_notice(l, "lost %s (srun %s %d)%s%s", nd->n->host,
					signaled ? "killed by signal" : "exited with status",
					signaled ? status - 128 : status,
					nd->last_err || s->last_err ? ": " : "",
					nd->last_err  ? nd->last_err
					: s->last_err ? s->last_err
						      : "");
		node_failed(l, nd);
	}
}

static void srun_ended(struct loop *loop, struct child *c, void *data)
{
	(void)loop;
	child_finish(c);
	srun_exited(data);
}

static void srun_close_pipes(struct loop *loop, void *data)
{
	struct launcher *l = data;

	(void)loop;
	srun_close_pipe(l, &l->srun->child.out_fd);
	srun_close_pipe(l, &l->srun->child.err_fd);
}

/* The spec every task gets alike; each finds its own place in it (srun_task_place()). */
static void queue_spec(struct launcher *l)
{
	struct launch_spec s = *l->o->job;

	s.node_rank = 0;
	s.nnodes = l->o->srun->nnodes;
	s.nproc = l->o->srun->nproc;
	s.rank_base = 0;
	s.all_local = false;
	s.ping_ms = 0; /* Slurm watches its nodes and its srun */
	launch_spec_to_json(&s, &l->srun->tx);
	strbuf_addch(&l->srun->tx, '\n');
}

int srun_start(struct launcher *l, struct strbuf *err)
{
	struct child *c = &l->srun->child;
	int r;

	srun_step_argv(l->o->srun, l->o->job->torchrun, &c->args);
	c->in = c->out = c->err = CHILD_IO_PIPE;
	c->group = CHILD_OWN_GROUP;
	/* Killed with the launcher, srun still ends the step: SIGTERM, which it forwards. */
	c->die_with_parent = true;
	c->death_signal = SIGTERM;
	if ((r = child_start(c)) < 0) {
		strbuf_addf(err, "cannot run '%s': %s", c->args.v[0], strerror(-r));
		return r;
	}
	loop_watch_fd(&l->loop, c->out_fd, POLLIN, srun_output, l);
	loop_watch_fd(&l->loop, c->err_fd, POLLIN, srun_output, l);
	loop_watch_child(&l->loop, c, srun_ended, l);
	queue_spec(l);
	return 0;
}

void srun_send(struct launcher *l, const char *line)
{
	if (l->srun->child.in_fd >= 0)
		strbuf_addstr(&l->srun->tx, line);
}

void srun_send_control(struct launcher *l, char what)
{
	struct srun_state *s = l->srun;
	char line[3] = { what, '\n', '\0' };

	if (s->child.in_fd < 0 || s->sent == 'K' || s->sent == what)
		return;
	srun_send(l, line);
	s->sent = what;
}

/*
 * Before every task is ready no rank runs, and srun may still wait for
 * the step's resources: its input is closed (each task that started
 * ends itself) and it gets SIGTERM, which cancels the step.
 */
void srun_end_job(struct launcher *l, char how)
{
	if (!srun_running(l))
		return;
	if (!l->all_go) {
		srun_close_pipe(l, &l->srun->child.in_fd);
		child_signal(&l->srun->child, SIGTERM);
		return;
	}
	srun_send_control(l, how);
}

void srun_hang_up(struct launcher *l, int sig)
{
	if (!srun_running(l))
		return;
	srun_close_pipe(l, &l->srun->child.in_fd);
	child_signal(&l->srun->child, sig);
}

void srun_before_wait(struct launcher *l)
{
	struct srun_state *s = l->srun;

	write_srun(l);
	if (s->child.in_fd >= 0 && s->tx.len)
		loop_watch_fd(&l->loop, s->child.in_fd, POLLOUT, srun_writable, l);
	else if (s->child.in_fd >= 0)
		loop_unwatch_fd(&l->loop, s->child.in_fd);
}

bool srun_finished(const struct launcher *l)
{
	const struct srun_state *s = l->srun;

	return !srun_running(l) && s->child.out_fd < 0 && s->child.err_fd < 0;
}

void srun_init(struct launcher *l)
{
	struct srun_state *s = xcalloc(1, sizeof(*s));

	child_init(&s->child);
	strbuf_init(&s->tx, 0);
	strbuf_init(&s->rx, 0);
	strbuf_init(&s->erx, 0);
	strbuf_init(&s->line, 0);
	strvec_init(&s->held);
	loop_timer_init(&s->pipe_wait, srun_close_pipes, l);
	l->srun = s;
}

void srun_release(struct launcher *l)
{
	struct srun_state *s = l->srun;

	child_release(&s->child);
	strbuf_release(&s->tx);
	strbuf_release(&s->rx);
	strbuf_release(&s->erx);
	strbuf_release(&s->line);
	strvec_clear(&s->held);
	free(s->last_err);
	free(s->last_error);
	free(s);
	l->srun = NULL;
}
