/*
 * launcher.c - the launcher's side of 'sparkctl launch': one agent per
 * node, their output merged line by line, the job ended everywhere at
 * the first failure.
 *
 * Each agent's stdin is a pipe only this process writes: if it dies,
 * however it dies, every agent sees its input close and ends its part of
 * the job.  The agents (ssh clients, or the local agent) run in a process
 * group of their own, so a Ctrl-C at the terminal reaches the launcher
 * alone and the job is ended in order, not by ssh clients dying.
 *
 * Everything is waited for in one loop (proc/loop.h): the agents' pipes
 * and exits, the signals, and each deadline of the job as a timer armed
 * where its wait begins and cancelled where it ends.
 */
#include "sparkctl.h"

#include <signal.h>

#include "launch/launcher_state.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "proc/child.h"
#include "proc/loop.h"
#include "remote/lookup.h"

/* Notices relay what nodes and ssh said: escaped for the terminal, as every message. */
ATTR_PRINTF(2, 0) static void add_notice(struct launcher *l, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT;

	strbuf_vaddf(&msg, fmt, ap);
	strbuf_addstr(&l->errout, "sparkctl launch: ");
	strbuf_add_printable(&l->errout, msg.buf, msg.len, PRINTABLE_LINES);
	strbuf_addch(&l->errout, '\n');
	strbuf_release(&msg);
}

void launcher_notice(struct launcher *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_notice(l, fmt, ap);
	va_end(ap);
}

void launcher_warning(struct launcher *l, const char *fmt, ...)
{
	va_list ap;

	if (l->o->quiet)
		return;
	va_start(ap, fmt);
	add_notice(l, fmt, ap);
	va_end(ap);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static void flush_output(struct launcher *l)
{
	if (l->out.len && !l->out_broken && write_all(l->o->out_fd, l->out.buf, l->out.len) < 0)
		l->out_broken = true;
	strbuf_reset(&l->out);
	if (l->errout.len)
		write_all(l->o->err_fd, l->errout.buf, l->errout.len);
	strbuf_reset(&l->errout);
}

/* ---- the agents' pipes ------------------------------------------------- */

/* Close one of the node's pipes, which the loop stops watching first. */
void node_close_pipe(struct node *nd, int *fd)
{
	if (*fd >= 0)
		loop_unwatch_fd(&nd->l->loop, *fd);
	child_close_fd(fd);
	if (nd->agent.out_fd < 0 && nd->agent.err_fd < 0)
		loop_timer_cancel(&nd->l->loop, &nd->pipe_wait);
}

bool node_agent_running(const struct node *nd)
{
	return nd->agent.pid > 0 && !nd->agent.reaped;
}

/* ---- what the agents say ------------------------------------------------ */

static struct launch_unit_result *unit_of(struct launcher *l, const char *text, const char **rest)
{
	char *end;
	unsigned long id = strtoul(text, &end, 10);

	if (end == text || id >= l->res->nr_units)
		return NULL;
	if (rest)
		*rest = *end == ' ' ? end + 1 : end;
	return &l->res->units[id];
}

static void unit_output(struct launcher *l, struct node *nd, bool is_err, const char *text,
			size_t len)
{
	const char *data;
	struct launch_unit_result *u = unit_of(l, text, &data);
	struct strbuf *sink = is_err ? &l->errout : &l->out;
	size_t dlen;

	if (!u || u->node != nd->index)
		return;
	dlen = len - (size_t)(data - text);
	if (l->o->job->torchrun)
		strbuf_addf(sink, "[%s] ", nd->n->host);
	else if (l->o->tag_output)
		strbuf_addf(sink, "[%s:%u] ", nd->n->host, u->id);
	else
		strbuf_addf(sink, "[%u] ", u->id);
	strbuf_add(sink, data, dlen);
	strbuf_addch(sink, '\n');
	if (l->logs && l->logs[u->id] >= 0) {
		struct strbuf line = STRBUF_INIT;
		strbuf_add(&line, data, dlen);
		strbuf_addch(&line, '\n');
		if (write_all(l->logs[u->id], line.buf, line.len) < 0) {
			launcher_notice(l, "cannot write the log of %u: %s", u->id,
					strerror(errno));
			child_close_fd(&l->logs[u->id]);
		}
		strbuf_release(&line);
	}
	/* Output: the stall advice waits again. */
	if (l->all_go && !l->ending && l->o->stall_s)
		loop_timer_arm_in(&l->loop, &l->stall, (uint64_t)l->o->stall_s * 1000);
}

/* Both ends were timed by their nodes, and a's came first. */
static bool ended_before(const struct launch_unit_result *a, const struct launch_unit_result *b)
{
	return a->ended_at_us && b->ended_at_us && a->ended_at_us < b->ended_at_us;
}

static void unit_exit(struct launcher *l, struct node *nd, const char *text)
{
	struct launch_unit_result *u;
	const char *rest;
	int status, signaled, ending;
	uint64_t ms, at = 0;

	if (!(u = unit_of(l, text, &rest)) || u->node != nd->index || u->ended ||
	    sscanf(rest, "%d %d %" SCNu64 " %d %" SCNu64, &status, &signaled, &ms, &ending, &at) <
		    4)
		return;
	u->ended = true;
	u->status = status;
	u->signaled = signaled != 0;
	u->ms = ms;
	u->ended_at_us = at;
	/* Its own failure, unless its agent was ending the job when it ended. */
	u->ended_by_launch = ending != 0;
	if (status == 0 || ending)
		return;
	if (!l->ending) {
		l->res->failed_unit = u->id;
		launcher_set_end(l, LAUNCH_END_UNIT_FAILED, status);
		launcher_end_job(l, 'T');
		return;
	}
	/*
	 * Another unit's failure was heard first, but this one failed on its
	 * own as well, and ended earlier by the nodes' clocks: it is the cause
	 * (a worker killed, and the head that lost it exits 1 a moment later,
	 * its news first over a quicker connection).  Nodes whose clocks NTP
	 * keeps agree to a few milliseconds; where they do not, this order can
	 * be as wrong as the order of arrival.
	 */
	if (l->res->end == LAUNCH_END_UNIT_FAILED &&
	    ended_before(u, &l->res->units[l->res->failed_unit])) {
		l->res->failed_unit = u->id;
		l->res->exit_status = status;
	}
}

static void all_ready_go(struct launcher *l)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->nodes[i].state != NODE_READY)
			return;
	if (l->srun) {
		struct strbuf go = STRBUF_INIT;
		strbuf_addf(&go, "G %s %u\n", l->res->master_addr, l->res->port);
		srun_send(l, go.buf);
		strbuf_release(&go);
		srun_say_held(l);
	}
	for (size_t i = 0; i < l->nr; i++) {
		if (!l->srun)
			strbuf_addf(&l->nodes[i].tx, "G %s %u\n", l->res->master_addr,
				    l->res->port);
		l->nodes[i].state = NODE_RUNNING;
	}
	for (size_t i = 0; i < l->res->nr_units; i++)
		l->res->units[i].started = true;
	l->all_go = true;
	loop_timer_cancel(&l->loop, &l->ready);
	if (l->o->timeout_s)
		loop_timer_arm_in(&l->loop, &l->timeout, (uint64_t)l->o->timeout_s * 1000);
	if (l->o->stall_s)
		loop_timer_arm_in(&l->loop, &l->stall, (uint64_t)l->o->stall_s * 1000);
}

/*
 * "C MODE NOTE": how the node contains the job.  Where only the marks
 * are left, the user hears why: a process that clears its environment
 * would outlive the job if the node's agent died.
 */
static void node_containment(struct launcher *l, struct node *nd, const char *arg)
{
	struct launch_node_result *r = &l->res->nodes[nd->index];
	const char *sp = strchr(arg, ' ');
	char *mode = xstrndup(arg, sp ? (size_t)(sp - arg) : strlen(arg));

	if (contain_mode_parse(mode, &r->containment) < 0)
		r->containment = CONTAIN_AUTO;
	free(r->note);
	r->note = sp && sp[1] ? xstrdup(sp + 1) : NULL;
	if (r->containment == CONTAIN_MARKS && l->o->job->contain == CONTAIN_AUTO)
		launcher_warning(l,
				 "%s: no cgroup for the job (%s); its processes are found by "
				 "their environment",
				 nd->n->host, r->note ? r->note : "none can be made");
	free(mode);
}

/*
 * Say the stderr lines a node printed while it started, once: all of them when
 * it is ready, all but the last when that one is given as its failure's reason.
 */
static void say_held_err(struct launcher *l, struct node *nd, bool but_last)
{
	size_t n = nd->held_err.nr;

	if (but_last && n > 0 && nd->last_err && streq(nd->held_err.v[n - 1], nd->last_err))
		n--;
	for (size_t i = 0; i < n; i++)
		launcher_warning(l, "%s: %s", nd->n->host, nd->held_err.v[i]);
	strvec_clear(&nd->held_err);
}

void launcher_agent_line(struct launcher *l, struct node *nd, char *line, size_t len)
{
	char kind = line[0];
	const char *arg = len >= 2 ? line + 2 : "";

	switch (kind) {
	case 'O':
	case 'E':
		if (len >= 2)
			unit_output(l, nd, kind == 'E', arg, len - 2);
		break;
	case 'X':
		unit_exit(l, nd, arg);
		break;
	case 'W':
		launcher_warning(l, "%s: %s", nd->n->host, arg);
		break;
	case 'F':
		say_held_err(l, nd, false);
		launcher_notice(l, "%s: %s", nd->n->host, arg);
		nd->failed = true;
		node_failed(l, nd);
		break;
	case 'R':
		if (nd->state != NODE_STARTING)
			break;
		if (nd->index == 0 &&
		    sscanf(arg, "%255s %u", l->res->master_addr, &l->res->port) != 2) {
			launcher_notice(l, "%s: the agent did not name the master", nd->n->host);
			node_failed(l, nd);
			break;
		}
		nd->state = NODE_READY;
		say_held_err(l, nd, false);
		if (!l->ending) {
			all_ready_go(l);
			break;
		}
		node_send_control(nd, 'T');
		if (l->kill_requested)
			node_send_control(nd, 'K');
		break;
	case 'C':
		node_containment(l, nd, arg);
		break;
	case 'D':
		nd->state = NODE_DONE;
		break;
	case 'S':
		if (l->srun && nd->index == 0)
			snprintf(l->res->slurm_step, sizeof(l->res->slurm_step), "%s", arg);
		break;
	default:
		break;
	}
}

void launcher_split_lines(struct launcher *l, struct node *nd, struct strbuf *buf, bool at_eof,
			  void (*fn)(struct launcher *, struct node *, char *, size_t))
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(buf->buf + start, '\n', buf->len - start))) {
		*nl = '\0';
		fn(l, nd, buf->buf + start, (size_t)(nl - buf->buf) - start);
		start = (size_t)(nl - buf->buf) + 1;
	}
	if (at_eof && start < buf->len) {
		fn(l, nd, buf->buf + start, buf->len - start);
		start = buf->len;
	}
	memmove(buf->buf, buf->buf + start, buf->len - start);
	strbuf_setlen(buf, buf->len - start);
}

/* A line of ssh's or the agent's stderr, as a terminal shows it (no CR). */
void launcher_agent_stderr_line(struct launcher *l, struct node *nd, char *line, size_t len)
{
	struct strbuf shown = STRBUF_INIT;
	const char *visible = line;

	len = ssh_line_as_shown(&visible, len);
	if (!len || ssh_recovered_master_line(visible))
		return;
	strbuf_add_printable(&shown, visible, len, 0);
	/* With -q it is said only as the reason a node failed (last_err). */
	if (nd->state != NODE_STARTING)
		launcher_warning(l, "%s: %s", nd->n->host, shown.buf);
	else if (nd->held_err.nr < HELD_ERR_MAX)
		strvec_push(&nd->held_err, shown.buf);
	free(nd->last_err);
	nd->last_err = strbuf_detach(&shown, NULL);
}

bool launcher_read_lines(struct launcher *l, struct node *nd, int fd, struct strbuf *buf,
			 void (*fn)(struct launcher *, struct node *, char *, size_t))
{
	for (int rounds = 0; rounds < 16; rounds++) {
		ssize_t n;
		strbuf_grow(buf, 65536);
		n = read(fd, buf->buf + buf->len, buf->alloc - buf->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			launcher_split_lines(l, nd, buf, true, fn);
			return true;
		}
		strbuf_setlen(buf, buf->len + (size_t)n);
		launcher_split_lines(l, nd, buf, false, fn);
	}
	return false;
}

static void read_agent(struct launcher *l, struct node *nd, bool is_err)
{
	int *fd = is_err ? &nd->agent.err_fd : &nd->agent.out_fd;

	if (*fd >= 0 &&
	    launcher_read_lines(l, nd, *fd, is_err ? &nd->erx : &nd->rx,
				is_err ? launcher_agent_stderr_line : launcher_agent_line))
		node_close_pipe(nd, fd);
}

static void write_agent(struct node *nd)
{
	if (nd->agent.in_fd >= 0 && strbuf_write_pending(&nd->tx, nd->agent.in_fd) < 0) {
		/* it is gone; its exit says the rest */
		node_close_pipe(nd, &nd->agent.in_fd);
		strbuf_reset(&nd->tx);
	}
}

static void agent_writable(struct loop *loop, int fd, short revents, void *data)
{
	(void)loop;
	(void)fd;
	(void)revents;
	write_agent(data);
}

static void reaper_ended(struct loop *loop, struct child *c, void *data)
{
	(void)loop;
	(void)data;
	child_finish(c);
}

/*
 * A node's agent died before it said the job was over there: run 'agent
 * reap' on the node to end what its ranks left (a rank itself gets
 * SIGKILL from the kernel when its agent dies, its children do not).
 * Nothing can be done where the node itself is gone; then this fails fast.
 */
static void start_reaper(struct launcher *l, struct node *nd)
{
	struct child *c = xmalloc(sizeof(*c));
	struct strvec words = STRVEC_INIT;
	int r = 0;

	if (nd->n->local)
		strvec_push(&words, l->o->local_sparkctl);
	else
		remote_sparkctl_words(&words, l->o->local_sparkctl, l->o->remote_sparkctl);
	strvec_pushl(&words, "agent", "reap", l->o->job->job_id, NULL);
	strvec_pushf(&words, "%zu", nd->index);
	strvec_pushf(&words, "%u", l->o->job->grace_ms);
	child_init(c);
	c->in = c->out = c->err = CHILD_IO_NULL;
	c->group = CHILD_OWN_GROUP;
	if (nd->n->local)
		for (size_t i = 0; i < words.nr; i++)
			strvec_push(&c->args, words.v[i]);
	else
		r = ssh_command(&c->args, nd->n->host, l->o->ssh, (const char *const *)words.v);
	strvec_clear(&words);
	if (r < 0 || child_start(c) < 0) {
		child_release(c);
		free(c);
		return;
	}
	*ARRAY_PUSH(l->reapers, l->nr_reapers) = c;
	loop_watch_child(&l->loop, c, reaper_ended, l);
	/* Started after the hang-up: it gets what the others got. */
	if (l->hangup_sig)
		child_signal(c, l->hangup_sig);
}

/* An agent ended: fine after D, otherwise the node failed or was lost. */
static void agent_exited(struct launcher *l, struct node *nd)
{
	bool signaled;
	int status = child_status(&nd->agent, &signaled);

	read_agent(l, nd, false);
	read_agent(l, nd, true);
	node_close_pipe(nd, &nd->agent.in_fd);
	/* Its pipes may be held open by something else: they do not keep the launch. */
	if (nd->agent.out_fd >= 0 || nd->agent.err_fd >= 0)
		loop_timer_arm_in(&l->loop, &nd->pipe_wait, PIPE_CLOSE_WAIT_MS);
	if (nd->state == NODE_DONE || nd->failed)
		return;
	say_held_err(l, nd, nd->state == NODE_STARTING && !l->ending);
	if (nd->state == NODE_STARTING && !signaled && nd->last_err &&
	    remote_sparkctl_missing(status, nd->last_err)) {
		free(nd->last_err);
		nd->last_err = remote_sparkctl_missing_message(nd->n->host);
	}
	if (nd->state == NODE_STARTING && !l->ending)
		launcher_notice(l, "cannot start on %s: %s", nd->n->host,
				nd->last_err ? nd->last_err : "the agent ended without a word");
	else if (nd->state != NODE_STARTING && !l->ending)
		/* Once the job ends (another node failed, a signal, --job-timeout), every agent
		 * is told to end or stopped: its exit is no news, and no node was lost. */
		launcher_notice(l, "lost %s (%s %s %d)%s%s", nd->n->host,
				nd->n->local ? "agent" : "ssh",
				signaled ? "killed by signal" : "exited with status",
				signaled ? status - 128 : status, nd->last_err ? ": " : "",
				nd->last_err ? nd->last_err : "");
	if (nd->state != NODE_STARTING)
		start_reaper(l, nd);
	for (size_t i = 0; i < l->res->nr_units; i++) {
		struct launch_unit_result *u = &l->res->units[i];
		if (u->node == nd->index && u->started && !u->ended)
			u->ended_by_launch = l->ending;
	}
	if (!l->ending || nd->state == NODE_STARTING)
		node_failed(l, nd);
}

static void got_signal(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	struct launcher *l = data;
	int sig = (int)si->ssi_signo;

	(void)loop;
	l->interrupts++;
	if (l->res->end == LAUNCH_END_OK)
		l->res->signal = sig;
	launcher_set_end(l, LAUNCH_END_INTERRUPTED, 128 + sig);
	if (l->interrupts == 1) {
		launcher_warning(l, "SIG%s: ending the job (again to kill it at once)",
				 sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal");
		launcher_end_job(l, 'T');
	} else {
		launcher_notice(l, "killing the job");
		launcher_end_job(l, 'K');
	}
}

/* ---- starting the agents ---------------------------------------------- */

/* The command that runs node's agent: itself here, through ssh elsewhere. */
static int agent_command(const struct launcher *l, const struct node *nd, struct strvec *argv)
{
	if (nd->n->local) {
		strvec_pushl(argv, l->o->local_sparkctl, "agent", "launch", NULL);
		return 0;
	}
	struct strvec remote = STRVEC_INIT;
	int r;

	remote_sparkctl_words(&remote, l->o->local_sparkctl, l->o->remote_sparkctl);
	strvec_pushl(&remote, "agent", "launch", NULL);
	r = ssh_command(argv, nd->n->host, l->o->ssh, (const char *const *)remote.v);
	strvec_clear(&remote);
	return r;
}

static void agent_output(struct loop *loop, int fd, short revents, void *data)
{
	struct node *nd = data;

	(void)loop;
	(void)revents;
	read_agent(nd->l, nd, fd == nd->agent.err_fd);
}

static void agent_ended(struct loop *loop, struct child *c, void *data)
{
	struct node *nd = data;

	(void)loop;
	child_finish(c);
	agent_exited(nd->l, nd);
}

static void close_pipes(struct loop *loop, void *data)
{
	struct node *nd = data;

	(void)loop;
	node_close_pipe(nd, &nd->agent.out_fd);
	node_close_pipe(nd, &nd->agent.err_fd);
}

/*
 * Its stdin, stdout and stderr are pipes (and nothing else this process
 * has open reaches a node); its own process group: terminal signals are
 * the launcher's to handle.
 */
static int start_agent(struct launcher *l, struct node *nd, struct strbuf *err)
{
	struct child *c = &nd->agent;
	int r;

	if ((r = agent_command(l, nd, &c->args)) < 0) {
		strbuf_addf(err, "%s: cannot build the ssh command", nd->n->host);
		return r;
	}
	c->in = c->out = c->err = CHILD_IO_PIPE;
	c->group = CHILD_OWN_GROUP;
	if ((r = child_start(c)) < 0) {
		strbuf_addf(err, "cannot run '%s': %s", c->args.v[0], strerror(-r));
		return r;
	}
	loop_watch_fd(&l->loop, c->out_fd, POLLIN, agent_output, nd);
	loop_watch_fd(&l->loop, c->err_fd, POLLIN, agent_output, nd);
	loop_watch_child(&l->loop, c, agent_ended, nd);
	return 0;
}

/* The node's spec line: the shared job with this node's place in it. */
static void queue_spec(struct launcher *l, struct node *nd)
{
	struct launch_spec s = *l->o->job;

	s.node_rank = (unsigned)nd->index;
	s.nnodes = (unsigned)l->nr;
	s.nproc = nd->n->nproc;
	s.rank_base = nd->rank_base;
	s.ping_ms = LAUNCH_PING_MS;
	launch_spec_to_json(&s, &nd->tx);
	strbuf_addch(&nd->tx, '\n');
}

/* ---- the loop ----------------------------------------------------------- */

static bool finished(const struct launcher *l)
{
	if (l->srun)
		return srun_finished(l);
	for (size_t i = 0; i < l->nr_reapers; i++)
		if (!l->reapers[i]->reaped)
			return false;
	for (size_t i = 0; i < l->nr; i++)
		if (node_agent_running(&l->nodes[i]) || l->nodes[i].agent.out_fd >= 0 ||
		    l->nodes[i].agent.err_fd >= 0)
			return false;
	return true;
}

/* Before each wait: the control lines go out, the output too; the end when nothing is left. */
static void before_wait(struct loop *loop, void *data)
{
	struct launcher *l = data;

	if (l->srun)
		srun_before_wait(l);
	for (size_t i = 0; i < l->nr && !l->srun; i++) {
		struct node *nd = &l->nodes[i];
		write_agent(nd);
		if (nd->agent.in_fd >= 0 && nd->tx.len)
			loop_watch_fd(loop, nd->agent.in_fd, POLLOUT, agent_writable, nd);
		else if (nd->agent.in_fd >= 0)
			loop_unwatch_fd(loop, nd->agent.in_fd);
	}
	flush_output(l);
	if (finished(l))
		loop_stop(loop);
}

/* ---- setting up and the result ---------------------------------------- */

static int open_logs(struct launcher *l, struct strbuf *err)
{
	const char *dir = l->o->log_dir;

	if (!dir)
		return 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		strbuf_addf(err, "cannot create the log directory '%s': %s", dir, strerror(errno));
		return -errno;
	}
	l->logs = xcalloc(l->res->nr_units, sizeof(*l->logs));
	for (size_t i = 0; i < l->res->nr_units; i++)
		l->logs[i] = -1;
	for (size_t i = 0; i < l->res->nr_units; i++) {
		char *path =
			xasprintf("%s/%s-%zu.log", dir, l->o->job->torchrun ? "node" : "rank", i);
		l->logs[i] =
			open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (l->logs[i] < 0) {
			int e = errno;
			strbuf_addf(err, "cannot create '%s': %s", path, strerror(e));
			free(path);
			return -e;
		}
		free(path);
	}
	return 0;
}

static void make_units(struct launcher *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nr; i++) {
		l->nodes[i].rank_base = (unsigned)n;
		n += l->nodes[i].n->nproc;
	}
	l->res->nodes = xcalloc(l->nr, sizeof(*l->res->nodes));
	l->res->nr_nodes = l->nr;
	l->res->nr_units = l->o->job->torchrun ? l->nr : n;
	l->res->units = xcalloc(l->res->nr_units, sizeof(*l->res->units));
	for (size_t i = 0; i < l->res->nr_units; i++) {
		struct launch_unit_result *u = &l->res->units[i];
		u->id = (unsigned)i;
		u->status = -1;
		if (l->o->job->torchrun) {
			u->node = i;
			continue;
		}
		for (size_t k = 0; k < l->nr; k++)
			if (i >= l->nodes[k].rank_base)
				u->node = k;
	}
}

static void launcher_init(struct launcher *l, const struct launch_options *o,
			  struct launch_result *res)
{
	*l = (struct launcher){
		.o = o, .res = res, .nr = o->nr_nodes, .out = STRBUF_INIT, .errout = STRBUF_INIT
	};
	memset(res, 0, sizeof(*res));
	loop_init(&l->loop);
	launcher_timers_init(l);
	l->nodes = xcalloc(l->nr, sizeof(*l->nodes));
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		*nd = (struct node){ .l = l,
				     .n = &o->nodes[i],
				     .index = i,
				     .tx = STRBUF_INIT,
				     .rx = STRBUF_INIT,
				     .erx = STRBUF_INIT,
				     .held_err = STRVEC_INIT };
		child_init(&nd->agent);
		loop_timer_init(&nd->pipe_wait, close_pipes, nd);
	}
	make_units(l);
	if (o->srun)
		srun_init(l);
}

static void launcher_release(struct launcher *l)
{
	loop_release(&l->loop);
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		child_release(&nd->agent);
		strbuf_release(&nd->tx);
		strbuf_release(&nd->rx);
		strbuf_release(&nd->erx);
		free(nd->last_err);
		strvec_clear(&nd->held_err);
	}
	for (size_t i = 0; l->logs && i < l->res->nr_units; i++)
		child_close_fd(&l->logs[i]);
	for (size_t i = 0; i < l->nr_reapers; i++) {
		child_release(l->reapers[i]);
		free(l->reapers[i]);
	}
	if (l->srun)
		srun_release(l);
	free(l->logs);
	free(l->reapers);
	free(l->nodes);
	strbuf_release(&l->out);
	strbuf_release(&l->errout);
}

/* Start every node's agent; at the first that cannot start, end the others. */
static void start_agents(struct launcher *l, struct strbuf *err)
{
	const struct launch_options *o = l->o;

	l->started_ms = monotonic_ms();
	l->ready_wait_ms =
		READY_SLACK_MS +
		(uint64_t)(o->ssh && o->ssh->connect_timeout ? o->ssh->connect_timeout : 5) * 1000 +
		(o->job->kill_stale ? o->job->grace_ms : 0);
	loop_timer_arm(&l->loop, &l->ready, l->started_ms + l->ready_wait_ms);
	loop_timer_arm_in(&l->loop, &l->ping, LAUNCH_PING_MS);
	if (l->srun) {
		if (srun_start(l, err) < 0) {
			launcher_set_end(l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
			launcher_notice(l, "%s", err->buf);
			strbuf_reset(err);
			launcher_end_job(l, 'T');
		}
		return;
	}
	for (size_t i = 0; i < l->nr; i++) {
		if (start_agent(l, &l->nodes[i], err) < 0) {
			/* Nothing has started its ranks: end what was started, then report. */
			launcher_set_end(l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
			l->res->failed_node = i;
			launcher_notice(l, "%s", err->buf);
			strbuf_reset(err);
			launcher_end_job(l, 'T');
			break;
		}
		queue_spec(l, &l->nodes[i]);
	}
}

int launch_run(const struct launch_options *o, struct launch_result *res, struct strbuf *err)
{
	struct launcher l;
	void (*old_pipe)(int) = SIG_ERR;
	sigset_t mask;
	int r;

	launcher_init(&l, o, res);
	if ((r = open_logs(&l, err)) < 0)
		goto out;
	old_pipe = signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if ((r = loop_watch_signals(&l.loop, &mask, got_signal, &l)) < 0) {
		strbuf_addf(err, "cannot set up signals: %s", strerror(-r));
		goto out;
	}
	loop_on_idle(&l.loop, before_wait, &l);
	start_agents(&l, err);
	loop_run(&l.loop);
	flush_output(&l);
	res->seconds = (double)(monotonic_ms() - l.started_ms) / 1000.0;
	/* srun ran no task: one line says why, as for a bad command line. */
	if (l.srun && l.srun->refused) {
		r = l.srun->refused;
		strbuf_addstr(err, l.srun->last_error ? l.srun->last_error
				   : l.srun->last_err ? l.srun->last_err
						      : "srun ran no task");
	}
out:
	launcher_release(&l);
	if (old_pipe != SIG_ERR)
		signal(SIGPIPE, old_pipe);
	if (r < 0)
		launch_result_release(res);
	return r;
}

void launch_result_release(struct launch_result *res)
{
	for (size_t i = 0; res->nodes && i < res->nr_nodes; i++)
		free(res->nodes[i].note);
	free(res->nodes);
	res->nodes = NULL;
	free(res->units);
	res->units = NULL;
	res->nr_units = 0;
}
