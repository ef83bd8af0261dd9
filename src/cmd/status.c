/*
 * sparkctl status - one screen for the cluster: each node reachable or
 * not, its GPUs' temperature and utilisation, its fabric ports up with
 * rate and MTU, and the result of the last 'sparkctl doctor' run there.
 *
 * Each node answers 'sparkctl agent status' over SSH (in parallel): one
 * JSON document from its probe, NVML and the doctor report it kept
 * (docs/status.md has the schema).  The table is drawn from those
 * documents alone (view/status_view.c).
 */
#include "sparkctl.h"

#include <time.h>

#include "cmd/cmd.h"
#include "remote/lookup.h"
#include "remote/session.h"
#include "config/fabric.h"
#include "exporter/gpu_metrics.h"
#include "inventory/derive.h"
#include "lib/json.h"
#include "lib/rootfs.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "top/sample.h"
#include "view/progress.h"
#include "view/status_view.h"

#define STATUS_TIMEOUT_MS	20000
#define STATUS_OUTPUT_MAX	((size_t)1 << 20)
#define STATUS_EXIT_UNREACHABLE SPARKCTL_EXIT_UNAVAILABLE

static const char *const status_usage[] = {
	"sparkctl status [-H HOST,... | --hostfile FILE] [--json] [options]",
	"sparkctl status [--root DIR | --from FILE] [--json]",
	NULL,
};

static const char status_description[] =
	"One screen for the cluster: each node reachable or not, its GPUs' temperature\n"
	"and utilisation, its fabric ports up with rate and MTU, and the result of the\n"
	"last 'sparkctl doctor' run on it.  Without -H: this node.  --root DIR (a\n"
	"capture) or --from FILE (a saved inventory) show that node instead, from\n"
	"what it holds: its ports and GPUs, without the live GPU figures or a doctor\n"
	"result.";

/* ---- the node's side: sparkctl agent status ---- */

/* NVML for the figures, or NULL; why there is none in why, unless NVML is simply not installed. */
static struct exporter_gpu *gpu_open(struct strbuf *why)
{
	struct exporter_gpu *g = NULL;
	struct strbuf err = STRBUF_INIT;
	int r = exporter_gpu_open(&g, false, &err);

	if (r < 0 && r != -ENOENT)
		strbuf_addstr(why, err.buf);
	strbuf_release(&err);
	return r < 0 ? NULL : g;
}

/* Each sampled RDMA port's "fabric": whether it is a rail of the fabric the inventory gives. */
static void ports_add_fabric(json_t *ports, const struct inventory *inv)
{
	struct fabric f;
	size_t i;
	json_t *o;

	fabric_build(inv, false, &f);
	json_array_foreach(ports, i, o)
	{
		const char *dev = json_string_value(json_object_get(o, "rdma_device"));
		json_int_t num = json_integer_value(json_object_get(o, "port"));
		bool rail = false;

		for (size_t r = 0; dev && r < f.nr_rails; r++)
			rail |= streq(f.rails[r].dev->name, dev) && f.rails[r].port->num == num;
		jset(o, "fabric", jbool(rail));
	}
	fabric_release(&f);
}

/* The report doctor kept (cmd_state_path), or null. */
static json_t *doctor_json_kept(void)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	json_t *doc = NULL;

	if (cmd_state_path("doctor-last.json", false, &path) == 0 &&
	    json_load_path(path.buf, &doc, &err) < 0)
		doc = NULL;
	strbuf_release(&path);
	strbuf_release(&err);
	return doc ? doc : json_null();
}

/*
 * The GPUs a saved inventory or captured tree lists: names and memory only,
 * the live figures (temperature, utilisation, power) are null.
 */
static json_t *gpus_json_saved(const struct inventory *inv)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < inv->gpu.nr_gpus; i++) {
		const struct inv_gpu *g = &inv->gpu.gpus[i];
		json_t *o = json_object();
		jset(o, "index", jint(g->index));
		jset(o, "name", jstr(g->name));
		jset(o, "temperature_celsius", json_null());
		jset(o, "utilization_ratio", json_null());
		jset(o, "power_watts", json_null());
		jset(o, "memory_used_bytes", json_null());
		jset(o, "memory_total_bytes", jint_known(g->memory_total_bytes));
		jset(o, "unified_memory", jbool(g->unified_memory == TRI_YES));
		jpush(arr, o);
	}
	return arr;
}

/* Every RDMA port of a saved inventory with its netdev, as the node saw it then. */
static json_t *ports_json_saved(const struct inventory *inv)
{
	json_t *arr = json_array();

	for (size_t d = 0; d < inv->nr_rdma; d++) {
		const struct inv_rdma_dev *dev = &inv->rdma[d];
		for (size_t p = 0; p < dev->nr_ports; p++) {
			const struct inv_port *port = &dev->ports[p];
			const struct inv_netdev *nd = rdma_port_netdev(inv, dev, port);
			int64_t rate = port_rate_mbps(port);
			json_t *o = json_object();
			jset(o, "rdma_device", jstr(dev->name));
			jset(o, "port", jint(port->num));
			jset(o, "netdev", jstr(nd ? nd->name : NULL));
			jset(o, "state", jstr(port->state_name));
			jset(o, "rate_gbps", rate > 0 ? jreal((double)rate / 1000.0) : json_null());
			jset(o, "mtu", jint_known(nd ? nd->mtu : INV_UNKNOWN));
			jset(o, "carrier", jtri(nd ? nd->carrier : TRI_UNKNOWN));
			jpush(arr, o);
		}
	}
	ports_add_fabric(arr, inv);
	return arr;
}

/*
 * The status document (docs/status.md) of the node of --root or --from: its
 * GPU figures are null and it has no doctor report.
 */
static json_t *saved_status_json(const struct inventory *inv)
{
	json_t *doc = json_object();

	jset(doc, "schema_version", jint(1));
	jset(doc, "hostname", jstr(inv->sys.hostname));
	jset(doc, "time", jint((int64_t)time(NULL)));
	jset(doc, "gpus", gpus_json_saved(inv));
	jset(doc, "gpu_error", json_null());
	jset(doc, "memory_available_bytes", jint_known(inv->sys.mem_available));
	jset(doc, "memory_total_bytes", jint_known(inv->sys.mem_total));
	jset(doc, "ports", ports_json_saved(inv));
	jset(doc, "doctor", json_null());
	return doc;
}

/*
 * The node's live figures (top/sample.h: GPUs, memory, every RDMA port and
 * netdev with its counters, the sample 'sparkctl top' reads), and what the
 * inventory adds: host name, each port's place in the fabric, the doctor's
 * last report.
 */
static int run_agent_status(const struct cmd *cmd, int argc, char **argv)
{
	/* NVML is opened once, for the figures; the probe needs none of the libraries. */
	struct inventory_source src = { .no_nvidia_libraries = true };
	struct top_sample_source sample = { 0 };
	struct rootfs root = { .dirfd = -1 };
	struct inventory inv;
	struct strbuf gpu_err = STRBUF_INIT, out = STRBUF_INIT;
	json_t *doc = NULL, *figures;
	const char *key;
	json_t *value;
	int r;

	(void)cmd;
	sample.gpu_disabled = argc == 2 && streq(argv[1], "--no-gpu");
	if (argc > 2 || (argc == 2 && !sample.gpu_disabled))
		return cmd_usage_error("agent", "status takes no arguments but --no-gpu");
	inventory_init(&inv);
	r = inventory_source_load("agent", &src, &inv);
	if (r != SPARKCTL_EXIT_OK)
		goto out;
	r = rootfs_open(&root, rootfs_root_path(NULL));
	if (r < 0) {
		cmd_error("agent", "cannot use '%s' as the root: %s", rootfs_root_path(NULL),
			  strerror(-r));
		r = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	sample.root = &root;
	if (!sample.gpu_disabled)
		sample.gpu = gpu_open(&gpu_err);
	figures = top_sample_collect(&sample);
	ports_add_fabric(json_object_get(figures, "ports"), &inv);
	doc = json_object();
	jset(doc, "schema_version", jint(1));
	jset(doc, "hostname", jstr(inv.sys.hostname));
	jset(doc, "time", jint((int64_t)time(NULL)));
	jset(doc, "gpu_error", gpu_err.len ? jstr(gpu_err.buf) : json_null());
	json_object_foreach(figures, key, value)
	{
		jset(doc, key, json_incref(value));
	}
	json_decref(figures);
	jset(doc, "doctor", doctor_json_kept());
	json_to_strbuf(doc, &out);
	fwrite(out.buf, 1, out.len, stdout);
	r = fflush(stdout) == 0 ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_ERROR;
out:
	json_decref(doc);
	exporter_gpu_close(sample.gpu);
	rootfs_close(&root);
	inventory_release(&inv);
	strbuf_release(&out);
	return r;
}

static const char *const agent_status_usage[] = { "sparkctl agent status [--no-gpu]", NULL };

const struct cmd cmd_agent_status = {
	.name = "status",
	.title = "agent status",
	.fn = run_agent_status,
	.summary = "this node's answer to 'sparkctl status', as JSON",
	.usage = agent_status_usage,
	.description = "This node's GPUs, fabric ports and last doctor report as one JSON\n"
		       "object: what 'sparkctl status -H' asks every node for.",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

/* ---- the command ---- */

struct status_args {
	const char *hosts, *hostfile, *cluster, *remote_sparkctl;
	struct inventory_source src;
	unsigned fanout;
	bool json;
};

static int load_hosts(const struct status_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int r = host_list_from_options(a->hosts, a->hostfile, a->cluster, "localhost", hosts, &err);

	if (r < 0)
		cmd_usage_error("status", "%s", err.buf);
	strbuf_release(&err);
	return r;
}

/* Ask every node, at most fanout at once; each answer or error goes to nodes[i]. */
static void gather(struct remote_session *rm, struct status_node *nodes, size_t n, unsigned fanout)
{
	struct run_job *jobs = xcalloc(n + 1, sizeof(*jobs));
	const char *argv[] = { "agent", "status", NULL };
	const char **hosts = xcalloc(n + 1, sizeof(*hosts));

	for (size_t i = 0; i < n; i++)
		hosts[i] = nodes[i].host;
	remote_session_fast_kex(rm, hosts, n);
	free(hosts);
	for (size_t i = 0; i < n; i++) {
		run_job_init(&jobs[i]);
		if (remote_session_sparkctl_argv(rm, nodes[i].host, argv, &jobs[i].argv) < 0)
			nodes[i].error = xstrdup("not a usable host name");
	}
	run_jobs(jobs, n, fanout, STATUS_TIMEOUT_MS, STATUS_OUTPUT_MAX);
	for (size_t i = 0; i < n; i++) {
		struct status_node *sn = &nodes[i];
		const struct run_job *j = &jobs[i];
		struct strbuf err = STRBUF_INIT;
		if (sn->error) {
			/* refused before running */
		} else if ((sn->error = remote_failure(j, sn->host, STATUS_TIMEOUT_MS)) != NULL) {
			/* it did not run to success */
			sn->sparkctl_missing = remote_sparkctl_missing(j->status, j->err.buf);
		} else if (json_load_buffer(j->out.buf, j->out.len, "the node's status", &sn->doc,
					    &err) < 0 ||
			   !json_is_object(sn->doc)) {
			sn->error = xasprintf("the remote sparkctl did not print a status (%s)",
					      err.len ? err.buf : "not an object");
		}
		strbuf_release(&err);
		run_job_release(&jobs[i]);
	}
	free(jobs);
}

/* The node of --root or --from, read here: its document in node->doc. */
static int status_saved(const struct inventory_source *src, struct status_node *node)
{
	struct inventory inv;
	int r;

	inventory_init(&inv);
	r = inventory_source_load("status", src, &inv);
	if (r == SPARKCTL_EXIT_OK) {
		node->doc = saved_status_json(&inv);
		/* Named as it names itself: "localhost" would be this host. */
		if (json_is_string(json_object_get(node->doc, "hostname")))
			node->host = json_string_value(json_object_get(node->doc, "hostname"));
	}
	inventory_release(&inv);
	return r;
}

static int run_status(const struct cmd *cmd, int argc, char **argv)
{
	struct status_args a = { .fanout = 16 };
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...", "the nodes (ranges: spark[1-4])"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, one per line"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE",
			   "the cluster file whose nodes to use without -H (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "json", &a.json, "every node's answer as JSON"),
		OPT_UINT(0, "fanout", &a.fanout, "N", "nodes asked at once (default 16)"),
		OPT_STRING(0, "remote-sparkctl", &a.remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_INVENTORY_SOURCE(&a.src),
		OPT_HELP(),
		OPT_END(),
	};
	struct host_list hosts = { 0 };
	struct remote_session rm;
	struct status_node *nodes = NULL;
	struct strbuf out = STRBUF_INIT;
	size_t unreachable = 0;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if (a.hosts && a.hostfile)
		return cmd_usage_error("status", "-H and --hostfile cannot be combined");
	if (a.fanout == 0)
		return cmd_usage_error("status", "--fanout must be at least 1");
	if ((a.src.root || a.src.from) && (a.hosts || a.hostfile))
		return cmd_usage_error("status", "--root and --from show this node; -H and "
						 "--hostfile ask the nodes");
	if (load_hosts(&a, &hosts) < 0) {
		host_list_release(&hosts);
		return SPARKCTL_EXIT_USAGE;
	}

	remote_session_init(&rm, a.remote_sparkctl, true);
	nodes = xcalloc(hosts.nr + 1, sizeof(*nodes));
	for (size_t i = 0; i < hosts.nr; i++)
		nodes[i].host = hosts.hosts[i].name;
	if (a.src.root || a.src.from) {
		ret = status_saved(&a.src, &nodes[0]);
		if (ret != SPARKCTL_EXIT_OK)
			goto out;
	} else {
		progress_begin(!a.json, "status: asking %zu node%s", hosts.nr,
			       hosts.nr == 1 ? "" : "s");
		gather(&rm, nodes, hosts.nr, a.fanout);
		progress_end();
	}
	for (size_t i = 0; i < hosts.nr; i++)
		unreachable += nodes[i].error != NULL;

	{
		struct emitter e;
		emit_init(&e, a.json ? EMIT_JSON : EMIT_TEXT, &out, cmd_use_color());
		status_emit(nodes, hosts.nr, (int64_t)time(NULL), &e);
		emit_finish(&e, &out);
	}
	fputs(out.buf, stdout);
	ret = unreachable ? STATUS_EXIT_UNREACHABLE : SPARKCTL_EXIT_OK;
out:
	remote_session_close(&rm);
	for (size_t i = 0; i < hosts.nr; i++) {
		free(nodes[i].error);
		json_decref(nodes[i].doc);
	}
	free(nodes);
	host_list_release(&hosts);
	strbuf_release(&out);
	return ret;
}

const struct cmd cmd_status = {
	.name = "status",
	.fn = run_status,
	.summary = "one screen for the cluster: nodes, GPUs, links, last doctor",
	.usage = status_usage,
	.description = status_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 every node answered, 1 error, 2 usage, 3 a node could not be reached",
	.max_operands = 0,
};
