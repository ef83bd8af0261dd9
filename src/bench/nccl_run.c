#include "sparkctl.h"

#include <math.h>
#include <sched.h>

#include "bench/nccl_run.h"
#include "bench/rendezvous.h"
#include "lib/atomic_file.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "nv/cuda.h"
#include "nv/nccl.h"
#include "probe/cpu_topology.h"
#include "probe/meminfo.h"
#include "probe/pci_functions.h"

#define GIB		     (UINT64_C(1) << 30)
/* Adaptive mode: a timed batch lasts about this long, or holds --iters operations. */
#define BATCH_TARGET_US	     1000.0
#define ADAPTIVE_MIN_BATCHES 3
#define ADAPTIVE_MAX_BATCHES 50
#define ADAPTIVE_MAX_SECONDS 5.0
#define NCCL_LOG_MAX	     (4u << 20)

/* What every rank tells rank 0 about itself, fixed-size for rdv_gather(). */
struct rank_info {
	int32_t pid, device, pci_domain, pci_bus, pci_device;
	char name[96];
	char path[480];
	char cpus[128]; /* the CPUs it runs on, a kernel CPU list */
};

/* The first failure among the ranks, as every rank learns it. */
struct verdict {
	int32_t rank; /* -1: none */
	int32_t code; /* -errno */
	char message[480];
};

struct bench {
	const struct nccl_bench_opts *o;
	struct strbuf *err;
	FILE *out; /* the table; NULL on ranks other than 0 and with --json - */
	struct cuda cuda;
	struct nccl nccl;
	struct rdv *rdv;
	int rank, n;
	int ordinal;
	cu_device dev;
	cu_context ctx;
	bool ctx_retained;
	cu_stream stream;
	nccl_comm comm;
	cu_deviceptr sendbuf, recvbuf;
	uint64_t max_bytes; /* after the memory bound */
	void *host_in, *host_out;
	char *log_path; /* NCCL's log, ours to read and remove */
	struct rank_info info;
	struct rank_info *infos; /* rank 0: every rank's */
	struct rootfs host;	 /* o->host_root, for sysfs and procfs */
	bool host_open;
	unsigned seed;
	bool timed_out;
	json_t *json;
};

static int cu_fail(struct bench *b, cu_result cr, const char *what)
{
	strbuf_addf(b->err, "%s failed: %s", what, cuda_strerror(&b->cuda, cr));
	return -EIO;
}

static void *devptr(cu_deviceptr base, size_t offset)
{
	return (void *)(uintptr_t)(base + offset);
}

/*
 * Wait for the copies and memsets just issued.  They go to the legacy
 * default stream, which our non-blocking stream does not wait for, and
 * they may return before the device has the data (a pageable copy returns
 * once it is staged; a memset is asynchronous): without this a collective
 * could read or write the buffers under them.
 */
static int sync_default_stream(struct bench *b)
{
	cu_result cr = b->cuda.stream_synchronize(NULL);

	return cr == CUDA_SUCCESS ? 0 : cu_fail(b, cr, "cuStreamSynchronize");
}

/* The last "NCCL WARN" line of our NCCL log: NCCL writes its warnings there, not to stderr. */
static void add_nccl_warning(struct bench *b)
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

static int nccl_fail(struct bench *b, nccl_result r, const char *what)
{
	strbuf_addf(b->err, "%s failed: ", what);
	nccl_describe(&b->nccl, b->comm, r, b->err);
	add_nccl_warning(b);
	return -EIO;
}

/*
 * Every rank reports how its step went; all learn the first failure, so
 * that no rank waits for one that has given up.  A failure elsewhere
 * becomes this rank's error.
 */
static int agree(struct bench *b, int r)
{
	struct verdict mine = { .rank = -1 }, *all = NULL, first = { .rank = -1 };
	struct strbuf rdv_err = STRBUF_INIT;
	int rr;

	if (r < 0) {
		mine.rank = b->rank;
		mine.code = r;
		snprintf(mine.message, sizeof(mine.message), "%s", b->err->buf);
	}
	if (b->rank == 0)
		all = xcalloc((size_t)b->n, sizeof(*all));
	rr = rdv_gather(b->rdv, &mine, sizeof(mine), all, (int)b->o->timeout_ms, &rdv_err);
	if (rr == 0 && b->rank == 0) {
		for (int i = 0; i < b->n; i++)
			if (all[i].rank >= 0) {
				first = all[i];
				break;
			}
	}
	if (rr == 0)
		rr = rdv_broadcast(b->rdv, &first, sizeof(first), (int)b->o->timeout_ms, &rdv_err);
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

static int open_libraries(struct bench *b)
{
	int count = 0;
	cu_result cr;

	struct strbuf why = STRBUF_INIT;
	const char *lib = CUDA_SONAME;

	if (cuda_open(&b->cuda, true, &why) == 0) {
		lib = NCCL_SONAME;
		if (nccl_open(&b->nccl, &why) == 0)
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
	cr = b->cuda.device_get_count(&count);
	if (cr != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuDeviceGetCount");
	if (b->ordinal < 0 || b->ordinal >= count) {
		strbuf_addf(b->err, "needs GPU %d but this host has %d", b->ordinal, count);
		return -ENODEV;
	}
	if ((cr = b->cuda.device_get(&b->dev, b->ordinal)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuDeviceGet");
	if ((cr = b->cuda.primary_ctx_retain(&b->ctx, b->dev)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuDevicePrimaryCtxRetain");
	b->ctx_retained = true;
	/* NCCL's own (static) runtime uses the context current on this thread. */
	if ((cr = b->cuda.ctx_set_current(b->ctx)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuCtxSetCurrent");
	return 0;
}

static void describe_device(struct bench *b)
{
	struct rank_info *ri = &b->info;
	int v;

	ri->pid = (int32_t)getpid();
	ri->device = b->ordinal;
	if (b->cuda.device_get_name && b->cuda.device_get_name(ri->name, sizeof(ri->name), b->dev))
		snprintf(ri->name, sizeof(ri->name), "unknown GPU");
	ri->pci_domain = b->cuda.device_get_attribute(&v, CU_ATTR_PCI_DOMAIN_ID, b->dev) ? 0 : v;
	ri->pci_bus = b->cuda.device_get_attribute(&v, CU_ATTR_PCI_BUS_ID, b->dev) ? 0 : v;
	ri->pci_device = b->cuda.device_get_attribute(&v, CU_ATTR_PCI_DEVICE_ID, b->dev) ? 0 : v;
}

/* The core of each allowed CPU: the first CPU of its thread_siblings_list, -1 unknown. */
static void read_cores(struct bench *b, const cpu_set_t *allowed, int *core_of)
{
	struct strbuf list = STRBUF_INIT;

	for (size_t c = 0; c < CPU_SETSIZE; c++) {
		cpu_set_t siblings;
		core_of[c] = -1;
		if (!CPU_ISSET(c, allowed))
			continue;
		strbuf_reset(&list);
		if (cpu_read_siblings(&(struct host_reader){ .root = &b->host }, c, &list) > 0 &&
		    perf_parse_cpulist(list.buf, &siblings) == 0) {
			for (size_t s = 0; s < CPU_SETSIZE; s++) {
				if (CPU_ISSET(s, &siblings)) {
					core_of[c] = (int)s;
					break;
				}
			}
		}
	}
	strbuf_release(&list);
}

/*
 * How fast each allowed CPU can run, to tell the performance cores of a
 * hybrid CPU (GB10: Cortex-X925 and Cortex-A725) from the others: the
 * scheduler's cpu_capacity where the kernel gives it (arm64), else the
 * highest frequency cpufreq allows.  One source for every CPU, or none
 * (all 0): figures of two kinds do not compare.
 */
static void read_capacities(struct bench *b, const cpu_set_t *allowed, unsigned long *capacity)
{
	static const enum cpu_speed_source sources[] = { CPU_SPEED_CAPACITY, CPU_SPEED_MAX_FREQ };
	const struct host_reader rd = { .root = &b->host };

	for (size_t i = 0; i < ARRAY_SIZE(sources); i++) {
		bool all = true;
		memset(capacity, 0, CPU_SETSIZE * sizeof(*capacity));
		for (size_t c = 0; all && c < CPU_SETSIZE; c++) {
			uint64_t v = 0;
			if (!CPU_ISSET(c, allowed))
				continue;
			all = cpu_read_speed(&rd, c, sources[i], &v) > 0 && v > 0 && v <= ULONG_MAX;
			if (all)
				capacity[c] = (unsigned long)v;
		}
		if (all)
			return;
	}
	memset(capacity, 0, CPU_SETSIZE * sizeof(*capacity));
}

/*
 * --bind: core (the default) runs the rank on one physical core next to
 * its GPU (its NUMA node), the fastest first and a different one per local
 * rank (the GPU's ordinal), as mpirun binds each of two nccl-tests
 * processes; numa on every CPU of the node, as an MPI launcher binds ranks
 * to a package.  Small operations are bound by the CPU that issues them: a
 * rank that may migrate among the node's CPUs was slower more often on a
 * shared host (docs/benchmarks.md).  A narrower binding the caller chose
 * (taskset, numactl) is kept: the choice is made within it.  Without a
 * local_cpulist, the node is every CPU the rank may use.  The rank's CPUs
 * end up in its info, for the JSON.
 */
static void bind_rank(struct bench *b)
{
	const struct rank_info *ri = &b->info;
	struct strbuf list = STRBUF_INIT;
	cpu_set_t now, set, near;
	char bdf[32];

	if (sched_getaffinity(0, sizeof(now), &now) != 0)
		goto out;
	set = now;
	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.0", (unsigned)ri->pci_domain,
		 (unsigned)ri->pci_bus, (unsigned)ri->pci_device);
	if (b->o->bind != PERF_BIND_NONE && b->host_open &&
	    pci_read_local_cpulist(&(struct host_reader){ .root = &b->host }, bdf, &list) > 0 &&
	    perf_parse_cpulist(list.buf, &near) == 0) {
		cpu_set_t both;
		CPU_AND(&both, &near, &now);
		if (CPU_COUNT(&both) > 0)
			set = both;
	}
	if (b->o->bind == PERF_BIND_CORE && b->host_open) {
		int core_of[CPU_SETSIZE];
		unsigned long capacity[CPU_SETSIZE];
		cpu_set_t core;
		read_cores(b, &set, core_of);
		read_capacities(b, &set, capacity);
		perf_pick_core(&set, core_of, capacity, (unsigned)b->ordinal, &core);
		if (CPU_COUNT(&core) > 0)
			set = core;
	}
	if (!CPU_EQUAL(&set, &now))
		sched_setaffinity(0, sizeof(set), &set);
	if (sched_getaffinity(0, sizeof(now), &now) == 0) {
		strbuf_reset(&list);
		perf_format_cpulist(&now, &list);
		snprintf(b->info.cpus, sizeof(b->info.cpus), "%s", list.buf);
	}
out:
	strbuf_release(&list);
}

/*
 * The largest size the buffers may have on this rank.  Device memory holds
 * the send and receive buffers; on a GPU that shares the host's memory
 * (GB10) the check's two host buffers come out of the same memory, and
 * the free figure is the kernel's MemAvailable.  The reserve is nccl-tests'
 * (1 GiB + 1 GiB per 16 GiB, at most 4 GiB) for NCCL's own buffers.
 */
static int memory_bound(struct bench *b, uint64_t *ret)
{
	size_t free_b = 0, total_b = 0;
	uint64_t avail, reserve, buffers = 2;
	int integrated = 0;
	cu_result cr = b->cuda.mem_get_info(&free_b, &total_b);

	if (cr != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuMemGetInfo");
	avail = free_b;
	if (b->cuda.device_get_attribute(&integrated, CU_ATTR_INTEGRATED, b->dev) != CUDA_SUCCESS)
		integrated = 0;
	if (integrated) {
		struct meminfo mem;
		if (b->host_open &&
		    meminfo_read(&(struct host_reader){ .root = &b->host }, &mem) > 0 &&
		    mem.mem_available >= 0 && (uint64_t)mem.mem_available < avail)
			avail = (uint64_t)mem.mem_available;
		if (b->o->check)
			buffers += 2;
	}
	reserve = GIB + ((uint64_t)total_b + 16 * GIB - 1) / (16 * GIB) * GIB;
	if (reserve > 5 * GIB)
		reserve = 5 * GIB;
	*ret = avail > reserve ? (avail - reserve) / buffers : 0;
	return 0;
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
	return b->nccl.mem_alloc && b->nccl.mem_free;
}

static int alloc_device(struct bench *b, cu_deviceptr *ptr, size_t bytes, const char *which)
{
	struct strbuf what = STRBUF_INIT;
	int r = 0;

	if (nccl_allocates(b)) {
		void *p = NULL;
		nccl_result nr = b->nccl.mem_alloc(&p, bytes);
		if (nr == NCCL_SUCCESS) {
			*ptr = (cu_deviceptr)(uintptr_t)p;
		} else {
			strbuf_addf(&what, "ncclMemAlloc (%s buffer)", which);
			r = nccl_fail(b, nr, what.buf);
		}
	} else {
		cu_result cr = b->cuda.mem_alloc(ptr, bytes);
		if (cr != CUDA_SUCCESS) {
			strbuf_addf(&what, "cuMemAlloc (%s buffer)", which);
			r = cu_fail(b, cr, what.buf);
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
		b->nccl.mem_free(devptr(ptr, 0));
	else
		b->cuda.mem_free(ptr);
}

static int alloc_buffers(struct bench *b)
{
	size_t bytes = b->max_bytes > 256 ? (size_t)b->max_bytes : 256;
	cu_result cr;

	if (alloc_device(b, &b->sendbuf, bytes, "send") < 0 ||
	    alloc_device(b, &b->recvbuf, bytes, "receive") < 0)
		return -EIO;
	if ((cr = b->cuda.memset_d8(b->sendbuf, 0, bytes)) != CUDA_SUCCESS ||
	    (cr = b->cuda.memset_d8(b->recvbuf, 0, bytes)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuMemsetD8");
	if (sync_default_stream(b) < 0)
		return -EIO;
	if (b->o->check) {
		b->host_in = malloc(bytes);
		b->host_out = malloc(bytes);
		if (!b->host_in || !b->host_out) {
			strbuf_addf(b->err,
				    "cannot allocate %zu bytes of host memory for the check",
				    bytes);
			return -ENOMEM;
		}
	}
	if ((cr = b->cuda.stream_create(&b->stream, CU_STREAM_FLAG_NON_BLOCKING)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuStreamCreate");
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
	snprintf(b->info.path, sizeof(b->info.path), "%s", line.buf);
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
	if (b->rank == 0 && (nr = b->nccl.get_unique_id(&id)) != NCCL_SUCCESS)
		r = nccl_fail(b, nr, "ncclGetUniqueId");
	else
		r = 0;
	r = agree(b, r);
	if (r < 0)
		return r;
	r = rdv_broadcast(b->rdv, &id, sizeof(id), (int)b->o->timeout_ms, b->err);
	if (r < 0)
		return r;
	/*
	 * From 2.28, nccl-tests sets nvlinkCentricSched, a launch attribute
	 * of Blackwell GPUs (GB10 among them) that NCCL leaves off; so do we,
	 * to measure what nccl-tests measures.  NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE
	 * still overrides it.
	 */
	if (b->nccl.version >= 22800 && b->nccl.comm_init_rank_config) {
		struct nccl_config_v22800 config;
		nccl_config_init(&config);
		config.nvlink_centric_sched = 1;
		nr = b->nccl.comm_init_rank_config(&b->comm, b->n, id, b->rank, &config);
		what = "ncclCommInitRankConfig";
	} else {
		nr = b->nccl.comm_init_rank(&b->comm, b->n, id, b->rank);
	}
	if (nr != NCCL_SUCCESS) {
		b->comm = NULL;
		return nccl_fail(b, nr, what);
	}
	return 0;
}

/*
 * Wait for the stream, watching NCCL's asynchronous errors and the
 * deadline; either ends the communicator (ncclCommAbort), so that a rank
 * never hangs on a peer that is gone.
 */
static int wait_stream(struct bench *b, enum perf_coll coll, uint64_t bytes)
{
	uint64_t deadline = monotonic_ms() + b->o->timeout_ms;

	for (;;) {
		cu_result cr = b->cuda.stream_query(b->stream);
		nccl_result async = NCCL_SUCCESS;

		if (cr == CUDA_SUCCESS)
			return 0;
		if (cr != CUDA_ERROR_NOT_READY)
			return cu_fail(b, cr, "cuStreamQuery");
		if (b->nccl.comm_get_async_error(b->comm, &async) == NCCL_SUCCESS &&
		    async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS) {
			strbuf_addf(b->err,
				    "%s of %" PRIu64 " bytes failed: ", perf_coll_info(coll)->name,
				    bytes);
			nccl_describe(&b->nccl, b->comm, async, b->err);
			add_nccl_warning(b);
			b->nccl.comm_abort(b->comm);
			b->comm = NULL;
			return -EIO;
		}
		if (monotonic_ms() >= deadline) {
			strbuf_addf(
				b->err,
				"%s of %" PRIu64 " bytes did not finish within %u s on rank %d; "
				"the communicator was aborted. A peer may be gone or the fabric "
				"stalled: run 'sparkctl doctor' on every node",
				perf_coll_info(coll)->name, bytes, b->o->timeout_ms / 1000,
				b->rank);
			b->nccl.comm_abort(b->comm);
			b->comm = NULL;
			b->timed_out = true;
			return -ETIMEDOUT;
		}
		sched_yield();
	}
}

/* Issue one operation of coll at layout lay; shift rotates through the buffers. */
static int enqueue(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		   bool in_place, size_t shift)
{
	const struct nccl_bench_opts *o = b->o;
	size_t elt = perf_dtype_size(o->dtype);
	cu_deviceptr send_base = in_place ? b->recvbuf : b->sendbuf;
	void *send = devptr(send_base,
			    shift + (in_place ? lay->send_inplace * elt * (size_t)b->rank : 0));
	void *recv = devptr(b->recvbuf,
			    shift + (in_place ? lay->recv_inplace * elt * (size_t)b->rank : 0));
	size_t count = lay->param_count;
	int t = (int)o->dtype, op = (int)o->redop;
	const struct nccl *n = &b->nccl;
	nccl_result r = NCCL_SUCCESS;

	switch (coll) {
	case PERF_ALL_REDUCE:
		r = n->all_reduce(send, recv, count, t, op, b->comm, b->stream);
		break;
	case PERF_ALL_GATHER:
		r = n->all_gather(send, recv, count, t, b->comm, b->stream);
		break;
	case PERF_REDUCE_SCATTER:
		r = n->reduce_scatter(send, recv, count, t, op, b->comm, b->stream);
		break;
	case PERF_BROADCAST:
		r = n->broadcast(send, recv, count, t, o->root, b->comm, b->stream);
		break;
	case PERF_REDUCE:
		r = n->reduce(send, recv, count, t, op, o->root, b->comm, b->stream);
		break;
	case PERF_ALLTOALL:
		if (n->alltoall) {
			r = n->alltoall(send, recv, count, t, b->comm, b->stream);
			break;
		}
		/* Before NCCL 2.28: a send and a receive to every rank, self included. */
		r = n->group_start();
		for (int peer = 0; r == NCCL_SUCCESS && peer < b->n; peer++) {
			size_t off = (size_t)peer * count * elt;
			r = n->send((char *)send + off, count, t, peer, b->comm, b->stream);
			if (r == NCCL_SUCCESS)
				r = n->recv((char *)recv + off, count, t, peer, b->comm, b->stream);
		}
		if (r == NCCL_SUCCESS)
			r = n->group_end();
		else
			n->group_end();
		break;
	case PERF_SENDRECV:
		r = n->group_start();
		if (r == NCCL_SUCCESS)
			r = n->send(send, count, t, (b->rank + 1) % b->n, b->comm, b->stream);
		if (r == NCCL_SUCCESS)
			r = n->recv(recv, count, t, (b->rank + b->n - 1) % b->n, b->comm,
				    b->stream);
		if (r == NCCL_SUCCESS)
			r = n->group_end();
		else
			n->group_end();
		break;
	case PERF_NR_COLLS:
		break;
	}
	if (r != NCCL_SUCCESS) {
		struct strbuf what = STRBUF_INIT;
		strbuf_addf(&what, "%s of %zu bytes", perf_coll_info(coll)->name, lay->size_bytes);
		nccl_fail(b, r, what.buf);
		strbuf_release(&what);
		return -EIO;
	}
	return 0;
}

/* The rotation of iteration iter: nccl-tests' "avoid cache effects". */
static size_t rotation(const struct bench *b, const struct perf_layout *lay, uint64_t iter)
{
	size_t total = lay->size_bytes;
	uint64_t steps = total ? b->max_bytes / total : 1;

	if (steps == 0)
		steps = 1;
	return total * (size_t)(iter % steps);
}

static double elapsed_us(uint64_t start_ns)
{
	return (double)(monotonic_ns() - start_ns) / 1e3;
}

/*
 * Issue ops operations and wait for them.  times[0]: the time per
 * operation until the stream is idle; times[1]: the time per operation
 * the host took to issue them (nccl-tests' cputime), which is most of the
 * first when small operations wait for the CPU rather than the link.
 */
static int timed_ops(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		     bool in_place, uint64_t first_iter, unsigned ops, double times[2])
{
	uint64_t start = monotonic_ns();
	int r = 0;

	for (unsigned i = 0; r == 0 && i < ops; i++)
		r = enqueue(b, coll, lay, in_place, rotation(b, lay, first_iter + i));
	times[1] = elapsed_us(start) / ops;
	if (r == 0)
		r = wait_stream(b, coll, lay->size_bytes);
	times[0] = elapsed_us(start) / ops;
	return r;
}

/* Both figures of timed_ops, averaged over the ranks in one exchange. */
static int rank_mean(struct bench *b, double times[2])
{
	int r = rdv_allreduce_double(b->rdv, times, 2, RDV_SUM, (int)b->o->timeout_ms, b->err);

	times[0] /= b->n;
	times[1] /= b->n;
	return r;
}

/*
 * Time one half-row.  Fixed: iters operations issued back to back, one
 * wait, as nccl-tests times them.  Adaptive: batches of about 1 ms until
 * the mean per-operation time is known to the precision asked.  Every
 * decision uses figures averaged over the ranks, so all decide alike.
 */
static int time_half(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		     bool in_place, struct perf_result *res)
{
	double sync[2], t[2], sum = 0, sumsq = 0, cpu_sum = 0, sync_us;
	unsigned batch, k = 0;
	int r;

	/*
	 * The barrier lets every rank leave within a TCP round trip of the
	 * others; the operation after it completes on all ranks at nearly
	 * the same moment, so the timed loops start together (a rank that
	 * started early would count the others' lateness).
	 */
	r = rdv_barrier(b->rdv, (int)b->o->timeout_ms, b->err);
	if (r == 0)
		r = timed_ops(b, coll, lay, in_place, 0, 1, sync);
	if (r < 0)
		return r;
	if (b->o->precision <= 0) {
		r = timed_ops(b, coll, lay, in_place, 0, b->o->iters, t);
		if (r == 0)
			r = rank_mean(b, t);
		res->time_us = t[0];
		res->cpu_time_us = t[1];
		res->iters = b->o->iters;
		return r;
	}
	sync_us = sync[0];
	r = rdv_allreduce_double(b->rdv, &sync_us, 1, RDV_MAX, (int)b->o->timeout_ms, b->err);
	if (r < 0)
		return r;
	/* Short operations go in batches of --iters at most, as in fixed mode. */
	batch = sync_us > 0 ? (unsigned)fmin(b->o->iters, ceil(BATCH_TARGET_US / sync_us))
			    : b->o->iters;
	if (batch == 0)
		batch = 1;
	uint64_t start = monotonic_ns();
	for (;;) {
		r = timed_ops(b, coll, lay, in_place, (uint64_t)k * batch, batch, t);
		if (r == 0)
			r = rank_mean(b, t);
		if (r < 0)
			return r;
		k++;
		sum += t[0];
		sumsq += t[0] * t[0];
		cpu_sum += t[1];
		if (k >= ADAPTIVE_MIN_BATCHES) {
			double mean = sum / k, var = fmax(0, (sumsq - sum * sum / k) / (k - 1));
			double half_width = 1.96 * sqrt(var / k) / mean;
			/*
			 * Long operations (a batch of fewer than --iters) stop by
			 * --iters at the latest: adaptive never runs longer than
			 * fixed mode there, where a sweep spends its time.
			 */
			bool enough = batch < b->o->iters ? (uint64_t)k * batch >= b->o->iters
							  : k >= ADAPTIVE_MAX_BATCHES;
			if (half_width <= b->o->precision || enough)
				break;
			/* Every rank has the same k and figures, but not the same clock. */
			double spent = elapsed_us(start) / 1e6;
			r = rdv_allreduce_double(b->rdv, &spent, 1, RDV_MAX, (int)b->o->timeout_ms,
						 b->err);
			if (r < 0)
				return r;
			if (spent >= ADAPTIVE_MAX_SECONDS)
				break;
		}
	}
	res->time_us = sum / k;
	res->cpu_time_us = cpu_sum / k;
	res->iters = batch * k;
	return 0;
}

/* The element i of rank src's input. */
static double input(const struct bench *b, enum perf_redop pattern, int src, uint64_t i)
{
	return perf_input_value(pattern, b->o->dtype, b->n, src, i, b->seed);
}

/*
 * Run one operation on known data and count the wrong elements of this
 * rank's output.  The data is made and checked on the host, outside the
 * timed loop, with values whose reductions are exact.
 */
static int check_half(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		      bool in_place, uint64_t *wrong)
{
	const struct nccl_bench_opts *o = b->o;
	enum perf_dtype t = o->dtype;
	enum perf_redop pat = perf_coll_info(coll)->has_redop ? o->redop : PERF_MAX;
	size_t elt = perf_dtype_size(t), chunk = lay->param_count;
	size_t send_off = in_place ? lay->send_inplace * elt * (size_t)b->rank : 0;
	cu_deviceptr send_base = in_place ? b->recvbuf : b->sendbuf;
	size_t recv_off = in_place ? lay->recv_inplace * elt * (size_t)b->rank : 0;
	size_t clear = in_place ? lay->size_bytes : lay->recv_count * elt;
	int me = b->rank, n = b->n, r;
	cu_result cr;

	*wrong = 0;
	b->seed++;
	for (size_t i = 0; i < lay->send_count; i++)
		perf_store(t, b->host_in, i, input(b, pat, me, i));
	if (clear && (cr = b->cuda.memset_d8(b->recvbuf, 0, clear)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuMemsetD8");
	if (lay->send_count && (cr = b->cuda.memcpy_htod(send_base + send_off, b->host_in,
							 lay->send_count * elt)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuMemcpyHtoD");
	r = sync_default_stream(b);
	if (r == 0)
		r = enqueue(b, coll, lay, in_place, 0);
	if (r == 0)
		r = wait_stream(b, coll, lay->size_bytes);
	if (r < 0)
		return r;
	if (lay->recv_count && (cr = b->cuda.memcpy_dtoh(b->host_out, b->recvbuf + recv_off,
							 lay->recv_count * elt)) != CUDA_SUCCESS)
		return cu_fail(b, cr, "cuMemcpyDtoH");
	if (coll == PERF_REDUCE && me != o->root)
		return 0; /* only the root receives */
	for (size_t j = 0; j < lay->recv_count; j++) {
		double want;
		switch (coll) {
		case PERF_ALL_REDUCE:
		case PERF_REDUCE:
			want = perf_reduced_value(pat, t, n, j, b->seed);
			break;
		case PERF_BROADCAST:
			want = input(b, pat, o->root, j);
			break;
		case PERF_SENDRECV:
			want = input(b, pat, (me + n - 1) % n, j);
			break;
		case PERF_ALL_GATHER:
			want = input(b, pat, (int)(j / chunk), j % chunk);
			break;
		case PERF_REDUCE_SCATTER:
			want = perf_reduced_value(pat, t, n, (size_t)me * chunk + j, b->seed);
			break;
		case PERF_ALLTOALL:
			want = input(b, pat, (int)(j / chunk), (size_t)me * chunk + j % chunk);
			break;
		default:
			want = NAN;
			break;
		}
		/* Through the type, as the device holds it (half, bfloat16). */
		double held[1];
		perf_store(t, held, 0, want);
		if (!perf_value_ok(pat, t, perf_load(t, b->host_out, j), perf_load(t, held, 0)))
			(*wrong)++;
	}
	return 0;
}

static void print_devices(struct bench *b)
{
	fprintf(b->out, "# Using devices\n");
	for (int r = 0; r < b->n; r++) {
		const struct rank_info *ri = &b->infos[r];
		fprintf(b->out,
			"#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r,
			0, (int)ri->pid, rdv_hostname(b->rdv, r), (int)ri->device,
			(unsigned)ri->pci_domain, (unsigned)ri->pci_bus, (unsigned)ri->pci_device,
			ri->name);
	}
}

/* "# NCCL path: ...", once when every rank took the same, else per rank. */
static void print_paths(struct bench *b)
{
	bool same = true;

	for (int r = 1; r < b->n; r++)
		same = same && streq(b->infos[r].path, b->infos[0].path);
	if (same) {
		fprintf(b->out, "# NCCL path            : %s\n", b->infos[0].path);
		return;
	}
	for (int r = 0; r < b->n; r++)
		fprintf(b->out, "# NCCL path of rank %-2d : %s\n", r, b->infos[r].path);
}

static void print_preamble(struct bench *b, enum perf_coll coll)
{
	const struct nccl_bench_opts *o = b->o;
	struct strbuf nv = STRBUF_INIT;
	int driver = 0;

	nccl_version_string(b->nccl.version, &nv);
	b->cuda.driver_get_version(&driver);
	fprintf(b->out, "# sparkctl bench nccl %s nccl-library=%s cuda-driver=%d.%d\n", o->version,
		nv.buf, driver / 1000, driver % 1000 / 10);
	fprintf(b->out, "# Collective test starting: %s\n", perf_coll_info(coll)->test_name);
	fprintf(b->out,
		"# nThread 1 nGpus 1 minBytes %" PRIu64 " maxBytes %" PRIu64 " step: %" PRIu64
		"(%s) warmup iters: %u iters: %u agg iters: 1 validation: %d graph: 0 unalign: 0\n",
		o->min_bytes, b->max_bytes, o->factor > 1 ? o->factor : o->step,
		o->factor > 1 ? "factor" : "bytes", o->warmup, o->precision > 0 ? 0 : o->iters,
		o->check ? 1 : 0);
	if (o->precision > 0)
		fprintf(b->out,
			"# Adaptive iterations: timed batches until the 95%% confidence half-width "
			"of the time is within %g%%\n",
			o->precision * 100);
	fprintf(b->out, "#\n");
	print_devices(b);
	strbuf_release(&nv);
}

static json_t *path_json(const struct rank_info *ri, int rank)
{
	json_t *o = json_object();

	jset(o, "rank", jint(rank));
	jset(o, "summary", jstr(ri->path));
	return o;
}

static json_t *config_json(const struct bench *b)
{
	const struct nccl_bench_opts *o = b->o;
	json_t *c = json_object();

	jset(c, "nranks", jint(b->n));
	jset(c, "minimum_bytes", jint((int64_t)o->min_bytes));
	jset(c, "maximum_bytes", jint((int64_t)b->max_bytes));
	if (o->factor > 1)
		jset(c, "step_factor", jint((int64_t)o->factor));
	else
		jset(c, "step_bytes", jint((int64_t)o->step));
	jset(c, "warmup_iters", jint(o->warmup));
	if (o->precision > 0)
		jset(c, "precision", jreal(o->precision));
	else
		jset(c, "iterations", jint(o->iters));
	jset(c, "datatype", jstr(perf_dtype_name(o->dtype)));
	jset(c, "redop", jstr(perf_redop_name(o->redop)));
	jset(c, "root", jint(o->root));
	jset(c, "validation", jbool(o->check));
	jset(c, "report_cputime", jbool(o->cputime));
	jset(c, "bind", jstr(perf_bind_name(o->bind)));
	jset(c, "timeout_s", jint(o->timeout_ms / 1000));
	jset(c, "allocator", jstr(nccl_allocates(b) ? "ncclMemAlloc" : "cuMemAlloc"));
	return c;
}

/* One collective: warm-up, the sweep, its table. */
static int run_coll(struct bench *b, enum perf_coll coll, unsigned *bad_total)
{
	const struct nccl_bench_opts *o = b->o;
	const struct perf_coll_info *ci = perf_coll_info(coll);
	size_t elt = perf_dtype_size(o->dtype);
	json_t *rows = json_array();
	unsigned bad = 0, halves = 0;
	double busbw_sum = 0;
	struct strbuf line = STRBUF_INIT;
	struct perf_layout lay;
	int r = 0;

	if (b->out)
		print_preamble(b, coll);
	/* Warm-up: every size, doubling, whatever the step (nccl-tests does the same). */
	for (uint64_t size = o->min_bytes; r == 0 && size <= b->max_bytes;
	     size = perf_sweep_next(size, 2, 0)) {
		perf_layout(coll, size, elt, b->n, &lay);
		for (unsigned i = 0; r == 0 && i < o->warmup; i++)
			r = enqueue(b, coll, &lay, false, rotation(b, &lay, i));
		if (r == 0)
			r = wait_stream(b, coll, lay.size_bytes);
	}
	/* NCCL connects its channels at the first operation: now its log tells the path. */
	if (r == 0) {
		read_nccl_path(b);
		r = rdv_gather(b->rdv, &b->info, sizeof(b->info), b->infos, (int)o->timeout_ms,
			       b->err);
	}
	if (r == 0 && b->out) {
		print_paths(b);
		fprintf(b->out, "#\n");
		perf_table_header(&line, o->cputime);
		fputs(line.buf, b->out);
		fflush(b->out);
	}
	for (uint64_t size = o->min_bytes; r == 0 && size <= b->max_bytes;
	     size = perf_sweep_next(size, o->factor, o->step)) {
		struct perf_row row = {
			.type = perf_dtype_name(o->dtype),
			.redop = ci->has_redop ? perf_redop_name(o->redop) : "none",
			.root = ci->has_root ? o->root : -1,
			.cputime = o->cputime,
		};
		perf_layout(coll, size, elt, b->n, &lay);
		row.size = lay.size_bytes;
		row.count = lay.param_count;
		for (int ip = 0; r == 0 && ip < 2; ip++) {
			struct perf_result *res = ip ? &row.in_place : &row.out_of_place;
			uint64_t wrong = 0;
			r = time_half(b, coll, &lay, ip, res);
			/*
			 * In place, sendrecv sends a buffer onto itself and
			 * alltoall overwrites blocks it has still to send:
			 * neither is checked (nccl-tests does the same).
			 */
			bool checked = !(ip && (coll == PERF_SENDRECV || coll == PERF_ALLTOALL));
			res->wrong = -1;
			if (r == 0 && o->check && checked) {
				r = check_half(b, coll, &lay, ip, &wrong);
				r = agree(b, r);
				if (r == 0)
					r = rdv_allreduce_u64(b->rdv, &wrong, 1, RDV_SUM,
							      (int)o->timeout_ms, b->err);
				res->wrong = (int64_t)wrong;
				bad += wrong > 0;
			}
			perf_bandwidth(coll, row.size, b->n, res->time_us, &res->algbw,
				       &res->busbw);
			busbw_sum += res->busbw;
			halves++;
		}
		if (r < 0)
			break;
		if (b->out) {
			strbuf_reset(&line);
			perf_table_row(&line, &row);
			fputs(line.buf, b->out);
			fflush(b->out);
		}
		jpush(rows, perf_row_json(&row));
	}
	if (r == 0) {
		double avg = halves ? busbw_sum / halves : 0;
		if (b->out) {
			strbuf_reset(&line);
			perf_table_footer(&line, ci->test_name, bad, avg);
			fputs(line.buf, b->out);
			fflush(b->out);
		}
		if (b->json) {
			json_t *t = json_object(), *paths = json_array();
			jset(t, "op", jstr(ci->name));
			jset(t, "test", jstr(ci->test_name));
			for (int k = 0; k < b->n; k++)
				jpush(paths, path_json(&b->infos[k], k));
			jset(t, "nccl_path", paths);
			jset(t, "results", json_incref(rows));
			jset(t, "out_of_bounds", jint(bad));
			jset(t, "average_bus_bandwidth_gbs", jreal(avg));
			jpush(json_object_get(b->json, "tests"), t);
		}
		*bad_total += bad;
	}
	json_decref(rows);
	strbuf_release(&line);
	return r;
}

static json_t *devices_json(const struct bench *b)
{
	json_t *a = json_array();

	for (int r = 0; r < b->n; r++) {
		const struct rank_info *ri = &b->infos[r];
		json_t *d = json_object();
		char pci[32];
		snprintf(pci, sizeof(pci), "%04x:%02x:%02x.0", (unsigned)ri->pci_domain,
			 (unsigned)ri->pci_bus, (unsigned)ri->pci_device);
		jset(d, "rank", jint(r));
		jset(d, "pid", jint(ri->pid));
		jset(d, "hostname", jstr(rdv_hostname(b->rdv, r)));
		jset(d, "device", jint(ri->device));
		jset(d, "pci", jstr(pci));
		jset(d, "name", jstr(ri->name));
		jset(d, "cpus", jstr(ri->cpus));
		jpush(a, d);
	}
	return a;
}

/* --json FILE: replaced whole, or left as it was. */
static int write_json(struct bench *b)
{
	return json_save(b->json, b->o->json_path, b->err);
}

static int setup(struct bench *b, const struct nccl_bench_rank *me)
{
	const struct nccl_bench_opts *o = b->o;
	int listen_fd = me->listen_fd, r;
	uint64_t bound = 0;

	if (me->rank == 0 && listen_fd < 0) {
		const char *colon = strrchr(me->rendezvous, ':');
		uint16_t port = (uint16_t)strtoul(colon ? colon + 1 : "0", NULL, 10);
		r = rdv_listen(NULL, port, &listen_fd, &port, b->err);
		if (r < 0)
			return r;
	}
	r = rdv_join(&b->rdv, me->rank, me->world_size, listen_fd,
		     me->rank == 0 ? NULL : me->rendezvous, (int)o->timeout_ms, b->err);
	if (r < 0)
		return r;
	b->ordinal = me->device >= 0 ? me->device : rdv_local_rank(b->rdv);
	setup_nccl_log(b);
	r = rootfs_open(&b->host, o->host_root);
	if (r < 0) {
		strbuf_addf(b->err, "cannot open the host's files below %s: %s", o->host_root,
			    strerror(-r));
		r = -EIO; /* a missing root is not a missing GPU (exit 3) */
	} else {
		b->host_open = true;
	}
	if (r == 0)
		r = open_libraries(b);
	if (r == 0) {
		describe_device(b);
		bind_rank(b);
		r = memory_bound(b, &bound);
	}
	r = agree(b, r);
	if (r < 0)
		return r;
	r = rdv_allreduce_u64(b->rdv, &bound, 1, RDV_MIN, (int)o->timeout_ms, b->err);
	if (r < 0)
		return r;
	b->max_bytes = o->max_bytes;
	if (b->max_bytes > bound) {
		if (o->max_given && !o->force) {
			strbuf_addf(b->err,
				    "-e %" PRIu64 " exceeds the %" PRIu64
				    " bytes that free memory allows (with room for NCCL and the "
				    "check); a larger size can freeze a unified-memory machine: "
				    "--force to run it anyway",
				    o->max_bytes, bound);
			return -E2BIG;
		}
		if (!o->max_given) {
			b->max_bytes = bound;
			if (b->out)
				fprintf(b->out,
					"# Reducing maxBytes to %" PRIu64
					" due to memory limitation\n",
					bound);
		}
	}
	if (b->max_bytes < o->min_bytes) {
		strbuf_addf(b->err,
			    "free memory allows at most %" PRIu64 " bytes, below -b %" PRIu64,
			    b->max_bytes, o->min_bytes);
		return -E2BIG;
	}
	if (b->rank == 0)
		b->infos = xcalloc((size_t)b->n, sizeof(*b->infos));
	r = alloc_buffers(b);
	r = agree(b, r);
	if (r == 0) {
		r = rdv_gather(b->rdv, &b->info, sizeof(b->info), b->infos, (int)o->timeout_ms,
			       b->err);
	}
	if (r == 0)
		r = agree(b, init_comm(b));
	return r;
}

static void teardown(struct bench *b, bool failed)
{
	if (b->comm) {
		if (failed)
			b->nccl.comm_abort(b->comm);
		else
			b->nccl.comm_destroy(b->comm);
	}
	if (b->stream)
		b->cuda.stream_destroy(b->stream);
	free_device(b, b->sendbuf);
	free_device(b, b->recvbuf);
	if (b->ctx_retained)
		b->cuda.primary_ctx_release(b->dev);
	free(b->host_in);
	free(b->host_out);
	free(b->infos);
	if (b->log_path) {
		unlink(b->log_path);
		free(b->log_path);
	}
	rdv_close(b->rdv);
	if (b->host_open)
		rootfs_close(&b->host);
	json_decref(b->json);
	/* NCCL's threads may still run in an aborted communicator: keep its code mapped. */
	if (!failed) {
		nccl_close(&b->nccl);
		cuda_close(&b->cuda);
	}
}

enum nccl_bench_status nccl_bench_run(const struct nccl_bench_opts *opts,
				      const struct nccl_bench_rank *me, FILE *out,
				      struct strbuf *err)
{
	struct bench b = {
		.o = opts,
		.err = err,
		.rank = me->rank,
		.n = me->world_size,
		.out = me->rank == 0 && !streq(opts->json_path, "-") ? out : NULL,
	};
	enum nccl_bench_status status = NCCL_BENCH_OK;
	unsigned bad = 0;
	int r;

	r = setup(&b, me);
	if (r == 0 && me->rank == 0 && opts->json_path) {
		struct strbuf nv = STRBUF_INIT;
		b.json = json_object();
		nccl_version_string(b.nccl.version, &nv);
		jset(b.json, "sparkctl_version", jstr(opts->version));
		jset(b.json, "nccl_version", jstr(nv.buf));
		jset(b.json, "config", config_json(&b));
		jset(b.json, "devices", devices_json(&b));
		jset(b.json, "tests", json_array());
		strbuf_release(&nv);
	}
	for (size_t i = 0; r == 0 && i < opts->nr_colls; i++)
		r = agree(&b, run_coll(&b, opts->colls[i], &bad));
	if (r == 0 && b.json) {
		jset(b.json, "out_of_bounds", jint(bad));
		jset(b.json, "ok", jbool(bad == 0));
		r = write_json(&b);
	}
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
	teardown(&b, r < 0);
	return status;
}
