/*
 * serve_gate.h - the start order of 'sparkctl serve': the head's engine
 * starts only once every worker's part is up.
 *
 * launch starts every node's part at once.  So each worker's part first
 * reports to the head's part over the fabric (agent serve-gate --report-to, on the
 * worker, just before it execs its engine), and the head's part waits for
 * every worker's report (agent serve-gate --await-workers) before it execs its own.
 * They meet on the rendezvous port at the head's fabric address: the
 * engine binds it only after the gate has closed it.  The worker closes
 * each connection first, so that no TIME_WAIT on the head holds the port.
 */
#ifndef SPARKCTL_SERVE_GATE_H
#define SPARKCTL_SERVE_GATE_H

#include "sparkctl.h"
#include "lib/strbuf.h"

/* How long either side waits for the other, in seconds, by default. */
#define SERVE_GATE_TIMEOUT_S 300

/*
 * "ADDR:PORT:N" (N the workers, or a worker's rank) into its parts: 0, or
 * -EINVAL.
 */
int serve_gate_parse(const char *s, char *addr, size_t addr_size, unsigned *port, unsigned *n);

/* "ADDR:PORT" into its parts: 0, or -EINVAL. */
int serve_gate_parse_addr(const char *s, char *addr, size_t addr_size, unsigned *port);

/*
 * The head's side: listen on addr:port and wait until the workers of
 * ranks 1..workers have each reported, for at most timeout_s.  0;
 * -ETIMEDOUT with the ranks that never reported in err; -errno otherwise.
 */
int serve_gate_await(const char *addr, unsigned port, unsigned workers, unsigned timeout_s,
		     struct strbuf *err);

/*
 * A worker's side: connect to addr:port (retrying while the head's part is
 * not listening yet), say rank, wait for the head's answer, for at most
 * timeout_s.  0; -ETIMEDOUT or -errno with the reason in err.
 */
int serve_gate_report(const char *addr, unsigned port, unsigned rank, unsigned timeout_s,
		      struct strbuf *err);

/*
 * The head's side where the workers run servers that the head's engine
 * connects to once, without retrying (llama.cpp's rpc-server): wait until
 * addr:port accepts a connection, for at most timeout_s.  0; -ETIMEDOUT
 * with the reason in err; -errno.
 */
int serve_gate_listening(const char *addr, unsigned port, unsigned timeout_s, struct strbuf *err);

/*
 * In ss -Htn's output, the distinct peers other than addr itself connected
 * to addr:port: the nodes that joined a server there.
 */
unsigned serve_gate_count_peers(const char *ss_out, const char *addr, unsigned port);
/*
 * The head's side for Ray: wait until peers other nodes hold a connection
 * to addr:port (the GCS, to which each node's raylet stays connected), as
 * ss(8) lists them, for at most timeout_s.  0; -ETIMEDOUT or -ENOENT (no
 * ss) with the reason in err.
 */
int serve_gate_peers(const char *addr, unsigned port, unsigned peers, unsigned timeout_s,
		     struct strbuf *err);

#endif
