#include "sparkctl.h"

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
		return "\033[1;31m";
	case CHECK_WARN:
		return "\033[1;33m";
	case CHECK_PASS:
		return "\033[32m";
	case CHECK_SKIP:
		return "\033[2m";
	}
	return "";
}

/* Severity order for display: FAIL, WARN, SKIP, PASS. */
static const enum check_status display_order[] = { CHECK_FAIL, CHECK_WARN, CHECK_SKIP, CHECK_PASS };

static void render_group(const struct findings *f, const char *node, bool quiet, bool color,
			 struct strbuf *out)
{
	size_t width = 0;

	for (size_t i = 0; i < f->nr; i++)
		if (streq(f->items[i].node, node) && strlen(f->items[i].check_id) > width)
			width = strlen(f->items[i].check_id);
	for (size_t o = 0; o < ARRAY_SIZE(display_order); o++) {
		enum check_status st = display_order[o];
		if (quiet && (st == CHECK_PASS || st == CHECK_SKIP))
			continue;
		for (size_t i = 0; i < f->nr; i++) {
			const struct finding *x = &f->items[i];
			if (x->status != st || !streq(x->node, node))
				continue;
			strbuf_addf(out, "  %s%s%s  %-*s  %s\n", color ? color_of(st) : "",
				    check_status_name(st), color ? "\033[0m" : "", (int)width,
				    x->check_id, x->message);
			if (x->fix && (st == CHECK_FAIL || st == CHECK_WARN))
				strbuf_addf(out, "        %*s  fix: %s\n", (int)width, "", x->fix);
		}
	}
}

void doctor_render(const struct doctor_cluster *c, const struct findings *f, bool quiet, bool color,
		   struct strbuf *out)
{
	struct doctor_summary s;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const char *name =
			n->inspected && n->inv.sys.hostname ? n->inv.sys.hostname : n->host;
		if (streq(name, n->host))
			strbuf_addf(out, "%s\n", name);
		else
			strbuf_addf(out, "%s (%s)\n", name, n->host);
		if (!n->inspected)
			strbuf_addf(out, "  %sERROR%s  not inspected: %s\n",
				    color ? color_of(CHECK_FAIL) : "", color ? "\033[0m" : "",
				    n->error ? n->error : "?");
		else
			render_group(f, n->host, quiet, color, out);
	}
	bool any_cluster = false;
	for (size_t i = 0; i < f->nr && !any_cluster; i++)
		any_cluster = streq(f->items[i].node, "cluster");
	if (any_cluster) {
		strbuf_addstr(out, "cluster\n");
		render_group(f, "cluster", quiet, color, out);
	}
	doctor_summarize(c, f, &s);
	strbuf_addf(out, "\n%zu node%s: %zu failed, %zu warning%s, %zu passed, %zu skipped",
		    s.nodes, s.nodes == 1 ? "" : "s", s.counts[CHECK_FAIL], s.counts[CHECK_WARN],
		    s.counts[CHECK_WARN] == 1 ? "" : "s", s.counts[CHECK_PASS],
		    s.counts[CHECK_SKIP]);
	if (s.uninspected)
		strbuf_addf(out, "; %zu node%s not inspected", s.uninspected,
			    s.uninspected == 1 ? "" : "s");
	strbuf_addch(out, '\n');
}

json_t *doctor_json(const struct doctor_cluster *c, const struct findings *f)
{
	json_t *o = json_object(), *nodes = json_array(), *items = json_array();
	json_t *sum = json_object();
	struct doctor_summary s;

	jset(o, "schema_version", jint(1));
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		json_t *j = json_object();
		jset(j, "host", jstr(n->host));
		jset(j, "name", jstr(n->inspected ? n->inv.sys.hostname : NULL));
		jset(j, "inspected", jbool(n->inspected));
		jset(j, "error", jstr(n->error));
		if (n->has_clock)
			jset(j, "clock_offset_seconds", json_real(n->clock_offset));
		jpush(nodes, j);
	}
	jset(o, "nodes", nodes);
	for (size_t i = 0; i < f->nr; i++) {
		const struct finding *x = &f->items[i];
		json_t *j = json_object(), *ev = json_object();
		jset(j, "check", jstr(x->check_id));
		jset(j, "node", jstr(x->node));
		jset(j, "status", jstr(check_status_name(x->status)));
		jset(j, "message", jstr(x->message));
		jset(j, "fix", jstr(x->fix));
		for (size_t k = 0; k < x->evidence.nr; k++) {
			const char *kv = x->evidence.v[k], *eq = strchr(kv, '=');
			if (!eq)
				continue;
			char key[128];
			size_t len = (size_t)(eq - kv) < sizeof(key) - 1 ? (size_t)(eq - kv)
									 : sizeof(key) - 1;
			memcpy(key, kv, len);
			key[len] = '\0';
			jset(ev, key, jstr(eq + 1));
		}
		jset(j, "evidence", ev);
		jpush(items, j);
	}
	jset(o, "findings", items);
	doctor_summarize(c, f, &s);
	jset(sum, "nodes", jint((int64_t)s.nodes));
	jset(sum, "uninspected", jint((int64_t)s.uninspected));
	jset(sum, "fail", jint((int64_t)s.counts[CHECK_FAIL]));
	jset(sum, "warn", jint((int64_t)s.counts[CHECK_WARN]));
	jset(sum, "pass", jint((int64_t)s.counts[CHECK_PASS]));
	jset(sum, "skip", jint((int64_t)s.counts[CHECK_SKIP]));
	jset(o, "summary", sum);
	return o;
}
