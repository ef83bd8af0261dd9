/*
 * netplan_gen.h - fabric addressing plans and the netplan YAML for one node.
 *
 * Pure functions of the node's inventory and the plan: which netdevs get
 * which static address, under a pair, switch or 3-node ring plan.  Every
 * fabric netdev gets its own /24 (twins never share a subnet), MTU 9000,
 * no DHCP, no link-local addresses, no default route.
 */
#ifndef SPARKCTL_NETPLAN_GEN_H
#define SPARKCTL_NETPLAN_GEN_H

#include "sparkctl.h"
#include "config/fabric.h"
#include "inventory/inventory.h"
#include "lib/ipv4.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* The first line of every file sparkctl writes: how --write recognises its own file. */
#define NETPLAN_MARKER	     "# Written by sparkctl netplan"
#define NETPLAN_DEFAULT_BASE "192.168.176.0/20"
#define NETPLAN_FABRIC_MTU   9000
/* Host part of node i's addresses: .11, .12, ... */
#define NETPLAN_HOST_OFFSET  11

enum netplan_plan {
	PLAN_PAIR,   /* two nodes, one or two cables: one /24 per twin */
	PLAN_SWITCH, /* N nodes on a switch: one /24 per twin rail, shared by all nodes */
	PLAN_RING,   /* three nodes, port 0 cabled to the next node's port 1: one /24 per link per
			twin */
};

struct netplan_options {
	enum netplan_plan plan;
	unsigned node;	/* this node's index, 0-based */
	unsigned nodes; /* cluster size */
	struct cidr base;
};

struct netplan_iface {
	const struct inv_netdev *netdev;
	const struct inv_rdma_dev *rdma;
	struct cidr addr; /* address and /24 */
	unsigned subnet;  /* index of its /24 inside the base */
};

struct netplan {
	char *node_name;
	struct netplan_options opts;
	struct netplan_iface *ifaces; /* in PCI order */
	size_t nr_ifaces;
	size_t nr_subnets; /* /24s the plan uses */
};

int netplan_parse_plan(const char *s, enum netplan_plan *ret);
const char *netplan_plan_name(enum netplan_plan p);

/*
 * Plan this node's fabric addresses.  Returns 0, or a negative errno with
 * one line in err: -EDOM for options that contradict each other (node
 * index out of range, a plan for another number of nodes), -ENODEV when
 * the node has no ACTIVE RoCE fabric port, -EINVAL otherwise (a base too
 * small or overlapping an address of a non-fabric interface, a ring
 * without both ports cabled, an interface name netplan cannot take).
 */
int netplan_build(const struct inventory *inv, const struct netplan_options *o, struct netplan *out,
		  struct strbuf *err);
void netplan_release(struct netplan *p);

/* The YAML of the plan (starting with NETPLAN_MARKER). */
void netplan_yaml(const struct netplan *p, struct strbuf *out);

/*
 * /etc/hosts lines for every node of the plan: "ADDR  NAME-fabric NAME-r0"
 * for each node's first rail, "ADDR  NAME-rK" for the others.  names holds
 * one name per node, or is empty for node0, node1, ...
 */
int netplan_hosts(const struct netplan *p, const struct strvec *names, struct strbuf *out,
		  struct strbuf *err);

/* True when netdev name is one of the plan's interfaces. */
bool netplan_changes(const struct netplan *p, const char *netdev);

/*
 * Another netplan file that configures one of the plan's interfaces.
 * netplan reads the .yaml files of /lib/netplan, /etc/netplan and
 * /run/netplan in the lexical order of their names (a name in /run hides
 * the same name in /etc, which hides /lib) and merges them: for the same
 * interface a later file's values win, and its lists (addresses, routes,
 * routing-policy, nameservers) are added to the earlier ones.
 */
struct netplan_overlap {
	char *file;	    /* as given to netplan_find_overlaps() */
	const char *iface;  /* the plan's netdev it configures */
	bool later;	    /* after ours: its values override the plan's */
	bool by_match;	    /* through a "match: name:" pattern, not the interface's own key */
	struct strbuf adds; /* the lists it adds to the interface ("addresses, routes") */
};

/*
 * Append to *out every interface of the plan that the netplan file text
 * (named file) configures: a key that is the interface's name, or a
 * "name:" glob that matches it.  A line-level reading of YAML in
 * netplan's block style, enough to find the interfaces and the lists
 * under each.
 */
void netplan_find_overlaps(const struct netplan *p, const char *file, bool later, const char *text,
			   struct netplan_overlap **out, size_t *nr);
void netplan_overlaps_release(struct netplan_overlap *o, size_t nr);

#endif
