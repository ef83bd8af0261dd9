/*
 * srun_task.c - both ends of 'sparkctl launch' under srun (srun.h): the
 * command the launcher runs, how it reads srun's labelled lines and
 * refusals, and where a task finds its place in the job.
 */
#include "sparkctl.h"

#include "launch/srun.h"
#include "lib/parse.h"

void srun_step_argv(const struct launch_srun *s, bool torchrun, struct strvec *out)
{
	unsigned per_node = torchrun ? 1 : s->nproc;

	strvec_push(out, s->program);
	strvec_pushf(out, "--nodes=%u", s->nnodes);
	strvec_pushf(out, "--ntasks=%u", s->nnodes * per_node);
	strvec_pushf(out, "--ntasks-per-node=%u", per_node);
	/* Ranks node by node, as over ssh: task R is on node R / T. */
	strvec_push(out, "--distribution=block");
	/*
	 * An agent exits non-zero only when it could not set up or was lost:
	 * then Slurm ends the rest.  A rank's failure is reported by its agent
	 * (exit 0) and ended by the launcher with the grace, as over ssh.
	 */
	strvec_push(out, "--kill-on-bad-exit=1");
	strvec_push(out, "--label");
	/* The launcher's lines reach every task; its end closes their input. */
	strvec_push(out, "--input=all");
	strvec_push(out, "--export=ALL");
	strvec_push(out, "--mpi=none");
	if (s->nodelist)
		strvec_pushf(out, "--nodelist=%s", s->nodelist);
	strvec_pushl(out, "--", s->sparkctl, "agent", "srun-task", NULL);
}

bool srun_label_parse(const char *line, size_t len, unsigned *task, size_t *skip)
{
	size_t i = 0, digits;
	uint64_t id;

	while (i < len && line[i] == ' ')
		i++;
	digits = i;
	while (i < len && line[i] >= '0' && line[i] <= '9')
		i++;
	if (i == digits || i >= len || line[i] != ':' ||
	    parse_u64_n(line + digits, i - digits, &id) < 0 || id > UINT_MAX)
		return false;
	i++;
	/* srun writes one space after the colon; an empty line has it too. */
	if (i < len && line[i] == ' ')
		i++;
	*task = (unsigned)id;
	*skip = i;
	return true;
}

int srun_refusal_kind(const char *last_line)
{
	static const char *const too_small[] = {
		"More processors requested than permitted",
		"Requested node configuration is not available",
		"Node count specification invalid",
		"not in the allocation",
		"Requested nodes are busy",
	};

	for (size_t i = 0; last_line && i < ARRAY_SIZE(too_small); i++)
		if (strstr(last_line, too_small[i]))
			return -ERANGE;
	return -EHOSTUNREACH;
}

/* A variable srun gives every task, as a number. */
static int slurm_var(const char *name, unsigned *ret, struct strbuf *err)
{
	const char *v = getenv(name);
	uint32_t n;

	if (!v || parse_u32(v, &n) < 0) {
		strbuf_addf(err, "not a task of an srun step: %s is %s", name, v ? v : "not set");
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

int srun_task_place(struct launch_spec *s, unsigned *local_rank, char step[64], struct strbuf *err)
{
	unsigned procid, localid, nodeid, ntasks, nnodes;
	const char *job = getenv("SLURM_JOB_ID"), *step_id = getenv("SLURM_STEP_ID");

	if (slurm_var("SLURM_PROCID", &procid, err) < 0 ||
	    slurm_var("SLURM_LOCALID", &localid, err) < 0 ||
	    slurm_var("SLURM_NODEID", &nodeid, err) < 0 ||
	    slurm_var("SLURM_STEP_NUM_TASKS", &ntasks, err) < 0 ||
	    slurm_var("SLURM_STEP_NUM_NODES", &nnodes, err) < 0)
		return -EINVAL;
	/* The step must be the one asked for: else ranks would be counted twice or lost. */
	if (nnodes != s->nnodes || ntasks != (s->torchrun ? s->nnodes : s->world_size) ||
	    nodeid >= nnodes || procid >= ntasks || localid >= (s->torchrun ? 1 : s->nproc) ||
	    (!s->torchrun && procid != nodeid * s->nproc + localid)) {
		strbuf_addf(err,
			    "the srun step is not the job's: task %u (local %u) of %u on node %u "
			    "of %u, for %u nodes of %u ranks",
			    procid, localid, ntasks, nodeid, nnodes, s->nnodes, s->nproc);
		return -EINVAL;
	}
	s->srun_task = true;
	s->task = procid;
	s->node_rank = nodeid;
	s->rank_base = nodeid * s->nproc;
	s->all_local = false;
	*local_rank = s->torchrun ? 0 : localid;
	snprintf(step, 64, "%s.%s", job ? job : "?", step_id ? step_id : "?");
	return 0;
}
