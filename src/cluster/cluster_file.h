/*
 * cluster_file.h - the cluster file: the nodes that make up this cluster,
 * which 'sparkctl join' writes and 'sparkctl cluster' shows and edits, and
 * which doctor, status, launch and deploy take as their nodes when neither
 * -H nor --hostfile is given.
 *
 * Which file is in effect, first match wins:
 *   1. --cluster FILE;
 *   2. $SPARKCTL_CLUSTER (the value "none": no cluster file at all);
 *   3. $XDG_CONFIG_HOME/sparkctl/cluster.json (~/.config/... when unset),
 *      when it exists;
 *   4. /etc/sparkctl/cluster.json, when it exists.
 * With none of them, a file is written to (3).  The format is
 * docs/schemas/cluster.schema.json:
 *   {"schema_version":1,"plan":"pair|switch|ring"|null,
 *    "nodes":[{"name":"spark1","id":"<node-id>"|null,"mgmt_addresses":[...],
 *              "fabric_addresses":[...],"user":"<ssh user>"|null}]}
 */
#ifndef SPARKCTL_CLUSTER_FILE_H
#define SPARKCTL_CLUSTER_FILE_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

#define CLUSTER_FILE_SCHEMA_VERSION 1
/* The value of $SPARKCTL_CLUSTER (or --cluster) that means: no cluster file. */
#define CLUSTER_FILE_NONE	    "none"
/* The most nodes a cluster file may hold (as a host list). */
#define CLUSTER_FILE_NODES_MAX	    4096

struct cluster_node {
	char *name;		      /* how ssh and the reports name the node */
	char *id;		      /* /etc/sparkctl/node-id (32 lowercase hex), or NULL */
	struct strvec mgmt_addresses; /* where ssh reaches it */
	struct strvec fabric_addresses;
	char *user; /* the ssh user, or NULL: ssh's own choice */
};

struct cluster_file {
	char *plan; /* "pair", "switch", "ring", or NULL */
	struct cluster_node *nodes;
	size_t nr;
};

/* Why a cluster file is the one in effect. */
enum cluster_file_origin {
	CLUSTER_FILE_FROM_OPTION, /* --cluster FILE */
	CLUSTER_FILE_FROM_ENV,	  /* $SPARKCTL_CLUSTER */
	CLUSTER_FILE_FROM_USER,	  /* ~/.config/sparkctl/cluster.json exists */
	CLUSTER_FILE_FROM_SYSTEM, /* /etc/sparkctl/cluster.json exists */
	CLUSTER_FILE_FROM_NOWHERE /* none exists: path is where one would be written */
};

struct cluster_file_location {
	enum cluster_file_origin origin;
	/* The file; empty when --cluster or $SPARKCTL_CLUSTER says "none". */
	struct strbuf path;
	bool exists;
};

/*
 * Where the cluster file is, by the precedence above; option is --cluster
 * (NULL when not given).  Returns 0, or -ENOENT when no home directory
 * tells where the user's file would be (and neither an option nor the
 * environment names one).
 */
int cluster_file_locate(const char *option, struct cluster_file_location *loc);
void cluster_file_location_release(struct cluster_file_location *loc);
/* "--cluster", "$SPARKCTL_CLUSTER", ... : why the location is the one in effect. */
const char *cluster_file_origin_text(enum cluster_file_origin origin);

void cluster_file_init(struct cluster_file *cf);
void cluster_file_release(struct cluster_file *cf);

/*
 * Parse the text of a cluster file; name prefixes every message:
 * "NAME: nodes[2].name: ...".  -EINVAL on a bad field (cf is then empty).
 */
int cluster_file_parse(struct cluster_file *cf, const char *text, size_t len, const char *name,
		       struct strbuf *err);
/* Read and parse path: -ENOENT etc. with "cannot read 'PATH': ..." in err. */
int cluster_file_load(struct cluster_file *cf, const char *path, struct strbuf *err);
/* The file's text: JSON, indented, with a final newline. */
void cluster_file_format(const struct cluster_file *cf, struct strbuf *out);
/*
 * Write cf to path atomically (mode 0644), creating missing parent
 * directories (0755).  -errno with a message in err.
 */
int cluster_file_save(const struct cluster_file *cf, const char *path, struct strbuf *err);

/* The node called name (case-insensitive, as host names), or NULL. */
struct cluster_node *cluster_file_find(const struct cluster_file *cf, const char *name);
/*
 * Add a node, or replace the one of the same name; the strings are copied.
 * -EINVAL with a message when a value is not valid (as the parser checks).
 */
int cluster_file_put(struct cluster_file *cf, const char *name, const char *id,
		     const struct strvec *mgmt, const struct strvec *fabric, const char *user,
		     struct strbuf *err);
/* Remove the node called name: 0, or -ENOENT when there is none. */
int cluster_file_remove(struct cluster_file *cf, const char *name);

struct inventory;
/*
 * The IPv4 addresses of a node's fabric ports' netdevs (ACTIVE ports with
 * carrier, inventory/derive.h), appended to out without duplicates: what
 * join records as its fabric addresses and doctor compares.
 */
void inventory_fabric_ipv4(const struct inventory *inv, struct strvec *out);

/* The host a command reaches the node as: "user@name", or the name. */
char *cluster_node_host(const struct cluster_node *node);

/* Validators (the parser's, for the command line too). */
bool cluster_node_name_valid(const char *name);
bool cluster_user_valid(const char *user);
bool cluster_address_valid(const char *address);
bool cluster_node_id_valid(const char *id);
bool cluster_plan_valid(const char *plan);

#endif
