/*
 * hold.h - run one command for a caller on another node, and end it,
 * with everything it started, when the caller is gone.
 *
 * For 'sparkctl agent hold', which 'sparkctl bench link' runs over SSH to
 * start a one-shot server (iperf3 -s -1, ib_write_bw) on the far node.
 * The command leads a session of its own, with stdin from /dev/null,
 * stdout and stderr shared with the agent, and only descriptors 0-2; it
 * gets SIGKILL if the agent dies.  The agent is a child subreaper, so the
 * processes of the command are those of its session and the agent's
 * descendants (one that calls setsid() still descends from the agent).
 *
 * With a ready port, "ready\n" is written to ready_fd once a process of
 * the command listens on that TCP port (IPv4 or IPv6, any address),
 * polled every 20 ms.  Then the hold waits for the command to exit or
 * for the caller to go: end of file or an error on in_fd (what comes
 * before is read and dropped), or SIGTERM, SIGINT or SIGHUP.  Ending the
 * command is SIGTERM to every process of it, then SIGKILL after 2 s; the
 * hold returns only when none is left (or when SIGKILL has not ended them
 * within 5 s more, which is reported).
 */
#ifndef SPARKCTL_HOLD_H
#define SPARKCTL_HOLD_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define HOLD_READY_TIMEOUT_MS 10000
/* The port is taken, the command exited before listening, or nothing listened in time. */
#define HOLD_EXIT_NOT_READY   3
/* The caller went away (or signalled the agent): the command was ended. */
#define HOLD_EXIT_ENDED	      143

struct hold_options {
	char **argv;		   /* the command, NULL-terminated; argv[0] is looked up in PATH */
	unsigned ready_port;	   /* 0: no readiness check */
	unsigned ready_timeout_ms; /* from the start of the command */
	int in_fd;		   /* the caller's channel: its end ends the command */
	int ready_fd;		   /* where "ready\n" goes */
};

/*
 * Run the command as described above; the calling process must not have
 * other children, and is meant to exit next: SIGCHLD, SIGTERM, SIGINT
 * and SIGHUP stay blocked and SIGPIPE ignored, so that neither a late
 * signal nor a caller gone from stdout or stderr changes the status it
 * exits with.  Returns that status: the command's (128+N when signal N
 * ended it), HOLD_EXIT_NOT_READY, HOLD_EXIT_ENDED, 127 when the command
 * is not found, 126 when it cannot run, 1 when the hold cannot be set
 * up.  err gets a one-line reason for all but the command's own status
 * and HOLD_EXIT_ENDED, and a note whenever something of the command
 * could not be ended.
 */
int hold_run(const struct hold_options *o, struct strbuf *err);

#endif
