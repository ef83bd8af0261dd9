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
#include "remote/session.h"
#include "config/fabric.h"
#include "exporter/gpu_metrics.h"
#include "inventory/derive.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "view/status_view.h"

#define STATUS_TIMEOUT_MS	20000
#define STATUS_OUTPUT_MAX	((size_t)1 << 20)
#define STATUS_EXIT_UNREACHABLE SPARKCTL_EXIT_UNAVAILABLE

static const char *const status_usage[] = {
	"sparkctl status [-H HOST,... | --hostfile FILE] [--json] [options]",
	NULL,
};

static const char status_description[] =
	"One screen for the cluster: each node reachable or not, its GPUs' temperature\n"
	"and utilisation, its fabric ports up with rate and MTU, and the result of the\n"
	"last 'sparkctl doctor' run on it.  Without -H: this node.\n"
	"\n"
	"Exit status: 0 every node answered, 3 a node could not be reached, 2 usage.";

/* ---- the node's side: sparkctl agent status ---- */

/* The GPUs' figures; why there are none in why, unless NVML is simply not installed. */
static json_t *gpus_json(struct strbuf *why)
{
	struct exporter_gpu *g = NULL;
	struct metric_set set = METRIC_SET_INIT;
	struct strbuf err = STRBUF_INIT;
	json_t *arr = json_array();
	int r = exporter_gpu_open(&g, false, &err);

	if (r < 0) {
		if (r != -ENOENT)
			strbuf_addstr(why, err.buf);
		strbuf_release(&err);
		return arr;
	}
	exporter_gpu_collect(g, &set);
	for (size_t i = 0; i < exporter_gpu_count(g); i++) {
		json_t *o = json_object();
		char idx[24];
		double v;
		snprintf(idx, sizeof(idx), "%zu", i);
		jset(o, "index", jint((int64_t)i));
		jset(o, "name", jstr(exporter_gpu_name(g, i)));
		static const char *const gauges[][2] = {
			{ "sparkctl_gpu_temperature_celsius", "temperature_celsius" },
			{ "sparkctl_gpu_utilization_ratio", "utilization_ratio" },
			{ "sparkctl_gpu_power_watts", "power_watts" },
			{ "sparkctl_gpu_memory_used_bytes", "memory_used_bytes" },
			{ "sparkctl_gpu_memory_total_bytes", "memory_total_bytes" },
		};
		for (size_t k = 0; k < ARRAY_SIZE(gauges); k++) {
			json_t *value = json_null();
			/* Sizes are whole bytes (docs/json.md); the gauges carry doubles. */
			if (metric_set_value(&set, gauges[k][0], "gpu", idx, &v) == 0)
				value = strstr(gauges[k][1], "_bytes") ? jint((int64_t)v)
								       : jreal(v);
			jset(o, gauges[k][1], value);
		}
		/* No framebuffer figure: the GPU shares the host's memory (GB10). */
		jset(o, "unified_memory",
		     jbool(metric_set_value(&set, "sparkctl_gpu_memory_total_bytes", "gpu", idx,
					    &v) < 0));
		jpush(arr, o);
	}
	metric_set_release(&set);
	exporter_gpu_close(g);
	strbuf_release(&err);
	return arr;
}

/* Every RDMA port with its netdev: the fabric as the node sees it. */
static json_t *ports_json(const struct inventory *inv)
{
	json_t *arr = json_array();
	struct fabric f;

	fabric_build(inv, false, &f);
	for (size_t d = 0; d < inv->nr_rdma; d++) {
		const struct inv_rdma_dev *dev = &inv->rdma[d];
		for (size_t p = 0; p < dev->nr_ports; p++) {
			const struct inv_port *port = &dev->ports[p];
			const struct inv_netdev *nd = rdma_port_netdev(inv, dev, port);
			int64_t rate = port_rate_mbps(port);
			bool rail = false;
			json_t *o = json_object();
			for (size_t r = 0; r < f.nr_rails; r++)
				rail |= f.rails[r].port == port;
			jset(o, "rdma_device", jstr(dev->name));
			jset(o, "port", jint(port->num));
			jset(o, "netdev", jstr(nd ? nd->name : NULL));
			jset(o, "state", jstr(port->state_name));
			jset(o, "rate_gbps", rate > 0 ? jreal((double)rate / 1000.0) : json_null());
			jset(o, "mtu", jint_known(nd ? nd->mtu : INV_UNKNOWN));
			jset(o, "carrier", jtri(nd ? nd->carrier : TRI_UNKNOWN));
			jset(o, "fabric", jbool(rail));
			jpush(arr, o);
		}
	}
	fabric_release(&f);
	return arr;
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

static int run_agent_status(const struct cmd *cmd, int argc, char **argv)
{
	/* NVML is opened once, for the figures; the probe needs none of the libraries. */
	struct inventory_source src = { .no_nvidia_libraries = true };
	struct inventory inv;
	struct strbuf gpu_err = STRBUF_INIT, out = STRBUF_INIT;
	json_t *doc;
	int r;

	(void)cmd;
	(void)argv;
	if (argc > 1)
		return cmd_usage_error("agent", "status takes no arguments");
	inventory_init(&inv);
	r = inventory_source_load("agent", &src, &inv);
	if (r != SPARKCTL_EXIT_OK) {
		inventory_release(&inv);
		return r;
	}
	doc = json_object();
	jset(doc, "schema_version", jint(1));
	jset(doc, "hostname", jstr(inv.sys.hostname));
	jset(doc, "time", jint((int64_t)time(NULL)));
	jset(doc, "gpus", gpus_json(&gpu_err));
	jset(doc, "gpu_error", gpu_err.len ? jstr(gpu_err.buf) : json_null());
	jset(doc, "memory_available_bytes", jint_known(inv.sys.mem_available));
	jset(doc, "memory_total_bytes", jint_known(inv.sys.mem_total));
	jset(doc, "ports", ports_json(&inv));
	jset(doc, "doctor", doctor_json_kept());
	json_to_strbuf(doc, &out);
	strbuf_addch(&out, '\n');
	fwrite(out.buf, 1, out.len, stdout);
	r = fflush(stdout) == 0 ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_ERROR;
	json_decref(doc);
	inventory_release(&inv);
	strbuf_release(&gpu_err);
	strbuf_release(&out);
	return r;
}

static const char *const agent_status_usage[] = { "sparkctl agent status", NULL };

const struct cmd cmd_agent_status = {
	.name = "status",
	.title = "agent status",
	.fn = run_agent_status,
	.summary = "this node's answer to 'sparkctl status', as JSON",
	.usage = agent_status_usage,
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

/* ---- the command ---- */

struct status_args {
	const char *hosts, *hostfile, *remote_sparkctl;
	unsigned fanout;
	bool json;
};

static int load_hosts(const struct status_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int r = 0;

	if (a->hosts)
		r = host_list_parse(a->hosts, hosts, &err);
	else if (a->hostfile)
		r = host_list_load_file(a->hostfile, hosts, &err);
	else
		host_list_parse("localhost", hosts, &err);
	if (r < 0)
		cmd_usage_error("status", "%s", err.buf);
	else if (!hosts->nr) {
		cmd_usage_error("status", "no hosts given");
		r = -EINVAL;
	}
	strbuf_release(&err);
	return r;
}

/* Ask every node, at most fanout at once; each answer or error goes to nodes[i]. */
static void gather(struct remote_session *rm, struct status_node *nodes, size_t n, unsigned fanout)
{
	struct run_job *jobs = xcalloc(n + 1, sizeof(*jobs));
	const char *argv[] = { rm->sparkctl, "agent", "status", NULL };

	for (size_t i = 0; i < n; i++) {
		run_job_init(&jobs[i]);
		if (remote_session_argv(rm, nodes[i].host, argv, &jobs[i].argv) < 0)
			nodes[i].error = xstrdup("not a usable host name");
	}
	run_jobs(jobs, n, fanout, STATUS_TIMEOUT_MS, STATUS_OUTPUT_MAX);
	for (size_t i = 0; i < n; i++) {
		struct status_node *sn = &nodes[i];
		const struct run_job *j = &jobs[i];
		struct strbuf err = STRBUF_INIT;
		if (sn->error) {
			/* refused before running */
		} else if ((sn->error = remote_failure(j, STATUS_TIMEOUT_MS)) != NULL) {
			/* it did not run to success */
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

static bool use_color(void)
{
	const char *term = getenv("TERM");
	return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && !streq(term, "dumb");
}

static int run_status(const struct cmd *cmd, int argc, char **argv)
{
	struct status_args a = { .fanout = 16 };
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "HOST,...", "the nodes (ranges: spark[1-4])"),
		OPT_STRING(0, "hostfile", &a.hostfile, "FILE", "the nodes, one per line"),
		OPT_BOOL(0, "json", &a.json, "every node's answer as JSON"),
		OPT_UINT(0, "fanout", &a.fanout, "N", "nodes asked at once (default 16)"),
		OPT_STRING(0, "remote-sparkctl", &a.remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path)"),
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
	if (load_hosts(&a, &hosts) < 0) {
		host_list_release(&hosts);
		return SPARKCTL_EXIT_USAGE;
	}

	remote_session_init(&rm, a.remote_sparkctl, true);
	nodes = xcalloc(hosts.nr + 1, sizeof(*nodes));
	for (size_t i = 0; i < hosts.nr; i++)
		nodes[i].host = hosts.hosts[i].name;
	gather(&rm, nodes, hosts.nr, a.fanout);
	for (size_t i = 0; i < hosts.nr; i++)
		unreachable += nodes[i].error != NULL;

	{
		struct emitter e;
		emit_init(&e, a.json ? EMIT_JSON : EMIT_TEXT, &out, use_color());
		status_emit(nodes, hosts.nr, (int64_t)time(NULL), &e);
		if (a.json) {
			json_t *doc = emit_document(&e);
			json_to_strbuf(doc, &out);
			strbuf_addch(&out, '\n');
			json_decref(doc);
		}
		emit_release(&e);
	}
	fputs(out.buf, stdout);
	ret = unreachable ? STATUS_EXIT_UNREACHABLE : SPARKCTL_EXIT_OK;

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
	.max_operands = 0,
};
