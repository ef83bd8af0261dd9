/*
 * doctor_view.c - the doctor's report: findings grouped by node, failures
 * first, each fix under its finding, then the totals; the same calls give
 * the JSON report (docs/doctor.md).
 */
#include "sparkctl.h"

#include "lib/xalloc.h"
#include "view/color.h"
#include "view/doctor_view.h"

void doctor_summarize(const struct doctor_cluster *c, const struct findings *f,
		      struct doctor_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->nodes = c->nr_nodes;
	for (size_t i = 0; i < c->nr_nodes; i++)
		s->uninspected += !c->nodes[i].inspected;
	for (size_t i = 0; i < f->nr; i++)
		s->counts[f->items[i].status]++;
}

static const char *color_of(enum check_status st)
{
	switch (st) {
	case CHECK_FAIL:
		return COLOR_FAIL;
	case CHECK_WARN:
		return COLOR_WARN;
	case CHECK_PASS:
		return COLOR_PASS;
	case CHECK_SKIP:
		return COLOR_SKIP;
	}
	return "";
}

/* Severity order for display: FAIL, WARN, SKIP, PASS. */
static const enum check_status display_order[] = { CHECK_FAIL, CHECK_WARN, CHECK_SKIP, CHECK_PASS };

/* The "key=value" facts behind a finding, as an object of strings. */
static json_t *evidence_json(const struct strvec *evidence)
{
	json_t *ev = json_object();

	for (size_t k = 0; k < evidence->nr; k++) {
		const char *kv = evidence->v[k], *eq = strchr(kv, '=');
		char *key;
		if (!eq)
			continue;
		key = xstrndup(kv, (size_t)(eq - kv));
		jset(ev, key, jstr(eq + 1));
		free(key);
	}
	return ev;
}

static void emit_finding(const struct finding *x, int width, struct emitter *e)
{
	bool show_fix = x->fix && (x->status == CHECK_FAIL || x->status == CHECK_WARN);

	emit_object_open(e, NULL);
	emit_value(e, "check", jstr(x->check_id), NULL);
	emit_value(e, "node", jstr(x->node), NULL);
	emit_text(e, "  ");
	emit_str_color(e, "status", color_of(x->status), "%s", check_status_name(x->status));
	emit_text(e, "  %-*s  ", width, x->check_id);
	emit_str(e, "message", "%s\n", x->message);
	if (show_fix)
		emit_text(e, "        %*s  ", width, "");
	emit_str(e, "fix", show_fix ? "fix: %s\n" : NULL, x->fix);
	emit_value(e, "evidence", evidence_json(&x->evidence), NULL);
	emit_close(e);
}

/*
 * The findings about node, worst first.  quiet leaves PASS and SKIP out
 * of the text; the JSON report has every finding.
 */
static void emit_group(const struct findings *f, const char *node, bool quiet, struct emitter *e)
{
	size_t width = 0;

	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->items[i].node, node) && strlen(f->items[i].check_id) > width)
			width = strlen(f->items[i].check_id);
	emit_array_open(e, "findings");
	for (size_t o = 0; o < ARRAY_SIZE(display_order); o++) {
		enum check_status st = display_order[o];
		if (quiet && !emit_is_json(e) && (st == CHECK_PASS || st == CHECK_SKIP))
			continue;
		for (size_t i = 0; i < f->nr; i++)
			if (f->items[i].status == st && streq(f->items[i].node, node))
				emit_finding(&f->items[i], (int)width, e);
	}
	emit_close(e);
}

static void emit_node(const struct doctor_node *n, struct emitter *e)
{
	const char *name = n->inspected && n->inv.sys.hostname ? n->inv.sys.hostname : n->host;

	emit_array_open(e, "nodes");
	emit_object_open(e, NULL);
	emit_value(e, "host", jstr(n->host), NULL);
	emit_value(e, "name", jstr(n->inspected ? n->inv.sys.hostname : NULL), NULL);
	if (streq(name, n->host)) {
		emit_str(e, NULL, "%s\n", name);
	} else {
		emit_str(e, NULL, "%s", name);
		emit_str(e, NULL, " (%s)\n", n->host);
	}
	emit_value(e, "inspected", jbool(n->inspected), NULL);
	if (!n->inspected) {
		emit_text(e, "  ");
		emit_str_color(e, NULL, color_of(CHECK_FAIL), "%s", "ERROR");
	}
	if (n->inspected) {
		emit_value(e, "error", jstr(n->error), NULL);
	} else {
		emit_str(e, "error", "  not inspected: %s\n", n->error ? n->error : "?");
	}
	if (n->has_clock)
		emit_value(e, "clock_offset_seconds", jreal(n->clock_offset), NULL);
	emit_close(e);
	emit_close(e);
}

static void emit_summary(const struct doctor_cluster *c, const struct findings *f,
			 struct emitter *e)
{
	struct doctor_summary s;

	doctor_summarize(c, f, &s);
	emit_object_open(e, "summary");
	emit_int(e, "nodes", "\n%" PRId64 " node", (int64_t)s.nodes);
	emit_int(e, "uninspected", NULL, (int64_t)s.uninspected);
	emit_text(e, "%s: ", s.nodes == 1 ? "" : "s");
	emit_int(e, "fail", "%" PRId64 " failed, ", (int64_t)s.counts[CHECK_FAIL]);
	emit_int(e, "warn", "%" PRId64 " warning", (int64_t)s.counts[CHECK_WARN]);
	emit_text(e, "%s, ", s.counts[CHECK_WARN] == 1 ? "" : "s");
	emit_int(e, "pass", "%" PRId64 " passed, ", (int64_t)s.counts[CHECK_PASS]);
	emit_int(e, "skip", "%" PRId64 " skipped", (int64_t)s.counts[CHECK_SKIP]);
	if (s.uninspected)
		emit_text(e, "; %zu node%s not inspected", s.uninspected,
			  s.uninspected == 1 ? "" : "s");
	emit_text(e, "\n");
	emit_close(e);
}

void doctor_emit(const struct doctor_cluster *c, const struct findings *f, bool quiet,
		 struct emitter *e)
{
	bool any_cluster = false;

	emit_int(e, "schema_version", NULL, 1);
	/* The keys in the order of docs/doctor.md, before the two lists are added to in turn. */
	emit_array_open(e, "nodes");
	emit_close(e);
	emit_array_open(e, "findings");
	emit_close(e);
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		emit_node(n, e);
		if (n->inspected)
			emit_group(f, n->host, quiet, e);
	}
	for (size_t i = 0; i < f->nr && !any_cluster; i++)
		any_cluster = streq(f->items[i].node, "cluster");
	if (any_cluster) {
		emit_text(e, "cluster\n");
		emit_group(f, "cluster", quiet, e);
	}
	emit_summary(c, f, e);
}

void doctor_emit_checks(struct emitter *e)
{
	emit_int(e, "schema_version", NULL, 1);
	emit_array_open(e, "checks");
	for (size_t k = 0; k < nr_checks; k++) {
		emit_object_open(e, NULL);
		emit_str(e, "check", "%-20s ", checks[k].id);
		emit_str(e, "scope", "%-7s ", check_scope_name(checks[k].scope));
		emit_str(e, "severity", NULL, check_status_name(checks[k].severity));
		emit_str(e, "title", "%s\n", checks[k].title);
		emit_close(e);
	}
	emit_close(e);
}
