/*
 * rendezvous_internal.h - shared by the rendezvous' source files only:
 * rendezvous_wire.c (frames, and the one way of waiting for them to move),
 * rendezvous_join.c (forming the star) and rendezvous.c (the collectives).
 * The public contract is rendezvous.h.
 *
 * Every message is a frame: a 32-bit length in network byte order, then
 * that many bytes of payload (1 to FRAME_MAX).  The payload's first byte
 * says what it is; integers are big-endian and doubles travel as the
 * big-endian bits of their IEEE 754 value.
 *
 *   HELLO    rank -> 0  magic u32, version u32, rank u32, world size u32,
 *                       host name (u8 length, bytes)
 *   WELCOME  0 -> rank  rank u32, world size u32, local rank u32, local
 *                       size u32, every rank's host name (u8 length, bytes)
 *   ABORT    0 -> rank  errno u32, the reason (text up to the end)
 *   BCAST    0 -> rank  the bytes
 *   GATHER   rank -> 0  the bytes
 *   BARRIER  both ways  nothing
 *   REDUCE   both ways  kind u8, op u8, count u32, the values (u64 each)
 *
 * Sockets are nonblocking; a call waits only through an rdv_wait (a loop
 * of proc/loop.h bounded by the call's deadline).  Sends use MSG_NOSIGNAL
 * and every descriptor is close-on-exec.
 */
#ifndef SPARKCTL_RENDEZVOUS_INTERNAL_H
#define SPARKCTL_RENDEZVOUS_INTERNAL_H

#include "sparkctl.h"

#include "bench/rendezvous.h"
#include "lib/strbuf.h"
#include "proc/loop.h"

#define RDV_MAGIC   0x53524456u /* "SRDV" */
#define RDV_VERSION 1u
/* The largest payload of a frame: broadcast and gather take FRAME_MAX - 1 bytes. */
#define FRAME_MAX   (16u << 20)
/* The reason of an ABORT is cut at this many bytes. */
#define REASON_MAX  1024
#define ABORT_MAX   (1 + 4 + REASON_MAX)
/* A deadline that never comes. */
#define FOREVER	    UINT64_MAX

enum msg_type {
	MSG_HELLO = 1,
	MSG_WELCOME,
	MSG_ABORT,
	MSG_BCAST,
	MSG_GATHER,
	MSG_BARRIER,
	MSG_REDUCE,
};

struct rdv {
	int rank, world_size;
	int local_rank, local_size;
	/* rank 0: fd[r] is the connection of rank r; others: fd[0] the one to rank 0; -1: none */
	int *fd;
	char (*host)[RDV_HOSTNAME_MAX]; /* every rank's host name */
	struct strbuf failed;		/* why a call failed; empty while all is well */
};

/*
 * Give up after a failure r whose reason is what err holds from mark on:
 * remember it, have rank 0 tell every rank, and close every connection.
 * Returns r.
 */
int rdv_fail(struct rdv *rdv, int r, struct strbuf *err, size_t mark);

/* ---- frames (rendezvous_wire.c) ---- */

/* Start a frame of the given type in sb; frame_end() fills in its length. */
void frame_begin(struct strbuf *sb, enum msg_type type);
void frame_end(struct strbuf *sb);
void frame_put_u8(struct strbuf *sb, unsigned v);
void frame_put_u32(struct strbuf *sb, uint32_t v);
void frame_put_u64(struct strbuf *sb, uint64_t v);
/* u8 length, then the bytes (the name is shorter than RDV_HOSTNAME_MAX). */
void frame_put_host(struct strbuf *sb, const char *host);

/* Reading a payload; bad is set by a read past its end (which reads 0). */
struct cursor {
	const uint8_t *p;
	size_t left;
	bool bad;
};

uint8_t cursor_u8(struct cursor *c);
uint32_t cursor_u32(struct cursor *c);
uint64_t cursor_u64(struct cursor *c);
/* A host name: shorter than RDV_HOSTNAME_MAX, no NUL inside; else bad. */
void cursor_host(struct cursor *c, char host[RDV_HOSTNAME_MAX]);

/* A frame being received: its length, then its payload. */
struct rx {
	uint8_t hdr[4];
	size_t hdr_got;
	uint8_t *buf; /* the payload, once the length is known */
	size_t len, got;
};

void rx_release(struct rx *rx);
/*
 * Read what fd has of the frame, without blocking and without reading
 * past its end.  Returns 1 once the frame is complete, 0 when more is to
 * come, -ECONNRESET when the peer closed, -EMSGSIZE for a length of 0 or
 * over max (rx->len holds it), or another -errno.
 */
int rx_step(int fd, struct rx *rx, size_t max);

/* A frame being sent. */
struct tx {
	const char *buf;
	size_t len, off;
};

/* Send what fd takes now: 1 once all is sent, 0 when more is to go, or -errno. */
int tx_step(int fd, struct tx *tx);

/* The -errno of a failed recv() or send(); a peer that went away gives -ECONNRESET. */
int conn_error(int e);

/* "hello", "barrier"...: the name of a message type, for the reasons. */
const char *msg_name(unsigned type);

/* Tell a rank why rank 0 gives up (errno e), if its socket takes it now. */
void send_abort(int fd, int e, const char *reason);
/*
 * Close a connection after reading what is pending on it, so that the
 * peer gets an end of file after what was sent to it, rather than a reset
 * that could discard it.
 */
void close_drained(int fd);

/* ---- reasons ---- */

/* "3 s", "2.5 s" or "300 ms". */
void add_duration(struct strbuf *sb, int ms);
/* "rank 3" or "ranks 1, 3" (a few named, then "and N more"). */
void add_ranks(struct strbuf *sb, const int *ranks, size_t n);
/* Say that the connection to rank r failed with e; returns e. */
int rank_failed(int r, int e, struct strbuf *err);

/* ---- waiting ---- */

/*
 * One wait of a call, the only way the rendezvous waits: a loop of its
 * own, bounded by the call's deadline (a timer of that loop).  The caller
 * watches what it waits for on w->loop with callbacks that do the I/O and
 * report through rdv_wait_done() (one of the `left` things it waits for
 * is done) or rdv_wait_fail(); a callback does nothing once
 * rdv_wait_over().  Then rdv_wait_run() turns the loop.
 */
struct rdv_wait {
	struct loop loop;
	struct loop_timer deadline;
	uint64_t until; /* the deadline, monotonic ms; FOREVER: none */
	size_t left;	/* what is still awaited: the wait ends when it is 0 */
	int r;		/* the first failure, its reason in the call's err */
	bool timed_out; /* rdv_wait_run() ended at the deadline */
};

void rdv_wait_init(struct rdv_wait *w, uint64_t deadline);
void rdv_wait_release(struct rdv_wait *w);
void rdv_wait_done(struct rdv_wait *w);
/* Fail the wait with r (the first failure counts; the callback wrote the reason). */
void rdv_wait_fail(struct rdv_wait *w, int r);
/* Failed, or nothing left to wait for: the callbacks of the round have nothing to do. */
bool rdv_wait_over(const struct rdv_wait *w);
/*
 * Run the loop until nothing is left (0), a callback failed (its -errno),
 * or the deadline passed (-ETIMEDOUT and timed_out: the caller says who
 * is late).  A failure beats the deadline, and so does the end of the
 * wait in the same round.  -errno with "poll: ..." when poll() fails.
 */
int rdv_wait_run(struct rdv_wait *w, struct strbuf *err);

/* ---- one frame with every peer (rendezvous_wire.c) ---- */

/* A collective call: its deadline, and the words of its reasons. */
struct rdv_call {
	uint64_t deadline; /* monotonic ms; FOREVER: none */
	int timeout_ms;	   /* as given, for "within 30 s" */
	const char *what;  /* "the barrier", for "did not reach the barrier" */
	struct strbuf *err;
};

/* The deadline timeout_ms (negative: none) from now. */
uint64_t deadline_of(int timeout_ms);

/*
 * Send a frame to each peer of this rank (rank 0: every other rank; the
 * others: rank 0): frames[r] to rank r, or frames[0] to all when !each.
 * Returns 0 once every peer has taken its frame, or -errno with the
 * reason ("ranks 1, 3 did not read the welcome within 30 s").
 */
int exchange_send(struct rdv *rdv, const struct strbuf *frames, bool each,
		  const struct rdv_call *call);
/*
 * Receive a frame of the given type and at most max bytes from each peer
 * of this rank into rx[r] (rx[0] on the other ranks).  An ABORT from
 * rank 0 fails with its errno and reason; a frame of another type or
 * size fails with -EPROTO.
 */
int exchange_recv(struct rdv *rdv, struct rx *rx, enum msg_type type, size_t max,
		  const struct rdv_call *call);

#endif
