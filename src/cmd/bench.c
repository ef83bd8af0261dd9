/*
 * sparkctl bench - measure the cluster.
 *
 *   sparkctl bench nccl   NCCL collectives, nccl-tests' table, without MPI
 *   sparkctl bench ddp    training scaling across nodes (bench_ddp.c)
 *
 * The work is in src/bench/: nccl_perf.c (sizes, formulas, the table),
 * nccl_run.c (one rank), rendezvous.c (how the ranks meet).  Here: the
 * command line, and on one node the processes of the ranks.
 */
#include "sparkctl.h"

#include <signal.h>

#include "bench/nccl_run.h"
#include "bench/rendezvous.h"
#include "cmd/cmd.h"
#include "probe/procs.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/strvec.h"
#include "lib/xalloc.h"
#include "nv/cuda.h"
#include "proc/child.h"
#include "proc/loop.h"
#include "version.h"

#define NCCL_DEFAULT_MIN     "8"
#define NCCL_DEFAULT_MAX     "1G"
#define NCCL_DEFAULT_ITERS   20
#define NCCL_DEFAULT_WARMUP  1
#define NCCL_DEFAULT_TIMEOUT 60
#define NCCL_MAX_RANKS	     4096
/* Set in the ranks a local run starts: rank 0 alone reports errors. */
#define CHILD_ENV	     "SPARKCTL_BENCH_LOCAL_RANK"

static const char *const nccl_usage[] = {
	"sparkctl bench nccl [--op OP[,OP]...] [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [options]",
	"sparkctl launch -H a,b -- sparkctl bench nccl [options]",
	"sparkctl bench nccl --rank R --world-size N --rendezvous HOST:PORT [options]",
	NULL,
};

static const char nccl_description[] =
	"Time NCCL collectives over a sweep of sizes and print nccl-tests' table (size,\n"
	"count, type, redop, root, time, algbw, busbw, #wrong; out-of-place and in-place)\n"
	"with the path NCCL took above it: network (IB or Socket), HCAs, GPUDirect RDMA,\n"
	"channels.  It loads libnccl.so.2 and libcuda.so.1 at run time: no MPI, no CUDA\n"
	"build.  On one node it runs one rank per GPU (--gpus).  Across nodes, start it\n"
	"with 'sparkctl launch' (one rank per GPU: -N GPUS), which passes RANK,\n"
	"WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT; or start each rank by hand\n"
	"with --rank, --world-size and --rendezvous (rank 0 listens on that port).\n"
	"\n"
	"OP: all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall,\n"
	"sendrecv, or all.  Sizes take K, M, G (binary): -b 8 -e 1G -f 2 by default; MAX\n"
	"is lowered to what free GPU memory allows (on unified memory, MemAvailable),\n"
	"and a larger -e is refused without --force.  Iterations are fixed by default\n"
	"(-n 20, -w 1, as nccl-tests), so figures compare with nccl-tests' directly;\n"
	"--precision P stops a size's loop once its mean is known within P percent,\n"
	"which takes fewer operations at large sizes.  Results are checked after the\n"
	"timed loop (-c 0 to skip), on the GPU by kernels the driver compiles at run\n"
	"time (on the host where it cannot: --check-on).  -C 1 shows the host's time to\n"
	"issue an operation instead of the time to complete it (both are in the JSON).  A\n"
	"collective that does not finish within --op-timeout is aborted.";

struct nccl_args {
	const char *ops, *min, *max, *step, *dtype, *redop, *precision, *output, *rendezvous, *bind;
	const char *rank, *world_size, *device, *host_root, *check_on;
	unsigned factor, iters, warmup, root, check, cputime, gpus, timeout;
	bool force, json;
};

/* --root names a tree; a number there is nccl-tests' -r/--root, the root rank. */
static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "all_reduce,all_gather" or "all". */
static int parse_ops(const char *s, struct nccl_bench_opts *o)
{
	const char *p = s;

	if (!s)
		return -EINVAL;
	if (streq(s, "all")) {
		for (size_t i = 0; i < PERF_NR_COLLS; i++)
			o->colls[i] = (enum perf_coll)i;
		o->nr_colls = PERF_NR_COLLS;
		return 0;
	}
	o->nr_colls = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		char name[32];
		enum perf_coll c;
		if (n == 0 || n >= sizeof(name) || o->nr_colls == PERF_NR_COLLS)
			return -EINVAL;
		memcpy(name, p, n);
		name[n] = '\0';
		if (perf_coll_from_name(name, &c) < 0)
			return -EINVAL;
		o->colls[o->nr_colls++] = c;
		p += n;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return o->nr_colls ? 0 : -EINVAL;
}

static int parse_percent(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end != s && *end == '%')
		end++;
	if (errno || end == s || *end || !(v > 0) || v >= 100)
		return -EINVAL;
	*ret = v / 100;
	return 0;
}

/* Check the command line and turn it into options; an exit status. */
static int nccl_options(const struct nccl_args *a, struct nccl_bench_opts *o)
{
	const char *cmd = "bench nccl";
	uint64_t step = 0;

	memset(o, 0, sizeof(*o));
	if (parse_ops(a->ops, o) < 0)
		return cmd_usage_error(cmd,
				       "bad --op '%s': all_reduce, all_gather, reduce_scatter, "
				       "broadcast, reduce, alltoall, sendrecv or all",
				       a->ops);
	if (perf_parse_size(a->min ? a->min : NCCL_DEFAULT_MIN, &o->min_bytes) < 0)
		return cmd_usage_error(cmd, "bad -b size '%s'", a->min);
	if (perf_parse_size(a->max ? a->max : NCCL_DEFAULT_MAX, &o->max_bytes) < 0)
		return cmd_usage_error(cmd, "bad -e size '%s'", a->max);
	o->max_given = a->max != NULL;
	if (!a->max && o->min_bytes > o->max_bytes)
		o->max_bytes = o->min_bytes;
	if (o->min_bytes > o->max_bytes)
		return cmd_usage_error(cmd, "-b %s is larger than -e %s", a->min, a->max);
	if (a->step && perf_parse_size(a->step, &step) < 0)
		return cmd_usage_error(cmd, "bad -i step '%s'", a->step);
	if (a->step && a->factor)
		return cmd_usage_error(cmd, "-f and -i exclude each other");
	o->factor = a->step ? 1 : a->factor ? a->factor : 2;
	o->step = step;
	if (!a->step && o->factor < 2)
		return cmd_usage_error(cmd, "-f takes a factor of 2 or more");
	o->iters = a->iters;
	if (o->iters == 0)
		return cmd_usage_error(cmd, "-n takes 1 or more");
	o->warmup = a->warmup;
	if (a->precision && parse_percent(a->precision, &o->precision) < 0)
		return cmd_usage_error(cmd, "bad --precision '%s': a percentage such as 2%%",
				       a->precision);
	if (perf_dtype_from_name(a->dtype, &o->dtype) < 0)
		return cmd_usage_error(cmd,
				       "bad --dtype '%s': int8, uint8, int32, uint32, int64, "
				       "uint64, half, float, double or bfloat16",
				       a->dtype);
	if (perf_redop_from_name(a->redop, &o->redop) < 0)
		return cmd_usage_error(cmd, "bad --redop '%s': sum, prod, max, min or avg",
				       a->redop);
	if (a->check > 1)
		return cmd_usage_error(cmd, "-c takes 0 or 1");
	o->check = a->check == 1;
	if (streq(a->check_on, "gpu"))
		o->check_on = NCCL_CHECK_GPU;
	else if (streq(a->check_on, "host"))
		o->check_on = NCCL_CHECK_HOST;
	else if (streq(a->check_on, "auto"))
		o->check_on = NCCL_CHECK_AUTO;
	else
		return cmd_usage_error(cmd, "bad --check-on '%s': auto, gpu or host", a->check_on);
	if (a->cputime > 1)
		return cmd_usage_error(cmd, "-C takes 0 or 1");
	o->cputime = a->cputime == 1;
	if (perf_bind_from_name(a->bind, &o->bind) < 0)
		return cmd_usage_error(cmd, "bad --bind '%s': core, numa or none", a->bind);
	/* The host's files below --root or $SPARKCTL_ROOT, as every command reads them. */
	if (a->host_root && !is_dir(a->host_root) &&
	    strspn(a->host_root, "0123456789") == strlen(a->host_root))
		return cmd_usage_error(cmd, "--root takes the host's tree, a directory; the root "
					    "rank is --root-rank");
	o->host_root = rootfs_root_path(a->host_root);
	o->root = (int)a->root;
	if (a->timeout == 0 || a->timeout > 86400)
		return cmd_usage_error(cmd, "--op-timeout takes 1 to 86400 seconds");
	o->timeout_ms = a->timeout * 1000;
	o->force = a->force;
	if (a->json && a->output)
		return cmd_usage_error(cmd, "--json prints the JSON, -o writes it to a file: "
					    "choose one");
	/* -o was the collective once: 'bench nccl -o all' must not write a file named all. */
	if (a->output && parse_ops(a->output, &(struct nccl_bench_opts){ 0 }) == 0)
		return cmd_usage_error(cmd, "-o %s: -o is --output FILE; the collective is --op",
				       a->output);
	o->json_path = a->json ? "-" : a->output;
	o->version = SPARKCTL_VERSION;
	return SPARKCTL_EXIT_OK;
}

static int status_exit(enum nccl_bench_status s)
{
	switch (s) {
	case NCCL_BENCH_OK:
		return SPARKCTL_EXIT_OK;
	case NCCL_BENCH_UNAVAILABLE:
		return SPARKCTL_EXIT_UNAVAILABLE;
	case NCCL_BENCH_WRONG:
		return SPARKCTL_EXIT_PROBLEMS;
	case NCCL_BENCH_TIMEOUT:
		return SPARKCTL_EXIT_TIMEOUT;
	case NCCL_BENCH_BAD_SIZE:
		return SPARKCTL_EXIT_USAGE;
	case NCCL_BENCH_ERROR:
		break;
	}
	return SPARKCTL_EXIT_ERROR;
}

/* SPARKCTL_BENCH_STEPS=1: when each step of this rank ended, on stderr. */
static void print_steps(const struct nccl_bench_rank *me, const double *at)
{
	static const char *const names[NCCL_NR_STEPS] = {
		[NCCL_STEP_LIBRARIES] = "libraries", [NCCL_STEP_BUFFERS] = "buffers",
		[NCCL_STEP_COMM] = "communicator",   [NCCL_STEP_SWEEP] = "sweep",
		[NCCL_STEP_DESTROYED] = "destroyed", [NCCL_STEP_END] = "end",
	};
	struct strbuf line = STRBUF_INIT;

	for (int s = 0; s < NCCL_NR_STEPS; s++)
		strbuf_addf(&line, "%s %s %.3f", s ? "," : "", names[s], at[s]);
	fprintf(stderr, "sparkctl bench nccl: rank %d steps (s from its start):%s\n", me->rank,
		line.buf);
	strbuf_release(&line);
}

static int run_rank(const struct nccl_bench_opts *o, const struct nccl_bench_rank *me)
{
	struct strbuf err = STRBUF_INIT;
	const char *steps_env = getenv("SPARKCTL_BENCH_STEPS");
	double at[NCCL_NR_STEPS] = { 0 };
	struct nccl_bench_rank rank = *me;
	enum nccl_bench_status s;

	const char *destroy_env = getenv("SPARKCTL_BENCH_DESTROY");

	if (steps_env && streq(steps_env, "1"))
		rank.step_seconds = at;
	rank.destroy = destroy_env && streq(destroy_env, "1");
	s = nccl_bench_run(o, &rank, stdout, &err);
	if (nccl_bench_left_live())
		cmd_end_without_exit_handlers();
	if (rank.step_seconds)
		print_steps(me, at);

	if (s == NCCL_BENCH_WRONG)
		cmd_error("bench nccl", "some results were wrong (see #wrong)");
	else if (s != NCCL_BENCH_OK && !getenv(CHILD_ENV))
		cmd_error("bench nccl", "%s", err.buf);
	strbuf_release(&err);
	return status_exit(s);
}

/*
 * The GPUs CUDA shows this process.  The driver stays loaded and
 * initialised in *cuda, for rank 0 in this process: a second cuInit there
 * would cost as much as the first (a third of a second and more).
 */
static int count_gpus(struct cuda *cuda, int *ret)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	r = cuda_open(cuda, false, &err);
	if (r < 0) {
		cmd_error("bench nccl", "no GPU to run on: %s", err.buf);
		strbuf_release(&err);
		return SPARKCTL_EXIT_UNAVAILABLE;
	}
	r = cuda->device_get_count(ret) == CUDA_SUCCESS ? 0 : -EIO;
	strbuf_release(&err);
	if (r < 0 || *ret < 1) {
		cmd_error("bench nccl", "no GPU to run on: the CUDA driver reports none");
		return SPARKCTL_EXIT_UNAVAILABLE;
	}
	return SPARKCTL_EXIT_OK;
}

/* The argv of local rank r: the same options, and where to meet. */
static void child_argv(const struct nccl_args *a, int r, int n, uint16_t port, struct strvec *v)
{
	char *self = proc_self_path_or_name();

	strvec_push(v, self);
	free(self);
	strvec_push(v, "bench");
	strvec_push(v, "nccl");
	strvec_pushf(v, "--op=%s", a->ops);
	if (a->min)
		strvec_pushf(v, "-b%s", a->min);
	if (a->max)
		strvec_pushf(v, "-e%s", a->max);
	if (a->step)
		strvec_pushf(v, "-i%s", a->step);
	if (a->factor)
		strvec_pushf(v, "-f%u", a->factor);
	strvec_pushf(v, "-n%u", a->iters);
	strvec_pushf(v, "-w%u", a->warmup);
	strvec_pushf(v, "-c%u", a->check);
	strvec_pushf(v, "--check-on=%s", a->check_on);
	strvec_pushf(v, "-C%u", a->cputime);
	strvec_pushf(v, "--bind=%s", a->bind);
	strvec_pushf(v, "--root-rank=%u", a->root);
	if (a->host_root)
		strvec_pushf(v, "--root=%s", a->host_root);
	strvec_pushf(v, "--dtype=%s", a->dtype);
	strvec_pushf(v, "--redop=%s", a->redop);
	strvec_pushf(v, "--op-timeout=%u", a->timeout);
	if (a->precision)
		strvec_pushf(v, "--precision=%s", a->precision);
	if (a->force)
		strvec_push(v, "--force");
	strvec_pushf(v, "--rank=%d", r);
	strvec_pushf(v, "--world-size=%d", n);
	strvec_pushf(v, "--device=%d", r);
	strvec_pushf(v, "--rendezvous=127.0.0.1:%u", port);
}

/* Start local rank r: it never outlives the run that started it. */
static int start_rank(const struct nccl_args *a, int r, int n, uint16_t port, struct child *c)
{
	child_argv(a, r, n, port, &c->args);
	strvec_pushf(&c->env, "%s=1", CHILD_ENV);
	c->die_with_parent = true;
	return child_start(c);
}

static void rank_ended(struct loop *loop, struct child *c, void *data)
{
	bool *all_ok = data;

	(void)loop;
	*all_ok &= child_finish(c) == 0;
}

/* Wait for the local ranks started, at most timeout_ms, then kill what is left. */
static bool reap_ranks(struct child *ranks, int n, unsigned timeout_ms, bool kill_now)
{
	struct loop loop;
	bool all_ok = true;

	loop_init(&loop);
	for (int i = 0; i < n; i++) {
		if (!ranks[i].pid)
			continue;
		if (kill_now)
			child_signal(&ranks[i], SIGTERM);
		loop_watch_child(&loop, &ranks[i], rank_ended, &all_ok);
	}
	loop_run_until(&loop, monotonic_ms() + timeout_ms);
	for (int i = 0; i < n; i++) {
		if (!ranks[i].pid || ranks[i].reaped)
			continue;
		child_signal(&ranks[i], SIGKILL);
		child_finish(&ranks[i]);
		all_ok = false;
	}
	loop_release(&loop);
	return all_ok;
}

/* One node, one rank per GPU: this process is rank 0, the others its children. */
static int run_local(const struct nccl_args *a, const struct nccl_bench_opts *o)
{
	struct nccl_bench_rank me = { .rank = 0, .device = 0, .rendezvous = NULL };
	struct strbuf err = STRBUF_INIT;
	struct cuda counted = { 0 };
	struct child *ranks = NULL;
	int n = (int)a->gpus, have = 0, ret;
	uint16_t port;
	bool children_ok;

	/*
	 * The GPUs are counted first, unless --gpus says how many: then the
	 * other ranks start at once and set up while this one counts (a cuInit
	 * that rank 0 needs anyway), and are stopped if there are too few.
	 */
	if (!n) {
		ret = count_gpus(&counted, &n);
		if (ret != SPARKCTL_EXIT_OK)
			goto out;
	}
	ret = SPARKCTL_EXIT_USAGE;
	if (o->root >= n) {
		cmd_usage_error("bench nccl", "--root-rank %d: there are %d ranks", o->root, n);
		goto out;
	}
	if (rdv_listen("127.0.0.1", 0, &me.listen_fd, &port, &err) < 0) {
		cmd_error("bench nccl", "%s", err.buf);
		strbuf_release(&err);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	me.world_size = n;
	ranks = xcalloc((size_t)n, sizeof(*ranks));
	for (int r = 0; r < n; r++)
		child_init(&ranks[r]);
	fflush(stdout);
	for (int r = 1; r < n; r++) {
		int e = start_rank(a, r, n, port, &ranks[r]);
		if (e < 0) {
			cmd_error("bench nccl", "cannot start rank %d: %s", r, strerror(-e));
			close(me.listen_fd);
			reap_ranks(ranks, n, 0, true);
			ret = SPARKCTL_EXIT_ERROR;
			goto out;
		}
	}
	if (a->gpus) {
		ret = count_gpus(&counted, &have);
		if (ret == SPARKCTL_EXIT_OK && have < n) {
			cmd_usage_error("bench nccl", "--gpus %d: this host has %d GPU%s", n, have,
					have == 1 ? "" : "s");
			ret = SPARKCTL_EXIT_USAGE;
		}
		if (ret != SPARKCTL_EXIT_OK) {
			close(me.listen_fd);
			reap_ranks(ranks, n, 0, true);
			goto out;
		}
	}
	ret = run_rank(o, &me);
	/* The others end when rank 0 closes the rendezvous; a stuck one is killed. */
	children_ok =
		reap_ranks(ranks, n, ret == SPARKCTL_EXIT_OK ? o->timeout_ms + 5000 : 5000, false);
	if (ret == SPARKCTL_EXIT_OK && !children_ok) {
		cmd_error("bench nccl", "a rank on this node failed");
		ret = SPARKCTL_EXIT_ERROR;
	}
out:
	for (int r = 0; ranks && r < n; r++)
		child_release(&ranks[r]);
	free(ranks);
	cuda_close(&counted);
	return ret;
}

static int parse_rank_arg(const char *what, const char *s, int lo, int hi, int *ret)
{
	if (parse_int(s, ret) < 0 || *ret < lo || *ret > hi)
		return cmd_usage_error("bench nccl", "bad %s '%s'", what, s);
	return SPARKCTL_EXIT_OK;
}

/*
 * A rank of a job across nodes: by hand (--rank...), or under 'sparkctl
 * launch', whose environment says the same.
 */
static int run_one_rank(const struct nccl_args *a, const struct nccl_bench_opts *o, bool by_hand)
{
	struct nccl_bench_rank me = { .listen_fd = -1, .device = -1 };
	struct strbuf addr = STRBUF_INIT;
	const char *rank_s = by_hand ? a->rank : getenv("RANK");
	const char *world_s = by_hand ? a->world_size : getenv("WORLD_SIZE");
	const char *device_s = a->device ? a->device : by_hand ? NULL : getenv("LOCAL_RANK");
	int ret;

	if (by_hand && (!a->world_size || !a->rendezvous))
		return cmd_usage_error("bench nccl", "--rank needs --world-size and --rendezvous");
	if ((ret = parse_rank_arg("world size", world_s, 1, NCCL_MAX_RANKS, &me.world_size)) ||
	    (ret = parse_rank_arg("rank", rank_s, 0, me.world_size - 1, &me.rank)))
		return ret;
	if (device_s && (ret = parse_rank_arg("device", device_s, 0, 1023, &me.device)))
		return ret;
	if (by_hand)
		strbuf_addstr(&addr, a->rendezvous);
	else
		strbuf_addf(&addr, "%s:%s", getenv("MASTER_ADDR"), getenv("MASTER_PORT"));
	const char *colon = strrchr(addr.buf, ':');
	uint32_t port;
	if (!colon || colon == addr.buf || parse_u32(colon + 1, &port) < 0 || port == 0 ||
	    port > 65535) {
		ret = cmd_usage_error("bench nccl", "bad rendezvous '%s': HOST:PORT", addr.buf);
		strbuf_release(&addr);
		return ret;
	}
	me.rendezvous = addr.buf;
	if (o->root >= me.world_size) {
		strbuf_release(&addr);
		return cmd_usage_error("bench nccl", "--root-rank %d: there are %d ranks", o->root,
				       me.world_size);
	}
	ret = run_rank(o, &me);
	strbuf_release(&addr);
	return ret;
}

static bool under_launch(void)
{
	return getenv("RANK") && getenv("WORLD_SIZE") && getenv("MASTER_ADDR") &&
	       getenv("MASTER_PORT");
}

static int bench_nccl(const struct cmd *cmd, int argc, char **argv)
{
	struct nccl_args a = {
		.ops = "all_reduce",
		.dtype = "float",
		.redop = "sum",
		.iters = NCCL_DEFAULT_ITERS,
		.warmup = NCCL_DEFAULT_WARMUP,
		.check = 1,
		.check_on = "auto",
		.bind = "core",
		.timeout = NCCL_DEFAULT_TIMEOUT,
	};
	const struct opt opts[] = {
		OPT_STRING(0, "op", &a.ops, "OP", "collective(s) to time (all_reduce)"),
		OPT_STRING('b', "minbytes", &a.min, "SIZE", "smallest size (8)"),
		OPT_STRING('e', "maxbytes", &a.max, "SIZE",
			   "largest size (1G, within free memory)"),
		OPT_UINT('f', "stepfactor", &a.factor, "N", "multiply the size by N each step (2)"),
		OPT_STRING('i', "stepbytes", &a.step, "SIZE", "add SIZE each step instead"),
		OPT_UINT('n', "iters", &a.iters, "N", "timed operations per size (20)"),
		OPT_UINT('w', "warmup", &a.warmup, "N", "warm-up operations per size (1)"),
		OPT_STRING(0, "precision", &a.precision, "P%",
			   "adaptive: time until the mean is known within P percent"),
		OPT_STRING('d', "dtype", &a.dtype, "TYPE", "data type (float)"),
		OPT_CHOICE(0, "redop", &a.redop, "OP", "sum|prod|max|min|avg",
			   "reduction: sum, prod, max, min, avg (sum)"),
		OPT_UINT(0, "root-rank", &a.root, "RANK", "root of broadcast and reduce (0)"),
		OPT_RENAMED('r', NULL, "--root-rank"),
		OPT_STRING(0, "root", &a.host_root, "DIR",
			   "read the host's CPU topology and memory below DIR (env SPARKCTL_ROOT)"),
		OPT_UINT('c', "check", &a.check, "0|1", "check the results (1)"),
		OPT_CHOICE(0, "check-on", &a.check_on, "WHERE", "auto|gpu|host",
			   "where the check runs: gpu, host (with copies), or auto: the GPU where "
			   "the driver compiles the kernels (auto)"),
		OPT_UINT('C', "report-cputime", &a.cputime, "0|1",
			 "time columns: the host's time to issue an operation (0)"),
		OPT_UINT(0, "gpus", &a.gpus, "N", "GPUs of this node to use, one rank each (all)"),
		OPT_STRING(0, "bind", &a.bind, "core|numa|none",
			   "run each rank on one core next to its GPU, on its GPU's NUMA node, or "
			   "as started (core)"),
		OPT_BOOL(0, "json", &a.json, "print every row and the path as JSON, not the table"),
		OPT_STRING('o', "output", &a.output, "FILE",
			   "also write every row and the path as JSON to FILE"),
		OPT_BOOL(0, "force", &a.force, "allow -e beyond what free memory allows"),
		OPT_UINT(0, "op-timeout", &a.timeout, "S",
			 "abort a collective (or a wait for another rank) after S seconds (60)"),
		OPT_RENAMED(0, "timeout", "--op-timeout"),
		OPT_STRING(0, "rank", &a.rank, "R",
			   "this process is rank R (by hand, across nodes)"),
		OPT_STRING(0, "world-size", &a.world_size, "N", "of N ranks"),
		OPT_STRING(0, "rendezvous", &a.rendezvous, "HOST:PORT",
			   "where rank 0 listens for the others"),
		OPT_STRING(0, "device", &a.device, "N", "CUDA device (the rank's local rank)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct nccl_bench_opts o;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	ret = nccl_options(&a, &o);
	if (ret != SPARKCTL_EXIT_OK)
		return ret;
	if (a.rank || a.world_size || a.rendezvous) {
		if (a.gpus)
			return cmd_usage_error("bench nccl", "--gpus is for one node; with --rank "
							     "each process is one rank");
		return run_one_rank(&a, &o, true);
	}
	if (under_launch() && !a.gpus)
		return run_one_rank(&a, &o, false);
	if (a.device)
		return cmd_usage_error("bench nccl", "--device goes with --rank");
	return run_local(&a, &o);
}

const struct cmd cmd_bench_nccl = {
	.name = "nccl",
	.title = "bench nccl",
	.fn = bench_nccl,
	.summary = "time NCCL collectives (nccl-tests' table, no MPI)",
	.usage = nccl_usage,
	.description = nccl_description,
	.exit_status =
		"0 all values right, 1 other errors, 2 usage (also -e beyond free memory without "
		"--force), 3 no GPU or NCCL, 4 wrong values, 5 a collective timed out",
};

static const char *const bench_usage[] = {
	"sparkctl bench BENCHMARK [options]",
	NULL,
};

static const struct cmd *const bench_verbs[] = { &cmd_bench_nccl, &cmd_bench_link, &cmd_bench_ddp,
						 NULL };

const struct cmd cmd_bench = {
	.name = "bench",
	.summary = "time NCCL collectives; measure RDMA and TCP links and training scaling",
	.usage = bench_usage,
	.verbs = bench_verbs,
	.verb_noun = "benchmark",
};
