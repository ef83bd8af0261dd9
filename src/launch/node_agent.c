/*
 * node_agent.c - one node's part of a launch: start the node's ranks, pass
 * their output on, and make sure that nothing of the job outlives it.
 *
 * The agent is a child subreaper, so whatever a rank leaves behind comes
 * back to it; each rank leads a session of its own.  Ending the job means
 * signalling, until none is left, every process that descends from the
 * agent, shares a rank's session, or carries the job id in its
 * environment.  The agent ends the job when the launcher says so, when
 * the launcher is gone (its input closes or its output breaks), and when
 * the last rank has exited and something of the job is still running.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "config/nccl_env.h"
#include "inventory/inventory.h"
#include "launch/node_agent.h"
#include "launch/srun.h"
#include "lib/ipv4.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "probe/probe.h"
#include "probe/procs.h"
#include "proc/child.h"
#include "proc/contain.h"
#include "proc/loop.h"
#include "proc/run.h"

extern char **environ;

/* When the launcher is gone nobody waits for a clean end: the grace is short. */
#define LOST_LAUNCHER_GRACE_MS 2000
/* How often a job that is ending is swept for processes still alive. */
#define SWEEP_INTERVAL_MS      50
/* How long, once the job is gone, its output pipes may take to close. */
#define PIPE_CLOSE_WAIT_MS     1000
/* The job spec is one line; bound it. */
#define SPEC_MAX	       (16u << 20)

struct stream {
	int fd;		    /* -1 once closed */
	char tag;	    /* 'O' or 'E' */
	struct strbuf part; /* a line not yet ended */
};

struct agent;

struct unit {
	struct agent *a;
	unsigned id; /* the rank, or the node's rank with --torchrun */
	unsigned local_rank;
	struct child child; /* its pid stays after it exits, for the sweep; pipes are in out, err */
	bool running;
	uint64_t started_ms;
	struct stream out, err;
};

enum agent_phase {
	PHASE_SETUP,   /* reading the spec, choosing the master */
	PHASE_READY,   /* waiting for the launcher's go */
	PHASE_RUNNING, /* ranks started */
};

struct agent {
	struct launch_spec spec;
	int in_fd, out_fd;
	pid_t self;
	struct loop loop;
	enum agent_phase phase;
	struct strbuf in; /* control input not yet acted on */
	struct strbuf tx; /* protocol output not yet written */
	bool input_closed;
	bool launcher_lost; /* input closed or output broken: write nothing more */
	struct unit *units;
	size_t nr_units, nr_running;
	struct strvec node_env; /* "K=V" of the node's sparkctl env */
	struct inventory inv;
	bool have_inv;
	char bootstrap_addr[16]; /* the env's bootstrap IPv4, "" if none */
	char *marks[3];		 /* "SPARKCTL_JOB_ID=..." "SPARKCTL_JOB_NODE=..." NULL */
	struct job_container jc; /* the job's cgroups on this node, if any */
	bool srun_task;		 /* a task of an srun step: one unit, its place from Slurm */
	unsigned srun_local;	 /* then its LOCAL_RANK */
	char srun_step[64];	 /* and "JOB.STEP" */
	uint64_t start_ticks;	 /* when the agent started: the job's processes are younger */
	char master_addr[256];
	unsigned port;
	/* ending the job */
	bool ending;		 /* SIGTERM sent */
	struct loop_timer kill;	 /* SIGKILL after the grace */
	bool killing;		 /* SIGKILL sent; repeated each sweep */
	struct loop_timer sweep; /* looks for what is left of the job */
	uint64_t gone_at;	 /* when the sweep last found nothing left; 0 while something is */
	struct loop_timer pipe_wait; /* then how long the output pipes may stay open */
	struct loop_timer silence;   /* the launcher's pings stopped (spec.ping_ms) */
};

/* ---- protocol output ---------------------------------------------------- */

static void send_line(struct agent *a, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void send_line(struct agent *a, const char *fmt, ...)
{
	va_list ap;
	if (a->launcher_lost)
		return;
	va_start(ap, fmt);
	strbuf_vaddf(&a->tx, fmt, ap);
	va_end(ap);
	strbuf_addch(&a->tx, '\n');
}

/* One output line of a unit: "O 3 " + bytes; a '\n' inside cannot occur. */
static void send_output(struct agent *a, char tag, unsigned id, const char *data, size_t len)
{
	if (a->launcher_lost)
		return;
	strbuf_addf(&a->tx, "%c %u ", tag, id);
	strbuf_add(&a->tx, data, len);
	strbuf_addch(&a->tx, '\n');
}

static void end_job(struct agent *a, unsigned grace_ms);

/* Write what is pending.  A broken pipe means the launcher is gone. */
static void flush_tx(struct agent *a)
{
	size_t off = 0;

	/* srun would cut a long line in pieces of its own. */
	if (a->srun_task)
		srun_split_long_lines(&a->tx);
	while (off < a->tx.len && !a->launcher_lost) {
		ssize_t n = write(a->out_fd, a->tx.buf + off, a->tx.len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			a->launcher_lost = true;
			break;
		}
		off += (size_t)n;
	}
	strbuf_reset(&a->tx);
	if (a->launcher_lost)
		end_job(a, LOST_LAUNCHER_GRACE_MS);
}

/* ---- the processes of the job ------------------------------------------- */

/* When this process started (clock ticks after boot), or 0 if unknown. */
static uint64_t self_start_ticks(void)
{
	struct proc_entry e;

	return proc_entry_read(getpid(), &e) == 0 ? e.start_ticks : 0;
}

/*
 * Every live process of the job.  In a cgroup of the job's own that is
 * the cgroup: a rank enters it before its command starts, and nothing
 * leaves it.  Otherwise: descendants, rank sessions, the job's marks (and
 * under systemd the scopes, which a rank enters only once systemd-run
 * has it moved).
 */
static void job_processes(const struct agent *a, struct proc_list *out)
{
	struct proc_table t;

	job_container_procs(&a->jc, out);
	if (a->jc.how == CONTAIN_CGROUP || proc_table_scan(&t) < 0)
		return;
	procs_descendants(&t, a->self, out);
	for (size_t i = 0; i < a->nr_units; i++)
		if (a->units[i].child.pid > 0)
			procs_in_session(&t, a->units[i].child.pid, out);
	if (a->marks[0]) {
		struct proc_table young;
		procs_started_since(&t, a->start_ticks, &young);
		procs_with_env(&young, (const char *const *)a->marks, out);
		proc_table_release(&young);
	}
	proc_table_release(&t);
}

/* Signal the whole job; returns how many processes were still there. */
static size_t signal_job(struct agent *a, int sig)
{
	struct proc_list l = { 0 };
	size_t n;

	/* The cgroups at once, where the kernel can. */
	if (sig == SIGKILL)
		job_container_kill(&a->jc);
	/* The process groups first: a rank's children get the signal together. */
	for (size_t i = 0; i < a->nr_units; i++)
		if (a->units[i].running)
			child_signal(&a->units[i].child, sig);
	job_processes(a, &l);
	n = procs_signal(&l, sig);
	proc_list_release(&l);
	return n;
}

static void reap_children(struct agent *a);

/* Look for what is left of the job at the end of this round. */
static void sweep_soon(struct agent *a)
{
	loop_timer_arm(&a->loop, &a->sweep, monotonic_ms());
}

/*
 * Start ending the job: SIGTERM now, SIGKILL after grace_ms.  Called
 * again, it can only bring the SIGKILL closer.
 */
static void end_job(struct agent *a, unsigned grace_ms)
{
	uint64_t at = monotonic_ms() + grace_ms;

	/*
	 * A unit that already ended did so on its own: report it before the
	 * ending, lest it be labelled as ended by it.  (Not when the launcher
	 * is gone: nobody reads the report.)
	 */
	if (!a->ending && !a->launcher_lost)
		reap_children(a);
	if (!a->ending) {
		a->ending = true;
		loop_timer_arm(&a->loop, &a->kill, at);
		signal_job(a, SIGTERM);
		sweep_soon(a);
	} else if (a->kill.armed && at < a->kill.at) {
		loop_timer_arm(&a->loop, &a->kill, at);
	}
}

/* ---- setting up: the environment, the master, the port ------------------- */

static void warn(struct agent *a, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void warn(struct agent *a, const char *fmt, ...)
{
	struct strbuf b = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&b, fmt, ap);
	va_end(ap);
	for (char *p = b.buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	send_line(a, "W %s", b.buf);
	strbuf_release(&b);
}

/* The node's sparkctl env, and its bootstrap address; a warning if there is none. */
static void node_environment(struct agent *a)
{
	struct probe_options po = { .root = rootfs_root_path(NULL) };
	struct env_options eo = { .nodes = a->spec.nnodes };
	struct strbuf err = STRBUF_INIT;
	struct node_env e = { 0 };

	inventory_init(&a->inv);
	if (probe_inventory(&po, &a->inv, &err) < 0) {
		inventory_release(&a->inv);
		if (a->spec.use_env)
			warn(a, "cannot read this node (%s); the job runs without the sparkctl env",
			     err.buf);
		goto out;
	}
	a->have_inv = true;
	if (env_generate(&a->inv, &eo, &e, &err) < 0) {
		if (a->spec.use_env)
			warn(a, "no fabric for 'sparkctl env' (%s); the job runs without it",
			     err.buf);
		goto out;
	}
	if (e.bootstrap)
		ipv4_format(e.bootstrap_addr.addr, a->bootstrap_addr);
	if (a->spec.use_env)
		for (size_t i = 0; i < e.nr_vars; i++)
			env_list_set(&a->node_env, e.vars[i].key, e.vars[i].value);
out:
	node_env_release(&e);
	strbuf_release(&err);
}

/* --kill-stale ending an earlier job: the user hears of it before it happens. */
static void announce(void *data, const char *msg)
{
	struct agent *a = data;

	warn(a, "%s", msg);
	flush_tx(a);
}

static int check_workdir(const char *dir, struct strbuf *err)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || access(dir, X_OK) < 0) {
		int e = errno ? errno : ENOTDIR;
		if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
			e = ENOTDIR;
		strbuf_addf(err, "cannot use working directory '%s': %s", dir, strerror(e));
		return -e;
	}
	return 0;
}

/* The most of torchrun's #! line read: an interpreter path and one argument. */
#define SHEBANG_MAX	    4096
/* A bound on the probe (it reads package metadata; a hung Python must not hold the job). */
#define TORCH_PROBE_TIMEOUT 30000

/*
 * The interpreter of the torchrun in PATH, from its "#!" line, into argv
 * ("/usr/bin/python3.11", or "/usr/bin/env" "python3").  -ENOENT when
 * torchrun is not found or is not a script.
 */
static int torchrun_interpreter(struct strvec *argv)
{
	char buf[SHEBANG_MAX + 1], *path, *p, *end;
	ssize_t n;
	int fd, why, r = 0;

	path = child_find_program("torchrun", getenv("PATH"), &why);
	if (!path)
		return why;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	n = read(fd, buf, SHEBANG_MAX);
	close(fd);
	if (n < 0) {
		r = -errno;
		goto out;
	}
	buf[n] = '\0';
	if (n < 3 || buf[0] != '#' || buf[1] != '!' || !(end = strchr(buf, '\n'))) {
		r = -ENOENT;
		goto out;
	}
	*end = '\0';
	/* As the kernel reads it: the interpreter, then the rest as one argument. */
	p = buf + 2 + strspn(buf + 2, " \t");
	end = p + strcspn(p, " \t");
	if (end == p) {
		r = -ENOENT;
		goto out;
	}
	if (*end) {
		*end++ = '\0';
		end += strspn(end, " \t");
		end[strcspn(end, " \t")] = '\0';
	}
	strvec_push(argv, p);
	if (*end)
		strvec_push(argv, end);
out:
	free(path);
	return r;
}

/*
 * Which torch torchrun runs here, by one quick probe with its own Python;
 * what that torch needs goes into the spec.  Nothing is changed when the
 * probe finds no answer: torchrun then reports its own problem.
 */
static void probe_torch(struct agent *a)
{
	struct run_job job;
	struct torch_probe found;
	const char *python, *slash;

	run_job_init(&job);
	if (torchrun_interpreter(&job.argv) < 0)
		goto out;
	/* Only a Python is given the probe's code (a shell would run its words). */
	python = job.argv.v[job.argv.nr - 1];
	slash = strrchr(python, '/');
	if (!starts_with(slash ? slash + 1 : python, "python"))
		goto out;
	strvec_push(&job.argv, "-c");
	strvec_push(&job.argv, LAUNCH_TORCH_PROBE_CODE);
	if (run_jobs(&job, 1, 1, TORCH_PROBE_TIMEOUT, 4096) < 0 || job.status != 0)
		goto out;
	if (launch_torch_probe_parse(job.out.buf, &found) == 0)
		a->spec.torchrun_std_map = launch_torch_needs_std_map(&found);
out:
	run_job_release(&job);
}

/* Everything before the go: env, working directory, and on node 0 the master. */
static int set_up(struct agent *a, struct strbuf *err)
{
	bool need_fallback_addr = launch_spec_part(&a->spec) == 0 && !a->spec.master_addr &&
				  a->spec.nnodes > 1 && !a->spec.all_local;
	int r;

	/* The probe can take a while (CUDA's initialisation): only when it serves. */
	if (a->spec.use_env || need_fallback_addr)
		node_environment(a);
	if (a->spec.chdir && (r = check_workdir(a->spec.chdir, err)) < 0)
		return r;
	if (a->spec.torchrun)
		probe_torch(a);
	if ((r = job_container_open(&a->jc, a->spec.job_id, launch_spec_part(&a->spec),
				    a->spec.contain, err)) < 0)
		return r;
	send_line(a, "C %s %s", contain_mode_name(a->jc.how), a->jc.note.buf);
	/* Under srun the first task names the step, for the launcher's summary. */
	if (a->srun_task && a->spec.task == 0)
		send_line(a, "S %s", a->srun_step);
	if (launch_spec_part(&a->spec) != 0) {
		send_line(a, "R");
		return 0;
	}
	if ((r = launch_master_addr(&a->spec, a->bootstrap_addr, a->have_inv ? &a->inv : NULL,
				    a->master_addr, err)) < 0)
		return r;
	if (a->spec.port)
		r = launch_claim_port(&a->spec, announce, a, err);
	else
		r = launch_free_port(&a->spec.port, err);
	if (r < 0)
		return r;
	send_line(a, "R %s %u", a->master_addr, a->spec.port);
	return 0;
}

/* ---- starting the ranks ---------------------------------------------------- */

static void close_stream(struct agent *a, struct stream *s)
{
	if (s->fd >= 0)
		loop_unwatch_fd(&a->loop, s->fd);
	child_close_fd(&s->fd);
}

static void unit_output(struct loop *loop, int fd, short revents, void *data);

/*
 * Start one unit: a session of its own, SIGKILL if the agent dies without
 * ending the job, only the job's environment, stdin from /dev/null.
 * Returns 0, or -errno with the reason in err.
 */
static int start_unit(struct agent *a, struct unit *u, struct strbuf *err)
{
	struct child *c = &u->child;
	int r;

	launch_unit_env(&a->spec, environ, &a->node_env, u->local_rank, a->master_addr, a->port,
			&c->env);
	launch_unit_argv(&a->spec, a->master_addr, a->port, &c->args);
	c->clean_env = true;
	c->dir = a->spec.chdir;
	c->in = CHILD_IO_NULL;
	c->out = c->err = CHILD_IO_PIPE;
	c->group = CHILD_OWN_SESSION;
	c->die_with_parent = true;
	c->cgroup_fd = a->jc.dir_fd;
	job_container_wrap(&a->jc, u->id, &c->wrap);
	u->started_ms = monotonic_ms();
	if ((r = child_start(c)) < 0) {
		if (!c->program) /* not found */
			strbuf_addf(err, "cannot run '%s': %s", c->args.v[0],
				    r == -EACCES ? "not an executable file" : "not found in PATH");
		else if (r == -ECHILD)
			strbuf_addf(err, "cannot run '%s': it could not enter the job's cgroup",
				    c->program);
		else
			strbuf_addf(err, "cannot run '%s': %s", c->program, strerror(-r));
		return r;
	}
	u->running = true;
	a->nr_running++;
	u->out.fd = c->out_fd;
	u->err.fd = c->err_fd;
	c->out_fd = c->err_fd = -1;
	loop_watch_fd(&a->loop, u->out.fd, POLLIN, unit_output, u);
	loop_watch_fd(&a->loop, u->err.fd, POLLIN, unit_output, u);
	return 0;
}

static void start_units(struct agent *a)
{
	for (size_t i = 0; i < a->nr_units && !a->ending; i++) {
		struct unit *u = &a->units[i];
		struct strbuf err = STRBUF_INIT;
		int r = start_unit(a, u, &err);
		if (r < 0) {
			/* It never started: reported as the shell would (126: cannot run it). */
			warn(a, "%s %u: %s", a->spec.torchrun ? "node" : "rank", u->id, err.buf);
			send_line(a, "X %u %d 0 0 0 %" PRIu64, u->id,
				  r == -EACCES || r == -ENOEXEC || r == -EISDIR ? 126 : 127,
				  wall_clock_us());
		}
		strbuf_release(&err);
	}
	if (!a->nr_running)
		sweep_soon(a);
}

/* ---- the event loop ----------------------------------------------------- */

/* One line (without its newline), in pieces of at most LAUNCH_LINE_MAX bytes. */
static void send_line_pieces(struct agent *a, char tag, unsigned id, const char *data, size_t len)
{
	while (len > LAUNCH_LINE_MAX) {
		send_output(a, tag, id, data, LAUNCH_LINE_MAX);
		data += LAUNCH_LINE_MAX;
		len -= LAUNCH_LINE_MAX;
	}
	send_output(a, tag, id, data, len);
}

/* Pass on the complete lines of a stream; at_eof also its unfinished one. */
static void forward_lines(struct agent *a, struct unit *u, struct stream *s, bool at_eof)
{
	size_t start = 0;

	for (size_t i = 0; i < s->part.len; i++)
		if (s->part.buf[i] == '\n') {
			send_line_pieces(a, s->tag, u->id, s->part.buf + start, i - start);
			start = i + 1;
		}
	/*
	 * An unfinished line longer than the bound goes on in pieces now; one
	 * of exactly the bound waits, as its newline may come next.
	 */
	while (s->part.len - start > LAUNCH_LINE_MAX) {
		send_output(a, s->tag, u->id, s->part.buf + start, LAUNCH_LINE_MAX);
		start += LAUNCH_LINE_MAX;
	}
	if (at_eof && start < s->part.len) {
		send_output(a, s->tag, u->id, s->part.buf + start, s->part.len - start);
		start = s->part.len;
	}
	memmove(s->part.buf, s->part.buf + start, s->part.len - start);
	strbuf_setlen(&s->part, s->part.len - start);
}

/* Read what the stream holds now; close it at end of file. */
static void read_stream(struct agent *a, struct unit *u, struct stream *s)
{
	for (int rounds = 0; s->fd >= 0 && rounds < 16; rounds++) {
		ssize_t n;
		strbuf_grow(&s->part, 65536);
		n = read(s->fd, s->part.buf + s->part.len, s->part.alloc - s->part.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			close_stream(a, s);
			forward_lines(a, u, s, true);
			/* The job may be over but for its pipes. */
			if (a->gone_at)
				sweep_soon(a);
			break;
		}
		strbuf_setlen(&s->part, s->part.len + (size_t)n);
		forward_lines(a, u, s, false);
	}
}

static void unit_output(struct loop *loop, int fd, short revents, void *data)
{
	struct unit *u = data;

	(void)loop;
	(void)revents;
	read_stream(u->a, u, fd == u->out.fd ? &u->out : &u->err);
}

/*
 * Reap every child that exited: the units, and what the job left behind
 * that came back to the agent (a subreaper).
 */
static void reap_children(struct agent *a)
{
	for (;;) {
		int wstatus;
		pid_t pid = waitpid(-1, &wstatus, WNOHANG);
		if (pid <= 0)
			return;
		/* When it ended, as near as the agent knows: before its output is read. */
		uint64_t ended_at_us = wall_clock_us();
		for (size_t i = 0; i < a->nr_units; i++) {
			struct unit *u = &a->units[i];
			bool signaled;
			int status;
			if (u->child.pid != pid || !u->running)
				continue;
			child_reaped(&u->child, wstatus);
			/* Its output first: what it wrote before it ended comes before the end. */
			read_stream(a, u, &u->out);
			read_stream(a, u, &u->err);
			status = child_status(&u->child, &signaled);
			u->running = false;
			if (!--a->nr_running)
				sweep_soon(a);
			send_line(a, "X %u %d %d %" PRIu64 " %d %" PRIu64, u->id, status,
				  signaled ? 1 : 0, monotonic_ms() - u->started_ms,
				  a->ending ? 1 : 0, ended_at_us);
		}
	}
}

static void got_signal(struct loop *loop, const struct signalfd_siginfo *si, void *data)
{
	(void)loop;
	if (si->ssi_signo == SIGCHLD)
		reap_children(data);
	else /* SIGTERM, SIGINT, SIGHUP: the session is going away */
		end_job(data, LOST_LAUNCHER_GRACE_MS);
}

static int parse_go(struct agent *a, const char *line)
{
	char addr[256];
	unsigned port;

	if (sscanf(line, "G %255s %u", addr, &port) != 2 || port == 0 || port > 65535)
		return -EINVAL;
	snprintf(a->master_addr, sizeof(a->master_addr), "%s", addr);
	a->port = port;
	return 0;
}

static void handle_control(struct agent *a, const char *line)
{
	if (line[0] == 'G' && a->phase == PHASE_READY && !a->ending) {
		if (parse_go(a, line) < 0) {
			send_line(a, "F bad go line");
			end_job(a, 0);
			return;
		}
		a->phase = PHASE_RUNNING;
		start_units(a);
	} else if (streq(line, "T")) {
		end_job(a, a->spec.grace_ms);
	} else if (streq(line, "K")) {
		end_job(a, 0);
	}
}

/* Nothing from the launcher for LAUNCH_SILENT_PINGS pings: it is gone, as at the end of input. */
static void launcher_silent(struct loop *loop, void *data)
{
	struct agent *a = data;

	loop_unwatch_fd(loop, a->in_fd);
	a->input_closed = true;
	a->launcher_lost = true;
	strbuf_reset(&a->tx);
	end_job(a, LOST_LAUNCHER_GRACE_MS);
}

static void read_control(struct agent *a)
{
	char *nl;
	ssize_t n;

	strbuf_grow(&a->in, 4096);
	n = read(a->in_fd, a->in.buf + a->in.len, a->in.alloc - a->in.len - 1);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		loop_timer_cancel(&a->loop, &a->silence);
		loop_unwatch_fd(&a->loop, a->in_fd);
		a->input_closed = true;
		a->launcher_lost = true;
		strbuf_reset(&a->tx);
		end_job(a, LOST_LAUNCHER_GRACE_MS);
		return;
	}
	strbuf_setlen(&a->in, a->in.len + (size_t)n);
	if (a->spec.ping_ms)
		loop_timer_arm_in(&a->loop, &a->silence,
				  (uint64_t)a->spec.ping_ms * LAUNCH_SILENT_PINGS);
	while ((nl = memchr(a->in.buf, '\n', a->in.len))) {
		size_t len = (size_t)(nl - a->in.buf) + 1;
		*nl = '\0';
		handle_control(a, a->in.buf);
		memmove(a->in.buf, a->in.buf + len, a->in.len - len);
		strbuf_setlen(&a->in, a->in.len - len);
	}
	if (a->in.len > 4096) /* no control line is that long */
		strbuf_reset(&a->in);
}

static bool streams_open(const struct agent *a)
{
	for (size_t i = 0; i < a->nr_units; i++)
		if (a->units[i].out.fd >= 0 || a->units[i].err.fd >= 0)
			return true;
	return false;
}

static void close_streams(struct agent *a)
{
	for (size_t i = 0; i < a->nr_units; i++) {
		struct unit *u = &a->units[i];
		if (u->out.fd >= 0)
			forward_lines(a, u, &u->out, true);
		if (u->err.fd >= 0)
			forward_lines(a, u, &u->err, true);
		close_stream(a, &u->out);
		close_stream(a, &u->err);
	}
}

/*
 * Once no unit runs: anything of the job still alive is ended; the job is
 * over when nothing is left and the output pipes are closed (or stay open
 * past PIPE_CLOSE_WAIT_MS, held by something that is not the job's).
 */
static bool job_over(struct agent *a)
{
	struct proc_list l = { 0 };
	bool left;

	job_processes(a, &l);
	left = l.nr > 0;
	proc_list_release(&l);
	if (left) {
		a->gone_at = 0;
		loop_timer_cancel(&a->loop, &a->pipe_wait);
		if (!a->ending)
			end_job(a, a->launcher_lost ? LOST_LAUNCHER_GRACE_MS : a->spec.grace_ms);
		return false;
	}
	if (!a->gone_at) {
		a->gone_at = monotonic_ms();
		loop_timer_arm(&a->loop, &a->pipe_wait, a->gone_at + PIPE_CLOSE_WAIT_MS);
	}
	if (streams_open(a) && a->pipe_wait.armed)
		return false;
	close_streams(a);
	return true;
}

/*
 * Every SWEEP_INTERVAL_MS while there is work: SIGKILL again once it was
 * sent, and once no unit runs, a look for what is left of the job.  The
 * pipe-close wait calls it too when it is over.
 */
static void sweep(struct loop *loop, void *data)
{
	struct agent *a = data;
	bool no_unit = !a->nr_running && (a->phase == PHASE_RUNNING || a->ending);

	if (a->killing)
		signal_job(a, SIGKILL);
	if (no_unit && job_over(a))
		loop_stop(loop);
	else if (no_unit || a->killing)
		loop_timer_arm_in(loop, &a->sweep, SWEEP_INTERVAL_MS);
}

/* The grace is over. */
static void kill_job(struct loop *loop, void *data)
{
	struct agent *a = data;

	a->killing = true;
	sweep(loop, a);
}

static void control_input(struct loop *loop, int fd, short revents, void *data)
{
	(void)loop;
	(void)fd;
	(void)revents;
	read_control(data);
}

static void before_wait(struct loop *loop, void *data)
{
	(void)loop;
	flush_tx(data);
}

/* Read the first line, the spec, byte by byte: what follows is control input. */
static int read_spec(struct agent *a, struct strbuf *err)
{
	struct strbuf line = STRBUF_INIT;
	int r;

	for (;;) {
		char c;
		ssize_t n = read(a->in_fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			strbuf_addstr(err, "no job spec on input");
			strbuf_release(&line);
			return -EINVAL;
		}
		if (c == '\n')
			break;
		strbuf_addch(&line, c);
		if (line.len > SPEC_MAX) {
			strbuf_addstr(err, "job spec too long");
			strbuf_release(&line);
			return -E2BIG;
		}
	}
	r = launch_spec_from_json(line.buf, line.len, &a->spec, err);
	strbuf_release(&line);
	return r;
}

static void make_units(struct agent *a)
{
	const struct launch_spec *s = &a->spec;

	/* A task of an srun step runs one rank (or its node's torchrun). */
	a->nr_units = s->torchrun || a->srun_task ? 1 : s->nproc;
	a->units = xcalloc(a->nr_units, sizeof(*a->units));
	for (size_t i = 0; i < a->nr_units; i++) {
		struct unit *u = &a->units[i];
		u->a = a;
		u->local_rank = a->srun_task ? a->srun_local : (unsigned)i;
		child_init(&u->child);
		u->id = s->torchrun ? s->node_rank : s->rank_base + u->local_rank;
		u->out = (struct stream){ .fd = -1, .tag = 'O', .part = STRBUF_INIT };
		u->err = (struct stream){ .fd = -1, .tag = 'E', .part = STRBUF_INIT };
	}
}

static void agent_release(struct agent *a)
{
	for (size_t i = 0; i < a->nr_units; i++) {
		close_stream(a, &a->units[i].out);
		close_stream(a, &a->units[i].err);
		strbuf_release(&a->units[i].out.part);
		strbuf_release(&a->units[i].err.part);
		child_release(&a->units[i].child);
	}
	free(a->units);
	loop_release(&a->loop);
	if (a->have_inv)
		inventory_release(&a->inv);
	launch_spec_release(&a->spec);
	free(a->marks[0]);
	free(a->marks[1]);
	job_container_close(&a->jc);
	strvec_clear(&a->node_env);
	strbuf_release(&a->in);
	strbuf_release(&a->tx);
}

/* The loop's signals and timers; the agent is a subreaper. */
static int agent_init(struct agent *a)
{
	sigset_t mask;

	loop_init(&a->loop);
	loop_timer_init(&a->kill, kill_job, a);
	loop_timer_init(&a->sweep, sweep, a);
	loop_timer_init(&a->pipe_wait, sweep, a);
	loop_timer_init(&a->silence, launcher_silent, a);
	launch_spec_init(&a->spec);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Orphans of the job come back to the agent, which ends and reaps them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		return -errno;
	return loop_watch_signals(&a->loop, &mask, got_signal, a);
}

static int agent_main(int in_fd, int out_fd, bool srun_task)
{
	struct agent a = { .in_fd = in_fd,
			   .srun_task = srun_task,
			   .out_fd = out_fd,
			   .self = getpid(),
			   .in = STRBUF_INIT,
			   .tx = STRBUF_INIT,
			   .node_env = STRVEC_INIT,
			   .jc = { .dir_fd = -1, .how = CONTAIN_MARKS, .note = STRBUF_INIT } };
	struct strbuf err = STRBUF_INIT;
	int r, ret = 1;

	if ((r = agent_init(&a)) < 0) {
		strbuf_addf(&err, "cannot set up the agent: %s", strerror(-r));
		goto fail;
	}
	if (read_spec(&a, &err) < 0)
		goto fail;
	if (srun_task && srun_task_place(&a.spec, &a.srun_local, a.srun_step, &err) < 0)
		goto fail;
	a.marks[0] = xasprintf("%s=%s", LAUNCH_JOB_VAR, a.spec.job_id);
	a.marks[1] = xasprintf("%s=%u", LAUNCH_JOB_NODE_VAR, launch_spec_part(&a.spec));
	a.start_ticks = self_start_ticks();
	make_units(&a);
	if (set_up(&a, &err) < 0)
		goto fail;
	a.phase = PHASE_READY;
	loop_watch_fd(&a.loop, a.in_fd, POLLIN, control_input, &a);
	if (a.spec.ping_ms)
		loop_timer_arm_in(&a.loop, &a.silence,
				  (uint64_t)a.spec.ping_ms * LAUNCH_SILENT_PINGS);
	loop_on_idle(&a.loop, before_wait, &a);
	loop_run(&a.loop);
	send_line(&a, "D");
	flush_tx(&a);
	ret = 0;
	goto out;
fail:
	for (char *p = err.buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	send_line(&a, "F %s", err.buf);
	flush_tx(&a);
out:
	strbuf_release(&err);
	agent_release(&a);
	return ret;
}

int launch_agent_main(int in_fd, int out_fd)
{
	return agent_main(in_fd, out_fd, false);
}

int launch_agent_srun_main(int in_fd, int out_fd)
{
	return agent_main(in_fd, out_fd, true);
}
