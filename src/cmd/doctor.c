/*
 * sparkctl doctor - every check, on this node or across the cluster, each
 * finding with the evidence and a fix (check/check.h).
 *
 * With -H or --hostfile the nodes' inventories are gathered by running
 * 'sparkctl topo --json' on each over SSH, in parallel; then the active
 * probes run: a don't-fragment ping over every fabric link at the
 * interface MTU, and a clock comparison.  --from inventories are checked
 * offline, without probes.
 */
#include "sparkctl.h"

#include <dirent.h>
#include <sys/socket.h>
#include <time.h>

#include "check/check.h"
#include "cluster/cluster_file.h"
#include "cmd/cmd.h"
#include "remote/session.h"
#include "inventory/inventory_json.h"
#include "lib/clock.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/ssh.h"
#include "serve/serve_ask.h"
#include "serve/serve_plan.h"
#include "slurm/health.h"
#include "view/doctor_view.h"
#include "view/progress.h"

/* Seconds one remote 'sparkctl topo --json' may take, connection included. */
#define REMOTE_TIMEOUT_MS 30000
#define PING_TIMEOUT_MS	  20000

static const char *const doctor_usage[] = {
	"sparkctl doctor [--root DIR | --from FILE...] [--nodes N] [options]",
	"sparkctl doctor -H HOST,... | --hostfile FILE [--remote-sparkctl PATH] [options]",
	"sparkctl doctor [--cluster FILE] [options]   (the nodes of the cluster file)",
	"sparkctl doctor --local [options]",
	"sparkctl doctor [-H HOST,...] --engine ENGINE [--image IMAGE] [--backend mp|ray] "
	"[options]",
	"sparkctl doctor --slurm-health [--slurm-node NAME] [--root DIR]   (Slurm's "
	"HealthCheckProgram)",
	"sparkctl doctor --list [--markdown | --json]",
	NULL,
};

static const char doctor_description[] =
	"Check this node (or every node) for what makes distributed jobs fail or run\n"
	"slow, and say how to fix it: RDMA stack and ports, both twins of each cabled\n"
	"port, addresses and GIDs, MTU, degraded links and PCIe, the NCCL settings in\n"
	"effect (environment and configuration files), GPUDirect, limits, software.\n"
	"Across nodes (-H, --hostfile, several --from) it also checks names, the\n"
	"fabric plan, HCA pairing, versions and clocks, and (over SSH) pings every\n"
	"fabric link at its MTU with fragmentation forbidden.\n"
	"\n"
	"--only and --skip take check ids or groups ('fabric' is every fabric.* check):\n"
	"'sparkctl doctor --list' lists them.  A --hostfile names one node per line,\n"
	"'host' or 'host slots=N' as launch reads it (slots are not used here); '#'\n"
	"starts a comment.\n"
	"\n"
	"Without -H or --hostfile, doctor checks the nodes of the cluster file when one\n"
	"is in effect ('sparkctl cluster path' says which; docs/cluster.md), and this\n"
	"node alone when none is; --local (or -H localhost) checks this node alone\n"
	"whatever the cluster file says.  --root and --from never read it.\n"
	"\n"
	"--engine adds the preflight of 'sparkctl serve ENGINE' on the same nodes (the\n"
	"'serve' checks, with the engine's default ports): the plan, tensor x pipeline\n"
	"parallel against the GPUs, the engine's ports free on each node, with --image\n"
	"the image on every node, and the NCCL the engine loads against the nodes' own\n"
	"(version and build id).\n"
	"\n"
	"--slurm-health is Slurm's HealthCheckProgram (and a Prolog): this node's\n"
	"checks, then one line saying what was done.  A FAIL drains the node in\n"
	"Slurm, the reason 'sparkctl: CHECK MESSAGE'; a node that sparkctl drained\n"
	"is resumed once every check passes; a node drained by someone else is left\n"
	"as it is, reason and all.  The node is --slurm-node, else $SLURMD_NODENAME,\n"
	"else the short host name (docs/slurm.md).";

/*
 * The whole of a --slurm-health run, its scontrol calls included: Slurm
 * kills a HealthCheckProgram still running at 60 s, and one that is
 * killed leaves no word of why.  One scontrol answers within slurmctld's
 * MessageTimeout (10 s by default); the checks take a fraction of a second.
 */
#define SLURM_HEALTH_DEADLINE_MS 20000

struct doctor_args {
	const char *title; /* in messages: "doctor", "storage check" */
	const char *hosts, *hostfile, *cluster, *root, *remote_sparkctl, *slurm_node, *slurm_user;
	const char *engine, *image, *backend; /* --engine: serve's preflight too */
	struct serve_options serve;	      /* --engine's, as parsed */
	struct strvec from, only, skip;
	unsigned nodes, fanout;
	bool json, quiet, list, markdown, local, slurm_health;
};

/*
 * The active probes, all at once over the connections gather() opened:
 *  - every node's clock: offset = remote time - midpoint of the round trip;
 *  - a ping over every fabric link, from its first end, at that interface's
 *    MTU, fragmentation forbidden.  All the pings leaving one node run in
 *    one session of 'sparkctl agent ping' there, at once.
 */
/* agent ping's results: {"schema_version", "results"}, or the bare array of older nodes. */
static const json_t *ping_results(const json_t *doc)
{
	return json_is_array(doc) ? doc : json_object_get(doc, "results");
}

static void probe(struct remote_session *rm, struct doctor_cluster *c, unsigned parallel)
{
	const char *date_argv[] = { "date", "+%s.%N", NULL };
	size_t n = c->nr_nodes, nr;
	struct fabric_link *links;
	/* jobs[0..n) ping from node i, jobs[n..2n) read node i's clock */
	struct run_job *jobs = xcalloc(2 * n + 1, sizeof(*jobs));

	cluster_fabric_links(c, &links, &nr);
	for (size_t i = 0; i < nr; i++) {
		struct link_probe *p = ARRAY_PUSH(c->links, c->nr_links);
		p->from = links[i].a;
		p->to = links[i].b;
		p->from_if = xstrdup(links[i].a_if);
		p->to_addr = xstrdup(links[i].b_addr);
		p->mtu = links[i].a_mtu > 28 ? links[i].a_mtu : 1500;
	}
	for (size_t node = 0; node < n; node++) {
		struct strvec words = STRVEC_INIT;
		const struct doctor_node *dn = &c->nodes[node];
		run_job_init(&jobs[node]);
		run_job_init(&jobs[n + node]);
		strvec_push(&words, "agent");
		strvec_push(&words, "ping");
		for (size_t i = 0; i < c->nr_links; i++) {
			if (c->links[i].from != node)
				continue;
			strvec_push(&words, c->links[i].from_if);
			strvec_push(&words, c->links[i].to_addr);
			strvec_pushf(&words, "%" PRId64, c->links[i].mtu - 28);
		}
		/* A node with nothing to do gets a job that does nothing. */
		if (words.nr == 2 ||
		    remote_session_sparkctl_argv(rm, dn->host, (const char *const *)words.v,
						 &jobs[node].argv) < 0)
			strvec_push(&jobs[node].argv, "true");
		if (!dn->inspected || host_is_local(dn->host) ||
		    remote_session_argv(rm, dn->host, date_argv, &jobs[n + node].argv) < 0)
			strvec_push(&jobs[n + node].argv, "true");
		strvec_clear(&words);
	}
	run_jobs(jobs, 2 * n, parallel, PING_TIMEOUT_MS, 1 << 20);
	for (size_t node = 0; node < n; node++) {
		const struct run_job *pj = &jobs[node], *cj = &jobs[n + node];
		json_t *doc = NULL;
		json_error_t jerr;
		size_t k = 0;
		if (pj->status == 0)
			doc = json_loadb(pj->out.buf, pj->out.len, 0, &jerr);
		for (size_t i = 0; i < c->nr_links; i++) {
			struct link_probe *p = &c->links[i];
			if (p->from != node)
				continue;
			const json_t *r = json_array_get(ping_results(doc), k++);
			if (json_is_object(r)) {
				const char *d = json_string_value(json_object_get(r, "detail"));
				p->ok = json_is_true(json_object_get(r, "ok"));
				p->detail = d ? xstrdup(d) : NULL;
			} else {
				p->detail = pj->timed_out ? xstrdup("timed out")
					    : pj->err.len ? remote_first_line(pj->err.buf)
							  : xstrdup("no answer from the probe");
			}
		}
		json_decref(doc);
		char *end;
		double remote = strtod(cj->out.buf, &end);
		if (cj->status == 0 && end != cj->out.buf && strcmp(cj->argv.v[0], "true") != 0) {
			c->nodes[node].has_clock = true;
			c->nodes[node].clock_offset = remote - (cj->started_at + cj->ended_at) / 2;
		}
	}
	for (size_t i = 0; i < 2 * n; i++)
		run_job_release(&jobs[i]);
	c->probed = true;
	free(jobs);
	free(links);
}

/*
 * The nodes to check over SSH: -H, --hostfile, or (host_list_default())
 * the Slurm allocation's or the cluster file's.  0
 * with none of them (this node is checked, as with --local), 1 with hosts,
 * -1 after a usage error.
 */
static int load_hosts(const struct doctor_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int r;

	if (a->from.nr || a->root || a->local)
		return 0;
	if (a->hosts || a->hostfile)
		r = host_list_from_options(a->hosts, a->hostfile, NULL, NULL, hosts, &err) < 0 ? -1
											       : 1;
	else
		r = host_list_default(a->cluster, hosts, &err);
	if (r < 0) {
		cmd_usage_error(a->title, "%s", err.buf);
		r = -1;
	}
	strbuf_release(&err);
	return r;
}

/*
 * On each node, ssh in batch mode to every other node (by the name doctor
 * was given) and say which answered: one session per node, over the
 * connections already open.
 */
static const char mesh_script[] =
	"for h; do "
	"if ssh -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=yes \"$h\" true "
	"< /dev/null > /dev/null 2>&1; then echo \"ok $h\"; else echo \"no $h\"; fi; done";

static void probe_mesh(struct remote_session *rm, struct doctor_cluster *c, unsigned parallel)
{
	size_t n = c->nr_nodes;
	struct run_job *jobs = xcalloc(n + 1, sizeof(*jobs));

	c->mesh = xcalloc(n * n + 1, sizeof(*c->mesh));
	for (size_t i = 0; i < n * n; i++)
		c->mesh[i] = -1;
	for (size_t i = 0; i < n; i++) {
		struct strvec words = STRVEC_INIT;
		run_job_init(&jobs[i]);
		if (!c->nodes[i].inspected)
			continue;
		strvec_pushl(&words, "sh", "-c", mesh_script, "sh", NULL);
		for (size_t k = 0; k < n; k++)
			if (k != i)
				strvec_push(&words, c->nodes[k].host);
		remote_session_argv(rm, c->nodes[i].host, (const char *const *)words.v,
				    &jobs[i].argv);
		strvec_clear(&words);
	}
	run_jobs(jobs, n, parallel, REMOTE_TIMEOUT_MS, 1 << 20);
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < n && jobs[i].argv.nr; k++) {
			if (k == i)
				continue;
			char *ok = xasprintf("ok %s\n", c->nodes[k].host);
			char *no = xasprintf("no %s\n", c->nodes[k].host);
			c->mesh[i * n + k] = strstr(jobs[i].out.buf, ok)   ? 1
					     : strstr(jobs[i].out.buf, no) ? 0
									   : -1;
			free(ok);
			free(no);
		}
		run_job_release(&jobs[i]);
	}
	free(jobs);
}

/* munge or unmunge with the socket of the node's slurm.conf (AuthInfo), else munge's default. */
static int munge_argv(struct remote_session *rm, const struct doctor_node *n, const char *prog,
		      struct strvec *out)
{
	const char *socket = n->inv.slurm->munge_socket;
	/* munge: -n, no payload; unmunge reads the credential from stdin. */
	bool encode = streq(prog, "munge");
	const char *with[] = { prog, "--socket", socket, encode ? "-n" : NULL, NULL };
	const char *plain[] = { prog, encode ? "-n" : NULL, NULL };

	return remote_session_argv(rm, n->host, socket ? with : plain, out);
}

/* Why unmunge (or munge) failed: its STATUS line, else its error, as a line for messages. */
static char *munge_failure(const struct run_job *j, const char *prog)
{
	const char *status = strstr(j->out.buf, "STATUS:");

	if (j->spawn_error || j->timed_out)
		return remote_failure(j, prog, REMOTE_TIMEOUT_MS);
	/* 127: the shell over ssh found no such command. */
	if (j->status == 127)
		return xasprintf("%s is not installed (command not found)", prog);
	if (status && !strstr(status, "Success")) {
		status += strlen("STATUS:");
		while (*status == ' ' || *status == '\t')
			status++;
		return remote_first_line(status);
	}
	return remote_first_line(j->err.len ? j->err.buf : j->out.buf);
}

/*
 * slurm.munge: 'munge -n' on the controller (SlurmctldHost, when it is
 * among the nodes; else the first Slurm node), its credential given on the
 * stdin of 'unmunge' on every Slurm node (munge -n | ssh N unmunge), each
 * through the socket its slurm.conf names.  The credential is made on a
 * node, not here: this machine need not be one of the cluster's, and a
 * munged of its own may hold another cluster's key.  The controller's key
 * is the one every node must share.
 */
static void probe_munge(const char *title, struct remote_session *rm, struct doctor_cluster *c,
			unsigned parallel)
{
	size_t n = c->nr_nodes, enc = n;
	struct run_job mk, *jobs;

	for (size_t i = 0; i < n; i++) {
		const struct inv_slurm *s = c->nodes[i].inspected ? c->nodes[i].inv.slurm : NULL;
		if (!s)
			continue;
		if (enc == n)
			enc = i;
		if (s->controller && s->node_name && streq(s->controller, s->node_name)) {
			enc = i;
			break;
		}
	}
	if (enc == n)
		return;
	c->munge_probed = true;
	c->munge_encoder = enc;
	progress_set("%s: trying a munge credential of %s on the Slurm nodes", title,
		     c->nodes[enc].host);
	run_job_init(&mk);
	if (munge_argv(rm, &c->nodes[enc], "munge", &mk.argv) < 0) {
		c->munge_encode_error = xstrdup("not a usable host name");
		goto out_mk;
	}
	mk.input = "";
	run_jobs(&mk, 1, 1, REMOTE_TIMEOUT_MS, 1 << 16);
	if (mk.status != 0 || !mk.out.len) {
		c->munge_encode_error = munge_failure(&mk, "munge");
		goto out_mk;
	}
	jobs = xcalloc(n + 1, sizeof(*jobs));
	for (size_t i = 0; i < n; i++) {
		struct doctor_node *dn = &c->nodes[i];
		run_job_init(&jobs[i]);
		jobs[i].input = mk.out.buf;
		jobs[i].input_len = mk.out.len;
		if (!dn->inspected || !dn->inv.slurm) {
			/* Not a Slurm node: a job that does nothing. */
			strvec_push(&jobs[i].argv, "true");
		} else if (munge_argv(rm, dn, "unmunge", &jobs[i].argv) < 0) {
			strvec_push(&jobs[i].argv, "true");
			dn->munge = -1;
			dn->munge_detail = xstrdup("not a usable host name");
		}
	}
	run_jobs(jobs, n, parallel, REMOTE_TIMEOUT_MS, 1 << 16);
	for (size_t i = 0; i < n; i++) {
		struct doctor_node *dn = &c->nodes[i];
		if (dn->inspected && dn->inv.slurm && !dn->munge_detail) {
			dn->munge = jobs[i].status == 0 ? 1 : -1;
			if (dn->munge < 0)
				dn->munge_detail = munge_failure(&jobs[i], "unmunge");
		}
		run_job_release(&jobs[i]);
	}
	free(jobs);
out_mk:
	run_job_release(&mk);
}

/* The cluster file in effect, for cluster.file: 0, or -1 when there is none (or it is unreadable).
 */
static int load_cluster_file(const struct doctor_args *a, struct cluster_file *cf)
{
	struct cluster_file_location loc;
	struct strbuf err = STRBUF_INIT;
	int r = -1;

	if (cluster_file_locate(a->cluster, &loc) == 0 && loc.exists &&
	    cluster_file_load(cf, loc.path.buf, &err) == 0)
		r = 0;
	cluster_file_location_release(&loc);
	strbuf_release(&err);
	return r;
}

static void add_node(struct doctor_cluster *c, const char *host)
{
	struct doctor_node *n = ARRAY_PUSH(c->nodes, c->nr_nodes);
	n->host = xstrdup(host);
	inventory_init(&n->inv);
}

/* Fill the cluster from --from files, the local probe, or the hosts. */
static int collect(const struct doctor_args *a, struct host_list *hosts, struct doctor_cluster *c,
		   struct remote_session *rm)
{
	bool from_cluster_file = !a->hosts && !a->hostfile;
	int ret = SPARKCTL_EXIT_OK;

	if (a->from.nr) {
		for (size_t i = 0; i < a->from.nr; i++) {
			struct strbuf err = STRBUF_INIT;
			add_node(c, a->from.v[i]);
			struct doctor_node *n = &c->nodes[c->nr_nodes - 1];
			if (inventory_load(&n->inv, a->from.v[i], &err) < 0) {
				n->error = strbuf_detach(&err, NULL);
				inventory_init(&n->inv);
			} else {
				n->inspected = true;
			}
			strbuf_release(&err);
		}
		return ret;
	}
	if (!hosts->nr) {
		struct inventory_source src = { .root = a->root,
						.storage_target = true,
						.slurm_user = a->slurm_user };
		add_node(c, "localhost");
		ret = inventory_source_load(a->title, &src, &c->nodes[0].inv);
		c->nodes[0].inspected = ret == SPARKCTL_EXIT_OK;
		if (c->nodes[0].inspected && c->nodes[0].inv.sys.hostname) {
			free(c->nodes[0].host);
			c->nodes[0].host = xstrdup(c->nodes[0].inv.sys.hostname);
		}
		return ret;
	}
	for (size_t i = 0; i < hosts->nr; i++)
		add_node(c, hosts->hosts[i].name);
	progress_begin(!a->json && !a->quiet, "%s: inspecting %zu node%s", a->title, c->nr_nodes,
		       c->nr_nodes == 1 ? "" : "s");
	remote_gather_inventories(rm, c, a->fanout, REMOTE_TIMEOUT_MS);
	/*
	 * New connections are bounded by --fanout; the probes are sessions over
	 * the connections already open, which are cheap.
	 */
	unsigned sessions = a->fanout * 4 > 256 ? 256 : a->fanout * 4;
	progress_set("%s: pinging the fabric links of %zu node%s", a->title, c->nr_nodes,
		     c->nr_nodes == 1 ? "" : "s");
	probe(rm, c, sessions);
	probe_munge(a->title, rm, c, sessions);
	/* A cluster that join made promises key logins between every pair. */
	if (from_cluster_file && c->nr_nodes > 1)
		probe_mesh(rm, c, sessions);
	progress_end();
	return ret;
}

/* --list: the checks as text, JSON (the emitter) or docs/checks.md. */
static int print_list(bool markdown, bool json)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	if (markdown) {
		checks_markdown(&out);
	} else {
		emit_init(&e, json ? EMIT_JSON : EMIT_TEXT, &out, false);
		doctor_emit_checks(&e);
		emit_finish(&e, &out);
	}
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return SPARKCTL_EXIT_OK;
}

/*
 * Keep the report, with its time, as the state file doctor-last.json
 * (replaced whole).  A state directory that cannot be written costs the
 * report nothing: status then says no doctor ran.
 */
/* The report as JSON (docs/doctor.md). */
static json_t *report_json(const struct doctor_cluster *c, const struct findings *f)
{
	struct emitter e;
	json_t *doc;

	emit_init(&e, EMIT_JSON, NULL, false);
	doctor_emit(c, f, false, &e);
	doc = emit_document(&e);
	emit_release(&e);
	return doc;
}

static void save_report(const struct doctor_cluster *c, const struct findings *f, bool quiet)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	json_t *doc = report_json(c, f);

	jset(doc, "time", jint((int64_t)time(NULL)));
	if (cmd_state_path("doctor-last.json", true, &path) == 0 &&
	    json_save(doc, path.buf, &err) < 0 && !quiet)
		cmd_error("doctor", "note: the report was not kept for 'sparkctl status': %s",
			  err.buf);
	json_decref(doc);
	strbuf_release(&path);
	strbuf_release(&err);
}

/* A name useradd takes (letters, digits, '.', '_', '-'; not first '-'), at most 32 bytes. */
static bool user_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len && len <= 32 && name[0] != '-' &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       len;
}

/* --engine, --image and --backend into a->serve: 0, or -1 after a usage error. */
static int parse_engine(const char *title, struct doctor_args *a)
{
	struct serve_options *o = &a->serve;
	struct strbuf err = STRBUF_INIT;

	if (!a->engine) {
		if (!a->image && !a->backend)
			return 0;
		cmd_usage_error(title, "%s goes with --engine", a->image ? "--image" : "--backend");
		return -1;
	}
	if (serve_engine_choose(a->engine, a->backend, o, &err) < 0) {
		cmd_usage_error(title, "%s", err.buf);
		strbuf_release(&err);
		return -1;
	}
	if (a->slurm_health) {
		cmd_usage_error(title, "--engine is not a check of --slurm-health");
		return -1;
	}
	/* Only the ports, the image and NCCL are checked: the model is a name in the plan. */
	o->model = "MODEL";
	o->image = a->image;
	o->port = serve_default_port(o->engine);
	o->master_port = serve_default_master_port(o->engine, o->backend);
	return 0;
}

/*
 * The command line into a and the checks it selects into sel; -1 when the
 * command ends here with *ret (--help, --list, a usage error).
 */
static int parse_doctor(const struct cmd *cmd, const struct doctor_mode *mode,
			struct doctor_args *a, struct check_selection *sel, int argc, char **argv,
			int *ret)
{
	const struct opt all_opts[] = {
		OPT_STRING('H', "hosts", &a->hosts, "HOST,...", "the nodes (ranges: spark[1-4])"),
		OPT_STRING(0, "hostfile", &a->hostfile, "FILE", "the nodes, from an MPI hostfile"),
		OPT_STRING(
			0, "cluster", &a->cluster, "FILE",
			"the cluster file whose nodes to check without -H (env SPARKCTL_CLUSTER)"),
		OPT_BOOL(0, "local", &a->local,
			 "check this node alone, even where a cluster file is in effect"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_UINT(0, "fanout", &a->fanout, "N", "nodes contacted at once (default 16)"),
		OPT_STRING(0, "root", &a->root, "DIR", "check the host below DIR (a capture)"),
		OPT_LIST(0, "from", &a->from, "FILE", "check saved inventories; repeat per node"),
		OPT_UINT(0, "nodes", &a->nodes, "N", "cluster size, when checking one node"),
		OPT_LIST(0, "only", &a->only, "ID,...", "run only these checks or groups"),
		OPT_LIST(0, "skip", &a->skip, "ID,...", "skip these checks or groups"),
		OPT_BOOL('q', "quiet", &a->quiet,
			 "only failures, warnings and the summary; no notices"),
		OPT_BOOL(0, "json", &a->json, "print the report (or --list) as JSON"),
		OPT_BOOL(0, "list", &a->list, "list the checks (ids, groups, scope)"),
		OPT_BOOL(0, "markdown", &a->markdown, "with --list: as docs/checks.md"),
		OPT_BOOL(0, "slurm-health", &a->slurm_health,
			 "Slurm's HealthCheckProgram: drain this node on a FAIL, resume it after"),
		OPT_STRING(0, "slurm-node", &a->slurm_node, "NAME",
			   "with --slurm-health: the node's Slurm name (default $SLURMD_NODENAME, "
			   "the short host name)"),
		OPT_STRING(0, "slurm-user", &a->slurm_user, "NAME",
			   "slurm.uid: the job user whose uid and gid must agree on the nodes "
			   "(default: the user doctor logs in as)"),
		OPT_CHOICE(0, "engine", &a->engine, "ENGINE", "vllm|sglang|trtllm|llamacpp",
			   "also the preflight of 'sparkctl serve ENGINE': vllm, sglang, trtllm or "
			   "llamacpp"),
		OPT_STRING(0, "image", &a->image, "IMAGE",
			   "with --engine: the docker image it would run in (serve --image)"),
		OPT_CHOICE(0, "backend", &a->backend, "BACKEND", "mp|ray",
			   "with --engine vllm: its backend, mp (default) or ray"),
		OPT_HELP(),
		OPT_END(),
	};
	/* A command of one group of checks has no choice of checks, nor the list of all. */
	static const char *const group_only[] = { "only",	"skip",	      "list",
						  "markdown",	"nodes",      "slurm-health",
						  "slurm-node", "slurm-user", "engine",
						  "image",	"backend" };
	struct opt opts[ARRAY_SIZE(all_opts)];
	const char *title = cmd->title ? cmd->title : cmd->name;
	size_t nr_opts = 0;
	struct strbuf err = STRBUF_INIT;
	int n;

	for (size_t i = 0; i < ARRAY_SIZE(all_opts); i++) {
		bool keep = true;
		for (size_t k = 0; mode->group && k < ARRAY_SIZE(group_only); k++)
			if (all_opts[i].long_name && streq(all_opts[i].long_name, group_only[k]))
				keep = false;
		if (!keep)
			continue;
		opts[nr_opts] = all_opts[i];
		if (mode->group && opts[nr_opts].long_name &&
		    streq(opts[nr_opts].long_name, "json"))
			opts[nr_opts].help = "print the report as JSON";
		nr_opts++;
	}
	if (mode->group)
		strvec_push(&a->only, mode->group);
	n = cmd_parse(cmd, opts, argc, argv);
	*ret = SPARKCTL_EXIT_USAGE;
	if (n < 0)
		*ret = cmd_parse_exit(n);
	else if (a->list && a->markdown && a->json)
		cmd_usage_error(title, "--markdown and --json cannot be combined");
	else if (a->list)
		*ret = print_list(a->markdown, a->json);
	else if ((a->hosts || a->hostfile) + (a->from.nr > 0) + (a->root != NULL) > 1)
		cmd_usage_error(title, "-H/--hostfile, --from and --root cannot be combined");
	else if (a->local && (a->hosts || a->hostfile || a->cluster))
		cmd_usage_error(title, "--local checks this node: not with -H, --hostfile or "
				       "--cluster");
	else if (a->slurm_node && !a->slurm_health)
		cmd_usage_error(title, "--slurm-node goes with --slurm-health");
	else if (a->slurm_health &&
		 (a->hosts || a->hostfile || a->cluster || a->from.nr || a->json || a->list))
		cmd_usage_error(title, "--slurm-health checks this node and prints one line: not "
				       "with -H, --hostfile, --cluster, --from, --json or --list");
	else if (a->slurm_node && !slurm_node_name_valid(a->slurm_node))
		cmd_usage_error(title, "--slurm-node: '%s' is not a Slurm node name",
				a->slurm_node);
	else if (a->slurm_user && !user_name_valid(a->slurm_user))
		cmd_usage_error(title, "--slurm-user: '%s' is not a user name", a->slurm_user);
	else if (a->fanout == 0)
		cmd_usage_error(title, "--fanout must be at least 1");
	else if (parse_engine(title, a) < 0)
		*ret = SPARKCTL_EXIT_USAGE;
	else if (check_select(sel, &a->only, &a->skip, &err) < 0)
		cmd_usage_error(title, "%s", err.buf);
	else
		*ret = SPARKCTL_EXIT_OK;
	strbuf_release(&err);
	/* --list is done once listed. */
	return n >= 0 && *ret == SPARKCTL_EXIT_OK && !a->list ? n : -1;
}

/* The report as text or JSON; the exit status it makes. */
static int print_report(const struct doctor_args *a, const struct doctor_cluster *c,
			const struct findings *f)
{
	struct strbuf out = STRBUF_INIT;
	struct doctor_summary s;

	if (a->json) {
		json_t *doc = report_json(c, f);
		json_to_strbuf(doc, &out);
		json_decref(doc);
	} else {
		struct emitter e;
		emit_init(&e, EMIT_TEXT, &out, cmd_use_color());
		doctor_emit(c, f, a->quiet, &e);
		emit_release(&e);
	}
	fputs(out.buf, stdout);
	strbuf_release(&out);
	doctor_summarize(c, f, &s);
	/* What kept a node from being checked outranks what was found on the others. */
	if (s.uninspected)
		return a->from.nr ? SPARKCTL_EXIT_ERROR : SPARKCTL_EXIT_UNAVAILABLE;
	return s.counts[CHECK_FAIL] ? SPARKCTL_EXIT_PROBLEMS : SPARKCTL_EXIT_OK;
}

/* Move the findings of all whose check sel enables into out; all is emptied. */
static void keep_selected(const struct check_selection *sel, struct findings *all,
			  struct findings *out)
{
	for (size_t i = 0; i < all->nr; i++) {
		const struct check *chk = check_lookup(all->items[i].check_id);
		if (!chk || !sel->enabled[chk - checks])
			continue;
		*ARRAY_PUSH(out->items, out->nr) = all->items[i];
		all->items[i] = (struct finding){ 0 };
		strvec_init(&all->items[i].evidence);
	}
	findings_release(all);
}

/*
 * serve.plan: the plan could not be made (r, err say why), unless for what
 * serve.parallel has failed on already, with its own fix.
 */
static void plan_failed(int r, const char *err, struct findings *out)
{
	struct finding *f;

	for (size_t i = 0; i < out->nr; i++)
		if (streq(out->items[i].check_id, "serve.parallel") &&
		    out->items[i].status == CHECK_FAIL)
			return;
	f = ARRAY_PUSH(out->items, out->nr);
	f->check_id = "serve.plan";
	f->node = xstrdup("cluster");
	f->status = CHECK_FAIL;
	f->message = xstrdup(err);
	f->fix = xstrdup(r == -ENODEV ? "connect and bring up a fabric port on the node ('sparkctl "
					"doctor --only fabric' says what is missing)"
				      : "give every node an address on the head's fabric subnet "
					"('sparkctl doctor --only fabric' says what is missing)");
	strvec_init(&f->evidence);
}

/*
 * Offline (--from, --root): of what the nodes say, only their own NCCL is
 * in their inventories; the image cannot be asked about.
 */
static void check_nccl_offline(const struct serve_plan *plan, const struct serve_node_input *in,
			       struct findings *out)
{
	struct serve_node_facts *facts = xcalloc(plan->nr_nodes + 1, sizeof(*facts));

	for (size_t i = 0; i < plan->nr_nodes; i++) {
		serve_facts_host_nccl(&facts[i], in[i].inv);
		if (plan->image)
			facts[i].error = xstrdup("a saved inventory: only the node can say");
	}
	serve_check_nccl(plan, facts, out);
	for (size_t i = 0; i < plan->nr_nodes; i++)
		serve_node_facts_release(&facts[i]);
	free(facts);
}

/*
 * --engine: the preflight of 'sparkctl serve' (serve/serve_plan.h) on the
 * inspected nodes, the first the head - serve.parallel, the plan, and
 * (live) what the nodes say: ports, image, NCCL.  here: the one node is
 * this host, named by its hostname (no -H).  Only the selected checks'
 * findings are kept.
 */
static void run_engine_checks(const struct doctor_args *a, const struct check_selection *sel,
			      const struct doctor_cluster *c, struct remote_session *rm, bool here,
			      struct findings *out)
{
	const struct serve_ask_options ask = { .title = a->title,
					       .progress = !a->json && !a->quiet,
					       .here = here };
	struct serve_node_input *in = xcalloc(c->nr_nodes + 1, sizeof(*in));
	struct strbuf err = STRBUF_INIT;
	struct findings all = { 0 };
	struct serve_plan plan = { 0 };
	size_t n = 0;
	int r;

	for (size_t i = 0; i < c->nr_nodes; i++)
		if (c->nodes[i].inspected)
			in[n++] = (struct serve_node_input){ c->nodes[i].host, &c->nodes[i].inv };
	if (!n)
		goto out;
	serve_check_parallel(&a->serve, in, n, &all);
	if ((r = serve_plan_build(&a->serve, in, n, &plan, &err)) < 0)
		plan_failed(r, err.buf, &all);
	else if (a->from.nr || a->root)
		check_nccl_offline(&plan, in, &all);
	else
		serve_check_nodes(rm, &plan, in, &ask, &all);
	keep_selected(sel, &all, out);
out:
	serve_plan_release(&plan);
	strbuf_release(&err);
	free(in);
}

/* The node's name in Slurm: --slurm-node, $SLURMD_NODENAME, the short host name. */
static char *slurm_node_name(const struct doctor_args *a, const struct doctor_node *n)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (a->slurm_node)
		return xstrdup(a->slurm_node);
	if (env && *env)
		return xstrdup(env);
	return xstrndup(n->host, strcspn(n->host, "."));
}

/* What is left of the health run until deadline (monotonic ms); 0 when it has passed. */
static unsigned slurm_health_left_ms(uint64_t deadline)
{
	uint64_t now = monotonic_ms();

	return now >= deadline ? 0 : (unsigned)(deadline - now);
}

/*
 * The health run's deadline passed before scontrol (what) answered for the
 * node name, or before it could run: what that means for the node, in err.
 */
static void slurm_health_out_of_time(const char *name, const char *what, bool updating,
				     struct strbuf *err)
{
	strbuf_reset(err);
	strbuf_addf(err,
		    "scontrol %s gave no answer within the health run's %d s (Slurm ends a "
		    "HealthCheckProgram at 60 s): %s %s",
		    what, SLURM_HEALTH_DEADLINE_MS / 1000, name,
		    updating ? "may or may not have been changed" : "was left as it is");
}

/*
 * --slurm-health: drain, resume or leave the node; one line; the exit
 * status.  Every scontrol shares what is left of the run until deadline.
 */
static int slurm_health(const struct doctor_args *a, const struct doctor_cluster *c,
			const struct findings *f, uint64_t deadline)
{
	struct strbuf reason = STRBUF_INIT, err = STRBUF_INIT, line = STRBUF_INIT;
	struct slurm_node_show node;
	char *name = slurm_node_name(a, &c->nodes[0]);
	size_t fails = slurm_health_reason(f, &reason);
	int ret = SPARKCTL_EXIT_UNAVAILABLE, r = -EINVAL;
	enum slurm_health_action act;
	unsigned left;

	memset(&node, 0, sizeof(node));
	if (!slurm_node_name_valid(name)) {
		cmd_error(a->title, "'%s' is not a Slurm node name: give --slurm-node", name);
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	/* run_jobs() takes 0 ms as no limit: a run out of time asks nothing more. */
	left = slurm_health_left_ms(deadline);
	r = left ? slurm_node_show(name, left, &node, &err) : -ETIMEDOUT;
	if (r == -ETIMEDOUT)
		slurm_health_out_of_time(name, "show node", false, &err);
	if (r < 0)
		goto out;
	act = slurm_health_decide(reason.buf, &node);
	if (act == SLURM_HEALTH_DRAIN || act == SLURM_HEALTH_RESUME) {
		const char *what =
			act == SLURM_HEALTH_DRAIN ? "update state=drain" : "update state=resume";
		left = slurm_health_left_ms(deadline);
		r = left ? slurm_node_update(name, act == SLURM_HEALTH_DRAIN ? reason.buf : NULL,
					     left, &err)
			 : -ETIMEDOUT;
		if (r == -ETIMEDOUT)
			slurm_health_out_of_time(name, what, left > 0, &err);
	}
	if (r < 0)
		goto out;
	strbuf_addf(&line, "%s: ", name);
	if (act == SLURM_HEALTH_DRAIN)
		strbuf_addf(&line, "drained: %s", reason.buf);
	else if (act == SLURM_HEALTH_STAY_DRAINED)
		strbuf_addf(&line, "stays drained: %s", reason.buf);
	else if (act == SLURM_HEALTH_RESUME)
		strbuf_addstr(&line, "resumed: every check passes (drained for: ");
	else if (act == SLURM_HEALTH_NOT_OURS)
		strbuf_addf(&line, "%s; %s by someone else (", fails ? reason.buf : "healthy",
			    node.drain ? "drained" : "down");
	else
		strbuf_addstr(&line, "healthy: no check failed");
	/* Slurm's reason is anyone's text: shown escaped. */
	if (act == SLURM_HEALTH_RESUME || act == SLURM_HEALTH_NOT_OURS) {
		strbuf_addstr_printable(&line, node.reason);
		strbuf_addstr(&line, act == SLURM_HEALTH_RESUME ? ")" : "): left as it is");
	}
	strbuf_addch(&line, '\n');
	fputs(line.buf, stdout);
	ret = fails ? SPARKCTL_EXIT_PROBLEMS : SPARKCTL_EXIT_OK;
out:
	if (r < 0 && ret == SPARKCTL_EXIT_UNAVAILABLE)
		cmd_error(a->title, "%s", err.buf);
	slurm_node_show_release(&node);
	strbuf_release(&reason);
	strbuf_release(&err);
	strbuf_release(&line);
	free(name);
	return ret;
}

int doctor_run(const struct cmd *cmd, int argc, char **argv, const struct doctor_mode *mode)
{
	struct doctor_args a = { .title = cmd->title ? cmd->title : cmd->name,
				 .from = STRVEC_INIT,
				 .only = STRVEC_INIT,
				 .skip = STRVEC_INIT,
				 .fanout = 16 };
	struct doctor_cluster c = { 0 };
	struct check_selection sel = { 0 };
	struct findings f = { 0 };
	struct remote_session rm = { 0 };
	struct host_list hosts = { 0 };
	struct cluster_file cf;
	unsigned cluster_size;
	/* --slurm-health's deadline counts from the start: the checks are in it. */
	uint64_t started = monotonic_ms();
	int ret;

	cluster_file_init(&cf);
	if (parse_doctor(cmd, mode, &a, &sel, argc, argv, &ret) < 0)
		goto out;
	/* Slurm runs it on the node it checks, whatever the cluster file says. */
	a.local |= a.slurm_health;
	if (load_hosts(&a, &hosts) < 0) {
		ret = SPARKCTL_EXIT_USAGE;
		goto out;
	}
	remote_session_init(&rm, a.remote_sparkctl, hosts.nr > 0);
	rm.slurm_user = a.slurm_user;
	ret = collect(&a, &hosts, &c, &rm);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	if (mode->prepare)
		mode->prepare(&c);
	cluster_size = c.nr_nodes > 1 ? (unsigned)c.nr_nodes : a.nodes;
	for (size_t i = 0; i < c.nr_nodes; i++)
		if (c.nodes[i].inspected)
			run_local_checks(&sel, &c.nodes[i].inv, c.nodes[i].host, cluster_size, &f);
	/* cluster.file compares the nodes with the cluster file in effect, -H or not. */
	if (c.nr_nodes > 1 && !a.from.nr && !a.root && load_cluster_file(&a, &cf) == 0)
		c.cluster_file = &cf;
	if (c.nr_nodes > 1)
		run_cluster_checks(&sel, &c, &f);
	if (a.engine)
		run_engine_checks(&a, &sel, &c, &rm, !hosts.nr && !a.from.nr && !a.root, &f);
	if (a.slurm_health) {
		ret = slurm_health(&a, &c, &f, started + SLURM_HEALTH_DEADLINE_MS);
		goto out;
	}
	/* A live run of every check is what 'sparkctl status' shows as the last doctor. */
	if (!a.root && !a.from.nr && !mode->group)
		save_report(&c, &f, a.quiet);
	ret = print_report(&a, &c, &f);
out:
	remote_session_close(&rm);
	host_list_release(&hosts);
	cluster_file_release(&cf);
	findings_release(&f);
	doctor_cluster_release(&c);
	check_selection_release(&sel);
	strvec_clear(&a.from);
	strvec_clear(&a.only);
	strvec_clear(&a.skip);
	return ret;
}

static int run_doctor(const struct cmd *cmd, int argc, char **argv)
{
	const struct doctor_mode every_check = { 0 };

	return doctor_run(cmd, argc, argv, &every_check);
}

const struct cmd cmd_doctor = {
	.name = "doctor",
	.fn = run_doctor,
	.summary = "check this node or the cluster; every finding with its fix",
	.usage = doctor_usage,
	.description = doctor_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 nothing failed, 1 a --root or --from that cannot be read, 2 usage, 3 a "
		       "node could not be inspected, 4 a check failed; --slurm-health: 0 healthy "
		       "(resumed if sparkctl had drained it), 3 no scontrol, slurmctld "
		       "unreachable or no answer within the run's 20 s, 4 a check failed (the "
		       "node drained, or left drained)",
	.max_operands = 0,
};
