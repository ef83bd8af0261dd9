/*
 * run.c - running jobs in parallel with captured output and timeouts.
 *
 * One poll() loop serves every running job: its stdout and stderr pipes,
 * its stdin pipe while input remains, and a pidfd that becomes readable
 * when the command exits (or, where pidfds are not available, a short
 * poll period and waitid(WNOHANG)).  No signal handler is installed and
 * no signal disposition changed, so the caller's process state is left
 * alone.  The leader of a job is reaped only after its whole process
 * group has been signalled, so the group id cannot have been reused.
 */
#include "sparkctl.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/clock.h"
#include "lib/xalloc.h"
#include "proc/run.h"

#define NSEC_PER_MSEC ((uint64_t)1000000)
/* From SIGTERM to SIGKILL. */
#define KILL_GRACE_NS (1000 * NSEC_PER_MSEC)
/*
 * How long to wait, after killing a timed-out job, for init to reap the
 * members of its group that were orphaned; some container inits take
 * seconds.
 */
#define LINGER_MAX_NS (5000 * NSEC_PER_MSEC)
/* The poll period where no descriptor reports an exit (no pidfd, lingering). */
#define TICK_MS	      10
#define READ_CHUNK    65536
/* What is still read from a job's pipes once it exited (a background writer could go on forever).
 */
#define DRAIN_MAX     ((size_t)16 << 20)

#if defined(__GLIBC__)
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)
#define HAVE_ADDCLOSEFROM 1
#endif
#endif

enum slot_state {
	SLOT_RUNNING,	/* the command has not been reaped yet */
	SLOT_LINGERING, /* reaped after a timeout; waiting for the rest of its group to vanish */
};

/* A job that was started and is not finished. */
struct slot {
	struct run_job *job;
	enum slot_state state;
	pid_t pid;	     /* also the process group id */
	int pidfd;	     /* readable once the command exited; -1: poll with waitid() */
	int in_fd;	     /* our end of its stdin, -1 once closed */
	int out_fd, err_fd;  /* our ends of its stdout and stderr, -1 once closed */
	size_t in_off;	     /* bytes of job->input written */
	size_t in_len;	     /* strlen(job->input) */
	bool exited;	     /* the command exited and awaits reaping */
	bool killed;	     /* SIGKILL was sent */
	bool reaped;	     /* finish_command() was done */
	uint64_t start;	     /* CLOCK_MONOTONIC ns at spawn */
	uint64_t deadline;   /* when to send SIGTERM; 0: no timeout */
	uint64_t term_at;    /* when SIGTERM was sent; 0: not sent */
	uint64_t linger_end; /* SLOT_LINGERING: give up waiting at this time */
};

/* What a pollfd stands for. */
enum pfd_kind {
	PFD_IN,
	PFD_OUT,
	PFD_ERR,
	PFD_PID,
};

struct pfd_ref {
	struct slot *slot;
	enum pfd_kind kind;
};

void run_job_init(struct run_job *job)
{
	memset(job, 0, sizeof(*job));
	strvec_init(&job->argv);
	strbuf_init(&job->out, 0);
	strbuf_init(&job->err, 0);
	job->status = -1;
}

void run_job_release(struct run_job *job)
{
	strvec_clear(&job->argv);
	strbuf_release(&job->out);
	strbuf_release(&job->err);
}

static double realtime_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		/* Linux closes the descriptor even when close() reports EINTR: never retry. */
		close(*fd);
		*fd = -1;
	}
}

static int set_nonblock(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/*
 * A pipe whose ends are both above 2: when the caller runs with stdin,
 * stdout or stderr closed, pipe2() can return 0..2, and the child's dup2()
 * onto 0..2 would then overwrite one end with another.
 */
static int make_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		if (fds[i] > 2)
			continue;
		int fd = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
		int r = fd < 0 ? -errno : 0;
		close(fds[i]);
		fds[i] = fd;
		if (r < 0) {
			close_fd(&fds[0]);
			close_fd(&fds[1]);
			return r;
		}
	}
	return 0;
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* Close-on-exec by definition.  Fails on kernels before 5.3 or under seccomp. */
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		return (int)fd;
#else
	(void)pid;
#endif
	return -1;
}

/* Start job in s.  On failure nothing was started and no descriptor is left open. */
static int start_job(struct slot *s, struct run_job *job, unsigned timeout_ms)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	bool fa_init = false, attr_init = false;
	sigset_t mask, sigdef;
	pid_t pid;
	int e, r;

	if (!job->argv.nr) {
		r = -EINVAL;
		goto out;
	}
	if ((job->input || job->hold_stdin) && (r = make_pipe(in)) < 0)
		goto out;
	if ((r = make_pipe(out)) < 0 || (r = make_pipe(err)) < 0)
		goto out;
	if (((job->input || job->hold_stdin) && (r = set_nonblock(in[1])) < 0) ||
	    (r = set_nonblock(out[0])) < 0 || (r = set_nonblock(err[0])) < 0)
		goto out;

	if ((e = posix_spawn_file_actions_init(&fa)) != 0) {
		r = -e;
		goto out;
	}
	fa_init = true;
	/* dup2() clears close-on-exec on the copy; every other pipe end closes at exec. */
	if (in[0] >= 0)
		e = posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	else
		e = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
	if (!e)
		e = posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
#ifdef HAVE_ADDCLOSEFROM
	/* Nor does it get descriptors the caller left inheritable. */
	if (!e)
		e = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
	if (e) {
		r = -e;
		goto out;
	}

	if ((e = posix_spawnattr_init(&attr)) != 0) {
		r = -e;
		goto out;
	}
	attr_init = true;
	/*
	 * Its own process group, so a timeout reaches everything it started;
	 * no blocked signals; and SIGPIPE at its default even where the
	 * caller ignores it, so pipelines in the command behave normally.
	 */
	sigemptyset(&mask);
	sigemptyset(&sigdef);
	sigaddset(&sigdef, SIGPIPE);
	e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						    POSIX_SPAWN_SETSIGDEF);
	if (!e)
		e = posix_spawnattr_setpgroup(&attr, 0);
	if (!e)
		e = posix_spawnattr_setsigmask(&attr, &mask);
	if (!e)
		e = posix_spawnattr_setsigdefault(&attr, &sigdef);
	if (e) {
		r = -e;
		goto out;
	}

	/* Reports exec failures (ENOENT, EACCES) itself, and reaps the failed child. */
	e = posix_spawnp(&pid, job->argv.v[0], &fa, &attr, job->argv.v, environ);
	if (e) {
		r = -e;
		goto out;
	}
	r = 0;
	memset(s, 0, sizeof(*s));
	s->job = job;
	s->state = SLOT_RUNNING;
	s->pid = pid;
	s->pidfd = open_pidfd(pid);
	s->in_fd = in[1];
	s->out_fd = out[0];
	s->err_fd = err[0];
	in[1] = out[0] = err[0] = -1;
	s->in_len = job->input ? strlen(job->input) : 0;
	s->start = monotonic_ns();
	job->started_at = realtime_seconds();
	s->deadline = timeout_ms ? s->start + timeout_ms * NSEC_PER_MSEC : 0;
	job->pid = pid;
	/* Empty input: end of file at once. */
	if (s->in_len == 0 && !job->hold_stdin)
		close_fd(&s->in_fd);
out:
	if (attr_init)
		posix_spawnattr_destroy(&attr);
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		close_fd(&in[i]);
		close_fd(&out[i]);
		close_fd(&err[i]);
	}
	return r;
}

/* Keep what fits under max_output (0: no bound). */
static void keep_output(struct run_job *job, struct strbuf *sb, const char *buf, size_t len,
			size_t max_output)
{
	size_t room = len;

	if (max_output) {
		room = sb->len < max_output ? max_output - sb->len : 0;
		if (room > len)
			room = len;
	}
	if (room < len)
		job->truncated = true;
	strbuf_add(sb, buf, room);
}

/*
 * Read up to limit bytes from *fd, stopping early when the pipe is
 * empty.  *fd is closed at end of file or on an error.
 */
static void read_output(struct run_job *job, int *fd, struct strbuf *sb, size_t limit,
			size_t max_output)
{
	char buf[READ_CHUNK];
	size_t total = 0;

	while (*fd >= 0 && total < limit) {
		ssize_t n = read(*fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			close_fd(fd);
			return;
		}
		keep_output(job, sb, buf, (size_t)n, max_output);
		total += (size_t)n;
	}
}

/*
 * write() to a pipe whose reader may be gone, without SIGPIPE and
 * without touching the signal disposition: SIGPIPE is blocked around the
 * write, and the one the write raised is taken back with sigtimedwait()
 * unless one was already pending before.
 */
static ssize_t write_nosigpipe(int fd, const void *buf, size_t len)
{
	const struct timespec zero = { 0, 0 };
	sigset_t pipe_set, pending, old;
	bool was_pending;
	ssize_t n;
	int saved;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigemptyset(&pending);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE) == 1;
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	do {
		n = write(fd, buf, len);
	} while (n < 0 && errno == EINTR);
	saved = errno;
	if (n < 0 && saved == EPIPE && !was_pending) {
		while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return n;
}

static void write_input(struct slot *s)
{
	ssize_t n = write_nosigpipe(s->in_fd, s->job->input + s->in_off, s->in_len - s->in_off);

	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* EPIPE: the command closed its stdin, which is its right. */
		close_fd(&s->in_fd);
		return;
	}
	s->in_off += (size_t)n;
	if (s->in_off == s->in_len && !s->job->hold_stdin)
		close_fd(&s->in_fd);
}

/* waitid() without reaping, where no pidfd tells of the exit. */
static void check_exited(struct slot *s)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)s->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0) {
		if (si.si_pid == s->pid)
			s->exited = true;
	} else if (errno == ECHILD) {
		/* Reaped behind our back (SIGCHLD ignored by the caller): nothing to wait for. */
		s->exited = true;
	}
}

static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/*
 * The command exited: collect what its pipes still hold, kill what is
 * left of a timed-out group while the unreaped leader still holds the
 * group id, and reap it.
 */
static void finish_command(struct slot *s, size_t max_output, bool abandon)
{
	struct run_job *job = s->job;
	int st;
	pid_t r;

	if (!abandon) {
		read_output(job, &s->out_fd, &job->out, DRAIN_MAX, max_output);
		read_output(job, &s->err_fd, &job->err, DRAIN_MAX, max_output);
	}
	close_fd(&s->in_fd);
	close_fd(&s->out_fd);
	close_fd(&s->err_fd);
	close_fd(&s->pidfd);
	if (s->term_at || abandon)
		kill(-s->pid, SIGKILL);
	do {
		r = waitpid(s->pid, &st, 0);
	} while (r < 0 && errno == EINTR);
	job->status = r == s->pid ? decode_status(st) : -1;
	job->seconds = (double)(monotonic_ns() - s->start) / 1e9;
	job->ended_at = job->started_at + job->seconds;
	s->reaped = true;
	if (s->term_at || abandon) {
		s->state = SLOT_LINGERING;
		s->linger_end = monotonic_ns() + LINGER_MAX_NS;
	}
}

/* Timeouts and exits of a running job. */
static void check_running(struct slot *s, uint64_t now)
{
	if (s->exited)
		return;
	if (s->deadline && !s->term_at && now >= s->deadline) {
		kill(-s->pid, SIGTERM);
		s->term_at = now;
		s->job->timed_out = true;
	} else if (s->term_at && !s->killed && now >= s->term_at + KILL_GRACE_NS) {
		kill(-s->pid, SIGKILL);
		s->killed = true;
	}
	if (s->pidfd < 0)
		check_exited(s);
}

/* True once nothing is left of the group of a lingering job (or we stop waiting). */
static bool group_gone(const struct slot *s, uint64_t now)
{
	/* Signal 0 only: the id may in principle belong to a new group by now. */
	if (kill(-s->pid, 0) < 0 && errno == ESRCH)
		return true;
	return now >= s->linger_end;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The poll() timeout until the next timer of any live slot, in ms (-1: none). */
static int poll_timeout(const struct slot *slots, size_t nr, uint64_t now)
{
	uint64_t wake = UINT64_MAX;

	for (size_t i = 0; i < nr; i++) {
		const struct slot *s = &slots[i];
		if (s->state == SLOT_LINGERING || s->pidfd < 0) {
			wake = min_u64(wake, now + TICK_MS * NSEC_PER_MSEC);
			continue;
		}
		if (s->deadline && !s->term_at)
			wake = min_u64(wake, s->deadline);
		if (s->term_at && !s->killed)
			wake = min_u64(wake, s->term_at + KILL_GRACE_NS);
	}
	if (wake == UINT64_MAX)
		return -1;
	if (wake <= now)
		return 0;
	/* Round up, so the loop does not spin just before a deadline. */
	uint64_t ms = (wake - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void add_pfd(struct pollfd *pfds, struct pfd_ref *refs, size_t *nr, int fd, short events,
		    struct slot *s, enum pfd_kind kind)
{
	if (fd < 0)
		return;
	pfds[*nr].fd = fd;
	pfds[*nr].events = events;
	pfds[*nr].revents = 0;
	refs[*nr].slot = s;
	refs[*nr].kind = kind;
	(*nr)++;
}

static void reset_results(struct run_job *job)
{
	job->status = -1;
	job->spawn_error = 0;
	job->timed_out = false;
	job->truncated = false;
	strbuf_reset(&job->out);
	strbuf_reset(&job->err);
	job->seconds = 0;
	job->started_at = 0;
	job->ended_at = 0;
	job->pid = 0;
}

int run_jobs(struct run_job *jobs, size_t n, unsigned parallel, unsigned timeout_ms,
	     size_t max_output)
{
	struct slot *slots = NULL;
	struct pollfd *pfds = NULL;
	struct pfd_ref *refs = NULL;
	size_t limit, nr_live = 0, nr_running = 0, next = 0;
	bool defer = false;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		reset_results(&jobs[i]);
	if (!n)
		return 0;
	limit = parallel && parallel < n ? parallel : n;
	/* Lingering jobs hold a slot but not a place among the limit running. */
	slots = xcalloc(n, sizeof(*slots));
	pfds = xcalloc(limit * 4, sizeof(*pfds));
	refs = xcalloc(limit * 4, sizeof(*refs));

	for (;;) {
		uint64_t now;
		size_t nr_pfds = 0;
		int r;

		while (nr_running < limit && next < n && !defer) {
			r = start_job(&slots[nr_live], &jobs[next], timeout_ms);
			/* Out of descriptors: wait for a running job to give some back. */
			if ((r == -EMFILE || r == -ENFILE) && nr_running > 0) {
				defer = true;
				break;
			}
			if (r < 0) {
				jobs[next++].spawn_error = r;
				continue;
			}
			next++;
			nr_live++;
			nr_running++;
		}

		now = monotonic_ns();
		for (size_t i = 0; i < nr_live;) {
			struct slot *s = &slots[i];
			bool done = false;

			if (s->state == SLOT_RUNNING) {
				check_running(s, now);
				if (s->exited) {
					finish_command(s, max_output, false);
					nr_running--;
					defer = false;
					done = s->state == SLOT_RUNNING;
				}
			}
			if (s->state == SLOT_LINGERING)
				done = group_gone(s, now);
			if (done) {
				slots[i] = slots[--nr_live];
				continue;
			}
			i++;
		}
		if (!nr_live && next >= n)
			break;
		if (nr_running < limit && next < n && !defer)
			continue;

		for (size_t i = 0; i < nr_live; i++) {
			struct slot *s = &slots[i];
			if (s->state != SLOT_RUNNING)
				continue;
			/* A held stdin with nothing (more) to write stays open until the end. */
			if (s->in_off < s->in_len)
				add_pfd(pfds, refs, &nr_pfds, s->in_fd, POLLOUT, s, PFD_IN);
			add_pfd(pfds, refs, &nr_pfds, s->out_fd, POLLIN, s, PFD_OUT);
			add_pfd(pfds, refs, &nr_pfds, s->err_fd, POLLIN, s, PFD_ERR);
			add_pfd(pfds, refs, &nr_pfds, s->pidfd, POLLIN, s, PFD_PID);
		}
		r = poll(pfds, nr_pfds, poll_timeout(slots, nr_live, now));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		for (size_t i = 0; i < nr_pfds; i++) {
			struct slot *s = refs[i].slot;
			struct run_job *job = s->job;

			if (!pfds[i].revents)
				continue;
			switch (refs[i].kind) {
			case PFD_IN:
				write_input(s);
				break;
			case PFD_OUT:
				read_output(job, &s->out_fd, &job->out, READ_CHUNK, max_output);
				break;
			case PFD_ERR:
				read_output(job, &s->err_fd, &job->err, READ_CHUNK, max_output);
				break;
			case PFD_PID:
				s->exited = true;
				break;
			}
		}
	}
out:
	/* Only after a failure of poll() itself: end what still runs, leave nothing behind. */
	for (size_t i = 0; i < nr_live; i++)
		if (slots[i].state == SLOT_RUNNING)
			finish_command(&slots[i], max_output, true);
	free(slots);
	free(pfds);
	free(refs);
	return ret;
}

/* The servers' slots, in the order of their jobs; a job never started has pid 0. */
struct run_servers_state {
	struct slot *slots;
};

int run_servers_start(struct run_servers *rs, struct run_job *jobs, size_t n)
{
	rs->jobs = jobs;
	rs->n = n;
	rs->state = xcalloc(1, sizeof(*rs->state));
	rs->state->slots = xcalloc(n + 1, sizeof(struct slot));
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &rs->state->slots[i];
		int r;
		reset_results(&jobs[i]);
		jobs[i].hold_stdin = true;
		s->in_fd = s->out_fd = s->err_fd = s->pidfd = -1;
		r = start_job(s, &jobs[i], 0);
		if (r < 0) {
			jobs[i].spawn_error = r;
			s->reaped = true;
		}
	}
	return 0;
}

bool run_job_printed_line(const struct run_job *job, const char *line)
{
	size_t len = strlen(line);

	for (const char *p = job->out.buf; (p = strstr(p, line)) != NULL; p++)
		if ((p == job->out.buf || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

/*
 * Serve the servers' pipes until until() says so, every one was reaped,
 * or the deadline (CLOCK_MONOTONIC ns) passed.
 */
static void pump_servers(struct run_servers *rs, uint64_t deadline,
			 bool (*until)(const struct run_servers *rs, const void *arg),
			 const void *arg)
{
	struct pollfd *pfds = xcalloc(3 * rs->n + 1, sizeof(*pfds));
	struct pfd_ref *refs = xcalloc(3 * rs->n + 1, sizeof(*refs));

	for (;;) {
		uint64_t now = monotonic_ns();
		size_t nr_pfds = 0, live = 0;
		bool tick = false;

		for (size_t i = 0; i < rs->n; i++) {
			struct slot *s = &rs->state->slots[i];
			if (s->reaped)
				continue;
			check_running(s, now);
			if (s->exited) {
				finish_command(s, 0, false);
				continue;
			}
			live++;
			tick |= s->pidfd < 0 || s->term_at;
			add_pfd(pfds, refs, &nr_pfds, s->out_fd, POLLIN, s, PFD_OUT);
			add_pfd(pfds, refs, &nr_pfds, s->err_fd, POLLIN, s, PFD_ERR);
			add_pfd(pfds, refs, &nr_pfds, s->pidfd, POLLIN, s, PFD_PID);
		}
		if (!live || (until && until(rs, arg)) || now >= deadline)
			break;
		uint64_t wait_ms = (deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		if (tick && wait_ms > TICK_MS)
			wait_ms = TICK_MS;
		if (poll(pfds, nr_pfds, (int)(wait_ms > INT_MAX ? INT_MAX : wait_ms)) < 0 &&
		    errno != EINTR)
			break;
		for (size_t i = 0; i < nr_pfds; i++) {
			struct slot *s = refs[i].slot;
			if (!pfds[i].revents)
				continue;
			if (refs[i].kind == PFD_OUT)
				read_output(s->job, &s->out_fd, &s->job->out, READ_CHUNK, 0);
			else if (refs[i].kind == PFD_ERR)
				read_output(s->job, &s->err_fd, &s->job->err, READ_CHUNK, 0);
			else
				s->exited = true;
		}
	}
	free(pfds);
	free(refs);
}

static bool all_printed(const struct run_servers *rs, const void *line)
{
	for (size_t i = 0; i < rs->n; i++)
		if (!rs->state->slots[i].reaped && !run_job_printed_line(&rs->jobs[i], line))
			return false;
	return true;
}

size_t run_servers_wait_line(struct run_servers *rs, const char *line, unsigned timeout_ms)
{
	size_t n = 0;

	pump_servers(rs, monotonic_ns() + timeout_ms * NSEC_PER_MSEC, all_printed, line);
	for (size_t i = 0; i < rs->n; i++)
		n += run_job_printed_line(&rs->jobs[i], line);
	return n;
}

void run_servers_end(struct run_servers *rs, unsigned grace_ms, unsigned stop_ms)
{
	uint64_t now;

	if (!rs->state)
		return;
	pump_servers(rs, monotonic_ns() + grace_ms * NSEC_PER_MSEC, NULL, NULL);
	for (size_t i = 0; i < rs->n; i++)
		close_fd(&rs->state->slots[i].in_fd);
	pump_servers(rs, monotonic_ns() + stop_ms * NSEC_PER_MSEC, NULL, NULL);
	/* Still there: the group gets SIGTERM, and SIGKILL after the grace. */
	now = monotonic_ns();
	for (size_t i = 0; i < rs->n; i++) {
		struct slot *s = &rs->state->slots[i];
		if (s->reaped)
			continue;
		kill(-s->pid, SIGTERM);
		s->term_at = now;
		s->job->timed_out = true;
	}
	pump_servers(rs, now + KILL_GRACE_NS, NULL, NULL);
	for (size_t i = 0; i < rs->n; i++) {
		struct slot *s = &rs->state->slots[i];
		if (!s->reaped)
			finish_command(s, 0, true);
		close_fd(&s->in_fd);
		close_fd(&s->out_fd);
		close_fd(&s->err_fd);
		close_fd(&s->pidfd);
	}
	/* As run_jobs() does: until init has reaped what was left of a killed group. */
	for (size_t i = 0; i < rs->n; i++) {
		struct slot *s = &rs->state->slots[i];
		if (s->state != SLOT_LINGERING)
			continue;
		while (!group_gone(s, monotonic_ns()))
			poll(NULL, 0, TICK_MS);
	}
	free(rs->state->slots);
	free(rs->state);
	rs->state = NULL;
}

void run_child_session(pid_t parent)
{
	sigset_t none;

	setsid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int run_supervisor_signals(void)
{
	sigset_t mask;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}
