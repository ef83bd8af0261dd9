/*
 * slurm_conf.h - the Slurm configuration of a cluster of nodes, from their
 * inventories (sparkctl slurm conf, docs/slurm.md).
 *
 * Three files: the node part of slurm.conf (the controller, the nodes,
 * one partition), which slurm.conf includes; gres.conf (the GPUs); and
 * topology.conf (the fabric as the topology/tree plugin sees it).  Nodes
 * that describe alike share one NodeName line, named by a Slurm hostlist.
 * Pure: reads only the inventories.
 */
#ifndef SPARKCTL_SLURM_CONF_H
#define SPARKCTL_SLURM_CONF_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"

/* Where the files go, below the root: Debian's and Slurm's configuration directory. */
#define SLURM_CONF_DIR	    "etc/slurm"
/* The node part of slurm.conf, for an Include line: sparkctl never rewrites slurm.conf. */
#define SLURM_NODES_FILE    "slurm-sparkctl.conf"
#define SLURM_GRES_FILE	    "gres.conf"
#define SLURM_TOPOLOGY_FILE "topology.conf"
/* The first line of every file sparkctl writes. */
#define SLURM_CONF_MARKER   "# Written by sparkctl slurm conf"

#define SLURM_DEFAULT_PARTITION "sparks"

/* What is kept back from MemTotal for the system: RealMemory is the rest. */
enum slurm_reserve_kind {
	SLURM_RESERVE_DEFAULT, /* unified memory: 10%, at least 8 GiB; else 2% */
	SLURM_RESERVE_MIB,     /* value MiB */
	SLURM_RESERVE_RATIO,   /* value thousandths of a percent of MemTotal */
};

struct slurm_mem_reserve {
	enum slurm_reserve_kind kind;
	uint64_t value;
};

/*
 * --mem-reserve: a size ("8G", "512M", "1.5GiB"; K, M, G, T are powers of
 * 1024; a bare number is MiB, Slurm's unit) or a share of MemTotal ("10%",
 * below 100%).  0, or -EINVAL.
 */
int slurm_mem_reserve_parse(const char *s, struct slurm_mem_reserve *out);

/*
 * The RealMemory 'sparkctl slurm conf' gives the node of inv with reserve r:
 * MemTotal in MiB less the reserve.  0, or -EINVAL (no MemTotal, a reserve
 * that leaves nothing).
 */
int slurm_real_memory(const struct inventory *inv, const struct slurm_mem_reserve *r,
		      uint64_t *ret_mib);

struct slurm_conf_options {
	const char *controller; /* the node that runs slurmctld: a node's name; NULL: the first */
	const char *partition;	/* NULL: SLURM_DEFAULT_PARTITION */
	struct slurm_mem_reserve reserve;
};

struct slurm_node {
	char *name;	   /* the short host name: Slurm's NodeName */
	char *desc;	   /* the NodeName line after the name: equal for nodes alike */
	char *memory_note; /* how RealMemory was reached, for a comment */
	char *gres;	   /* gres.conf's lines after "NodeName=N ", one per GPU; "" without */
	char *plan;	   /* the fabric plan of this node: "pair", "switch", "ring"; NULL */
};

struct slurm_conf {
	struct slurm_node *nodes; /* in the order given */
	size_t nr_nodes;
	size_t controller;     /* index into nodes */
	char *controller_addr; /* its management IPv4 address; NULL when it has none */
	char *partition;
	char *plan; /* the plan every node has, NULL when they differ or none has one */
	bool gpus;  /* some node has a GPU */
};

/*
 * The configuration of the nodes invs[0..n).  0, or a negative errno with
 * a one-line message in err: -EDOM for a --controller that is not among
 * the nodes or a partition name Slurm cannot take (a usage error),
 * -EINVAL for an inventory that lacks what a NodeName line needs (host
 * name, CPUs, MemTotal), two nodes of one name, or a reserve that leaves
 * nothing.  out is released with slurm_conf_release() in any case.
 */
int slurm_conf_build(const struct inventory *const *invs, size_t n,
		     const struct slurm_conf_options *o, struct slurm_conf *out,
		     struct strbuf *err);
void slurm_conf_release(struct slurm_conf *c);

/* The files' text (each starts with SLURM_CONF_MARKER). */
void slurm_conf_nodes_text(const struct slurm_conf *c, struct strbuf *out);
void slurm_conf_gres_text(const struct slurm_conf *c, struct strbuf *out);
void slurm_conf_topology_text(const struct slurm_conf *c, struct strbuf *out);

#endif
