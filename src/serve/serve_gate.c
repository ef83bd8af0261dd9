/*
 * serve_gate.c - the workers' parts report to the head's before its engine
 * starts (serve_gate.h).
 */
#include "sparkctl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "lib/clock.h"
#include "lib/strvec.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "serve/serve_gate.h"

/* How long one side waits for a line or an end from the other once connected. */
#define GATE_LINE_MS  5000
/* Between two tries to reach a head's part that is not listening yet. */
#define GATE_RETRY_MS 200

int serve_gate_parse(const char *s, char *addr, size_t addr_size, unsigned *port, unsigned *n)
{
	const char *last = strrchr(s, ':'), *mid;
	struct in_addr in;
	char *end;
	unsigned long p, v;

	if (!last || last == s)
		return -EINVAL;
	for (mid = last - 1; mid > s && *mid != ':'; mid--)
		;
	if (mid == s || (size_t)(mid - s) >= addr_size)
		return -EINVAL;
	memcpy(addr, s, (size_t)(mid - s));
	addr[mid - s] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1)
		return -EINVAL;
	errno = 0;
	p = strtoul(mid + 1, &end, 10);
	if (errno || end != last || !p || p > 65535)
		return -EINVAL;
	v = strtoul(last + 1, &end, 10);
	if (errno || *end || end == last + 1 || v > 4096)
		return -EINVAL;
	*port = (unsigned)p;
	*n = (unsigned)v;
	return 0;
}

int serve_gate_parse_addr(const char *s, char *addr, size_t addr_size, unsigned *port)
{
	char with_count[128];
	unsigned zero;

	if ((size_t)snprintf(with_count, sizeof(with_count), "%s:0", s) >= sizeof(with_count))
		return -EINVAL;
	return serve_gate_parse(with_count, addr, addr_size, port, &zero);
}

static int sockaddr_of(const char *addr, unsigned port, struct sockaddr_in *sa)
{
	*sa = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	return inet_pton(AF_INET, addr, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

/* Wait for fd to be readable, at most ms: 1 readable, 0 not in time, -errno. */
static int wait_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms < 0 ? 0 : ms);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* A short line from fd ("3\n"), at most GATE_LINE_MS: its length, or -errno. */
static ssize_t read_line(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len + 1 < size) {
		int r = wait_readable(fd, GATE_LINE_MS);
		ssize_t n;
		if (r <= 0)
			return r < 0 ? r : -ETIMEDOUT;
		n = read(fd, buf + len, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		if (buf[len] == '\n')
			break;
		len++;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = monotonic_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

int serve_gate_await(const char *addr, unsigned port, unsigned workers, unsigned timeout_s,
		     struct strbuf *err)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)timeout_s * 1000;
	int *conns = calloc(workers + 1, sizeof(*conns));
	struct sockaddr_in sa;
	unsigned reported = 0;
	int fd = -1, one = 1, ret = 0;

	if (!conns)
		return -ENOMEM;
	for (unsigned i = 0; i <= workers; i++)
		conns[i] = -1;
	if ((ret = sockaddr_of(addr, port, &sa)) < 0) {
		strbuf_addf(err, "'%s' is not an IPv4 address", addr);
		goto out;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		ret = -errno;
		strbuf_addf(err, "cannot listen on %s:%u for the workers: %s", addr, port,
			    strerror(errno));
		goto out;
	}
	while (reported < workers) {
		char line[32], *end;
		unsigned long rank;
		int c, r = wait_readable(fd, remaining_ms(deadline));
		if (r < 0) {
			ret = r;
			strbuf_addf(err, "waiting for the workers: %s", strerror(-r));
			goto out;
		}
		if (!r) {
			ret = -ETIMEDOUT;
			strbuf_addf(err, "no report from the worker%s of rank",
				    workers - reported > 1 ? "s" : "");
			for (unsigned i = 1; i <= workers; i++)
				if (conns[i] < 0)
					strbuf_addf(err, " %u", i);
			strbuf_addf(
				err,
				" at %s:%u within %u s: its part did not start (see its output)",
				addr, port, timeout_s);
			goto out;
		}
		if ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		/* Anything but a worker's rank line is not a worker of this serve: dropped. */
		errno = 0;
		if (read_line(c, line, sizeof(line)) <= 0 ||
		    (rank = strtoul(line, &end, 10), *end) || errno || !rank || rank > workers ||
		    conns[rank] >= 0) {
			close(c);
			continue;
		}
		conns[rank] = c;
		reported++;
	}
	/* Every worker is up: say so, and let each close first. */
	for (unsigned i = 1; i <= workers; i++) {
		char buf[8];
		if (write(conns[i], "go\n", 3) != 3)
			continue;
		if (wait_readable(conns[i], GATE_LINE_MS) > 0)
			(void)!read(conns[i], buf, sizeof(buf));
	}
out:
	for (unsigned i = 0; i <= workers; i++)
		if (conns[i] >= 0)
			close(conns[i]);
	free(conns);
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Connect to sa until deadline, retrying while nothing listens: 0 with the
 * socket in *fd, or -ETIMEDOUT / -errno with what (the head's part, ...) in err.
 */
static int connect_retry(const struct sockaddr_in *sa, const char *addr, unsigned port,
			 uint64_t deadline, unsigned timeout_s, const char *what, int *fd,
			 struct strbuf *err)
{
	int last = 0;

	for (;;) {
		*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (*fd < 0)
			return -errno;
		if (connect(*fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
			return 0;
		last = errno;
		close(*fd);
		*fd = -1;
		if (!remaining_ms(deadline)) {
			strbuf_addf(err, "%s at %s:%u did not answer within %u s: %s", what, addr,
				    port, timeout_s, strerror(last));
			return -ETIMEDOUT;
		}
		usleep(GATE_RETRY_MS * 1000);
	}
}

int serve_gate_listening(const char *addr, unsigned port, unsigned timeout_s, struct strbuf *err)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)timeout_s * 1000;
	struct sockaddr_in sa;
	int fd = -1, ret;

	if ((ret = sockaddr_of(addr, port, &sa)) < 0) {
		strbuf_addf(err, "'%s' is not an IPv4 address", addr);
		return ret;
	}
	ret = connect_retry(&sa, addr, port, deadline, timeout_s, "the worker's server", &fd, err);
	if (fd >= 0)
		close(fd);
	return ret;
}

int serve_gate_report(const char *addr, unsigned port, unsigned rank, unsigned timeout_s,
		      struct strbuf *err)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)timeout_s * 1000;
	struct sockaddr_in sa;
	char line[32];
	int fd = -1, ret;

	if ((ret = sockaddr_of(addr, port, &sa)) < 0) {
		strbuf_addf(err, "'%s' is not an IPv4 address", addr);
		return ret;
	}
	if ((ret = connect_retry(&sa, addr, port, deadline, timeout_s, "the head's part", &fd,
				 err)) < 0)
		return ret;
	snprintf(line, sizeof(line), "%u\n", rank);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		ret = -errno;
		strbuf_addf(err, "cannot report to %s:%u: %s", addr, port, strerror(errno));
		goto out;
	}
	/* The head answers once every worker has reported. */
	ret = wait_readable(fd, remaining_ms(deadline));
	if (ret == 0) {
		ret = -ETIMEDOUT;
		strbuf_addf(err, "the head's part at %s:%u did not start the head within %u s",
			    addr, port, timeout_s);
	} else if (ret < 0) {
		strbuf_addf(err, "waiting for the head's part: %s", strerror(-ret));
	} else if (read_line(fd, line, sizeof(line)) < 0 || strcmp(line, "go")) {
		ret = -ECONNRESET;
		strbuf_addf(err, "the head's part at %s:%u went away", addr, port);
	} else {
		ret = 0;
	}
out:
	close(fd);
	return ret;
}

unsigned serve_gate_count_peers(const char *ss_out, const char *addr, unsigned port)
{
	struct strvec peers = STRVEC_INIT;
	char local_want[64];
	unsigned n;

	snprintf(local_want, sizeof(local_want), "%s:%u", addr, port);
	for (const char *l = ss_out; l && *l;) {
		const char *nl = strchr(l, '\n');
		char *line = xstrndup(l, nl ? (size_t)(nl - l) : strlen(l));
		char a[8][80];
		int k = sscanf(line, "%79s %79s %79s %79s %79s %79s", a[0], a[1], a[2], a[3], a[4],
			       a[5]);
		/* Recv-Q Send-Q Local Peer (ss prints no State with a state filter), or with it. */
		for (int i = 0; i + 1 < k; i++) {
			char *colon;
			if (!streq(a[i], local_want))
				continue;
			colon = strrchr(a[i + 1], ':');
			if (colon) {
				*colon = '\0';
				if (!streq(a[i + 1], addr) && !strvec_contains(&peers, a[i + 1]))
					strvec_push(&peers, a[i + 1]);
			}
			break;
		}
		free(line);
		l = nl ? nl + 1 : NULL;
	}
	n = (unsigned)peers.nr;
	strvec_clear(&peers);
	return n;
}

int serve_gate_peers(const char *addr, unsigned port, unsigned peers, unsigned timeout_s,
		     struct strbuf *err)
{
	uint64_t deadline = monotonic_ms() + (uint64_t)timeout_s * 1000;
	char filter[64];
	unsigned seen = 0;

	snprintf(filter, sizeof(filter), "( sport = :%u )", port);
	for (;;) {
		struct run_job job;
		run_job_init(&job);
		strvec_pushl(&job.argv, "ss", "-Htn", "state", "established", filter, NULL);
		if (run_jobs(&job, 1, 0, 5000, 1 << 20) < 0 || job.status != 0) {
			strbuf_addf(err, "cannot list the connections to %s:%u: ss %s", addr, port,
				    job.spawn_error ? "is not on this node" : "failed");
			run_job_release(&job);
			return -ENOENT;
		}
		seen = serve_gate_count_peers(job.out.buf, addr, port);
		run_job_release(&job);
		if (seen >= peers)
			return 0;
		if (!remaining_ms(deadline))
			break;
		usleep(GATE_RETRY_MS * 1000);
	}
	strbuf_addf(err, "%u of %u worker%s joined at %s:%u within %u s: see the workers' output",
		    seen, peers, peers == 1 ? "" : "s", addr, port, timeout_s);
	return -ETIMEDOUT;
}
