/*
 * hold.c - run one command for a caller on another node, and end it,
 * with everything it started, when the caller is gone.
 *
 * The command is not reaped until the hold is over: while it is a zombie
 * its pid cannot be reused, so its session id and process group id keep
 * naming its processes alone.  Other children (orphans that came back to
 * the subreaper) are reaped as they end.
 */
#include "sparkctl.h"

#include <poll.h>
#include <signal.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "exitcode.h"
#include "lib/clock.h"
#include "probe/procs.h"
#include "proc/hold.h"
#include "proc/run.h"

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
	pid_t self, pid; /* the agent; the command, its session and group */
	int sig_fd;
	bool in_open; /* the caller's channel, not yet at its end */
	bool ready;   /* "ready" written, or no ready port */
	bool exited;  /* the command has exited (and stays a zombie until the end) */
	int status;   /* then its status, 128+N for signal N */
	/* ending the command */
	bool ending;	  /* SIGTERM sent */
	bool killing;	  /* SIGKILL sent; repeated each sweep */
	uint64_t kill_at; /* when SIGKILL follows */
	int ret;	  /* the status to exit with, chosen when the ending began */
	struct strbuf *err;
};

/* Every live process of the command: its session and the agent's descendants. */
static void command_processes(const struct hold *h, struct proc_list *out)
{
	struct proc_table t;

	if (proc_table_scan(&t) < 0)
		return;
	procs_in_session(&t, h->pid, out);
	procs_descendants(&t, h->self, out);
	proc_table_release(&t);
}

/* Signal every process of the command; returns how many were alive. */
static size_t signal_command(struct hold *h, int sig)
{
	struct proc_list l = { 0 };
	size_t n;

	/* The group first, at once: a process forking now cannot slip past. */
	kill(-h->pid, sig);
	command_processes(h, &l);
	procs_signal(&l, sig);
	n = l.nr;
	proc_list_release(&l);
	return n;
}

static size_t count_command(const struct hold *h)
{
	struct proc_list l = { 0 };
	size_t n;

	command_processes(h, &l);
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
	h->kill_at = monotonic_ms() + KILL_GRACE_MS;
	signal_command(h, SIGTERM);
}

/* Note the command's exit (without reaping it); reap the other children that ended. */
static void reap_children(struct hold *h)
{
	struct proc_table t;
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (!h->exited && waitid(P_PID, (id_t)h->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    si.si_pid == h->pid) {
		h->exited = true;
		h->status = si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status;
	}
	if (proc_table_scan(&t) < 0)
		return;
	for (size_t i = 0; i < t.nr; i++)
		if (t.v[i].ppid == h->self && t.v[i].pid != h->pid && t.v[i].state == 'Z')
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

/* After the signals were handled: the command's exit starts the end. */
static void after_exit(struct hold *h)
{
	if (!h->exited || h->ending)
		return;
	if (h->ready) {
		end_command(h, h->status);
		return;
	}
	strbuf_addf(h->err, "'%s' exited with status %d before listening on port %u", h->o->argv[0],
		    h->status, h->o->ready_port);
	end_command(h, HOLD_EXIT_NOT_READY);
}

static void handle_signals(struct hold *h)
{
	struct signalfd_siginfo si;

	while (read(h->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap_children(h);
		else /* SIGTERM, SIGINT, SIGHUP */
			end_command(h, HOLD_EXIT_ENDED);
	}
	after_exit(h);
}

/* The caller's channel is readable: drop what it sends; its end ends the command. */
static void read_input(struct hold *h)
{
	char buf[4096];
	ssize_t n = read(h->o->in_fd, buf, sizeof(buf));

	if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
		return;
	h->in_open = false;
	end_command(h, HOLD_EXIT_ENDED);
}

/* One sweep of an ending command; false once nothing of it is left (or it cannot be ended). */
static bool sweep(struct hold *h, uint64_t now)
{
	size_t left;

	reap_children(h);
	if (!h->killing && now >= h->kill_at)
		h->killing = true;
	left = h->killing ? signal_command(h, SIGKILL) : count_command(h);
	if (!left && h->exited)
		return false;
	if (h->killing && now >= h->kill_at + KILL_WAIT_MS) {
		strbuf_addf(h->err, "%s%zu process%s of '%s' still alive after SIGKILL",
			    h->err->len ? "; " : "", left, left == 1 ? "" : "es", h->o->argv[0]);
		return false;
	}
	return true;
}

static void event_loop(struct hold *h)
{
	uint64_t deadline = monotonic_ms() + h->o->ready_timeout_ms, next_check = 0;

	for (;;) {
		uint64_t now = monotonic_ms(), wake = UINT64_MAX;
		struct pollfd pfd[2];
		nfds_t n = 0;
		int timeout = -1;

		if (h->ending) {
			if (!sweep(h, now))
				return;
			wake = now + SWEEP_MS;
			if (!h->killing && h->kill_at < wake)
				wake = h->kill_at;
		} else if (!h->ready) {
			if (now >= next_check) {
				if (command_listens(h)) {
					announce_ready(h);
					continue;
				}
				next_check = now + READY_POLL_MS;
			}
			if (now >= deadline) {
				strbuf_addf(h->err, "nothing listened on port %u within ",
					    h->o->ready_port);
				add_seconds(h->err, h->o->ready_timeout_ms);
				end_command(h, HOLD_EXIT_NOT_READY);
				continue;
			}
			wake = next_check < deadline ? next_check : deadline;
		}
		if (wake != UINT64_MAX)
			timeout = wake > now ? (int)(wake - now) : 0;

		pfd[n++] = (struct pollfd){ .fd = h->sig_fd, .events = POLLIN };
		if (h->in_open && !h->ending)
			pfd[n++] = (struct pollfd){ .fd = h->o->in_fd, .events = POLLIN };
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			strbuf_addf(h->err, "poll: %s", strerror(errno));
			end_command(h, SPARKCTL_EXIT_ERROR);
			continue;
		}
		handle_signals(h);
		if (n > 1 && pfd[1].revents)
			read_input(h);
	}
}

/*
 * The child's side of the start.  On failure the errno goes back through
 * report_fd, which closes on a successful exec.
 */
static ATTR_NORETURN void exec_command(pid_t agent, char **argv, int report_fd)
{
	int e, null_fd;

	/* If the agent dies without ending the command, so does the command. */
	run_child_session(agent);
	null_fd = open("/dev/null", O_RDONLY);
	if (null_fd < 0 || (null_fd != STDIN_FILENO && dup2(null_fd, STDIN_FILENO) < 0))
		goto fail;
	/* The command gets 0, 1 and 2, nothing the agent or its caller had open. */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execvp(argv[0], argv);
fail:
	e = errno;
	if (write(report_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

/* Start the command.  Returns 0, or the status to exit with (err says why). */
static int start_command(struct hold *h)
{
	int report[2], child_errno = 0;
	const char *name = h->o->argv[0];

	if (pipe2(report, O_CLOEXEC) < 0) {
		strbuf_addf(h->err, "cannot make a pipe: %s", strerror(errno));
		return SPARKCTL_EXIT_ERROR;
	}
	if ((h->pid = fork()) < 0) {
		strbuf_addf(h->err, "cannot fork: %s", strerror(errno));
		close(report[0]);
		close(report[1]);
		return SPARKCTL_EXIT_ERROR;
	}
	if (h->pid == 0)
		exec_command(h->self, h->o->argv, report[1]);
	close(report[1]);
	while (read(report[0], &child_errno, sizeof(child_errno)) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (!child_errno)
		return 0;
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (child_errno == ENOENT && !strchr(name, '/'))
		strbuf_addf(h->err, "cannot run '%s': not found in PATH", name);
	else
		strbuf_addf(h->err, "cannot run '%s': %s", name, strerror(child_errno));
	/* As the shell has it: 127 not found, 126 found but cannot run. */
	return child_errno == ENOENT ? 127 : 126;
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
	struct hold h = { .o = o,
			  .self = getpid(),
			  .sig_fd = -1,
			  .in_open = true,
			  .ready = o->ready_port == 0,
			  .err = err };
	int r;

	if (o->ready_port && check_port_free(o->ready_port, err) < 0)
		return HOLD_EXIT_NOT_READY;
	/* Orphans of the command come back to the agent, which ends and reaps them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0 || (h.sig_fd = run_supervisor_signals()) < 0) {
		strbuf_addf(err, "cannot set up the hold: %s", strerror(errno));
		r = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if ((r = start_command(&h)) != 0)
		goto out;
	event_loop(&h);
	r = h.ret;
	/* Reap the command, and whatever else ended meanwhile. */
	if (h.exited)
		while (waitpid(h.pid, NULL, 0) < 0 && errno == EINTR)
			;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
out:
	if (h.sig_fd >= 0)
		close(h.sig_fd);
	return r;
}
