#include "sparkctl.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "exporter/http.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

struct http_server {
	struct MHD_Daemon *daemon;
	struct sockaddr_storage addr; /* bound, with the real port */
	http_scrape_fn *scrape;
	void *data;
};

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>sparkctl exporter</title></head>\n"
	"<body><h1>sparkctl exporter</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

int http_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *port_text;
	bool bracket = text[0] == '[';
	uint32_t port;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (bracket) {
		const char *end = strchr(text, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		n = (size_t)(end - text - 1);
		port_text = end + 2;
		text++;
	} else {
		const char *colon = strchr(text, ':');
		if (!colon)
			return -EINVAL;
		n = (size_t)(colon - text);
		port_text = colon + 1;
	}
	if (n == 0 || n >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, n);
	host[n] = '\0';
	if (parse_u32(port_text, &port) < 0 || port > 65535)
		return -EINVAL;
	/* IPv6 only in brackets, IPv4 only without: one spelling of each. */
	if (!bracket) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -EINVAL;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (!strchr(host, ':') || inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*in6);
	}
	return 0;
}

void http_format_addr(const struct sockaddr *sa, struct strbuf *out)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		strbuf_addf(out, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		strbuf_addf(out, "%s:%u", host, ntohs(in->sin_port));
	}
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	return reply(c, status, "text/plain; charset=utf-8", (void *)(uintptr_t)text, strlen(text),
		     MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct http_server *s = cls;
	struct strbuf body = STRBUF_INIT;
	size_t len;
	char *buf;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* A request body is never wanted: drop it unread. */
	*upload_data_size = 0;
	if (!streq(method, MHD_HTTP_METHOD_GET) && !streq(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (streq(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     (void *)(uintptr_t)index_page, sizeof(index_page) - 1,
			     MHD_RESPMEM_PERSISTENT);
	if (!streq(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	if (s->scrape(s->data, &body) < 0) {
		strbuf_release(&body);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "collecting metrics failed\n");
	}
	buf = strbuf_detach(&body, &len);
	return reply(c, MHD_HTTP_OK, EXPORTER_CONTENT_TYPE, buf, len, MHD_RESPMEM_MUST_FREE);
}

int http_server_start(struct http_server **ret, const struct sockaddr *sa, socklen_t len,
		      const struct http_limits *limits, http_scrape_fn *scrape, void *data,
		      struct strbuf *err)
{
	struct http_server *s = xcalloc(1, sizeof(*s));
	struct strbuf addr = STRBUF_INIT;
	socklen_t alen = sizeof(s->addr);
	int fd, one = 1, r;

	http_format_addr(sa, &addr);
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot listen on %s: %s", addr.buf, strerror(errno));
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, len) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&s->addr, &alen) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot listen on %s: %s", addr.buf, strerror(errno));
		close(fd);
		goto fail;
	}
	s->scrape = scrape;
	s->data = data;
	/*
	 * poll(), not epoll: with edge-triggered epoll libmicrohttpd 0.9.75 misses
	 * the end of a client's half of the connection that came with its last
	 * bytes, and holds an incomplete request until the timeout.
	 */
	s->daemon = MHD_start_daemon(
		MHD_USE_POLL_INTERNAL_THREAD, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET,
		fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)limits->max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)limits->max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)limits->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)limits->memory, MHD_OPTION_END);
	if (!s->daemon) {
		r = -EIO;
		strbuf_addf(err, "cannot serve HTTP on %s: libmicrohttpd failed to start",
			    addr.buf);
		close(fd);
		goto fail;
	}
	strbuf_release(&addr);
	*ret = s;
	return 0;
fail:
	strbuf_release(&addr);
	free(s);
	return r;
}

void http_server_address(const struct http_server *s, struct strbuf *out)
{
	http_format_addr((const struct sockaddr *)&s->addr, out);
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->daemon);
	free(s);
}
