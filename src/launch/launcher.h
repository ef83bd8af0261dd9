/*
 * launcher.h - the launcher's side of 'sparkctl launch' (launcher.c): one
 * agent per node, started through ssh or directly for this host, their
 * output merged line by line, the job ended everywhere at the first
 * failure, and how it ended.
 */
#ifndef SPARKCTL_LAUNCHER_H
#define SPARKCTL_LAUNCHER_H

#include "sparkctl.h"
#include "exitcode.h"
#include "launch/protocol.h"
#include "launch/srun.h"
#include "lib/strbuf.h"
#include "remote/ssh.h"

struct launch_node {
	const char *host;
	bool local;	/* this host: the agent runs without ssh */
	unsigned nproc; /* ranks on it */
};

struct launch_options {
	const struct launch_spec *job; /* what every node shares; per-node fields are filled in */
	const struct launch_node *nodes;
	size_t nr_nodes;
	const char *local_sparkctl;  /* this program, for the agent on this host */
	const char *remote_sparkctl; /* --remote-sparkctl; NULL: remote_sparkctl_words()' lookup */
	const struct ssh_options *ssh;
	/*
	 * Under srun (NULL: ssh): one srun step runs every unit, and nodes
	 * holds one entry per task - a rank, or with --torchrun a node.
	 */
	const struct launch_srun *srun;
	unsigned stall_s;      /* --stall: advice after this long without output; 0: off */
	unsigned timeout_s;    /* --job-timeout: end the job after this long; 0: none */
	bool tag_output;       /* "[host:rank]" instead of "[rank]" */
	bool quiet;	       /* -q: errors only, no warnings or advice */
	const char *log_dir;   /* one file per unit here, or NULL */
	const char *hosts_arg; /* the hosts as given, for the 'sparkctl doctor' hint */
	int out_fd, err_fd;    /* the ranks' stdout and stderr go here, messages to err_fd */
};

enum launch_end {
	LAUNCH_END_OK,		/* every unit exited 0 */
	LAUNCH_END_UNIT_FAILED, /* a unit exited non-zero or by a signal */
	LAUNCH_END_INTERRUPTED, /* SIGINT, SIGTERM or SIGHUP to the launcher */
	LAUNCH_END_TIMEOUT,	/* --job-timeout */
	LAUNCH_END_NODE_FAILED, /* a node could not be reached, set up, or was lost */
};

struct launch_unit_result {
	unsigned id;	      /* rank (node rank with --torchrun) */
	size_t node;	      /* index into nodes */
	bool started;	      /* it was started (or tried) */
	bool ended;	      /* its end was reported */
	int status;	      /* shell form; -1 if it never ended */
	bool signaled;	      /* status is 128+signal */
	bool ended_by_launch; /* it was ended by the teardown of the job */
	uint64_t ms;	      /* how long it ran */
	uint64_t ended_at_us; /* its node's wall clock when it ended; 0: not said */
};

/* How a node contained its part of the job, as its agent said ('C'). */
struct launch_node_result {
	enum contain_mode containment; /* CONTAIN_AUTO: not told (the agent never set up) */
	char *note;		       /* why the preferred ways were passed over, or NULL */
};

struct launch_result {
	enum launch_end end;
	int exit_status;      /* what 'sparkctl launch' exits with */
	unsigned failed_unit; /* LAUNCH_END_UNIT_FAILED: the first to fail, by its node's clock */
	size_t failed_node;   /* LAUNCH_END_NODE_FAILED: the node */
	int signal;	      /* LAUNCH_END_INTERRUPTED: the signal */
	char master_addr[256];
	unsigned port;
	double seconds;
	struct launch_unit_result *units;
	size_t nr_units;
	struct launch_node_result *nodes; /* one per launch_options.nodes */
	size_t nr_nodes;
	char slurm_step[64]; /* under srun: "JOB.STEP", as its first task said; "" */
};

/*
 * The exit status of a launch that could not reach or set up a node, or lost
 * one while the job ran: the node is missing to the job, as for any command.
 */
#define LAUNCH_EXIT_NODE_FAILED SPARKCTL_EXIT_UNAVAILABLE
/* The exit status after --job-timeout. */
#define LAUNCH_EXIT_TIMEOUT	SPARKCTL_EXIT_TIMEOUT

/*
 * Run the job on every node and wait until no process of it is left
 * anywhere.  Prints the units' output and the launcher's messages to the
 * fds of o.  Returns 0 with the result (release it), or -errno with a
 * message in err when the launch could not be made at all - under srun
 * also when srun ran no task, with its reason in err: -ERANGE when the
 * allocation is smaller than the step, -EHOSTUNREACH when the step could
 * not be made (no controller, ...).
 */
int launch_run(const struct launch_options *o, struct launch_result *res, struct strbuf *err);
void launch_result_release(struct launch_result *res);

#endif
