/*
 * rendezvous_wire.c - the rendezvous' message I/O: frames (the format is
 * in rendezvous_internal.h), reading and writing them without blocking,
 * the one wait every call of the rendezvous makes, and a frame moved to
 * or from every peer within a call's deadline.
 *
 * A wait is a loop of proc/loop.h per call: the calls are synchronous, so
 * a loop lives only as long as one of them waits.  Its descriptors are
 * the connections, called back when ready; its deadline is a timer.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <endian.h>
#include <sys/socket.h>

#include "bench/rendezvous_internal.h"
#include "lib/clock.h"
#include "lib/xalloc.h"

/* The most ranks named in a message. */
#define NAMED_MAX 16

/* ---- frames --------------------------------------------------------------- */

void frame_put_u8(struct strbuf *sb, unsigned v)
{
	strbuf_addch(sb, (int)(v & 0xff));
}

void frame_put_u32(struct strbuf *sb, uint32_t v)
{
	uint32_t be = htonl(v);
	strbuf_add(sb, &be, sizeof(be));
}

void frame_put_u64(struct strbuf *sb, uint64_t v)
{
	uint64_t be = htobe64(v);
	strbuf_add(sb, &be, sizeof(be));
}

void frame_put_host(struct strbuf *sb, const char *host)
{
	size_t n = strlen(host);
	frame_put_u8(sb, (unsigned)n);
	strbuf_add(sb, host, n);
}

void frame_begin(struct strbuf *sb, enum msg_type type)
{
	strbuf_reset(sb);
	frame_put_u32(sb, 0);
	frame_put_u8(sb, type);
}

void frame_end(struct strbuf *sb)
{
	uint32_t be = htonl((uint32_t)(sb->len - 4));
	memcpy(sb->buf, &be, sizeof(be));
}

static const uint8_t *get_bytes(struct cursor *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || c->left < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

uint8_t cursor_u8(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 1);
	return p ? *p : 0;
}

uint32_t cursor_u32(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 4);
	uint32_t be;

	if (!p)
		return 0;
	memcpy(&be, p, sizeof(be));
	return ntohl(be);
}

uint64_t cursor_u64(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 8);
	uint64_t be;

	if (!p)
		return 0;
	memcpy(&be, p, sizeof(be));
	return be64toh(be);
}

void cursor_host(struct cursor *c, char host[RDV_HOSTNAME_MAX])
{
	size_t n = cursor_u8(c);
	const uint8_t *p = get_bytes(c, n);

	host[0] = '\0';
	if (!p || n >= RDV_HOSTNAME_MAX || memchr(p, '\0', n)) {
		c->bad = true;
		return;
	}
	memcpy(host, p, n);
	host[n] = '\0';
}

void rx_release(struct rx *rx)
{
	free(rx->buf);
	memset(rx, 0, sizeof(*rx));
}

static bool rx_done(const struct rx *rx)
{
	return rx->buf && rx->got == rx->len;
}

int conn_error(int e)
{
	if (e == EPIPE || e == ECONNRESET || e == ECONNABORTED)
		return -ECONNRESET;
	return -e;
}

int rx_step(int fd, struct rx *rx, size_t max)
{
	while (!rx_done(rx)) {
		uint8_t *p;
		size_t want;
		ssize_t n;

		if (rx->hdr_got < sizeof(rx->hdr)) {
			p = rx->hdr + rx->hdr_got;
			want = sizeof(rx->hdr) - rx->hdr_got;
		} else {
			p = rx->buf + rx->got;
			want = rx->len - rx->got;
		}
		n = recv(fd, p, want, MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return conn_error(errno);
		if (rx->buf) {
			rx->got += (size_t)n;
			continue;
		}
		rx->hdr_got += (size_t)n;
		if (rx->hdr_got == sizeof(rx->hdr)) {
			uint32_t be;
			memcpy(&be, rx->hdr, sizeof(be));
			rx->len = ntohl(be);
			if (rx->len == 0 || rx->len > max)
				return -EMSGSIZE;
			rx->buf = xmalloc(rx->len);
		}
	}
	return 1;
}

int tx_step(int fd, struct tx *tx)
{
	while (tx->off < tx->len) {
		ssize_t n =
			send(fd, tx->buf + tx->off, tx->len - tx->off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return conn_error(errno);
		tx->off += (size_t)n;
	}
	return 1;
}

const char *msg_name(unsigned type)
{
	static const char *const names[] = {
		[MSG_HELLO] = "hello",	    [MSG_WELCOME] = "welcome", [MSG_ABORT] = "abort",
		[MSG_BCAST] = "broadcast",  [MSG_GATHER] = "gather",   [MSG_BARRIER] = "barrier",
		[MSG_REDUCE] = "allreduce",
	};
	if (type < ARRAY_SIZE(names) && names[type])
		return names[type];
	return "unknown";
}

void send_abort(int fd, int e, const char *reason)
{
	struct strbuf f = STRBUF_INIT;
	size_t n = strlen(reason);

	frame_begin(&f, MSG_ABORT);
	frame_put_u32(&f, (uint32_t)e);
	strbuf_add(&f, reason, n < REASON_MAX ? n : REASON_MAX);
	frame_end(&f);
	(void)send(fd, f.buf, f.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	strbuf_release(&f);
}

void close_drained(int fd)
{
	char buf[4096];

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 64; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

/* ---- reasons ---------------------------------------------------------------- */

void add_duration(struct strbuf *sb, int ms)
{
	if (ms >= 1000 && ms % 1000 == 0)
		strbuf_addf(sb, "%d s", ms / 1000);
	else if (ms >= 1000)
		strbuf_addf(sb, "%.1f s", ms / 1000.0);
	else
		strbuf_addf(sb, "%d ms", ms);
}

void add_ranks(struct strbuf *sb, const int *ranks, size_t n)
{
	strbuf_addstr(sb, n == 1 ? "rank " : "ranks ");
	for (size_t i = 0; i < n && i < NAMED_MAX; i++)
		strbuf_addf(sb, "%s%d", i ? ", " : "", ranks[i]);
	if (n > NAMED_MAX)
		strbuf_addf(sb, " and %zu more", n - NAMED_MAX);
}

int rank_failed(int r, int e, struct strbuf *err)
{
	if (e == -ECONNRESET)
		strbuf_addf(err, "rank %d closed its connection", r);
	else
		strbuf_addf(err, "the connection to rank %d failed: %s", r, strerror(-e));
	return e;
}

/* ---- waiting ------------------------------------------------------------------ */

static void deadline_passed(struct loop *loop, void *data)
{
	(void)data;
	loop_stop(loop);
}

void rdv_wait_init(struct rdv_wait *w, uint64_t deadline)
{
	loop_init(&w->loop);
	loop_timer_init(&w->deadline, deadline_passed, NULL);
	w->until = deadline;
	w->left = 0;
	w->r = 0;
	w->timed_out = false;
}

void rdv_wait_release(struct rdv_wait *w)
{
	loop_release(&w->loop);
}

void rdv_wait_done(struct rdv_wait *w)
{
	if (w->left && !--w->left)
		loop_stop(&w->loop);
}

void rdv_wait_fail(struct rdv_wait *w, int r)
{
	if (!w->r)
		w->r = r;
	loop_stop(&w->loop);
}

bool rdv_wait_over(const struct rdv_wait *w)
{
	return w->r || !w->left;
}

int rdv_wait_run(struct rdv_wait *w, struct strbuf *err)
{
	int r;

	if (rdv_wait_over(w))
		return w->r;
	if (w->until != FOREVER)
		loop_timer_arm(&w->loop, &w->deadline, w->until);
	r = loop_run(&w->loop);
	if (r < 0) {
		strbuf_addf(err, "poll: %s", strerror(-r));
		return r;
	}
	if (rdv_wait_over(w))
		return w->r;
	/* Only the deadline stops the loop with something left. */
	w->timed_out = true;
	return -ETIMEDOUT;
}

/* ---- one frame with every peer -------------------------------------------------- */

uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? FOREVER : monotonic_ms() + (uint64_t)timeout_ms;
}

struct exchange;

/* The frame moving between this rank and one peer. */
struct xfer {
	struct exchange *ex;
	int rank; /* the peer */
	struct tx tx;
	struct rx *rx; /* where the frame goes, when receiving */
	bool done;
};

/* One frame with each peer of this rank: the peers are rank 0 or every other rank. */
struct exchange {
	struct rdv_wait wait;
	struct rdv *rdv;
	const struct rdv_call *call;
	enum msg_type type; /* receiving: what must come; 0 when sending */
	size_t max;
	struct xfer *x; /* by rank */
	int first, end; /* the peers' ranks */
};

/* An ABORT from rank 0: its reason into err, its errno returned. */
static int abort_received(const struct rx *rx, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	uint32_t e = cursor_u32(&c);

	strbuf_addstr(err, "rank 0 closed the connection");
	if (!c.bad && c.left) {
		strbuf_addstr(err, ": ");
		for (size_t i = 0; i < c.left; i++)
			strbuf_addch(err, c.p[i] < 0x20 || c.p[i] == 0x7f ? '?' : c.p[i]);
	}
	if (c.bad || e == 0 || e > 4095)
		return -ECONNRESET;
	return -(int)e;
}

/*
 * The connection to rank failed with e: say so.  A rank that lost rank 0
 * reads rank 0's reason, if it sent one before it closed.
 */
static int link_failed(struct rdv *rdv, int rank, int e, struct strbuf *err)
{
	struct rx rx = { 0 };
	int r;

	if (rdv->rank == 0 || e != -ECONNRESET)
		return rank_failed(rank, e, err);
	if (rx_step(rdv->fd[0], &rx, ABORT_MAX) > 0 && rx.buf[0] == MSG_ABORT) {
		r = abort_received(&rx, err);
	} else {
		strbuf_addstr(err, "rank 0 closed the connection");
		r = -ECONNRESET;
	}
	rx_release(&rx);
	return r;
}

/* A frame received whole from x's peer: is it the one expected? */
static int check_frame(const struct exchange *ex, const struct xfer *x)
{
	const struct rx *rx = x->rx;

	if (x->rank == 0 && rx->buf[0] == MSG_ABORT)
		return abort_received(rx, ex->call->err);
	if (rx->buf[0] != ex->type || rx->len > ex->max) {
		strbuf_addf(ex->call->err, "rank %d is out of step: it sent a %s message during %s",
			    x->rank, msg_name(rx->buf[0]), ex->call->what);
		return -EPROTO;
	}
	return 1;
}

/* Move what the socket takes of x's frame now: 1 once done, 0 for more, or -errno. */
static int xfer_step(struct xfer *x)
{
	const struct exchange *ex = x->ex;
	struct strbuf *err = ex->call->err;
	int fd = ex->rdv->fd[x->rank], r;

	if (!x->rx) {
		r = tx_step(fd, &x->tx);
		return r < 0 ? link_failed(ex->rdv, x->rank, r, err) : r;
	}
	/* Rank 0 may send an ABORT instead of a shorter frame. */
	r = rx_step(fd, x->rx, x->rank == 0 && ex->max < ABORT_MAX ? ABORT_MAX : ex->max);
	if (r == -EMSGSIZE) {
		strbuf_addf(err,
			    "rank %d is out of step: it sent a message of %zu bytes during %s, "
			    "which takes %zu",
			    x->rank, x->rx->len, ex->call->what, ex->max);
		return -EPROTO;
	}
	if (r < 0)
		return link_failed(ex->rdv, x->rank, r, err);
	return r > 0 ? check_frame(ex, x) : 0;
}

static void xfer_ready(struct loop *loop, int fd, short revents, void *data)
{
	struct xfer *x = data;
	struct rdv_wait *w = &x->ex->wait;
	int r;

	(void)revents;
	if (rdv_wait_over(w))
		return;
	r = xfer_step(x);
	if (r == 0)
		return;
	loop_unwatch_fd(loop, fd);
	if (r < 0) {
		rdv_wait_fail(w, r);
		return;
	}
	x->done = true;
	rdv_wait_done(w);
}

/* "ranks 1, 3 did not reach the gather within 30 s" */
static void exchange_timed_out(const struct exchange *ex)
{
	struct strbuf *err = ex->call->err;
	int *late = xcalloc((size_t)(ex->end - ex->first), sizeof(*late));
	size_t n = 0;
	const char *missed = "did not read";

	for (int p = ex->first; p < ex->end; p++)
		if (!ex->x[p].done)
			late[n++] = p;
	if (ex->type)
		missed = ex->rdv->rank == 0 ? "did not reach" : "did not complete";
	add_ranks(err, late, n);
	strbuf_addf(err, " %s %s within ", missed, ex->call->what);
	add_duration(err, ex->call->timeout_ms);
	free(late);
}

/* Try every frame at once; wait for those the sockets did not take or give whole. */
static int exchange_run(struct exchange *ex)
{
	struct rdv_wait *w = &ex->wait;
	int r = 0;

	for (int p = ex->first; p < ex->end && r >= 0; p++) {
		struct xfer *x = &ex->x[p];

		r = xfer_step(x);
		x->done = r > 0;
		if (r == 0) {
			loop_watch_fd(&w->loop, ex->rdv->fd[p], x->rx ? POLLIN : POLLOUT,
				      xfer_ready, x);
			w->left++;
		}
	}
	if (r >= 0)
		r = rdv_wait_run(w, ex->call->err);
	if (w->timed_out)
		exchange_timed_out(ex);
	return r < 0 ? r : 0;
}

static void exchange_init(struct exchange *ex, struct rdv *rdv, const struct rdv_call *call)
{
	/* Field by field: the loop in the wait is large, and zeroed once by rdv_wait_init(). */
	rdv_wait_init(&ex->wait, call->deadline);
	ex->rdv = rdv;
	ex->call = call;
	ex->type = 0;
	ex->max = 0;
	ex->first = rdv->rank == 0 ? 1 : 0;
	ex->end = rdv->rank == 0 ? rdv->world_size : 1;
	ex->x = xcalloc((size_t)rdv->world_size, sizeof(*ex->x));
	for (int p = ex->first; p < ex->end; p++)
		ex->x[p] = (struct xfer){ .ex = ex, .rank = p };
}

static void exchange_release(struct exchange *ex)
{
	rdv_wait_release(&ex->wait);
	free(ex->x);
}

int exchange_send(struct rdv *rdv, const struct strbuf *frames, bool each,
		  const struct rdv_call *call)
{
	struct exchange ex;
	int r;

	exchange_init(&ex, rdv, call);
	for (int p = ex.first; p < ex.end; p++) {
		const struct strbuf *f = &frames[each ? p : 0];
		ex.x[p].tx = (struct tx){ f->buf, f->len, 0 };
	}
	r = exchange_run(&ex);
	exchange_release(&ex);
	return r;
}

int exchange_recv(struct rdv *rdv, struct rx *rx, enum msg_type type, size_t max,
		  const struct rdv_call *call)
{
	struct exchange ex;
	int r;

	exchange_init(&ex, rdv, call);
	ex.type = type;
	ex.max = max;
	for (int p = ex.first; p < ex.end; p++)
		ex.x[p].rx = &rx[p];
	r = exchange_run(&ex);
	exchange_release(&ex);
	return r;
}
