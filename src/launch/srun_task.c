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

void srun_split_long_lines(struct strbuf *buf)
{
	struct strbuf out = STRBUF_INIT;
	size_t start = 0;
	char *nl;

	if (buf->len <= SRUN_LINE_MAX)
		return;
	while ((nl = memchr(buf->buf + start, '\n', buf->len - start))) {
		size_t len = (size_t)(nl - buf->buf) - start;
		const char *p = buf->buf + start;
		while (len > SRUN_LINE_MAX) {
			strbuf_addch(&out, '+');
			strbuf_add(&out, p, SRUN_LINE_MAX - 1);
			strbuf_addch(&out, '\n');
			p += SRUN_LINE_MAX - 1;
			len -= SRUN_LINE_MAX - 1;
		}
		strbuf_add(&out, p, len);
		strbuf_addch(&out, '\n');
		start = (size_t)(nl - buf->buf) + 1;
	}
	strbuf_add(&out, buf->buf + start, buf->len - start);
	strbuf_reset(buf);
	strbuf_add(buf, out.buf, out.len);
	strbuf_release(&out);
}

bool srun_join_line(struct strbuf *pending, const char *line, size_t len, struct strbuf *whole)
{
	if (len && line[0] == '+') {
		/* A bound: a task that never ends its line must not fill this process. */
		if (pending->len + len <= (size_t)LAUNCH_LINE_MAX * 4)
			strbuf_add(pending, line + 1, len - 1);
		return false;
	}
	strbuf_reset(whole);
	strbuf_add(whole, pending->buf, pending->len);
	strbuf_add(whole, line, len);
	strbuf_reset(pending);
	return true;
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
