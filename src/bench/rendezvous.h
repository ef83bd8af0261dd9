/*
 * rendezvous.h - the TCP star that joins the ranks of 'sparkctl bench nccl'.
 *
 * nccl-tests needs MPI to hand the NCCL unique id to other processes, to
 * agree on times and error counts and to print every rank's device line;
 * this replaces it.  Rank 0 listens; every other rank connects and says
 * hello (its rank, the world size, its host name).  Rank 0 answers each
 * with its local rank (the ranks with the same host name, in rank order)
 * once all have arrived.  After that the ranks move in lock step: every
 * call below is collective and all ranks make the same calls in the same
 * order.  Messages are framed (length + payload); a rank that closes its
 * connection or sends a malformed frame fails the call on rank 0, which
 * then closes every connection, so that the other ranks fail too instead
 * of waiting.  Every call waits at most timeout_ms (negative: forever).
 *
 * All functions return 0 or -errno (-ETIMEDOUT, -ECONNRESET for a peer
 * that went away, -EPROTO for a bad message) with a one-line reason in err
 * that names the rank concerned, e.g. "rank 2 closed its connection" or
 * "ranks 1, 3 did not connect within 30 s".  A rank whose call fails
 * closes its connections (rank 0 first tells the others why: they fail
 * with "rank 0 closed the connection: <reason>"); every later call on it
 * fails with -ENOTCONN.  No threads, no signals: sends never raise
 * SIGPIPE and every descriptor is close-on-exec.
 */
#ifndef SPARKCTL_RENDEZVOUS_H
#define SPARKCTL_RENDEZVOUS_H

#include "sparkctl.h"
#include "lib/strbuf.h"

#define RDV_HOSTNAME_MAX 64

struct rdv;

/*
 * Rank 0's listening socket, bound before the other ranks are started
 * (so a local run can pass the port to them).  host NULL or "" binds every
 * address; port 0 picks a free one.  Returns the socket in *ret_fd and the
 * port bound in *ret_port.
 */
int rdv_listen(const char *host, uint16_t port, int *ret_fd, uint16_t *ret_port,
	       struct strbuf *err);

/*
 * Join the star.  Rank 0 passes the socket of rdv_listen() and addr NULL;
 * the socket is closed when rdv_join() returns, whether or not it
 * succeeded.  Other ranks pass listen_fd -1 and addr "HOST:PORT" (a name
 * or IPv4 address; connection refused is retried until the timeout, since
 * rank 0 may start last).  Rank 0 closes a connection whose first message
 * is not a hello (a stray client) and goes on waiting; a hello of another
 * world size, a rank out of range or a rank that is there already fails
 * the rendezvous with -EPROTO on rank 0 and on the ranks concerned.
 */
int rdv_join(struct rdv **ret, int rank, int world_size, int listen_fd, const char *addr,
	     int timeout_ms, struct strbuf *err);

int rdv_rank(const struct rdv *rdv);
int rdv_world_size(const struct rdv *rdv);
/* This rank's index among the ranks on its host, and how many there are. */
int rdv_local_rank(const struct rdv *rdv);
int rdv_local_size(const struct rdv *rdv);
/* The host name rank r gave (every rank knows all of them); NULL for no such rank. */
const char *rdv_hostname(const struct rdv *rdv, int r);

/* Rank 0's len bytes of buf reach every rank's buf (len below 16 MiB). */
int rdv_broadcast(struct rdv *rdv, void *buf, size_t len, int timeout_ms, struct strbuf *err);
/*
 * Every rank's len bytes of mine, in rank order, reach all[] of rank 0
 * (world_size * len bytes; other ranks pass NULL).
 */
int rdv_gather(struct rdv *rdv, const void *mine, size_t len, void *all, int timeout_ms,
	       struct strbuf *err);
/* Returns when every rank has called it. */
int rdv_barrier(struct rdv *rdv, int timeout_ms, struct strbuf *err);

enum rdv_op {
	RDV_SUM,
	RDV_MIN,
	RDV_MAX
};
/* vals[0..n) of every rank combined element-wise; the result on every rank. */
int rdv_allreduce_double(struct rdv *rdv, double *vals, size_t n, enum rdv_op op, int timeout_ms,
			 struct strbuf *err);
int rdv_allreduce_u64(struct rdv *rdv, uint64_t *vals, size_t n, enum rdv_op op, int timeout_ms,
		      struct strbuf *err);

/* Close the connections (NULL is fine). */
void rdv_close(struct rdv *rdv);

#endif
