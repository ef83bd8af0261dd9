/*
 * mdns.c - the one-shot mDNS query of discover_run() (discover.h): one
 * socket per interface, legacy unicast (RFC 6762 §6.7), replies collected
 * in the one event loop (proc/loop.h) until the deadline.
 */
#include "sparkctl.h"

#include "discover/discover.h"
#include "lib/clock.h"
#include "lib/xalloc.h"
#include "proc/loop.h"
#include "view/progress.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#define MDNS_GROUP	    "224.0.0.251"
#define MDNS_PORT	    5353
/* Bounds on what one run keeps and asks, whatever the network sends. */
#define MDNS_MAX_REPLIES    4096
#define MDNS_MAX_FOLLOW_UPS 256

struct mdns_run;

struct mdns_sock {
	struct mdns_run *run;
	size_t iface;
	int fd;
	struct strvec asked; /* "TYPE NAME" of the questions sent */
};

struct mdns_run {
	struct discover_result *out;
	struct mdns_sock *socks;
	size_t nr_socks;
	struct discover_reply *replies;
	size_t nr_replies;
	uint16_t id;
	struct loop_timer deadline;
	struct loop_timer progress; /* view/progress.h's line, for a long --reply-timeout */
};

static void add_finding(struct discover_result *out, const char *fmt, ...) ATTR_PRINTF(2, 3);
static void add_finding(struct discover_result *out, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (!strvec_contains(&out->findings, sb.buf))
		strvec_push(&out->findings, sb.buf);
	strbuf_release(&sb);
}

/* A UDP socket on an ephemeral port of the interface's address, multicasting through it. */
static int open_socket(const struct discover_iface *ifc, struct strbuf *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	unsigned char ttl = 255; /* what RFC 6762 §11 has responders expect */
	unsigned char loop = 1;	 /* this node's own responder answers too */
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), e;

	if (fd < 0) {
		e = errno;
		strbuf_addf(err, "cannot make a UDP socket: %s", strerror(e));
		return -e;
	}
	if (inet_pton(AF_INET, ifc->address, &sa.sin_addr) != 1) {
		strbuf_addf(err, "%s: '%s' is not an IPv4 address", ifc->name, ifc->address);
		close(fd);
		return -EINVAL;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &sa.sin_addr, sizeof(sa.sin_addr)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop)) < 0) {
		e = errno;
		strbuf_addf(err, "%s: cannot set up a socket on %s: %s", ifc->name, ifc->address,
			    strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* Ask s's interface one question, once per run. */
static void ask(struct mdns_sock *s, const char *name, uint16_t type)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(MDNS_PORT) };
	struct strbuf q = STRBUF_INIT, err = STRBUF_INIT, key = STRBUF_INIT;
	struct discover_result *out = s->run->out;

	strbuf_addf(&key, "%u %s", type, name);
	if (strvec_contains(&s->asked, key.buf) || s->asked.nr >= MDNS_MAX_FOLLOW_UPS)
		goto out;
	strvec_push(&s->asked, key.buf);
	if (dns_build_query(s->run->id, name, type, false, &q, &err) < 0) {
		add_finding(out, "cannot ask for %s: %s", name, err.buf);
		goto out;
	}
	inet_pton(AF_INET, MDNS_GROUP, &to.sin_addr);
	if (sendto(s->fd, q.buf, q.len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		add_finding(out, "%s: cannot send the query for %s: %s", out->ifaces[s->iface].name,
			    name, strerror(errno));
out:
	strbuf_release(&q);
	strbuf_release(&err);
	strbuf_release(&key);
}

static bool have(const struct mdns_run *run, uint16_t type, const char *name)
{
	for (size_t i = 0; i < run->nr_replies; i++)
		for (size_t k = 0; k < run->replies[i].msg.nr_records; k++) {
			const struct dns_rr *rr = &run->replies[i].msg.records[k];
			if (rr->type == type && dns_name_eq(rr->name, name))
				return true;
		}
	return false;
}

/* What the replies on s's interface name but do not give: asked for on s. */
static void follow_up(struct mdns_sock *s)
{
	struct mdns_run *run = s->run;

	for (size_t i = 0; i < run->nr_replies; i++) {
		if (run->replies[i].iface != s->iface)
			continue;
		for (size_t k = 0; k < run->replies[i].msg.nr_records; k++) {
			const struct dns_rr *rr = &run->replies[i].msg.records[k];
			if (rr->type == DNS_TYPE_PTR && rr->target) {
				if (!have(run, DNS_TYPE_SRV, rr->target))
					ask(s, rr->target, DNS_TYPE_SRV);
				if (!have(run, DNS_TYPE_TXT, rr->target))
					ask(s, rr->target, DNS_TYPE_TXT);
			} else if (rr->type == DNS_TYPE_SRV && rr->target &&
				   !have(run, DNS_TYPE_A, rr->target)) {
				ask(s, rr->target, DNS_TYPE_A);
			}
		}
	}
}

static void on_reply(struct loop *loop, int fd, short revents, void *data)
{
	struct mdns_sock *s = data;
	struct mdns_run *run = s->run;
	struct sockaddr_in from;
	socklen_t fromlen = sizeof(from);
	static uint8_t buf[DNS_MESSAGE_MAX];
	struct strbuf err = STRBUF_INIT;
	struct discover_reply *reply;
	char addr[INET_ADDRSTRLEN];
	ssize_t n;

	(void)loop;
	(void)revents;
	n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
	if (n < 0 || run->nr_replies >= MDNS_MAX_REPLIES)
		goto out;
	inet_ntop(AF_INET, &from.sin_addr, addr, sizeof(addr));
	reply = ARRAY_PUSH(run->replies, run->nr_replies);
	reply->iface = s->iface;
	snprintf(reply->from, sizeof(reply->from), "%s", addr);
	if (dns_parse(buf, (size_t)n, &reply->msg, &err) < 0) {
		add_finding(run->out, "%s: a reply from %s was refused: %s",
			    run->out->ifaces[s->iface].name, addr, err.buf);
		dns_message_release(&reply->msg);
		run->nr_replies--;
		goto out;
	}
	/* not an answer to this run's questions */
	if (!(reply->msg.flags & DNS_FLAG_QR) || reply->msg.id != run->id) {
		dns_message_release(&reply->msg);
		run->nr_replies--;
		goto out;
	}
	if (reply->msg.flags & DNS_FLAG_TC)
		add_finding(run->out, "%s: the reply from %s was truncated; what it held is used",
			    run->out->ifaces[s->iface].name, addr);
	follow_up(s);
out:
	strbuf_release(&err);
}

static void on_deadline(struct loop *loop, void *data)
{
	(void)data;
	loop_stop(loop);
}

/* Open a socket per interface and send the PTR questions; 0 or -errno (out->error). */
static int start(struct mdns_run *run, struct loop *loop)
{
	struct discover_result *out = run->out;
	struct strbuf err = STRBUF_INIT, name = STRBUF_INIT;
	int r = 0;

	run->socks = xcalloc(out->nr_ifaces, sizeof(*run->socks));
	for (size_t i = 0; i < out->nr_ifaces; i++) {
		struct mdns_sock *s = &run->socks[i];
		s->run = run;
		s->iface = i;
		s->fd = -1;
		strvec_init(&s->asked);
		run->nr_socks++;
		if ((r = open_socket(&out->ifaces[i], &err)) < 0) {
			out->error = strbuf_detach(&err, NULL);
			goto out;
		}
		s->fd = r;
		r = 0;
		loop_watch_fd(loop, s->fd, POLLIN, on_reply, s);
		for (size_t k = 0; k < out->services.nr; k++) {
			strbuf_reset(&name);
			strbuf_addf(&name, "%s.local", out->services.v[k]);
			ask(s, name.buf, DNS_TYPE_PTR);
		}
	}
out:
	strbuf_release(&err);
	strbuf_release(&name);
	return r;
}

static int check_services(const struct discover_request *req, struct discover_result *out)
{
	if (!req->services || !req->services->nr) {
		strvec_push(&out->services, "_ssh._tcp");
		strvec_push(&out->services, "_sparkctl._tcp");
		return 0;
	}
	for (size_t i = 0; i < req->services->nr; i++) {
		const char *sv = req->services->v[i];
		if (!streq(sv, "_ssh._tcp") && !streq(sv, "_sparkctl._tcp")) {
			out->error = xstrdup("the service is _ssh._tcp or _sparkctl._tcp");
			return -EINVAL;
		}
		if (!strvec_contains(&out->services, sv))
			strvec_push(&out->services, sv);
	}
	return 0;
}

int discover_run(const struct discover_request *req, struct discover_result *out)
{
	struct mdns_run run = { .out = out };
	struct loop loop;
	int r;

	if ((r = check_services(req, out)) < 0 || (r = discover_choose_ifaces(req, out)) < 0)
		return r;
	if (getrandom(&run.id, sizeof(run.id), 0) != (ssize_t)sizeof(run.id))
		run.id = (uint16_t)(monotonic_ns() & 0xffff);
	loop_init(&loop);
	loop_timer_init(&run.deadline, on_deadline, &run);
	progress_timer_arm(&loop, &run.progress);
	if ((r = start(&run, &loop)) == 0) {
		loop_timer_arm_in(&loop, &run.deadline,
				  req->timeout_ms ? req->timeout_ms : DISCOVER_DEFAULT_TIMEOUT_MS);
		if ((r = loop_run(&loop)) < 0)
			out->error = xstrdup("waiting for the replies failed");
		else
			r = 0;
	}
	if (r == 0)
		discover_merge(run.replies, run.nr_replies, req->inv->sys.hostname, out);
	for (size_t i = 0; i < run.nr_socks; i++) {
		if (run.socks[i].fd >= 0) {
			loop_unwatch_fd(&loop, run.socks[i].fd);
			close(run.socks[i].fd);
		}
		strvec_clear(&run.socks[i].asked);
	}
	for (size_t i = 0; i < run.nr_replies; i++)
		dns_message_release(&run.replies[i].msg);
	free(run.replies);
	free(run.socks);
	loop_release(&loop);
	return r;
}
