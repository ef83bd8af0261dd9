/*
 * child.h - starting a child process and learning how it ended.
 *
 * The one place in sparkctl that creates processes (the idea of git's
 * run-command): fill a struct child with what to run and how, start it,
 * watch it (proc/loop.h: loop_watch_child(), or the caller's own SIGCHLD
 * handling), and finish it, which reaps it and keeps its exit status as
 * data.  Nothing here waits for output or kills on a timer: that is the
 * caller's policy, built on the loop.
 *
 *	struct child c;
 *	child_init(&c);
 *	strvec_pushl(&c.args, "ssh", "--", host, "true", NULL);
 *	c.out = CHILD_IO_PIPE;
 *	c.group = CHILD_OWN_GROUP;
 *	if ((r = child_start(&c)) < 0)	// -ENOENT: not found, -EACCES: cannot run, ...
 *		...;
 *	... read c.out_fd until it closes ...
 *	status = child_finish(&c);	// 0-255, 128+N for signal N
 *	child_release(&c);
 *
 * A child gets descriptors 0-2 only (every other one is closed at exec),
 * no blocked signals, and SIGPIPE at its default even where this process
 * ignores it, so that pipelines in its command behave as in a shell.
 */
#ifndef SPARKCTL_CHILD_H
#define SPARKCTL_CHILD_H

#include "sparkctl.h"
#include "lib/strvec.h"

/* What one of the child's standard descriptors is. */
enum child_io {
	CHILD_IO_INHERIT = 0, /* this process's own */
	CHILD_IO_NULL,	      /* /dev/null */
	CHILD_IO_PIPE,	      /* a pipe; our end (non-blocking, close-on-exec) is in *_fd */
	CHILD_IO_FD,	      /* the descriptor in *_fd (not closed by child_start()) */
};

/* Where the child stands among processes. */
enum child_group {
	CHILD_SAME_GROUP = 0, /* this process's group and session */
	CHILD_OWN_GROUP,      /* leads a new process group: child_signal() reaches its group */
	CHILD_OWN_SESSION,    /* leads a new session (no controlling terminal) and group */
};

struct child {
	/* what to run, set before child_start() */
	struct strvec args; /* args.v[0] is looked up in PATH unless it holds a '/' */
	struct strvec env;  /* "K=V" set on top of this process's environment */
	bool clean_env;	    /* start from an empty environment instead: env is all of it */
	const char *dir;    /* working directory, or NULL */
	enum child_io in, out, err;
	int in_fd, out_fd, err_fd; /* see enum child_io; -1 when unused or closed */
	enum child_group group;
	/* SIGKILL when this process dies, however it dies (PR_SET_PDEATHSIG). */
	bool die_with_parent;
	/* That signal instead of SIGKILL, or 0 (srun forwards SIGTERM to its step). */
	int death_signal;
	/*
	 * A cgroup v2 directory (opened O_RDONLY | O_DIRECTORY), or -1: the
	 * child is made in it, so nothing it starts is born outside.
	 */
	int cgroup_fd;
	/*
	 * A command that runs the program (e.g. systemd-run --scope --), or
	 * empty: args.v[0] is still looked up as without it, and the wrapper
	 * gets its full path and args.v[1...] after its own words.
	 */
	struct strvec wrap;

	/* set by child_start() */
	pid_t pid; /* 0 before the start; kept after the reap, for messages only */
	/*
	 * The file run: args.v[0] as found in PATH; set even when the start
	 * fails, NULL when it was not found (tells "not found" from an exec
	 * that failed, e.g. a script whose interpreter is missing: -ENOENT both).
	 */
	char *program;
	int pidfd; /* readable once the child exited; -1 where the kernel has no pidfd */
	/* set once it ended */
	bool exited; /* it exited (child_check_exit() or the caller's reap saw it) */
	bool reaped; /* its status was collected: the pid may belong to another process now */
	int wstatus; /* as waitpid() gives it */
};

void child_init(struct child *c);
/* Close our ends of its pipes and the pidfd, free args, env and program.  Does not wait. */
void child_release(struct child *c);

/*
 * Start the child.  Returns 0, or -errno with nothing started and nothing
 * left open: -ENOENT when args.v[0] is not found, -EACCES when it is not
 * an executable file (or the working directory cannot be entered: -ENOENT,
 * -ENOTDIR, -EACCES), -EMFILE when out of descriptors, -EINVAL for no args;
 * -ECHILD when it could not enter its cgroup (the cause is lost there).
 */
int child_start(struct child *c);

/*
 * True once the child has exited; it stays a zombie until child_finish(),
 * and child_status() tells its status already.
 */
bool child_check_exit(struct child *c);

/*
 * Reap the child, waiting for it if it still runs, and close its pidfd.
 * Returns its status in the shell's form: the exit status, or 128+N when
 * signal N ended it.  Its pipes are left to the caller.
 */
int child_finish(struct child *c);

/* The caller reaped the child itself (waitpid(-1) of a subreaper): record wstatus. */
void child_reaped(struct child *c, int wstatus);

/*
 * Status in the shell's form once it exited (child_check_exit(), the
 * loop's child watch) or was reaped, -1 before (or when the status was lost);
 * *signaled (may be NULL) tells 128+N for a signal from an exit with 128+N.
 */
int child_status(const struct child *c, bool *signaled);

/*
 * Send sig to the child's process group when it leads one, else to the
 * child alone.  Nothing is sent once it was reaped (its pid may be reused).
 * Returns 0, or -errno (-ESRCH: nothing left to signal).
 */
int child_signal(const struct child *c, int sig);

/* Close *fd when open and set it to -1 (Linux closes it even on EINTR: never retried). */
void child_close_fd(int *fd);

/*
 * Run the command to its end with the descriptors of this process, in
 * this process's group: the shell's status (0-255, 128+N), or -errno when
 * it could not be started (see child_start()), -ECHILD when its status was
 * lost (this process ignores SIGCHLD).
 */
int child_run_command(const char *const *argv);

/*
 * The file execve() would run for name, as execvp() finds it in path (NULL:
 * a default PATH): a new string, or NULL with *why -ENOENT (nowhere) or
 * -EACCES (found, not runnable).
 */
char *child_find_program(const char *name, const char *path, int *why);

#endif
