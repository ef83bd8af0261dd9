/*
 * nccl_run.c - one rank of 'sparkctl bench nccl': load CUDA and NCCL, join
 * the other ranks, set up the device, the buffers and the communicator,
 * sweep each collective (nccl_measure.c), and on rank 0 report it
 * (view/nccl_view.h).
 */
#include "sparkctl.h"

#include "bench/nccl_rank.h"
#include "lib/xalloc.h"
#include "view/nccl_view.h"
#include "view/progress.h"

#define NCCL_LOG_MAX (4u << 20)

/* The first failure among the ranks, as every rank learns it. */
struct verdict {
	int32_t rank; /* -1: none */
	int32_t code; /* -errno */
	char message[480];
};

int nccl_cu_fail(struct bench *b, cu_result cr, const char *what)
{
	strbuf_addf(b->err, "%s failed: %s", what, cuda_strerror(&b->gpu.cuda, cr));
	return -EIO;
}

/*
 * Wait for the copies and memsets just issued.  They go to the legacy
 * default stream, which our non-blocking stream does not wait for, and
 * they may return before the device has the data (a pageable copy returns
 * once it is staged; a memset is asynchronous): without this a collective
 * could read or write the buffers under them.
 */
int nccl_sync_default_stream(struct bench *b)
{
	cu_result cr = b->gpu.cuda.stream_synchronize(NULL);

	return cr == CUDA_SUCCESS ? 0 : nccl_cu_fail(b, cr, "cuStreamSynchronize");
}

/* The last "NCCL WARN" line of our NCCL log: NCCL writes its warnings there, not to stderr. */
void nccl_add_warning(struct bench *b)
{
	struct strbuf log = STRBUF_INIT;
	const char *w, *last = NULL;

	if (!b->log_path || strbuf_read_path(&log, b->log_path, NCCL_LOG_MAX) < 0)
		goto out;
	for (w = log.buf; (w = strstr(w, "NCCL WARN ")); w++)
		last = w + strlen("NCCL WARN ");
	if (last)
		strbuf_addf(b->err, "; NCCL: %.*s", (int)strcspn(last, "\n"), last);
out:
	strbuf_release(&log);
}

int nccl_fail(struct bench *b, nccl_result r, const char *what)
{
	strbuf_addf(b->err, "%s failed: ", what);
	nccl_describe(&b->gpu.nccl, b->gpu.comm, r, b->err);
	nccl_add_warning(b);
	return -EIO;
}

/*
 * Every rank reports how its step went; all learn the first failure, so
 * that no rank waits for one that has given up.  A failure elsewhere
 * becomes this rank's error.
 */
int nccl_agree(struct bench *b, int r)
{
	struct verdict mine = { .rank = -1 }, *all = NULL, first = { .rank = -1 };
	struct strbuf rdv_err = STRBUF_INIT;
	int rr;

	if (r < 0) {
		mine.rank = b->team.rank;
		mine.code = r;
		snprintf(mine.message, sizeof(mine.message), "%s", b->err->buf);
	}
	if (b->team.rank == 0)
		all = xcalloc((size_t)b->team.n, sizeof(*all));
	rr = rdv_gather(b->team.rdv, &mine, sizeof(mine), all, (int)b->o->timeout_ms, &rdv_err);
	if (rr == 0 && b->team.rank == 0) {
		for (int i = 0; i < b->team.n; i++)
			if (all[i].rank >= 0) {
				first = all[i];
				break;
			}
	}
	if (rr == 0)
		rr = rdv_broadcast(b->team.rdv, &first, sizeof(first), (int)b->o->timeout_ms,
				   &rdv_err);
	free(all);
	if (rr < 0) {
		if (r == 0) {
			strbuf_reset(b->err);
			strbuf_add(b->err, rdv_err.buf, rdv_err.len);
			r = rr;
		}
	} else if (r == 0 && first.rank >= 0) {
		first.message[sizeof(first.message) - 1] = '\0';
		strbuf_addf(b->err, "rank %d: %s", (int)first.rank, first.message);
		r = first.code < 0 ? first.code : -EIO;
	}
	strbuf_release(&rdv_err);
	return r;
}

/*
 * The check runs on the GPU where the driver compiles its kernels; else,
 * unless --check-on gpu, on the host, and the report says why.
 */
static int load_check_kernels(struct bench *b)
{
	int r;

	if (!b->o->check || b->o->check_on == NCCL_CHECK_HOST)
		return 0;
	r = nccl_kernels_load(&b->gpu.cuda, b->gpu.dev, &b->gpu.kernels, &b->gpu.check_note);
	if (r == 0) {
		b->gpu.check_on_gpu = true;
		return 0;
	}
	if (b->o->check_on == NCCL_CHECK_GPU) {
		strbuf_addf(b->err, "--check-on gpu: %s", b->gpu.check_note.buf);
		return -ENODEV;
	}
	return 0;
}

static int open_libraries(struct bench *b)
{
	int count = 0;
	cu_result cr;

	struct strbuf why = STRBUF_INIT;
	const char *lib = CUDA_SONAME;

	if (cuda_open(&b->gpu.cuda, true, &why) == 0) {
		lib = NCCL_SONAME;
		if (nccl_open(&b->gpu.nccl, &why) == 0)
			lib = NULL;
	}
	if (lib) {
		/* The loader names the library; a missing symbol does not. */
		if (strstr(why.buf, lib))
			strbuf_addstr(b->err, why.buf);
		else
			strbuf_addf(b->err, "%s: %s", lib, why.buf);
		strbuf_release(&why);
		return -ENOENT;
	}
	strbuf_release(&why);
	cr = b->gpu.cuda.device_get_count(&count);
	if (cr != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuDeviceGetCount");
	if (b->gpu.ordinal < 0 || b->gpu.ordinal >= count) {
		strbuf_addf(b->err, "needs GPU %d but this host has %d", b->gpu.ordinal, count);
		return -ENODEV;
	}
	if ((cr = b->gpu.cuda.device_get(&b->gpu.dev, b->gpu.ordinal)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuDeviceGet");
	if ((cr = b->gpu.cuda.primary_ctx_retain(&b->gpu.ctx, b->gpu.dev)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuDevicePrimaryCtxRetain");
	b->gpu.ctx_retained = true;
	/* NCCL's own (static) runtime uses the context current on this thread. */
	if ((cr = b->gpu.cuda.ctx_set_current(b->gpu.ctx)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuCtxSetCurrent");
	return load_check_kernels(b);
}

static void describe_device(struct bench *b)
{
	struct nccl_rank_info *ri = &b->team.info;
	int v;

	ri->pid = (int32_t)getpid();
	ri->device = b->gpu.ordinal;
	if (b->gpu.cuda.device_get_name &&
	    b->gpu.cuda.device_get_name(ri->name, sizeof(ri->name), b->gpu.dev))
		snprintf(ri->name, sizeof(ri->name), "unknown GPU");
	ri->pci_domain =
		b->gpu.cuda.device_get_attribute(&v, CU_ATTR_PCI_DOMAIN_ID, b->gpu.dev) ? 0 : v;
	ri->pci_bus = b->gpu.cuda.device_get_attribute(&v, CU_ATTR_PCI_BUS_ID, b->gpu.dev) ? 0 : v;
	ri->pci_device =
		b->gpu.cuda.device_get_attribute(&v, CU_ATTR_PCI_DEVICE_ID, b->gpu.dev) ? 0 : v;
}

/*
 * Where NCCL has ncclMemAlloc (2.19), the buffers come from it, as
 * nccl-tests allocates them: cuMem memory at the driver's granularity,
 * mapped for every peer GPU.  NCCL's transports treat such buffers
 * differently from cuMemAlloc's, so the figures would differ with
 * another allocator.
 */
static bool nccl_allocates(const struct bench *b)
{
	return b->gpu.nccl.mem_alloc && b->gpu.nccl.mem_free;
}

static int alloc_device(struct bench *b, cu_deviceptr *ptr, size_t bytes, const char *which)
{
	struct strbuf what = STRBUF_INIT;
	int r = 0;

	if (nccl_allocates(b)) {
		void *p = NULL;
		nccl_result nr = b->gpu.nccl.mem_alloc(&p, bytes);
		if (nr == NCCL_SUCCESS) {
			*ptr = (cu_deviceptr)(uintptr_t)p;
		} else {
			strbuf_addf(&what, "ncclMemAlloc (%s buffer)", which);
			r = nccl_fail(b, nr, what.buf);
		}
	} else {
		cu_result cr = b->gpu.cuda.mem_alloc(ptr, bytes);
		if (cr != CUDA_SUCCESS) {
			strbuf_addf(&what, "cuMemAlloc (%s buffer)", which);
			r = nccl_cu_fail(b, cr, what.buf);
		}
	}
	strbuf_release(&what);
	return r;
}

static void free_device(struct bench *b, cu_deviceptr ptr)
{
	if (!ptr)
		return;
	if (nccl_allocates(b))
		b->gpu.nccl.mem_free(devptr(ptr, 0));
	else
		b->gpu.cuda.mem_free(ptr);
}

static int alloc_buffers(struct bench *b)
{
	size_t bytes = b->gpu.max_bytes > 256 ? (size_t)b->gpu.max_bytes : 256;
	cu_result cr;

	if (alloc_device(b, &b->gpu.sendbuf, bytes, "send") < 0 ||
	    alloc_device(b, &b->gpu.recvbuf, bytes, "receive") < 0)
		return -EIO;
	if ((cr = b->gpu.cuda.memset_d8(b->gpu.sendbuf, 0, bytes)) != CUDA_SUCCESS ||
	    (cr = b->gpu.cuda.memset_d8(b->gpu.recvbuf, 0, bytes)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemsetD8");
	if (nccl_sync_default_stream(b) < 0)
		return -EIO;
	if (b->o->check && !b->gpu.check_on_gpu) {
		b->gpu.host_in = malloc(bytes);
		b->gpu.host_out = malloc(bytes);
		if (!b->gpu.host_in || !b->gpu.host_out) {
			strbuf_addf(b->err,
				    "cannot allocate %zu bytes of host memory for the check",
				    bytes);
			return -ENOMEM;
		}
	}
	if ((cr = b->gpu.cuda.stream_create(&b->gpu.stream, CU_STREAM_FLAG_NON_BLOCKING)) !=
	    CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuStreamCreate");
	return 0;
}

/*
 * NCCL says which transport and devices it chose only in its INFO log.
 * Unless the caller set NCCL_DEBUG, send that log to a file of ours.
 */
static void setup_nccl_log(struct bench *b)
{
	const char *tmp = getenv("TMPDIR");
	struct strbuf path = STRBUF_INIT;

	if (getenv("NCCL_DEBUG"))
		return;
	strbuf_addf(&path, "%s/sparkctl-nccl-%d.log", tmp && *tmp ? tmp : "/tmp", (int)getpid());
	setenv("NCCL_DEBUG", "INFO", 1);
	if (!getenv("NCCL_DEBUG_SUBSYS"))
		setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 1);
	setenv("NCCL_DEBUG_FILE", path.buf, 1);
	b->log_path = strbuf_detach(&path, NULL);
}

static void read_nccl_path(struct bench *b)
{
	struct strbuf log = STRBUF_INIT, line = STRBUF_INIT;
	struct perf_nccl_path path;

	if (!b->log_path) {
		strbuf_addstr(&line,
			      "not read: NCCL_DEBUG is set, so NCCL's log is not sparkctl's");
	} else if (strbuf_read_path(&log, b->log_path, NCCL_LOG_MAX) < 0) {
		strbuf_addstr(&line, "unknown (NCCL wrote no log)");
	} else {
		perf_parse_nccl_log(log.buf, &path);
		perf_nccl_path_describe(&path, &line);
	}
	snprintf(b->team.info.path, sizeof(b->team.info.path), "%s", line.buf);
	strbuf_release(&log);
	strbuf_release(&line);
}

static int init_comm(struct bench *b)
{
	const char *what = "ncclCommInitRank";
	nccl_unique_id id;
	nccl_result nr;
	int r;

	memset(&id, 0, sizeof(id));
	if (b->team.rank == 0 && (nr = b->gpu.nccl.get_unique_id(&id)) != NCCL_SUCCESS)
		r = nccl_fail(b, nr, "ncclGetUniqueId");
	else
		r = 0;
	r = nccl_agree(b, r);
	if (r < 0)
		return r;
	r = rdv_broadcast(b->team.rdv, &id, sizeof(id), (int)b->o->timeout_ms, b->err);
	if (r < 0)
		return r;
	/*
	 * From 2.28, nccl-tests sets nvlinkCentricSched, a launch attribute
	 * of Blackwell GPUs (GB10 among them) that NCCL leaves off; so do we,
	 * to measure what nccl-tests measures.  NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE
	 * still overrides it.
	 */
	if (b->gpu.nccl.version >= 22800 && b->gpu.nccl.comm_init_rank_config) {
		struct nccl_config_v22800 config;
		nccl_config_init(&config);
		config.nvlink_centric_sched = 1;
		nr = b->gpu.nccl.comm_init_rank_config(&b->gpu.comm, b->team.n, id, b->team.rank,
						       &config);
		what = "ncclCommInitRankConfig";
	} else {
		nr = b->gpu.nccl.comm_init_rank(&b->gpu.comm, b->team.n, id, b->team.rank);
	}
	if (nr != NCCL_SUCCESS) {
		b->gpu.comm = NULL;
		return nccl_fail(b, nr, what);
	}
	return 0;
}

/* The run as rank 0's report shows it. */
static void report_run(struct bench *b, struct nccl_report_run *run)
{
	int driver = 0;

	b->gpu.cuda.driver_get_version(&driver);
	strbuf_reset(&b->nccl_version);
	nccl_version_string(b->gpu.nccl.version, &b->nccl_version);
	*run = (struct nccl_report_run){
		.o = b->o,
		.nranks = b->team.n,
		.max_bytes = b->gpu.max_bytes,
		.nccl_version = b->nccl_version.buf,
		.cuda_driver = driver,
		.allocator = nccl_allocates(b) ? "ncclMemAlloc" : "cuMemAlloc",
		.check_on = !b->o->check	  ? NULL
			    : b->gpu.check_on_gpu ? "gpu"
						  : "host",
		.check_note = b->gpu.check_note.len ? b->gpu.check_note.buf : NULL,
		.ranks = b->team.infos,
		.hostnames = b->team.hostnames,
	};
}

/* How many sizes the sweep times. */
static unsigned count_sizes(const struct bench *b)
{
	unsigned n = 0;

	for (uint64_t size = b->o->min_bytes; size <= b->gpu.max_bytes;
	     size = perf_sweep_next(size, b->o->factor, b->o->step))
		n++;
	return n;
}

/* size as the progress line says it: in the largest unit it is a whole number of. */
static void describe_size(uint64_t size, struct strbuf *out)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (u + 1 < ARRAY_SIZE(units) && size >= 1024 && size % 1024 == 0) {
		size /= 1024;
		u++;
	}
	strbuf_addf(out, "%" PRIu64 " %s", size, units[u]);
}

/*
 * The progress line names the size about to be timed.  It is drawn here,
 * between two sizes, never while one is timed: this rank runs no loop
 * whose timer could draw it (view/progress.h).
 */
static void progress_size(enum perf_coll coll, uint64_t size, unsigned index, unsigned total)
{
	struct strbuf text = STRBUF_INIT;

	describe_size(size, &text);
	progress_set("bench nccl: %s %s, %u of %u sizes", perf_coll_info(coll)->name, text.buf,
		     index, total);
	progress_draw_due();
	strbuf_release(&text);
}

/* One collective: warm-up, the sweep, its table. */
static int run_coll(struct bench *b, enum perf_coll coll, unsigned *bad_total)
{
	const struct nccl_bench_opts *o = b->o;
	struct nccl_report_run run;
	unsigned bad = 0, halves = 0, index = 0, total = count_sizes(b);
	double busbw_sum = 0;
	int r;

	report_run(b, &run);
	if (b->report)
		nccl_report_test_begin(b->report, &run, coll);
	progress_set("bench nccl: %s warm-up", perf_coll_info(coll)->name);
	progress_draw_due();
	r = nccl_warm_up(b, coll);
	/* NCCL connects its channels at the first operation: now its log tells the path. */
	if (r == 0) {
		read_nccl_path(b);
		r = rdv_gather(b->team.rdv, &b->team.info, sizeof(b->team.info), b->team.infos,
			       (int)o->timeout_ms, b->err);
	}
	if (r == 0 && b->report)
		nccl_report_paths(b->report, &run);
	for (uint64_t size = o->min_bytes; r == 0 && size <= b->gpu.max_bytes;
	     size = perf_sweep_next(size, o->factor, o->step)) {
		struct perf_row row;
		progress_size(coll, size, ++index, total);
		r = nccl_measure_row(b, coll, size, &row, &bad);
		if (r < 0)
			break;
		busbw_sum += row.out_of_place.busbw + row.in_place.busbw;
		halves += 2;
		if (b->report)
			nccl_report_row(b->report, &row);
	}
	if (r == 0 && b->report)
		nccl_report_test_end(b->report, coll, bad, halves ? busbw_sum / halves : 0);
	if (r == 0)
		*bad_total += bad;
	return r;
}

/* Join the other ranks (rank 0 listens first, unless the caller bound the socket). */
static int join(struct bench *b, const struct nccl_bench_rank *me)
{
	int listen_fd = me->listen_fd, r;

	if (me->rank == 0 && listen_fd < 0) {
		const char *colon = strrchr(me->rendezvous, ':');
		uint16_t port = (uint16_t)strtoul(colon ? colon + 1 : "0", NULL, 10);
		r = rdv_listen(NULL, port, &listen_fd, &port, b->err);
		if (r < 0)
			return r;
	}
	return rdv_join(&b->team.rdv, me->rank, me->world_size, listen_fd,
			me->rank == 0 ? NULL : me->rendezvous, (int)b->o->timeout_ms, b->err);
}

/*
 * The top of the sweep within bound, the smallest any rank allows: -e is
 * lowered to it, or refused above it without --force.
 */
static int fit_sweep(struct bench *b, uint64_t bound)
{
	const struct nccl_bench_opts *o = b->o;

	b->gpu.max_bytes = o->max_bytes;
	if (b->gpu.max_bytes > bound && o->max_given && !o->force) {
		strbuf_addf(b->err,
			    "-e %" PRIu64 " exceeds the %" PRIu64
			    " bytes that free memory allows (with room for NCCL and the check); "
			    "a larger size can freeze a unified-memory machine: --force to run it "
			    "anyway",
			    o->max_bytes, bound);
		return -E2BIG;
	}
	if (b->gpu.max_bytes > bound && !o->max_given) {
		b->gpu.max_bytes = bound;
		if (b->report)
			nccl_report_note(b->report,
					 "# Reducing maxBytes to %" PRIu64
					 " due to memory limitation\n",
					 bound);
	}
	if (b->gpu.max_bytes < o->min_bytes) {
		strbuf_addf(b->err,
			    "free memory allows at most %" PRIu64 " bytes, below -b %" PRIu64,
			    b->gpu.max_bytes, o->min_bytes);
		return -E2BIG;
	}
	return 0;
}

/*
 * Every rank checks in the same place: on the GPU only where every rank
 * loaded the kernels, so that the report says one thing.
 */
static int agree_check_place(struct bench *b)
{
	uint64_t on_gpu = b->gpu.check_on_gpu;
	int r = rdv_allreduce_u64(b->team.rdv, &on_gpu, 1, RDV_MIN, (int)b->o->timeout_ms, b->err);

	if (r == 0 && b->gpu.check_on_gpu && !on_gpu) {
		nccl_kernels_unload(&b->gpu.cuda, &b->gpu.kernels);
		b->gpu.check_on_gpu = false;
		strbuf_addstr(&b->gpu.check_note, "another rank could not load the check kernels");
	}
	return r;
}

/* This rank's host files, libraries, device, CPUs; the memory bound, agreed by all. */
static int open_rank(struct bench *b, uint64_t *bound)
{
	int r = rootfs_open(&b->host, b->o->host_root);

	if (r < 0) {
		strbuf_addf(b->err, "cannot open the host's files below %s: %s", b->o->host_root,
			    strerror(-r));
		r = -EIO; /* a missing root is not a missing GPU (exit 3) */
	} else {
		b->host_open = true;
	}
	if (r == 0)
		r = open_libraries(b);
	r = nccl_agree(b, r);
	if (r == 0)
		r = agree_check_place(b);
	if (r == 0) {
		describe_device(b);
		nccl_bind_rank(b);
		r = nccl_memory_bound(b, bound);
	}
	r = nccl_agree(b, r);
	if (r == 0)
		r = rdv_allreduce_u64(b->team.rdv, bound, 1, RDV_MIN, (int)b->o->timeout_ms,
				      b->err);
	return r;
}

static int setup(struct bench *b, const struct nccl_bench_rank *me)
{
	uint64_t bound = 0;
	int r = join(b, me);

	if (r < 0)
		return r;
	b->gpu.ordinal = me->device >= 0 ? me->device : rdv_local_rank(b->team.rdv);
	setup_nccl_log(b);
	r = open_rank(b, &bound);
	nccl_step_done(b, NCCL_STEP_LIBRARIES);
	if (r < 0 || (r = fit_sweep(b, bound)) < 0)
		return r;
	if (b->team.rank == 0) {
		b->team.infos = xcalloc((size_t)b->team.n, sizeof(*b->team.infos));
		b->team.hostnames = xcalloc((size_t)b->team.n, sizeof(*b->team.hostnames));
		for (int k = 0; k < b->team.n; k++)
			b->team.hostnames[k] = rdv_hostname(b->team.rdv, k);
	}
	r = nccl_agree(b, alloc_buffers(b));
	nccl_step_done(b, NCCL_STEP_BUFFERS);
	if (r == 0)
		r = rdv_gather(b->team.rdv, &b->team.info, sizeof(b->team.info), b->team.infos,
			       (int)b->o->timeout_ms, b->err);
	if (r == 0)
		r = nccl_agree(b, init_comm(b));
	nccl_step_done(b, NCCL_STEP_COMM);
	return r;
}

/*
 * What a run that ended well leaves for the end of the process: kept here,
 * reachable, so that a leak check at that end does not count it.
 */
static struct nccl_gpu left_live;

bool nccl_bench_left_live(void)
{
	return left_live.comm != NULL;
}

/*
 * Hand the communicator, the GPU's memory, the context and the libraries
 * over to the end of the process (nccl_bench_run()'s comment says why).
 * Every rank has passed the last agreement after its last operation, so
 * no peer uses this rank's memory any more.
 */
static void leave_gpu_live(struct bench *b)
{
	left_live = b->gpu;
	b->gpu.comm = NULL;
	b->gpu.nr_events = 0;
	b->gpu.stream = NULL;
	b->gpu.sendbuf = b->gpu.recvbuf = 0;
	b->gpu.check_on_gpu = false;
	b->gpu.ctx_retained = false;
	/* The check note stays ours to release; left_live does not use it. */
	left_live.check_note = (struct strbuf)STRBUF_INIT;
}

static void teardown(struct bench *b, bool failed, bool destroy)
{
	if (!failed && !destroy && b->gpu.comm)
		leave_gpu_live(b);
	if (b->gpu.comm) {
		if (failed)
			b->gpu.nccl.comm_abort(b->gpu.comm);
		else
			b->gpu.nccl.comm_destroy(b->gpu.comm);
	}
	nccl_step_done(b, NCCL_STEP_DESTROYED);
	for (unsigned i = 0; i < b->gpu.nr_events; i++)
		b->gpu.cuda.event_destroy(b->gpu.events[i]);
	if (b->gpu.stream)
		b->gpu.cuda.stream_destroy(b->gpu.stream);
	free_device(b, b->gpu.sendbuf);
	free_device(b, b->gpu.recvbuf);
	if (b->gpu.check_on_gpu)
		nccl_kernels_unload(&b->gpu.cuda, &b->gpu.kernels);
	strbuf_release(&b->gpu.check_note);
	if (b->gpu.ctx_retained)
		b->gpu.cuda.primary_ctx_release(b->gpu.dev);
	free(b->gpu.host_in);
	free(b->gpu.host_out);
	free(b->team.infos);
	free(b->team.hostnames);
	strbuf_release(&b->nccl_version);
	if (b->log_path) {
		unlink(b->log_path);
		free(b->log_path);
	}
	rdv_close(b->team.rdv);
	if (b->host_open)
		rootfs_close(&b->host);
	/*
	 * NCCL's threads may still run in an aborted communicator, or in the
	 * one left live: keep its code mapped.
	 */
	if (!failed && !nccl_bench_left_live()) {
		nccl_close(&b->gpu.nccl);
		cuda_close(&b->gpu.cuda);
	}
	nccl_step_done(b, NCCL_STEP_END);
}

enum nccl_bench_status nccl_bench_run(const struct nccl_bench_opts *opts,
				      const struct nccl_bench_rank *me, FILE *out,
				      struct strbuf *err)
{
	struct bench b = {
		.o = opts,
		.err = err,
		.team = { .rank = me->rank, .n = me->world_size },
		.nccl_version = STRBUF_INIT,
		.gpu.check_note = STRBUF_INIT,
		.start_ns = monotonic_ns(),
		.step_seconds = me->step_seconds,
	};
	enum nccl_bench_status status = NCCL_BENCH_OK;
	struct nccl_report report;
	unsigned bad = 0;
	int r;

	/* Rank 0 reports: the table unless --json, the JSON with --json or -o FILE. */
	if (me->rank == 0) {
		nccl_report_init(&report, streq(opts->json_path, "-") ? NULL : out,
				 opts->json_path != NULL);
		b.report = &report;
	}
	/* The rank that prints the table says where its sweep is, never beside --json. */
	progress_begin(me->rank == 0 && !streq(opts->json_path, "-"),
		       "bench nccl: setting up %d rank%s", me->world_size,
		       me->world_size == 1 ? "" : "s");
	r = setup(&b, me);
	if (r == 0 && b.report) {
		struct nccl_report_run run;
		report_run(&b, &run);
		nccl_report_start(b.report, &run);
	}
	for (size_t i = 0; r == 0 && i < opts->nr_colls; i++)
		r = nccl_agree(&b, run_coll(&b, opts->colls[i], &bad));
	if (r == 0 && b.report)
		r = nccl_report_finish(b.report, bad, opts->json_path, err);
	nccl_step_done(&b, NCCL_STEP_SWEEP);
	progress_end(); /* before the caller prints an error */
	if (r == -ENOENT || r == -ENODEV)
		status = NCCL_BENCH_UNAVAILABLE;
	else if (r == -E2BIG)
		status = NCCL_BENCH_BAD_SIZE;
	else if (r == -ETIMEDOUT && b.timed_out)
		status = NCCL_BENCH_TIMEOUT;
	else if (r < 0)
		status = NCCL_BENCH_ERROR;
	else if (bad)
		status = NCCL_BENCH_WRONG;
	teardown(&b, r < 0, me->destroy);
	if (b.report)
		nccl_report_release(b.report);
	return status;
}
