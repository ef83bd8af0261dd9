/*
 * nccl_measure.c - what a rank of bench nccl measures: operations issued
 * on its stream, waited for with a deadline, timed (fixed or adaptive
 * iterations, averaged over the ranks), and checked on known data.
 */
#include "sparkctl.h"

#include <math.h>
#include <sched.h>

#include "bench/nccl_rank.h"
#include "lib/clock.h"

#define BATCH_TARGET_US	     1000.0
#define ADAPTIVE_MIN_BATCHES 3
#define ADAPTIVE_MAX_BATCHES 50
#define ADAPTIVE_MAX_SECONDS 5.0

/*
 * Wait for the stream, watching NCCL's asynchronous errors and the
 * deadline; either ends the communicator (ncclCommAbort), so that a rank
 * never hangs on a peer that is gone.
 */
static int wait_stream(struct bench *b, enum perf_coll coll, uint64_t bytes)
{
	uint64_t deadline = monotonic_ms() + b->o->timeout_ms;

	for (;;) {
		cu_result cr = b->gpu.cuda.stream_query(b->gpu.stream);
		nccl_result async = NCCL_SUCCESS;

		if (cr == CUDA_SUCCESS)
			return 0;
		if (cr != CUDA_ERROR_NOT_READY)
			return nccl_cu_fail(b, cr, "cuStreamQuery");
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
		r = wait_stream(b, coll, lay->size_bytes);
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
	r = rdv_barrier(b->team.rdv, (int)b->o->timeout_ms, b->err);
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
	r = rdv_allreduce_double(b->team.rdv, &sync_us, 1, RDV_MAX, (int)b->o->timeout_ms, b->err);
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
			r = rdv_allreduce_double(b->team.rdv, &spent, 1, RDV_MAX,
						 (int)b->o->timeout_ms, b->err);
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
	return perf_input_value(pattern, b->o->dtype, b->team.n, src, i, b->seed);
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
	size_t send_off = in_place ? lay->send_inplace * elt * (size_t)b->team.rank : 0;
	cu_deviceptr send_base = in_place ? b->gpu.recvbuf : b->gpu.sendbuf;
	size_t recv_off = in_place ? lay->recv_inplace * elt * (size_t)b->team.rank : 0;
	size_t clear = in_place ? lay->size_bytes : lay->recv_count * elt;
	int me = b->team.rank, n = b->team.n, r;
	cu_result cr;

	*wrong = 0;
	b->seed++;
	for (size_t i = 0; i < lay->send_count; i++)
		perf_store(t, b->gpu.host_in, i, input(b, pat, me, i));
	if (clear && (cr = b->gpu.cuda.memset_d8(b->gpu.recvbuf, 0, clear)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemsetD8");
	if (lay->send_count &&
	    (cr = b->gpu.cuda.memcpy_htod(send_base + send_off, b->gpu.host_in,
					  lay->send_count * elt)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemcpyHtoD");
	r = nccl_sync_default_stream(b);
	if (r == 0)
		r = enqueue(b, coll, lay, in_place, 0);
	if (r == 0)
		r = wait_stream(b, coll, lay->size_bytes);
	if (r < 0)
		return r;
	if (lay->recv_count &&
	    (cr = b->gpu.cuda.memcpy_dtoh(b->gpu.host_out, b->gpu.recvbuf + recv_off,
					  lay->recv_count * elt)) != CUDA_SUCCESS)
		return nccl_cu_fail(b, cr, "cuMemcpyDtoH");
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
		if (!perf_value_ok(pat, t, perf_load(t, b->gpu.host_out, j), perf_load(t, held, 0)))
			(*wrong)++;
	}
	return 0;
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
			r = wait_stream(b, coll, lay.size_bytes);
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
