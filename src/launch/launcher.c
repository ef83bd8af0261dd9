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
 */
#include "sparkctl.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "launch/launch.h"
#include "lib/clock.h"
#include "lib/xalloc.h"

/* How long the agents may take to report ready, beyond ssh's connect timeout. */
#define READY_SLACK_MS	    30000
/* After asking the agents to end the job: SIGKILL request, then hang up on them. */
#define END_KILL_AFTER_MS   5000
#define END_HANGUP_AFTER_MS 10000
/* How long a finished node's output pipes may stay open. */
#define PIPE_CLOSE_WAIT_MS  1000

enum node_state {
	NODE_STARTING, /* connecting, reading the spec, setting up */
	NODE_READY,    /* R received */
	NODE_RUNNING,  /* G sent */
	NODE_DONE,     /* D received: nothing of the job is left there */
};

struct node {
	const struct launch_node *n;
	size_t index;
	unsigned rank_base;
	enum node_state state;
	pid_t pid; /* the ssh client or the local agent */
	bool reaped;
	int wstatus;
	uint64_t reaped_at;
	int in_fd, out_fd, err_fd; /* -1 once closed */
	struct strbuf tx;	   /* control lines not yet written */
	struct strbuf rx, erx;	   /* partial lines from its stdout and stderr */
	char sent;		   /* the strongest end request sent: 0, 'T' or 'K' */
	bool failed;		   /* said F */
	char *last_err;		   /* its last line on stderr (ssh's reason) */
};

struct launcher {
	const struct launch_options *o;
	struct launch_result *res;
	struct node *nodes;
	size_t nr;
	int sig_fd;
	uint64_t started_ms, go_ms, last_output_ms;
	uint64_t ready_deadline, end_started_ms;
	bool all_go;
	bool ending;
	int interrupts;
	bool stall_reported;
	bool out_broken;	   /* our stdout is gone: the ranks' output is dropped */
	struct strbuf out, errout; /* to write at the end of this turn */
	int *logs;		   /* one fd per unit, or NULL */
	pid_t *reapers;		   /* 'agent reap' for nodes whose agent died; 0 once reaped */
	size_t nr_reapers;
};

static void notice(struct launcher *l, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void notice(struct launcher *l, const char *fmt, ...)
{
	va_list ap;
	strbuf_addstr(&l->errout, "sparkctl launch: ");
	va_start(ap, fmt);
	strbuf_vaddf(&l->errout, fmt, ap);
	va_end(ap);
	strbuf_addch(&l->errout, '\n');
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

/* ---- starting the agents ---------------------------------------------- */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The command that runs node's agent: itself here, through ssh elsewhere. */
static int agent_command(const struct launcher *l, const struct node *nd, struct strvec *argv)
{
	if (nd->n->local) {
		strvec_push(argv, l->o->local_sparkctl);
		strvec_push(argv, "agent");
		strvec_push(argv, "launch");
		return 0;
	}
	const char *const remote[] = { l->o->remote_sparkctl, "agent", "launch", NULL };
	return ssh_command(argv, nd->n->host, l->o->ssh, remote);
}

static int spawn_agent(struct launcher *l, struct node *nd, struct strbuf *err)
{
	struct strvec argv = STRVEC_INIT;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, defaults;
	int r;

	if ((r = agent_command(l, nd, &argv)) < 0) {
		strbuf_addf(err, "%s: cannot build the ssh command", nd->n->host);
		strvec_clear(&argv);
		return r;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot make pipes: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
	/* Only the three pipes: nothing else this process has open reaches a node. */
	posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	sigemptyset(&defaults);
	sigaddset(&defaults, SIGPIPE);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	/* Its own process group: terminal signals are the launcher's to handle. */
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						POSIX_SPAWN_SETPGROUP);
	r = -posix_spawnp(&nd->pid, argv.v[0], &fa, &attr, argv.v, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (r < 0) {
		strbuf_addf(err, "cannot run '%s': %s", argv.v[0], strerror(-r));
		goto out;
	}
	nd->in_fd = in[1];
	nd->out_fd = out[0];
	nd->err_fd = errp[0];
	in[1] = out[0] = errp[0] = -1;
	fcntl(nd->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(nd->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(nd->err_fd, F_SETFL, O_NONBLOCK);
out:
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&errp[i]);
	}
	strvec_clear(&argv);
	return r;
}

/* The node's spec line: the shared job with this node's place in it. */
static void queue_spec(struct launcher *l, struct node *nd)
{
	struct launch_spec s = *l->o->job;

	s.node_rank = (unsigned)nd->index;
	s.nnodes = (unsigned)l->nr;
	s.nproc = nd->n->nproc;
	s.rank_base = nd->rank_base;
	launch_spec_to_json(&s, &nd->tx);
	strbuf_addch(&nd->tx, '\n');
}

/* ---- ending the job ----------------------------------------------------- */

static void send_control(struct node *nd, char what)
{
	if (nd->in_fd < 0 || nd->state == NODE_DONE || nd->sent == 'K' || nd->sent == what)
		return;
	strbuf_addch(&nd->tx, what);
	strbuf_addch(&nd->tx, '\n');
	nd->sent = what;
}

/*
 * End the job on every node: 'T' (SIGTERM, then SIGKILL after the grace)
 * or 'K' (SIGKILL now).  A node still starting has no ranks yet: its ssh
 * client is stopped instead.
 */
static void end_job(struct launcher *l, char how)
{
	if (!l->ending) {
		l->ending = true;
		l->end_started_ms = monotonic_ms();
	}
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		if (nd->reaped)
			continue;
		if (nd->state == NODE_STARTING) {
			close_fd(&nd->in_fd);
			kill(nd->pid, SIGTERM);
		} else {
			send_control(nd, how);
		}
	}
}

static void set_end(struct launcher *l, enum launch_end end, int status)
{
	if (l->res->end != LAUNCH_END_OK)
		return; /* the first reason stands */
	l->res->end = end;
	l->res->exit_status = status;
}

static void node_failed(struct launcher *l, struct node *nd)
{
	if (l->res->end == LAUNCH_END_OK)
		l->res->failed_node = nd->index;
	set_end(l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
	end_job(l, 'T');
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
			notice(l, "cannot write the log of %u: %s", u->id, strerror(errno));
			close_fd(&l->logs[u->id]);
		}
		strbuf_release(&line);
	}
	l->last_output_ms = monotonic_ms();
	l->stall_reported = false;
}

static void unit_exit(struct launcher *l, struct node *nd, const char *text)
{
	struct launch_unit_result *u;
	const char *rest;
	int status, signaled, ending;
	uint64_t ms;

	if (!(u = unit_of(l, text, &rest)) || u->node != nd->index || u->ended ||
	    sscanf(rest, "%d %d %" SCNu64 " %d", &status, &signaled, &ms, &ending) != 4)
		return;
	u->ended = true;
	u->status = status;
	u->signaled = signaled != 0;
	u->ms = ms;
	/* Its own failure, unless its agent was ending the job when it ended. */
	u->ended_by_launch = ending != 0;
	if (status == 0 || ending)
		return;
	if (l->ending)
		return;
	l->res->failed_unit = u->id;
	set_end(l, LAUNCH_END_UNIT_FAILED, status);
	end_job(l, 'T');
}

static void all_ready_go(struct launcher *l)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->nodes[i].state != NODE_READY)
			return;
	for (size_t i = 0; i < l->nr; i++) {
		strbuf_addf(&l->nodes[i].tx, "G %s %u\n", l->res->master_addr, l->res->port);
		l->nodes[i].state = NODE_RUNNING;
	}
	for (size_t i = 0; i < l->res->nr_units; i++)
		l->res->units[i].started = true;
	l->all_go = true;
	l->go_ms = l->last_output_ms = monotonic_ms();
}

static void agent_line(struct launcher *l, struct node *nd, char *line, size_t len)
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
		notice(l, "%s: %s", nd->n->host, arg);
		break;
	case 'F':
		notice(l, "%s: %s", nd->n->host, arg);
		nd->failed = true;
		node_failed(l, nd);
		break;
	case 'R':
		if (nd->state != NODE_STARTING)
			break;
		if (nd->index == 0 &&
		    sscanf(arg, "%255s %u", l->res->master_addr, &l->res->port) != 2) {
			notice(l, "%s: the agent did not name the master", nd->n->host);
			node_failed(l, nd);
			break;
		}
		nd->state = NODE_READY;
		if (!l->ending)
			all_ready_go(l);
		else
			send_control(nd, 'T');
		break;
	case 'D':
		nd->state = NODE_DONE;
		break;
	default:
		break;
	}
}

/* Hand the complete lines of buf to fn; keep an unfinished one. */
static void split_lines(struct launcher *l, struct node *nd, struct strbuf *buf, bool at_eof,
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

static void agent_stderr_line(struct launcher *l, struct node *nd, char *line, size_t len)
{
	if (!len)
		return;
	notice(l, "%s: %s", nd->n->host, line);
	free(nd->last_err);
	nd->last_err = xstrdup(line);
}

static void read_agent(struct launcher *l, struct node *nd, bool is_err)
{
	int *fd = is_err ? &nd->err_fd : &nd->out_fd;
	struct strbuf *buf = is_err ? &nd->erx : &nd->rx;

	for (int rounds = 0; *fd >= 0 && rounds < 16; rounds++) {
		ssize_t n;
		strbuf_grow(buf, 65536);
		n = read(*fd, buf->buf + buf->len, buf->alloc - buf->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close_fd(fd);
			split_lines(l, nd, buf, true, is_err ? agent_stderr_line : agent_line);
			break;
		}
		strbuf_setlen(buf, buf->len + (size_t)n);
		split_lines(l, nd, buf, false, is_err ? agent_stderr_line : agent_line);
	}
}

static void write_agent(struct node *nd)
{
	while (nd->in_fd >= 0 && nd->tx.len) {
		ssize_t n = write(nd->in_fd, nd->tx.buf, nd->tx.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) { /* it is gone; its exit says the rest */
			close_fd(&nd->in_fd);
			strbuf_reset(&nd->tx);
			return;
		}
		memmove(nd->tx.buf, nd->tx.buf + n, nd->tx.len - (size_t)n);
		strbuf_setlen(&nd->tx, nd->tx.len - (size_t)n);
	}
}

/*
 * A node's agent died before it said the job was over there: run 'agent
 * reap' on the node to end what its ranks left (a rank itself gets
 * SIGKILL from the kernel when its agent dies, its children do not).
 * Nothing can be done where the node itself is gone; then this fails fast.
 */
static void spawn_reaper(struct launcher *l, struct node *nd)
{
	struct strvec argv = STRVEC_INIT;
	char node[16], grace[16];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	pid_t pid;
	int r = 0;

	snprintf(node, sizeof(node), "%zu", nd->index);
	snprintf(grace, sizeof(grace), "%u", l->o->job->grace_ms);
	const char *const words[] = { nd->n->local ? l->o->local_sparkctl : l->o->remote_sparkctl,
				      "agent",
				      "reap",
				      l->o->job->job_id,
				      node,
				      grace,
				      NULL };
	if (nd->n->local) {
		for (size_t i = 0; words[i]; i++)
			strvec_push(&argv, words[i]);
	} else if ((r = ssh_command(&argv, nd->n->host, l->o->ssh, words)) < 0) {
		strvec_clear(&argv);
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&attr);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	if (posix_spawnp(&pid, argv.v[0], &fa, &attr, argv.v, environ) == 0)
		*ARRAY_PUSH(l->reapers, l->nr_reapers) = pid;
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	strvec_clear(&argv);
}

/* An agent ended: fine after D, otherwise the node failed or was lost. */
static void agent_exited(struct launcher *l, struct node *nd)
{
	read_agent(l, nd, false);
	read_agent(l, nd, true);
	close_fd(&nd->in_fd);
	if (nd->state == NODE_DONE || nd->failed)
		return;
	if (nd->state == NODE_STARTING && !l->ending)
		notice(l, "cannot start on %s: %s", nd->n->host,
		       nd->last_err ? nd->last_err : "the agent ended without a word");
	else if (nd->state != NODE_STARTING)
		notice(l, "lost %s (%s %s %d)%s%s", nd->n->host, nd->n->local ? "agent" : "ssh",
		       WIFSIGNALED(nd->wstatus) ? "killed by signal" : "exited with status",
		       WIFSIGNALED(nd->wstatus) ? WTERMSIG(nd->wstatus) : WEXITSTATUS(nd->wstatus),
		       nd->last_err ? ": " : "", nd->last_err ? nd->last_err : "");
	if (nd->state != NODE_STARTING)
		spawn_reaper(l, nd);
	for (size_t i = 0; i < l->res->nr_units; i++) {
		struct launch_unit_result *u = &l->res->units[i];
		if (u->node == nd->index && u->started && !u->ended)
			u->ended_by_launch = l->ending;
	}
	if (!l->ending || nd->state == NODE_STARTING)
		node_failed(l, nd);
}

static void reap_agents(struct launcher *l)
{
	for (;;) {
		int wstatus;
		pid_t pid = waitpid(-1, &wstatus, WNOHANG);
		if (pid <= 0)
			return;
		for (size_t i = 0; i < l->nr_reapers; i++)
			if (l->reapers[i] == pid)
				l->reapers[i] = 0;
		for (size_t i = 0; i < l->nr; i++) {
			struct node *nd = &l->nodes[i];
			if (nd->pid != pid || nd->reaped)
				continue;
			nd->reaped = true;
			nd->wstatus = wstatus;
			nd->reaped_at = monotonic_ms();
			agent_exited(l, nd);
		}
	}
}

static void handle_signals(struct launcher *l)
{
	struct signalfd_siginfo si;

	while (read(l->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			reap_agents(l);
			continue;
		}
		l->interrupts++;
		if (l->res->end == LAUNCH_END_OK)
			l->res->signal = sig;
		set_end(l, LAUNCH_END_INTERRUPTED, 128 + sig);
		if (l->interrupts == 1) {
			notice(l, "SIG%s: ending the job (again to kill it at once)",
			       sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal");
			end_job(l, 'T');
		} else {
			notice(l, "killing the job");
			end_job(l, 'K');
		}
	}
}

/* ---- timers ------------------------------------------------------------- */

static void stall_advice(struct launcher *l)
{
	notice(l,
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

static bool any_unit_running(const struct launcher *l)
{
	for (size_t i = 0; i < l->res->nr_units; i++)
		if (l->res->units[i].started && !l->res->units[i].ended)
			return true;
	return false;
}

/* Act on the deadlines; returns the ms until the next one (-1: none). */
static int run_timers(struct launcher *l, uint64_t now)
{
	int64_t next = -1;

#define NEXT(at)                                                                                   \
	do {                                                                                       \
		int64_t d_ = (int64_t)(at) - (int64_t)now;                                         \
		if (d_ < 0)                                                                        \
			d_ = 0;                                                                    \
		if (next < 0 || d_ < next)                                                         \
			next = d_;                                                                 \
	} while (0)

	if (!l->all_go && !l->ending) {
		if (now >= l->ready_deadline) {
			for (size_t i = 0; i < l->nr; i++)
				if (l->nodes[i].state == NODE_STARTING) {
					notice(l, "%s: no answer within %" PRIu64 " s",
					       l->nodes[i].n->host,
					       (l->ready_deadline - l->started_ms) / 1000);
					node_failed(l, &l->nodes[i]);
					break;
				}
		} else {
			NEXT(l->ready_deadline);
		}
	}
	if (l->all_go && !l->ending && l->o->timeout_s) {
		uint64_t at = l->go_ms + (uint64_t)l->o->timeout_s * 1000;
		if (now >= at) {
			notice(l, "--timeout %u s reached: ending the job", l->o->timeout_s);
			set_end(l, LAUNCH_END_TIMEOUT, LAUNCH_EXIT_TIMEOUT);
			end_job(l, 'T');
		} else {
			NEXT(at);
		}
	}
	if (l->all_go && !l->ending && l->o->stall_s && !l->stall_reported) {
		uint64_t at = l->last_output_ms + (uint64_t)l->o->stall_s * 1000;
		if (now >= at && any_unit_running(l)) {
			stall_advice(l);
			l->stall_reported = true;
		} else if (now < at) {
			NEXT(at);
		}
	}
	if (l->ending) {
		uint64_t grace = l->o->job->grace_ms;
		uint64_t kill_at = l->end_started_ms + grace + END_KILL_AFTER_MS;
		uint64_t hangup_at = l->end_started_ms + grace + END_HANGUP_AFTER_MS;
		if (now >= kill_at)
			for (size_t i = 0; i < l->nr; i++)
				send_control(&l->nodes[i], 'K');
		else
			NEXT(kill_at);
		if (now >= hangup_at) {
			/* An agent that does not answer: its input closes, it ends the job itself.
			 */
			int sig = now >= hangup_at + 5000 ? SIGKILL : SIGTERM;
			for (size_t i = 0; i < l->nr; i++)
				if (!l->nodes[i].reaped) {
					close_fd(&l->nodes[i].in_fd);
					kill(l->nodes[i].pid, sig);
				}
			for (size_t i = 0; i < l->nr_reapers; i++)
				if (l->reapers[i])
					kill(l->reapers[i], sig);
			NEXT(hangup_at + 5000);
		} else {
			NEXT(hangup_at);
		}
	}
	/* An agent that exited with its pipes held open by something else. */
	for (size_t i = 0; i < l->nr; i++) {
		struct node *nd = &l->nodes[i];
		if (!nd->reaped || (nd->out_fd < 0 && nd->err_fd < 0))
			continue;
		if (now >= nd->reaped_at + PIPE_CLOSE_WAIT_MS) {
			close_fd(&nd->out_fd);
			close_fd(&nd->err_fd);
		} else {
			NEXT(nd->reaped_at + PIPE_CLOSE_WAIT_MS);
		}
	}
#undef NEXT
	return next > INT32_MAX ? INT32_MAX : (int)next;
}

/* ---- the loop ----------------------------------------------------------- */

static bool finished(const struct launcher *l)
{
	for (size_t i = 0; i < l->nr_reapers; i++)
		if (l->reapers[i])
			return false;
	for (size_t i = 0; i < l->nr; i++)
		if (!l->nodes[i].reaped || l->nodes[i].out_fd >= 0 || l->nodes[i].err_fd >= 0)
			return false;
	return true;
}

static void event_loop(struct launcher *l)
{
	struct pollfd *pfd = xcalloc(1 + 3 * l->nr, sizeof(*pfd));

	while (!finished(l)) {
		int timeout = run_timers(l, monotonic_ms());
		nfds_t n = 0;

		flush_output(l);
		pfd[n++] = (struct pollfd){ .fd = l->sig_fd, .events = POLLIN };
		for (size_t i = 0; i < l->nr; i++) {
			struct node *nd = &l->nodes[i];
			write_agent(nd);
			if (nd->in_fd >= 0 && nd->tx.len)
				pfd[n++] = (struct pollfd){ .fd = nd->in_fd, .events = POLLOUT };
			if (nd->out_fd >= 0)
				pfd[n++] = (struct pollfd){ .fd = nd->out_fd, .events = POLLIN };
			if (nd->err_fd >= 0)
				pfd[n++] = (struct pollfd){ .fd = nd->err_fd, .events = POLLIN };
		}
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < l->nr; i++) {
			read_agent(l, &l->nodes[i], false);
			read_agent(l, &l->nodes[i], true);
		}
		handle_signals(l);
	}
	flush_output(l);
	free(pfd);
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

static int set_up_signals(struct launcher *l, sigset_t *old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, old) < 0 ||
	    (l->sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		return -errno;
	return 0;
}

static void make_units(struct launcher *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nr; i++) {
		l->nodes[i].rank_base = (unsigned)n;
		n += l->nodes[i].n->nproc;
	}
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

int launch_run(const struct launch_options *o, struct launch_result *res, struct strbuf *err)
{
	struct launcher l = { .o = o,
			      .res = res,
			      .nr = o->nr_nodes,
			      .sig_fd = -1,
			      .out = STRBUF_INIT,
			      .errout = STRBUF_INIT };
	void (*old_pipe)(int);
	sigset_t old_mask;
	int r = 0;

	memset(res, 0, sizeof(*res));
	l.nodes = xcalloc(l.nr, sizeof(*l.nodes));
	for (size_t i = 0; i < l.nr; i++)
		l.nodes[i] = (struct node){ .n = &o->nodes[i],
					    .index = i,
					    .in_fd = -1,
					    .out_fd = -1,
					    .err_fd = -1,
					    .tx = STRBUF_INIT,
					    .rx = STRBUF_INIT,
					    .erx = STRBUF_INIT };
	make_units(&l);
	if ((r = open_logs(&l, err)) < 0)
		goto out_nosig;
	old_pipe = signal(SIGPIPE, SIG_IGN);
	if ((r = set_up_signals(&l, &old_mask)) < 0) {
		strbuf_addf(err, "cannot set up signals: %s", strerror(-r));
		signal(SIGPIPE, old_pipe);
		goto out_nosig;
	}
	l.started_ms = monotonic_ms();
	l.ready_deadline =
		l.started_ms + READY_SLACK_MS +
		(uint64_t)(o->ssh && o->ssh->connect_timeout ? o->ssh->connect_timeout : 5) * 1000 +
		(o->job->kill_stale ? o->job->grace_ms : 0);
	for (size_t i = 0; i < l.nr; i++) {
		struct node *nd = &l.nodes[i];
		if (spawn_agent(&l, nd, err) < 0) {
			/* Nothing has started its ranks: end what was spawned, then report. */
			set_end(&l, LAUNCH_END_NODE_FAILED, LAUNCH_EXIT_NODE_FAILED);
			res->failed_node = i;
			notice(&l, "%s", err->buf);
			strbuf_reset(err);
			for (size_t k = i; k < l.nr; k++)
				l.nodes[k].reaped = true;
			end_job(&l, 'T');
			break;
		}
		queue_spec(&l, nd);
	}
	event_loop(&l);
	res->seconds = (double)(monotonic_ms() - l.started_ms) / 1000.0;

	close(l.sig_fd);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	signal(SIGPIPE, old_pipe);
out_nosig:
	for (size_t i = 0; i < l.nr; i++) {
		struct node *nd = &l.nodes[i];
		close_fd(&nd->in_fd);
		close_fd(&nd->out_fd);
		close_fd(&nd->err_fd);
		strbuf_release(&nd->tx);
		strbuf_release(&nd->rx);
		strbuf_release(&nd->erx);
		free(nd->last_err);
	}
	for (size_t i = 0; l.logs && i < res->nr_units; i++)
		close_fd(&l.logs[i]);
	free(l.logs);
	free(l.reapers);
	free(l.nodes);
	strbuf_release(&l.out);
	strbuf_release(&l.errout);
	if (r < 0)
		launch_result_release(res);
	return r;
}

void launch_result_release(struct launch_result *res)
{
	free(res->units);
	res->units = NULL;
	res->nr_units = 0;
}
