/*
 * launch.h - what the launcher ('sparkctl launch') and each node's agent
 * ('sparkctl agent launch') say to each other, and the pure parts of a
 * launch: the job spec, the environment of a rank, the torchrun command.
 *
 * The launcher starts one agent per node - through ssh, or directly for
 * localhost - and talks to it over the agent's stdin and stdout in lines:
 *
 *   launcher -> agent
 *     {spec}            the first line: the job spec as compact JSON
 *     G ADDR PORT       go: start the ranks with this master address
 *     T                 end the job: SIGTERM now, SIGKILL after the grace
 *     K                 kill the job now
 *     end of input      the launcher is gone: end the job (short grace)
 *
 *   agent -> launcher
 *     W TEXT            a warning for the user
 *     F TEXT            the agent cannot go on; it ends what it started
 *     R ADDR PORT       ready; node 0 names the master address and port
 *     O UNIT BYTES      a line the unit wrote to stdout (no newline)
 *     E UNIT BYTES      the same for stderr
 *     X UNIT STATUS SIG MS ENDING
 *                       the unit ended after MS milliseconds with exit
 *                       status STATUS (128+N for signal N; SIG is 1 when
 *                       it was a signal, 0 for an exit); ENDING is 1 when
 *                       the agent had begun to end the job by then
 *     D                 every unit ended and no process of the job is left
 *
 * A unit is a rank, numbered by its global rank; with --torchrun it is the
 * node's torchrun, numbered by the node's rank.  No rank starts before every
 * node is ready, so an unreachable node leaves nothing running anywhere.
 */
#ifndef SPARKCTL_LAUNCH_H
#define SPARKCTL_LAUNCH_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"
#include "remote/ssh.h"

/*
 * The variables that mark every process of a job: the job (the same on
 * every node; --kill-stale ends a job by it) and the node within it.  An
 * agent's teardown matches both, so it never touches another node's ranks
 * where nodes share a kernel (containers, or one host named twice).
 */
#define LAUNCH_JOB_VAR	    "SPARKCTL_JOB_ID"
#define LAUNCH_JOB_NODE_VAR "SPARKCTL_JOB_NODE"

/* A rank's output line longer than this is passed on in pieces. */
#define LAUNCH_LINE_MAX 16384

/* The job as one node's agent needs it. */
struct launch_spec {
	char *job_id;		     /* 16 hex digits */
	unsigned node_rank;	     /* this node's index */
	unsigned nnodes;	     /* nodes in the job */
	unsigned nproc;		     /* ranks on this node */
	unsigned rank_base;	     /* the global rank of this node's first rank */
	unsigned world_size;	     /* ranks in the job */
	bool torchrun;		     /* one torchrun per node instead of the ranks */
	bool use_env;		     /* add the node's 'sparkctl env' */
	bool all_local;		     /* every node is this host: master on loopback */
	bool kill_stale;	     /* end an earlier job that holds the requested port */
	char *master_addr;	     /* requested by the user, or NULL */
	unsigned port;		     /* requested by the user, or 0 to pick a free one */
	unsigned grace_ms;	     /* SIGTERM to SIGKILL */
	char *chdir;		     /* working directory of the ranks, or NULL */
	struct strvec argv;	     /* the command */
	struct strvec torchrun_opts; /* more options for torchrun, before the command */
	struct strvec env;	     /* KEY=VALUE from the caller (-x, --env), in order */
};

void launch_spec_init(struct launch_spec *s);
void launch_spec_release(struct launch_spec *s);

/* The spec as one line of compact JSON (no newline). */
void launch_spec_to_json(const struct launch_spec *s, struct strbuf *out);
/* Parse it back; -EINVAL with a message in err for anything malformed. */
int launch_spec_from_json(const char *text, size_t len, struct launch_spec *s, struct strbuf *err);

/*
 * The variables sparkctl launch sets itself; --env and -x may not set them
 * (the launch would contradict itself).  NULL-terminated.
 */
extern const char *const launch_reserved_vars[];
bool launch_var_reserved(const char *key);

/* Set KEY=VALUE in env (entries "K=V"), replacing an earlier KEY in place. */
void env_list_set(struct strvec *env, const char *key, const char *value);
/* Set a "KEY=VALUE" entry (must hold '='). */
void env_list_put(struct strvec *env, const char *entry);

/*
 * The environment of one unit: base (the agent's own environment), then
 * node_env (the node's 'sparkctl env', "K=V"), then the caller's spec->env,
 * then the variables of the rank - RANK, LOCAL_RANK, WORLD_SIZE,
 * LOCAL_WORLD_SIZE, NODE_RANK, GROUP_RANK, MASTER_ADDR, MASTER_PORT (with
 * --torchrun only the node's: torchrun sets the rest) - and the job's marks.
 * PYTHONUNBUFFERED=1 is added unless set, so Python's output is seen as it
 * is written.
 */
void launch_unit_env(const struct launch_spec *s, char *const *base, const struct strvec *node_env,
		     unsigned local_rank, const char *master_addr, unsigned port,
		     struct strvec *out);

/*
 * The command of one unit: spec->argv, or with --torchrun
 *   torchrun --nnodes=N --node_rank=I --nproc_per_node=K --master_addr=A
 *            --master_port=P [TORCHRUN_OPTS...] [--no_python] CMD ARGS...
 * where --no_python is given unless CMD is a Python script (ends in .py).
 */
void launch_unit_argv(const struct launch_spec *s, const char *master_addr, unsigned port,
		      struct strvec *out);

/*
 * Exit status in the shell's form from a wait() status: N, or 128+N for
 * signal N (*signaled tells the two apart: a program may exit 130 itself).
 */
int launch_wait_status(int wstatus, bool *signaled);

/* "exit 3", "signal 9 (SIGKILL)"; "not started" for a negative status. */
void launch_describe_status(int status, bool signaled, struct strbuf *out);

/*
 * The agent (agent.c): read the spec from in_fd, run this node's part of
 * the job, speak the protocol on out_fd.  Returns its exit status: 0 when
 * the job ended here (whatever the ranks' statuses), 1 when it could not
 * be set up.
 */
int launch_agent_main(int in_fd, int out_fd);

/*
 * End what is left of a node's part of a job whose agent died without
 * ending it ('sparkctl agent reap JOB NODE GRACE_MS', run by the launcher):
 * every process with both marks, SIGTERM then SIGKILL after grace_ms.
 * What a rank started that cleared its environment cannot be found.
 */
int launch_agent_reap(const char *job_id, unsigned node_rank, unsigned grace_ms);

/* ---- the launcher (launcher.c) ---- */

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
	const char *remote_sparkctl; /* sparkctl on the other nodes */
	const struct ssh_options *ssh;
	unsigned stall_s;      /* --stall: advice after this long without output; 0: off */
	unsigned timeout_s;    /* --timeout: end the job after this long; 0: none */
	bool tag_output;       /* "[host:rank]" instead of "[rank]" */
	const char *log_dir;   /* one file per unit here, or NULL */
	const char *hosts_arg; /* the hosts as given, for the 'sparkctl doctor' hint */
	int out_fd, err_fd;    /* the ranks' stdout and stderr go here, messages to err_fd */
};

enum launch_end {
	LAUNCH_END_OK,		/* every unit exited 0 */
	LAUNCH_END_UNIT_FAILED, /* a unit exited non-zero or by a signal */
	LAUNCH_END_INTERRUPTED, /* SIGINT, SIGTERM or SIGHUP to the launcher */
	LAUNCH_END_TIMEOUT,	/* --timeout */
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
};

struct launch_result {
	enum launch_end end;
	int exit_status;      /* what 'sparkctl launch' exits with */
	unsigned failed_unit; /* LAUNCH_END_UNIT_FAILED: the first unit that failed */
	size_t failed_node;   /* LAUNCH_END_NODE_FAILED: the node */
	int signal;	      /* LAUNCH_END_INTERRUPTED: the signal */
	char master_addr[256];
	unsigned port;
	double seconds;
	struct launch_unit_result *units;
	size_t nr_units;
};

/* The exit status of a launch that could not start or lost a node. */
#define LAUNCH_EXIT_NODE_FAILED 255
/* The exit status after --timeout, as timeout(1) has it. */
#define LAUNCH_EXIT_TIMEOUT	124

/*
 * Run the job on every node and wait until no process of it is left
 * anywhere.  Prints the units' output and the launcher's messages to the
 * fds of o.  Returns 0 with the result (release it), or -errno with a
 * message in err when the launch could not be made at all.
 */
int launch_run(const struct launch_options *o, struct launch_result *res, struct strbuf *err);
void launch_result_release(struct launch_result *res);

#endif
