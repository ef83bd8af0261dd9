/*
 * http.h - the exporter's HTTP endpoint (libmicrohttpd), with TLS and
 * basic authentication when a web-config file asks for them.
 *
 * One internal polling thread (poll(), so thousands of sockets are fine)
 * serves every connection, so scrapes are collected one at a time.  Only
 * GET and HEAD are served (others: 405), on /metrics and / (others: 404);
 * with users configured, a request without their credentials gets 401.
 *
 * Slow and idle clients cannot lock a scraper out:
 *  - a connection has request_timeout_s from its opening, or from its
 *    previous answer, to deliver a whole request (line and headers); then
 *    it is shut down, however steadily it trickles bytes;
 *  - over max_connections in all, or max_per_ip from one address, the
 *    connection that has waited longest for its request is shut down to
 *    make room (the newcomer itself when it is that one).  One that has
 *    sent its request - a scraper does at once - is never the one, so a
 *    scraper gets in even from an address whose every slot is held.  The
 *    kernel hands a connection over only once its client has sent
 *    something (TCP_DEFER_ACCEPT), so a plain-HTTP request is whole when
 *    its connection is accepted and is read in the next round, before
 *    newcomers could cut it; silent connections wait in the kernel first;
 *  - idle connections close after timeout_s, and a per-connection memory
 *    pool bounds the request line and headers (a larger request gets 431).
 * The deadline is kept by a timer of the caller's loop; shutting a socket
 * down from there cannot hit a reused descriptor, since libmicrohttpd
 * tells us a connection ended (under our lock) before it closes its socket.
 */
#ifndef SPARKCTL_EXPORTER_HTTP_H
#define SPARKCTL_EXPORTER_HTTP_H

#include "sparkctl.h"

#include <sys/socket.h>

#include "lib/strbuf.h"

struct loop;
struct basic_auth;

#define EXPORTER_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct http_limits {
	unsigned max_connections;   /* all clients together */
	unsigned max_per_ip;	    /* per client address */
	unsigned timeout_s;	    /* idle connections are closed after this */
	unsigned request_timeout_s; /* to send a whole request */
	size_t memory;		    /* per connection: request line, headers, response headers */
};

/* TLS and authentication; NULL members: plain HTTP, no authentication. */
struct http_security {
	const char *cert_pem, *key_pem; /* PEM text; kept by the caller while serving */
	struct basic_auth *auth;	/* used from the server's thread only */
};

/*
 * Fill out for the metrics page: the body (Prometheus text) and 0, or a
 * negative errno (the client gets 500).
 */
typedef int http_scrape_fn(void *data, struct strbuf *out);

struct http_server;

/*
 * Parse "ADDR:PORT" (IPv4) or "[ADDR]:PORT" (IPv6) into ss.  PORT 0 picks
 * a free port.  -EINVAL for anything else.
 */
int http_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *ret_len);
/* "ADDR:PORT" or "[ADDR]:PORT" of sa. */
void http_format_addr(const struct sockaddr *sa, struct strbuf *out);

/*
 * Bind the address (with SO_REUSEADDR, never SO_REUSEPORT: a second
 * exporter on the port must fail) and start serving, with the request
 * deadline kept by a timer in loop (the caller runs it).  security may be
 * NULL.  On failure returns -errno with a message naming the address in err.
 */
int http_server_start(struct http_server **ret, const struct sockaddr *sa, socklen_t len,
		      const struct http_limits *limits, const struct http_security *security,
		      struct loop *loop, http_scrape_fn *scrape, void *data, struct strbuf *err);
/* "http://ADDR:PORT" or "https://...", with the port picked for port 0. */
void http_server_url(const struct http_server *s, struct strbuf *out);
/* Stop serving, close every connection, cancel the timer.  NULL is fine. */
void http_server_stop(struct http_server *s);

#endif
