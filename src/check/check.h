/*
 * check.h - the checks of 'sparkctl doctor'.
 *
 * Every check is one function in one table (checks[] in check.c): an id,
 * a title, whether it looks at one node or the cluster, and why it
 * matters.  Checks are pure: they read inventories (and, for the cluster,
 * the results of the active probes the doctor command ran) and report
 * findings.  A finding states the evidence and, when something is wrong,
 * a fix a user can paste.  docs/checks.md is generated from the table.
 */
#ifndef SPARKCTL_CHECK_H
#define SPARKCTL_CHECK_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

enum check_status {
	CHECK_PASS,
	CHECK_WARN,
	CHECK_FAIL,
	CHECK_SKIP, /* could not run here: the reason is the message */
};

enum check_scope {
	CHECK_LOCAL,   /* one node's inventory */
	CHECK_CLUSTER, /* all nodes, with the active probes */
	CHECK_ENGINE,  /* 'doctor --engine': serve's preflight (serve/serve_plan.h), run there */
};

struct finding {
	const char *check_id; /* static: the id of the check */
	char *node;	      /* the node it is about ("cluster" for cluster-wide ones) */
	enum check_status status;
	char *message;		/* what was found: the evidence */
	char *fix;		/* what to do, NULL when nothing is wrong */
	struct strvec evidence; /* "key=value" facts behind the finding */
};

struct findings {
	struct finding *items;
	size_t nr;
};

/* One node as the doctor sees it. */
struct doctor_node {
	char *host;	/* as given (-H, --from file name, "localhost") */
	bool inspected; /* its inventory was obtained */
	char *error;	/* why not */
	struct inventory inv;
	bool has_clock;
	double clock_offset; /* seconds, remote minus local, corrected for the round trip */
	/* slurm.munge: 1 this node decoded the credential, -1 it did not (munge_detail), 0 not
	 * tried */
	int munge;
	char *munge_detail; /* why not: unmunge's STATUS line, or its error */
};

/* One active don't-fragment ping over a fabric link. */
struct link_probe {
	size_t from, to; /* node indexes */
	char *from_if;	 /* the netdev it left by */
	char *to_addr;	 /* the peer's address */
	int64_t mtu;	 /* the size tested: the interface MTU */
	bool ok;
	char *detail; /* what ping said when it failed */
};

struct cluster_file;

struct doctor_cluster {
	struct doctor_node *nodes;
	size_t nr_nodes;
	/*
	 * Key logins between the nodes (cluster.ssh_mesh): mesh[i * nr_nodes + k]
	 * is 1 when node i reached node k by ssh in batch mode, 0 when not, -1
	 * when not tried; NULL when the mesh was not probed.
	 */
	int *mesh;
	/* The cluster file in effect (cluster/cluster_file.h), or NULL; not owned. */
	const struct cluster_file *cluster_file;
	struct link_probe *links;
	size_t nr_links;
	bool probed; /* the active probes ran (not with --from) */
	/*
	 * slurm.munge: a credential encoded on node munge_encoder ('munge -n'
	 * with its Slurm's socket) was given to 'unmunge' on every Slurm node;
	 * munge_encode_error says why none was encoded.
	 */
	bool munge_probed;
	size_t munge_encoder;
	char *munge_encode_error;
};

/* What a check function gets: where to report, and what to look at. */
struct check_ctx {
	const struct check *check;
	const struct inventory *inv;	      /* local checks: the node */
	const char *node;		      /* its name */
	unsigned nodes;			      /* cluster size when known, else 0 */
	const struct doctor_cluster *cluster; /* cluster checks */
	struct findings *out;
};

struct check {
	const char *id;	   /* "fabric.twins" */
	const char *title; /* one line */
	enum check_scope scope;
	enum check_status severity; /* the worst it reports: CHECK_FAIL or CHECK_WARN */
	void (*run)(struct check_ctx *ctx);
	const char *why; /* what goes wrong without it, for docs/checks.md */
};

extern const struct check checks[];
extern const size_t nr_checks;

/*
 * Report a finding of the running check; fix may be NULL.  Returns the
 * finding so evidence can be added with finding_evidence().
 */
struct finding *report(struct check_ctx *ctx, enum check_status status, const char *fix,
		       const char *fmt, ...) ATTR_PRINTF(4, 5);
void finding_evidence(struct finding *f, const char *fmt, ...) ATTR_PRINTF(2, 3);

const char *check_status_name(enum check_status s);
/* "node", "cluster", "engine": as --list shows it. */
const char *check_scope_name(enum check_scope s);
const struct check *check_lookup(const char *id);

/*
 * Which checks run: --only and --skip lists of ids or groups ("fabric"
 * means every "fabric.*" check).  Returns -EINVAL naming an unknown id.
 */
struct check_selection {
	bool *enabled; /* one per checks[] entry */
};
int check_select(struct check_selection *sel, const struct strvec *only, const struct strvec *skip,
		 struct strbuf *err);
void check_selection_release(struct check_selection *sel);

/* Run the selected local checks on one node's inventory. */
void run_local_checks(const struct check_selection *sel, const struct inventory *inv,
		      const char *node, unsigned nodes, struct findings *out);
/* Run the selected cluster checks. */
void run_cluster_checks(const struct check_selection *sel, const struct doctor_cluster *c,
			struct findings *out);

void findings_release(struct findings *f);
void doctor_cluster_release(struct doctor_cluster *c);

/* Two nodes' rails on one subnet: a fabric link between them. */
struct fabric_link {
	size_t a, b;		 /* node indexes, a < b */
	const char *a_if, *b_if; /* netdev names (owned by the inventories) */
	char a_addr[16], b_addr[16];
	int64_t a_mtu, b_mtu;
};

/* Every fabric link between the inspected nodes of c; *ret is freed by the caller. */
void cluster_fabric_links(const struct doctor_cluster *c, struct fabric_link **ret, size_t *nr);

/* docs/checks.md, from the table. */
void checks_markdown(struct strbuf *out);

/* The check functions, by group (check_*.c). */
void check_rdma_devices(struct check_ctx *ctx);
void check_rdma_modules(struct check_ctx *ctx);
void check_fabric_active(struct check_ctx *ctx);
void check_fabric_twins(struct check_ctx *ctx);
void check_fabric_subnets(struct check_ctx *ctx);
void check_fabric_ipv4(struct check_ctx *ctx);
void check_fabric_gid(struct check_ctx *ctx);
void check_fabric_link_layer(struct check_ctx *ctx);
void check_net_mtu(struct check_ctx *ctx);
void check_link_speed(struct check_ctx *ctx);
void check_link_errors(struct check_ctx *ctx);
void check_pci_link(struct check_ctx *ctx);
void check_pci_aer(struct check_ctx *ctx);
void check_nccl_gid_index(struct check_ctx *ctx);
void check_nccl_ib_hca(struct check_ctx *ctx);
void check_nccl_socket_ifname(struct check_ctx *ctx);
void check_nccl_gpudirect(struct check_ctx *ctx);
void check_nccl_transport(struct check_ctx *ctx);
void check_nccl_conf(struct check_ctx *ctx);
void check_gpudirect_support(struct check_ctx *ctx);
void check_gpudirect_peermem(struct check_ctx *ctx);
void check_limits_memlock(struct check_ctx *ctx);
void check_memory_cma(struct check_ctx *ctx);
void check_net_buffers(struct check_ctx *ctx);
void check_net_nm_autoconnect(struct check_ctx *ctx);
void check_net_avahi_name(struct check_ctx *ctx);
void check_sw_driver(struct check_ctx *ctx);
void check_sw_gpu(struct check_ctx *ctx);
void check_sw_nccl(struct check_ctx *ctx);
void check_storage_conf(struct check_ctx *ctx);
void check_storage_module(struct check_ctx *ctx);
void check_storage_hostnqn(struct check_ctx *ctx);
void check_storage_path_live(struct check_ctx *ctx);
void check_storage_path_iface(struct check_ctx *ctx);
void check_storage_iface_mtu(struct check_ctx *ctx);
void check_storage_target_reachable(struct check_ctx *ctx);
void check_storage_mounted(struct check_ctx *ctx);
void check_storage_nofail(struct check_ctx *ctx);
void check_storage_hostnqn_unique(struct check_ctx *ctx);
void check_storage_single_writer(struct check_ctx *ctx);
void check_cluster_ssh(struct check_ctx *ctx);
void check_cluster_hostnames(struct check_ctx *ctx);
void check_cluster_machine_id(struct check_ctx *ctx);
void check_cluster_file(struct check_ctx *ctx);
void check_cluster_ssh_mesh(struct check_ctx *ctx);
void check_cluster_plan(struct check_ctx *ctx);
void check_cluster_hca_pairing(struct check_ctx *ctx);
void check_cluster_ping(struct check_ctx *ctx);
void check_cluster_mtu(struct check_ctx *ctx);
void check_cluster_versions(struct check_ctx *ctx);
void check_cluster_sparkctl(struct check_ctx *ctx);
void check_cluster_clock(struct check_ctx *ctx);
void check_slurm_munge(struct check_ctx *ctx);
void check_slurm_uid(struct check_ctx *ctx);
void check_slurm_conf_same(struct check_ctx *ctx);
void check_slurm_real_memory(struct check_ctx *ctx);

#endif
