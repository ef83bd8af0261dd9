/*
 * link_run.h - 'sparkctl bench link' between two nodes: inspect both,
 * plan the paths, run each benchmark over every path at once, judge.
 *
 * Both nodes' inventories are gathered first ('sparkctl topo --json' over
 * SSH); they give the paths, RDMA devices, GID indexes, MTUs and line
 * rates (link_plan.h).  Then, per benchmark, the one-shot servers start
 * on the second node, each under 'sparkctl agent hold', which refuses a
 * port already taken, says "ready" once the server listens, and ends the
 * server when our SSH session ends; then the clients run on the first
 * node, all paths at once; then the servers are ended, whatever happened.
 * The figures are parsed (link_parse.h) and judged (link_verdict.h).
 * Nothing here prints: view/link_view.h renders the result.
 */
#ifndef SPARKCTL_LINK_RUN_H
#define SPARKCTL_LINK_RUN_H

#include "sparkctl.h"
#include "bench/link_plan.h"
#include "bench/link_verdict.h"
#include "check/check.h"
#include "lib/strbuf.h"
#include "remote/session.h"

#define LINK_DEFAULT_RDMA_PORT 18515
#define LINK_DEFAULT_TCP_PORT  5201

struct link_run_options {
	const char *hosts;	      /* "A,B" as given, for the doctor hint */
	const char *remote_sparkctl;  /* NULL: this program's path */
	unsigned rdma_port, tcp_port; /* the first port of each tool's servers */
	double expect_gbps;	      /* healthy from this rate instead of the line rate's share */
	bool rdma, tcp;		      /* which benchmarks */
	struct link_tool_options tool;
};

/* What one path gave in each benchmark. */
struct link_path_result {
	bool bw_ran, lat_ran, tcp_ran;
	double bw_gbps, lat_us, tcp_gbps;
	int64_t retransmits; /* -1 unknown */
	char *bw_error, *lat_error, *tcp_error;
};

struct link_run {
	const struct link_run_options *o;
	struct remote_session rs;
	struct doctor_cluster c; /* node 0 is A (clients), node 1 is B (servers) */
	struct link_plan plan;
	struct link_path_result *res;	      /* per path */
	struct link_judgement *port_verdicts; /* per port group (RDMA) */
	struct link_judgement *tcp_verdicts;  /* per path (TCP) */
	enum link_verdict worst;
	bool do_rdma, do_tcp;
	/* a benchmark could not run at all: why */
	struct strbuf unavailable;
};

void link_run_init(struct link_run *b, const struct link_run_options *o);
void link_run_release(struct link_run *b);

/*
 * Inspect hosts a and b over SSH and plan the paths between them.
 * Returns 0, or -EHOSTUNREACH (a node not inspected), -ENETUNREACH (no
 * fabric path), -EOPNOTSUPP (--tcp on InfiniBand), with the reason in err.
 */
int link_run_prepare(struct link_run *b, const char *a, const char *bhost, struct strbuf *err);

/*
 * Run the benchmarks and judge every link.  -EAGAIN when a benchmark
 * could not run at all (a tool missing, a port taken), with the reasons in
 * b->unavailable; 0 otherwise, whatever the verdicts.
 */
int link_run_measure(struct link_run *b);

static inline const char *link_run_client(const struct link_run *b)
{
	return b->c.nodes[0].host;
}

static inline const char *link_run_server(const struct link_run *b)
{
	return b->c.nodes[1].host;
}

/* The paths a benchmark runs on: TCP needs a netdev (RoCE). */
static inline bool link_path_has_tcp(const struct link_path *p)
{
	return p->a_if != NULL;
}

/* Port group g's label ("p1"), or "#N" without a twin. */
const char *link_group_label(const struct link_run *b, size_t g, char buf[24]);

#endif
