/*
 * loop.h - the one event loop of sparkctl: descriptors, timers, signals
 * and the exits of child processes, in one poll().
 *
 * Everything in sparkctl that waits - the launcher and each node's agent,
 * the parallel runner of remote commands, 'agent hold', the rendezvous of
 * 'bench nccl' - registers what it waits for here and is called back; no
 * other file calls poll().  The loop is single-threaded and owns no
 * process-wide state but the signals given to loop_watch_signals(), whose
 * mask it restores in loop_release().
 *
 * Callbacks may watch and unwatch any descriptor, arm and cancel any
 * timer, and stop the loop; a descriptor unwatched during a round gets no
 * further callback in that round, even if it was ready.  Times are
 * CLOCK_MONOTONIC milliseconds (lib/clock.h: monotonic_ms()).
 *
 *	struct loop loop;
 *	loop_init(&loop);
 *	loop_watch_fd(&loop, fd, POLLIN, on_input, &state);
 *	loop_timer_init(&state.deadline, on_deadline, &state);
 *	loop_timer_arm(&loop, &state.deadline, monotonic_ms() + 5000);
 *	r = loop_run(&loop);	// until loop_stop() or nothing is left to wait for
 *	loop_release(&loop);
 */
#ifndef SPARKCTL_LOOP_H
#define SPARKCTL_LOOP_H

#include "sparkctl.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>

struct loop;
struct child;

/* fd is ready: revents as poll() reports them (POLLIN, POLLOUT, POLLHUP, POLLERR). */
typedef void loop_fd_fn(struct loop *loop, int fd, short revents, void *data);
typedef void loop_timer_fn(struct loop *loop, void *data);
typedef void loop_signal_fn(struct loop *loop, const struct signalfd_siginfo *si, void *data);
/* The child has exited; it is not reaped yet (child_finish() does that). */
typedef void loop_child_fn(struct loop *loop, struct child *child, void *data);
/* Called before each wait, after the callbacks of the round (flush output here). */
typedef void loop_idle_fn(struct loop *loop, void *data);

/*
 * A timer lives in its owner's structure: loop_timer_init() it once, then
 * arm and cancel it as often as needed.  It fires once per arming.
 */
struct loop_timer {
	uint64_t at;	   /* when it fires, monotonic ms */
	bool armed;	   /* in the loop's list */
	bool background;   /* set after init: fires, but keeps no loop_run() waiting (progress) */
	loop_timer_fn *fn; /* what it calls */
	void *data;
};

struct loop_watch {
	int fd;
	short events;
	bool removed; /* unwatched: dropped after the current round */
	loop_fd_fn *fn;
	void *data;
};

/* A child whose exit is awaited without a pidfd: looked at every LOOP_CHILD_TICK_MS. */
struct loop_child_watch {
	struct child *child;
	loop_child_fn *fn;
	void *data;
	bool removed;
};

#define LOOP_CHILD_TICK_MS 10

struct loop {
	struct loop_watch *watches; /* descriptors, in the order they were watched */
	size_t nr_watches;
	struct pollfd *pfds; /* one per watch, rebuilt each round */
	size_t alloc_pfds;
	struct loop_timer **timers; /* armed timers */
	size_t nr_timers, alloc_timers;
	struct loop_child_watch *children; /* children watched through their pidfd or the tick */
	size_t nr_children;
	struct loop_timer child_tick; /* looks at the children without a pidfd */
	int signal_fd;		      /* -1 until loop_watch_signals() */
	sigset_t old_mask;	      /* restored by loop_release() */
	loop_signal_fn *signal_fn;
	void *signal_data;
	loop_idle_fn *idle_fn;
	void *idle_data;
	bool stopped;
};

void loop_init(struct loop *loop);
/* Close the signal descriptor and restore the signal mask; the watched fds are the caller's. */
void loop_release(struct loop *loop);

/*
 * Call fn when fd is ready for events (POLLIN and/or POLLOUT; errors and
 * hang-ups are always reported).  One watch per descriptor: watching a
 * watched fd again replaces its events, fn and data.
 */
void loop_watch_fd(struct loop *loop, int fd, short events, loop_fd_fn *fn, void *data);
/* Change the events of a watched fd (0: keep it, but wait for nothing). */
void loop_set_events(struct loop *loop, int fd, short events);
/* Stop watching fd (call before closing it).  An fd not watched is ignored. */
void loop_unwatch_fd(struct loop *loop, int fd);

void loop_timer_init(struct loop_timer *t, loop_timer_fn *fn, void *data);
/* Fire t at `at` (monotonic ms; a time past fires in the next round); re-arming moves it. */
void loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t at);
/* Fire t after ms milliseconds from now. */
void loop_timer_arm_in(struct loop *loop, struct loop_timer *t, uint64_t ms);
void loop_timer_cancel(struct loop *loop, struct loop_timer *t);

/*
 * Block the signals of mask and deliver them through a signalfd to fn
 * (one call per signal received).  Once per loop.  -errno on failure.
 */
int loop_watch_signals(struct loop *loop, const sigset_t *mask, loop_signal_fn *fn, void *data);

/*
 * Call fn once when the started child exits (not reaped: fn calls
 * child_finish() when it is done with the child's output).  Through the
 * child's pidfd, else by looking every LOOP_CHILD_TICK_MS.  Where the
 * caller reaps children itself (SIGCHLD and waitpid(-1)), use that instead.
 */
void loop_watch_child(struct loop *loop, struct child *child, loop_child_fn *fn, void *data);
void loop_unwatch_child(struct loop *loop, struct child *child);

/* Call fn before every wait. */
void loop_on_idle(struct loop *loop, loop_idle_fn *fn, void *data);

/* Make loop_run() return after the current round. */
void loop_stop(struct loop *loop);

/*
 * Run rounds until loop_stop() or until nothing is watched and no timer
 * is armed.  Returns 0, or -errno when poll() itself fails.
 */
int loop_run(struct loop *loop);
/*
 * As loop_run(), and return at the monotonic time `until` (ms) at the
 * latest: a wait bounded by a deadline, without a timer of the caller's.
 * A time already past returns at once, before any round.
 */
int loop_run_until(struct loop *loop, uint64_t until);
/*
 * A blocking wait for a condition nothing announces (a process gone, a
 * port freed): done(arg) is looked at at once and every period_ms, in a
 * loop of its own, until it holds (true) or timeout_ms has passed (false).
 */
bool loop_wait_until(bool (*done)(const void *arg), const void *arg, uint64_t period_ms,
		     uint64_t timeout_ms);
/*
 * One round: wait for something to be ready - at most until the next
 * timer, and at most timeout_ms (-1: no bound) - then run the callbacks.
 * Returns 0, or -errno when poll() fails.
 */
int loop_run_once(struct loop *loop, int timeout_ms);

#endif
