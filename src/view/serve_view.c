/*
 * serve_view.c - the plan of 'sparkctl serve --print' (serve_view.h).
 */
#include "sparkctl.h"

#include "lib/xalloc.h"
#include "view/serve_view.h"

static void emit_head(const struct serve_plan *p, struct emitter *e)
{
	const struct serve_node *head = &p->nodes[0];
	const char *backend = serve_backend_name(p->backend);

	emit_value(e, "schema_version", jint(SERVE_PRINT_SCHEMA_VERSION), NULL);
	emit_str(e, "engine", "# sparkctl serve %s", serve_engine_name(p->engine));
	emit_str(e, "backend", backend ? " (%s)" : NULL, backend);
	emit_str(e, "model", ": %s", p->model);
	emit_int(e, NULL, " on %" PRId64 " node", (int64_t)p->nr_nodes);
	emit_text(e, "%s", p->nr_nodes == 1 ? "" : "s");
	if (p->tp) {
		emit_int(e, "tensor_parallel_size", ", tensor parallel %" PRId64, p->tp);
		emit_int(e, "pipeline_parallel_size", " x pipeline parallel %" PRId64, p->pp);
	} else {
		emit_value(e, "tensor_parallel_size", json_null(), NULL);
		emit_value(e, "pipeline_parallel_size", json_null(), NULL);
	}
	emit_text(e, "\n");
	emit_str(e, "head", "# the head: %s", head->host);
	emit_str(e, NULL, ", %s", head->address);
	emit_str(e, NULL, " on %s; ", head->interface);
	emit_str(e, "url", "the API: %s\n", p->url);
	emit_int(e, "port", NULL, p->port);
	emit_int(e, "master_port", "# the rendezvous: port %" PRId64 " on the head",
		 p->master_port);
	emit_str(e, "image", p->image ? "; in the image %s (docker)\n" : NULL, p->image);
	if (!p->image)
		emit_text(e, "; each node runs the engine on its PATH\n");
}

/* One "KEY=VALUE" as JSON's environment[KEY] and the text's export line. */
static void emit_env_entry(struct emitter *e, const char *entry)
{
	const char *eq = strchr(entry, '=');
	char *key = xstrndup(entry, (size_t)(eq - entry));
	struct strbuf line = STRBUF_INIT;

	strbuf_addf(&line, "export %s=", key);
	serve_sh_word(&line, eq + 1);
	strbuf_addch(&line, '\n');
	emit_value(e, key, jstr(eq + 1), line.buf);
	strbuf_release(&line);
	free(key);
}

static void emit_nodes(const struct serve_plan *p, struct emitter *e)
{
	emit_array_open(e, "nodes");
	for (size_t i = 0; i < p->nr_nodes; i++) {
		const struct serve_node *n = &p->nodes[i];
		emit_object_open(e, NULL);
		emit_str(e, "host", "\n# ==== %s", n->host);
		emit_str(e, "hostname", NULL, n->hostname);
		emit_int(e, "rank", ": rank %" PRId64, n->rank);
		emit_text(e, "%s", i ? "" : ", the head");
		emit_str(e, "address", ", %s", n->address);
		emit_str(e, "interface", " on %s", n->interface);
		emit_int(e, "gpus", NULL, n->gpus);
		emit_text(e, " ====\n");
		emit_object_open(e, "environment");
		for (size_t k = 0; k < n->env.nr; k++)
			emit_env_entry(e, n->env.v[k]);
		emit_close(e);
		emit_close(e);
	}
	emit_close(e);
}

static void emit_steps(const struct serve_plan *p, struct emitter *e)
{
	struct strbuf word = STRBUF_INIT;

	emit_text(e, "\n# ==== the start, in this order ====\n");
	emit_array_open(e, "steps");
	for (size_t i = 0; i < p->nr_steps; i++) {
		const struct serve_step *s = &p->steps[i];
		emit_object_open(e, NULL);
		emit_int(e, "order", "# %" PRId64 ". ", (int64_t)i + 1);
		emit_str(e, "host", "%s: ", p->nodes[s->node].host);
		emit_str(e, "role", "%s\n", s->role);
		emit_array_open(e, "argv");
		for (size_t k = 0; k < s->argv.nr; k++) {
			strbuf_reset(&word);
			serve_sh_word(&word, s->argv.v[k]);
			strbuf_addch(&word, k + 1 < s->argv.nr ? ' ' : '\n');
			emit_value(e, NULL, jstr(s->argv.v[k]), word.buf);
		}
		emit_close(e);
		emit_close(e);
	}
	emit_close(e);
	strbuf_release(&word);
}

static void emit_preflight(const struct findings *f, struct emitter *e)
{
	emit_text(e, "\n# ==== preflight ====\n");
	emit_array_open(e, "preflight");
	for (size_t i = 0; i < f->nr; i++) {
		const struct finding *x = &f->items[i];
		emit_object_open(e, NULL);
		emit_str(e, "status", "# %s ", check_status_name(x->status));
		emit_str(e, "check", "%s", x->check_id);
		emit_str(e, "node", streq(x->node, "cluster") ? NULL : " %s", x->node);
		emit_str(e, "message", ": %s\n", x->message);
		emit_str(e, "fix", x->fix ? "#   fix: %s\n" : NULL, x->fix);
		emit_close(e);
	}
	emit_close(e);
}

void serve_plan_emit(const struct serve_plan *plan, const struct findings *preflight,
		     struct emitter *e)
{
	emit_head(plan, e);
	emit_nodes(plan, e);
	emit_steps(plan, e);
	emit_preflight(preflight, e);
}
