/*
 * sparkctl bench ddp - training scaling across nodes: a synthetic-data
 * DistributedDataParallel loop (share/ddp_bench.py, run by the nodes' own
 * PyTorch) through 'sparkctl launch', first on one node, then on more,
 * with the same batch per rank (weak scaling) or the same global batch
 * (--strong).  The arithmetic is
 * bench/ddp_model.h; here the command line, the runs and the report.
 */
#include "sparkctl.h"

#include <libgen.h>

#include "bench/ddp_model.h"
#include "cmd/cmd.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "nv/nvml.h"
#include "probe/meminfo.h"
#include "probe/procs.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "view/emit.h"
#include "view/progress.h"

#define DDP_CMD		      "bench ddp"
#define DDP_WORKER	      "ddp_bench.py"
#define DDP_MARKER	      "sparkctl-ddp {"
#define DDP_MAX_CONFIGS	      16
/* --gpus: as many as -N allows. */
#define DDP_MAX_GPUS	      64
#define DDP_PREDICT_MIN	      3
#define DDP_PREDICT_MAX	      10
/* Of MemAvailable, kept free: the page cache, the launcher, what torch allocates beside. */
#define DDP_MEMORY_MARGIN     0.25
/* Of a GPU's free memory, kept free: the CUDA context, NCCL's buffers, the allocator's slack. */
#define DDP_GPU_MEMORY_MARGIN 0.10
#define DDP_DEFAULT_PYTHON    "/usr/bin/python3"
#define DDP_SCHEMA_VERSION    1

static const char *const ddp_usage[] = {
	"sparkctl bench ddp [-H HOSTS] [--nodes 1,N] [--model mlp|transformer] [--params N] "
	"[--batch B] [--steps S] [options]",
	NULL,
};

static const char ddp_description[] =
	"Measure how data-parallel training scales across nodes, and where the\n"
	"efficiency goes.  A synthetic-data DistributedDataParallel loop (shipped with\n"
	"sparkctl, run by the nodes' PyTorch: NCCL on GPUs, gloo on CPUs) runs through\n"
	"'sparkctl launch' on the first node of -H, then on the first N nodes for each N\n"
	"of --nodes, with the same batch per rank (weak scaling), or with --strong the\n"
	"same global batch (--batch) split over the ranks.  Each step is timed, and the\n"
	"gradient all-reduce inside it through a DDP communication hook around the real\n"
	"buckets; the same steps without the all-reduce (no_sync) give the compute\n"
	"time.  Reported per run: p50 and p95 step time, samples/s, speedup S_N/S_1 and\n"
	"efficiency S_N/(N x S_1), comm and compute per step, the all-reduce's bus\n"
	"bandwidth, and the lost efficiency split into comm and the rest.  Where the\n"
	"runs used NCCL, 'sparkctl bench nccl' all_reduce at the mean bucket size runs\n"
	"on each run's hosts and ranks, and its busbw is set beside the buckets'\n"
	"(--no-nccl-compare skips it).  From the 1 -> N measurement it predicts 3 to 10\n"
	"nodes on a switch and 3 on a ring of Sparks (each link at half the port):\n"
	"compute as measured plus a ring all-reduce of the gradients at the plan's bus\n"
	"bandwidth, less what the N-node run hid of it behind compute (overlap as\n"
	"measured).\n"
	"\n"
	"Python is $SPARKCTL_PYTHON, else /usr/bin/python3, on every node; the worker is\n"
	"found in $SPARKCTL_DATA_DIR, else in share/sparkctl beside the binary's\n"
	"prefix, and is sent to the nodes on the command line.  A --params or --batch\n"
	"that would not fit is refused: on GPUs with their own memory, a rank against\n"
	"its GPU's free memory (less a tenth) and the model each rank builds on the\n"
	"host against MemAvailable; on unified memory (GB10) or without a GPU, the\n"
	"node's ranks against MemAvailable (less a quarter).";

struct ddp_args {
	const char *hosts, *hostfile, *cluster, *nodes, *model, *params, *dtype, *output;
	unsigned batch, steps, warmup, bucket_mb, nproc, timeout;
	const char *gpus; /* --gpus: counts of the first host's GPUs, as nodes */
	bool json, quiet, strong, no_nccl_compare;
};

/* One configuration: what was asked, what came back. */
struct ddp_run {
	unsigned nodes;	     /* with --gpus: GPUs, each standing for a node */
	unsigned nproc;	     /* ranks per node of its launch */
	unsigned ranks;	     /* in all */
	struct strbuf hosts; /* -H of its launch */
	unsigned batch;	     /* per rank */
	struct ddp_measure m;
	struct ddp_figures f;
	unsigned buckets;
	char *backend, *device, *torch_version;
	int64_t params;
	double nccl_busbw; /* bench nccl's in-place busbw at the bucket size; < 0: none */
};

/* bench nccl beside the buckets: what was asked, and why not, where it was not. */
struct ddp_nccl_compare {
	uint64_t bytes;
	const char *dtype; /* bench nccl's name of the run's dtype */
	bool measured;	   /* on every run of 2 ranks or more */
	struct strbuf reason;
};

struct ddp_plan {
	bool gpus_as_nodes; /* --gpus: run N is N GPUs of the first host */
	enum ddp_model_kind kind;
	enum ddp_scaling scaling;
	struct ddp_shape shape;
	unsigned layers, elem_bytes;
	struct ddp_run runs[DDP_MAX_CONFIGS];
	size_t nr_runs;
	const char *python;
	struct strbuf script;
	struct ddp_nccl_compare nccl;
};

/* "25M", "1.5G", "300000": a count of parameters (k, M, G, T: powers of 1000). */
static int parse_count(const char *s, int64_t *ret)
{
	static const char units[] = "kMGT";
	double v, scale = 1;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		const char *u = strchr(units, *end == 'K' ? 'k' : *end);
		if (!u || end[1])
			return -EINVAL;
		for (const char *p = units; p <= u; p++)
			scale *= 1000;
	}
	v *= scale;
	if (!(v >= 1) || v > 1e15)
		return -EINVAL;
	*ret = (int64_t)v;
	return 0;
}

/* "1,2,4": increasing node counts, 1 first (the baseline), at most nr_hosts. */
static int parse_nodes(const char *s, size_t nr_hosts, struct ddp_plan *p)
{
	const char *q = s, *opt = p->gpus_as_nodes ? "--gpus" : "--nodes";
	const char *unit = p->gpus_as_nodes ? "GPU" : "node";

	p->nr_runs = 0;
	while (*q) {
		uint32_t n;
		size_t len = strcspn(q, ",");
		char word[16];
		if (!len || len >= sizeof(word) || p->nr_runs == DDP_MAX_CONFIGS)
			return cmd_usage_error(DDP_CMD, "bad %s '%s': counts such as 1,2", opt, s);
		memcpy(word, q, len);
		word[len] = '\0';
		if (parse_u32(word, &n) < 0 || n < 1 ||
		    (p->nr_runs && n <= p->runs[p->nr_runs - 1].nodes))
			return cmd_usage_error(
				DDP_CMD, "bad %s '%s': increasing counts such as 1,2", opt, s);
		if (n > nr_hosts)
			return cmd_usage_error(DDP_CMD, "%s %s: %zu %s%s %s", opt, s, nr_hosts,
					       unit, nr_hosts == 1 ? "" : "s",
					       p->gpus_as_nodes ? "at most" : "given");
		p->runs[p->nr_runs++].nodes = n;
		q += len;
		if (*q == ',' && !*++q)
			return cmd_usage_error(DDP_CMD, "bad %s '%s'", opt, s);
	}
	if (!p->nr_runs || p->runs[0].nodes != 1)
		return cmd_usage_error(DDP_CMD, "%s %s: the first run is on 1 %s, the baseline",
				       opt, s, unit);
	return SPARKCTL_EXIT_OK;
}

/* The worker's text: $SPARKCTL_DATA_DIR, else PREFIX/share/sparkctl beside bin/sparkctl. */
static int read_worker(struct strbuf *script)
{
	struct strbuf path = STRBUF_INIT;
	const char *dir = getenv("SPARKCTL_DATA_DIR");
	int ret = SPARKCTL_EXIT_OK;

	if (dir && *dir) {
		strbuf_addf(&path, "%s/%s", dir, DDP_WORKER);
	} else {
		char *self = proc_self_path_or_name();
		char *bindir = dirname(self);
		strbuf_addf(&path, "%s/../share/sparkctl/%s", bindir, DDP_WORKER);
		free(self);
	}
	struct rootfs root;
	int r = rootfs_open(&root, "/");
	if (r == 0) {
		r = rootfs_read_file(&root, path.buf[0] == '/' ? path.buf + 1 : path.buf, 1 << 20,
				     script);
		rootfs_close(&root);
	}
	if (r < 0) {
		cmd_error(DDP_CMD, "no worker %s: %s (set SPARKCTL_DATA_DIR to its directory)",
			  path.buf, strerror(-r));
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
	strbuf_release(&path);
	return ret;
}

/* MemAvailable of this node (the nodes are taken to be alike); -errno. */
static int mem_available(int64_t *ret)
{
	struct rootfs root;
	struct meminfo mi;
	int r = rootfs_open(&root, rootfs_root_path(NULL));

	if (r < 0)
		return r;
	const struct host_reader rd = { .root = &root };
	r = meminfo_read(&rd, &mi);
	rootfs_close(&root);
	if (r <= 0 || mi.mem_available == INV_UNKNOWN)
		return -ENODATA;
	*ret = mi.mem_available;
	return 0;
}

static int check_args(const struct ddp_args *a, struct ddp_plan *p)
{
	int64_t params;

	if (streq(a->model, "mlp")) {
		p->kind = DDP_MODEL_MLP;
		p->layers = DDP_MLP_LAYERS;
	} else if (streq(a->model, "transformer")) {
		p->kind = DDP_MODEL_TRANSFORMER;
		p->layers = DDP_TF_LAYERS;
	} else {
		return cmd_usage_error(DDP_CMD, "bad --model '%s': mlp or transformer", a->model);
	}
	if (streq(a->dtype, "fp32"))
		p->elem_bytes = 4;
	else if (streq(a->dtype, "bf16"))
		p->elem_bytes = 2;
	else
		return cmd_usage_error(DDP_CMD, "bad --dtype '%s': bf16 or fp32", a->dtype);
	if (parse_count(a->params, &params) < 0)
		return cmd_usage_error(DDP_CMD, "bad --params '%s': a count such as 25M",
				       a->params);
	if (ddp_shape(p->kind, params, &p->shape) < 0)
		return cmd_usage_error(DDP_CMD, "--params %s: too few for a %s", a->params,
				       a->model);
	if (a->batch < 1 || a->batch > 1000000)
		return cmd_usage_error(DDP_CMD, "--batch takes 1 to 1000000");
	if (a->steps < 1 || a->steps > 100000)
		return cmd_usage_error(DDP_CMD, "--steps takes 1 to 100000");
	if (a->warmup > 10000)
		return cmd_usage_error(DDP_CMD, "--warmup takes 0 to 10000");
	if (a->bucket_mb < 1 || a->bucket_mb > 4096)
		return cmd_usage_error(DDP_CMD, "--bucket-mb takes 1 to 4096");
	if (a->nproc < 1 || a->nproc > 64)
		return cmd_usage_error(DDP_CMD, "-N takes 1 to 64 ranks per node");
	if (a->timeout < 1 || a->timeout > 86400)
		return cmd_usage_error(DDP_CMD, "--job-timeout takes 1 to 86400 seconds");
	if (a->json && a->output)
		return cmd_usage_error(DDP_CMD, "--json prints the JSON, -o writes it to a file: "
						"choose one");
	p->scaling = a->strong ? DDP_SCALING_STRONG : DDP_SCALING_WEAK;
	p->python = getenv("SPARKCTL_PYTHON");
	if (!p->python || !*p->python)
		p->python = DDP_DEFAULT_PYTHON;
	return SPARKCTL_EXIT_OK;
}

/* Each run's batch per rank: --batch, or under --strong --batch over its ranks. */
static int assign_batches(const struct ddp_args *a, struct ddp_plan *p)
{
	for (size_t i = 0; i < p->nr_runs; i++) {
		struct ddp_run *r = &p->runs[i];
		unsigned ranks = r->ranks;
		r->batch = a->batch;
		if (p->scaling == DDP_SCALING_STRONG &&
		    ddp_strong_batch(a->batch, ranks, &r->batch) < 0)
			return cmd_usage_error(
				DDP_CMD,
				"--strong --batch %u: the %u rank%s of the %u-%s run "
				"do not divide it",
				a->batch, ranks, ranks == 1 ? "" : "s", r->nodes,
				p->gpus_as_nodes ? "GPU" : "node");
	}
	return SPARKCTL_EXIT_OK;
}

/* The GPU of the first ranks with the least free memory, as NVML says. */
struct ddp_gpu_memory {
	unsigned count; /* GPUs of this node */
	bool unified;	/* one of them has no memory of its own (GB10) */
	bool sized;	/* one of them has: the fields below are its */
	unsigned index; /* the one with the least free memory */
	char name[NVML_NAME_SIZE];
	int64_t free_bytes, total_bytes;
};

static nvml_return gpu_memory_of(const struct nvml *nvml, nvml_device dev, int64_t *free_bytes,
				 int64_t *total_bytes)
{
	nvml_return r;

	/* v2 does not count the driver's reserve as free. */
	if (nvml->device_get_memory_info_v2) {
		struct nvml_memory_v2 m = { .version = NVML_MEMORY_V2 };
		r = nvml->device_get_memory_info_v2(dev, &m);
		if (r == NVML_SUCCESS) {
			*free_bytes = m.free > INT64_MAX ? INT64_MAX : (int64_t)m.free;
			*total_bytes = m.total > INT64_MAX ? INT64_MAX : (int64_t)m.total;
		}
		if (r == NVML_SUCCESS || r == NVML_ERROR_NOT_SUPPORTED)
			return r;
	}
	struct nvml_memory m;
	r = nvml->device_get_memory_info(dev, &m);
	if (r == NVML_SUCCESS) {
		*free_bytes = m.free > INT64_MAX ? INT64_MAX : (int64_t)m.free;
		*total_bytes = m.total > INT64_MAX ? INT64_MAX : (int64_t)m.total;
	}
	return r;
}

/*
 * NVML's view of the GPUs the first ranks run on (local rank i on GPU i):
 * -ENOENT without NVML or a GPU, -EIO where a GPU's memory cannot be read.
 */
static int gpu_memory(unsigned ranks, struct ddp_gpu_memory *ret)
{
	struct strbuf err = STRBUF_INIT;
	struct nvml nvml;
	int r = -ENOENT;

	memset(ret, 0, sizeof(*ret));
	if (nvml_open(&nvml, &err) < 0) {
		strbuf_release(&err);
		return -ENOENT;
	}
	if (nvml.device_get_count(&ret->count) != NVML_SUCCESS || !ret->count)
		goto out;
	r = 0;
	for (unsigned i = 0; i < ranks && i < ret->count; i++) {
		nvml_device dev;
		int64_t free_bytes = 0, total_bytes = 0;
		nvml_return nr;
		if (nvml.device_get_handle_by_index(i, &dev) != NVML_SUCCESS) {
			r = -EIO;
			break;
		}
		nr = gpu_memory_of(&nvml, dev, &free_bytes, &total_bytes);
		if (nr == NVML_ERROR_NOT_SUPPORTED) {
			ret->unified = true;
			continue;
		}
		if (nr != NVML_SUCCESS) {
			r = -EIO;
			break;
		}
		if (!ret->sized || free_bytes < ret->free_bytes) {
			ret->sized = true;
			ret->index = i;
			ret->free_bytes = free_bytes;
			ret->total_bytes = total_bytes;
			snprintf(ret->name, sizeof(ret->name), "GPU %u", i);
			if (nvml.device_get_name)
				nvml.device_get_name(dev, ret->name, sizeof(ret->name));
			ret->name[sizeof(ret->name) - 1] = '\0';
		}
	}
out:
	nvml_close(&nvml);
	strbuf_release(&err);
	return r;
}

/*
 * What this node cannot hold or run is not a misuse of the options: one
 * line, and exit 2 (as bench nccl's -e beyond free memory), with no
 * pointer to --help.
 */
static int ATTR_PRINTF(1, 2) refuse_on_node(const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	cmd_error(DDP_CMD, "%s", msg.buf);
	strbuf_release(&msg);
	return SPARKCTL_EXIT_USAGE;
}

/*
 * The ranks of one node against its memory: the largest batch per rank
 * is the first run's (the same on every run under weak scaling).  A GPU
 * with memory of its own holds one rank, and the host the model each rank
 * builds before moving it there; unified memory (a GB10) and the CPU share
 * MemAvailable among the node's ranks.
 */
static int check_memory(const struct ddp_args *a, const struct ddp_plan *p)
{
	unsigned batch = p->runs[0].batch;
	int64_t need =
		ddp_rank_bytes(p->shape.params, p->elem_bytes, p->shape.activation_elems, batch);
	/* The most ranks a run puts on one node: the last run's (--gpus), else -N. */
	unsigned nproc = p->runs[p->nr_runs - 1].nproc;
	struct ddp_gpu_memory gpu;
	int64_t avail;

	if (gpu_memory(nproc, &gpu) == 0) {
		if (nproc > gpu.count)
			return refuse_on_node("%s %u: this node has %u GPU%s, one per rank",
					      p->gpus_as_nodes ? "--gpus" : "-N", nproc, gpu.count,
					      gpu.count == 1 ? "" : "s");
		if (!gpu.unified && !ddp_fits(need, 1, gpu.free_bytes, DDP_GPU_MEMORY_MARGIN))
			return refuse_on_node(
				"--params %s --batch %u: a rank needs about %.1f GB, GPU %u (%s) "
				"has %.1f GB free of %.1f GB, less a tenth kept free: %.1f GB",
				a->params, a->batch, (double)need / 1e9, gpu.index, gpu.name,
				(double)gpu.free_bytes / 1e9, (double)gpu.total_bytes / 1e9,
				(double)gpu.free_bytes * (1 - DDP_GPU_MEMORY_MARGIN) / 1e9);
		/* Each rank builds its model on the host (in fp32) before moving it. */
		if (!gpu.unified && mem_available(&avail) == 0 &&
		    !ddp_fits(p->shape.params * 4, nproc, avail, DDP_MEMORY_MARGIN))
			return refuse_on_node(
				"--params %s: %u rank%s building the model on the host, %.1f GB "
				"each, would not fit in %.1f GB, three quarters of MemAvailable",
				a->params, nproc, nproc == 1 ? "" : "s",
				(double)p->shape.params * 4 / 1e9, (double)avail * 0.75 / 1e9);
		if (!gpu.unified)
			return SPARKCTL_EXIT_OK;
	}
	if (mem_available(&avail) == 0 && !ddp_fits(need, nproc, avail, DDP_MEMORY_MARGIN))
		return refuse_on_node("--params %s --batch %u: %u rank%s of about %.1f GB each "
				      "would not fit in %.1f GB, three quarters of MemAvailable",
				      a->params, a->batch, nproc, nproc == 1 ? "" : "s",
				      (double)need / 1e9, (double)avail * 0.75 / 1e9);
	return SPARKCTL_EXIT_OK;
}

/* 'sparkctl launch' of a run's hosts and ranks, up to its "--". */
static void launch_prefix(const struct ddp_args *a, const struct ddp_run *run, struct strvec *v)
{
	char *self = proc_self_path_or_name();

	strvec_push(v, self);
	free(self);
	strvec_push(v, "launch");
	strvec_pushf(v, "--hosts=%s", run->hosts.buf);
	strvec_pushf(v, "--nproc-per-node=%u", run->nproc);
	strvec_pushf(v, "--job-timeout=%u", a->timeout);
	strvec_push(v, "--quiet");
	strvec_push(v, "--");
}

static void launch_argv(const struct ddp_args *a, const struct ddp_plan *p,
			const struct ddp_run *run, struct strvec *v)
{
	launch_prefix(a, run, v);
	strvec_push(v, p->python);
	strvec_push(v, "-c");
	strvec_push(v, p->script.buf);
	strvec_pushf(v, "--model=%s", a->model);
	strvec_pushf(v, "--width=%u", p->shape.width);
	strvec_pushf(v, "--layers=%u", p->layers);
	strvec_pushf(v, "--seq=%u", DDP_TF_SEQ);
	strvec_pushf(v, "--batch=%u", run->batch);
	strvec_pushf(v, "--steps=%u", a->steps);
	strvec_pushf(v, "--warmup=%u", a->warmup);
	strvec_pushf(v, "--bucket-mb=%u", a->bucket_mb);
	strvec_pushf(v, "--dtype=%s", a->dtype);
	strvec_pushf(v, "--timeout=%u", a->timeout);
}

/* The p50 of a JSON array of numbers into *p50 (and p95); -EINVAL if not one. */
static int array_percentiles(const json_t *arr, size_t want, double *p50, double *p95)
{
	size_t n = json_array_size(arr), i;
	double *v;
	json_t *x;
	int r = -EINVAL;

	if (!json_is_array(arr) || n != want || n == 0)
		return -EINVAL;
	v = xcalloc(n, sizeof(*v));
	json_array_foreach(arr, i, x)
	{
		if (!json_is_number(x) || json_number_value(x) < 0)
			goto out;
		v[i] = json_number_value(x);
	}
	r = ddp_percentile(v, n, 50, p50);
	if (r == 0 && p95)
		r = ddp_percentile(v, n, 95, p95);
out:
	free(v);
	return r;
}

static char *json_dup_str(const json_t *doc, const char *key)
{
	const char *s = json_string_value(json_object_get(doc, key));

	return xstrdup(s ? s : "");
}

/* Rank 0's line in the job's output into run; -EINVAL with a message in err. */
static int parse_worker_line(const char *out, const struct ddp_args *a, struct ddp_run *run,
			     struct strbuf *err)
{
	const char *line = strstr(out, DDP_MARKER), *end;
	json_t *doc = NULL;
	int r = -EINVAL;

	if (!line) {
		strbuf_addstr(err, "rank 0 printed no figures");
		return -EINVAL;
	}
	line += strlen(DDP_MARKER) - 1;
	end = strchr(line, '\n');
	if (json_load_buffer(line, end ? (size_t)(end - line) : strlen(line), "rank 0's figures",
			     &doc, err) < 0)
		return -EINVAL;
	run->params = json_integer_value(json_object_get(doc, "params"));
	run->m.grad_bytes = (double)json_integer_value(json_object_get(doc, "grad_bytes"));
	run->buckets = (unsigned)json_integer_value(json_object_get(doc, "buckets"));
	run->m.ranks = (unsigned)json_integer_value(json_object_get(doc, "world_size"));
	run->backend = json_dup_str(doc, "backend");
	run->device = json_dup_str(doc, "device");
	run->torch_version = json_dup_str(doc, "torch_version");
	if (run->m.ranks != run->ranks || run->params <= 0) {
		strbuf_addf(err, "rank 0 reports %u ranks, not %u", run->m.ranks, run->ranks);
		goto out;
	}
	if (array_percentiles(json_object_get(doc, "step_us"), a->steps, &run->m.step_p50_us,
			      &run->m.step_p95_us) < 0 ||
	    array_percentiles(json_object_get(doc, "comm_us"), a->steps, &run->m.comm_us, NULL) <
		    0 ||
	    array_percentiles(json_object_get(doc, "compute_us"), a->steps, &run->m.compute_us,
			      NULL) < 0) {
		strbuf_addstr(err, "rank 0's figures are not one time per step");
		goto out;
	}
	/* What the worker was given, so that a report never rests on another batch. */
	if (json_integer_value(json_object_get(doc, "batch_per_rank")) != run->batch) {
		strbuf_addf(err, "rank 0 ran a batch of %" PRId64 " per rank, not %u",
			    (int64_t)json_integer_value(json_object_get(doc, "batch_per_rank")),
			    run->batch);
		goto out;
	}
	run->m.nodes = run->nodes;
	run->m.batch_per_rank = run->batch;
	r = 0;
out:
	json_decref(doc);
	return r;
}

/* The job's last stderr lines (the end of a traceback says why), as messages. */
static void report_job_errors(const struct run_job *job, const char *hosts)
{
	const char *p = job->err.buf + job->err.len;
	int lines = 0;

	/* Back from the end over at most 6 lines. */
	while (p > job->err.buf && lines < 6) {
		p--;
		if (*p == '\n' && p + 1 < job->err.buf + job->err.len)
			lines++;
	}
	if (lines == 6 || *p == '\n')
		p++;
	while (*p) {
		size_t n = strcspn(p, "\n");
		if (n)
			cmd_error(DDP_CMD, "%s: %.*s", hosts, (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* One configuration through 'sparkctl launch': an exit status. */
static int run_config(const struct ddp_args *a, struct ddp_plan *p, struct ddp_run *run)
{
	struct strbuf err = STRBUF_INIT;
	struct run_job job;
	int ret = SPARKCTL_EXIT_ERROR;

	run_job_init(&job);
	launch_argv(a, p, run, &job.argv);
	progress_begin(!a->json && !a->quiet, "bench ddp: training on %u node%s", run->nodes,
		       run->nodes == 1 ? "" : "s");
	/* launch ends the job at --job-timeout; the extra time is for its own ending. */
	int r = run_jobs(&job, 1, 1, (a->timeout + 30) * 1000, 0);
	progress_end();
	if (r < 0 || job.spawn_error) {
		cmd_error(DDP_CMD, "cannot run sparkctl launch: %s",
			  strerror(-(r < 0 ? r : job.spawn_error)));
		goto out;
	}
	if (job.timed_out || job.status == SPARKCTL_EXIT_TIMEOUT) {
		report_job_errors(&job, run->hosts.buf);
		cmd_error(DDP_CMD, "%s: the job did not end within %u s (--job-timeout)",
			  run->hosts.buf, a->timeout);
		ret = SPARKCTL_EXIT_TIMEOUT;
		goto out;
	}
	if (job.status != 0) {
		report_job_errors(&job, run->hosts.buf);
		/* 3: a node unreachable, or torch, NCCL or gloo missing (the worker says which). */
		ret = job.status == SPARKCTL_EXIT_UNAVAILABLE || job.status == 127
			      ? SPARKCTL_EXIT_UNAVAILABLE
			      : SPARKCTL_EXIT_ERROR;
		if (job.status == 127)
			cmd_error(DDP_CMD, "%s: no %s (set SPARKCTL_PYTHON)", run->hosts.buf,
				  p->python);
		goto out;
	}
	if (parse_worker_line(job.out.buf, a, run, &err) < 0) {
		cmd_error(DDP_CMD, "%s: %s", run->hosts.buf, err.buf);
		goto out;
	}
	ret = SPARKCTL_EXIT_OK;
out:
	run_job_release(&job);
	strbuf_release(&err);
	return ret;
}

/*
 * ": " and the last line of a job's stderr that is not launch's own
 * summary (the rank's line says why), into reason.
 */
static void add_last_line(const struct run_job *job, struct strbuf *reason)
{
	const char *end = job->err.buf + job->err.len, *p, *last = NULL, *last_end = NULL;

	while (end > job->err.buf) {
		while (end > job->err.buf && (end[-1] == '\n' || end[-1] == '\r'))
			end--;
		for (p = end; p > job->err.buf && p[-1] != '\n';)
			p--;
		if (p == end)
			break;
		if (!last) {
			last = p;
			last_end = end;
		}
		if (!starts_with(p, "sparkctl launch: ")) {
			last = p;
			last_end = end;
			break;
		}
		end = p;
	}
	if (last) {
		strbuf_addstr(reason, ": ");
		strbuf_add(reason, last, (size_t)(last_end - last));
	}
}

/*
 * bench nccl's all_reduce at the bucket size on the run's hosts and ranks,
 * through launch as the run itself: its in-place busbw into run, or why not
 * into reason (-1).  The reason is kept as said; the emitter escapes text.
 */
static int nccl_on_run(const struct ddp_args *a, const struct ddp_plan *p, struct ddp_run *run,
		       struct strbuf *reason)
{
	struct run_job job;
	char *self = proc_self_path_or_name();
	int ret = -1;

	run_job_init(&job);
	launch_prefix(a, run, &job.argv);
	strvec_push(&job.argv, self);
	free(self);
	strvec_push(&job.argv, "bench");
	strvec_push(&job.argv, "nccl");
	strvec_push(&job.argv, "--op=all_reduce");
	strvec_pushf(&job.argv, "--minbytes=%" PRIu64, p->nccl.bytes);
	strvec_pushf(&job.argv, "--maxbytes=%" PRIu64, p->nccl.bytes);
	strvec_pushf(&job.argv, "--dtype=%s", p->nccl.dtype);
	strvec_pushf(&job.argv, "--op-timeout=%u", a->timeout);
	progress_begin(!a->json && !a->quiet,
		       "bench ddp: bench nccl at %" PRIu64 " bytes on %u node%s", p->nccl.bytes,
		       run->nodes, run->nodes == 1 ? "" : "s");
	int r = run_jobs(&job, 1, 1, (a->timeout + 30) * 1000, 0);
	progress_end();
	if (r < 0 || job.spawn_error) {
		strbuf_addf(reason, "cannot run sparkctl launch: %s",
			    strerror(-(r < 0 ? r : job.spawn_error)));
	} else if (job.timed_out || job.status != 0) {
		strbuf_addf(reason, "bench nccl on %s failed (exit %d)", run->hosts.buf,
			    job.status);
		add_last_line(&job, reason);
	} else if (ddp_nccl_row_busbw(job.out.buf, p->nccl.bytes, &run->nccl_busbw) < 0) {
		strbuf_addf(reason, "bench nccl on %s printed no row of %" PRIu64 " bytes",
			    run->hosts.buf, p->nccl.bytes);
	} else {
		ret = 0;
	}
	run_job_release(&job);
	return ret;
}

/* bench nccl beside each run of 2 ranks or more, where the runs used NCCL. */
static void compare_nccl(const struct ddp_args *a, struct ddp_plan *p)
{
	const struct ddp_run *multi = NULL;
	size_t compared = 0;

	for (size_t i = 0; i < p->nr_runs; i++) {
		p->runs[i].nccl_busbw = -1;
		if (!multi && p->runs[i].m.ranks > 1)
			multi = &p->runs[i];
	}
	if (!multi)
		multi = &p->runs[0];
	p->nccl.dtype = p->elem_bytes == 2 ? "bfloat16" : "float";
	p->nccl.bytes = ddp_bucket_bytes(multi->m.grad_bytes, multi->buckets, p->elem_bytes);
	if (multi->m.ranks < 2) {
		strbuf_addstr(&p->nccl.reason, "no run of 2 ranks or more");
		return;
	}
	if (!streq(multi->backend, "nccl")) {
		strbuf_addf(&p->nccl.reason, "%s on %s: no NCCL", multi->backend, multi->device);
		return;
	}
	if (a->no_nccl_compare) {
		strbuf_addstr(&p->nccl.reason, "skipped (--no-nccl-compare)");
		return;
	}
	for (size_t i = 0; i < p->nr_runs; i++) {
		if (p->runs[i].m.ranks < 2)
			continue;
		if (nccl_on_run(a, p, &p->runs[i], &p->nccl.reason) < 0)
			return;
		compared++;
	}
	p->nccl.measured = compared > 0;
}

/* What was set beside the buckets' busbw, or why nothing was. */
static void emit_nccl_compare(const struct ddp_plan *p, struct emitter *e)
{
	emit_object_open(e, "nccl_compare");
	emit_value(e, "op", jstr("all_reduce"), NULL);
	emit_int(e, "size_bytes", "NCCL GB/s: bench nccl all_reduce of %" PRId64 " bytes",
		 (int64_t)p->nccl.bytes);
	emit_str(e, "dtype",
		 " (the mean bucket), %s, in place, on the run's hosts and ranks: ", p->nccl.dtype);
	emit_bool(e, "measured", p->nccl.measured, "measured", "not measured");
	if (p->nccl.measured)
		emit_value(e, "reason", json_null(), NULL);
	else
		emit_str(e, "reason", ": %s", p->nccl.reason.buf);
	emit_text(e, "\n");
	emit_close(e);
}

static json_t *jr(double v, int decimals)
{
	return jreal_rounded(v, decimals);
}

static void emit_runs(const struct ddp_plan *p, struct emitter *e)
{
	static const char *const headers[] = {
		">NODES",      ">RANKS",     "HOSTS",	    ">BATCH/RANK", ">STEP P50 ms",
		">P95 ms",     ">SAMPLES/S", ">SPEEDUP",    ">EFFICIENCY", ">COMM ms",
		">COMPUTE ms", ">REST ms",   ">BUSBW GB/s", ">NCCL GB/s",
	};

	emit_table_open(e, "runs", headers, ARRAY_SIZE(headers), 160);
	for (size_t i = 0; i < p->nr_runs; i++) {
		const struct ddp_run *r = &p->runs[i];
		emit_row_open(e);
		emit_cellf(e, "nodes", jint(r->nodes), "%u", r->nodes);
		emit_cellf(e, "ranks", jint(r->m.ranks), "%u", r->m.ranks);
		emit_cell(e, "hosts", jstr(r->hosts.buf), r->hosts.buf);
		emit_cellf(e, "batch_per_rank", jint(r->batch), "%u", r->batch);
		emit_value(e, "global_batch", jint((int64_t)r->batch * r->m.ranks), NULL);
		emit_cellf(e, "step_p50_us", jr(r->m.step_p50_us, 1), "%.2f",
			   r->m.step_p50_us / 1000);
		emit_cellf(e, "step_p95_us", jr(r->m.step_p95_us, 1), "%.2f",
			   r->m.step_p95_us / 1000);
		emit_cellf(e, "samples_per_second", jr(r->f.samples_per_second, 2), "%.1f",
			   r->f.samples_per_second);
		emit_cellf(e, "speedup", jr(r->f.speedup, 4), "%.3f", r->f.speedup);
		emit_cellf(e, "efficiency_ratio", jr(r->f.efficiency_ratio, 4), "%.1f%%",
			   r->f.efficiency_ratio * 100);
		emit_cellf(e, "comm_us", jr(r->m.comm_us, 1), "%.2f", r->m.comm_us / 1000);
		emit_cellf(e, "compute_us", jr(r->m.compute_us, 1), "%.2f", r->m.compute_us / 1000);
		emit_cellf(e, "other_us", jr(r->f.other_us, 1), "%.2f", r->f.other_us / 1000);
		if (r->m.ranks > 1)
			emit_cellf(e, "busbw_gbytes_per_second",
				   jr(r->f.busbw_gbytes_per_second, 4), "%.3f",
				   r->f.busbw_gbytes_per_second);
		else
			emit_cell(e, "busbw_gbytes_per_second", json_null(), "-");
		if (r->nccl_busbw >= 0)
			emit_cellf(e, "nccl_busbw_gbytes_per_second", jr(r->nccl_busbw, 4), "%.3f",
				   r->nccl_busbw);
		else
			emit_cell(e, "nccl_busbw_gbytes_per_second", json_null(), "-");
		emit_value(e, "comm_ratio", jr(r->f.comm_ratio, 4), NULL);
		emit_value(e, "lost_comm_ratio", jr(r->f.lost_comm_ratio, 4), NULL);
		emit_value(e, "lost_other_ratio", jr(r->f.lost_other_ratio, 4), NULL);
		emit_value(e, "buckets", jint(r->buckets), NULL);
		emit_row_close(e);
	}
	emit_table_close(e);
	for (size_t i = 1; i < p->nr_runs; i++) {
		const struct ddp_run *r = &p->runs[i];
		emit_text(e,
			  "%u nodes: speedup %.3f, efficiency %.1f%%; lost %.1f%% = comm %.1f%% "
			  "+ rest %.1f%%\n",
			  r->nodes, r->f.speedup, r->f.efficiency_ratio * 100,
			  (1 - r->f.efficiency_ratio) * 100, r->f.lost_comm_ratio * 100,
			  r->f.lost_other_ratio * 100);
	}
	emit_nccl_compare(p, e);
}

/* What each plan predicts for, and why no other count is shown. */
static const char *plan_why(enum ddp_fabric_plan plan)
{
	return plan == DDP_PLAN_RING ? "3 nodes only (the ring plan cables three Sparks, port 0 to "
				       "the next one's port 1; more need a switch)"
				     : "3 to 10 nodes (any count from 2; 2 is measured)";
}

static void emit_plans(const struct ddp_run *multi, struct emitter *e)
{
	emit_array_open(e, "prediction_plans");
	for (unsigned i = 0; i < DDP_NR_PLANS; i++) {
		enum ddp_fabric_plan plan = (enum ddp_fabric_plan)i;
		double ratio = ddp_plan_link_ratio(plan);
		unsigned lo = 0, hi = 0;
		for (unsigned n = DDP_PREDICT_MIN; n <= DDP_PREDICT_MAX; n++)
			if (ddp_plan_allows(plan, n)) {
				lo = lo ? lo : n;
				hi = n;
			}
		emit_object_open(e, NULL);
		emit_value(e, "plan", jstr(ddp_plan_name(plan)), NULL);
		emit_value(e, "link_ratio", jr(ratio, 4), NULL);
		emit_value(e, "busbw_gbytes_per_second",
			   jr(multi->f.busbw_gbytes_per_second * ratio, 4), NULL);
		emit_value(e, "min_nodes", jint(lo), NULL);
		emit_value(e, "max_nodes", jint(hi), NULL);
		emit_value(e, "why", jstr(plan_why(plan)), NULL);
		emit_close(e);
		emit_text(e, "  %s: %s; %s: %.3f GB/s busbw\n", ddp_plan_name(plan), plan_why(plan),
			  plan == DDP_PLAN_RING ? "each link at half the port"
						: "every node on one fabric at the busbw measured",
			  multi->f.busbw_gbytes_per_second * ratio);
	}
	emit_close(e);
}

static void emit_prediction(const struct ddp_plan *p, struct emitter *e)
{
	static const char *const headers[] = {
		"PLAN",	       ">NODES",   ">RANKS",	  ">STEP ms",	 ">SAMPLES/S", ">SPEEDUP",
		">EFFICIENCY", ">COMM ms", ">COMPUTE ms", ">BUSBW GB/s", "",
	};
	const struct ddp_run *base = &p->runs[0], *multi = NULL;

	for (size_t i = 1; i < p->nr_runs && !multi; i++)
		if (p->runs[i].m.ranks > 1)
			multi = &p->runs[i];
	if (!multi || !(multi->m.comm_us > 0)) {
		emit_value(e, "predicted", json_array(), NULL);
		emit_text(e, "\nno prediction: it needs a run on 2 nodes or more\n");
		return;
	}
	emit_value(e, "predicted_from_nodes", jint(multi->nodes), NULL);
	emit_value(e, "overlap_assumption", jstr("measured"), NULL);
	emit_value(e, "rest_us",
		   jr(multi->m.step_p50_us - multi->m.compute_us - multi->m.comm_us, 1), NULL);
	emit_text(e,
		  "\npredicted, not measured, from the 1 -> %u node runs (%s scaling); overlap "
		  "as measured:\nstep = compute + comm + REST of the %u-node run (%.2f ms), at "
		  "least the longer of compute and comm;\n",
		  multi->nodes, ddp_scaling_name(p->scaling), multi->nodes,
		  (multi->m.step_p50_us - multi->m.compute_us - multi->m.comm_us) / 1000);
	if (p->scaling == DDP_SCALING_STRONG)
		emit_text(e,
			  "compute as measured on %u nodes times %u/N (the batch per rank "
			  "shrinks), ",
			  multi->nodes, multi->nodes);
	else
		emit_text(e, "compute as measured on %u nodes, ", multi->nodes);
	emit_text(e, "comm a ring all-reduce of 2(N-1)/N x %.1f MB at the plan's busbw:\n",
		  multi->m.grad_bytes / 1e6);
	emit_plans(multi, e);
	emit_table_open(e, "predicted", headers, ARRAY_SIZE(headers), 120);
	for (unsigned i = 0; i < DDP_NR_PLANS; i++) {
		for (unsigned n = DDP_PREDICT_MIN; n <= DDP_PREDICT_MAX; n++) {
			struct ddp_prediction pr;
			if (ddp_predict(&base->m, &multi->m, p->scaling, (enum ddp_fabric_plan)i, n,
					&pr) < 0)
				continue;
			emit_row_open(e);
			emit_cell(e, "plan", jstr(ddp_plan_name((enum ddp_fabric_plan)i)),
				  ddp_plan_name((enum ddp_fabric_plan)i));
			emit_cellf(e, "nodes", jint(n), "%u", n);
			emit_cellf(e, "ranks", jint(pr.ranks), "%u", pr.ranks);
			emit_cellf(e, "step_us", jr(pr.step_us, 1), "%.2f", pr.step_us / 1000);
			emit_cellf(e, "samples_per_second", jr(pr.samples_per_second, 2), "%.1f",
				   pr.samples_per_second);
			emit_cellf(e, "speedup", jr(pr.speedup, 4), "%.3f", pr.speedup);
			emit_cellf(e, "efficiency_ratio", jr(pr.efficiency_ratio, 4), "%.1f%%",
				   pr.efficiency_ratio * 100);
			emit_cellf(e, "comm_us", jr(pr.comm_us, 1), "%.2f", pr.comm_us / 1000);
			emit_cellf(e, "compute_us", jr(pr.compute_us, 1), "%.2f",
				   pr.compute_us / 1000);
			emit_cellf(e, "busbw_gbytes_per_second", jr(pr.busbw_gbytes_per_second, 4),
				   "%.3f", pr.busbw_gbytes_per_second);
			emit_cell(e, "predicted", json_true(), "predicted");
			emit_row_close(e);
		}
	}
	emit_table_close(e);
}

static void emit_report(const struct ddp_args *a, const struct ddp_plan *p, struct emitter *e)
{
	const struct ddp_run *base = &p->runs[0];

	emit_value(e, "schema_version", jint(DDP_SCHEMA_VERSION), NULL);
	emit_str(e, "model", "bench ddp: %s", a->model);
	emit_int(e, "params", ", %" PRId64 " parameters", base->params);
	emit_int(e, "width", " (width %" PRId64, p->shape.width);
	emit_int(e, "layers", " x %" PRId64 " layers)", p->layers);
	emit_str(e, "dtype", ", %s", a->dtype);
	emit_str(e, "scaling", ", %s scaling", ddp_scaling_name(p->scaling));
	if (p->scaling == DDP_SCALING_STRONG)
		emit_int(e, "global_batch", ": global batch %" PRId64, a->batch);
	else
		emit_int(e, "batch_per_rank", ": batch %" PRId64 " per rank", a->batch);
	emit_int(e, "ranks_per_node", ", %" PRId64 " per node", a->nproc);
	emit_int(e, "steps", ", %" PRId64 " steps", a->steps);
	emit_int(e, "warmup_steps", " (%" PRId64 " warm-up)\n", a->warmup);
	emit_str(e, "backend", "%s", base->backend);
	emit_str(e, "device", " on %s", base->device);
	emit_str(e, "torch_version", ", torch %s", base->torch_version);
	emit_int(e, "grad_bytes", "; gradients %" PRId64 " bytes per step",
		 (int64_t)base->m.grad_bytes);
	emit_int(e, "bucket_cap_bytes", " in buckets of up to %" PRId64 " bytes\n",
		 (int64_t)a->bucket_mb << 20);
	emit_value(e, "gpus_as_nodes", json_boolean(p->gpus_as_nodes), NULL);
	if (p->gpus_as_nodes) {
		emit_str(e, NULL, "--gpus: NODES counts GPUs of %s", p->runs[0].hosts.buf);
		emit_text(e, ", each standing for a node of one GPU (a Spark); the prediction "
			     "is for such nodes\n");
	}
	emit_text(e, "\n");
	emit_runs(p, e);
	emit_prediction(p, e);
}

static int print_report(const struct ddp_args *a, const struct ddp_plan *p)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	const char *json_path = a->json ? "-" : a->output;
	struct emitter e;
	int ret = SPARKCTL_EXIT_OK;

	if (json_path) {
		json_t *doc;
		emit_init(&e, EMIT_JSON, NULL, false);
		emit_report(a, p, &e);
		doc = emit_document(&e);
		emit_release(&e);
		if (json_save(doc, json_path, &err) < 0) {
			cmd_error(DDP_CMD, "%s", err.buf);
			ret = SPARKCTL_EXIT_ERROR;
		}
		json_decref(doc);
	}
	if (ret == SPARKCTL_EXIT_OK && !a->json) {
		emit_init(&e, EMIT_TEXT, &out, cmd_use_color());
		emit_report(a, p, &e);
		emit_release(&e);
		fputs(out.buf, stdout);
	}
	strbuf_release(&out);
	strbuf_release(&err);
	return ret;
}

static int run_all(const struct ddp_args *a, struct ddp_plan *p, const struct host_list *hosts)
{
	int ret;

	for (size_t i = 0; i < p->nr_runs; i++) {
		struct ddp_run *r = &p->runs[i];
		for (unsigned h = 0; h < (p->gpus_as_nodes ? 1 : r->nodes); h++)
			strbuf_addf(&r->hosts, "%s%s", h ? "," : "", hosts->hosts[h].name);
		ret = run_config(a, p, r);
		if (ret != SPARKCTL_EXIT_OK)
			return ret;
	}
	for (size_t i = 0; i < p->nr_runs; i++)
		if (ddp_figures(&p->runs[i].m, &p->runs[0].m, &p->runs[i].f) < 0) {
			cmd_error(DDP_CMD, "%s: a step time that is not positive",
				  p->runs[i].hosts.buf);
			return SPARKCTL_EXIT_ERROR;
		}
	compare_nccl(a, p);
	return print_report(a, p);
}

/* The runs of --nodes (default: 1 and all), their batches, and whether they fit. */
static int plan_runs(const struct ddp_args *a, struct ddp_plan *p, size_t nr_hosts)
{
	struct strbuf nodes = STRBUF_INIT;
	int ret;

	if (a->gpus) {
		/* A Spark is a node of one GPU: N GPUs of one host stand for N of them. */
		if (a->nodes || a->nproc != 1)
			return cmd_usage_error(DDP_CMD, "--gpus counts GPUs of the first host: "
							"not with --nodes or -N");
		p->gpus_as_nodes = true;
		strbuf_addstr(&nodes, a->gpus);
		nr_hosts = DDP_MAX_GPUS;
	} else if (a->nodes) {
		strbuf_addstr(&nodes, a->nodes);
	} else if (nr_hosts > 1) {
		strbuf_addf(&nodes, "1,%zu", nr_hosts);
	} else {
		strbuf_addstr(&nodes, "1");
	}
	ret = parse_nodes(nodes.buf, nr_hosts, p);
	for (size_t i = 0; ret == SPARKCTL_EXIT_OK && i < p->nr_runs; i++) {
		struct ddp_run *r = &p->runs[i];
		/* --gpus: one launch on the first host with a rank per GPU. */
		r->nproc = p->gpus_as_nodes ? r->nodes : a->nproc;
		r->ranks = p->gpus_as_nodes ? r->nodes : r->nodes * a->nproc;
	}
	if (ret == SPARKCTL_EXIT_OK)
		ret = assign_batches(a, p);
	if (ret == SPARKCTL_EXIT_OK)
		ret = check_memory(a, p);
	strbuf_release(&nodes);
	return ret;
}

static int run_bench_ddp(const struct cmd *cmd, int argc, char **argv)
{
	struct ddp_args a = {
		.model = "mlp",
		.params = "2M",
		.dtype = "fp32",
		.batch = 32,
		.steps = 20,
		.warmup = 3,
		.bucket_mb = 25,
		.nproc = 1,
		.timeout = 600,
	};
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "HOSTS",
			   "the nodes; run N uses the first N (default: the cluster file's, else "
			   "localhost)"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, from a hostfile"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE",
			   "without -H, the nodes of this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_STRING(0, "nodes", &a.nodes, "1,N",
			   "node counts to run, 1 first (default: 1 and all the nodes)"),
		OPT_UINT('N', "nproc-per-node", &a.nproc, "N", "ranks per node (1)"),
		OPT_STRING(0, "gpus", &a.gpus, "1,G",
			   "instead of nodes, G GPUs of the first host, each standing for a node "
			   "of one GPU (a Spark)"),
		OPT_CHOICE(0, "model", &a.model, "MODEL", "mlp|transformer",
			   "mlp or transformer (mlp)"),
		OPT_STRING(0, "params", &a.params, "N",
			   "parameters of the model, k, M, G suffixes (2M)"),
		OPT_UINT(0, "batch", &a.batch, "B",
			 "samples per rank per step (32); with --strong, per step in all"),
		OPT_BOOL(0, "strong", &a.strong,
			 "strong scaling: the same global batch (--batch) on every run"),
		OPT_UINT(0, "steps", &a.steps, "S", "timed steps (20)"),
		OPT_UINT(0, "warmup", &a.warmup, "W", "steps before the timed ones (3)"),
		OPT_UINT(0, "bucket-mb", &a.bucket_mb, "M", "DDP's bucket size in MiB (25)"),
		OPT_CHOICE(0, "dtype", &a.dtype, "TYPE", "bf16|fp32",
			   "parameters and data: bf16 or fp32 (fp32)"),
		OPT_BOOL(0, "no-nccl-compare", &a.no_nccl_compare,
			 "do not run bench nccl at the bucket size beside the NCCL runs"),
		OPT_UINT(0, "job-timeout", &a.timeout, "S",
			 "end a run that takes longer than S seconds (600)"),
		OPT_BOOL(0, "json", &a.json, "print the report as JSON, not as text"),
		OPT_STRING('o', "output", &a.output, "FILE",
			   "also write the report as JSON to FILE"),
		OPT_BOOL('q', "quiet", &a.quiet, "no progress line: errors and the report only"),
		OPT_HELP(),
		OPT_END(),
	};
	struct ddp_plan p = { .script = STRBUF_INIT, .nccl.reason = STRBUF_INIT };
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = cmd_parse(cmd, opts, argc, argv);

	if (ret < 0)
		return cmd_parse_exit(ret);
	for (size_t i = 0; i < DDP_MAX_CONFIGS; i++)
		strbuf_init(&p.runs[i].hosts, 0);
	ret = check_args(&a, &p);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	if (host_list_from_options(a.hosts, a.hostfile, a.cluster, "localhost", &hosts, &err) < 0) {
		ret = cmd_usage_error(DDP_CMD, "%s", err.buf);
		goto out;
	}
	ret = plan_runs(&a, &p, hosts.nr);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	ret = read_worker(&p.script);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	ret = run_all(&a, &p, &hosts);
out:
	for (size_t i = 0; i < DDP_MAX_CONFIGS; i++) {
		strbuf_release(&p.runs[i].hosts);
		free(p.runs[i].backend);
		free(p.runs[i].device);
		free(p.runs[i].torch_version);
	}
	strbuf_release(&p.script);
	strbuf_release(&p.nccl.reason);
	strbuf_release(&err);
	host_list_release(&hosts);
	return ret;
}

const struct cmd cmd_bench_ddp = {
	.name = "ddp",
	.title = "bench ddp",
	.fn = run_bench_ddp,
	.summary = "measure data-parallel training scaling across nodes, and predict more",
	.usage = ddp_usage,
	.description = ddp_description,
	.exit_status =
		"0 measured, 1 other errors, 2 usage (also a model that would not fit in "
		"memory, -N beyond the GPUs, a --strong --batch the ranks do not divide), 3 "
		"a node could not be reached, or torch, NCCL or gloo is missing (named), 5 a "
		"run did not end within --job-timeout",
	.max_operands = 0,
};
