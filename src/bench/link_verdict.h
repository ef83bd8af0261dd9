/*
 * link_verdict.h - whether a measured link is healthy, and if not, why.
 *
 * Pure: the figures come from the parsers (link_parse.h), the line rate
 * and MTUs from the nodes' inventories.  The thresholds are fractions of
 * what the hardware reaches, each with the published figure behind it
 * (docs/bench.md lists them):
 *
 *   RDMA, per PCIe half (twin) of a DGX Spark port: one ib_write_bw
 *   reaches 92.57 and 97.28 Gb/s of the 100 Gb/s half (NVIDIA's
 *   performance benchmarking guide for two Sparks); healthy from 70% of
 *   the twin's share of the line rate.  A NIC whose PCIe link trained
 *   down gives about 13 Gb/s while ethtool still says 200G.
 *
 *   TCP, per fabric netdev: iperf3 -P 16 untuned reached 96.2 Gb/s on a
 *   200 Gb/s Spark link at MTU 1500; healthy from 40% of the line rate.
 *
 * Below 5% of the expected rate, or when the tool failed, a link is broken.
 */
#ifndef SPARKCTL_LINK_VERDICT_H
#define SPARKCTL_LINK_VERDICT_H

#include "sparkctl.h"
#include "lib/strbuf.h"

enum link_verdict {
	LINK_HEALTHY,
	LINK_DEGRADED,
	LINK_BROKEN,
};

const char *link_verdict_name(enum link_verdict v);

#define LINK_RDMA_HEALTHY_FRACTION 0.70
#define LINK_TCP_HEALTHY_FRACTION  0.40
#define LINK_BROKEN_FRACTION	   0.05

/* One measured path: a twin pair (RDMA) or a netdev pair (TCP). */
struct link_measure {
	const char *name;     /* "rocep1s0f1 -> rocep1s0f1", for messages */
	bool ran;	      /* the tool produced a figure */
	double gbps;	      /* measured, 10^9 bit/s */
	double line_gbps;     /* this path's line rate (its share of the port), 0 unknown */
	double expect_gbps;   /* what the caller expects instead of a fraction of the line rate; 0
				 none */
	int64_t mtu_a, mtu_b; /* the netdevs' MTUs, -1 unknown */
};

struct link_judgement {
	enum link_verdict verdict;
	double expected_gbps;	  /* the healthy threshold used, 0 when nothing to compare with */
	struct strbuf cause;	  /* why, and what to check; empty when healthy */
	const char *doctor_check; /* the 'sparkctl doctor' check that looks at the likely cause */
};

void link_judgement_init(struct link_judgement *j);
void link_judgement_release(struct link_judgement *j);

/* A TCP path. */
void link_judge_tcp(const struct link_measure *m, struct link_judgement *ret);
/*
 * The RDMA twins of one port, measured at once: each judged against its
 * share, plus the causes only the set shows (one twin only).
 */
void link_judge_rdma(const struct link_measure *twins, size_t n, struct link_judgement *ret);

#endif
