/*
 * srun.h - 'sparkctl launch' under Slurm: the ranks are the tasks of one
 * srun step, each task a small agent of its own ('sparkctl agent
 * srun-task', node_agent.c with srun_task.c's place in the job), which
 * speaks the same protocol (protocol.h) as a node's agent over ssh.
 *
 * srun carries it both ways: what the launcher writes to srun's stdin
 * reaches every task (--input=all), so the spec, the go and the end
 * requests are said once for all; each task's stdout comes back with its
 * task id in front (--label, "  R: "), so the launcher knows whose line it
 * is.  A rank's own output never reaches srun directly: it passes through
 * its agent as "O"/"E" lines, so no line a job prints can pass for an end
 * record, and no token is needed to tell them apart.
 */
#ifndef SPARKCTL_LAUNCH_SRUN_H
#define SPARKCTL_LAUNCH_SRUN_H

#include "sparkctl.h"
#include "launch/protocol.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/*
 * srun passes a task's output on in pieces of at most 1024 bytes, each with
 * its label and a newline of its own: a longer protocol line would come
 * back as several.  A task sends each line longer than SRUN_LINE_MAX bytes
 * as continuation lines "+PIECE" and then its last piece as a line; the
 * launcher joins them (srun_join_line()).
 */
#define SRUN_LINE_MAX 1000

/* Rewrite the complete lines in buf so that none is longer than SRUN_LINE_MAX. */
void srun_split_long_lines(struct strbuf *buf);
/*
 * One line of a task as srun gave it: a continuation piece is kept in
 * pending (false: nothing to act on yet); otherwise pending and the line
 * are the whole line, in *whole (true).
 */
bool srun_join_line(struct strbuf *pending, const char *line, size_t len, struct strbuf *whole);

/* The step the launcher asks srun for. */
struct launch_srun {
	const char *program;  /* srun, as found in PATH */
	unsigned nnodes;      /* --nodes */
	unsigned nproc;	      /* ranks per node (--ntasks-per-node, 1 with --torchrun) */
	const char *nodelist; /* --nodelist, or NULL for the whole allocation */
	const char *sparkctl; /* sparkctl on the nodes (the tasks' command) */
	const char *job_id;   /* SLURM_JOB_ID, for messages */
};

/*
 * srun's command line for the step:
 *   srun --nodes=K --ntasks=K*T --ntasks-per-node=T --distribution=block
 *        --kill-on-bad-exit=1 --label --input=all --export=ALL --mpi=none
 *        [--nodelist=HOSTS] -- SPARKCTL agent srun-task
 * T is 1 with torchrun (one torchrun per node starts the node's ranks).
 */
void srun_step_argv(const struct launch_srun *s, bool torchrun, struct strvec *out);

/*
 * A line srun labelled (--label): "  R: text".  True with the task R and
 * the offset of its text; false for srun's own lines.
 */
bool srun_label_parse(const char *line, size_t len, unsigned *task, size_t *skip);

/*
 * Why srun ran no task at all, from its last line: -ERANGE when the
 * allocation is smaller than the step asked for, -EHOSTUNREACH otherwise
 * (the controller cannot be reached, the step cannot be made).
 */
int srun_refusal_kind(const char *last_line);

/*
 * The task's place in the job, from the variables srun gives each task
 * (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_NUM_TASKS,
 * SLURM_STEP_NUM_NODES), checked against the spec every task got alike,
 * into s: node_rank, rank_base, and the task as its part of the job.
 * *local_rank is the rank's LOCAL_RANK (0 with torchrun).  "JOB.STEP"
 * into step.  -EINVAL with the reason in err.
 */
int srun_task_place(struct launch_spec *s, unsigned *local_rank, char step[64], struct strbuf *err);

#endif
