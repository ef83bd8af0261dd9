/*
 * run.h - running commands to completion, several at a time.
 *
 * Each job's command runs in its own process group with stdin from
 * /dev/null (or the given data), stdout and stderr captured separately
 * (up to a bound).  A job that outlives the timeout gets SIGTERM on its
 * whole process group, then SIGKILL a second later; nothing it started is
 * left behind.  Used for the bounded fan-out of commands over SSH.
 */
#ifndef SPARKCTL_RUN_H
#define SPARKCTL_RUN_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

struct run_job {
	struct strvec argv; /* the command; argv.v[0] is looked up in PATH */
	const char *input;  /* written to its stdin, or NULL for /dev/null */
	size_t input_len;   /* bytes of input (it may hold NULs); 0: strlen(input) */
	/*
	 * stdin is a pipe kept open, after any input, until the job ends
	 * (run_jobs) or run_servers_end(): the caller's death closes it.
	 */
	bool hold_stdin;
	/* results */
	int status;	   /* exit status, 128+N when killed by signal N, -1 if never run */
	int spawn_error;   /* -errno when the command could not be started */
	bool timed_out;	   /* killed after the timeout */
	bool truncated;	   /* output beyond max_output was dropped */
	struct strbuf out; /* its stdout */
	struct strbuf err; /* its stderr */
	double seconds;	   /* wall time */
	double started_at; /* CLOCK_REALTIME seconds when it was started (0 if never) */
	double ended_at;   /* CLOCK_REALTIME seconds when its exit was seen */
	pid_t pid;	   /* its process id and process group id; 0 if never started */
};

void run_job_init(struct run_job *job);
void run_job_release(struct run_job *job);

/*
 * Run the n jobs, at most parallel at once (0 means all), each limited to
 * timeout_ms (0: no limit), keeping at most max_output bytes of each
 * stream.  Returns 0 when every job was run (whatever its status), or a
 * negative errno for a failure of the runner itself.
 *
 * max_output 0 keeps everything.  A job ends when its command exits:
 * what its pipes hold then is kept, and a background process that still
 * holds them is not waited for (nor killed, unless the job timed out).
 * After a timeout, run_jobs() waits (up to 5 s) until no process of the
 * job's group is left, not even one waiting for init to reap it.  pid is
 * kept for inspection only: once run_jobs() returns it may be reused.
 * The results of every job are reset first; a job that could not be
 * started has status -1 and spawn_error set.  Where the caller ignores
 * SIGCHLD the kernel reaps the commands itself, and status stays -1.
 */
int run_jobs(struct run_job *jobs, size_t n, unsigned parallel, unsigned timeout_ms,
	     size_t max_output);

/*
 * Servers: commands left running while the caller does other work, for
 * the one-shot benchmark servers that 'sparkctl bench link' starts on a
 * node through 'sparkctl agent hold' over SSH.  Each runs in its own
 * process group as a job of run_jobs() does, but its stdin is a pipe held
 * open until run_servers_end(): that end of file is what tells a hold to
 * end its command.  Output is kept whole.
 */
struct run_servers_state;
struct run_servers {
	struct run_job *jobs;
	size_t n;
	struct run_servers_state *state;
};

/* Start the n jobs; one that cannot start gets spawn_error (status -1).  Returns 0. */
int run_servers_start(struct run_servers *rs, struct run_job *jobs, size_t n);
/*
 * Read their output until each one printed line (a whole line of its
 * stdout) or exited, or timeout_ms passed.  Returns how many printed it.
 */
size_t run_servers_wait_line(struct run_servers *rs, const char *line, unsigned timeout_ms);
/*
 * End them, reading their output all along: wait up to grace_ms for each
 * to exit by itself; close the stdin of the others and wait up to stop_ms
 * more; then SIGTERM to the group of each one left (timed_out is set),
 * and SIGKILL a second later.  Every one is reaped when this returns.
 */
void run_servers_end(struct run_servers *rs, unsigned grace_ms, unsigned stop_ms);
/* Whether job's stdout has line as a whole line. */
bool run_job_printed_line(const struct run_job *job, const char *line);

#endif
