/*
 * link_run.c - the benchmarks of 'sparkctl bench link', run and judged.
 */
#include "sparkctl.h"

#include "bench/link_parse.h"
#include "bench/link_run.h"
#include "view/progress.h"
#include "inventory/inventory.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/lookup.h"

#define INVENTORY_TIMEOUT_MS 30000
/* From the start of the servers until each one listens: SSH, then the hold's own wait. */
#define READY_TIMEOUT_MS     20000
/* A client's time beyond --duration: connection, setup, and perftest's 2 s margins. */
#define CLIENT_SLACK_MS	     30000
/* After the clients: for the servers to finish by themselves, then to end once told. */
#define SERVER_GRACE_MS	     10000
#define SERVER_STOP_MS	     8000
#define TOOL_OUTPUT_MAX	     ((size_t)1 << 20)

/* The paths a benchmark runs on. */
static bool path_runs(enum link_tool t, const struct link_path *p)
{
	return t != LINK_TOOL_TCP || link_path_has_tcp(p);
}

static unsigned tool_port(const struct link_run *b, enum link_tool t, size_t i)
{
	return (unsigned)i + (t == LINK_TOOL_TCP ? b->o->tcp_port : b->o->rdma_port);
}

static char **error_slot(struct link_path_result *r, enum link_tool t)
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
	if (remote_sparkctl_missing(j->status, j->err.buf)) {
		*missing = true;
		return remote_sparkctl_missing_message(host);
	}
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
		const char *shown = p;
		if (ssh_line_as_shown(&shown, n))
			last = p;
		p += n + (p[n] == '\n');
	}
	return last ? remote_first_line(last) : xstrdup("no output");
}

/* Start the servers of tool t on B; false when one did not come up (each says why). */
static bool start_servers(struct link_run *b, enum link_tool t, struct run_job *servers,
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
		strvec_pushl(&words, "agent", "hold", "--ready-port", NULL);
		strvec_pushf(&words, "%u", tool_port(b, t, i));
		strvec_push(&words, "--");
		link_tool_server(t, &b->plan.paths[i], tool_port(b, t, i), &b->o->tool, &words);
		if (remote_session_sparkctl_argv(&b->rs, link_run_server(b),
						 (const char *const *)words.v, &j->argv) < 0)
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
		why = run_failure(j, t, link_run_server(b), &missing);
		if (!why && j->status < 0)
			why = xasprintf(
				"the %s server on %s was not listening on port %u after %d s",
				link_tool_program(t), link_run_server(b), tool_port(b, t, i),
				READY_TIMEOUT_MS / 1000);
		if (!why) {
			char *line = failure_line(j);
			why = xasprintf("the %s server on %s: %s", link_tool_program(t),
					link_run_server(b), line);
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
static void take_client(struct link_run *b, enum link_tool t, size_t i, const struct run_job *j)
{
	struct link_path_result *r = &b->res[i];
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	bool missing = false;
	char *why = run_failure(j, t, link_run_client(b), &missing);

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
static bool run_tool(struct link_run *b, enum link_tool t)
{
	size_t n = b->plan.nr_paths;
	struct run_job *servers = xcalloc(n + 1, sizeof(*servers));
	struct run_job *clients = xcalloc(n + 1, sizeof(*clients));
	struct run_servers rs = { 0 };
	size_t *index = xcalloc(n + 1, sizeof(*index));
	size_t nr_clients = 0;
	bool ok, clean = true;

	progress_set("bench link: %s \u2192 %s %s", link_run_client(b), link_run_server(b),
		     t == LINK_TOOL_RDMA_BW    ? "RDMA write bandwidth (ib_write_bw)"
		     : t == LINK_TOOL_RDMA_LAT ? "RDMA write latency (ib_write_lat)"
					       : "TCP bandwidth (iperf3)");
	ok = start_servers(b, t, servers, &rs);

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
			strvec_pushl(&words, "agent", "hold", "--", NULL);
			link_tool_client(t, &b->plan.paths[i], tool_port(b, t, i), &b->o->tool,
					 &words);
			if (remote_session_sparkctl_argv(&b->rs, link_run_client(b),
							 (const char *const *)words.v,
							 &j->argv) < 0)
				strvec_push(&j->argv, "false");
			strvec_clear(&words);
		}
		run_jobs(clients, nr_clients, 0, b->o->tool.duration_s * 1000 + CLIENT_SLACK_MS,
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

static void measure(struct link_run *b)
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
static void path_measure(const struct link_run *b, size_t i, bool rdma, struct link_measure *m,
			 struct strbuf *name)
{
	const struct link_path *p = &b->plan.paths[i];
	const struct link_path_result *r = &b->res[i];

	strbuf_addf(name, "%s -> %s", rdma ? p->a_dev : p->a_if, rdma ? p->b_dev : p->b_if);
	*m = (struct link_measure){ .name = name->buf,
				    .ran = rdma ? r->bw_ran : r->tcp_ran,
				    .gbps = rdma ? r->bw_gbps : r->tcp_gbps,
				    .line_gbps = rdma ? p->rdma_line_gbps : p->tcp_line_gbps,
				    .expect_gbps = b->o->expect_gbps,
				    .mtu_a = p->a_mtu,
				    .mtu_b = p->b_mtu };
}

/* The RDMA verdict of port group g. */
static void judge_group(const struct link_run *b, size_t g, struct link_judgement *j)
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

static void judge_tcp(const struct link_run *b, size_t i, struct link_judgement *j)
{
	struct strbuf name = STRBUF_INIT;
	struct link_measure m;

	path_measure(b, i, false, &m, &name);
	link_judgement_init(j);
	link_judge_tcp(&m, j);
	strbuf_release(&name);
}

/* Every verdict, once, for the table and the JSON alike. */
static void judge_all(struct link_run *b)
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
		if (!b->do_tcp || !link_path_has_tcp(&b->plan.paths[i]))
			continue;
		judge_tcp(b, i, &b->tcp_verdicts[i]);
		if (b->tcp_verdicts[i].verdict > b->worst)
			b->worst = b->tcp_verdicts[i].verdict;
	}
}

static void release_verdicts(struct link_run *b)
{
	for (size_t g = 0; b->port_verdicts && g < b->plan.nr_groups; g++)
		link_judgement_release(&b->port_verdicts[g]);
	for (size_t i = 0; b->tcp_verdicts && i < b->plan.nr_paths; i++)
		link_judgement_release(&b->tcp_verdicts[i]);
	free(b->port_verdicts);
	free(b->tcp_verdicts);
}

const char *link_group_label(const struct link_run *b, size_t g, char buf[24])
{
	for (size_t i = 0; i < b->plan.nr_paths; i++)
		if (b->plan.paths[i].group == g && b->plan.paths[i].label[0]) {
			snprintf(buf, 24, "%s", b->plan.paths[i].label);
			return buf;
		}
	snprintf(buf, 24, "#%zu", g + 1);
	return buf;
}

void link_run_init(struct link_run *b, const struct link_run_options *o)
{
	memset(b, 0, sizeof(*b));
	b->o = o;
	b->do_rdma = o->rdma;
	b->do_tcp = o->tcp;
	strbuf_init(&b->unavailable, 0);
	remote_session_init(&b->rs, o->remote_sparkctl, true);
}

void link_run_release(struct link_run *b)
{
	if (b->res)
		for (size_t i = 0; i < b->plan.nr_paths; i++) {
			free(b->res[i].bw_error);
			free(b->res[i].lat_error);
			free(b->res[i].tcp_error);
		}
	free(b->res);
	release_verdicts(b);
	link_plan_release(&b->plan);
	remote_session_close(&b->rs);
	doctor_cluster_release(&b->c);
	strbuf_release(&b->unavailable);
}

int link_run_prepare(struct link_run *b, const char *a, const char *bhost, struct strbuf *err)
{
	const char *hosts[2] = { a, bhost };

	for (size_t i = 0; i < 2; i++) {
		struct doctor_node *n = ARRAY_PUSH(b->c.nodes, b->c.nr_nodes);
		memset(n, 0, sizeof(*n));
		n->host = xstrdup(hosts[i]);
		inventory_init(&n->inv);
	}
	remote_gather_inventories(&b->rs, &b->c, 2, INVENTORY_TIMEOUT_MS);
	for (size_t i = 0; i < 2; i++) {
		const struct doctor_node *n = &b->c.nodes[i];
		if (!n->inspected)
			strbuf_addf(err, "%s%s could not be inspected: %s", err->len ? "\n" : "",
				    n->host, n->error ? n->error : "?");
	}
	if (err->len)
		return -EHOSTUNREACH;
	link_plan_build(&b->c.nodes[0].inv, &b->c.nodes[1].inv, &b->plan);
	if (!b->plan.nr_paths) {
		strbuf_addf(err,
			    "no fabric path between %s and %s: no ACTIVE fabric port of one has an "
			    "address on a subnet of the other's (check: sparkctl doctor -H %s)",
			    a, bhost, b->o->hosts);
		return -ENETUNREACH;
	}
	if (b->do_tcp && !link_path_has_tcp(&b->plan.paths[0])) {
		/* InfiniBand: TCP was asked for alone, or comes with RDMA and is dropped. */
		if (!b->do_rdma) {
			strbuf_addstr(err, "InfiniBand paths have no fabric netdev for TCP");
			return -EOPNOTSUPP;
		}
		b->do_tcp = false;
	}
	return 0;
}

int link_run_measure(struct link_run *b)
{
	measure(b);
	if (b->unavailable.len)
		return -EAGAIN;
	judge_all(b);
	return 0;
}
