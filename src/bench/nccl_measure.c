/*
 * nccl_measure.c - what a rank of bench nccl measures: operations issued
 * on its stream, waited for with a deadline, timed (fixed or adaptive
 * iterations, averaged over the ranks), and checked on known data.
 */
#include "sparkctl.h"

#include <math.h>
#include <sched.h>

#include "bench/nccl_check.h"
#include "bench/nccl_rank.h"
#include "lib/clock.h"

/*
 * Wait for the work before event ev on the stream (NULL: all of it),
 * watching NCCL's asynchronous errors and the deadline; either ends the
 * communicator (ncclCommAbort), so that a rank never hangs on a peer that
 * is gone.
 */
static int wait_for(struct bench *b, cu_event ev, enum perf_coll coll, uint64_t bytes)
{
	uint64_t deadline = monotonic_ms() + b->o->timeout_ms;

	for (;;) {
		cu_result cr =
			ev ? b->gpu.cuda.event_query(ev) : b->gpu.cuda.stream_query(b->gpu.stream);
		nccl_result async = NCCL_SUCCESS;

		if (cr == CUDA_SUCCESS)
			return 0;
		if (cr != CUDA_ERROR_NOT_READY)
			return nccl_cu_fail(b, cr, ev ? "cuEventQuery" : "cuStreamQuery");
		if (b->gpu.nccl.comm_get_async_error(b->gpu.comm, &async) == NCCL_SUCCESS &&
		    async != NCCL_SUCCESS && async != NCCL_IN_PROGRESS) {
			strbuf_addf(b->err,
				    "%s of %" PRIu64 " bytes failed: ", perf_coll_info(coll)->name,
				    bytes);
			nccl_describe(&b->gpu.nccl, b->gpu.comm, async, b->err);
			nccl_add_warning(b);
			b->gpu.nccl.comm_abort(b->gpu.comm);
			b->gpu.comm = NULL;
			return -EIO;
		}
		if (monotonic_ms() >= deadline) {
			strbuf_addf(
				b->err,
				"%s of %" PRIu64 " bytes did not finish within %u s on rank %d; "
				"the communicator was aborted. A peer may be gone or the fabric "
				"stalled: run 'sparkctl doctor' on every node",
				perf_coll_info(coll)->name, bytes, b->o->timeout_ms / 1000,
				b->team.rank);
			b->gpu.nccl.comm_abort(b->gpu.comm);
			b->gpu.comm = NULL;
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
	cu_deviceptr send_base = in_place ? b->gpu.recvbuf : b->gpu.sendbuf;
	void *send = devptr(
		send_base, shift + (in_place ? lay->send_inplace * elt * (size_t)b->team.rank : 0));
	void *recv =
		devptr(b->gpu.recvbuf,
		       shift + (in_place ? lay->recv_inplace * elt * (size_t)b->team.rank : 0));
	size_t count = lay->param_count;
	int t = (int)o->dtype, op = (int)o->redop;
	const struct nccl *n = &b->gpu.nccl;
	nccl_result r = NCCL_SUCCESS;

	switch (coll) {
	case PERF_ALL_REDUCE:
		r = n->all_reduce(send, recv, count, t, op, b->gpu.comm, b->gpu.stream);
		break;
	case PERF_ALL_GATHER:
		r = n->all_gather(send, recv, count, t, b->gpu.comm, b->gpu.stream);
		break;
	case PERF_REDUCE_SCATTER:
		r = n->reduce_scatter(send, recv, count, t, op, b->gpu.comm, b->gpu.stream);
		break;
	case PERF_BROADCAST:
		r = n->broadcast(send, recv, count, t, o->root, b->gpu.comm, b->gpu.stream);
		break;
	case PERF_REDUCE:
		r = n->reduce(send, recv, count, t, op, o->root, b->gpu.comm, b->gpu.stream);
		break;
	case PERF_ALLTOALL:
		if (n->alltoall) {
			r = n->alltoall(send, recv, count, t, b->gpu.comm, b->gpu.stream);
			break;
		}
		/* Before NCCL 2.28: a send and a receive to every rank, self included. */
		r = n->group_start();
		for (int peer = 0; r == NCCL_SUCCESS && peer < b->team.n; peer++) {
			size_t off = (size_t)peer * count * elt;
			r = n->send((char *)send + off, count, t, peer, b->gpu.comm, b->gpu.stream);
			if (r == NCCL_SUCCESS)
				r = n->recv((char *)recv + off, count, t, peer, b->gpu.comm,
					    b->gpu.stream);
		}
		if (r == NCCL_SUCCESS)
			r = n->group_end();
		else
			n->group_end();
		break;
	case PERF_SENDRECV:
		r = n->group_start();
		if (r == NCCL_SUCCESS)
			r = n->send(send, count, t, (b->team.rank + 1) % b->team.n, b->gpu.comm,
				    b->gpu.stream);
		if (r == NCCL_SUCCESS)
			r = n->recv(recv, count, t, (b->team.rank + b->team.n - 1) % b->team.n,
				    b->gpu.comm, b->gpu.stream);
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
	uint64_t steps = total ? b->gpu.max_bytes / total : 1;

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
		r = wait_for(b, NULL, coll, lay->size_bytes);
	times[0] = elapsed_us(start) / ops;
	return r;
}

/* Both figures of timed_ops, averaged over the ranks in one exchange. */
static int rank_mean(struct bench *b, double times[2])
{
	int r = rdv_allreduce_double(b->team.rdv, times, 2, RDV_SUM, (int)b->o->timeout_ms, b->err);

	times[0] /= b->team.n;
	times[1] /= b->team.n;
	return r;
}

/* The adaptive loop's events, made once for the run. */
static int make_events(struct bench *b)
{
	struct nccl_gpu *g = &b->gpu;

	while (g->nr_events < ARRAY_SIZE(g->events)) {
		cu_result cr = g->cuda.event_create(&g->events[g->nr_events], 0);
		if (cr != CUDA_SUCCESS)
			return nccl_cu_fail(b, cr, "cuEventCreate");
		g->nr_events++;
	}
	return 0;
}

/* Issue operation i (from 1) of the loop and record its event, adding the host's time to cpu_us. */
static int issue_timed(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		       bool in_place, unsigned i, double *cpu_us)
{
	uint64_t start = monotonic_ns();
	cu_event ev = b->gpu.events[i % ARRAY_SIZE(b->gpu.events)];
	int r = enqueue(b, coll, lay, in_place, rotation(b, lay, i - 1));
	cu_result cr;

	*cpu_us += elapsed_us(start);
	if (r == 0 && (cr = b->gpu.cuda.event_record(ev, b->gpu.stream)) != CUDA_SUCCESS)
		r = nccl_cu_fail(b, cr, "cuEventRecord");
	return r;
}

/*
 * Adaptive (nccl_perf.h says how): operation m's time is read from the
 * events around it while the operations after it run; all ranks decide
 * together, on the largest shares of any, whether to issue more.  The
 * operations issued past the stop run out uncounted.
 */
static int time_loop(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		     bool in_place, struct perf_result *res)
{
	const struct nccl_bench_opts *o = b->o;
	const struct cuda *cuda = &b->gpu.cuda;
	const unsigned ring = ARRAY_SIZE(b->gpu.events);
	struct perf_loop loop = { 0 };
	unsigned issued = 0;
	double cpu_us = 0, t[2];
	bool stop = false;
	cu_result cr;
	int r = make_events(b);

	if (r == 0 && (cr = cuda->event_record(b->gpu.events[0], b->gpu.stream)) != CUDA_SUCCESS)
		r = nccl_cu_fail(b, cr, "cuEventRecord");
	while (r == 0 && issued < o->iters && issued < PERF_ADAPTIVE_AHEAD)
		r = issue_timed(b, coll, lay, in_place, ++issued, &cpu_us);
	while (r == 0 && !stop) {
		unsigned m = loop.m + 1;
		float ms = 0;
		r = wait_for(b, b->gpu.events[m % ring], coll, lay->size_bytes);
		if (r == 0 &&
		    (cr = cuda->event_elapsed_time(&ms, b->gpu.events[(m - 1) % ring],
						   b->gpu.events[m % ring])) != CUDA_SUCCESS)
			r = nccl_cu_fail(b, cr, "cuEventElapsedTime");
		if (r < 0)
			break;
		perf_loop_add(&loop, (double)ms * 1e3);
		if (m == issued) {
			stop = true; /* iters issued, and all of them counted */
		} else if (issued < o->iters) {
			double shares[2];
			perf_loop_shares(&loop, shares);
			r = rdv_allreduce_double(b->team.rdv, shares, 2, RDV_MAX,
						 (int)o->timeout_ms, b->err);
			stop = r == 0 && perf_loop_done(shares, o->precision);
			if (r == 0 && !stop)
				r = issue_timed(b, coll, lay, in_place, ++issued, &cpu_us);
		}
	}
	if (r == 0)
		r = wait_for(b, NULL, coll, lay->size_bytes);
	t[0] = perf_loop_time(&loop);
	t[1] = issued ? cpu_us / issued : 0;
	if (r == 0)
		r = rank_mean(b, t);
	res->time_us = t[0];
	res->cpu_time_us = t[1];
	res->iters = loop.m;
	return r;
}

/*
 * Time one half-row.  Fixed: --iters operations issued back to back, one
 * wait, as nccl-tests times them.  Adaptive (--precision): the same for
 * short operations, which costs little and keeps the figures those of
 * fixed mode; for longer ones the same loop, read as it runs
 * (time_loop), stops once the time is known.
 */
static int time_half(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		     bool in_place, struct perf_result *res)
{
	const struct nccl_bench_opts *o = b->o;
	double sync[2], t[2] = { 0, 0 };
	/*
	 * nccl-tests' start: one operation, waited for, then a barrier, then
	 * the loop.  Each rank's clock starts as it leaves the barrier, so
	 * its figure carries the barrier's skew over the loop, as nccl-tests'
	 * does after its MPI barrier (starting when all ranks had finished
	 * an operation together read up to 1.5 us faster below 1 MiB,
	 * docs/benchmarks.md).
	 */
	int r = timed_ops(b, coll, lay, in_place, 0, 1, sync);

	if (r == 0 && o->precision > 0) {
		/* The slowest rank's operation: every rank chooses alike. */
		double op_us = sync[0];
		r = rdv_allreduce_double(b->team.rdv, &op_us, 1, RDV_MAX, (int)o->timeout_ms,
					 b->err);
		if (r == 0 && perf_adaptive_loop(op_us, o->iters))
			return time_loop(b, coll, lay, in_place, res);
	}
	if (r == 0)
		r = rdv_barrier(b->team.rdv, (int)o->timeout_ms, b->err);
	if (r == 0)
		r = timed_ops(b, coll, lay, in_place, 0, o->iters, t);
	if (r == 0)
		r = rank_mean(b, t);
	res->time_us = t[0];
	res->cpu_time_us = t[1];
	res->iters = o->iters;
	return r;
}

/*
 * Where the check's data is made and compared: the layout's buffers of
 * this rank at one placement.
 */
struct check_place {
	cu_deviceptr send, recv; /* where the input goes, where the output is */
	size_t clear;		 /* bytes of the receive buffer zeroed first */
};

static void check_place_of(const struct bench *b, const struct perf_layout *lay, bool in_place,
			   struct check_place *p)
{
	size_t elt = perf_dtype_size(b->o->dtype), me = (size_t)b->team.rank;

	p->send = in_place ? b->gpu.recvbuf + lay->send_inplace * elt * me : b->gpu.sendbuf;
	p->recv = b->gpu.recvbuf + (in_place ? lay->recv_inplace * elt * me : 0);
	p->clear = in_place ? lay->size_bytes : lay->recv_count * elt;
}

/*
 * On the GPU: the fill, the operation and the count go on the stream one
 * after the other; only the count of wrong elements comes back.
 */
static int check_on_gpu(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
			bool in_place, const struct perf_check *c, bool counted, uint64_t *wrong)
{
	const struct cuda *cuda = &b->gpu.cuda;
	struct check_place p;
	cu_result cr;
	int r;

	check_place_of(b, lay, in_place, &p);
	if (p.clear && (cr = cuda->memset_d8(b->gpu.recvbuf, 0, p.clear)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemsetD8");
	r = nccl_sync_default_stream(b);
	if (r < 0)
		return r;
	cr = nccl_kernels_fill(cuda, &b->gpu.kernels, b->gpu.stream, p.send, lay->send_count, c,
			       b->team.rank);
	if (cr != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuLaunchKernel (sparkctl_fill)");
	r = enqueue(b, coll, lay, in_place, 0);
	if (r == 0 && counted) {
		cr = nccl_kernels_count(cuda, &b->gpu.kernels, b->gpu.stream, p.recv,
					lay->recv_count, c);
		if (cr != CUDA_SUCCESS)
			return nccl_cu_fail(b, cr, "cuLaunchKernel (sparkctl_check)");
	}
	if (r == 0)
		r = wait_for(b, NULL, coll, lay->size_bytes);
	if (r == 0 && counted &&
	    (cr = nccl_kernels_wrong(cuda, &b->gpu.kernels, wrong)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemcpyDtoH (the check's counter)");
	return r;
}

/* On the host, where the driver would not load the kernels: the same model, with copies. */
static int check_on_host(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
			 bool in_place, const struct perf_check *c, bool counted, uint64_t *wrong)
{
	const struct cuda *cuda = &b->gpu.cuda;
	size_t elt = perf_dtype_size(c->type);
	struct check_place p;
	cu_result cr;
	int r;

	check_place_of(b, lay, in_place, &p);
	perf_check_fill(c, b->team.rank, b->gpu.host_in, lay->send_count);
	if (p.clear && (cr = cuda->memset_d8(b->gpu.recvbuf, 0, p.clear)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemsetD8");
	if (lay->send_count &&
	    (cr = cuda->memcpy_htod(p.send, b->gpu.host_in, lay->send_count * elt)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemcpyHtoD");
	r = nccl_sync_default_stream(b);
	if (r == 0)
		r = enqueue(b, coll, lay, in_place, 0);
	if (r == 0)
		r = wait_for(b, NULL, coll, lay->size_bytes);
	if (r < 0 || !counted)
		return r;
	if (lay->recv_count && (cr = cuda->memcpy_dtoh(b->gpu.host_out, p.recv,
						       lay->recv_count * elt)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemcpyDtoH");
	*wrong = perf_check_count(c, b->gpu.host_out, lay->recv_count);
	return 0;
}

/*
 * Run one operation on known data and count the wrong elements of this
 * rank's output, outside the timed loop, with values whose reductions
 * are exact (nccl_pattern.c).
 */
static int check_half(struct bench *b, enum perf_coll coll, const struct perf_layout *lay,
		      bool in_place, uint64_t *wrong)
{
	const struct nccl_bench_opts *o = b->o;
	struct perf_check c;
	/* Only reduce's root receives. */
	bool counted = !(coll == PERF_REDUCE && b->team.rank != o->root);

	*wrong = 0;
	perf_check_init(&c, coll, o->dtype, o->redop, b->team.n, b->team.rank, o->root,
			lay->param_count, ++b->seed);
	if (b->gpu.check_on_gpu)
		return check_on_gpu(b, coll, lay, in_place, &c, counted, wrong);
	return check_on_host(b, coll, lay, in_place, &c, counted, wrong);
}

/* Warm-up: every size, doubling, whatever the step (nccl-tests does the same). */
int nccl_warm_up(struct bench *b, enum perf_coll coll)
{
	size_t elt = perf_dtype_size(b->o->dtype);
	struct perf_layout lay;
	int r = 0;

	for (uint64_t size = b->o->min_bytes; r == 0 && size <= b->gpu.max_bytes;
	     size = perf_sweep_next(size, 2, 0)) {
		perf_layout(coll, size, elt, b->team.n, &lay);
		for (unsigned i = 0; r == 0 && i < b->o->warmup; i++)
			r = enqueue(b, coll, &lay, false, rotation(b, &lay, i));
		if (r == 0)
			r = wait_for(b, NULL, coll, lay.size_bytes);
	}
	return r;
}

int nccl_measure_row(struct bench *b, enum perf_coll coll, uint64_t size, struct perf_row *row,
		     unsigned *bad)
{
	const struct nccl_bench_opts *o = b->o;
	const struct perf_coll_info *ci = perf_coll_info(coll);
	struct perf_layout lay;
	int r = 0;

	perf_layout(coll, size, perf_dtype_size(o->dtype), b->team.n, &lay);
	*row = (struct perf_row){
		.size = lay.size_bytes,
		.count = lay.param_count,
		.type = perf_dtype_name(o->dtype),
		.redop = ci->has_redop ? perf_redop_name(o->redop) : "none",
		.root = ci->has_root ? o->root : -1,
		.cputime = o->cputime,
	};
	for (int ip = 0; r == 0 && ip < 2; ip++) {
		struct perf_result *res = ip ? &row->in_place : &row->out_of_place;
		/*
		 * In place, sendrecv sends a buffer onto itself and alltoall
		 * overwrites blocks it has still to send: neither is checked
		 * (nccl-tests does the same).
		 */
		bool checked = !(ip && (coll == PERF_SENDRECV || coll == PERF_ALLTOALL));
		uint64_t wrong = 0;

		r = time_half(b, coll, &lay, ip, res);
		res->wrong = -1;
		if (r == 0 && o->check && checked) {
			r = nccl_agree(b, check_half(b, coll, &lay, ip, &wrong));
			if (r == 0)
				r = rdv_allreduce_u64(b->team.rdv, &wrong, 1, RDV_SUM,
						      (int)o->timeout_ms, b->err);
			res->wrong = (int64_t)wrong;
			*bad += wrong > 0;
		}
		perf_bandwidth(coll, row->size, b->team.n, res->time_us, &res->algbw, &res->busbw);
	}
	return r;
}
