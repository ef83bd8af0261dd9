/*
 * loop.c - the event loop: one poll() over the watched descriptors, bounded
 * by the earliest armed timer.
 *
 * A round builds the pollfd array from the watches, waits, then calls back
 * the ready descriptors and the timers that are due.  Watches removed
 * during a round are only marked, and dropped at its end, so that indexes
 * stay valid and a descriptor number reused by a new watch in the same
 * round never gets the old one's events.  A few dozen descriptors at most
 * are watched at once (a node's ranks, a cluster's ssh clients), so plain
 * arrays and linear scans serve; the timers are found by a scan too.
 */
#include "sparkctl.h"

#include "lib/clock.h"
#include "lib/xalloc.h"
#include "proc/child.h"
#include "proc/loop.h"

void loop_init(struct loop *loop)
{
	memset(loop, 0, sizeof(*loop));
	loop->signal_fd = -1;
	sigemptyset(&loop->old_mask);
}

void loop_release(struct loop *loop)
{
	if (loop->signal_fd >= 0) {
		close(loop->signal_fd);
		sigprocmask(SIG_SETMASK, &loop->old_mask, NULL);
	}
	free(loop->watches);
	free(loop->pfds);
	free(loop->timers);
	free(loop->children);
	loop_init(loop);
}

static struct loop_watch *find_watch(struct loop *loop, int fd)
{
	for (size_t i = 0; i < loop->nr_watches; i++)
		if (loop->watches[i].fd == fd && !loop->watches[i].removed)
			return &loop->watches[i];
	return NULL;
}

void loop_watch_fd(struct loop *loop, int fd, short events, loop_fd_fn *fn, void *data)
{
	struct loop_watch *w = find_watch(loop, fd);

	if (!w)
		w = ARRAY_PUSH(loop->watches, loop->nr_watches);
	*w = (struct loop_watch){ .fd = fd, .events = events, .fn = fn, .data = data };
}

void loop_set_events(struct loop *loop, int fd, short events)
{
	struct loop_watch *w = find_watch(loop, fd);

	if (w)
		w->events = events;
}

void loop_unwatch_fd(struct loop *loop, int fd)
{
	struct loop_watch *w = find_watch(loop, fd);

	if (w)
		w->removed = true;
}

void loop_timer_init(struct loop_timer *t, loop_timer_fn *fn, void *data)
{
	*t = (struct loop_timer){ .fn = fn, .data = data };
}

void loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t at)
{
	t->at = at;
	if (t->armed)
		return;
	if (loop->nr_timers == loop->alloc_timers) {
		loop->alloc_timers = loop->alloc_timers ? 2 * loop->alloc_timers : 8;
		loop->timers = xrealloc(loop->timers, loop->alloc_timers * sizeof(*loop->timers));
	}
	loop->timers[loop->nr_timers++] = t;
	t->armed = true;
}

void loop_timer_arm_in(struct loop *loop, struct loop_timer *t, uint64_t ms)
{
	loop_timer_arm(loop, t, monotonic_ms() + ms);
}

void loop_timer_cancel(struct loop *loop, struct loop_timer *t)
{
	if (!t->armed)
		return;
	for (size_t i = 0; i < loop->nr_timers; i++)
		if (loop->timers[i] == t) {
			loop->timers[i] = loop->timers[--loop->nr_timers];
			break;
		}
	t->armed = false;
}

static void read_signals(struct loop *loop, int fd, short revents, void *data)
{
	struct signalfd_siginfo si;

	(void)revents;
	(void)data;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		loop->signal_fn(loop, &si, loop->signal_data);
}

int loop_watch_signals(struct loop *loop, const sigset_t *mask, loop_signal_fn *fn, void *data)
{
	sigset_t old;
	int fd;

	if (loop->signal_fd >= 0)
		return -EBUSY;
	if (sigprocmask(SIG_BLOCK, mask, &old) < 0)
		return -errno;
	fd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -e;
	}
	loop->signal_fd = fd;
	loop->old_mask = old;
	loop->signal_fn = fn;
	loop->signal_data = data;
	loop_watch_fd(loop, fd, POLLIN, read_signals, NULL);
	return 0;
}

static struct loop_child_watch *find_child(struct loop *loop, const struct child *child)
{
	for (size_t i = 0; i < loop->nr_children; i++)
		if (loop->children[i].child == child && !loop->children[i].removed)
			return &loop->children[i];
	return NULL;
}

/* The child's exit, once: its watch goes, then its callback runs. */
static void child_ended(struct loop *loop, struct loop_child_watch *cw)
{
	struct child *child = cw->child;
	loop_child_fn *fn = cw->fn;
	void *data = cw->data;

	cw->removed = true;
	if (child->pidfd >= 0)
		loop_unwatch_fd(loop, child->pidfd);
	fn(loop, child, data);
}

static void pidfd_ready(struct loop *loop, int fd, short revents, void *data)
{
	struct loop_child_watch *cw;

	(void)fd;
	(void)revents;
	/* data is the child; its watch entry may have moved since the watch was made. */
	cw = find_child(loop, data);
	if (cw && child_check_exit(cw->child))
		child_ended(loop, cw);
}

static void child_tick(struct loop *loop, void *data)
{
	bool waiting = false;

	(void)data;
	for (size_t i = 0; i < loop->nr_children; i++) {
		struct loop_child_watch *cw = &loop->children[i];
		if (cw->removed || cw->child->pidfd >= 0)
			continue;
		if (child_check_exit(cw->child)) {
			/* Its callback may watch more children: cw is not used after. */
			child_ended(loop, cw);
			continue;
		}
		waiting = true;
	}
	if (waiting)
		loop_timer_arm_in(loop, &loop->child_tick, LOOP_CHILD_TICK_MS);
}

void loop_watch_child(struct loop *loop, struct child *child, loop_child_fn *fn, void *data)
{
	struct loop_child_watch *cw = find_child(loop, child);

	if (!cw)
		cw = ARRAY_PUSH(loop->children, loop->nr_children);
	*cw = (struct loop_child_watch){ .child = child, .fn = fn, .data = data };
	if (child->pidfd >= 0) {
		loop_watch_fd(loop, child->pidfd, POLLIN, pidfd_ready, child);
		return;
	}
	if (!loop->child_tick.fn)
		loop_timer_init(&loop->child_tick, child_tick, NULL);
	loop_timer_arm_in(loop, &loop->child_tick, LOOP_CHILD_TICK_MS);
}

void loop_unwatch_child(struct loop *loop, struct child *child)
{
	struct loop_child_watch *cw = find_child(loop, child);

	if (!cw)
		return;
	cw->removed = true;
	if (child->pidfd >= 0)
		loop_unwatch_fd(loop, child->pidfd);
}

void loop_on_idle(struct loop *loop, loop_idle_fn *fn, void *data)
{
	loop->idle_fn = fn;
	loop->idle_data = data;
}

void loop_stop(struct loop *loop)
{
	loop->stopped = true;
}

/* Drop what was removed during the round. */
static void compact(struct loop *loop)
{
	size_t n = 0;

	for (size_t i = 0; i < loop->nr_watches; i++)
		if (!loop->watches[i].removed)
			loop->watches[n++] = loop->watches[i];
	loop->nr_watches = n;
	n = 0;
	for (size_t i = 0; i < loop->nr_children; i++)
		if (!loop->children[i].removed)
			loop->children[n++] = loop->children[i];
	loop->nr_children = n;
}

/* The poll() timeout: until the earliest timer, bounded by limit_ms (-1: none). */
static int wait_ms(const struct loop *loop, uint64_t now, int limit_ms)
{
	int64_t wait = limit_ms;

	for (size_t i = 0; i < loop->nr_timers; i++) {
		uint64_t at = loop->timers[i]->at;
		int64_t d = at > now ? (int64_t)(at - now) : 0;
		if (wait < 0 || d < wait)
			wait = d;
	}
	return wait > INT_MAX ? INT_MAX : (int)wait;
}

/* Fire the timers due at now; one armed during this (even for now) waits for the next round. */
static void fire_timers(struct loop *loop, uint64_t now)
{
	size_t nr_due = 0;
	struct loop_timer **due;

	for (size_t i = 0; i < loop->nr_timers; i++)
		nr_due += loop->timers[i]->at <= now;
	if (!nr_due)
		return;
	due = xcalloc(nr_due, sizeof(*due));
	nr_due = 0;
	for (size_t i = 0; i < loop->nr_timers; i++)
		if (loop->timers[i]->at <= now)
			due[nr_due++] = loop->timers[i];
	for (size_t i = 0; i < nr_due; i++) {
		struct loop_timer *t = due[i];
		/* An earlier callback may have cancelled it, or moved it later. */
		if (!t->armed || t->at > now)
			continue;
		loop_timer_cancel(loop, t);
		t->fn(loop, t->data);
	}
	free(due);
}

int loop_run_once(struct loop *loop, int timeout_ms)
{
	size_t n;
	int r;

	if (loop->idle_fn)
		loop->idle_fn(loop, loop->idle_data);
	if (loop->stopped)
		return 0;
	n = loop->nr_watches;
	if (n > loop->alloc_pfds) {
		loop->alloc_pfds = n;
		loop->pfds = xrealloc(loop->pfds, n * sizeof(*loop->pfds));
	}
	for (size_t i = 0; i < n; i++) {
		const struct loop_watch *w = &loop->watches[i];
		/* A removed watch keeps its slot (fd -1: poll() skips it), so indexes match. */
		loop->pfds[i] =
			(struct pollfd){ .fd = w->removed ? -1 : w->fd, .events = w->events };
	}
	r = poll(loop->pfds, n, wait_ms(loop, monotonic_ms(), timeout_ms));
	if (r < 0 && errno != EINTR)
		return -errno;
	for (size_t i = 0; r > 0 && i < n; i++) {
		/* The array may move while callbacks add watches: index it afresh each time. */
		struct loop_watch *w = &loop->watches[i];
		if (!loop->pfds[i].revents || w->removed)
			continue;
		w->fn(loop, w->fd, loop->pfds[i].revents, w->data);
	}
	fire_timers(loop, monotonic_ms());
	compact(loop);
	return 0;
}

/* Something is left to wait for: a descriptor (the signals' aside), a timer (not a
 * background one), a child. */
static bool waiting(const struct loop *loop)
{
	for (size_t i = 0; i < loop->nr_watches; i++)
		if (!loop->watches[i].removed && loop->watches[i].fd != loop->signal_fd)
			return true;
	for (size_t i = 0; i < loop->nr_timers; i++)
		if (!loop->timers[i]->background)
			return true;
	return loop->nr_children > 0;
}

int loop_run_until(struct loop *loop, uint64_t until)
{
	int r = 0;

	loop->stopped = false;
	while (!loop->stopped && waiting(loop)) {
		uint64_t now = monotonic_ms();
		int limit = -1;
		if (until != UINT64_MAX) {
			if (now >= until)
				break;
			limit = until - now > INT_MAX ? INT_MAX : (int)(until - now);
		}
		if ((r = loop_run_once(loop, limit)) < 0)
			break;
	}
	return r;
}

int loop_run(struct loop *loop)
{
	return loop_run_until(loop, UINT64_MAX);
}

struct waiter {
	bool (*done)(const void *arg);
	const void *arg;
	uint64_t period_ms, until;
	bool ok;
	struct loop_timer tick;
};

static void wait_tick(struct loop *loop, void *data)
{
	struct waiter *w = data;

	/* Not armed again: loop_run() returns. */
	if (!(w->ok = w->done(w->arg)) && monotonic_ms() < w->until)
		loop_timer_arm_in(loop, &w->tick, w->period_ms);
}

bool loop_wait_until(bool (*done)(const void *arg), const void *arg, uint64_t period_ms,
		     uint64_t timeout_ms)
{
	struct waiter w = { .done = done,
			    .arg = arg,
			    .period_ms = period_ms,
			    .until = monotonic_ms() + timeout_ms };
	struct loop loop;

	loop_init(&loop);
	loop_timer_init(&w.tick, wait_tick, &w);
	loop_timer_arm(&loop, &w.tick, 0);
	loop_run(&loop);
	loop_release(&loop);
	return w.ok;
}
