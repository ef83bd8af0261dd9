/*
 * nccl_env.h - the environment a distributed job needs on a node.
 *
 * A pure function of the node's inventory and the options: which RDMA
 * devices NCCL uses, which interface bootstraps, how the GID is chosen,
 * whether GPUDirect may be used, what a 3-node ring adds.  A variable is
 * emitted only with a reason sparkctl can state (--explain prints it).
 */
#ifndef SPARKCTL_NCCL_ENV_H
#define SPARKCTL_NCCL_ENV_H

#include "sparkctl.h"
#include "config/fabric.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

enum env_topology {
	TOPOLOGY_AUTO,
	TOPOLOGY_PAIR,	 /* two nodes, cabled directly (one or two cables) */
	TOPOLOGY_SWITCH, /* N nodes through a switch */
	TOPOLOGY_RING,	 /* three Sparks daisy-chained, port 0 to the next node's port 1 */
};

enum env_gdr_mode {
	GDR_MODE_AUTO,	 /* from the GPUs' CUDA attributes */
	GDR_MODE_SAFE,	 /* no GPUDirect: stage through host memory */
	GDR_MODE_DMABUF, /* GPUDirect through DMA-BUF */
};

enum env_format {
	ENV_FORMAT_SH,	   /* export K='v' */
	ENV_FORMAT_ENV,	   /* K=v, for docker --env-file and systemd EnvironmentFile */
	ENV_FORMAT_DOCKER, /* -e K=v arguments */
	ENV_FORMAT_JSON,
};

struct env_options {
	enum env_topology topology;
	unsigned nodes;	       /* cluster size, 0 when not known */
	const char *socket_if; /* bootstrap interface chosen by the user */
	bool pin_gid;	       /* emit NCCL_IB_GID_INDEX */
	enum env_gdr_mode mode;
	bool force;		   /* allow --mode dmabuf on hardware without DMA-BUF */
	const struct strvec *sets; /* KEY=VALUE entries added last, overriding */
};

struct env_var {
	char *key;
	char *value;
	char *reason; /* the fact it came from */
};

struct node_env {
	char *node;			    /* the node's hostname */
	enum env_topology topology;	    /* as resolved */
	struct fabric fabric;		    /* the rails, in NCCL_IB_HCA order */
	const struct inv_netdev *bootstrap; /* the bootstrap interface */
	struct cidr bootstrap_addr;	    /* its IPv4 address */
	struct env_var *vars;
	size_t nr_vars;
	struct strvec notes; /* for stderr: ports left out, assumptions */
};

int env_parse_topology(const char *s, enum env_topology *ret);
const char *env_topology_name(enum env_topology t);
int env_parse_mode(const char *s, enum env_gdr_mode *ret);
int env_parse_format(const char *s, enum env_format *ret);

/*
 * Build the environment of the node described by inv.  Returns 0, or a
 * negative errno with a one-line reason in err: -ENODEV when the node has
 * no ACTIVE fabric port, -EINVAL otherwise (an ambiguous topology, a
 * refused GPUDirect mode, ...).  out is always released with
 * node_env_release().
 */
int env_generate(const struct inventory *inv, const struct env_options *opts, struct node_env *out,
		 struct strbuf *err);
void node_env_release(struct node_env *e);

/*
 * Check that the environments of several nodes work together: HCA lists
 * that pair position by position, rails on shared subnets, bootstrap
 * interfaces that reach each other.  Returns 0, or -EINVAL with one line
 * per problem in err.
 */
int env_check_cluster(const struct node_env *nodes, size_t n, struct strbuf *err);

/*
 * Append e in the given format.  with_reasons adds each variable's reason
 * (as comments, or a "reasons" object in JSON).  Returns -EINVAL with a
 * message when a value cannot be written in that format.
 */
int env_format(const struct node_env *e, enum env_format fmt, bool with_reasons, struct strbuf *out,
	       struct strbuf *err);

/* The version of env's JSON (docs/schemas/env.schema.json). */
#define ENV_SCHEMA_VERSION 1

/* The JSON of several nodes' environments, for --json across nodes:
 * {"schema_version", "nodes": [one node's object each]}. */
int env_format_json_nodes(const struct node_env *nodes, size_t n, bool with_reasons,
			  struct strbuf *out);

#endif
