/*
 * conn_table.h - the exporter's open connections, for its two rules
 * against clients that hold connections without asking anything:
 *
 *  - a deadline: a connection has request_timeout_ms from its opening, or
 *    from its previous answer, to deliver a whole request;
 *  - room for newcomers: over max_connections in all, or over max_per_ip
 *    from one address, the connection that has waited longest for its
 *    request is cut (the newcomer itself when none has waited longer).
 *    A connection whose request is being answered is never cut.
 *
 * Cutting is shutdown(SHUT_RDWR) of the socket: the HTTP server then sees
 * the end of the connection and closes it itself.  The table is locked
 * inside: the server's thread opens, marks and closes connections while
 * another thread sweeps.  A connection must be closed here before its
 * socket is closed, so that the sweep never shuts down a reused descriptor.
 * Times are monotonic milliseconds.
 */
#ifndef SPARKCTL_EXPORTER_CONN_TABLE_H
#define SPARKCTL_EXPORTER_CONN_TABLE_H

#include "sparkctl.h"

#include <pthread.h>
#include <sys/socket.h>

struct conn {
	struct conn *prev, *next;
	struct sockaddr_storage peer; /* only the address counts, not the port */
	int fd;
	uint64_t waiting_since; /* opened, or its last answer sent */
	bool answering;		/* a whole request came and is being answered */
	bool cut;		/* shut down: no longer counted, waiting to be closed */
};

struct conn_table {
	pthread_mutex_t lock;
	struct conn *head, *tail; /* in the order they opened */
	unsigned max_connections, max_per_ip;
	uint64_t request_timeout_ms;
	uint64_t cuts; /* how many were cut, ever: by the deadline or for room */
};

void conn_table_init(struct conn_table *t, unsigned max_connections, unsigned max_per_ip,
		     uint64_t request_timeout_ms);
/* Every connection must have been closed. */
void conn_table_release(struct conn_table *t);

/* A new connection on socket fd from peer: added, and room made for it (maybe by cutting it). */
struct conn *conn_table_open(struct conn_table *t, int fd, const struct sockaddr *peer,
			     uint64_t now);
/* Its request came whole: no deadline until it is answered. */
void conn_table_answering(struct conn_table *t, struct conn *c);
/* Its answer is done: it waits for its next request, from now. */
void conn_table_answered(struct conn_table *t, struct conn *c, uint64_t now);
/* Before its socket is closed: removed and freed. */
void conn_table_close(struct conn_table *t, struct conn *c);

/*
 * Cut every connection past its deadline; returns when to sweep next (the
 * earliest deadline left, or now + the timeout when none waits).
 */
uint64_t conn_table_sweep(struct conn_table *t, uint64_t now);

#endif
