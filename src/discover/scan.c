/*
 * scan.c - discover --scan: which addresses of a small subnet accept a
 * TCP connection on port 22 (discover.h).  Non-blocking connects, at most
 * SCAN_PARALLEL at once, each given up after the timeout.
 */
#include "sparkctl.h"

#include "discover/discover.h"
#include "lib/ipv4.h"
#include "lib/xalloc.h"
#include "proc/loop.h"
#include "view/progress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define SCAN_PARALLEL 64
#define SCAN_PORT     22

struct scan_run;

struct scan_slot {
	struct scan_run *run;
	int fd;
	uint32_t addr;
	struct loop_timer timeout;
};

struct scan_run {
	struct loop *loop;
	uint32_t next, last; /* the addresses still to try, host order */
	unsigned timeout_ms;
	struct scan_slot slots[SCAN_PARALLEL];
	uint32_t *open;
	size_t nr_open;
	struct loop_timer progress; /* view/progress.h's line */
};

static void start_next(struct scan_slot *s);

static void finish(struct scan_slot *s, bool open)
{
	struct scan_run *run = s->run;

	loop_timer_cancel(run->loop, &s->timeout);
	loop_unwatch_fd(run->loop, s->fd);
	close(s->fd);
	s->fd = -1;
	if (open)
		*ARRAY_PUSH(run->open, run->nr_open) = s->addr;
	start_next(s);
}

static void on_connected(struct loop *loop, int fd, short revents, void *data)
{
	struct scan_slot *s = data;
	int e = 0;
	socklen_t len = sizeof(e);

	(void)loop;
	(void)revents;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
		e = errno;
	finish(s, e == 0);
}

static void on_timeout(struct loop *loop, void *data)
{
	(void)loop;
	finish(data, false);
}

/* The slot's next address: connecting, or done at once (refused, unreachable). */
static void start_next(struct scan_slot *s)
{
	struct scan_run *run = s->run;

	while (run->next <= run->last && run->next != 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(SCAN_PORT) };
		uint32_t addr = run->next;
		int fd;

		run->next = addr == UINT32_MAX ? 0 : addr + 1;
		sa.sin_addr.s_addr = htonl(addr);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			*ARRAY_PUSH(run->open, run->nr_open) = addr;
			continue;
		}
		if (errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		s->fd = fd;
		s->addr = addr;
		loop_watch_fd(run->loop, fd, POLLOUT, on_connected, s);
		loop_timer_arm_in(run->loop, &s->timeout, run->timeout_ms);
		return;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void add_open_hosts(const struct scan_run *run, struct discover_result *out)
{
	for (size_t i = 0; i < run->nr_open; i++) {
		struct discover_host *h = discover_add_host(out);
		char text[16];
		ipv4_format(run->open[i], text);
		h->host = xstrdup(text);
		strvec_push(&h->addresses, text);
		strvec_push(&h->services, "tcp/22");
		h->port = SCAN_PORT;
	}
}

int discover_scan(const char *cidr, unsigned timeout_ms, struct discover_result *out)
{
	struct scan_run run = { .timeout_ms = timeout_ms ? timeout_ms : 1000 };
	struct cidr c, net;
	struct loop loop;
	int r;

	if (cidr_parse(cidr, &c) < 0) {
		out->error = xstrdup("--scan takes an IPv4 subnet like 198.18.0.0/29");
		return -EINVAL;
	}
	if (c.prefix < DISCOVER_SCAN_MIN_PREFIX) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addf(&sb,
			    "--scan %s covers %" PRIu64 " addresses; the most it sweeps is a /%d "
			    "(%u addresses): use discover's mDNS query for more",
			    cidr, (uint64_t)1 << (32 - c.prefix), DISCOVER_SCAN_MIN_PREFIX,
			    1u << (32 - DISCOVER_SCAN_MIN_PREFIX));
		out->error = strbuf_detach(&sb, NULL);
		return -E2BIG;
	}
	net = cidr_network(&c);
	run.next = net.addr;
	run.last = net.addr | ~cidr_mask(c.prefix);
	/* the network and broadcast addresses of a subnet that has both */
	if (c.prefix <= 30) {
		run.next++;
		run.last--;
	}
	loop_init(&loop);
	run.loop = &loop;
	progress_timer_arm(&loop, &run.progress);
	for (size_t i = 0; i < SCAN_PARALLEL; i++) {
		run.slots[i].run = &run;
		run.slots[i].fd = -1;
		loop_timer_init(&run.slots[i].timeout, on_timeout, &run.slots[i]);
	}
	for (size_t i = 0; i < SCAN_PARALLEL; i++)
		start_next(&run.slots[i]);
	r = loop_run(&loop);
	/* connections still open when the loop failed */
	for (size_t i = 0; i < SCAN_PARALLEL; i++)
		if (run.slots[i].fd >= 0) {
			loop_unwatch_fd(&loop, run.slots[i].fd);
			close(run.slots[i].fd);
		}
	loop_release(&loop);
	if (r < 0) {
		out->error = xstrdup("waiting for the connections failed");
	} else {
		r = 0;
		qsort(run.open, run.nr_open, sizeof(*run.open), cmp_u32);
		add_open_hosts(&run, out);
	}
	free(run.open);
	return r;
}
