/*
 * protocol.h - what the launcher ('sparkctl launch') and each node's agent
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
 *     P                 the launcher is there: every ping_ms of the spec
 *     end of input      the launcher is gone: end the job (short grace)
 *
 * An agent whose spec has ping_ms ends the job, as at the end of its input,
 * when nothing has come from the launcher for LAUNCH_SILENT_PINGS pings: a
 * node cut off from the launcher (its link down, the launcher's host gone)
 * never hears the end of its ssh session, and the launcher has given it up
 * by then (ssh's ServerAliveInterval, 15 s).
 *
 *   agent -> launcher
 *     W TEXT            a warning for the user
 *     F TEXT            the agent cannot go on; it ends what it started
 *     R ADDR PORT       ready; node 0 names the master address and port
 *     O UNIT BYTES      a line the unit wrote to stdout (no newline)
 *     E UNIT BYTES      the same for stderr
 *     X UNIT STATUS SIG MS ENDING AT
 *                       the unit ended after MS milliseconds with exit
 *                       status STATUS (128+N for signal N; SIG is 1 when
 *                       it was a signal, 0 for an exit); ENDING is 1 when
 *                       the agent had begun to end the job by then; AT is
 *                       the node's wall clock then, in microseconds since
 *                       the epoch (an agent before AT left it out)
 *     D                 every unit ended and no process of the job is left
 *     S JOB.STEP        under srun, task 0: the Slurm job and step it runs in
 *
 * A unit is a rank, numbered by its global rank; with --torchrun it is the
 * node's torchrun, numbered by the node's rank.  No rank starts before every
 * node is ready, so an unreachable node leaves nothing running anywhere.
 */
#ifndef SPARKCTL_LAUNCH_PROTOCOL_H
#define SPARKCTL_LAUNCH_PROTOCOL_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "proc/contain.h"
#include "lib/strvec.h"

/*
 * The variables that mark every process of a job: the job (the same on
 * every node; --kill-stale ends a job by it) and the node within it.  An
 * agent's teardown matches both, so it never touches another node's ranks
 * where nodes share a kernel (containers, or one host named twice).
 */
#define LAUNCH_JOB_VAR	    "SPARKCTL_JOB_ID"
#define LAUNCH_JOB_NODE_VAR "SPARKCTL_JOB_NODE"

/* How often the launcher pings its agents, and how many pings an agent may miss. */
#define LAUNCH_PING_MS	    5000
#define LAUNCH_SILENT_PINGS 6

/* A rank's output line longer than this is passed on in pieces. */
#define LAUNCH_LINE_MAX 16384

/* The job as one node's agent needs it. */
struct launch_spec {
	char *job_id;	    /* 16 hex digits (launch_job_id_new) */
	unsigned node_rank; /* this node's index */
	unsigned nnodes;    /* nodes in the job */
	unsigned nproc;	    /* ranks on this node */
	unsigned rank_base; /* the global rank of this node's first rank */
	/*
	 * Not sent: under srun each task is an agent of its own (srun_task.c),
	 * and its part of the job - the index in its marks (SPARKCTL_JOB_NODE)
	 * and cgroup names - is the task's SLURM_PROCID, not the node's rank:
	 * two tasks of one node must not end each other's rank as a leftover.
	 */
	bool srun_task;
	unsigned task;
	unsigned world_size;	     /* ranks in the job */
	bool torchrun;		     /* one torchrun per node instead of the ranks */
	bool use_env;		     /* add the node's 'sparkctl env' */
	bool all_local;		     /* every node is this host: master on loopback */
	bool kill_stale;	     /* end an earlier job that holds the requested port */
	char *master_addr;	     /* requested by the user, or NULL */
	unsigned port;		     /* requested by the user, or 0 to pick a free one */
	unsigned grace_ms;	     /* SIGTERM to SIGKILL */
	unsigned ping_ms;	     /* the launcher pings this often; 0: never (srun) */
	enum contain_mode contain;   /* how each node keeps the job's processes together */
	char *chdir;		     /* working directory of the ranks, or NULL */
	struct strvec argv;	     /* the command */
	struct strvec torchrun_opts; /* more options for torchrun, before the command */
	struct strvec env;	     /* KEY=VALUE from the caller (-x, --env), in order */
	/*
	 * Not sent: the agent's finding on its node, from launch_torch_probe_parse():
	 * torchrun's default --redirects/--tee fail there (launch_torch_needs_std_map()).
	 */
	bool torchrun_std_map;
};

void launch_spec_init(struct launch_spec *s);
/* A new job id, 16 random hex digits, into *ret (free it): 0 or -errno. */
int launch_job_id_new(char **ret);
/* The index of the part of the job one agent keeps: its task under srun, else its node. */
unsigned launch_spec_part(const struct launch_spec *s);
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
 * then the variables of the rank - torchrun's whole set: RANK, LOCAL_RANK,
 * WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK,
 * ROLE_NAME, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
 * TORCHELASTIC_RESTART_COUNT (0), TORCHELASTIC_MAX_RESTARTS (0),
 * TORCHELASTIC_RUN_ID (the job id), TORCHELASTIC_USE_AGENT_STORE (False: rank
 * 0 hosts the store), and NODE_RANK; OMP_NUM_THREADS=1 where the node runs
 * more than one rank and nobody set it, as torchrun does.  With --torchrun
 * only the node's (NODE_RANK, GROUP_RANK, MASTER_ADDR, MASTER_PORT): torchrun
 * sets the rest.  Then the job's marks.  PYTHONUNBUFFERED=1 is added unless
 * set, so Python's output is seen as it is written.
 */
void launch_unit_env(const struct launch_spec *s, char *const *base, const struct strvec *node_env,
		     unsigned local_rank, const char *master_addr, unsigned port,
		     struct strvec *out);

/*
 * The command of one unit: spec->argv, or with --torchrun
 *   torchrun --nnodes=N --node_rank=I --nproc_per_node=K --master_addr=A
 *            --master_port=P [TORCHRUN_OPTS...] [--no_python] CMD ARGS...
 * where --no_python is given unless CMD is a Python script (ends in .py),
 * and --redirects=9:1 --tee=9:1 come first among the options when
 * spec->torchrun_std_map (the caller's own options, later, still win).
 */
void launch_unit_argv(const struct launch_spec *s, const char *master_addr, unsigned port,
		      struct strvec *out);

/*
 * The torch that torchrun's own Python imports on a node, and that Python:
 * what the agent's one probe per node prints (LAUNCH_TORCH_PROBE_CODE, run
 * by the interpreter of torchrun's #! line): "TORCH_VERSION PY_MAJOR PY_MINOR".
 * Reading the installed package's metadata does not import torch, so the
 * probe is quick.
 */
#define LAUNCH_TORCH_PROBE_CODE                                                                    \
	"import sys, importlib.metadata as m; print(m.version('torch'), *sys.version_info[:2])"
struct torch_probe {
	unsigned torch_major, torch_minor;
	unsigned python_major, python_minor;
};
/* Parse the probe's output ("1.13.0a0+gitunknown 3 11\n"); -EINVAL if it is not that. */
int launch_torch_probe_parse(const char *text, struct torch_probe *ret);
/*
 * torch before 2.0 on Python 3.11 or later: there an IntFlag no longer
 * lists its zero member, so torchrun's Std.from_str() turns the default
 * --redirects and --tee of "0" into None and torchrun stops with
 * "'NoneType' object has no attribute 'get'".  A map naming local rank 9
 * parses (launch_unit_argv() then passes --redirects=9:1 --tee=9:1): ranks
 * 0-8 keep their output as it is; a tenth rank's stdout also goes through
 * torchrun's log file and tee.
 */
bool launch_torch_needs_std_map(const struct torch_probe *p);

/* "exit 3", "signal 9 (SIGKILL)"; "not started" for a negative status. */
void launch_describe_status(int status, bool signaled, struct strbuf *out);

#endif
