/*
 * run.c - running jobs in parallel with captured output and timeouts.
 *
 * Each job is a child (proc/child.h) leading its own process group, and
 * one loop (proc/loop.h) serves them all: their stdout and stderr pipes,
 * their stdin pipe while input remains, their exits, and three timers a
 * job: SIGTERM at the timeout, SIGKILL a second later, and after a kill
 * the checks that its group is gone.  No signal handler is installed and
 * no signal disposition changed, so the caller's process state is left
 * alone.  The leader of a job is reaped only after its whole process
 * group has been signalled, so the group id cannot have been reused.
 */
#include "sparkctl.h"

#include <signal.h>

#include "lib/clock.h"
#include "lib/xalloc.h"
#include "proc/child.h"
#include "proc/loop.h"
#include "proc/run.h"
#include "view/progress.h"

/* From SIGTERM to SIGKILL. */
#define KILL_GRACE_MS  1000
/*
 * How long to wait, after killing a timed-out job, for init to reap the
 * members of its group that were orphaned; some container inits take
 * seconds.
 */
#define LINGER_MAX_MS  5000
#define LINGER_TICK_MS 10
#define READ_CHUNK     65536
/* What is still read from a job's pipes once it exited (a background writer could go on forever).
 */
#define DRAIN_MAX      ((size_t)16 << 20)

struct runner;

/* One job: its command, and its timers. */
struct slot {
	struct runner *rn;
	struct run_job *job;
	struct child child;
	size_t in_off;	     /* bytes of job->input written */
	size_t in_len;	     /* job->input_len, or strlen(job->input) */
	uint64_t start_ns;   /* CLOCK_MONOTONIC at the start */
	uint64_t linger_end; /* after a kill: stop waiting for the group at this time (ms) */
	struct loop_timer term, kill, linger;
	bool running;	/* started and not reaped */
	bool term_sent; /* SIGTERM was sent: the group is killed at the reap */
};

/* The jobs of one run_jobs(), or the servers from run_servers_start() to run_servers_end(). */
struct runner {
	struct loop loop;
	struct run_job *jobs;
	struct slot *slots; /* one per job */
	size_t n, next, limit, nr_running;
	bool defer; /* out of descriptors: start no more until a job ends */
	unsigned timeout_ms;
	size_t max_output;
	/* ends a wait of the servers when true */
	bool (*until)(const struct runner *rn, const void *arg);
	const void *until_arg;
	struct loop_timer progress; /* draws view/progress.h's line while this loop waits */
};

struct run_servers_state {
	struct runner rn;
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

static void close_stream(struct slot *s, int *fd)
{
	loop_unwatch_fd(&s->rn->loop, *fd);
	child_close_fd(fd);
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
static void read_stream(struct slot *s, int *fd, struct strbuf *sb, size_t limit)
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
			close_stream(s, fd);
			return;
		}
		keep_output(s->job, sb, buf, (size_t)n, s->rn->max_output);
		total += (size_t)n;
	}
}

static void on_output(struct loop *loop, int fd, short revents, void *data)
{
	struct slot *s = data;

	(void)loop;
	(void)revents;
	if (fd == s->child.out_fd)
		read_stream(s, &s->child.out_fd, &s->job->out, READ_CHUNK);
	else
		read_stream(s, &s->child.err_fd, &s->job->err, READ_CHUNK);
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

static void on_input(struct loop *loop, int fd, short revents, void *data)
{
	struct slot *s = data;
	ssize_t n = write_nosigpipe(fd, s->job->input + s->in_off, s->in_len - s->in_off);

	(void)revents;
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* EPIPE: the command closed its stdin, which is its right. */
		close_stream(s, &s->child.in_fd);
		return;
	}
	s->in_off += (size_t)n;
	if (s->in_off < s->in_len)
		return;
	/* A held stdin stays open, with nothing to wait for, until the job ends. */
	if (s->job->hold_stdin)
		loop_unwatch_fd(loop, fd);
	else
		close_stream(s, &s->child.in_fd);
}

/* The timeout: SIGTERM to the job's group, SIGKILL after the grace. */
static void on_timeout(struct loop *loop, void *data)
{
	struct slot *s = data;

	child_signal(&s->child, SIGTERM);
	s->term_sent = true;
	s->job->timed_out = true;
	loop_timer_arm_in(loop, &s->kill, KILL_GRACE_MS);
}

static void on_kill(struct loop *loop, void *data)
{
	struct slot *s = data;

	(void)loop;
	child_signal(&s->child, SIGKILL);
}

/* After a kill: until nothing is left of the group, not even a zombie for init to reap. */
static void on_linger(struct loop *loop, void *data)
{
	struct slot *s = data;

	/* Signal 0 only: the id may in principle belong to a new group by now. */
	if ((kill(-s->job->pid, 0) < 0 && errno == ESRCH) || monotonic_ms() >= s->linger_end)
		return;
	loop_timer_arm_in(loop, &s->linger, LINGER_TICK_MS);
}

/*
 * The command exited (or is abandoned): keep what its pipes hold, kill
 * what is left of a timed-out group while the unreaped leader still holds
 * the group id, and reap it.
 */
static void reap_job(struct slot *s, bool abandon)
{
	struct runner *rn = s->rn;
	struct run_job *job = s->job;
	bool kill_group = s->term_sent || abandon;

	if (!abandon) {
		read_stream(s, &s->child.out_fd, &job->out, DRAIN_MAX);
		read_stream(s, &s->child.err_fd, &job->err, DRAIN_MAX);
	}
	close_stream(s, &s->child.in_fd);
	close_stream(s, &s->child.out_fd);
	close_stream(s, &s->child.err_fd);
	loop_timer_cancel(&rn->loop, &s->term);
	loop_timer_cancel(&rn->loop, &s->kill);
	loop_unwatch_child(&rn->loop, &s->child);
	if (kill_group)
		child_signal(&s->child, SIGKILL);
	job->status = child_finish(&s->child);
	job->seconds = (double)(monotonic_ns() - s->start_ns) / 1e9;
	job->ended_at = job->started_at + job->seconds;
	s->running = false;
	rn->nr_running--;
	rn->defer = false;
	if (kill_group) {
		s->linger_end = monotonic_ms() + LINGER_MAX_MS;
		loop_timer_arm_in(&rn->loop, &s->linger, 0);
	}
}

static loop_child_fn on_job_exit;

/* Start the job of s.  On failure nothing was started and no descriptor is left open. */
static int start_job(struct slot *s)
{
	struct runner *rn = s->rn;
	struct run_job *job = s->job;
	struct child *c = &s->child;
	int r;

	for (size_t i = 0; i < job->argv.nr; i++)
		strvec_push(&c->args, job->argv.v[i]);
	c->in = job->input || job->hold_stdin ? CHILD_IO_PIPE : CHILD_IO_NULL;
	c->out = c->err = CHILD_IO_PIPE;
	/* Its own process group, so a timeout reaches everything it started. */
	c->group = CHILD_OWN_GROUP;
	if ((r = child_start(c)) < 0) {
		/* Back to nothing: a job deferred for want of descriptors starts again later. */
		child_release(c);
		child_init(c);
		return r;
	}
	s->running = true;
	s->in_len = !job->input ? 0 : job->input_len ? job->input_len : strlen(job->input);
	s->start_ns = monotonic_ns();
	job->started_at = (double)wall_clock_us() / 1e6;
	job->pid = c->pid;
	rn->nr_running++;
	loop_watch_fd(&rn->loop, c->out_fd, POLLIN, on_output, s);
	loop_watch_fd(&rn->loop, c->err_fd, POLLIN, on_output, s);
	if (s->in_len)
		loop_watch_fd(&rn->loop, c->in_fd, POLLOUT, on_input, s);
	else if (!job->hold_stdin) /* empty input: end of file at once */
		child_close_fd(&c->in_fd);
	loop_watch_child(&rn->loop, c, on_job_exit, s);
	if (rn->timeout_ms)
		loop_timer_arm_in(&rn->loop, &s->term, rn->timeout_ms);
	return 0;
}

/* Start jobs while fewer than the limit run; out of descriptors, wait for one to end. */
static void start_jobs(struct runner *rn)
{
	while (rn->nr_running < rn->limit && rn->next < rn->n && !rn->defer) {
		int r = start_job(&rn->slots[rn->next]);
		if ((r == -EMFILE || r == -ENFILE) && rn->nr_running > 0) {
			rn->defer = true;
			return;
		}
		if (r < 0)
			rn->jobs[rn->next].spawn_error = r;
		rn->next++;
	}
}

static void on_job_exit(struct loop *loop, struct child *c, void *data)
{
	struct slot *s = data;

	(void)loop;
	(void)c;
	reap_job(s, false);
	start_jobs(s->rn);
}

/* Before each wait: the servers' wait ends once until() holds. */
static void check_until(struct loop *loop, void *data)
{
	struct runner *rn = data;

	if (rn->until && rn->until(rn, rn->until_arg))
		loop_stop(loop);
}

static void runner_init(struct runner *rn, struct run_job *jobs, size_t n, unsigned timeout_ms,
			size_t max_output)
{
	memset(rn, 0, sizeof(*rn));
	loop_init(&rn->loop);
	loop_on_idle(&rn->loop, check_until, rn);
	progress_timer_arm(&rn->loop, &rn->progress);
	rn->jobs = jobs;
	rn->n = rn->limit = n;
	rn->timeout_ms = timeout_ms;
	rn->max_output = max_output;
	rn->slots = xcalloc(n + 1, sizeof(*rn->slots));
	for (size_t i = 0; i < n; i++) {
		struct slot *s = &rn->slots[i];
		s->rn = rn;
		s->job = &jobs[i];
		child_init(&s->child);
		loop_timer_init(&s->term, on_timeout, s);
		loop_timer_init(&s->kill, on_kill, s);
		loop_timer_init(&s->linger, on_linger, s);
	}
}

static void runner_release(struct runner *rn)
{
	for (size_t i = 0; i < rn->n; i++)
		child_release(&rn->slots[i].child);
	free(rn->slots);
	loop_release(&rn->loop);
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
	struct runner rn;
	int r;

	for (size_t i = 0; i < n; i++)
		reset_results(&jobs[i]);
	if (!n)
		return 0;
	runner_init(&rn, jobs, n, timeout_ms, max_output);
	/* Lingering jobs do not count among the limit running. */
	rn.limit = parallel && parallel < n ? parallel : n;
	start_jobs(&rn);
	r = loop_run(&rn.loop);
	/* Only after a failure of poll() itself: end what still runs, leave nothing behind. */
	for (size_t i = 0; r < 0 && i < n; i++)
		if (rn.slots[i].running)
			reap_job(&rn.slots[i], true);
	runner_release(&rn);
	return r;
}

int run_servers_start(struct run_servers *rs, struct run_job *jobs, size_t n)
{
	struct runner *rn;

	rs->jobs = jobs;
	rs->n = n;
	rs->state = xcalloc(1, sizeof(*rs->state));
	rn = &rs->state->rn;
	runner_init(rn, jobs, n, 0, 0);
	for (size_t i = 0; i < n; i++) {
		int r;
		reset_results(&jobs[i]);
		jobs[i].hold_stdin = true;
		if ((r = start_job(&rn->slots[i])) < 0)
			jobs[i].spawn_error = r;
	}
	/* All started: an exit starts nothing more. */
	rn->next = n;
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

static bool all_printed(const struct runner *rn, const void *line)
{
	for (size_t i = 0; i < rn->n; i++)
		if (rn->slots[i].running && !run_job_printed_line(&rn->jobs[i], line))
			return false;
	return true;
}

size_t run_servers_wait_line(struct run_servers *rs, const char *line, unsigned timeout_ms)
{
	struct runner *rn = &rs->state->rn;
	size_t n = 0;

	rn->until = all_printed;
	rn->until_arg = line;
	loop_run_until(&rn->loop, monotonic_ms() + timeout_ms);
	rn->until = NULL;
	for (size_t i = 0; i < rs->n; i++)
		n += run_job_printed_line(&rs->jobs[i], line);
	return n;
}

void run_servers_end(struct run_servers *rs, unsigned grace_ms, unsigned stop_ms)
{
	struct runner *rn;

	if (!rs->state)
		return;
	rn = &rs->state->rn;
	loop_run_until(&rn->loop, monotonic_ms() + grace_ms);
	for (size_t i = 0; i < rs->n; i++)
		close_stream(&rn->slots[i], &rn->slots[i].child.in_fd);
	loop_run_until(&rn->loop, monotonic_ms() + stop_ms);
	/*
	 * Still there: the group gets SIGTERM, and SIGKILL after the grace.
	 * Then, as in run_jobs(), until init has reaped what was left of a
	 * killed group.
	 */
	for (size_t i = 0; i < rs->n; i++)
		if (rn->slots[i].running)
			on_timeout(&rn->loop, &rn->slots[i]);
	loop_run(&rn->loop);
	runner_release(rn);
	free(rs->state);
	rs->state = NULL;
}
