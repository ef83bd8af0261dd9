/*
 * rendezvous.c - the TCP star of 'sparkctl bench nccl' (see rendezvous.h).
 *
 * Every message is a frame: a 32-bit length in network byte order, then
 * that many bytes of payload (1 to FRAME_MAX).  The payload's first byte
 * says what it is; integers are big-endian and doubles travel as the
 * big-endian bits of their IEEE 754 value.
 *
 *   HELLO    rank -> 0  magic u32, version u32, rank u32, world size u32,
 *                       host name (u8 length, bytes)
 *   WELCOME  0 -> rank  rank u32, world size u32, local rank u32, local
 *                       size u32, every rank's host name (u8 length, bytes)
 *   ABORT    0 -> rank  errno u32, the reason (text up to the end)
 *   BCAST    0 -> rank  the bytes
 *   GATHER   rank -> 0  the bytes
 *   BARRIER  both ways  nothing
 *   REDUCE   both ways  kind u8, op u8, count u32, the values (u64 each)
 *
 * Barrier and allreduce are a gather to rank 0 and a broadcast from it.
 *
 * While rank 0 waits for the ranks it accepts any connection.  One whose
 * first frame is not a hello of this protocol (a port scanner, a stray
 * client) is closed and otherwise ignored, so that noise cannot stop the
 * star from forming; a timeout says how many there were.  A hello that
 * does not fit (another protocol version or world size, a rank out of
 * range or twice) fails the rendezvous: that is a misconfigured job.
 *
 * When a call fails, the rank closes its connections; rank 0 first sends
 * every rank an ABORT with the reason, so that they fail with it too.
 * Sockets are nonblocking, every wait is a poll() bounded by the call's
 * deadline, sends use MSG_NOSIGNAL and every descriptor is close-on-exec.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <endian.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include "bench/rendezvous.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

#define RDV_MAGIC    0x53524456u /* "SRDV" */
#define RDV_VERSION  1u
/* The largest payload of a frame: broadcast and gather take FRAME_MAX - 1 bytes. */
#define FRAME_MAX    (16u << 20)
/* type, magic, version, rank, world size, host name */
#define HELLO_MAX    (1 + 4 * 4 + 1 + RDV_HOSTNAME_MAX)
/* The reason of an ABORT is cut at this many bytes. */
#define REASON_MAX   1024
#define ABORT_MAX    (1 + 4 + REASON_MAX)
/* The most connections rank 0 holds that have not said hello yet; then the oldest goes. */
#define STRAYS_MAX   64
/* The most ranks named in a message. */
#define NAMED_MAX    16
/* The world size is bounded so that the host name table fits a frame. */
#define WORLD_MAX    (1 << 16)
/* Connecting to rank 0 is retried after this long, doubling up to the max. */
#define RETRY_MIN_MS 20
#define RETRY_MAX_MS 500
#define FOREVER	     UINT64_MAX

enum msg_type {
	MSG_HELLO = 1,
	MSG_WELCOME,
	MSG_ABORT,
	MSG_BCAST,
	MSG_GATHER,
	MSG_BARRIER,
	MSG_REDUCE,
};

enum reduce_kind {
	KIND_DOUBLE,
	KIND_U64
};

struct rdv {
	int rank, world_size;
	int local_rank, local_size;
	/* rank 0: fd[r] is the connection of rank r; others: fd[0] the one to rank 0; -1: none */
	int *fd;
	char (*host)[RDV_HOSTNAME_MAX]; /* every rank's host name */
	struct strbuf failed;		/* why a call failed; empty while all is well */
};

/* ---- frames --------------------------------------------------------------- */

static void put_u8(struct strbuf *sb, unsigned v)
{
	strbuf_addch(sb, (int)(v & 0xff));
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	uint32_t be = htonl(v);
	strbuf_add(sb, &be, sizeof(be));
}

static void put_u64(struct strbuf *sb, uint64_t v)
{
	uint64_t be = htobe64(v);
	strbuf_add(sb, &be, sizeof(be));
}

static void put_host(struct strbuf *sb, const char *host)
{
	size_t n = strlen(host);
	put_u8(sb, (unsigned)n);
	strbuf_add(sb, host, n);
}

/* Start a frame of the given type in sb; frame_end() fills in its length. */
static void frame_begin(struct strbuf *sb, enum msg_type type)
{
	strbuf_reset(sb);
	put_u32(sb, 0);
	put_u8(sb, type);
}

static void frame_end(struct strbuf *sb)
{
	uint32_t be = htonl((uint32_t)(sb->len - 4));
	memcpy(sb->buf, &be, sizeof(be));
}

/* Reading a payload; bad is set by a read past its end. */
struct cursor {
	const uint8_t *p;
	size_t left;
	bool bad;
};

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

static uint8_t get_u8(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 1);
	return p ? *p : 0;
}

static uint32_t get_u32(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 4);
	uint32_t be;

	if (!p)
		return 0;
	memcpy(&be, p, sizeof(be));
	return ntohl(be);
}

static uint64_t get_u64(struct cursor *c)
{
	const uint8_t *p = get_bytes(c, 8);
	uint64_t be;

	if (!p)
		return 0;
	memcpy(&be, p, sizeof(be));
	return be64toh(be);
}

/* A host name: shorter than RDV_HOSTNAME_MAX, no NUL inside. */
static void get_host(struct cursor *c, char host[RDV_HOSTNAME_MAX])
{
	size_t n = get_u8(c);
	const uint8_t *p = get_bytes(c, n);

	host[0] = '\0';
	if (!p || n >= RDV_HOSTNAME_MAX || memchr(p, '\0', n)) {
		c->bad = true;
		return;
	}
	memcpy(host, p, n);
	host[n] = '\0';
}

/* A frame being received: its length, then its payload. */
struct rx {
	uint8_t hdr[4];
	size_t hdr_got;
	uint8_t *buf; /* the payload, once the length is known */
	size_t len, got;
};

static void rx_release(struct rx *rx)
{
	free(rx->buf);
	memset(rx, 0, sizeof(*rx));
}

static bool rx_done(const struct rx *rx)
{
	return rx->buf && rx->got == rx->len;
}

/* The -errno of a failed recv() or send(); a peer that went away gives -ECONNRESET. */
static int conn_error(int e)
{
	if (e == EPIPE || e == ECONNRESET || e == ECONNABORTED)
		return -ECONNRESET;
	return -e;
}

/*
 * Read what fd has of the frame, without blocking and without reading
 * past its end.  Returns 1 once the frame is complete, 0 when more is to
 * come, -ECONNRESET when the peer closed, -EMSGSIZE for a length of 0 or
 * over max (rx->len holds it), or another -errno.
 */
static int rx_step(int fd, struct rx *rx, size_t max)
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

/* A frame being sent. */
struct tx {
	const char *buf;
	size_t len, off;
};

/* Send what fd takes now: 1 once all is sent, 0 when more is to go, or -errno. */
static int tx_step(int fd, struct tx *tx)
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

static const char *msg_name(unsigned type)
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

/* ---- deadlines and messages ------------------------------------------------ */

static uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? FOREVER : monotonic_ms() + (uint64_t)timeout_ms;
}

/* The poll() timeout until deadline: -1 for none, 0 once it has passed. */
static int ms_left(uint64_t deadline)
{
	uint64_t now;

	if (deadline == FOREVER)
		return -1;
	now = monotonic_ms();
	if (now >= deadline)
		return 0;
	return deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
}

/* poll() until something is ready (> 0) or the deadline has passed (0); or -errno. */
static int poll_until(struct pollfd *pfd, nfds_t n, uint64_t deadline)
{
	for (;;) {
		int wait = ms_left(deadline);
		int r = poll(pfd, n, wait);

		if (r > 0)
			return r;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (wait == 0 || ms_left(deadline) == 0)
			return 0;
	}
}

/* "3 s", "2.5 s" or "300 ms". */
static void add_duration(struct strbuf *sb, int ms)
{
	if (ms >= 1000 && ms % 1000 == 0)
		strbuf_addf(sb, "%d s", ms / 1000);
	else if (ms >= 1000)
		strbuf_addf(sb, "%.1f s", ms / 1000.0);
	else
		strbuf_addf(sb, "%d ms", ms);
}

/* "rank 3" or "ranks 1, 3" (at most NAMED_MAX named, then "and N more"). */
static void add_ranks(struct strbuf *sb, const int *ranks, size_t n)
{
	strbuf_addstr(sb, n == 1 ? "rank " : "ranks ");
	for (size_t i = 0; i < n && i < NAMED_MAX; i++)
		strbuf_addf(sb, "%s%d", i ? ", " : "", ranks[i]);
	if (n > NAMED_MAX)
		strbuf_addf(sb, " and %zu more", n - NAMED_MAX);
}

/* Say that rank r (seen from rank 0) failed with e; returns the -errno to fail with. */
static int rank_failed(int r, int e, struct strbuf *err)
{
	if (e == -ECONNRESET)
		strbuf_addf(err, "rank %d closed its connection", r);
	else
		strbuf_addf(err, "the connection to rank %d failed: %s", r, strerror(-e));
	return e;
}

/* ---- failure ---------------------------------------------------------------- */

/* Tell a rank why rank 0 gives up, if its socket takes it now. */
static void send_abort(int fd, int e, const char *reason)
{
	struct strbuf f = STRBUF_INIT;
	size_t n = strlen(reason);

	frame_begin(&f, MSG_ABORT);
	put_u32(&f, (uint32_t)e);
	strbuf_add(&f, reason, n < REASON_MAX ? n : REASON_MAX);
	frame_end(&f);
	(void)send(fd, f.buf, f.len, MSG_DONTWAIT | MSG_NOSIGNAL);
	strbuf_release(&f);
}

/*
 * Close a connection after reading what is pending on it, so that the
 * peer gets an end of file after what was sent to it, rather than a reset
 * that could discard it.
 */
static void close_drained(int fd)
{
	char buf[4096];

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 64; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
	close(fd);
}

/*
 * Give up after a failure r whose reason is what err holds from mark on:
 * remember it, have rank 0 tell every rank, and close every connection.
 */
static int rdv_fail(struct rdv *rdv, int r, struct strbuf *err, size_t mark)
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

/* ---- rank 0's side of a collective ------------------------------------------ */

/*
 * Wait until one of the n ranks in who[] (polled through pfd) can go on,
 * or the deadline; then name those that did not: "ranks 1, 3 did not
 * read the id within 30 s".
 */
static int wait_ranks(struct pollfd *pfd, const int *who, nfds_t n, uint64_t deadline,
		      int timeout_ms, const char *missed, const char *what, struct strbuf *err)
{
	int r = poll_until(pfd, n, deadline);

	if (r < 0) {
		strbuf_addf(err, "poll: %s", strerror(-r));
		return r;
	}
	if (r == 0) {
		add_ranks(err, who, n);
		strbuf_addf(err, " %s %s within ", missed, what);
		add_duration(err, timeout_ms);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Send every other rank its frame (frames[r], or frames[0] for all when !each). */
static int root_send_all(struct rdv *rdv, const struct strbuf *frames, bool each, uint64_t deadline,
			 int timeout_ms, const char *what, struct strbuf *err)
{
	size_t world = (size_t)rdv->world_size;
	struct tx *tx = xcalloc(world, sizeof(*tx));
	struct pollfd *pfd = xcalloc(world, sizeof(*pfd));
	int *who = xcalloc(world, sizeof(*who));
	int r;

	for (size_t i = 1; i < world; i++) {
		tx[i].buf = frames[each ? i : 0].buf;
		tx[i].len = frames[each ? i : 0].len;
	}
	for (;;) {
		nfds_t n = 0;

		for (size_t i = 1; i < world; i++) {
			if (tx[i].off == tx[i].len)
				continue;
			r = tx_step(rdv->fd[i], &tx[i]);
			if (r < 0) {
				r = rank_failed((int)i, r, err);
				goto out;
			}
			if (r == 0) {
				pfd[n] = (struct pollfd){ .fd = rdv->fd[i], .events = POLLOUT };
				who[n++] = (int)i;
			}
		}
		if (!n) {
			r = 0;
			break;
		}
		r = wait_ranks(pfd, who, n, deadline, timeout_ms, "did not read", what, err);
		if (r < 0)
			goto out;
	}
out:
	free(tx);
	free(pfd);
	free(who);
	return r;
}

/*
 * Receive one frame of at most max bytes from every other rank into rx[r]
 * and check that it is of the given type.
 */
static int root_recv_all(struct rdv *rdv, struct rx *rx, enum msg_type type, size_t max,
			 uint64_t deadline, int timeout_ms, const char *what, struct strbuf *err)
{
	size_t world = (size_t)rdv->world_size;
	struct pollfd *pfd = xcalloc(world, sizeof(*pfd));
	int *who = xcalloc(world, sizeof(*who));
	int r;

	for (;;) {
		nfds_t n = 0;

		for (size_t i = 1; i < world; i++) {
			if (rx_done(&rx[i]))
				continue;
			r = rx_step(rdv->fd[i], &rx[i], max);
			if (r == -EMSGSIZE) {
				strbuf_addf(
					err,
					"rank %zu is out of step: it sent a message of %zu bytes "
					"during %s, which takes %zu",
					i, rx[i].len, what, max);
				r = -EPROTO;
				goto out;
			}
			if (r < 0) {
				r = rank_failed((int)i, r, err);
				goto out;
			}
			if (r > 0 && rx[i].buf[0] != type) {
				strbuf_addf(
					err,
					"rank %zu is out of step: it sent a %s message during %s",
					i, msg_name(rx[i].buf[0]), what);
				r = -EPROTO;
				goto out;
			}
			if (r == 0) {
				pfd[n] = (struct pollfd){ .fd = rdv->fd[i], .events = POLLIN };
				who[n++] = (int)i;
			}
		}
		if (!n) {
			r = 0;
			break;
		}
		r = wait_ranks(pfd, who, n, deadline, timeout_ms, "did not reach", what, err);
		if (r < 0)
			goto out;
	}
out:
	free(pfd);
	free(who);
	return r;
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

/* ---- the other ranks' side ---------------------------------------------------- */

/* An ABORT from rank 0: its reason into err, its errno returned. */
static int abort_received(const struct rx *rx, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	uint32_t e = get_u32(&c);

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

/* Rank 0's connection failed with e: say so, with rank 0's reason if it sent one. */
static int root_lost(struct rdv *rdv, int e, struct strbuf *err)
{
	struct rx rx = { 0 };
	int r;

	if (e != -ECONNRESET) {
		strbuf_addf(err, "the connection to rank 0 failed: %s", strerror(-e));
		return e;
	}
	if (rx_step(rdv->fd[0], &rx, ABORT_MAX) > 0 && rx.buf[0] == MSG_ABORT) {
		r = abort_received(&rx, err);
	} else {
		strbuf_addstr(err, "rank 0 closed the connection");
		r = -ECONNRESET;
	}
	rx_release(&rx);
	return r;
}

static int peer_send(struct rdv *rdv, const struct strbuf *frame, uint64_t deadline, int timeout_ms,
		     const char *what, struct strbuf *err)
{
	struct tx tx = { frame->buf, frame->len, 0 };

	for (;;) {
		struct pollfd pfd = { .fd = rdv->fd[0], .events = POLLOUT };
		int r = tx_step(rdv->fd[0], &tx);

		if (r > 0)
			return 0;
		if (r < 0)
			return root_lost(rdv, r, err);
		r = poll_until(&pfd, 1, deadline);
		if (r < 0) {
			strbuf_addf(err, "poll: %s", strerror(-r));
			return r;
		}
		if (r == 0) {
			strbuf_addf(err, "rank 0 did not read %s within ", what);
			add_duration(err, timeout_ms);
			return -ETIMEDOUT;
		}
	}
}

/* Receive rank 0's next frame (at most max bytes) into rx; it must be of the given type. */
static int peer_recv(struct rdv *rdv, struct rx *rx, enum msg_type type, size_t max,
		     uint64_t deadline, int timeout_ms, const char *what, struct strbuf *err)
{
	for (;;) {
		struct pollfd pfd = { .fd = rdv->fd[0], .events = POLLIN };
		int r = rx_step(rdv->fd[0], rx, max < ABORT_MAX ? ABORT_MAX : max);

		if (r > 0)
			break;
		if (r == -EMSGSIZE) {
			strbuf_addf(
				err,
				"rank 0 is out of step: it sent a message of %zu bytes during %s, "
				"which takes %zu",
				rx->len, what, max);
			return -EPROTO;
		}
		if (r < 0)
			return root_lost(rdv, r, err);
		r = poll_until(&pfd, 1, deadline);
		if (r < 0) {
			strbuf_addf(err, "poll: %s", strerror(-r));
			return r;
		}
		if (r == 0) {
			strbuf_addf(err, "rank 0 did not complete %s within ", what);
			add_duration(err, timeout_ms);
			return -ETIMEDOUT;
		}
	}
	if (rx->buf[0] == MSG_ABORT)
		return abort_received(rx, err);
	if (rx->buf[0] != type || rx->len > max) {
		strbuf_addf(err, "rank 0 is out of step: it sent a %s message during %s",
			    msg_name(rx->buf[0]), what);
		return -EPROTO;
	}
	return 0;
}

/* ---- joining ------------------------------------------------------------------ */

static void set_nodelay(int fd)
{
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int own_hostname(char host[RDV_HOSTNAME_MAX], struct strbuf *err)
{
	char buf[HOST_NAME_MAX + 1];
	size_t n;

	if (gethostname(buf, sizeof(buf)) < 0) {
		int e = errno;
		strbuf_addf(err, "cannot get the host name: %s", strerror(e));
		return -e;
	}
	buf[sizeof(buf) - 1] = '\0';
	n = strnlen(buf, RDV_HOSTNAME_MAX - 1);
	memcpy(host, buf, n);
	host[n] = '\0';
	return 0;
}

/* One IPv4 address of host (NULL or "": any). */
static int resolve(const char *host, struct in_addr *ret, struct strbuf *err)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	int r;

	if (!host || !*host) {
		ret->s_addr = htonl(INADDR_ANY);
		return 0;
	}
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r == EAI_SYSTEM) {
		int e = errno;
		strbuf_addf(err, "cannot resolve '%s': %s", host, strerror(e));
		return -e;
	}
	if (r != 0 || !res) {
		strbuf_addf(err, "cannot resolve '%s': %s", host,
			    r ? gai_strerror(r) : "no address");
		if (res)
			freeaddrinfo(res);
		return -ENXIO;
	}
	*ret = ((const struct sockaddr_in *)(const void *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

int rdv_listen(const char *host, uint16_t port, int *ret_fd, uint16_t *ret_port, struct strbuf *err)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	socklen_t len = sizeof(sin);
	int fd, one = 1, r;

	r = resolve(host, &sin.sin_addr, err);
	if (r < 0)
		return r;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		int e = errno;
		strbuf_addf(err, "cannot listen on %s:%u: %s", host && *host ? host : "*",
			    (unsigned)port, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	*ret_fd = fd;
	*ret_port = ntohs(sin.sin_port);
	return 0;
}

/* A connection rank 0 has accepted that has not said hello yet. */
struct pending {
	int fd; /* -1 once dropped or taken */
	struct rx rx;
};

/*
 * The first frame of a connection, on rank 0.  Returns 1 when it made the
 * connection rank rdv->fd[rank], 0 when it is no hello of this protocol
 * (the caller drops it), or a -errno that fails the rendezvous (the peer
 * has been told why).
 */
static int take_hello(struct rdv *rdv, struct pending *p, struct strbuf *err)
{
	struct cursor c = { p->rx.buf, p->rx.len, false };
	char host[RDV_HOSTNAME_MAX];
	uint32_t version, rank, world;
	size_t mark = err->len;

	if (get_u8(&c) != MSG_HELLO || get_u32(&c) != RDV_MAGIC || c.bad)
		return 0;
	version = get_u32(&c);
	rank = get_u32(&c);
	world = get_u32(&c);
	get_host(&c, host);
	if (version != RDV_VERSION && !c.bad)
		strbuf_addf(
			err,
			"a rank speaks version %u of the rendezvous protocol, rank 0 version %u",
			version, RDV_VERSION);
	else if (c.bad || c.left)
		strbuf_addstr(err, "a rank sent a malformed hello");
	else if (world != (uint32_t)rdv->world_size)
		strbuf_addf(err, "rank %u (host %s) says the world size is %u, rank 0 says %d",
			    rank, host, world, rdv->world_size);
	else if (rank == 0)
		strbuf_addf(err, "a second rank 0 joined (host %s)", host);
	else if (rank >= world)
		strbuf_addf(err, "rank %u (host %s) is out of range: the world size is %u", rank,
			    host, world);
	else if (rdv->fd[rank] >= 0)
		strbuf_addf(err, "rank %u joined twice (hosts %s and %s)", rank, rdv->host[rank],
			    host);
	else {
		rdv->fd[rank] = p->fd;
		memcpy(rdv->host[rank], host, sizeof(host));
		p->fd = -1;
		return 1;
	}
	send_abort(p->fd, EPROTO, err->buf + mark);
	return -EPROTO;
}

/* An event on the connection of a rank that has said hello: it must be its end. */
static int early_event(int rank, int fd, struct strbuf *err)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n > 0) {
		strbuf_addf(err, "rank %d sent a message before every rank had joined", rank);
		return -EPROTO;
	}
	return rank_failed(rank, n == 0 ? -ECONNRESET : conn_error(errno), err);
}

/* Accept what is waiting on the listening socket. */
static int accept_all(int listen_fd, struct pending *pend, size_t *nr_pend, unsigned *strays,
		      struct strbuf *err)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && errno == EAGAIN)
			return 0;
		if (fd < 0) {
			int e = errno;
			strbuf_addf(err, "cannot accept a connection: %s", strerror(e));
			return -e;
		}
		if (*nr_pend == STRAYS_MAX) {
			/* the oldest has had the longest to say hello */
			close(pend[0].fd);
			rx_release(&pend[0].rx);
			memmove(pend, pend + 1, (STRAYS_MAX - 1) * sizeof(*pend));
			(*nr_pend)--;
			(*strays)++;
		}
		set_nodelay(fd);
		pend[(*nr_pend)++] = (struct pending){ .fd = fd };
	}
}

static void join_timed_out(const struct rdv *rdv, unsigned strays, int timeout_ms,
			   struct strbuf *err)
{
	int *missing = xcalloc((size_t)rdv->world_size, sizeof(*missing));
	size_t n = 0;

	for (int i = 1; i < rdv->world_size; i++)
		if (rdv->fd[i] < 0)
			missing[n++] = i;
	add_ranks(err, missing, n);
	strbuf_addstr(err, " did not connect within ");
	add_duration(err, timeout_ms);
	if (strays)
		strbuf_addf(err, " (%u other connection%s sent no valid hello)", strays,
			    strays == 1 ? "" : "s");
	free(missing);
}

/* Local ranks from the host names; then every rank's WELCOME. */
static int send_welcomes(struct rdv *rdv, uint64_t deadline, int timeout_ms, struct strbuf *err)
{
	size_t world = (size_t)rdv->world_size;
	struct strbuf *frames = xcalloc(world, sizeof(*frames));
	int r;

	for (size_t i = 0; i < world; i++) {
		uint32_t local_rank = 0, local_size = 0;

		for (size_t j = 0; j < world; j++) {
			if (strcmp(rdv->host[i], rdv->host[j]))
				continue;
			local_size++;
			if (j < i)
				local_rank++;
		}
		if (i == 0) {
			rdv->local_rank = (int)local_rank;
			rdv->local_size = (int)local_size;
			continue;
		}
		strbuf_init(&frames[i], 0);
		frame_begin(&frames[i], MSG_WELCOME);
		put_u32(&frames[i], (uint32_t)i);
		put_u32(&frames[i], (uint32_t)world);
		put_u32(&frames[i], local_rank);
		put_u32(&frames[i], local_size);
		for (size_t j = 0; j < world; j++)
			put_host(&frames[i], rdv->host[j]);
		frame_end(&frames[i]);
	}
	r = root_send_all(rdv, frames, true, deadline, timeout_ms, "the welcome", err);
	for (size_t i = 1; i < world; i++)
		strbuf_release(&frames[i]);
	free(frames);
	return r;
}

static int root_join(struct rdv *rdv, int listen_fd, uint64_t deadline, int timeout_ms,
		     struct strbuf *err)
{
	size_t world = (size_t)rdv->world_size;
	struct pending *pend = xcalloc(STRAYS_MAX, sizeof(*pend));
	struct pollfd *pfd = xcalloc(1 + world + STRAYS_MAX, sizeof(*pfd));
	int *who = xcalloc(world, sizeof(*who));
	size_t nr_pend = 0, arrived = 1;
	unsigned strays = 0;
	int r = 0;

	if (fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot make the listening socket nonblocking: %s", strerror(-r));
		goto out;
	}
	while (arrived < world) {
		nfds_t n = 0, first_pend;
		size_t j;

		pfd[n++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
		for (size_t i = 1; i < world; i++)
			if (rdv->fd[i] >= 0) {
				who[n - 1] = (int)i;
				pfd[n++] = (struct pollfd){ .fd = rdv->fd[i], .events = POLLIN };
			}
		first_pend = n;
		for (size_t i = 0; i < nr_pend; i++)
			pfd[n++] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN };
		r = poll_until(pfd, n, deadline);
		if (r < 0) {
			strbuf_addf(err, "poll: %s", strerror(-r));
			goto out;
		}
		if (r == 0) {
			join_timed_out(rdv, strays + (unsigned)nr_pend, timeout_ms, err);
			r = -ETIMEDOUT;
			goto out;
		}
		/* A rank that has said hello has nothing more to say until the welcome. */
		for (nfds_t i = 1; i < first_pend; i++) {
			if (!pfd[i].revents)
				continue;
			r = early_event(who[i - 1], pfd[i].fd, err);
			if (r < 0)
				goto out;
		}
		for (size_t i = 0; i < nr_pend; i++) {
			if (!pfd[first_pend + i].revents)
				continue;
			r = rx_step(pend[i].fd, &pend[i].rx, HELLO_MAX);
			if (r == 0)
				continue;
			if (r > 0) {
				r = take_hello(rdv, &pend[i], err);
				if (r < 0)
					goto out;
				if (r > 0)
					arrived++;
			}
			/* taken as a rank, or no rank: it is pending no more */
			if (pend[i].fd >= 0) {
				close(pend[i].fd);
				strays++;
			}
			rx_release(&pend[i].rx);
			pend[i].fd = -1;
		}
		j = 0;
		for (size_t i = 0; i < nr_pend; i++)
			if (pend[i].fd >= 0)
				pend[j++] = pend[i];
		nr_pend = j;
		if (pfd[0].revents) {
			r = accept_all(listen_fd, pend, &nr_pend, &strays, err);
			if (r < 0)
				goto out;
		}
	}
	r = send_welcomes(rdv, deadline, timeout_ms, err);
out:
	for (size_t i = 0; i < nr_pend; i++) {
		close(pend[i].fd);
		rx_release(&pend[i].rx);
	}
	free(pend);
	free(pfd);
	free(who);
	return r;
}

/* addr "HOST:PORT" into host (allocated) and sin's port. */
static int parse_addr(const char *addr, char **ret_host, struct sockaddr_in *sin,
		      struct strbuf *err)
{
	const char *colon = strrchr(addr, ':');
	uint32_t port;

	if (!colon || colon == addr || parse_u32(colon + 1, &port) < 0 || !port || port > 65535) {
		strbuf_addf(err, "rank 0's address '%s' is not HOST:PORT", addr);
		return -EINVAL;
	}
	*ret_host = xstrndup(addr, (size_t)(colon - addr));
	sin->sin_port = htons((uint16_t)port);
	return 0;
}

static bool retry_connect(int e)
{
	return e == ECONNREFUSED || e == ECONNRESET || e == ECONNABORTED || e == ETIMEDOUT ||
	       e == EHOSTUNREACH || e == ENETUNREACH || e == EAGAIN;
}

/* True when fd is connected to itself (a local port that rank 0 does not listen on yet). */
static bool self_connected(int fd)
{
	struct sockaddr_in a, b;
	socklen_t alen = sizeof(a), blen = sizeof(b);

	if (getsockname(fd, (struct sockaddr *)&a, &alen) < 0 ||
	    getpeername(fd, (struct sockaddr *)&b, &blen) < 0)
		return false;
	return a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port;
}

/* One try; 0 and the socket in *ret_fd, or -errno. */
static int connect_once(const struct sockaddr_in *sin, uint64_t deadline, int *ret_fd)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int r;

	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sin, sizeof(*sin));
	if (r < 0 && errno == EINPROGRESS) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int e = 0;
		socklen_t len = sizeof(e);

		r = poll_until(&pfd, 1, deadline);
		if (r == 0)
			errno = ETIMEDOUT;
		else if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0)
			errno = e;
		else if (r < 0)
			errno = -r;
		r = errno ? -1 : 0;
	}
	if (r == 0 && self_connected(fd)) {
		r = -1;
		errno = ECONNREFUSED;
	}
	if (r < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

static int connect_root(struct rdv *rdv, const char *addr, uint64_t deadline, int timeout_ms,
			struct strbuf *err)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char *host = NULL;
	int wait = RETRY_MIN_MS, r;

	r = parse_addr(addr, &host, &sin, err);
	if (r < 0)
		return r;
	r = resolve(host, &sin.sin_addr, err);
	free(host);
	if (r < 0)
		return r;
	for (;;) {
		int left;

		r = connect_once(&sin, deadline, &rdv->fd[0]);
		if (r == 0) {
			set_nodelay(rdv->fd[0]);
			return 0;
		}
		if (!retry_connect(-r)) {
			strbuf_addf(err, "cannot connect to rank 0 at %s: %s", addr, strerror(-r));
			return r;
		}
		left = ms_left(deadline);
		if (left == 0)
			break;
		poll(NULL, 0, left < 0 || left > wait ? wait : left);
		wait = wait * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : wait * 2;
	}
	strbuf_addf(err, "could not connect to rank 0 at %s within ", addr);
	add_duration(err, timeout_ms);
	strbuf_addf(err, " (%s)", strerror(-r));
	return -ETIMEDOUT;
}

static int read_welcome(struct rdv *rdv, const struct rx *rx, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	uint32_t rank = get_u32(&c), world = get_u32(&c);
	uint32_t local_rank = get_u32(&c), local_size = get_u32(&c);

	if (!c.bad && rank == (uint32_t)rdv->rank && world == (uint32_t)rdv->world_size &&
	    local_rank < local_size && local_size <= world) {
		for (int i = 0; i < rdv->world_size; i++)
			get_host(&c, rdv->host[i]);
		if (!c.bad && !c.left) {
			rdv->local_rank = (int)local_rank;
			rdv->local_size = (int)local_size;
			return 0;
		}
	}
	strbuf_addstr(err, "rank 0 sent a malformed welcome");
	return -EPROTO;
}

static int peer_join(struct rdv *rdv, const char *addr, uint64_t deadline, int timeout_ms,
		     struct strbuf *err)
{
	struct strbuf f = STRBUF_INIT, what = STRBUF_INIT;
	struct rx rx = { 0 };
	int r;

	r = connect_root(rdv, addr, deadline, timeout_ms, err);
	if (r < 0)
		return r;
	frame_begin(&f, MSG_HELLO);
	put_u32(&f, RDV_MAGIC);
	put_u32(&f, RDV_VERSION);
	put_u32(&f, (uint32_t)rdv->rank);
	put_u32(&f, (uint32_t)rdv->world_size);
	put_host(&f, rdv->host[rdv->rank]);
	frame_end(&f);
	strbuf_addf(&what, "the rendezvous (at %s)", addr);
	r = peer_send(rdv, &f, deadline, timeout_ms, what.buf, err);
	if (r == 0)
		r = peer_recv(rdv, &rx, MSG_WELCOME,
			      1 + 4 * 4 + (size_t)rdv->world_size * RDV_HOSTNAME_MAX, deadline,
			      timeout_ms, what.buf, err);
	if (r == 0)
		r = read_welcome(rdv, &rx, err);
	rx_release(&rx);
	strbuf_release(&f);
	strbuf_release(&what);
	return r;
}

int rdv_join(struct rdv **ret, int rank, int world_size, int listen_fd, const char *addr,
	     int timeout_ms, struct strbuf *err)
{
	uint64_t deadline = deadline_of(timeout_ms);
	size_t mark = err->len;
	struct rdv *rdv;
	int r;

	*ret = NULL;
	if (world_size < 1 || world_size > WORLD_MAX || rank < 0 || rank >= world_size) {
		strbuf_addf(err, "rank %d of a world of %d is not a valid rank", rank, world_size);
		r = -EINVAL;
	} else if (rank == 0 && (listen_fd < 0 || addr)) {
		strbuf_addstr(err, "rank 0 joins with its listening socket and no address");
		r = -EINVAL;
	} else if (rank != 0 && (listen_fd >= 0 || !addr)) {
		strbuf_addf(err, "rank %d joins with rank 0's address and no listening socket",
			    rank);
		r = -EINVAL;
	} else
		r = 0;
	if (r < 0) {
		if (listen_fd >= 0)
			close(listen_fd);
		return r;
	}

	rdv = xcalloc(1, sizeof(*rdv));
	rdv->rank = rank;
	rdv->world_size = world_size;
	rdv->local_size = 1;
	rdv->fd = xmalloc((size_t)world_size * sizeof(*rdv->fd));
	for (int i = 0; i < world_size; i++)
		rdv->fd[i] = -1;
	rdv->host = xcalloc((size_t)world_size, sizeof(*rdv->host));
	strbuf_init(&rdv->failed, 0);

	r = own_hostname(rdv->host[rank], err);
	if (r == 0 && rank == 0)
		r = root_join(rdv, listen_fd, deadline, timeout_ms, err);
	else if (r == 0)
		r = peer_join(rdv, addr, deadline, timeout_ms, err);
	if (listen_fd >= 0)
		close(listen_fd);
	if (r < 0) {
		rdv_fail(rdv, r, err, mark);
		rdv_close(rdv);
		return r;
	}
	*ret = rdv;
	return 0;
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
static int bcast_frame(struct rdv *rdv, enum msg_type type, struct strbuf *frame, size_t len,
		       struct rx *rx, uint64_t deadline, int timeout_ms, const char *what,
		       struct strbuf *err)
{
	int r;

	if (rdv->rank == 0)
		return root_send_all(rdv, frame, false, deadline, timeout_ms, what, err);
	r = peer_recv(rdv, rx, type, 1 + len, deadline, timeout_ms, what, err);
	if (r == 0 && rx->len != 1 + len) {
		strbuf_addf(err,
			    "rank 0 is out of step: it sent %zu bytes during %s, which takes %zu",
			    rx->len - 1, what, len);
		r = -EPROTO;
	}
	return r;
}

int rdv_broadcast(struct rdv *rdv, void *buf, size_t len, int timeout_ms, struct strbuf *err)
{
	uint64_t deadline = deadline_of(timeout_ms);
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
		r = bcast_frame(rdv, MSG_BCAST, &f, len, &rx, deadline, timeout_ms, "the broadcast",
				err);
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
			struct rx *rx, uint64_t deadline, int timeout_ms, const char *what,
			struct strbuf *err)
{
	int r;

	if (rdv->rank != 0)
		return peer_send(rdv, frame, deadline, timeout_ms, what, err);
	r = root_recv_all(rdv, rx, type, 1 + len, deadline, timeout_ms, what, err);
	for (int i = 1; r == 0 && i < rdv->world_size; i++)
		if (rx[i].len != 1 + len) {
			strbuf_addf(err,
				    "rank %d is out of step: it sent %zu bytes during %s, "
				    "which takes %zu",
				    i, rx[i].len - 1, what, len);
			r = -EPROTO;
		}
	return r;
}

int rdv_gather(struct rdv *rdv, const void *mine, size_t len, void *all, int timeout_ms,
	       struct strbuf *err)
{
	uint64_t deadline = deadline_of(timeout_ms);
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
		r = gather_frame(rdv, MSG_GATHER, &f, len, rx, deadline, timeout_ms, "the gather",
				 err);
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
	uint64_t deadline = deadline_of(timeout_ms);
	struct strbuf f = STRBUF_INIT;
	struct rx *rx = rx_array(rdv);
	size_t mark = err->len;
	int r;

	r = check_usable(rdv, err);
	if (r < 0)
		goto out;
	frame_begin(&f, MSG_BARRIER);
	frame_end(&f);
	r = gather_frame(rdv, MSG_BARRIER, &f, 0, rx, deadline, timeout_ms, "the barrier", err);
	if (r == 0)
		r = bcast_frame(rdv, MSG_BARRIER, &f, 0, &rx[0], deadline, timeout_ms,
				"the barrier", err);
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
	put_u8(f, kind);
	put_u8(f, op);
	put_u32(f, (uint32_t)n);
	for (size_t i = 0; i < n; i++)
		put_u64(f, vals[i]);
	frame_end(f);
}

/* The values of a REDUCE frame into vals, if it is of the same kind, op and count. */
static int reduce_read(const struct rx *rx, uint64_t *vals, size_t n, enum reduce_kind kind,
		       enum rdv_op op, int rank, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	unsigned k = get_u8(&c), o = get_u8(&c);
	uint32_t count = get_u32(&c);

	if (c.bad || k != kind || o != op || count != n || c.left != n * 8) {
		strbuf_addf(err,
			    "rank %d is out of step: its allreduce is not a %s of %zu %s values",
			    rank, op_names[op], n, kind_names[kind]);
		return -EPROTO;
	}
	for (size_t i = 0; i < n; i++)
		vals[i] = get_u64(&c);
	return 0;
}

static int allreduce(struct rdv *rdv, void *vals, size_t n, enum reduce_kind kind, enum rdv_op op,
		     int timeout_ms, struct strbuf *err)
{
	uint64_t deadline = deadline_of(timeout_ms);
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
	r = gather_frame(rdv, MSG_REDUCE, &f, len, rx, deadline, timeout_ms, "the allreduce", err);
	for (int i = 1; r == 0 && rdv->rank == 0 && i < rdv->world_size; i++) {
		r = reduce_read(&rx[i], tmp, n, kind, op, i, err);
		if (r == 0)
			reduce(acc, tmp, n, kind, op);
	}
	if (r == 0 && rdv->rank == 0)
		reduce_frame(&f, acc, n, kind, op);
	if (r == 0)
		r = bcast_frame(rdv, MSG_REDUCE, &f, len, &rx[0], deadline, timeout_ms,
				"the allreduce", err);
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
