/*
 * link_view.c - the bench link report, as text or JSON.
 *
 * RDMA: one JSON object per physical port with its verdict and its paths
 * (the twins); in text one row per path, and a "sum of the twins" row
 * where a port has two.  TCP: one row and one object per netdev pair.
 */
#include "sparkctl.h"

#include "view/color.h"
#include "view/link_view.h"

/* A rate, or null when there is none (0: unknown). */
static json_t *jrate(double gbps)
{
	return gbps > 0 ? jreal(gbps) : json_null();
}

static json_t *jgid(int gid)
{
	return gid >= 0 ? jint(gid) : json_null();
}

/* The verdict, its threshold, its cause and the doctor check behind it (JSON). */
static void emit_judgement(const struct link_judgement *j, struct emitter *e)
{
	emit_value(e, "verdict", jstr(link_verdict_name(j->verdict)), NULL);
	emit_value(e, "expected_gbps", jrate(j->expected_gbps), NULL);
	emit_value(e, "cause", j->cause.len ? jstr(j->cause.buf) : json_null(), NULL);
	emit_value(e, "doctor_check", jstr(j->doctor_check), NULL);
}

/* The measured rate ("failed" without one) and the line rate ("?" unknown). */
static void emit_rates(bool ran, double gbps, double line_gbps, struct emitter *e)
{
	if (ran)
		emit_cellf(e, "gbps", jreal_rounded(gbps, 2), "%.2f", gbps);
	else
		emit_cell(e, "gbps", json_null(), "failed");
	if (line_gbps > 0)
		emit_cellf(e, "line_gbps", jreal(line_gbps), "%.0f", line_gbps);
	else
		emit_cell(e, "line_gbps", json_null(), "?");
}

/* Below the table: what is wrong with a link, and the check that looks at its cause. */
static void add_problem(struct strbuf *out, const char *what, const struct link_judgement *j,
			const char *hosts)
{
	strbuf_addf(out, "%s: %s: %s\n", what, link_verdict_name(j->verdict), j->cause.buf);
	if (j->doctor_check)
		strbuf_addf(out, "  check: sparkctl doctor -H %s --only %s\n", hosts,
			    j->doctor_check);
}

/* The verdict's cell, coloured as doctor colours PASS, WARN and FAIL. */
static void emit_verdict_cell(const struct link_judgement *j, struct emitter *e)
{
	static const char *const colors[] = {
		[LINK_HEALTHY] = COLOR_PASS,
		[LINK_DEGRADED] = COLOR_WARN,
		[LINK_BROKEN] = COLOR_FAIL,
	};

	emit_cell_color(e, NULL, NULL, colors[j->verdict], link_verdict_name(j->verdict));
}

static void gid_text(int gid, char buf[12])
{
	if (gid < 0)
		snprintf(buf, 12, "-");
	else
		snprintf(buf, 12, "%d", gid);
}

/* A path's row; j: the port's verdict, shown on this row (NULL: on the twins' sum row). */
static void emit_rdma_path(const struct link_path *p, const struct link_path_result *r,
			   const char *label, const struct link_judgement *j, struct emitter *e)
{
	char ga[12], gb[12];

	gid_text(p->a_gid, ga);
	gid_text(p->b_gid, gb);
	emit_row_open(e);
	emit_value(e, "a_device", jstr(p->a_dev), NULL);
	emit_value(e, "a_port", jint(p->a_port), NULL);
	emit_value(e, "a_gid_index", jgid(p->a_gid), NULL);
	emit_value(e, "b_device", jstr(p->b_dev), NULL);
	emit_value(e, "b_port", jint(p->b_port), NULL);
	emit_value(e, "b_gid_index", jgid(p->b_gid), NULL);
	emit_cell(e, NULL, NULL, label);
	emit_cellf(e, NULL, NULL, "%s -> %s", p->a_dev, p->b_dev);
	emit_cellf(e, NULL, NULL, "%s/%s", ga, gb);
	emit_rates(r->bw_ran, r->bw_gbps, p->rdma_line_gbps, e);
	if (r->lat_ran)
		emit_cellf(e, "latency_us", jreal_rounded(r->lat_us, 2), "%.2f", r->lat_us);
	else
		emit_cell(e, "latency_us", json_null(), NULL);
	emit_value(e, "error", jstr(r->bw_error ? r->bw_error : r->lat_error), NULL);
	if (j)
		emit_verdict_cell(j, e);
	else
		emit_cell(e, NULL, NULL, "");
	emit_row_close(e);
}

/* One physical port: its paths (the twins), and their sum where there are two. */
static void emit_rdma_port(const struct link_run *b, size_t g, struct emitter *e)
{
	const struct link_judgement *j = &b->port_verdicts[g];
	char label[24];
	double sum = 0, line = 0;
	size_t twins = 0;

	link_group_label(b, g, label);
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		if (b->plan.paths[i].group != g)
			continue;
		twins++;
		sum += b->res[i].bw_ran ? b->res[i].bw_gbps : 0;
		line += b->plan.paths[i].rdma_line_gbps;
	}
	emit_object_open(e, NULL);
	emit_judgement(j, e);
	emit_value(e, "port", jstr(label), NULL);
	emit_value(e, "gbps", jreal_rounded(sum, 2), NULL);
	emit_value(e, "line_gbps", jrate(line), NULL);
	emit_array_open(e, "paths");
	/* One path: its row carries the port's verdict; twins get a sum row. */
	for (size_t i = 0; i < b->plan.nr_paths; i++)
		if (b->plan.paths[i].group == g)
			emit_rdma_path(&b->plan.paths[i], &b->res[i], label, twins == 1 ? j : NULL,
				       e);
	emit_close(e);
	if (twins > 1 && !emit_is_json(e)) {
		/* The sum is the port's "gbps" and "line_gbps" above. */
		emit_cell(e, NULL, NULL, label);
		emit_cell(e, NULL, NULL, "sum of the twins");
		emit_cell(e, NULL, NULL, "");
		emit_cellf(e, NULL, NULL, "%.2f", sum);
		emit_cellf(e, NULL, NULL, "%.0f", line);
		emit_cell(e, NULL, NULL, "");
		emit_verdict_cell(j, e);
	}
	emit_close(e);
}

static void emit_rdma(const struct link_run *b, struct emitter *e)
{
	static const char *const headers[] = { "port",	"path",	   "GID",    ">Gb/s",
					       ">line", ">lat us", "verdict" };
	const struct link_tool_options *t = &b->o->tool;
	struct strbuf problems = STRBUF_INIT;

	emit_text(e,
		  "RDMA write  %s -> %s  (ib_write_bw -q %u -s %" PRIu64
		  ", %u s; ib_write_lat 2 B)\n",
		  link_run_client(b), link_run_server(b), t->qps, t->size, t->duration_s);
	emit_table_open(e, "rdma", headers, ARRAY_SIZE(headers), 100);
	for (size_t g = 0; g < b->plan.nr_groups; g++) {
		emit_rdma_port(b, g, e);
		if (b->port_verdicts[g].verdict != LINK_HEALTHY) {
			char what[64], label[24];
			snprintf(what, sizeof(what), "port %s", link_group_label(b, g, label));
			add_problem(&problems, what, &b->port_verdicts[g], b->o->hosts);
		}
	}
	emit_table_close(e);
	/* The errors are each path's "error", the problems each port's verdict and cause. */
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct link_path_result *r = &b->res[i];
		if (r->bw_error || r->lat_error)
			emit_text(e, "%s -> %s: %s\n", b->plan.paths[i].a_dev,
				  b->plan.paths[i].b_dev, r->bw_error ? r->bw_error : r->lat_error);
	}
	emit_text(e, "%s", problems.buf);
	strbuf_release(&problems);
}

static void emit_tcp_path(const struct link_run *b, size_t i, struct emitter *e)
{
	const struct link_path *p = &b->plan.paths[i];
	const struct link_path_result *r = &b->res[i];
	const struct link_judgement *j = &b->tcp_verdicts[i];

	emit_row_open(e);
	emit_judgement(j, e);
	emit_value(e, "a_netdev", jstr(p->a_if), NULL);
	emit_value(e, "a_address", jstr(p->a_addr), NULL);
	emit_value(e, "b_netdev", jstr(p->b_if), NULL);
	emit_value(e, "b_address", jstr(p->b_addr), NULL);
	emit_value(e, "mtu", p->a_mtu == p->b_mtu ? jint_known(p->a_mtu) : json_null(), NULL);
	emit_cellf(e, NULL, NULL, "%s %s -> %s %s", p->a_if, p->a_addr, p->b_if, p->b_addr);
	emit_rates(r->tcp_ran, r->tcp_gbps, p->tcp_line_gbps, e);
	if (r->retransmits >= 0)
		emit_cellf(e, "retransmits", jint(r->retransmits), "%" PRId64, r->retransmits);
	else
		emit_cell(e, "retransmits", json_null(), NULL);
	emit_value(e, "error", jstr(r->tcp_error), NULL);
	emit_verdict_cell(j, e);
	emit_row_close(e);
}

static void emit_tcp(const struct link_run *b, struct emitter *e)
{
	static const char *const headers[] = { "path", ">Gb/s", ">line", ">retransmits",
					       "verdict" };
	struct strbuf problems = STRBUF_INIT, errors = STRBUF_INIT;

	emit_text(e, "TCP  %s -> %s  (iperf3 -P %u, %u s)\n", link_run_client(b),
		  link_run_server(b), b->o->tool.streams, b->o->tool.duration_s);
	emit_table_open(e, "tcp", headers, ARRAY_SIZE(headers), 100);
	for (size_t i = 0; i < b->plan.nr_paths; i++) {
		const struct link_path *p = &b->plan.paths[i];
		if (!link_path_has_tcp(p))
			continue;
		emit_tcp_path(b, i, e);
		if (b->res[i].tcp_error)
			strbuf_addf(&errors, "%s -> %s: %s\n", p->a_if, p->b_if,
				    b->res[i].tcp_error);
		if (b->tcp_verdicts[i].verdict != LINK_HEALTHY) {
			char what[64];
			snprintf(what, sizeof(what), "%s -> %s", p->a_if, p->b_if);
			add_problem(&problems, what, &b->tcp_verdicts[i], b->o->hosts);
		}
	}
	emit_table_close(e);
	emit_text(e, "%s%s", errors.buf, problems.buf);
	strbuf_release(&problems);
	strbuf_release(&errors);
}

void link_report_emit(const struct link_run *b, struct emitter *e)
{
	const struct link_tool_options *t = &b->o->tool;

	emit_value(e, "schema_version", jint(LINK_REPORT_SCHEMA_VERSION), NULL);
	emit_value(e, "client", jstr(link_run_client(b)), NULL);
	emit_value(e, "server", jstr(link_run_server(b)), NULL);
	emit_object_open(e, "options");
	emit_value(e, "duration_seconds", jint(t->duration_s), NULL);
	emit_value(e, "qps", jint(t->qps), NULL);
	emit_value(e, "size_bytes", jint((int64_t)t->size), NULL);
	emit_value(e, "streams", jint(t->streams), NULL);
	emit_close(e);
	if (b->do_rdma)
		emit_rdma(b, e);
	else
		emit_value(e, "rdma", json_null(), NULL);
	if (b->do_rdma && b->do_tcp)
		emit_text(e, "\n");
	if (b->do_tcp)
		emit_tcp(b, e);
	else
		emit_value(e, "tcp", json_null(), NULL);
	emit_value(e, "verdict", jstr(link_verdict_name(b->worst)), NULL);
}
