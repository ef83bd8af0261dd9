/*
 * sparkctl bench link - RDMA and TCP between two nodes, every fabric path
 * at once, with a verdict per link.  The run is bench/link_run.h, the
 * report view/link_view.h.
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/link_run.h"
#include "bench/nccl_perf.h"
#include "cmd/cmd.h"
#include "remote/hosts.h"
#include "view/link_view.h"
#include "view/progress.h"

enum link_exit {
	LINK_EXIT_OK = SPARKCTL_EXIT_OK,		   /* every link healthy */
	LINK_EXIT_UNAVAILABLE = SPARKCTL_EXIT_UNAVAILABLE, /* a node, tool, port or path missing */
	LINK_EXIT_PROBLEMS = SPARKCTL_EXIT_PROBLEMS,	   /* a link degraded or broken */
};

static const char *const link_usage[] = {
	"sparkctl bench link -H A,B [--rdma | --tcp | --all] [options]",
	NULL,
};

static const char link_description[] =
	"Measure the fabric between two nodes with the field's own tools, every path\n"
	"at once, and say whether each link is healthy: RDMA with perftest's\n"
	"ib_write_bw and ib_write_lat over each twin pair of each cabled port, TCP with\n"
	"iperf3 over each fabric netdev.  The servers run on B, the clients on A; the\n"
	"devices, GID indexes and addresses come from both nodes' inventories.\n"
	"Servers are started under 'sparkctl agent hold', so they end with this\n"
	"command whatever happens.  Default: --all.";

struct link_args {
	const char *hosts, *cluster, *remote_sparkctl, *output, *size, *expect;
	unsigned duration, qps, streams, rdma_port, tcp_port;
	bool rdma, tcp, all, json;
};

/*
 * Without -H: the nodes of the Slurm allocation or of the cluster file in
 * effect (host_list_default()), as -H would name
 * them (kept in spec), when it holds any; check_args() wants two.
 */
static int hosts_of_cluster(struct link_args *a, struct strbuf *spec)
{
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (host_list_default(a->cluster, &hosts, &err) < 0) {
		ret = cmd_usage_error("bench link", "%s", err.buf);
		goto out;
	}
	for (size_t i = 0; i < hosts.nr; i++)
		strbuf_addf(spec, "%s%s", i ? "," : "", hosts.hosts[i].name);
	if (hosts.nr)
		a->hosts = spec->buf;
out:
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

/* The options into what the run needs; a usage error's exit status, or OK. */
static int check_args(const struct link_args *a, struct link_run_options *o)
{
	uint64_t size;

	if (!a->hosts)
		return cmd_usage_error("bench link", "-H A,B is required: the two nodes (or a "
						     "cluster file of two)");
	if (a->json && a->output)
		return cmd_usage_error("bench link", "--json prints the JSON, -o writes it to a "
						     "file: choose one");
	if (a->rdma + a->tcp + a->all > 1)
		return cmd_usage_error("bench link", "--rdma, --tcp and --all cannot be combined");
	if (a->duration < 1 || a->duration > 3600)
		return cmd_usage_error("bench link", "--duration is 1 to 3600 seconds");
	if (a->qps < 1 || a->qps > 256)
		return cmd_usage_error("bench link", "--qps is 1 to 256");
	if (a->streams < 1 || a->streams > 128)
		return cmd_usage_error("bench link", "--streams is 1 to 128 (iperf3's limit)");
	if (a->size) {
		if (perf_parse_size(a->size, &size) < 0 || size < 1 || size > ((uint64_t)1 << 30))
			return cmd_usage_error("bench link",
					       "bad --size '%s': 1 byte to 1G (K, M, G suffixes)",
					       a->size);
		o->tool.size = size;
	}
	if (a->expect) {
		char *end;
		errno = 0;
		o->expect_gbps = strtod(a->expect, &end);
		if (errno || end == a->expect || *end || !(o->expect_gbps > 0) ||
		    !isfinite(o->expect_gbps))
			return cmd_usage_error("bench link",
					       "bad --expect-gbps '%s': a rate in Gb/s above 0",
					       a->expect);
	}
	if (a->rdma_port < 1 || a->rdma_port > 65000 || a->tcp_port < 1 || a->tcp_port > 65000)
		return cmd_usage_error("bench link", "ports are 1 to 65000");
	o->hosts = a->hosts;
	o->remote_sparkctl = a->remote_sparkctl;
	o->rdma_port = a->rdma_port;
	o->tcp_port = a->tcp_port;
	o->rdma = !a->tcp;
	o->tcp = !a->rdma;
	o->tool.duration_s = a->duration;
	o->tool.qps = a->qps;
	o->tool.streams = a->streams;
	return SPARKCTL_EXIT_OK;
}

/* Each line of text as its own message. */
static void report_lines(const char *text)
{
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		cmd_error("bench link", "%.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* The report: JSON to a file or stdout ('-': only JSON), and the text unless '-'. */
static int print_report(const struct link_run *b, const char *json_path)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct emitter e;
	int r = 0;

	if (json_path) {
		json_t *doc;
		emit_init(&e, EMIT_JSON, NULL, false);
		link_report_emit(b, &e);
		doc = emit_document(&e);
		emit_release(&e);
		r = json_save(doc, json_path, &err);
		json_decref(doc);
		if (r < 0)
			cmd_error("bench link", "%s", err.buf);
	}
	if (r == 0 && (!json_path || !streq(json_path, "-"))) {
		emit_init(&e, EMIT_TEXT, &out, cmd_use_color());
		link_report_emit(b, &e);
		emit_release(&e);
		fputs(out.buf, stdout);
	}
	strbuf_release(&out);
	strbuf_release(&err);
	return r;
}

/* Inspect, measure, report: the exit status. */
static int run(const struct link_args *a, struct link_run_options *o)
{
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	struct link_run b;
	int ret;

	if (host_list_parse(a->hosts, &hosts, &err) < 0 || hosts.nr != 2) {
		if (!err.len)
			strbuf_addf(&err, "-H takes exactly two nodes, not %zu", hosts.nr);
		ret = cmd_usage_error("bench link", "%s", err.buf);
		host_list_release(&hosts);
		strbuf_release(&err);
		return ret;
	}
	o->tool.b_host = hosts.hosts[1].name;
	link_run_init(&b, o);
	/* Seconds of silence otherwise: a line on the terminal says what runs (not for JSON). */
	progress_begin(!a->json, "bench link: inspecting %s and %s", hosts.hosts[0].name,
		       hosts.hosts[1].name);
	if (link_run_prepare(&b, hosts.hosts[0].name, hosts.hosts[1].name, &err) < 0) {
		progress_end();
		report_lines(err.buf);
		ret = LINK_EXIT_UNAVAILABLE;
	} else if (link_run_measure(&b) < 0) {
		progress_end();
		cmd_error("bench link", "%s", b.unavailable.buf);
		ret = LINK_EXIT_UNAVAILABLE;
	} else if (progress_end(), print_report(&b, a->json ? "-" : a->output) < 0) {
		ret = SPARKCTL_EXIT_ERROR;
	} else {
		ret = b.worst == LINK_HEALTHY ? LINK_EXIT_OK : LINK_EXIT_PROBLEMS;
	}
	link_run_release(&b);
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

static int run_bench_link(const struct cmd *cmd, int argc, char **argv)
{
	struct link_args a = { .duration = 5,
			       .qps = 4,
			       .streams = 8,
			       .rdma_port = LINK_DEFAULT_RDMA_PORT,
			       .tcp_port = LINK_DEFAULT_TCP_PORT };
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "A,B", "the client node and the server node"),
		OPT_STRING(0, "cluster", &a.cluster, "FILE",
			   "without -H, the two nodes of this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "rdma", &a.rdma, "only RDMA (ib_write_bw, ib_write_lat)"),
		OPT_BOOL(0, "tcp", &a.tcp, "only TCP (iperf3)"),
		OPT_BOOL(0, "all", &a.all, "both (the default)"),
		OPT_UINT('t', "duration", &a.duration, "S",
			 "seconds per bandwidth run (default 5)"),
		OPT_STRING('s', "size", &a.size, "BYTES", "RDMA message size (default 64K)"),
		OPT_UINT(0, "qps", &a.qps, "N", "RDMA queue pairs per twin (default 4)"),
		OPT_RENAMED('q', NULL, "--qps"),
		OPT_UINT('P', "streams", &a.streams, "N", "TCP streams per netdev (default 8)"),
		OPT_UINT(0, "rdma-port", &a.rdma_port, "PORT",
			 "first TCP port of perftest's servers (default 18515)"),
		OPT_UINT(0, "tcp-port", &a.tcp_port, "PORT",
			 "first port of iperf3's servers (default 5201)"),
		OPT_STRING(0, "expect-gbps", &a.expect, "G",
			   "healthy from G Gb/s per path, instead of a fraction of the line rate"),
		OPT_BOOL(0, "json", &a.json, "print the report as JSON, not as text"),
		OPT_STRING('o', "output", &a.output, "FILE",
			   "also write the report as JSON to FILE"),
		OPT_STRING(0, "remote-sparkctl", &a.remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct link_run_options o = { .tool = { .size = 65536 } };
	struct strbuf cluster_hosts = STRBUF_INIT;
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	if (!a.hosts && (n = hosts_of_cluster(&a, &cluster_hosts)) != SPARKCTL_EXIT_OK)
		goto out;
	n = check_args(&a, &o);
	if (n == SPARKCTL_EXIT_OK)
		n = run(&a, &o);
out:
	strbuf_release(&cluster_hosts);
	return n;
}

const struct cmd cmd_bench_link = {
	.name = "link",
	.title = "bench link",
	.fn = run_bench_link,
	.summary = "measure RDMA and TCP between two nodes, with a verdict",
	.usage = link_usage,
	.description = link_description,
	.exit_status = "0 every link healthy, 1 other errors, 2 usage, 3 a node could not be "
		       "inspected, a tool is missing, a port is taken, or there is no fabric path, "
		       "4 a link degraded or broken",
	.max_operands = 0,
};
