/*
 * rendezvous.c - the collectives of the TCP star of 'sparkctl bench nccl'
 * (see rendezvous.h), and what happens when one fails.  Joining the star
 * is in rendezvous_join.c, frames and the waiting in rendezvous_wire.c.
 *
 * Barrier and allreduce are a gather to rank 0 and a broadcast from it.
 * When a call fails, the rank closes its connections; rank 0 first sends
 * every rank an ABORT with the reason, so that they fail with it too.
 */
#include "sparkctl.h"

#include "bench/rendezvous_internal.h"
#include "lib/xalloc.h"

enum reduce_kind {
	KIND_DOUBLE,
	KIND_U64
};

/* ---- failure ---------------------------------------------------------------- */

int rdv_fail(struct rdv *rdv, int r, struct strbuf *err, size_t mark)
{
	const char *reason = err->len > mark ? err->buf + mark : strerror(-r);

	if (!rdv->failed.len)
		strbuf_addstr(&rdv->failed, reason);
	for (int i = 0; i < rdv->world_size; i++) {
		if (rdv->fd[i] < 0)
			continue;
		if (rdv->rank == 0)
			send_abort(rdv->fd[i], -r, reason);
		close_drained(rdv->fd[i]);
		rdv->fd[i] = -1;
	}
	return r;
}

/* -ENOTCONN once a call has failed: the ranks are out of step for good. */
static int check_usable(const struct rdv *rdv, struct strbuf *err)
{
	if (!rdv->failed.len)
		return 0;
	strbuf_addf(err, "an earlier call failed: %s", rdv->failed.buf);
	return -ENOTCONN;
}

static struct rx *rx_array(const struct rdv *rdv)
{
	return xcalloc((size_t)rdv->world_size, sizeof(struct rx));
}

static void rx_array_free(const struct rdv *rdv, struct rx *rx)
{
	for (int i = 0; i < rdv->world_size; i++)
		rx_release(&rx[i]);
	free(rx);
}

/* ---- the collectives ------------------------------------------------------------ */

int rdv_rank(const struct rdv *rdv)
{
	return rdv->rank;
}

int rdv_world_size(const struct rdv *rdv)
{
	return rdv->world_size;
}

int rdv_local_rank(const struct rdv *rdv)
{
	return rdv->local_rank;
}

int rdv_local_size(const struct rdv *rdv)
{
	return rdv->local_size;
}

const char *rdv_hostname(const struct rdv *rdv, int r)
{
	if (r < 0 || r >= rdv->world_size)
		return NULL;
	return rdv->host[r];
}

/* -EINVAL for a message that does not fit a frame with its header. */
static int check_len(size_t len, size_t header, struct strbuf *err)
{
	if (len <= FRAME_MAX - header)
		return 0;
	strbuf_addf(err, "a message of %zu bytes is over the limit of %zu", len,
		    FRAME_MAX - header);
	return -EINVAL;
}

/* Rank 0 sends one frame to every rank; the others receive it, of exactly 1 + len bytes. */
static int bcast_frame(struct rdv *rdv, enum msg_type type, const struct strbuf *frame, size_t len,
		       struct rx *rx, const struct rdv_call *call)
{
	int r;

	if (rdv->rank == 0)
		return exchange_send(rdv, frame, false, call);
	r = exchange_recv(rdv, rx, type, 1 + len, call);
	if (r == 0 && rx->len != 1 + len) {
		strbuf_addf(call->err,
			    "rank 0 is out of step: it sent %zu bytes during %s, which takes %zu",
			    rx->len - 1, call->what, len);
		r = -EPROTO;
	}
	return r;
}

int rdv_broadcast(struct rdv *rdv, void *buf, size_t len, int timeout_ms, struct strbuf *err)
{
	struct rdv_call call = { deadline_of(timeout_ms), timeout_ms, "the broadcast", err };
	struct strbuf f = STRBUF_INIT;
	struct rx rx = { 0 };
	size_t mark = err->len;
	int r;

	r = check_usable(rdv, err);
	if (r < 0)
		return r;
	r = check_len(len, 1, err);
	if (r == 0 && rdv->rank == 0) {
		frame_begin(&f, MSG_BCAST);
		if (len)
			strbuf_add(&f, buf, len);
		frame_end(&f);
	}
	if (r == 0)
		r = bcast_frame(rdv, MSG_BCAST, &f, len, &rx, &call);
	if (r == 0 && rdv->rank != 0 && len)
		memcpy(buf, rx.buf + 1, len);
	rx_release(&rx);
	strbuf_release(&f);
	return r < 0 ? rdv_fail(rdv, r, err, mark) : 0;
}

/*
 * The other ranks send rank 0 one frame of type; rank 0 receives them all
 * (of exactly 1 + len bytes) into rx[].
 */
static int gather_frame(struct rdv *rdv, enum msg_type type, const struct strbuf *frame, size_t len,
			struct rx *rx, const struct rdv_call *call)
{
	int r;

	if (rdv->rank != 0)
		return exchange_send(rdv, frame, false, call);
	r = exchange_recv(rdv, rx, type, 1 + len, call);
	for (int i = 1; r == 0 && i < rdv->world_size; i++)
		if (rx[i].len != 1 + len) {
			strbuf_addf(call->err,
				    "rank %d is out of step: it sent %zu bytes during %s, "
				    "which takes %zu",
				    i, rx[i].len - 1, call->what, len);
			r = -EPROTO;
		}
	return r;
}

int rdv_gather(struct rdv *rdv, const void *mine, size_t len, void *all, int timeout_ms,
	       struct strbuf *err)
{
	struct rdv_call call = { deadline_of(timeout_ms), timeout_ms, "the gather", err };
	struct strbuf f = STRBUF_INIT;
	struct rx *rx = NULL;
	size_t mark = err->len;
	int r;

	r = check_usable(rdv, err);
	if (r < 0)
		return r;
	r = check_len(len, 1, err);
	if (r == 0 && rdv->rank == 0 && !all && len) {
		strbuf_addstr(err, "rank 0 gathers into no buffer");
		r = -EINVAL;
	}
	if (r == 0 && rdv->rank == 0)
		rx = rx_array(rdv);
	if (r == 0 && rdv->rank != 0) {
		frame_begin(&f, MSG_GATHER);
		if (len)
			strbuf_add(&f, mine, len);
		frame_end(&f);
	}
	if (r == 0)
		r = gather_frame(rdv, MSG_GATHER, &f, len, rx, &call);
	if (r == 0 && rdv->rank == 0 && len) {
		memcpy(all, mine, len);
		for (int i = 1; i < rdv->world_size; i++)
			memcpy((char *)all + (size_t)i * len, rx[i].buf + 1, len);
	}
	if (rx)
		rx_array_free(rdv, rx);
	strbuf_release(&f);
	return r < 0 ? rdv_fail(rdv, r, err, mark) : 0;
}

int rdv_barrier(struct rdv *rdv, int timeout_ms, struct strbuf *err)
{
	struct rdv_call call = { deadline_of(timeout_ms), timeout_ms, "the barrier", err };
	struct strbuf f = STRBUF_INIT;
	struct rx *rx = rx_array(rdv);
	size_t mark = err->len;
	int r;

	r = check_usable(rdv, err);
	if (r < 0)
		goto out;
	frame_begin(&f, MSG_BARRIER);
	frame_end(&f);
	r = gather_frame(rdv, MSG_BARRIER, &f, 0, rx, &call);
	if (r == 0)
		r = bcast_frame(rdv, MSG_BARRIER, &f, 0, &rx[0], &call);
	if (r < 0)
		r = rdv_fail(rdv, r, err, mark);
out:
	rx_array_free(rdv, rx);
	strbuf_release(&f);
	return r;
}

static const char *const op_names[] = { [RDV_SUM] = "sum", [RDV_MIN] = "min", [RDV_MAX] = "max" };
static const char *const kind_names[] = { [KIND_DOUBLE] = "double", [KIND_U64] = "u64" };

/* acc[i] = acc[i] op v[i], on the bits of doubles or u64s. */
static void reduce(uint64_t *acc, const uint64_t *v, size_t n, enum reduce_kind kind,
		   enum rdv_op op)
{
	for (size_t i = 0; i < n; i++) {
		if (kind == KIND_U64) {
			if (op == RDV_SUM)
				acc[i] += v[i];
			else if (op == RDV_MIN ? v[i] < acc[i] : v[i] > acc[i])
				acc[i] = v[i];
		} else {
			double a, b;
			memcpy(&a, &acc[i], sizeof(a));
			memcpy(&b, &v[i], sizeof(b));
			if (op == RDV_SUM)
				a += b;
			else if (op == RDV_MIN ? b < a : b > a)
				a = b;
			memcpy(&acc[i], &a, sizeof(a));
		}
	}
}

/* A REDUCE frame of vals; its payload header is 1 + 1 + 1 + 4 bytes. */
static void reduce_frame(struct strbuf *f, const uint64_t *vals, size_t n, enum reduce_kind kind,
			 enum rdv_op op)
{
	frame_begin(f, MSG_REDUCE);
	frame_put_u8(f, kind);
	frame_put_u8(f, op);
	frame_put_u32(f, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		frame_put_u64(f, vals[i]);
	frame_end(f);
}

/* The values of a REDUCE frame into vals, if it is of the same kind, op and count. */
static int reduce_read(const struct rx *rx, uint64_t *vals, size_t n, enum reduce_kind kind,
		       enum rdv_op op, int rank, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	unsigned k = cursor_u8(&c), o = cursor_u8(&c);
	uint32_t count = cursor_u32(&c);

	if (c.bad || k != kind || o != op || count != n || c.left != n * 8) {
		strbuf_addf(err,
			    "rank %d is out of step: its allreduce is not a %s of %zu %s values",
			    rank, op_names[op], n, kind_names[kind]);
		return -EPROTO;
	}
	for (size_t i = 0; i < n; i++)
		vals[i] = cursor_u64(&c);
	return 0;
}

static int allreduce(struct rdv *rdv, void *vals, size_t n, enum reduce_kind kind, enum rdv_op op,
		     int timeout_ms, struct strbuf *err)
{
	struct rdv_call call = { deadline_of(timeout_ms), timeout_ms, "the allreduce", err };
	struct strbuf f = STRBUF_INIT;
	struct rx *rx = rx_array(rdv);
	uint64_t *acc = NULL, *tmp = NULL;
	size_t mark = err->len, len;
	int r;

	r = check_usable(rdv, err);
	if (r < 0)
		goto out;
	if ((unsigned)op >= ARRAY_SIZE(op_names)) {
		strbuf_addf(err, "%d is not a reduction", (int)op);
		r = -EINVAL;
		goto fail;
	}
	if (n > (FRAME_MAX - 7) / 8) {
		strbuf_addf(err, "an allreduce of %zu values is over the limit of %u", n,
			    (FRAME_MAX - 7) / 8);
		r = -EINVAL;
		goto fail;
	}
	len = 6 + n * 8;
	acc = xcalloc(n ? n : 1, sizeof(*acc));
	tmp = xcalloc(n ? n : 1, sizeof(*tmp));
	if (n)
		memcpy(acc, vals, n * 8);

	reduce_frame(&f, acc, n, kind, op);
	r = gather_frame(rdv, MSG_REDUCE, &f, len, rx, &call);
	for (int i = 1; r == 0 && rdv->rank == 0 && i < rdv->world_size; i++) {
		r = reduce_read(&rx[i], tmp, n, kind, op, i, err);
		if (r == 0)
			reduce(acc, tmp, n, kind, op);
	}
	if (r == 0 && rdv->rank == 0)
		reduce_frame(&f, acc, n, kind, op);
	if (r == 0)
		r = bcast_frame(rdv, MSG_REDUCE, &f, len, &rx[0], &call);
	if (r == 0 && rdv->rank != 0)
		r = reduce_read(&rx[0], acc, n, kind, op, 0, err);
	if (r == 0 && n)
		memcpy(vals, acc, n * 8);
fail:
	if (r < 0)
		r = rdv_fail(rdv, r, err, mark);
out:
	rx_array_free(rdv, rx);
	free(acc);
	free(tmp);
	strbuf_release(&f);
	return r;
}

int rdv_allreduce_double(struct rdv *rdv, double *vals, size_t n, enum rdv_op op, int timeout_ms,
			 struct strbuf *err)
{
	return allreduce(rdv, vals, n, KIND_DOUBLE, op, timeout_ms, err);
}

int rdv_allreduce_u64(struct rdv *rdv, uint64_t *vals, size_t n, enum rdv_op op, int timeout_ms,
		      struct strbuf *err)
{
	return allreduce(rdv, vals, n, KIND_U64, op, timeout_ms, err);
}

void rdv_close(struct rdv *rdv)
{
	if (!rdv)
		return;
	for (int i = 0; i < rdv->world_size; i++)
		if (rdv->fd[i] >= 0)
			close(rdv->fd[i]);
	free(rdv->fd);
	free(rdv->host);
	strbuf_release(&rdv->failed);
	free(rdv);
}
