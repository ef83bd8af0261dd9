#include "sparkctl.h"

#include <netinet/in.h>

#include "exporter/conn_table.h"
#include "lib/xalloc.h"

void conn_table_init(struct conn_table *t, unsigned max_connections, unsigned max_per_ip,
		     uint64_t request_timeout_ms)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->max_connections = max_connections;
	t->max_per_ip = max_per_ip;
	t->request_timeout_ms = request_timeout_ms;
}

void conn_table_release(struct conn_table *t)
{
	pthread_mutex_destroy(&t->lock);
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return true;
}

/* Under the lock. */
static void cut(struct conn_table *t, struct conn *c)
{
	c->cut = true;
	t->cuts++;
	shutdown(c->fd, SHUT_RDWR);
}

/* Over a limit, cut the connection that waited longest in the limit's scope; under the lock. */
static void make_room(struct conn_table *t, const struct conn *newcomer)
{
	for (;;) {
		struct conn *oldest = NULL, *oldest_here = NULL, *victim;
		unsigned all = 0, here = 0;

		for (struct conn *c = t->head; c; c = c->next) {
			bool same;

			if (c->cut)
				continue;
			same = same_address(&c->peer, &newcomer->peer);
			all++;
			here += same;
			if (c->answering)
				continue;
			/* Strictly earlier: of equal times, the one opened first. */
			if (!oldest || c->waiting_since < oldest->waiting_since)
				oldest = c;
			if (same && (!oldest_here || c->waiting_since < oldest_here->waiting_since))
				oldest_here = c;
		}
		/*
		 * Within the limits before the newcomer came, so one cut per
		 * limit at most, and each scope holds one that waits: the newcomer.
		 */
		victim = here > t->max_per_ip	    ? oldest_here
			 : all > t->max_connections ? oldest
						    : NULL;
		if (!victim)
			return;
		cut(t, victim);
	}
}

struct conn *conn_table_open(struct conn_table *t, int fd, const struct sockaddr *peer,
			     uint64_t now)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	c->waiting_since = now;
	if (peer->sa_family == AF_INET)
		memcpy(&c->peer, peer, sizeof(struct sockaddr_in));
	else if (peer->sa_family == AF_INET6)
		memcpy(&c->peer, peer, sizeof(struct sockaddr_in6));
	else
		c->peer.ss_family = peer->sa_family;
	pthread_mutex_lock(&t->lock);
	c->prev = t->tail;
	if (t->tail)
		t->tail->next = c;
	else
		t->head = c;
	t->tail = c;
	make_room(t, c);
	pthread_mutex_unlock(&t->lock);
	return c;
}

void conn_table_answering(struct conn_table *t, struct conn *c)
{
	pthread_mutex_lock(&t->lock);
	c->answering = true;
	pthread_mutex_unlock(&t->lock);
}

void conn_table_answered(struct conn_table *t, struct conn *c, uint64_t now)
{
	pthread_mutex_lock(&t->lock);
	c->answering = false;
	c->waiting_since = now;
	pthread_mutex_unlock(&t->lock);
}

void conn_table_close(struct conn_table *t, struct conn *c)
{
	pthread_mutex_lock(&t->lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		t->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		t->tail = c->prev;
	pthread_mutex_unlock(&t->lock);
	free(c);
}

uint64_t conn_table_sweep(struct conn_table *t, uint64_t now)
{
	uint64_t next = now + t->request_timeout_ms;

	pthread_mutex_lock(&t->lock);
	for (struct conn *c = t->head; c; c = c->next) {
		uint64_t deadline = c->waiting_since + t->request_timeout_ms;

		if (c->cut || c->answering)
			continue;
		if (deadline <= now)
			cut(t, c);
		else if (deadline < next)
			next = deadline;
	}
	pthread_mutex_unlock(&t->lock);
	return next;
}
