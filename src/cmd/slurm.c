/*
 * sparkctl slurm - Slurm for a cluster of Sparks:
 *
 *   sparkctl slurm conf    slurm.conf's node part, gres.conf and topology.conf from the
 *                          nodes' inventories (slurm/slurm_conf.h), printed or --write'n
 */
#include "sparkctl.h"

#include "check/check.h"
#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "lib/atomic_file.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "slurm/slurm_conf.h"
#include "view/progress.h"

/* Seconds one remote 'sparkctl topo --json' may take, connection included. */
#define REMOTE_TIMEOUT_MS 30000

struct conf_args {
	const char *hosts, *hostfile, *cluster, *remote_sparkctl, *root;
	const char *controller, *partition, *mem_reserve;
	struct strvec from;
	unsigned fanout;
	bool write, quiet;
};

static const char *const conf_usage[] = {
	"sparkctl slurm conf [-H HOST,... | --hostfile FILE | --cluster FILE] [--controller NODE]\n"
	"                       [--partition NAME] [--mem-reserve SIZE|PCT] [--write [--root DIR]]",
	"sparkctl slurm conf --from FILE... [options]",
	NULL,
};

static const char conf_description[] =
	"From each node's inventory ('sparkctl topo --json' run on it over SSH, or\n"
	"--from saved ones), the Slurm configuration of the cluster:\n"
	"  /" SLURM_CONF_DIR "/" SLURM_NODES_FILE
	"  SlurmctldHost=NAME(ADDRESS), GresTypes, TopologyPlugin,\n"
	"      one NodeName line per kind of node (CPUs, Boards, SocketsPerBoard,\n"
	"      CoresPerSocket, ThreadsPerCore as slurmd -C counts them, RealMemory, Gres,\n"
	"      Features from the fabric), one PartitionName of all nodes;\n"
	"  /" SLURM_CONF_DIR "/" SLURM_GRES_FILE "  a line per GPU;\n"
	"  /" SLURM_CONF_DIR "/" SLURM_TOPOLOGY_FILE "  one switch of all nodes.\n"
	"slurm.conf includes the first with 'Include /" SLURM_CONF_DIR "/" SLURM_NODES_FILE "'\n"
	"in place of its own lines of those keys: sparkctl never rewrites slurm.conf.\n"
	"\n"
	"The controller (--controller, else the first node) is given with the IPv4\n"
	"address of its default route's interface: DGX OS maps a node's own name to\n"
	"127.0.1.1.  RealMemory is MemTotal less a reserve: on unified memory (GB10,\n"
	"whose GPU allocates from system memory) 10%, at least 8 GiB; elsewhere 2%;\n"
	"--mem-reserve SIZE (8G, 512M; a bare number is MiB) or PCT (5%) instead.\n"
	"\n"
	"The nodes: -H, --hostfile, inside a Slurm allocation SLURM_JOB_NODELIST, the\n"
	"cluster file, else this node; --root DIR alone: the node below DIR.  Prints\n"
	"the three files, each under a heading; --write writes them below --root (else\n"
	"/) atomically, mode 0644, each file it replaces kept as FILE.bak.";

/* The nodes' inventories into c: --from files, the node below --root, or over SSH. */
static int collect(const struct conf_args *a, const struct host_list *hosts,
		   struct remote_session *rm, struct doctor_cluster *c)
{
	int ret = SPARKCTL_EXIT_OK;

	c->nodes = xcalloc(hosts->nr + a->from.nr + 2, sizeof(*c->nodes));
	if (a->from.nr) {
		for (size_t i = 0; i < a->from.nr; i++) {
			struct strbuf err = STRBUF_INIT;
			struct doctor_node *n = &c->nodes[c->nr_nodes++];
			n->host = xstrdup(a->from.v[i]);
			inventory_init(&n->inv);
			if (inventory_load(&n->inv, a->from.v[i], &err) < 0) {
				cmd_error("slurm conf", "%s", err.buf);
				ret = SPARKCTL_EXIT_ERROR;
			}
			strbuf_release(&err);
		}
		return ret;
	}
	if (!hosts->nr) {
		struct inventory_source src = { .root = a->root };
		c->nodes[0].host = xstrdup(a->root);
		inventory_init(&c->nodes[0].inv);
		c->nr_nodes = 1;
		return inventory_source_load("slurm conf", &src, &c->nodes[0].inv);
	}
	for (size_t i = 0; i < hosts->nr; i++)
		c->nodes[c->nr_nodes++].host = xstrdup(hosts->hosts[i].name);
	progress_begin(!a->quiet, "slurm conf: reading %zu node%s", c->nr_nodes,
		       c->nr_nodes == 1 ? "" : "s");
	remote_gather_inventories(rm, c, a->fanout, REMOTE_TIMEOUT_MS);
	progress_end();
	for (size_t i = 0; i < c->nr_nodes; i++) {
		if (c->nodes[i].inspected)
			continue;
		cmd_error("slurm conf", "%s: %s", c->nodes[i].host,
			  c->nodes[i].error ? c->nodes[i].error : "not read");
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
	return ret;
}

/* Write name with text into dir, keeping the file it replaces as name.bak. */
static int write_one(const struct rootfs_dir *dir, const char *where, const char *name,
		     const char *text, bool quiet)
{
	struct strbuf err = STRBUF_INIT, bak = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	strbuf_addf(&bak, "%s.bak", name);
	if (atomic_replace(dir->dirfd, name, text, strlen(text), 0644, bak.buf, &err) < 0) {
		cmd_error("slurm conf", "%s/%s: %s", where, name, err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	} else if (!quiet) {
		cmd_error("slurm conf", "wrote %s/%s", where, name);
	}
	strbuf_release(&err);
	strbuf_release(&bak);
	return ret;
}

static int write_files(const char *root_path, const char *const texts[3], bool quiet)
{
	static const char *const names[] = { SLURM_NODES_FILE, SLURM_GRES_FILE,
					     SLURM_TOPOLOGY_FILE };
	struct rootfs_dir dir = { .dirfd = -1 };
	struct strbuf where = STRBUF_INIT;
	struct rootfs root;
	int r, ret = SPARKCTL_EXIT_ERROR;

	strbuf_addf(&where, "%s/%s", streq(root_path, "/") ? "" : root_path, SLURM_CONF_DIR);
	if ((r = rootfs_open(&root, root_path)) < 0) {
		cmd_error("slurm conf", "cannot use the root %s: %s", root_path, strerror(-r));
		goto out;
	}
	if ((r = rootfs_dir_open_for_write(&root, SLURM_CONF_DIR, 0755, &dir)) < 0) {
		cmd_error("slurm conf", "cannot open %s: %s", where.buf, strerror(-r));
		goto out_root;
	}
	ret = SPARKCTL_EXIT_OK;
	for (size_t i = 0; i < ARRAY_SIZE(names) && ret == SPARKCTL_EXIT_OK; i++)
		ret = write_one(&dir, where.buf, names[i], texts[i], quiet);
	if (ret == SPARKCTL_EXIT_OK && !quiet)
		cmd_error("slurm conf", "slurm.conf takes the nodes with: Include /" SLURM_CONF_DIR
					"/" SLURM_NODES_FILE);
	rootfs_dir_close(&dir);
out_root:
	rootfs_close(&root);
out:
	strbuf_release(&where);
	return ret;
}

/* The configuration of the nodes in c: printed under headings, or written. */
static int generate(const struct conf_args *a, const struct slurm_conf_options *o,
		    const struct doctor_cluster *c)
{
	const struct inventory **invs = xcalloc(c->nr_nodes + 1, sizeof(*invs));
	struct strbuf files[3] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT }, err = STRBUF_INIT;
	struct slurm_conf conf;
	int r, ret = SPARKCTL_EXIT_OK;

	for (size_t i = 0; i < c->nr_nodes; i++)
		invs[i] = &c->nodes[i].inv;
	if ((r = slurm_conf_build(invs, c->nr_nodes, o, &conf, &err)) < 0) {
		ret = cmd_exit_of_errno(r);
		if (ret == SPARKCTL_EXIT_USAGE)
			cmd_usage_error("slurm conf", "%s", err.buf);
		else
			cmd_error("slurm conf", "%s", err.buf);
		goto out;
	}
	slurm_conf_nodes_text(&conf, &files[0]);
	slurm_conf_gres_text(&conf, &files[1]);
	slurm_conf_topology_text(&conf, &files[2]);
	if (a->write) {
		const char *texts[3] = { files[0].buf, files[1].buf, files[2].buf };
		ret = write_files(rootfs_root_path(a->root), texts, a->quiet);
	} else {
		printf("# ==== /%s/%s ====\n%s\n# ==== /%s/%s ====\n%s\n# ==== /%s/%s ====\n%s",
		       SLURM_CONF_DIR, SLURM_NODES_FILE, files[0].buf, SLURM_CONF_DIR,
		       SLURM_GRES_FILE, files[1].buf, SLURM_CONF_DIR, SLURM_TOPOLOGY_FILE,
		       files[2].buf);
	}
out:
	slurm_conf_release(&conf);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		strbuf_release(&files[i]);
	strbuf_release(&err);
	free(invs);
	return ret;
}

/* The command line into a and o; -1 when the command ends here with *ret. */
static int parse_conf(const struct cmd *cmd, struct conf_args *a, struct slurm_conf_options *o,
		      int argc, char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a->hosts, "HOST,...", "the nodes (ranges: spark[1-4])"),
		OPT_STRING(0, "hostfile", &a->hostfile, "FILE", "the nodes, from an MPI hostfile"),
		OPT_STRING(0, "cluster", &a->cluster, "FILE",
			   "the cluster file whose nodes to use without -H (env SPARKCTL_CLUSTER)"),
		OPT_LIST(0, "from", &a->from, "FILE", "saved inventories, one per node; repeat"),
		OPT_STRING(0, "root", &a->root, "DIR",
			   "--write below DIR; alone, the node below DIR (env SPARKCTL_ROOT)"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_UINT(0, "fanout", &a->fanout, "N", "nodes contacted at once (default 16)"),
		OPT_STRING(0, "controller", &a->controller, "NODE",
			   "the node that runs slurmctld (default: the first)"),
		OPT_STRING(0, "partition", &a->partition, "NAME",
			   "the partition of all nodes (default " SLURM_DEFAULT_PARTITION ")"),
		OPT_STRING(0, "mem-reserve", &a->mem_reserve, "SIZE|PCT",
			   "kept from MemTotal: 8G, 512M, 5% (default: 10%, at least 8 GiB, "
			   "on unified memory; else 2%)"),
		OPT_BOOL(0, "write", &a->write, "write the files below /etc/slurm"),
		OPT_BOOL('q', "quiet", &a->quiet, "only errors"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = SPARKCTL_EXIT_USAGE;
	if (n < 0)
		*ret = cmd_parse_exit(n);
	else if ((a->hosts || a->hostfile || a->cluster) && a->from.nr)
		cmd_usage_error("slurm conf", "-H, --hostfile or --cluster, or --from: not both");
	else if (a->fanout == 0)
		cmd_usage_error("slurm conf", "--fanout must be at least 1");
	else if (a->mem_reserve && slurm_mem_reserve_parse(a->mem_reserve, &o->reserve) < 0)
		cmd_usage_error(
			"slurm conf",
			"--mem-reserve: expected a size (8G, 512M, 1.5GiB) or a share below "
			"100%% (5%%), not '%s'",
			a->mem_reserve);
	else
		*ret = SPARKCTL_EXIT_OK;
	o->controller = a->controller;
	o->partition = a->partition;
	return n >= 0 && *ret == SPARKCTL_EXIT_OK ? n : -1;
}

/* The nodes to read over SSH; none when --from, or --root alone, names them. */
static int load_hosts(const struct conf_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int r = 0;

	if (a->from.nr || (a->root && !a->hosts && !a->hostfile && !a->cluster))
		return 0;
	if (host_list_from_options(a->hosts, a->hostfile, a->cluster, "localhost", hosts, &err) <
	    0) {
		cmd_usage_error("slurm conf", "%s", err.buf);
		r = -1;
	}
	strbuf_release(&err);
	return r;
}

static int slurm_conf(const struct cmd *cmd, int argc, char **argv)
{
	struct conf_args a = { .from = STRVEC_INIT, .fanout = 16 };
	struct slurm_conf_options o = { 0 };
	struct remote_session rm = { 0 };
	struct host_list hosts = { 0 };
	struct doctor_cluster c = { 0 };
	int ret;

	if (parse_conf(cmd, &a, &o, argc, argv, &ret) < 0)
		goto out;
	if (load_hosts(&a, &hosts) < 0) {
		ret = SPARKCTL_EXIT_USAGE;
		goto out;
	}
	remote_session_init(&rm, a.remote_sparkctl, hosts.nr > 0);
	ret = collect(&a, &hosts, &rm, &c);
	if (ret == SPARKCTL_EXIT_OK)
		ret = generate(&a, &o, &c);
out:
	remote_session_close(&rm);
	host_list_release(&hosts);
	doctor_cluster_release(&c);
	strvec_clear(&a.from);
	return ret;
}

const struct cmd cmd_slurm_conf = {
	.name = "conf",
	.title = "slurm conf",
	.fn = slurm_conf,
	.summary = "slurm.conf's nodes, gres.conf and topology.conf from the nodes' inventories",
	.usage = conf_usage,
	.description = conf_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 printed or written, 1 an inventory that cannot be read or lacks what "
		       "a NodeName line needs, a file that cannot be written, 2 usage (also: a "
		       "--controller not among the nodes, a bad --mem-reserve), 3 a node could "
		       "not be reached",
	.max_operands = 0,
};

static const char *const slurm_usage[] = {
	"sparkctl slurm conf [options]",
	NULL,
};

static const struct cmd *const slurm_verbs[] = { &cmd_slurm_conf, NULL };

const struct cmd cmd_slurm = {
	.name = "slurm",
	.summary = "Slurm for the cluster: its configuration from the nodes' inventories",
	.usage = slurm_usage,
	.verbs = slurm_verbs,
	.verb_noun = "action",
};
