/*
 * link_plan.h - what 'sparkctl bench link' runs between two nodes, from
 * their inventories: the fabric paths (a rail of node a and the rail of
 * node b on its subnet), the RDMA device, port and GID index at each end,
 * the line rates to judge by, and the exact command lines of the tools.
 * Pure: reads only the inventories.
 */
#ifndef SPARKCTL_LINK_PLAN_H
#define SPARKCTL_LINK_PLAN_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/strvec.h"

/* One fabric path from node a (the clients) to node b (the servers). */
struct link_path {
	size_t group;	/* a's physical port: twins share one, numbered from 0 */
	char label[16]; /* that port's label ("p1"); "" without a twin */
	/* RDMA; on InfiniBand there is no netdev and the tools connect over b's host name */
	const char *a_dev, *b_dev; /* owned by the inventories */
	unsigned a_port, b_port;
	int a_gid, b_gid;      /* the GID index NCCL would use; -1 none (InfiniBand) */
	double rdma_line_gbps; /* this twin's share of the port rate; 0 unknown */
	/* TCP (RoCE only) */
	const char *a_if, *b_if; /* NULL on InfiniBand */
	char a_addr[16], b_addr[16];
	int64_t a_mtu, b_mtu;
	double tcp_line_gbps; /* the slower netdev's speed; 0 unknown */
};

struct link_plan {
	struct link_path *paths; /* in a's rail order (PCI order) */
	size_t nr_paths;
	size_t nr_groups;
	bool infiniband;
};

/*
 * The paths between a and b: each ACTIVE fabric rail of a (with an IPv4
 * address on RoCE) paired with the first free rail of b on the same
 * subnet; on InfiniBand, rails are paired in order.  An empty plan is no
 * error: the caller says there is no fabric link.
 */
void link_plan_build(const struct inventory *a, const struct inventory *b, struct link_plan *ret);
void link_plan_release(struct link_plan *p);

struct link_tool_options {
	unsigned duration_s; /* ib_write_bw -D, iperf3 -t */
	unsigned qps;	     /* ib_write_bw -q */
	uint64_t size;	     /* ib_write_bw -s */
	unsigned streams;    /* iperf3 -P */
	const char *b_host;  /* b as the caller reaches it (InfiniBand's connection) */
};

enum link_tool {
	LINK_TOOL_RDMA_BW,  /* ib_write_bw */
	LINK_TOOL_RDMA_LAT, /* ib_write_lat */
	LINK_TOOL_TCP,	    /* iperf3 */
};

/* The program name of a tool, and the Debian package that has it. */
const char *link_tool_program(enum link_tool t);
const char *link_tool_package(enum link_tool t);

/* The server's command on b for path p, listening on port (appended to argv). */
void link_tool_server(enum link_tool t, const struct link_path *p, unsigned port,
		      const struct link_tool_options *o, struct strvec *argv);
/* The client's command on a. */
void link_tool_client(enum link_tool t, const struct link_path *p, unsigned port,
		      const struct link_tool_options *o, struct strvec *argv);

#endif
