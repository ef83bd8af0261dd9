/*
 * sparkctl discover - find the other Sparks: a one-shot mDNS/DNS-SD query
 * on chosen interfaces (discover/discover.h), or with --scan a sweep of
 * port 22 over a small subnet.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "discover/discover.h"
#include "lib/json.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "view/emit.h"
#include "view/progress.h"

static const char *const discover_usage[] = {
	"sparkctl discover [--iface IF,... | --fabric | --mgmt] [--service SERVICE]\n"
	"                     [--reply-timeout S] [--json]",
	"sparkctl discover --scan CIDR [--connect-timeout S] [--json]",
	NULL,
};

static const char discover_description[] =
	"Find the other Sparks on the links of this node: ask mDNS (RFC 6762 legacy\n"
	"unicast: a PTR query to 224.0.0.251:5353 from an ordinary port) for\n"
	"_ssh._tcp, which avahi-daemon advertises on DGX OS, and _sparkctl._tcp, which\n"
	"'sparkctl publish' adds with the node's id, version and fabric addresses.\n"
	"Answers are collected for --reply-timeout seconds (default 1) and merged:\n"
	"by the node id first, then by the host name, so a node seen on two\n"
	"interfaces is one line.  No daemon, no D-Bus, nothing bound to port 5353.\n"
	"\n"
	"Interfaces: --iface, the fabric ports (--fabric), the default route's\n"
	"interface (--mgmt); by default the fabric ports that are up with an IPv4\n"
	"address, else every interface that is up with one (the output says which).\n"
	"This node's own answers are listed, marked as this host.\n"
	"\n"
	"--scan CIDR instead tries a TCP connection to port 22 of every address of\n"
	"CIDR, at most a /22 (1024 addresses).";

struct discover_args {
	struct discover_where where;
	const char *service, *scan, *connect_timeout;
	bool json;
};

/* A number of seconds (0.5, 2) in ms; false when it is not one. */
static bool seconds_ms(const char *s, unsigned *ms)
{
	uint64_t v;

	if (!s)
		return true;
	if (parse_milli(s, &v) < 0 || v == 0 || v > 600000)
		return false;
	*ms = (unsigned)v;
	return true;
}

/* The interfaces and the time to wait that w gives; false for a bad --reply-timeout. */
static bool where_request(const struct discover_where *w, struct discover_request *req)
{
	req->which = w->iface	 ? DISCOVER_IFACES_LIST
		     : w->fabric ? DISCOVER_IFACES_FABRIC
		     : w->mgmt	 ? DISCOVER_IFACES_MGMT
				 : DISCOVER_IFACES_DEFAULT;
	return seconds_ms(w->reply_timeout, &req->timeout_ms);
}

int discover_where_check(const char *cmd, const struct discover_where *w)
{
	struct discover_request req = { 0 };

	if ((w->iface != NULL) + w->fabric + w->mgmt > 1)
		return cmd_usage_error(cmd, "--iface, --fabric and --mgmt exclude each other");
	if (!where_request(w, &req))
		return cmd_usage_error(
			cmd, "--reply-timeout '%s' is not a number of seconds (0.1 to 600)",
			w->reply_timeout);
	return SPARKCTL_EXIT_OK;
}

static int check_args(const struct discover_args *a, unsigned *connect_ms)
{
	const struct discover_where *w = &a->where;

	if (a->scan && (w->iface || w->fabric || w->mgmt || a->service || w->reply_timeout))
		return cmd_usage_error("discover",
				       "--scan sweeps port 22; it takes no mDNS option (--iface, "
				       "--fabric, --mgmt, --service, --reply-timeout)");
	if (a->connect_timeout && !a->scan)
		return cmd_usage_error("discover", "--connect-timeout only applies to --scan");
	if (a->service && !streq(a->service, "_ssh._tcp") && !streq(a->service, "_sparkctl._tcp"))
		return cmd_usage_error("discover",
				       "unknown service '%s' (_ssh._tcp or _sparkctl._tcp)",
				       a->service);
	if (!seconds_ms(a->connect_timeout, connect_ms))
		return cmd_usage_error(
			"discover",
			"--connect-timeout '%s' is not a number of seconds (0.1 to 600)",
			a->connect_timeout);
	return discover_where_check("discover", w);
}

/* The command line into a; false when the command ends here with *ret. */
static bool parse_discover(const struct cmd *cmd, struct discover_args *a, unsigned *connect_ms,
			   int argc, char **argv, int *ret)
{
	const struct opt opts[] = {
		OPT_DISCOVER_WHERE(&a->where),
		OPT_CHOICE(0, "service", &a->service, "SERVICE", "_ssh._tcp|_sparkctl._tcp",
			   "ask for _ssh._tcp or _sparkctl._tcp only (default both)"),
		OPT_STRING(0, "scan", &a->scan, "CIDR",
			   "try port 22 of every address of CIDR instead (at most a /22)"),
		OPT_STRING(0, "connect-timeout", &a->connect_timeout, "S",
			   "--scan: give up a connection after S seconds (default 1)"),
		OPT_BOOL(0, "json", &a->json, "print JSON (docs/schemas/discover.schema.json)"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0) {
		*ret = cmd_parse_exit(n);
		return false;
	}
	*ret = check_args(a, connect_ms);
	return *ret == SPARKCTL_EXIT_OK;
}

static json_t *jstrvec(const struct strvec *sv)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < sv->nr; i++)
		jpush(arr, jstr(sv->v[i]));
	return arr;
}

static void join_list(const struct strvec *sv, struct strbuf *out)
{
	strbuf_reset(out);
	for (size_t i = 0; i < sv->nr; i++)
		strbuf_addf(out, "%s%s", i ? "," : "", sv->v[i]);
}

static void join_services(const struct strvec *sv, struct strbuf *out)
{
	strbuf_reset(out);
	for (size_t i = 0; i < sv->nr; i++)
		strbuf_addf(out, "%s%s", i ? " and " : "", sv->v[i]);
}

static void emit_host(struct emitter *e, const struct discover_host *h)
{
	struct strbuf sb = STRBUF_INIT;

	emit_row_open(e);
	if (h->this_host) {
		strbuf_addf(&sb, "%s (this host)", h->host);
		emit_cell(e, "host", jstr(h->host), sb.buf);
	} else {
		emit_cell(e, "host", jstr(h->host), h->host);
	}
	join_list(&h->names, &sb);
	emit_cell(e, "names", jstrvec(&h->names), sb.len ? sb.buf : NULL);
	join_list(&h->addresses, &sb);
	emit_cell(e, "addresses", jstrvec(&h->addresses), sb.len ? sb.buf : NULL);
	join_list(&h->ifaces, &sb);
	emit_cell(e, "interfaces", jstrvec(&h->ifaces), sb.len ? sb.buf : NULL);
	emit_cell(e, "id", h->id ? jstr(h->id) : json_null(), h->id);
	emit_cell(e, "version", h->version ? jstr(h->version) : json_null(), h->version);
	emit_value(e, "instances", jstrvec(&h->instances), NULL);
	emit_value(e, "services", jstrvec(&h->services), NULL);
	emit_value(e, "fabric_addresses", jstrvec(&h->fabric), NULL);
	emit_value(e, "port", h->port ? jint(h->port) : json_null(), NULL);
	emit_value(e, "this_host", jbool(h->this_host), NULL);
	emit_row_close(e);
	strbuf_release(&sb);
}

/* What the "chosen_by" of the JSON means, for the text. */
static const char *chosen_text(const char *chosen_by)
{
	return streq(chosen_by, "fabric") ? "the fabric ports"
	       : streq(chosen_by, "mgmt") ? "the default route's interface"
	       : streq(chosen_by, "up")	  ? "no fabric port is up: every interface that is up"
					  : "as --iface says";
}

static void emit_result(struct emitter *e, const struct discover_result *res, const char *scan)
{
	static const char *const headers[] = { "HOST",	     "NAME", "ADDRESSES",
					       "INTERFACES", "ID",   "VERSION" };
	struct strbuf sb = STRBUF_INIT;

	emit_value(e, "schema_version", jint(DISCOVER_SCHEMA_VERSION), NULL);
	emit_str(e, "method", NULL, scan ? "scan" : "mdns");
	if (scan) {
		emit_str(e, "scan", "port 22 open in %s:\n", scan);
	} else {
		emit_str(e, "chosen_by", NULL, res->chosen_by);
		emit_array_open(e, "interfaces");
		for (size_t i = 0; i < res->nr_ifaces; i++) {
			emit_object_open(e, NULL);
			emit_str(e, "name", NULL, res->ifaces[i].name);
			emit_str(e, "address", NULL, res->ifaces[i].address);
			emit_close(e);
			strbuf_addf(&sb, "%s%s (%s)", i ? ", " : "", res->ifaces[i].name,
				    res->ifaces[i].address);
		}
		emit_close(e);
		emit_value(e, "services", jstrvec(&res->services), NULL);
		emit_text(e, "asked on ");
		emit_str(e, NULL, "%s", sb.buf);
		join_services(&res->services, &sb);
		emit_str(e, NULL, " (%s)", chosen_text(res->chosen_by));
		emit_str(e, NULL, " for %s\n", sb.buf);
	}
	emit_table_open(e, "hosts", headers, ARRAY_SIZE(headers), 100);
	for (size_t i = 0; i < res->nr_hosts; i++)
		emit_host(e, &res->hosts[i]);
	emit_table_close(e);
	emit_array_open(e, "findings");
	for (size_t i = 0; i < res->findings.nr; i++)
		emit_str(e, NULL, "warning: %s\n", res->findings.v[i]);
	emit_close(e);
	strbuf_release(&sb);
}

/* The interfaces and addresses of this node, from the live probe. */
static int load_node(const char *cmd, struct inventory *inv)
{
	struct inventory_source src = { .no_nvidia_libraries = true };

	return inventory_source_load(cmd, &src, inv);
}

/* What discover_run() or discover_scan() returned r means: an exit status, the error printed. */
static int failure_exit(const char *cmd, int r, const struct discover_result *res)
{
	int ret = r == -E2BIG || r == -EINVAL ? cmd_usage_error(cmd, "%s", res->error)
		  : r == -ENODEV	      ? SPARKCTL_EXIT_UNAVAILABLE
					      : SPARKCTL_EXIT_ERROR;

	if (ret != SPARKCTL_EXIT_USAGE)
		cmd_error(cmd, "%s", res->error ? res->error : strerror(-r));
	return ret;
}

int discover_ask(const char *cmd, const struct discover_where *w, const char *service,
		 bool progress, struct discover_result *res)
{
	struct discover_request req = { 0 };
	struct strvec ifaces = STRVEC_INIT, services = STRVEC_INIT;
	struct inventory inv;
	int r, ret;

	inventory_init(&inv);
	if ((ret = load_node(cmd, &inv)) != SPARKCTL_EXIT_OK)
		goto out;
	where_request(w, &req);
	for (const char *p = w->iface; p && *p;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (len)
			strvec_push_nodup(&ifaces, xstrndup(p, len));
		p = comma ? comma + 1 : NULL;
	}
	if (service)
		strvec_push(&services, service);
	req.inv = &inv;
	req.iface_names = &ifaces;
	req.services = &services;
	progress_begin(progress, "%s: collecting answers", cmd);
	r = discover_run(&req, res);
	progress_end();
	ret = r < 0 ? failure_exit(cmd, r, res) : SPARKCTL_EXIT_OK;
out:
	inventory_release(&inv);
	strvec_clear(&ifaces);
	strvec_clear(&services);
	return ret;
}

static int print_result(const struct discover_args *a, const struct discover_result *res)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, a->json ? EMIT_JSON : EMIT_TEXT, &out, cmd_use_color());
	emit_result(&e, res, a->scan);
	emit_finish(&e, &out);
	fputs(out.buf, stdout);
	fflush(stdout);
	strbuf_release(&out);
	if (!res->nr_hosts)
		cmd_error("discover", "note: no host answered%s", a->scan ? " on port 22" : "");
	return SPARKCTL_EXIT_OK;
}

static int run_discover(const struct cmd *cmd, int argc, char **argv)
{
	struct discover_args a = { 0 };
	struct discover_result res;
	unsigned connect_ms = 0;
	int r, ret;

	if (!parse_discover(cmd, &a, &connect_ms, argc, argv, &ret))
		return ret;
	discover_result_init(&res);
	if (a.scan) {
		progress_begin(!a.json, "discover: trying port 22 of %s", a.scan);
		r = discover_scan(a.scan, connect_ms, &res);
		progress_end();
		ret = r < 0 ? failure_exit("discover", r, &res) : SPARKCTL_EXIT_OK;
	} else {
		ret = discover_ask("discover", &a.where, a.service, !a.json, &res);
	}
	if (ret == SPARKCTL_EXIT_OK)
		ret = print_result(&a, &res);
	discover_result_release(&res);
	return ret;
}

const struct cmd cmd_discover = {
	.name = "discover",
	.fn = run_discover,
	.summary = "find the other Sparks on the links (mDNS), or --scan a small subnet",
	.usage = discover_usage,
	.description = discover_description,
	.exit_status = "0 asked (also when no host answered: a note on stderr says so), 1 error "
		       "(a socket that cannot be made), 2 usage (also an unknown --iface, a --scan "
		       "wider than a /22), 3 no interface to ask on",
	.max_operands = 0,
};
