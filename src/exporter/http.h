/*
 * http.h - the exporter's HTTP endpoint (libmicrohttpd).
 *
 * One internal polling thread serves every connection, so scrapes are
 * collected one at a time and a slow client only costs a connection
 * slot.  Limits: total connections, connections per client address, an
 * idle timeout, and a per-connection memory pool that bounds the request
 * line and headers (a larger request gets 431).  Only GET and HEAD are
 * served (others: 405), on /metrics and / (others: 404).
 */
#ifndef SPARKCTL_EXPORTER_HTTP_H
#define SPARKCTL_EXPORTER_HTTP_H

#include "sparkctl.h"

#include <sys/socket.h>

#include "lib/strbuf.h"

#define EXPORTER_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct http_limits {
	unsigned max_connections; /* all clients together */
	unsigned max_per_ip;	  /* per client address */
	unsigned timeout_s;	  /* idle connections are closed after this */
	size_t memory;		  /* per connection: request line, headers, response headers */
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
 * exporter on the port must fail) and start serving.  On failure returns
 * -errno with a message naming the address in err.
 */
int http_server_start(struct http_server **ret, const struct sockaddr *sa, socklen_t len,
		      const struct http_limits *limits, http_scrape_fn *scrape, void *data,
		      struct strbuf *err);
/* The address the server is bound to (with the port picked for port 0). */
void http_server_address(const struct http_server *s, struct strbuf *out);
/* Stop serving, close every connection.  NULL is fine. */
void http_server_stop(struct http_server *s);

#endif
