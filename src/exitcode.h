/*
 * exitcode.h - the exit statuses of sparkctl, defined once.
 *
 * docs/exit-codes.md documents them for users; keep the two in step
 * (tests/cli/t0001-basics.sh checks that every code here is documented).
 */
#ifndef SPARKCTL_EXITCODE_H
#define SPARKCTL_EXITCODE_H

enum sparkctl_exit {
	SPARKCTL_EXIT_OK = 0,	       /* the command did what was asked */
	SPARKCTL_EXIT_ERROR = 1,       /* it failed: I/O error, bad input data, ... */
	SPARKCTL_EXIT_USAGE = 2,       /* bad command line: unknown command or option */
	SPARKCTL_EXIT_UNAVAILABLE = 3, /* a required library, device or tool is missing */
	SPARKCTL_EXIT_PROBLEMS = 4,    /* it ran and found problems (checks, wrong results) */
	SPARKCTL_EXIT_TIMEOUT = 5,     /* a deadline passed (hang watchdog, collective timeout) */
};

#endif
