/*
 * sparkctl bench link - RDMA and TCP between two nodes, every fabric path
 * at once, with a verdict per link.
 *
 * Both nodes' inventories are gathered first ('sparkctl topo --json' over
 * SSH); they give the paths, RDMA devices, GID indexes, MTUs and line
 * rates (bench/link_plan.h).  Then, per benchmark, the one-shot servers
 * start on the second node, each under 'sparkctl agent hold', which
 * refuses a port already taken, says "ready" once the server listens, and
 * ends the server when our SSH session ends; then the clients run on the
 * first node, all paths at once; then the servers are ended, whatever
 * happened.  The figures are parsed (bench/link_parse.h) and judged
 * (bench/link_verdict.h).
 */
#include "sparkctl.h"

#include <math.h>

#include "bench/link_parse.h"
#include "bench/link_plan.h"
#include "bench/link_verdict.h"
#include "bench/nccl_perf.h"
#include "check/check.h"
#include "cmd/cmd.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "view/table.h"

#define INVENTORY_TIMEOUT_MS 30000
/* From the start of the servers until each one listens: SSH, then the hold's own wait. */
#define READY_TIMEOUT_MS     20000
/* A client's time beyond --duration: connection, setup, and perftest's 2 s margins. */
#define CLIENT_SLACK_MS	     30000
/* After the clients: for the servers to finish by themselves, then to end once told. */
#define SERVER_GRACE_MS	     10000
#define SERVER_STOP_MS	     8000
#define TOOL_OUTPUT_MAX	     ((size_t)1 << 20)

#define DEFAULT_RDMA_PORT 18515
#define DEFAULT_TCP_PORT  5201

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
	"command whatever happens.  Default: --all.\n"
	"\n"
	"Exit status: 0 every link healthy, 4 a link degraded or broken, 3 a node\n"
	"could not be inspected, a tool is missing, a port is taken, or there is no\n"
	"fabric path; 2 usage, 1 other errors.";

struct link_args {
	const char *hosts, *remote_sparkctl, *json;
	unsigned duration, qps, streams, rdma_port, tcp_port;
	const char *size;
	double expect_gbps;
	const char *expect;
	bool rdma, tcp, all, help;
};

/* What one path gave in each benchmark. */
struct path_result {
	bool bw_ran, lat_ran, tcp_ran;
	double bw_gbps, lat_us, tcp_gbps;
	int64_t retransmits;
	char *bw_error, *lat_error, *tcp_error;
};

struct link_bench {
	const struct link_args *a;
	struct cmd_remote rm;
	struct doctor_cluster c; /* node 0 is A (clients), node 1 is B (servers) */
	struct link_plan plan;
	struct link_tool_options tool;
	struct path_result *res;
	struct link_judgement *port_verdicts; /* per port group (RDMA) */
	struct link_judgement *tcp_verdicts;  /* per path (TCP) */
	enum link_verdict worst;
	bool do_rdma, do_tcp;
	/* a benchmark could not run at all: why (the exit is LINK_EXIT_UNAVAILABLE) */
	struct strbuf unavailable;
};

static const char *host_a(const struct link_bench *b)
{
	return b->c.nodes[0].host;
}

static const char *host_b(const struct link_bench *b)
{
	return b->c.nodes[1].host;
}

static bool path_has_tcp(const struct link_path *p)
{
	return p->a_if != NULL;
}

/* The paths a benchmark runs on. */
static bool path_runs(enum link_tool t, const struct link_path *p)
{
	return t != LINK_TOOL_TCP || path_has_tcp(p);
}

static unsigned tool_port(const struct link_bench *b, enum link_tool t, size_t i)
{
	return (unsigned)i + (t == LINK_TOOL_TCP ? b->a->tcp_port : b->a->rdma_port);
}

static char **error_slot(struct path_result *r, enum link_tool t)
{
	return t == LINK_TOOL_RDMA_BW	 ? &r->bw_error
	       : t == LINK_TOOL_RDMA_LAT ? &r->lat_error
					 : &r->tcp_error;
}

/*
 * Why a command on host did not run: the tool missing (127: the hold,
 * which runs every tool, did not find it), else its own words.  NULL when
 * it ran.
 */
static char *run_failure(const struct run_job *j, enum link_tool t, const char *host, bool *missing)
{
	const char *prog = link_tool_program(t);
	if (j->status == 127) {
		*missing = true;
		return xasprintf("%s is not installed on %s: apt-get install %s", prog, host,
				 link_tool_package(t));
	}
	if (j->spawn_error)
		return xasprintf("cannot run %s: %s", j->argv.v[0], strerror(-j->spawn_error));
	if (j->timed_out)
		return xasprintf("%s on %s did not finish in time and was stopped", prog, host);
	return NULL;
}

/* The most telling line of a failed command's output. */
static char *failure_line(const struct run_job *j)
{
	const char *text = j->err.len ? j->err.buf : j->out.buf;
	const char *last = NULL;

	/* The last non-empty line: ssh, the hold and the tools end with the reason. */
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		if (n)
			last = p;
		p += n + (p[n] == '\n');
	}
	return last ? cmd_first_line(last) : xstrdup("no output");
}

/* Start the servers of tool t on B; false when one did not come up (each says why). */
static bool start_servers(struct link_bench *b, enum link_tool t, struct run_job *servers,
			  struct run_servers *rs)
{
	size_t n = 0, ready;
	bool ok = true, missing = false;

	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		struct run_job *j = &servers[i];
		struct strvec words = STRVEC_INIT;
		run_job_init(j);
		if (!path_runs(t, &b->plan.paths[i]))
			continue;
		strvec_pushl(&words, b->rm.sparkctl, "agent", "hold", "--ready-port", NULL);
		strvec_pushf(&words, "%u", tool_port(b, t, i));
		strvec_push(&words, "--");
		link_tool_server(t, &b->plan.paths[i], tool_port(b, t, i), &b->tool, &words);
		if (cmd_remote_argv(&b->rm, host_b(b), (const char *const *)words.v, &j->argv) < 0)
			strvec_push(&j->argv, "false");
		strvec_clear(&words);
		n++;
	}
	run_servers_start(rs, servers, b->plan.nr_paths);
	ready = run_servers_wait_line(rs, "ready", READY_TIMEOUT_MS);
	if (ready == n)
		return true;
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct run_job *j = &servers[i];
		char *why;
		if (!path_runs(t, &b->plan.paths[i]) || run_job_printed_line(j, "ready"))
			continue;
		why = run_failure(j, t, host_b(b), &missing);
		if (!why && j->status < 0)
			why = xasprintf(
				"the %s server on %s was not listening on port %u after %d s",
				link_tool_program(t), host_b(b), tool_port(b, t, i),
				READY_TIMEOUT_MS / 1000);
		if (!why) {
			char *line = failure_line(j);
			why = xasprintf("the %s server on %s: %s", link_tool_program(t), host_b(b),
					line);
			free(line);
		}
		if (ok)
			strbuf_addf(&b->unavailable, "%s%s", b->unavailable.len ? "\n" : "", why);
		ok = false;
		*error_slot(&b->res[i], t) = why;
	}
	return false;
}

/* Parse what client i printed into its result. */
static void take_client(struct link_bench *b, enum link_tool t, size_t i, const struct run_job *j)
{
	struct path_result *r = &b->res[i];
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	bool missing = false;
	char *why = run_failure(j, t, host_a(b), &missing);

	if (why) {
		*error_slot(r, t) = why;
		if (missing)
			strbuf_addf(&b->unavailable, "%s%s", b->unavailable.len ? "\n" : "", why);
		return;
	}
	strbuf_add(&text, j->out.buf, j->out.len);
	strbuf_add(&text, j->err.buf, j->err.len);
	if (t == LINK_TOOL_RDMA_BW) {
		struct perftest_bw bw;
		if (perftest_parse_bw(text.buf, &bw, &err) == 0) {
			r->bw_ran = true;
			r->bw_gbps = bw.headline.avg_gbps;
			perftest_bw_release(&bw);
		}
	} else if (t == LINK_TOOL_RDMA_LAT) {
		struct perftest_lat lat;
		if (perftest_parse_lat(text.buf, &lat, &err) == 0) {
			r->lat_ran = true;
			r->lat_us = lat.headline.t_typical_us;
			perftest_lat_release(&lat);
		}
	} else {
		struct iperf3_result ip;
		if (iperf3_parse_json(j->out.buf, &ip, &err) == 0) {
			r->tcp_ran = true;
			r->tcp_gbps = ip.received_gbps;
			r->retransmits = ip.retransmits;
		}
	}
	if (err.len)
		*error_slot(r, t) = xasprintf("%s: %s", link_tool_program(t), err.buf);
	else if (j->status != 0)
		*error_slot(r, t) =
			xasprintf("%s exited with status %d", link_tool_program(t), j->status);
	strbuf_release(&text);
	strbuf_release(&err);
}

/*
 * One benchmark over every path at once: servers on B, then clients on A,
 * then the servers ended.  False when it could not run (b->unavailable).
 */
static bool run_tool(struct link_bench *b, enum link_tool t)
{
	size_t n = b->plan.nr_paths;
	struct run_job *servers = xcalloc(n + 1, sizeof(*servers));
	struct run_job *clients = xcalloc(n + 1, sizeof(*clients));
	struct run_servers rs = { 0 };
	size_t *index = xcalloc(n + 1, sizeof(*index));
	size_t nr_clients = 0;
	bool ok = start_servers(b, t, servers, &rs), clean = true;

	if (ok) {
		for (size_t i = 0; i < n; i++) {
			struct strvec words = STRVEC_INIT;
			if (!path_runs(t, &b->plan.paths[i]))
				continue;
			struct run_job *j = &clients[nr_clients];
			run_job_init(j);
			index[nr_clients++] = i;
			/* Under a hold too: if this command dies, the client ends with it. */
			j->hold_stdin = true;
			strvec_pushl(&words, b->rm.sparkctl, "agent", "hold", "--", NULL);
			link_tool_client(t, &b->plan.paths[i], tool_port(b, t, i), &b->tool,
					 &words);
			if (cmd_remote_argv(&b->rm, host_a(b), (const char *const *)words.v,
					    &j->argv) < 0)
				strvec_push(&j->argv, "false");
			strvec_clear(&words);
		}
		run_jobs(clients, nr_clients, 0, b->tool.duration_s * 1000 + CLIENT_SLACK_MS,
			 TOOL_OUTPUT_MAX);
		for (size_t k = 0; k < nr_clients; k++) {
			clean &= clients[k].status == 0;
			take_client(b, t, index[k], &clients[k]);
			run_job_release(&clients[k]);
		}
	}
	/* A server whose client failed would wait for ever: end it at once. */
	run_servers_end(&rs, ok && clean ? SERVER_GRACE_MS : 0, SERVER_STOP_MS);
	for (size_t i = 0; i < n; i++)
		run_job_release(&servers[i]);
	free(servers);
	free(clients);
	free(index);
	return ok && !b->unavailable.len;
}

static void measure(struct link_bench *b)
{
	b->res = xcalloc(b->plan.nr_paths + 1, sizeof(*b->res));
	for (size_t i = 0; i < b->plan.nr_paths; i++)
		b->res[i].retransmits = -1;
	if (b->do_rdma && (!run_tool(b, LINK_TOOL_RDMA_BW) || !run_tool(b, LINK_TOOL_RDMA_LAT)))
		return;
	if (b->do_tcp)
		run_tool(b, LINK_TOOL_TCP);
}

/* ---- verdicts ---- */

/* Path i as the verdict sees it: its RDMA twin pair, or its netdevs for TCP. */
static void path_measure(const struct link_bench *b, size_t i, bool rdma, struct link_measure *m,
			 struct strbuf *name)
{
	const struct link_path *p = &b->plan.paths[i];
	const struct path_result *r = &b->res[i];

	strbuf_addf(name, "%s -> %s", rdma ? p->a_dev : p->a_if, rdma ? p->b_dev : p->b_if);
	*m = (struct link_measure){ .name = name->buf,
				    .ran = rdma ? r->bw_ran : r->tcp_ran,
				    .gbps = rdma ? r->bw_gbps : r->tcp_gbps,
				    .line_gbps = rdma ? p->rdma_line_gbps : p->tcp_line_gbps,
				    .expect_gbps = b->a->expect_gbps,
				    .mtu_a = p->a_mtu,
				    .mtu_b = p->b_mtu };
}

/* The RDMA verdict of port group g. */
static void judge_group(const struct link_bench *b, size_t g, struct link_judgement *j)
{
	struct link_measure *m = xcalloc(b->plan.nr_paths + 1, sizeof(*m));
	struct strbuf *names = xcalloc(b->plan.nr_paths + 1, sizeof(*names));
	size_t n = 0;

	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		if (b->plan.paths[i].group != g)
			continue;
		strbuf_init(&names[n], 0);
		path_measure(b, i, true, &m[n], &names[n]);
		n++;
	}
	link_judgement_init(j);
	link_judge_rdma(m, n, j);
	for (size_t i = 0; i < n; i++)
		strbuf_release(&names[i]);
	free(names);
	free(m);
}

static void judge_tcp(const struct link_bench *b, size_t i, struct link_judgement *j)
{
	struct strbuf name = STRBUF_INIT;
	struct link_measure m;

	path_measure(b, i, false, &m, &name);
	link_judgement_init(j);
	link_judge_tcp(&m, j);
	strbuf_release(&name);
}

/* Every verdict, once, for the table and the JSON alike. */
static void judge_all(struct link_bench *b)
{
	b->port_verdicts = xcalloc(b->plan.nr_groups + 1, sizeof(*b->port_verdicts));
	b->tcp_verdicts = xcalloc(b->plan.nr_paths + 1, sizeof(*b->tcp_verdicts));
	b->worst = LINK_HEALTHY;
	for (size_t g = 0; g < b->plan.nr_groups; g++) {
		link_judgement_init(&b->port_verdicts[g]);
		if (!b->do_rdma)
			continue;
		judge_group(b, g, &b->port_verdicts[g]);
		if (b->port_verdicts[g].verdict > b->worst)
			b->worst = b->port_verdicts[g].verdict;
	}
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		link_judgement_init(&b->tcp_verdicts[i]);
		if (!b->do_tcp || !path_has_tcp(&b->plan.paths[i]))
			continue;
		judge_tcp(b, i, &b->tcp_verdicts[i]);
		if (b->tcp_verdicts[i].verdict > b->worst)
			b->worst = b->tcp_verdicts[i].verdict;
	}
}

static void release_verdicts(struct link_bench *b)
{
	for (size_t g = 0; b->port_verdicts && g < b->plan.nr_groups; g++)
		link_judgement_release(&b->port_verdicts[g]);
	for (size_t i = 0; b->tcp_verdicts && i < b->plan.nr_paths; i++)
		link_judgement_release(&b->tcp_verdicts[i]);
	free(b->port_verdicts);
	free(b->tcp_verdicts);
}

/* ---- output ---- */

static const char *group_label(const struct link_bench *b, size_t g, char buf[24])
{
	for (size_t i = 0; i < b->plan.nr_paths; i++)
		if (b->plan.paths[i].group == g && b->plan.paths[i].label[0]) {
			snprintf(buf, 24, "%s", b->plan.paths[i].label);
			return buf;
		}
	snprintf(buf, 24, "#%zu", g + 1);
	return buf;
}

static void gid_text(int gid, char buf[12])
{
	if (gid < 0)
		snprintf(buf, 12, "-");
	else
		snprintf(buf, 12, "%d", gid);
}

/* The measured rate ("failed" without one) and the line rate ("?" unknown). */
static void rate_cells(struct table *t, bool ran, double gbps, double line_gbps)
{
	if (ran)
		table_cellf(t, "%.2f", gbps);
	else
		table_cell(t, "failed");
	if (line_gbps > 0)
		table_cellf(t, "%.0f", line_gbps);
	else
		table_cell(t, "?");
}

static void add_problem(struct strbuf *out, const char *what, const struct link_judgement *j,
			const char *hosts)
{
	strbuf_addf(out, "%s: %s: %s\n", what, link_verdict_name(j->verdict), j->cause.buf);
	if (j->doctor_check)
		strbuf_addf(out, "  check: sparkctl doctor -H %s --only %s\n", hosts,
			    j->doctor_check);
}

static void render_rdma(const struct link_bench *b, struct strbuf *out)
{
	static const char *const headers[] = { "port",	"path",	   "GID",    ">Gb/s",
					       ">line", ">lat us", "verdict" };
	struct strbuf problems = STRBUF_INIT;
	struct table t;

	strbuf_addf(out,
		    "RDMA write  %s -> %s  (ib_write_bw -q %u -s %" PRIu64
		    ", %u s; ib_write_lat 2 B)\n",
		    host_a(b), host_b(b), b->tool.qps, b->tool.size, b->tool.duration_s);
	table_init(&t, ARRAY_SIZE(headers), headers);
	for (size_t g = 0; g < b->plan.nr_groups; g++) {
		const struct link_judgement *j = &b->port_verdicts[g];
		char label[24], ga[12], gb[12];
		double sum = 0, line = 0;
		size_t twins = 0;

		group_label(b, g, label);
		for (size_t i = 0; i < b->plan.nr_paths; i++)
			twins += b->plan.paths[i].group == g;
		for (size_t i = 0; i < b->plan.nr_paths; i++) {
			const struct link_path *p = &b->plan.paths[i];
			const struct path_result *r = &b->res[i];
			if (p->group != g)
				continue;
			sum += r->bw_ran ? r->bw_gbps : 0;
			line += p->rdma_line_gbps;
			gid_text(p->a_gid, ga);
			gid_text(p->b_gid, gb);
			table_cell(&t, label);
			table_cellf(&t, "%s -> %s", p->a_dev, p->b_dev);
			table_cellf(&t, "%s/%s", ga, gb);
			rate_cells(&t, r->bw_ran, r->bw_gbps, p->rdma_line_gbps);
			if (r->lat_ran)
				table_cellf(&t, "%.2f", r->lat_us);
			else
				table_cell(&t, NULL);
			/* One path: its row carries the port's verdict; twins get a sum row. */
			table_cell(&t, twins == 1 ? link_verdict_name(j->verdict) : "");
		}
		if (twins > 1) {
			table_cell(&t, label);
			table_cell(&t, "sum of the twins");
			table_cell(&t, "");
			table_cellf(&t, "%.2f", sum);
			table_cellf(&t, "%.0f", line);
			table_cell(&t, "");
			table_cell(&t, link_verdict_name(j->verdict));
		}
		if (j->verdict != LINK_HEALTHY) {
			char what[64];
			snprintf(what, sizeof(what), "port %s", label);
			add_problem(&problems, what, j, b->a->hosts);
		}
	}
	table_render(&t, 100, out);
	table_release(&t);
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct path_result *r = &b->res[i];
		if (r->bw_error)
			strbuf_addf(out, "%s -> %s: %s\n", b->plan.paths[i].a_dev,
				    b->plan.paths[i].b_dev, r->bw_error);
		else if (r->lat_error)
			strbuf_addf(out, "%s -> %s: %s\n", b->plan.paths[i].a_dev,
				    b->plan.paths[i].b_dev, r->lat_error);
	}
	strbuf_add(out, problems.buf, problems.len);
	strbuf_release(&problems);
}

static void render_tcp(const struct link_bench *b, struct strbuf *out)
{
	static const char *const headers[] = { "path", ">Gb/s", ">line", ">retransmits",
					       "verdict" };
	struct strbuf problems = STRBUF_INIT, errors = STRBUF_INIT;
	struct table t;

	strbuf_addf(out, "TCP  %s -> %s  (iperf3 -P %u, %u s)\n", host_a(b), host_b(b),
		    b->tool.streams, b->tool.duration_s);
	table_init(&t, ARRAY_SIZE(headers), headers);
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct link_path *p = &b->plan.paths[i];
		const struct path_result *r = &b->res[i];
		const struct link_judgement *j = &b->tcp_verdicts[i];
		if (!path_has_tcp(p))
			continue;
		table_cellf(&t, "%s %s -> %s %s", p->a_if, p->a_addr, p->b_if, p->b_addr);
		rate_cells(&t, r->tcp_ran, r->tcp_gbps, p->tcp_line_gbps);
		if (r->retransmits >= 0)
			table_cellf(&t, "%" PRId64, r->retransmits);
		else
			table_cell(&t, NULL);
		table_cell(&t, link_verdict_name(j->verdict));
		if (r->tcp_error)
			strbuf_addf(&errors, "%s -> %s: %s\n", p->a_if, p->b_if, r->tcp_error);
		if (j->verdict != LINK_HEALTHY) {
			char what[64];
			snprintf(what, sizeof(what), "%s -> %s", p->a_if, p->b_if);
			add_problem(&problems, what, j, b->a->hosts);
		}
	}
	table_render(&t, 100, out);
	table_release(&t);
	strbuf_add(out, errors.buf, errors.len);
	strbuf_add(out, problems.buf, problems.len);
	strbuf_release(&problems);
	strbuf_release(&errors);
}

static json_t *judgement_json(const struct link_judgement *j)
{
	json_t *o = json_object();
	jset(o, "verdict", jstr(link_verdict_name(j->verdict)));
	jset(o, "expected_gbps", j->expected_gbps > 0 ? jreal(j->expected_gbps) : json_null());
	jset(o, "cause", j->cause.len ? jstr(j->cause.buf) : json_null());
	jset(o, "doctor_check", jstr(j->doctor_check));
	return o;
}

static json_t *rdma_json(const struct link_bench *b)
{
	json_t *ports = json_array();

	for (size_t g = 0; g < b->plan.nr_groups; g++) {
		const struct link_judgement *j = &b->port_verdicts[g];
		json_t *port, *paths = json_array();
		char label[24];
		double sum = 0, line = 0;

		port = judgement_json(j);
		for (size_t i = 0; i < b->plan.nr_paths; i++) {
			const struct link_path *p = &b->plan.paths[i];
			const struct path_result *r = &b->res[i];
			json_t *o = json_object();
			if (p->group != g)
				continue;
			sum += r->bw_ran ? r->bw_gbps : 0;
			line += p->rdma_line_gbps;
			jset(o, "a_device", jstr(p->a_dev));
			jset(o, "a_port", jint(p->a_port));
			jset(o, "a_gid_index", p->a_gid >= 0 ? jint(p->a_gid) : json_null());
			jset(o, "b_device", jstr(p->b_dev));
			jset(o, "b_port", jint(p->b_port));
			jset(o, "b_gid_index", p->b_gid >= 0 ? jint(p->b_gid) : json_null());
			jset(o, "gbps", r->bw_ran ? jreal(r->bw_gbps) : json_null());
			jset(o, "line_gbps",
			     p->rdma_line_gbps > 0 ? jreal(p->rdma_line_gbps) : json_null());
			jset(o, "latency_us", r->lat_ran ? jreal(r->lat_us) : json_null());
			jset(o, "error", jstr(r->bw_error ? r->bw_error : r->lat_error));
			jpush(paths, o);
		}
		jset(port, "port", jstr(group_label(b, g, label)));
		jset(port, "gbps", jreal(sum));
		jset(port, "line_gbps", line > 0 ? jreal(line) : json_null());
		jset(port, "paths", paths);
		jpush(ports, port);
	}
	return ports;
}

static json_t *tcp_json(const struct link_bench *b)
{
	json_t *paths = json_array();

	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct link_path *p = &b->plan.paths[i];
		const struct path_result *r = &b->res[i];
		const struct link_judgement *j = &b->tcp_verdicts[i];
		if (!path_has_tcp(p))
			continue;
		json_t *o = judgement_json(j);
		jset(o, "a_netdev", jstr(p->a_if));
		jset(o, "a_address", jstr(p->a_addr));
		jset(o, "b_netdev", jstr(p->b_if));
		jset(o, "b_address", jstr(p->b_addr));
		jset(o, "mtu", p->a_mtu == p->b_mtu ? jint_known(p->a_mtu) : json_null());
		jset(o, "gbps", r->tcp_ran ? jreal(r->tcp_gbps) : json_null());
		jset(o, "line_gbps", p->tcp_line_gbps > 0 ? jreal(p->tcp_line_gbps) : json_null());
		jset(o, "retransmits", jint_known(r->retransmits));
		jset(o, "error", jstr(r->tcp_error));
		jpush(paths, o);
	}
	return paths;
}

static json_t *report_json(const struct link_bench *b)
{
	json_t *doc = json_object();
	json_t *tool = json_object();

	jset(doc, "client", jstr(host_a(b)));
	jset(doc, "server", jstr(host_b(b)));
	jset(tool, "duration_s", jint(b->tool.duration_s));
	jset(tool, "qps", jint(b->tool.qps));
	jset(tool, "size", jint((int64_t)b->tool.size));
	jset(tool, "streams", jint(b->tool.streams));
	jset(doc, "options", tool);
	jset(doc, "rdma", b->do_rdma ? rdma_json(b) : json_null());
	jset(doc, "tcp", b->do_tcp ? tcp_json(b) : json_null());
	jset(doc, "verdict", jstr(link_verdict_name(b->worst)));
	return doc;
}

/* ---- the command ---- */

static int parse_args(struct link_args *a, struct link_bench *b)
{
	uint64_t size;

	if (!a->hosts)
		return cmd_usage_error("bench link", "-H A,B is required: the two nodes");
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
		b->tool.size = size;
	}
	if (a->expect) {
		char *end;
		errno = 0;
		a->expect_gbps = strtod(a->expect, &end);
		if (errno || end == a->expect || *end || !(a->expect_gbps > 0) ||
		    !isfinite(a->expect_gbps))
			return cmd_usage_error("bench link",
					       "bad --expect-gbps '%s': a rate in Gb/s above 0",
					       a->expect);
	}
	if (a->rdma_port < 1 || a->rdma_port > 65000 || a->tcp_port < 1 || a->tcp_port > 65000)
		return cmd_usage_error("bench link", "ports are 1 to 65000");
	b->do_rdma = !a->tcp;
	b->do_tcp = !a->rdma;
	b->tool.duration_s = a->duration;
	b->tool.qps = a->qps;
	b->tool.streams = a->streams;
	return SPARKCTL_EXIT_OK;
}

static int load_nodes(struct link_bench *b)
{
	struct host_list hosts = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (host_list_parse(b->a->hosts, &hosts, &err) < 0) {
		ret = cmd_usage_error("bench link", "%s", err.buf);
		goto out;
	}
	if (hosts.nr != 2) {
		ret = cmd_usage_error("bench link", "-H takes exactly two nodes, not %zu",
				      hosts.nr);
		goto out;
	}
	for (size_t i = 0; i < 2; i++) {
		struct doctor_node *n = ARRAY_PUSH(b->c.nodes, b->c.nr_nodes);
		memset(n, 0, sizeof(*n));
		n->host = xstrdup(hosts.hosts[i].name);
		inventory_init(&n->inv);
	}
	b->tool.b_host = host_b(b);
	cmd_remote_gather(&b->rm, &b->c, 2, INVENTORY_TIMEOUT_MS);
	for (size_t i = 0; i < 2; i++) {
		const struct doctor_node *n = &b->c.nodes[i];
		if (!n->inspected) {
			cmd_error("bench link", "%s could not be inspected: %s", n->host,
				  n->error ? n->error : "?");
			ret = LINK_EXIT_UNAVAILABLE;
		}
	}
out:
	host_list_release(&hosts);
	strbuf_release(&err);
	return ret;
}

int cmd_bench_link(int argc, char **argv)
{
	struct link_args a = { .duration = 5,
			       .qps = 4,
			       .streams = 8,
			       .rdma_port = DEFAULT_RDMA_PORT,
			       .tcp_port = DEFAULT_TCP_PORT };
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a.hosts, "A,B", "the client node and the server node"),
		OPT_BOOL(0, "rdma", &a.rdma, "only RDMA (ib_write_bw, ib_write_lat)"),
		OPT_BOOL(0, "tcp", &a.tcp, "only TCP (iperf3)"),
		OPT_BOOL(0, "all", &a.all, "both (the default)"),
		OPT_UINT('t', "duration", &a.duration, "S",
			 "seconds per bandwidth run (default 5)"),
		OPT_STRING('s', "size", &a.size, "BYTES", "RDMA message size (default 64K)"),
		OPT_UINT('q', "qps", &a.qps, "N", "RDMA queue pairs per twin (default 4)"),
		OPT_UINT('P', "streams", &a.streams, "N", "TCP streams per netdev (default 8)"),
		OPT_UINT(0, "rdma-port", &a.rdma_port, "PORT",
			 "first TCP port of perftest's servers (default 18515)"),
		OPT_UINT(0, "tcp-port", &a.tcp_port, "PORT",
			 "first port of iperf3's servers (default 5201)"),
		OPT_STRING(0, "expect-gbps", &a.expect, "G",
			   "healthy from G Gb/s per path, instead of a fraction of the line rate"),
		OPT_STRING(0, "json", &a.json, "FILE",
			   "also write the report as JSON ('-': only JSON)"),
		OPT_STRING(0, "remote-sparkctl", &a.remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path)"),
		OPT_HELP(&a.help),
		OPT_END(),
	};
	struct link_bench b = { .a = &a, .tool = { .size = 65536 } };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	int n, ret;

	strbuf_init(&b.unavailable, 0);
	n = cmd_parse_options(opts, link_usage, link_description, &a.help, argc, argv);
	if (n < 0) {
		ret = cmd_parse_exit(n);
		goto done;
	}
	if (n > 0) {
		ret = cmd_usage_error("bench link", "unexpected argument '%s'", argv[1]);
		goto done;
	}
	if ((ret = parse_args(&a, &b)) != SPARKCTL_EXIT_OK)
		goto done;

	cmd_remote_init(&b.rm, a.remote_sparkctl, true);
	if ((ret = load_nodes(&b)) != SPARKCTL_EXIT_OK)
		goto out;
	link_plan_build(&b.c.nodes[0].inv, &b.c.nodes[1].inv, &b.plan);
	if (!b.plan.nr_paths) {
		cmd_error("bench link",
			  "no fabric path between %s and %s: no ACTIVE fabric port of one has an "
			  "address on a subnet of the other's (check: sparkctl doctor -H %s)",
			  host_a(&b), host_b(&b), a.hosts);
		ret = LINK_EXIT_UNAVAILABLE;
		goto out;
	}
	if (b.do_tcp && !path_has_tcp(&b.plan.paths[0])) {
		if (a.tcp) {
			cmd_error("bench link", "InfiniBand paths have no fabric netdev for TCP");
			ret = LINK_EXIT_UNAVAILABLE;
			goto out;
		}
		b.do_tcp = false;
	}

	measure(&b);
	if (b.unavailable.len) {
		cmd_error("bench link", "%s", b.unavailable.buf);
		ret = LINK_EXIT_UNAVAILABLE;
		goto out;
	}
	judge_all(&b);
	if (a.json) {
		json_t *doc = report_json(&b);
		int r = json_save(doc, a.json, &err);
		json_decref(doc);
		if (r < 0) {
			cmd_error("bench link", "%s", err.buf);
			ret = SPARKCTL_EXIT_ERROR;
			goto out;
		}
	}
	if (!a.json || !streq(a.json, "-")) {
		if (b.do_rdma)
			render_rdma(&b, &out);
		if (b.do_rdma && b.do_tcp)
			strbuf_addch(&out, '\n');
		if (b.do_tcp)
			render_tcp(&b, &out);
		fputs(out.buf, stdout);
	}
	ret = b.worst == LINK_HEALTHY ? LINK_EXIT_OK : LINK_EXIT_PROBLEMS;
out:
	if (b.res)
		for (size_t i = 0; i < b.plan.nr_paths; i++) {
			free(b.res[i].bw_error);
			free(b.res[i].lat_error);
			free(b.res[i].tcp_error);
		}
	free(b.res);
	release_verdicts(&b);
	link_plan_release(&b.plan);
	cmd_remote_close(&b.rm);
	doctor_cluster_release(&b.c);
done:
	strbuf_release(&b.unavailable);
	strbuf_release(&out);
	strbuf_release(&err);
	return ret;
}
