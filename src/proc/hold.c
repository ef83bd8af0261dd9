/*
 * hold.c - run one command for a caller on another node, and end it,
 * with everything it started, when the caller is gone.
 *
 * The command is not reaped until the hold is over: while it is a zombie
 * its pid cannot be reused, so its session id and process group id keep
 * naming its processes alone.  Other children (orphans that came back to
 * the subreaper) are reaped as they end.  One loop waits on the signals,
 * the caller's channel and the timers: the ready port's polling, the
 * ready deadline, and once the command is ending its sweeps and SIGKILL.
 */
#include "sparkctl.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "exitcode.h"
#include "lib/clock.h"
#include "probe/procs.h"
#include "proc/child.h"
#include "proc/hold.h"
#include "proc/loop.h"

/* How often the ready port is looked at. */
#define READY_POLL_MS 20
/* From SIGTERM to SIGKILL. */
#define KILL_GRACE_MS 2000
/* How often an ending command is swept for processes still alive. */
#define SWEEP_MS      50
/* How long SIGKILL may take before the hold gives up (a process stuck in the kernel). */
#define KILL_WAIT_MS  5000

struct hold {
	const struct hold_options *o;
	struct loop loop;
	struct child cmd; /* the command: its pid is its session and group */
	pid_t self;	  /* the agent */
	bool ready;	  /* "ready" written, or no ready port */
	struct loop_timer ready_check, ready_deadline;
	/* ending the command */
	bool ending;	  /* SIGTERM sent */
	bool killing;	  /* SIGKILL sent; repeated each sweep */
	uint64_t kill_at; /* when SIGKILL follows */
	struct loop_timer sweep, kill;
	int ret; /* the status to exit with, chosen when the ending began */
	struct strbuf *err;
};

/* Every live process of the command: its session and the agent's descendants. */
static void command_processes(const struct hold *h, struct proc_list *out)
{
	struct proc_table t;

	if (proc_table_scan(&t) < 0)
		return;
	procs_in_session(&t, h->cmd.pid, out);
	procs_descendants(&t, h->self, out);
	proc_table_release(&t);
}

/* Signal every process of the command (0: none); returns how many were alive. */
static size_t signal_command(struct hold *h, int sig)
{
	struct proc_list l = { 0 };
	size_t n;

	/* The group first, at once: a process forking now cannot slip past. */
	if (sig)
		child_signal(&h->cmd, sig);
	command_processes(h, &l);
	if (sig)
		procs_signal(&l, sig);
	n = l.nr;
	proc_list_release(&l);
	return n;
}

/* Start ending the command: SIGTERM now, SIGKILL after the grace; ret is the exit status. */
static void end_command(struct hold *h, int ret)
{
	if (h->ending)
		return;
	h->ending = true;
	h->ret = ret;
	loop_timer_cancel(&h->loop, &h->ready_check);
	loop_timer_cancel(&h->loop, &h->ready_deadline);
	loop_unwatch_fd(&h->loop, h->o->in_fd);
	h->kill_at = monotonic_ms() + KILL_GRACE_MS;
	loop_timer_arm(&h->loop, &h->kill, h->kill_at);
	loop_timer_arm_in(&h->loop, &h->sweep, 0);
	signal_command(h, SIGTERM);
}

/* Note the command's exit (without reaping it); reap the other children that ended. */
static void reap_children(struct hold *h)
{
	struct proc_table t;

	child_check_exit(&h->cmd);
	if (proc_table_scan(&t) < 0)
		return;
	for (size_t i = 0; i < t.nr; i++)
		if (t.v[i].ppid == h->self && t.v[i].pid != h->cmd.pid && t.v[i].state == 'Z')
			waitpid(t.v[i].pid, NULL, WNOHANG);
	proc_table_release(&t);
}

/* True when a process of the command listens on the ready port. */
static bool command_listens(const struct hold *h)
{
	struct proc_list l = { 0 };
	pid_t owner = 0;
	bool ours;

	if (tcp_port_owner(h->o->ready_port, &owner) <= 0 || owner <= 0)
		return false;
	command_processes(h, &l);
	ours = proc_list_has(&l, owner);
	proc_list_release(&l);
	return ours;
}

/* The timeout as people write it: "10 s", "0.5 s". */
static void add_seconds(struct strbuf *sb, unsigned ms)
{
	if (ms % 1000 == 0)
		strbuf_addf(sb, "%u s", ms / 1000);
	else
		strbuf_addf(sb, "%g s", ms / 1000.0);
}

static void announce_ready(struct hold *h)
{
	static const char line[] = "ready\n";
	size_t off = 0;

	h->ready = true;
	while (off < sizeof(line) - 1) {
		ssize_t n = write(h->o->ready_fd, line + off, sizeof(line) - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* nobody reads it: the caller is gone */
			end_command(h, HOLD_EXIT_ENDED);
			return;
		}
		off += (size_t)n;
	}
}

/* Once the round's signals were handled: the command's exit starts the end. */
static void after_exit(struct loop *loop, void *data)
{
	struct hold *h = data;

	(void)loop;
	if (!h->cmd.exited || h->ending)
		return;
	if (h->ready) {
		end_command(h, child_status(&h->cmd, NULL));
		return;
	}
	strbuf_addf(h->err, "'%s' exited with status %d before listening on port %u", h->o->argv[0],
		    child_status(&h->cmd, NULL), h->o->ready_port);
	end_command(h, HOLD_EXIT_NOT_READY);
}

static void on_signal(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	struct hold *h = data;

	(void)loop;
	if (si->ssi_signo == SIGCHLD)
		reap_children(h);
	else /* SIGTERM, SIGINT, SIGHUP */
		end_command(h, HOLD_EXIT_ENDED);
}

/* The caller's channel is readable: drop what it sends; its end ends the command. */
static void on_input(struct loop *loop, int fd, short revents, void *data)
{
	struct hold *h = data;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)revents;
	if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
		return;
	/* An exit seen in this round comes first: its status says more. */
	after_exit(loop, h);
	end_command(h, HOLD_EXIT_ENDED);
}

static void on_ready_check(struct loop *loop, void *data)
{
	struct hold *h = data;

	/* Exited: after_exit() decides, even if an orphan of it listens. */
	if (h->cmd.exited)
		return;
	if (!command_listens(h)) {
		loop_timer_arm_in(loop, &h->ready_check, READY_POLL_MS);
		return;
	}
	loop_timer_cancel(loop, &h->ready_deadline);
	announce_ready(h);
}

static void on_ready_deadline(struct loop *loop, void *data)
{
	struct hold *h = data;

	(void)loop;
	strbuf_addf(h->err, "nothing listened on port %u within ", h->o->ready_port);
	add_seconds(h->err, h->o->ready_timeout_ms);
	end_command(h, HOLD_EXIT_NOT_READY);
}

static void on_kill(struct loop *loop, void *data)
{
	struct hold *h = data;

	h->killing = true;
	loop_timer_arm_in(loop, &h->sweep, 0);
}

/* One sweep of an ending command: over once nothing of it is left, or SIGKILL failed. */
static void on_sweep(struct loop *loop, void *data)
{
	struct hold *h = data;
	size_t left;

	reap_children(h);
	left = signal_command(h, h->killing ? SIGKILL : 0);
	if (!left && h->cmd.exited) {
		loop_stop(loop);
		return;
	}
	if (h->killing && monotonic_ms() >= h->kill_at + KILL_WAIT_MS) {
		strbuf_addf(h->err, "%s%zu process%s of '%s' still alive after SIGKILL",
			    h->err->len ? "; " : "", left, left == 1 ? "" : "es", h->o->argv[0]);
		loop_stop(loop);
		return;
	}
	loop_timer_arm_in(loop, &h->sweep, SWEEP_MS);
}

/* Start the command.  Returns 0, or the status to exit with (err says why). */
static int start_command(struct hold *h)
{
	struct child *c = &h->cmd;
	const char *name = h->o->argv[0];
	int r;

	for (char **a = h->o->argv; *a; a++)
		strvec_push(&c->args, *a);
	c->in = CHILD_IO_NULL;
	c->group = CHILD_OWN_SESSION;
	/* If the agent dies without ending the command, so does the command. */
	c->die_with_parent = true;
	if ((r = child_start(c)) == 0)
		return 0;
	/* Out of descriptors or processes: the hold, not the command, failed. */
	if (r == -EMFILE || r == -ENFILE || r == -EAGAIN) {
		strbuf_addf(h->err, "cannot start '%s': %s", name, strerror(-r));
		return SPARKCTL_EXIT_ERROR;
	}
	if (r == -ENOENT && !strchr(name, '/'))
		strbuf_addf(h->err, "cannot run '%s': not found in PATH", name);
	else
		strbuf_addf(h->err, "cannot run '%s': %s", name, strerror(-r));
	/* As the shell has it: 127 not found, 126 found but cannot run. */
	return r == -ENOENT ? 127 : 126;
}

/* A port held before the command starts is someone else's: refuse. */
static int check_port_free(unsigned port, struct strbuf *err)
{
	pid_t owner = 0;
	char *cmdline;

	if (!tcp_port_owner(port, &owner))
		return 0;
	if (owner == 0) {
		strbuf_addf(err, "port %u is in use by a process this user cannot see", port);
		return -EADDRINUSE;
	}
	cmdline = proc_cmdline(owner, 120);
	strbuf_addf(err, "port %u is in use by pid %d (%s)", port, (int)owner,
		    cmdline ? cmdline : "?");
	free(cmdline);
	return -EADDRINUSE;
}

int hold_run(const struct hold_options *o, struct strbuf *err)
{
	struct hold h = { .o = o, .self = getpid(), .ready = o->ready_port == 0, .err = err };
	sigset_t mask;
	int r;

	if (o->ready_port && check_port_free(o->ready_port, err) < 0)
		return HOLD_EXIT_NOT_READY;
	loop_init(&h.loop);
	child_init(&h.cmd);
	loop_timer_init(&h.ready_check, on_ready_check, &h);
	loop_timer_init(&h.ready_deadline, on_ready_deadline, &h);
	loop_timer_init(&h.sweep, on_sweep, &h);
	loop_timer_init(&h.kill, on_kill, &h);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/*
	 * Blocked before the loop takes them, so that they stay blocked after
	 * it: one that comes once the hold is over must not change the status
	 * the agent exits with.  Nor may a caller gone from ready_fd or
	 * stderr kill the agent.
	 */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Orphans of the command come back to the agent, which ends and reaps them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		r = -errno;
	else
		r = loop_watch_signals(&h.loop, &mask, on_signal, &h);
	if (r < 0) {
		strbuf_addf(err, "cannot set up the hold: %s", strerror(-r));
		r = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if ((r = start_command(&h)) != 0)
		goto out;
	loop_on_idle(&h.loop, after_exit, &h);
	loop_watch_fd(&h.loop, o->in_fd, POLLIN, on_input, &h);
	if (!h.ready) {
		loop_timer_arm_in(&h.loop, &h.ready_check, 0);
		loop_timer_arm_in(&h.loop, &h.ready_deadline, o->ready_timeout_ms);
	}
	if ((r = loop_run(&h.loop)) < 0) {
		strbuf_addf(err, "%spoll: %s", err->len ? "; " : "", strerror(-r));
		end_command(&h, SPARKCTL_EXIT_ERROR);
		signal_command(&h, SIGKILL);
	}
	r = h.ret;
	/* Reap the command, and whatever else ended meanwhile. */
	if (h.cmd.exited)
		child_finish(&h.cmd);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
out:
	child_release(&h.cmd);
	loop_release(&h.loop);
	return r;
}
