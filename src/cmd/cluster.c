/*
 * sparkctl cluster - show and edit the cluster file (cluster/cluster_file.h):
 *
 *   sparkctl cluster show [--json]     the nodes, as a table or as the file's JSON
 *   sparkctl cluster add NAME [...]    add a node, or replace the one of that name
 *   sparkctl cluster remove NAME       remove a node
 *   sparkctl cluster path              which file is in effect, and why
 */
#include "sparkctl.h"

#include "cluster/cluster_file.h"
#include "cmd/cmd.h"
#include "lib/xalloc.h"
#include "view/emit.h"

static const char cluster_file_help[] =
	"The cluster file in effect is, first match wins: --cluster FILE;\n"
	"$SPARKCTL_CLUSTER ('none': no cluster file); $XDG_CONFIG_HOME/sparkctl/cluster.json\n"
	"(~/.config/sparkctl/cluster.json) when it exists; /etc/sparkctl/cluster.json when\n"
	"it exists.  With none, add writes the first of the user's.  doctor, status,\n"
	"launch and deploy use its nodes when neither -H nor --hostfile is given\n"
	"(docs/cluster.md).";

/* Locate the file (--cluster given or not); prints its own error. */
static int locate(const char *title, const char *option, struct cluster_file_location *loc)
{
	if (cluster_file_locate(option, loc) < 0) {
		cmd_error(title, "no cluster file, and no HOME to put one in: give --cluster FILE");
		return SPARKCTL_EXIT_USAGE;
	}
	return SPARKCTL_EXIT_OK;
}

/* Load the file in effect into cf; a file that does not exist is an empty cluster. */
static int load(const char *title, const struct cluster_file_location *loc, struct cluster_file *cf)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	cluster_file_init(cf);
	if (loc->exists && cluster_file_load(cf, loc->path.buf, &err) < 0) {
		cmd_error(title, "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	}
	strbuf_release(&err);
	return ret;
}

static void join_list(struct strbuf *out, const struct strvec *sv)
{
	for (size_t i = 0; i < sv->nr; i++)
		strbuf_addf(out, "%s%s", i ? "," : "", sv->v[i]);
	if (!sv->nr)
		strbuf_addch(out, '-');
}

static void show_text(const struct cluster_file *cf, const struct cluster_file_location *loc,
		      struct strbuf *out)
{
	static const char *const headers[] = { "NAME", "USER", "ID", "MGMT", "FABRIC" };
	struct strbuf cell = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, EMIT_TEXT, out, cmd_use_color());
	emit_str(&e, NULL, "cluster file: %s\n", loc->path.buf);
	emit_str(&e, NULL, "plan: %s\n", cf->plan ? cf->plan : "-");
	emit_table_open(&e, NULL, headers, 5, 100);
	for (size_t i = 0; i < cf->nr; i++) {
		const struct cluster_node *n = &cf->nodes[i];
		emit_row_open(&e);
		emit_cell(&e, NULL, NULL, n->name);
		emit_cell(&e, NULL, NULL, n->user ? n->user : "-");
		emit_cell(&e, NULL, NULL, n->id ? n->id : "-");
		strbuf_reset(&cell);
		join_list(&cell, &n->mgmt_addresses);
		emit_cell(&e, NULL, NULL, cell.buf);
		strbuf_reset(&cell);
		join_list(&cell, &n->fabric_addresses);
		emit_cell(&e, NULL, NULL, cell.buf);
		emit_row_close(&e);
	}
	emit_table_close(&e);
	emit_release(&e);
	strbuf_release(&cell);
}

static int cluster_show(const struct cmd *cmd, int argc, char **argv)
{
	const char *option = NULL;
	bool json = false;
	const struct opt opts[] = {
		OPT_STRING(0, "cluster", &option, "FILE",
			   "this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "json", &json, "print the cluster file's JSON"),
		OPT_HELP(),
		OPT_END(),
	};
	struct cluster_file_location loc = { .path = STRBUF_INIT };
	struct cluster_file cf;
	struct strbuf out = STRBUF_INIT;
	int n, ret;

	cluster_file_init(&cf);
	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if ((ret = locate("cluster show", option, &loc)) != SPARKCTL_EXIT_OK)
		goto out;
	if (!loc.exists) {
		cmd_error("cluster show", "no cluster file%s%s (sparkctl join HOST... makes one)",
			  loc.path.len ? " at " : "", loc.path.buf);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
		goto out;
	}
	if ((ret = load("cluster show", &loc, &cf)) != SPARKCTL_EXIT_OK)
		goto out;
	if (json)
		cluster_file_format(&cf, &out);
	else
		show_text(&cf, &loc, &out);
	fputs(out.buf, stdout);
out:
	strbuf_release(&out);
	cluster_file_release(&cf);
	cluster_file_location_release(&loc);
	return ret;
}

/* --fabric A,B and repeated --mgmt: one list of addresses. */
static void split_addresses(const struct strvec *given, struct strvec *out)
{
	for (size_t i = 0; i < given->nr; i++) {
		const char *p = given->v[i];
		while (*p) {
			size_t len = strcspn(p, ",");
			if (len) {
				char *one = xstrndup(p, len);
				strvec_push_nodup(out, one);
			}
			p += len + (p[len] == ',');
		}
	}
}

static int save(const char *title, const struct cluster_file *cf,
		const struct cluster_file_location *loc)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (!loc->path.len) {
		cmd_error(title, "the cluster file is 'none' (SPARKCTL_CLUSTER or --cluster)");
		ret = SPARKCTL_EXIT_USAGE;
	} else if (cluster_file_save(cf, loc->path.buf, &err) < 0) {
		cmd_error(title, "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	}
	strbuf_release(&err);
	return ret;
}

static int cluster_add(const struct cmd *cmd, int argc, char **argv)
{
	const char *option = NULL, *user = NULL, *id = NULL, *plan = NULL;
	struct strvec mgmt_given = STRVEC_INIT, fabric_given = STRVEC_INIT;
	const struct opt opts[] = {
		OPT_LIST(0, "mgmt", &mgmt_given, "ADDR,...", "its management (ssh) addresses"),
		OPT_LIST(0, "fabric", &fabric_given, "ADDR,...", "its fabric (CX-7) addresses"),
		OPT_STRING(0, "user", &user, "USER", "the ssh user for it (default: ssh's)"),
		OPT_STRING(0, "id", &id, "NODE-ID", "its node id (/etc/sparkctl/node-id)"),
		OPT_CHOICE(0, "plan", &plan, "PLAN", "pair|switch|ring",
			   "also set the cluster's fabric plan: pair, switch or ring"),
		OPT_STRING(0, "cluster", &option, "FILE",
			   "this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct cluster_file_location loc = { .path = STRBUF_INIT };
	struct strvec mgmt = STRVEC_INIT, fabric = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;
	struct cluster_file cf;
	int n, ret;

	cluster_file_init(&cf);
	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0) {
		ret = cmd_parse_exit(n);
		goto out;
	}
	if (n != 1) {
		ret = cmd_usage_error("cluster add", "which node? sparkctl cluster add NAME");
		goto out;
	}
	if (plan && !cluster_plan_valid(plan)) {
		ret = cmd_usage_error("cluster add", "--plan is pair, switch or ring");
		goto out;
	}
	split_addresses(&mgmt_given, &mgmt);
	split_addresses(&fabric_given, &fabric);
	if ((ret = locate("cluster add", option, &loc)) != SPARKCTL_EXIT_OK ||
	    (ret = load("cluster add", &loc, &cf)) != SPARKCTL_EXIT_OK)
		goto out;
	if (cluster_file_put(&cf, argv[1], id, &mgmt, &fabric, user, &err) < 0) {
		ret = cmd_usage_error("cluster add", "%s", err.buf);
		goto out;
	}
	if (plan) {
		free(cf.plan);
		cf.plan = xstrdup(plan);
	}
	ret = save("cluster add", &cf, &loc);
out:
	strbuf_release(&err);
	strvec_clear(&mgmt_given);
	strvec_clear(&fabric_given);
	strvec_clear(&mgmt);
	strvec_clear(&fabric);
	cluster_file_release(&cf);
	cluster_file_location_release(&loc);
	return ret;
}

static int cluster_remove(const struct cmd *cmd, int argc, char **argv)
{
	const char *option = NULL;
	const struct opt opts[] = {
		OPT_STRING(0, "cluster", &option, "FILE",
			   "this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct cluster_file_location loc = { .path = STRBUF_INIT };
	struct cluster_file cf;
	int n, ret;

	cluster_file_init(&cf);
	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if (n != 1)
		return cmd_usage_error("cluster remove",
				       "which node? sparkctl cluster remove NAME");
	if ((ret = locate("cluster remove", option, &loc)) != SPARKCTL_EXIT_OK ||
	    (ret = load("cluster remove", &loc, &cf)) != SPARKCTL_EXIT_OK)
		goto out;
	if (cluster_file_remove(&cf, argv[1]) < 0) {
		struct strbuf name = STRBUF_INIT;
		strbuf_addstr_printable(&name, argv[1]);
		cmd_error("cluster remove", "no node '%s' in %s", name.buf,
			  loc.path.len ? loc.path.buf : "the cluster file");
		strbuf_release(&name);
		ret = SPARKCTL_EXIT_USAGE;
		goto out;
	}
	ret = save("cluster remove", &cf, &loc);
out:
	cluster_file_release(&cf);
	cluster_file_location_release(&loc);
	return ret;
}

static int cluster_path(const struct cmd *cmd, int argc, char **argv)
{
	const char *option = NULL;
	bool json = false;
	const struct opt opts[] = {
		OPT_STRING(0, "cluster", &option, "FILE",
			   "this cluster file (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "json", &json, "as JSON: path, origin, exists"),
		OPT_HELP(),
		OPT_END(),
	};
	static const char *const origin_keys[] = { "option", "env", "user", "system", "none" };
	struct cluster_file_location loc = { .path = STRBUF_INIT };
	struct strbuf out = STRBUF_INIT;
	struct emitter e;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);
	if ((ret = locate("cluster path", option, &loc)) != SPARKCTL_EXIT_OK)
		goto out;
	emit_init(&e, json ? EMIT_JSON : EMIT_TEXT, &out, false);
	emit_value(&e, "schema_version", jint(1), NULL);
	if (loc.path.len)
		emit_str(&e, "path", "%s\n", loc.path.buf);
	else
		emit_value(&e, "path", json_null(), "none\n");
	emit_value(&e, "origin", jstr(origin_keys[loc.origin]), NULL);
	emit_value(&e, "exists", jbool(loc.exists), NULL);
	if (loc.origin == CLUSTER_FILE_FROM_NOWHERE)
		emit_text(&e, "  (no cluster file yet: 'sparkctl join' or 'sparkctl cluster add' "
			      "writes this one)\n");
	else if (!loc.path.len)
		emit_text(&e, "  (%s says none: commands take -H or run here)\n",
			  cluster_file_origin_text(loc.origin));
	else
		emit_text(&e, "  (%s%s)\n", cluster_file_origin_text(loc.origin),
			  loc.exists ? "" : "; it does not exist yet");
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
out:
	strbuf_release(&out);
	cluster_file_location_release(&loc);
	return ret;
}

static const char *const show_usage[] = { "sparkctl cluster show [--json] [--cluster FILE]", NULL };
static const char *const add_usage[] = {
	"sparkctl cluster add NAME [--mgmt ADDR,...] [--fabric ADDR,...] [--user U] [--id ID]",
	NULL,
};
static const char *const remove_usage[] = { "sparkctl cluster remove NAME [--cluster FILE]", NULL };
static const char *const path_usage[] = { "sparkctl cluster path [--json] [--cluster FILE]", NULL };

const struct cmd cmd_cluster_show = {
	.name = "show",
	.title = "cluster show",
	.fn = cluster_show,
	.summary = "show the cluster file's nodes (--json: the file itself)",
	.usage = show_usage,
	.description = cluster_file_help,
	.exit_status = "0 shown, 1 a cluster file that cannot be read, 2 usage, 3 no cluster file",
	.max_operands = 0,
};

const struct cmd cmd_cluster_add = {
	.name = "add",
	.title = "cluster add",
	.fn = cluster_add,
	.summary = "add a node to the cluster file, or replace the one of that name",
	.usage = add_usage,
	.description = cluster_file_help,
	.exit_status = "0 written, 1 the file cannot be read or written, 2 usage",
	.max_operands = 1,
};

const struct cmd cmd_cluster_remove = {
	.name = "remove",
	.title = "cluster remove",
	.fn = cluster_remove,
	.summary = "remove a node from the cluster file",
	.usage = remove_usage,
	.description = cluster_file_help,
	.exit_status = "0 written, 1 the file cannot be read or written, 2 usage (also: no such "
		       "node)",
	.max_operands = 1,
};

const struct cmd cmd_cluster_path = {
	.name = "path",
	.title = "cluster path",
	.fn = cluster_path,
	.summary = "say which cluster file is in effect, and why",
	.usage = path_usage,
	.description = cluster_file_help,
	.exit_status = "0 said, 2 usage (also: no HOME and no --cluster)",
	.max_operands = 0,
};

static const char *const cluster_usage[] = {
	"sparkctl cluster show|add|remove|path [options]",
	NULL,
};

static const struct cmd *const cluster_verbs[] = { &cmd_cluster_show, &cmd_cluster_add,
						   &cmd_cluster_remove, &cmd_cluster_path, NULL };

const struct cmd cmd_cluster = {
	.name = "cluster",
	.summary = "show and edit the cluster file: the nodes commands use without -H",
	.usage = cluster_usage,
	.verbs = cluster_verbs,
	.verb_noun = "action",
};
