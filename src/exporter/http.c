#include "sparkctl.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "exporter/basic_auth.h"
#include "exporter/conn_table.h"
#include "exporter/http.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "proc/loop.h"

/* TLS 1.2 and 1.3 only, as Prometheus' exporters have it. */
#define TLS_PRIORITIES	  "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define AUTH_REALM	  "sparkctl exporter"
/*
 * Sockets beyond --max-connections that libmicrohttpd may hold: those cut
 * for room, until its next round closes them.  At this cap it stops
 * accepting for a moment (the kernel queues the newcomers).
 */
#define CUT_SOCKETS_SLACK 64

struct http_server {
	struct MHD_Daemon *daemon;
	struct sockaddr_storage addr; /* bound, with the real port */
	bool tls;
	struct basic_auth *auth;
	struct conn_table conns;
	struct loop *loop;
	struct loop_timer sweep;
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

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* Whether the request carries the credentials of a configured user. */
static bool authorized(struct http_server *s, struct MHD_Connection *c)
{
	char *password = NULL, *user = MHD_basic_auth_get_username_password(c, &password);
	bool ok = user && password && basic_auth_check(s->auth, user, password);

	if (password)
		explicit_bzero(password, strlen(password));
	MHD_free(user);
	MHD_free(password);
	return ok;
}

static enum MHD_Result refuse_unauthorized(struct MHD_Connection *c)
{
	static const char text[] = "unauthorized\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		sizeof(text) - 1, (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	/* 401 with WWW-Authenticate: Basic realm="..." */
	ret = MHD_queue_basic_auth_fail_response(c, AUTH_REALM, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct http_server *s = cls;
	struct strbuf body = STRBUF_INIT;
	struct conn *conn;
	size_t len;
	char *buf;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* The request line and headers are in: out of the deadline while it is answered. */
	if ((conn = conn_of(c)))
		conn_table_answering(&s->conns, conn);
	/* A request body is never wanted: drop it unread. */
	*upload_data_size = 0;
	if (s->auth && !authorized(s, c))
		return refuse_unauthorized(c);
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

/* libmicrohttpd's thread: a connection begins or ends (before its socket is closed). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	const union MHD_ConnectionInfo *fd, *peer;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (*socket_context)
			conn_table_close(&s->conns, *socket_context);
		*socket_context = NULL;
		return;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	peer = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	*socket_context = fd && peer ? conn_table_open(&s->conns, fd->connect_fd, peer->client_addr,
						       monotonic_ms())
				     : NULL;
}

/* libmicrohttpd's thread: an answer is sent (or the request ended): the next one may come. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct conn *conn = conn_of(c);

	(void)con_cls;
	(void)toe;
	if (conn)
		conn_table_answered(&s->conns, conn, monotonic_ms());
}

/* The caller's loop: cut what is past its deadline, come back at the next one. */
static void sweep(struct loop *loop, void *data)
{
	struct http_server *s = data;

	loop_timer_arm(loop, &s->sweep, conn_table_sweep(&s->conns, monotonic_ms()));
}

static int listen_socket(const struct sockaddr *sa, socklen_t len, struct http_server *s,
			 const char *addr, struct strbuf *err)
{
	socklen_t alen = sizeof(s->addr);
	int fd, one = 1, r;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		strbuf_addf(err, "cannot listen on %s: %s", addr, strerror(errno));
		return r;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/*
	 * Accepted only once the client has sent something (or, silent, after
	 * about a second): a scraper's request is then there when it enters the
	 * connection table, and is read before any newcomer can make room by
	 * cutting it, however late its client got to send it.
	 */
	setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* A long queue: a burst of connections must not push a scraper's out. */
	if (bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&s->addr, &alen) < 0) {
		r = -errno;
		strbuf_addf(err, "cannot listen on %s: %s", addr, strerror(errno));
		close(fd);
		return r;
	}
	return fd;
}

static struct MHD_Daemon *start_daemon(struct http_server *s, int fd,
				       const struct http_limits *limits,
				       const struct http_security *sec)
{
	unsigned flags = MHD_USE_POLL_INTERNAL_THREAD;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)(sec ? sec->cert_pem : NULL) },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)(sec ? sec->key_pem : NULL) },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)TLS_PRIORITIES },
		{ MHD_OPTION_END, 0, NULL },
	};

	if (s->tls)
		flags |= MHD_USE_TLS;
	else
		tls[0].option = MHD_OPTION_END;
	/*
	 * poll(), not epoll: with edge-triggered epoll libmicrohttpd 0.9.75
	 * misses the end of a client's half of the connection that came with
	 * its last bytes, and holds an incomplete request until the timeout.
	 * The limits per address and in all are conn_table's (it makes room
	 * where libmicrohttpd would refuse); libmicrohttpd's own cap only
	 * bounds the sockets.
	 */
	return MHD_start_daemon(
		flags, 0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT, limits->max_connections + CUT_SOCKETS_SLACK,
		MHD_OPTION_CONNECTION_TIMEOUT, limits->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits->memory, MHD_OPTION_NOTIFY_CONNECTION,
		on_connection, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_ARRAY,
		tls, MHD_OPTION_END);
}

int http_server_start(struct http_server **ret, const struct sockaddr *sa, socklen_t len,
		      const struct http_limits *limits, const struct http_security *security,
		      struct loop *loop, http_scrape_fn *scrape, void *data, struct strbuf *err)
{
	struct http_server *s = xcalloc(1, sizeof(*s));
	struct strbuf addr = STRBUF_INIT;
	int fd, r;

	http_format_addr(sa, &addr);
	s->tls = security && security->cert_pem;
	s->auth = security ? security->auth : NULL;
	s->scrape = scrape;
	s->data = data;
	s->loop = loop;
	if (s->tls && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		r = -ENOTSUP;
		strbuf_addstr(err, "this libmicrohttpd has no TLS");
		goto fail;
	}
	if ((fd = listen_socket(sa, len, s, addr.buf, err)) < 0) {
		r = fd;
		goto fail;
	}
	conn_table_init(&s->conns, limits->max_connections, limits->max_per_ip,
			(uint64_t)limits->request_timeout_s * 1000);
	s->daemon = start_daemon(s, fd, limits, security);
	if (!s->daemon) {
		r = -EIO;
		strbuf_addf(err, "cannot serve HTTP%s on %s: libmicrohttpd failed to start",
			    s->tls ? "S" : "", addr.buf);
		conn_table_release(&s->conns);
		close(fd);
		goto fail;
	}
	loop_timer_init(&s->sweep, sweep, s);
	loop_timer_arm_in(loop, &s->sweep, (uint64_t)limits->request_timeout_s * 1000);
	strbuf_release(&addr);
	*ret = s;
	return 0;
fail:
	strbuf_release(&addr);
	free(s);
	return r;
}

void http_server_url(const struct http_server *s, struct strbuf *out)
{
	strbuf_addstr(out, s->tls ? "https://" : "http://");
	http_format_addr((const struct sockaddr *)&s->addr, out);
}

void http_server_stop(struct http_server *s)
{
	if (!s)
		return;
	loop_timer_cancel(s->loop, &s->sweep);
	/* Every connection is closed, and so leaves the table, before this returns. */
	MHD_stop_daemon(s->daemon);
	conn_table_release(&s->conns);
	free(s);
}
