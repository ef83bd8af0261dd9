/*
 * rendezvous_join.c - forming the star (rdv_listen, rdv_join): rank 0
 * accepts connections until every rank has said hello, then welcomes
 * each; the others connect, retrying while rank 0 is not there yet.
 *
 * While rank 0 waits for the ranks it accepts any connection.  One whose
 * first frame is not a hello of this protocol (a port scanner, a stray
 * client) is closed and otherwise ignored, so that noise cannot stop the
 * star from forming; a timeout says how many there were.  A hello that
 * does not fit (another protocol version or world size, a rank out of
 * range or twice) fails the rendezvous: that is a misconfigured job.
 *
 * Both sides wait through one rdv_wait: rank 0 watches the listening
 * socket, the connections yet to say hello and the ranks that have; a
 * rank watches its connection in progress, and between tries a timer.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "bench/rendezvous_internal.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

/* type, magic, version, rank, world size, host name */
#define HELLO_MAX    (1 + 4 * 4 + 1 + RDV_HOSTNAME_MAX)
/* The most connections rank 0 holds that have not said hello yet; then the oldest goes. */
#define STRAYS_MAX   64
/* The world size is bounded so that the host name table fits a frame. */
#define WORLD_MAX    (1 << 16)
/* Connecting to rank 0 is retried after this long, doubling up to the max. */
#define RETRY_MIN_MS 20
#define RETRY_MAX_MS 500

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

/* ---- rank 0: waiting for every rank's hello ------------------------------------ */

/* A connection rank 0 has accepted that has not said hello yet. */
struct pending {
	int fd;
	struct rx rx;
};

/* Rank 0 waiting for the ranks; wait.left is how many have not said hello. */
struct gathering {
	struct rdv_wait wait;
	struct rdv *rdv;
	struct pending pend[STRAYS_MAX]; /* in the order they came */
	size_t nr_pend;
	unsigned strays; /* connections closed for saying no valid hello */
	struct strbuf *err;
};

/*
 * The first frame of a connection, on rank 0.  Returns 1 when it made the
 * connection rank rdv->fd[rank], 0 when it is no hello of this protocol
 * (the caller drops it), or a -errno that fails the rendezvous (the peer
 * has been told why).
 */
static int take_hello(struct rdv *rdv, const struct pending *p, struct strbuf *err)
{
	struct cursor c = { p->rx.buf, p->rx.len, false };
	char host[RDV_HOSTNAME_MAX];
	uint32_t version, rank, world;
	size_t mark = err->len;

	if (cursor_u8(&c) != MSG_HELLO || cursor_u32(&c) != RDV_MAGIC || c.bad)
		return 0;
	version = cursor_u32(&c);
	rank = cursor_u32(&c);
	world = cursor_u32(&c);
	cursor_host(&c, host);
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
		return 1;
	}
	send_abort(p->fd, EPROTO, err->buf + mark);
	return -EPROTO;
}

/* An event on the connection of a rank that has said hello: it must be its end. */
static void early_event(struct loop *loop, int fd, short revents, void *data)
{
	struct gathering *g = data;
	int rank = 1, r;
	ssize_t n;
	char c;

	(void)loop;
	(void)revents;
	if (rdv_wait_over(&g->wait))
		return;
	n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	while (g->rdv->fd[rank] != fd)
		rank++;
	if (n > 0) {
		strbuf_addf(g->err, "rank %d sent a message before every rank had joined", rank);
		r = -EPROTO;
	} else {
		r = rank_failed(rank, n == 0 ? -ECONNRESET : conn_error(errno), g->err);
	}
	rdv_wait_fail(&g->wait, r);
}

/* Forget pending connection i: it is a rank now, or it was closed. */
static void pending_drop(struct gathering *g, size_t i)
{
	rx_release(&g->pend[i].rx);
	g->nr_pend--;
	memmove(&g->pend[i], &g->pend[i + 1], (g->nr_pend - i) * sizeof(g->pend[0]));
}

/* The first frame of a connection: a rank's hello, or the end of a stray. */
static void hello_ready(struct loop *loop, int fd, short revents, void *data)
{
	struct gathering *g = data;
	size_t i = 0;
	int r;

	(void)revents;
	if (rdv_wait_over(&g->wait))
		return;
	while (g->pend[i].fd != fd)
		i++;
	r = rx_step(fd, &g->pend[i].rx, HELLO_MAX);
	if (r == 0)
		return;
	/* A connection that ended or sent too much before a whole frame said no hello. */
	r = r > 0 ? take_hello(g->rdv, &g->pend[i], g->err) : 0;
	if (r < 0) {
		rdv_wait_fail(&g->wait, r);
	} else if (r > 0) {
		/* A rank has nothing more to say until the welcome. */
		loop_watch_fd(loop, fd, POLLIN, early_event, g);
		pending_drop(g, i);
		rdv_wait_done(&g->wait);
	} else {
		loop_unwatch_fd(loop, fd);
		close(fd);
		g->strays++;
		pending_drop(g, i);
	}
}

/* Accept what is waiting on the listening socket; each says hello, or is a stray. */
static void accept_ready(struct loop *loop, int listen_fd, short revents, void *data)
{
	struct gathering *g = data;

	(void)revents;
	while (!rdv_wait_over(&g->wait)) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0 && errno == EAGAIN)
			return;
		if (fd < 0) {
			int e = errno;
			strbuf_addf(g->err, "cannot accept a connection: %s", strerror(e));
			rdv_wait_fail(&g->wait, -e);
			return;
		}
		if (g->nr_pend == STRAYS_MAX) {
			/* the oldest has had the longest to say hello */
			loop_unwatch_fd(loop, g->pend[0].fd);
			close(g->pend[0].fd);
			pending_drop(g, 0);
			g->strays++;
		}
		set_nodelay(fd);
		g->pend[g->nr_pend++] = (struct pending){ .fd = fd };
		loop_watch_fd(loop, fd, POLLIN, hello_ready, g);
	}
}

static void join_timed_out(const struct gathering *g, int timeout_ms)
{
	const struct rdv *rdv = g->rdv;
	unsigned strays = g->strays + (unsigned)g->nr_pend;
	int *missing = xcalloc((size_t)rdv->world_size, sizeof(*missing));
	size_t n = 0;

	for (int i = 1; i < rdv->world_size; i++)
		if (rdv->fd[i] < 0)
			missing[n++] = i;
	add_ranks(g->err, missing, n);
	strbuf_addstr(g->err, " did not connect within ");
	add_duration(g->err, timeout_ms);
	if (strays)
		strbuf_addf(g->err, " (%u other connection%s sent no valid hello)", strays,
			    strays == 1 ? "" : "s");
	free(missing);
}

/* Local ranks from the host names; then every rank's WELCOME. */
static int send_welcomes(struct rdv *rdv, const struct rdv_call *call)
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
		frame_put_u32(&frames[i], (uint32_t)i);
		frame_put_u32(&frames[i], (uint32_t)world);
		frame_put_u32(&frames[i], local_rank);
		frame_put_u32(&frames[i], local_size);
		for (size_t j = 0; j < world; j++)
			frame_put_host(&frames[i], rdv->host[j]);
		frame_end(&frames[i]);
	}
	r = exchange_send(rdv, frames, true, call);
	for (size_t i = 1; i < world; i++)
		strbuf_release(&frames[i]);
	free(frames);
	return r;
}

static int root_join(struct rdv *rdv, int listen_fd, struct rdv_call *call)
{
	struct gathering *g = xcalloc(1, sizeof(*g));
	int r = 0;

	rdv_wait_init(&g->wait, call->deadline);
	g->rdv = rdv;
	g->err = call->err;
	g->wait.left = (size_t)rdv->world_size - 1;
	if (fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK) < 0) {
		r = -errno;
		strbuf_addf(call->err, "cannot make the listening socket nonblocking: %s",
			    strerror(-r));
		goto out;
	}
	loop_watch_fd(&g->wait.loop, listen_fd, POLLIN, accept_ready, g);
	r = rdv_wait_run(&g->wait, call->err);
	if (g->wait.timed_out)
		join_timed_out(g, call->timeout_ms);
	if (r == 0) {
		call->what = "the welcome";
		r = send_welcomes(rdv, call);
	}
out:
	for (size_t i = 0; i < g->nr_pend; i++) {
		close(g->pend[i].fd);
		rx_release(&g->pend[i].rx);
	}
	rdv_wait_release(&g->wait);
	free(g);
	return r;
}

/* ---- the other ranks: connecting to rank 0 --------------------------------------- */

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

/* Tries to connect to rank 0, a pause after each failed one; wait.left is 1 until connected. */
struct connecting {
	struct rdv_wait wait;
	struct loop_timer pause;
	struct sockaddr_in sin;
	const char *addr;
	struct strbuf *err;
	int fd;	      /* the try in progress or done, -1 between tries */
	int pause_ms; /* the next pause */
	int last;     /* the -errno of the last try that failed */
};

/* A try ended with -e, or 0: connected. */
static void try_ended(struct connecting *c, int e)
{
	if (e == 0 && self_connected(c->fd))
		e = -ECONNREFUSED;
	if (e == 0) {
		rdv_wait_done(&c->wait);
		return;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->last = e;
	if (!retry_connect(-e)) {
		strbuf_addf(c->err, "cannot connect to rank 0 at %s: %s", c->addr, strerror(-e));
		rdv_wait_fail(&c->wait, e);
		return;
	}
	/* A pause past the deadline is cut short by it: a try in progress then has timed out. */
	loop_timer_arm_in(&c->wait.loop, &c->pause, (uint64_t)c->pause_ms);
	c->pause_ms = c->pause_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : c->pause_ms * 2;
}

static void connect_ready(struct loop *loop, int fd, short revents, void *data)
{
	struct connecting *c = data;
	int e = 0;
	socklen_t len = sizeof(e);

	(void)revents;
	loop_unwatch_fd(loop, fd);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	try_ended(c, -e);
}

/* One try (the pause's timer, and the first try). */
static void try_connect(struct loop *loop, void *data)
{
	struct connecting *c = data;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		try_ended(c, -errno);
	else if (connect(c->fd, (const struct sockaddr *)&c->sin, sizeof(c->sin)) == 0)
		try_ended(c, 0);
	else if (errno == EINPROGRESS)
		loop_watch_fd(loop, c->fd, POLLOUT, connect_ready, c);
	else
		try_ended(c, -errno);
}

static int connect_root(struct rdv *rdv, const char *addr, const struct rdv_call *call)
{
	struct connecting c = { .sin.sin_family = AF_INET, .addr = addr, .err = call->err };
	char *host = NULL;
	int r;

	r = parse_addr(addr, &host, &c.sin, call->err);
	if (r < 0)
		return r;
	r = resolve(host, &c.sin.sin_addr, call->err);
	free(host);
	if (r < 0)
		return r;
	rdv_wait_init(&c.wait, call->deadline);
	loop_timer_init(&c.pause, try_connect, &c);
	c.wait.left = 1;
	c.fd = -1;
	c.pause_ms = RETRY_MIN_MS;
	try_connect(&c.wait.loop, &c);
	r = rdv_wait_run(&c.wait, call->err);
	if (r == 0) {
		set_nodelay(c.fd);
		rdv->fd[0] = c.fd;
	} else if (c.fd >= 0) {
		close(c.fd);
		c.last = -ETIMEDOUT; /* the deadline came during a try */
	}
	if (c.wait.timed_out) {
		strbuf_addf(call->err, "could not connect to rank 0 at %s within ", addr);
		add_duration(call->err, call->timeout_ms);
		strbuf_addf(call->err, " (%s)", strerror(-c.last));
	}
	rdv_wait_release(&c.wait);
	return r;
}

static int read_welcome(struct rdv *rdv, const struct rx *rx, struct strbuf *err)
{
	struct cursor c = { rx->buf + 1, rx->len - 1, false };
	uint32_t rank = cursor_u32(&c), world = cursor_u32(&c);
	uint32_t local_rank = cursor_u32(&c), local_size = cursor_u32(&c);

	if (!c.bad && rank == (uint32_t)rdv->rank && world == (uint32_t)rdv->world_size &&
	    local_rank < local_size && local_size <= world) {
		for (int i = 0; i < rdv->world_size; i++)
			cursor_host(&c, rdv->host[i]);
		if (!c.bad && !c.left) {
			rdv->local_rank = (int)local_rank;
			rdv->local_size = (int)local_size;
			return 0;
		}
	}
	strbuf_addstr(err, "rank 0 sent a malformed welcome");
	return -EPROTO;
}

static int peer_join(struct rdv *rdv, const char *addr, struct rdv_call *call)
{
	struct strbuf f = STRBUF_INIT, what = STRBUF_INIT;
	struct rx rx = { 0 };
	int r;

	r = connect_root(rdv, addr, call);
	if (r < 0)
		return r;
	frame_begin(&f, MSG_HELLO);
	frame_put_u32(&f, RDV_MAGIC);
	frame_put_u32(&f, RDV_VERSION);
	frame_put_u32(&f, (uint32_t)rdv->rank);
	frame_put_u32(&f, (uint32_t)rdv->world_size);
	frame_put_host(&f, rdv->host[rdv->rank]);
	frame_end(&f);
	strbuf_addf(&what, "the rendezvous (at %s)", addr);
	call->what = what.buf;
	r = exchange_send(rdv, &f, false, call);
	if (r == 0)
		r = exchange_recv(rdv, &rx, MSG_WELCOME,
				  1 + 4 * 4 + (size_t)rdv->world_size * RDV_HOSTNAME_MAX, call);
	if (r == 0)
		r = read_welcome(rdv, &rx, call->err);
	rx_release(&rx);
	strbuf_release(&f);
	strbuf_release(&what);
	return r;
}

/* The arguments of rdv_join() fit together. */
static int check_join(int rank, int world_size, int listen_fd, const char *addr, struct strbuf *err)
{
	if (world_size < 1 || world_size > WORLD_MAX || rank < 0 || rank >= world_size) {
		strbuf_addf(err, "rank %d of a world of %d is not a valid rank", rank, world_size);
		return -EINVAL;
	}
	if (rank == 0 && (listen_fd < 0 || addr)) {
		strbuf_addstr(err, "rank 0 joins with its listening socket and no address");
		return -EINVAL;
	}
	if (rank != 0 && (listen_fd >= 0 || !addr)) {
		strbuf_addf(err, "rank %d joins with rank 0's address and no listening socket",
			    rank);
		return -EINVAL;
	}
	return 0;
}

int rdv_join(struct rdv **ret, int rank, int world_size, int listen_fd, const char *addr,
	     int timeout_ms, struct strbuf *err)
{
	struct rdv_call call = { deadline_of(timeout_ms), timeout_ms, NULL, err };
	size_t mark = err->len;
	struct rdv *rdv;
	int r;

	*ret = NULL;
	r = check_join(rank, world_size, listen_fd, addr, err);
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
		r = root_join(rdv, listen_fd, &call);
	else if (r == 0)
		r = peer_join(rdv, addr, &call);
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
