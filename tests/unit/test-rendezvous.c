/*
 * Unit tests of bench/rendezvous.c: stars of real processes on 127.0.0.1
 * (rank 0 in the test process or in a child), and the ways a star fails:
 * a rank that never comes, a rank that dies, no rank 0, a duplicate rank,
 * another world size, ranks out of step, and stray clients on rank 0's
 * port.  Children report through their exit status; every wait is
 * bounded, so a hang fails a test instead of wedging it.
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "test_util.h"

#include "bench/rendezvous.h"
#include "lib/clock.h"

/* The longest any test waits for its children. */
#define CHILD_LIMIT_MS 20000
#define MAX_KIDS       8
#define ID_LEN	       128
#define BIG_LEN	       (3u << 20)

/* The wire format (see rendezvous.c), for the fake rank and the strays. */
#define WIRE_MAGIC   0x53524456u
#define WIRE_VERSION 1u
#define WIRE_HELLO   1
#define WIRE_WELCOME 2

/* What every rank of a star knows. */
struct star {
	int world;
	int listen_fd; /* rank 0's, in the process that forked */
	char addr[32]; /* "127.0.0.1:PORT" */
	int timeout_ms;
};

/* In a child: say what failed and return 1 (its exit status). */
#define CHECK(rank, cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", (rank), __FILE__,    \
				__LINE__, #cond);                                                  \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* A failed call must have failed with e and a reason holding every one of want[]. */
static int check_failure(int rank, const char *call, int r, int e, const struct strbuf *err,
			 const char *const *want)
{
	bool ok = r == e;

	for (size_t i = 0; want[i]; i++)
		if (!strstr(err->buf, want[i]))
			ok = false;
	if (!ok)
		fprintf(stderr, "rank %d: %s returned %d (%s), want %d; reason: %s\n", rank, call,
			r, r < 0 ? strerror(-r) : "ok", e, err->buf);
	return ok ? 0 : 1;
}

static void star_init(struct star *s, int world, int timeout_ms)
{
	struct strbuf err = STRBUF_INIT;
	uint16_t port = 0;

	s->world = world;
	s->timeout_ms = timeout_ms;
	if (rdv_listen("127.0.0.1", 0, &s->listen_fd, &port, &err) < 0)
		fail_msg("rdv_listen: %s", err.buf);
	assert_true(port > 0);
	snprintf(s->addr, sizeof(s->addr), "127.0.0.1:%u", (unsigned)port);
	strbuf_release(&err);
}

/* Join as rank; rank 0 takes the listening socket. */
static int join(const struct star *s, int rank, int world, struct rdv **ret, struct strbuf *err)
{
	if (rank == 0)
		return rdv_join(ret, 0, world, s->listen_fd, NULL, s->timeout_ms, err);
	return rdv_join(ret, rank, world, -1, s->addr, s->timeout_ms, err);
}

typedef int rank_fn(const struct star *s, int rank);

static pid_t spawn(const struct star *s, int rank, rank_fn *fn)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (rank != 0)
			close(s->listen_fd);
		_exit(fn(s, rank));
	}
	return pid;
}

/*
 * Wait for the children, CHILD_LIMIT_MS at most in all; kill those still
 * running then.  True when every one exited with status 0.
 */
static bool reap(const pid_t *pids, size_t n)
{
	uint64_t until = monotonic_ms() + CHILD_LIMIT_MS;
	bool done[MAX_KIDS] = { false }, ok = true;
	size_t left = n;

	while (left) {
		for (size_t i = 0; i < n; i++) {
			int st;
			if (done[i] || waitpid(pids[i], &st, WNOHANG) != pids[i])
				continue;
			done[i] = true;
			left--;
			if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				print_message("child %zu ended with wait status 0x%x\n", i,
					      (unsigned)st);
				ok = false;
			}
		}
		if (left && monotonic_ms() >= until) {
			for (size_t i = 0; i < n; i++)
				if (!done[i]) {
					print_message("child %zu still running, killed\n", i);
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
				}
			return false;
		}
		if (left)
			usleep(5000);
	}
	return ok;
}

/* ---- a working star ---- */

static void own_host(char host[RDV_HOSTNAME_MAX])
{
	char buf[HOST_NAME_MAX + 1];

	if (gethostname(buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	buf[sizeof(buf) - 1] = '\0';
	snprintf(host, RDV_HOSTNAME_MAX, "%.*s", RDV_HOSTNAME_MAX - 1, buf);
}

/* Every collective, with results checked; 0 when all is as it should be. */
static int exercise(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	char host[RDV_HOSTNAME_MAX];
	uint8_t id[ID_LEN];
	uint8_t *big = malloc(BIG_LEN);
	int world = s->world, t = s->timeout_ms;
	int mine = rank * 10 + 1, all[MAX_KIDS + 1] = { 0 };
	double d[3], dmin[3], dmax[3], dsum[3] = { 0, 0, 0 };
	uint64_t u[2], usum[2] = { 0, 0 };
	int r;

	CHECK(rank, big);
	r = join(s, rank, world, &rdv, &err);
	if (r < 0)
		fprintf(stderr, "rank %d: join: %s\n", rank, err.buf);
	CHECK(rank, r == 0 && rdv);
	CHECK(rank, rdv_rank(rdv) == rank);
	CHECK(rank, rdv_world_size(rdv) == world);
	CHECK(rank, rdv_local_rank(rdv) == rank);
	CHECK(rank, rdv_local_size(rdv) == world);
	own_host(host);
	for (int i = 0; i < world; i++)
		CHECK(rank, streq(rdv_hostname(rdv, i), host));
	CHECK(rank, rdv_hostname(rdv, world) == NULL);
	CHECK(rank, rdv_hostname(rdv, -1) == NULL);

	/* the NCCL id */
	for (size_t i = 0; i < ID_LEN; i++)
		id[i] = rank == 0 ? (uint8_t)(i * 7 + 3) : 0;
	CHECK(rank, rdv_broadcast(rdv, id, ID_LEN, t, &err) == 0);
	for (size_t i = 0; i < ID_LEN; i++)
		CHECK(rank, id[i] == (uint8_t)(i * 7 + 3));
	/* more than the socket buffers take at once */
	for (size_t i = 0; i < BIG_LEN; i++)
		big[i] = rank == 0 ? (uint8_t)(i % 251) : 0;
	CHECK(rank, rdv_broadcast(rdv, big, BIG_LEN, t, &err) == 0);
	for (size_t i = 0; i < BIG_LEN; i++)
		CHECK(rank, big[i] == (uint8_t)(i % 251));
	CHECK(rank, rdv_broadcast(rdv, NULL, 0, t, &err) == 0);

	CHECK(rank, rdv_barrier(rdv, t, &err) == 0);

	CHECK(rank, rdv_gather(rdv, &mine, sizeof(mine), rank == 0 ? all : NULL, t, &err) == 0);
	if (rank == 0)
		for (int i = 0; i < world; i++)
			CHECK(rank, all[i] == i * 10 + 1);

	for (int i = 0; i < world; i++) {
		dsum[0] += i + 0.5;
		dsum[1] += -i;
		dsum[2] += i * 0.25;
	}
	d[0] = rank + 0.5, d[1] = -rank, d[2] = rank * 0.25;
	CHECK(rank, rdv_allreduce_double(rdv, d, 3, RDV_SUM, t, &err) == 0);
	CHECK(rank, d[0] == dsum[0] && d[1] == dsum[1] && d[2] == dsum[2]);
	dmin[0] = rank + 0.5, dmin[1] = -rank, dmin[2] = rank == 1 ? -1e300 : 7.0;
	CHECK(rank, rdv_allreduce_double(rdv, dmin, 3, RDV_MIN, t, &err) == 0);
	CHECK(rank, dmin[0] == 0.5 && dmin[1] == -(world - 1));
	CHECK(rank, dmin[2] == (world > 1 ? -1e300 : 7.0));
	dmax[0] = rank + 0.5, dmax[1] = -rank, dmax[2] = rank == 0 ? 1e-300 : -5.0;
	CHECK(rank, rdv_allreduce_double(rdv, dmax, 3, RDV_MAX, t, &err) == 0);
	CHECK(rank, dmax[0] == world - 0.5 && dmax[1] == 0 && dmax[2] == 1e-300);

	for (int i = 0; i < world; i++) {
		usum[0] += (uint64_t)i;
		usum[1] += ((uint64_t)1 << 40) + (uint64_t)i;
	}
	u[0] = (uint64_t)rank, u[1] = ((uint64_t)1 << 40) + (uint64_t)rank;
	CHECK(rank, rdv_allreduce_u64(rdv, u, 2, RDV_SUM, t, &err) == 0);
	CHECK(rank, u[0] == usum[0] && u[1] == usum[1]);
	u[0] = (uint64_t)rank + 5, u[1] = UINT64_MAX - (uint64_t)rank;
	CHECK(rank, rdv_allreduce_u64(rdv, u, 2, RDV_MIN, t, &err) == 0);
	CHECK(rank, u[0] == 5 && u[1] == UINT64_MAX - (uint64_t)(world - 1));
	u[0] = (uint64_t)rank + 5, u[1] = UINT64_MAX - (uint64_t)rank;
	CHECK(rank, rdv_allreduce_u64(rdv, u, 2, RDV_MAX, t, &err) == 0);
	CHECK(rank, u[0] == (uint64_t)world + 4 && u[1] == UINT64_MAX);
	CHECK(rank, rdv_allreduce_u64(rdv, NULL, 0, RDV_SUM, t, &err) == 0);

	CHECK(rank, rdv_barrier(rdv, t, &err) == 0);
	if (err.len)
		fprintf(stderr, "rank %d: %s\n", rank, err.buf);
	CHECK(rank, err.len == 0);
	rdv_close(rdv);
	strbuf_release(&err);
	free(big);
	return 0;
}

/* A star of world ranks: rank 0 in this process, or rank 1 here and rank 0 in a child. */
static void run_star(int world, bool root_in_child)
{
	struct star s;
	pid_t pids[MAX_KIDS];
	size_t n = 0;
	int here = root_in_child ? 1 : 0, r;

	star_init(&s, world, 10000);
	for (int rank = 0; rank < world; rank++)
		if (rank != here)
			pids[n++] = spawn(&s, rank, exercise);
	if (here != 0)
		close(s.listen_fd);
	r = exercise(&s, here);
	assert_true(reap(pids, n));
	assert_int_equal(r, 0);
}

static void star_1(void **state)
{
	(void)state;
	run_star(1, false);
}

static void star_2(void **state)
{
	(void)state;
	run_star(2, false);
}

static void star_5(void **state)
{
	(void)state;
	run_star(5, false);
}

static void star_root_in_child(void **state)
{
	(void)state;
	run_star(3, true);
}

/* ---- local ranks: a fake rank that says another host name ---- */

static int raw_connect(const struct star *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const char *colon = strrchr(s->addr, ':');
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sin.sin_port = htons((uint16_t)strtoul(colon + 1, NULL, 10));
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
	assert_int_equal(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

static void put32(uint8_t **p, uint32_t v)
{
	uint32_t be = htonl(v);
	memcpy(*p, &be, 4);
	*p += 4;
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t be;
	memcpy(&be, p, 4);
	return ntohl(be);
}

/* Say hello on fd as rank of world from host. */
static void fake_hello(int fd, uint32_t rank, uint32_t world, const char *host)
{
	uint8_t buf[128], *p = buf + 4;
	size_t n = strlen(host);

	*p++ = WIRE_HELLO;
	put32(&p, WIRE_MAGIC);
	put32(&p, WIRE_VERSION);
	put32(&p, rank);
	put32(&p, world);
	*p++ = (uint8_t)n;
	memcpy(p, host, n);
	p += n;
	put32(&(uint8_t *){ buf }, (uint32_t)(p - buf - 4));
	raw_send(fd, buf, (size_t)(p - buf));
}

/* Read exactly len bytes within a few seconds. */
static void raw_recv(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		assert_int_equal(poll(&pfd, 1, 5000), 1);
		n = recv(fd, (char *)buf + got, len - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
	}
}

/* Rank 2 checks the local ranks when rank 1 is on "fake-node". */
static int local_child(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	int r = join(s, rank, s->world, &rdv, &err);

	if (r < 0)
		fprintf(stderr, "rank %d: join: %s\n", rank, err.buf);
	CHECK(rank, r == 0);
	CHECK(rank, rdv_local_rank(rdv) == 1 && rdv_local_size(rdv) == 2);
	CHECK(rank, streq(rdv_hostname(rdv, 1), "fake-node"));
	CHECK(rank, streq(rdv_hostname(rdv, 0), rdv_hostname(rdv, 2)));
	rdv_close(rdv);
	return 0;
}

static void local_ranks(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	uint8_t welcome[4 + 17];
	pid_t pid;
	int fake, r;

	(void)state;
	star_init(&s, 3, 5000);
	fake = raw_connect(&s);
	fake_hello(fake, 1, 3, "fake-node");
	pid = spawn(&s, 2, local_child);
	r = join(&s, 0, 3, &rdv, &err);
	assert_true(reap(&pid, 1));
	if (r < 0)
		fail_msg("join: %s", err.buf);
	assert_int_equal(rdv_local_rank(rdv), 0);
	assert_int_equal(rdv_local_size(rdv), 2);
	assert_string_equal(rdv_hostname(rdv, 1), "fake-node");
	/* the fake rank's welcome: length, type, rank, world, local rank, local size */
	raw_recv(fake, welcome, sizeof(welcome));
	assert_int_equal(welcome[4], WIRE_WELCOME);
	assert_int_equal(get32(welcome + 5), 1);
	assert_int_equal(get32(welcome + 9), 3);
	assert_int_equal(get32(welcome + 13), 0);
	assert_int_equal(get32(welcome + 17), 1);
	close(fake);
	rdv_close(rdv);
	strbuf_release(&err);
}

/* ---- failures ---- */

/* Rank 0 gives up on the missing ranks; this one hears why. */
static int told_missing(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	int r = rdv_join(&rdv, rank, s->world, -1, s->addr, 5000, &err);
	const char *want[] = { "rank 0 closed the connection", "ranks 1, 3 did not connect", NULL };

	return check_failure(rank, "join", r, -ETIMEDOUT, &err, want);
}

static void rank_never_arrives(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	uint64_t t0, ms;
	pid_t pid;
	int r;

	(void)state;
	star_init(&s, 4, 1000);
	pid = spawn(&s, 2, told_missing);
	t0 = monotonic_ms();
	r = join(&s, 0, 4, &rdv, &err);
	ms = monotonic_ms() - t0;
	assert_true(reap(&pid, 1));
	assert_int_equal(r, -ETIMEDOUT);
	assert_null(rdv);
	assert_string_equal(err.buf, "ranks 1, 3 did not connect within 1 s");
	assert_true(ms >= 950 && ms < 3000);
	strbuf_release(&err);
}

/* Rank 1 leaves right after joining. */
static int leaves(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;

	CHECK(rank, join(s, rank, s->world, &rdv, &err) == 0);
	_exit(0);
}

/* Rank 2 waits in a barrier that cannot end. */
static int barrier_broken(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	const char *want[] = { "rank 0 closed the connection", "rank 1 closed its connection",
			       NULL };
	const char *again[] = { "an earlier call failed", "rank 1 closed its connection", NULL };
	int r;

	CHECK(rank, join(s, rank, s->world, &rdv, &err) == 0);
	r = rdv_barrier(rdv, s->timeout_ms, &err);
	if (check_failure(rank, "barrier", r, -ECONNRESET, &err, want))
		return 1;
	strbuf_reset(&err);
	r = rdv_barrier(rdv, s->timeout_ms, &err);
	return check_failure(rank, "second barrier", r, -ENOTCONN, &err, again);
}

static void rank_dies(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	pid_t pids[2];
	uint64_t t0, ms;
	int r;

	(void)state;
	star_init(&s, 3, 3000);
	pids[0] = spawn(&s, 1, leaves);
	pids[1] = spawn(&s, 2, barrier_broken);
	r = join(&s, 0, 3, &rdv, &err);
	if (r < 0)
		fail_msg("join: %s", err.buf);
	t0 = monotonic_ms();
	r = rdv_barrier(rdv, 3000, &err);
	ms = monotonic_ms() - t0;
	assert_true(reap(pids, 2));
	assert_int_equal(r, -ECONNRESET);
	assert_string_equal(err.buf, "rank 1 closed its connection");
	assert_true(ms < 2000);
	strbuf_reset(&err);
	assert_int_equal(rdv_gather(rdv, &r, sizeof(r), &r, 1000, &err), -ENOTCONN);
	assert_non_null(strstr(err.buf, "rank 1 closed its connection"));
	rdv_close(rdv);
	strbuf_release(&err);
}

/* The other ranks leave: rank 0 hears of it in its barrier at once. */
static void root_dies(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	pid_t pid;
	int r;

	(void)state;
	star_init(&s, 2, 3000);
	pid = spawn(&s, 0, leaves);
	close(s.listen_fd);
	r = join(&s, 1, 2, &rdv, &err);
	if (r < 0)
		fail_msg("join: %s", err.buf);
	assert_true(reap(&pid, 1));
	r = rdv_barrier(rdv, 3000, &err);
	assert_int_equal(r, -ECONNRESET);
	assert_string_equal(err.buf, "rank 0 closed the connection");
	rdv_close(rdv);
	strbuf_release(&err);
}

/* A port nobody listens on. */
static uint16_t free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

static void root_never_listens(void **state)
{
	struct strbuf err = STRBUF_INIT, want = STRBUF_INIT;
	struct rdv *rdv = NULL;
	char addr[32];
	uint64_t t0, ms;
	int r;

	(void)state;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)free_port());
	t0 = monotonic_ms();
	r = rdv_join(&rdv, 1, 2, -1, addr, 1000, &err);
	ms = monotonic_ms() - t0;
	assert_int_equal(r, -ETIMEDOUT);
	assert_null(rdv);
	strbuf_addf(&want, "could not connect to rank 0 at %s within 1 s (Connection refused)",
		    addr);
	assert_string_equal(err.buf, want.buf);
	assert_true(ms >= 950 && ms < 2500);
	strbuf_release(&err);
	strbuf_release(&want);
}

/* Rank 0's socket listens (the kernel accepts) but rank 0 never joins. */
static void root_never_joins(void **state)
{
	struct strbuf err = STRBUF_INIT, want = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	uint64_t t0, ms;
	int r;

	(void)state;
	star_init(&s, 2, 1000);
	t0 = monotonic_ms();
	r = join(&s, 1, 2, &rdv, &err);
	ms = monotonic_ms() - t0;
	assert_int_equal(r, -ETIMEDOUT);
	strbuf_addf(&want, "rank 0 did not complete the rendezvous (at %s) within 1 s", s.addr);
	assert_string_equal(err.buf, want.buf);
	assert_true(ms >= 950 && ms < 2500);
	close(s.listen_fd);
	strbuf_release(&err);
	strbuf_release(&want);
}

static int joins_twice(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	const char *want[] = { "rank 0 closed the connection", "rank 1 joined twice", NULL };
	int r = join(s, 1, s->world, &rdv, &err);

	return check_failure(rank, "join", r, -EPROTO, &err, want);
}

static void duplicate_rank(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	pid_t pids[2];
	int r;

	(void)state;
	star_init(&s, 3, 3000);
	pids[0] = spawn(&s, 1, joins_twice);
	pids[1] = spawn(&s, 1, joins_twice);
	r = join(&s, 0, 3, &rdv, &err);
	assert_true(reap(pids, 2));
	assert_int_equal(r, -EPROTO);
	assert_null(rdv);
	assert_non_null(strstr(err.buf, "rank 1 joined twice"));
	strbuf_release(&err);
}

static int world_of_3(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	const char *want[] = { "rank 0 closed the connection", "rank 1 (host ",
			       "says the world size is 3, rank 0 says 2", NULL };
	int r = join(s, rank, 3, &rdv, &err);

	return check_failure(rank, "join", r, -EPROTO, &err, want);
}

static void wrong_world_size(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	pid_t pid;
	int r;

	(void)state;
	star_init(&s, 2, 3000);
	pid = spawn(&s, 1, world_of_3);
	r = join(&s, 0, 2, &rdv, &err);
	assert_true(reap(&pid, 1));
	assert_int_equal(r, -EPROTO);
	assert_non_null(strstr(err.buf, "says the world size is 3, rank 0 says 2"));
	strbuf_release(&err);
}

/* Rank 1 calls a barrier where rank 0 gathers. */
static int barrier_not_gather(const struct star *s, int rank)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	const char *want[] = { "rank 0 closed the connection",
			       "rank 1 is out of step: it sent a barrier message during the gather",
			       NULL };
	int r;

	CHECK(rank, join(s, rank, s->world, &rdv, &err) == 0);
	r = rdv_barrier(rdv, s->timeout_ms, &err);
	return check_failure(rank, "barrier", r, -EPROTO, &err, want);
}

static void out_of_step(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	int all[2];
	pid_t pid;
	int r;

	(void)state;
	star_init(&s, 2, 3000);
	pid = spawn(&s, 1, barrier_not_gather);
	r = join(&s, 0, 2, &rdv, &err);
	if (r < 0)
		fail_msg("join: %s", err.buf);
	r = rdv_gather(rdv, &r, sizeof(r), all, 3000, &err);
	assert_true(reap(&pid, 1));
	assert_int_equal(r, -EPROTO);
	assert_string_equal(err.buf,
			    "rank 1 is out of step: it sent a barrier message during the gather");
	rdv_close(rdv);
	strbuf_release(&err);
}

/* ---- strays on rank 0's port: closed and ignored ---- */

/* Connections that are no rank: an HTTP request, a bad magic, a zero length, silence. */
static void open_strays(const struct star *s, int fds[4])
{
	static const char http[] = "GET / HTTP/1.0\r\n\r\n";
	static const uint8_t bad_magic[] = { 0, 0, 0, 8, WIRE_HELLO, 'N', 'O', 'P', 'E', 0, 0, 1 };
	static const uint8_t zero[] = { 0, 0, 0, 0 };

	for (int i = 0; i < 4; i++)
		fds[i] = raw_connect(s);
	raw_send(fds[0], http, sizeof(http) - 1);
	raw_send(fds[1], bad_magic, sizeof(bad_magic));
	raw_send(fds[2], zero, sizeof(zero));
}

/* Rank 0 has closed fd (end of file or reset). */
static void assert_closed(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	assert_int_equal(poll(&pfd, 1, 3000), 1);
	assert_true(recv(fd, &c, 1, MSG_DONTWAIT) <= 0);
}

static void strays_ignored(void **state)
{
	struct star s;
	pid_t pids[2];
	int fds[4], r;

	(void)state;
	star_init(&s, 3, 5000);
	open_strays(&s, fds);
	pids[0] = spawn(&s, 1, exercise);
	pids[1] = spawn(&s, 2, exercise);
	r = exercise(&s, 0);
	assert_true(reap(pids, 2));
	assert_int_equal(r, 0);
	for (int i = 0; i < 4; i++) {
		assert_closed(fds[i]);
		close(fds[i]);
	}
}

/* More silent strays than rank 0 holds: the oldest go, the rank gets in. */
static void many_strays(void **state)
{
	struct star s;
	int fds[70], r;
	pid_t pid;

	(void)state;
	star_init(&s, 2, 5000);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		fds[i] = raw_connect(&s);
	pid = spawn(&s, 1, exercise);
	r = exercise(&s, 0);
	assert_true(reap(&pid, 1));
	assert_int_equal(r, 0);
	for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
		assert_closed(fds[i]);
		close(fds[i]);
	}
}

static void strays_then_timeout(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct star s;
	struct rdv *rdv = NULL;
	int fds[4], r;

	(void)state;
	star_init(&s, 2, 1000);
	open_strays(&s, fds);
	r = join(&s, 0, 2, &rdv, &err);
	assert_int_equal(r, -ETIMEDOUT);
	assert_string_equal(err.buf,
			    "rank 1 did not connect within 1 s (4 other connections sent no valid "
			    "hello)");
	for (int i = 0; i < 4; i++) {
		assert_closed(fds[i]);
		close(fds[i]);
	}
	strbuf_release(&err);
}

/* ---- arguments ---- */

static void bad_arguments(void **state)
{
	struct strbuf err = STRBUF_INIT;
	struct rdv *rdv = NULL;
	int fd;
	uint16_t port;

	(void)state;
	assert_int_equal(rdv_join(&rdv, 2, 2, -1, "127.0.0.1:1", 100, &err), -EINVAL);
	assert_non_null(strstr(err.buf, "not a valid rank"));
	strbuf_reset(&err);
	assert_int_equal(rdv_join(&rdv, 0, 2, -1, NULL, 100, &err), -EINVAL);
	strbuf_reset(&err);
	assert_int_equal(rdv_join(&rdv, 1, 2, -1, NULL, 100, &err), -EINVAL);
	strbuf_reset(&err);
	assert_int_equal(rdv_join(&rdv, 1, 2, -1, "127.0.0.1", 100, &err), -EINVAL);
	assert_string_equal(err.buf, "rank 0's address '127.0.0.1' is not HOST:PORT");
	strbuf_reset(&err);
	assert_int_equal(rdv_join(&rdv, 1, 2, -1, ":80", 100, &err), -EINVAL);
	strbuf_reset(&err);
	assert_int_equal(rdv_join(&rdv, 1, 2, -1, "127.0.0.1:65536", 100, &err), -EINVAL);
	strbuf_reset(&err);
	assert_true(rdv_join(&rdv, 1, 2, -1, "no-such-host.invalid:80", 100, &err) < 0);
	assert_non_null(strstr(err.buf, "cannot resolve 'no-such-host.invalid'"));
	strbuf_reset(&err);
	assert_null(rdv);

	/* a port taken by another listener */
	assert_int_equal(rdv_listen(NULL, 0, &fd, &port, &err), 0);
	assert_true(rdv_listen("127.0.0.1", port, &(int){ 0 }, &(uint16_t){ 0 }, &err) < 0);
	assert_non_null(strstr(err.buf, "cannot listen on 127.0.0.1:"));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	strbuf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(star_1),
		cmocka_unit_test(star_2),
		cmocka_unit_test(star_5),
		cmocka_unit_test(star_root_in_child),
		cmocka_unit_test(local_ranks),
		cmocka_unit_test(rank_never_arrives),
		cmocka_unit_test(rank_dies),
		cmocka_unit_test(root_dies),
		cmocka_unit_test(root_never_listens),
		cmocka_unit_test(root_never_joins),
		cmocka_unit_test(duplicate_rank),
		cmocka_unit_test(wrong_world_size),
		cmocka_unit_test(out_of_step),
		cmocka_unit_test(strays_ignored),
		cmocka_unit_test(many_strays),
		cmocka_unit_test(strays_then_timeout),
		cmocka_unit_test(bad_arguments),
	};

	signal(SIGPIPE, SIG_DFL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
