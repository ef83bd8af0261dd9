/*
 * sparkctl join - key logins between every pair of nodes, their host keys
 * in known_hosts, a Host block per node, and the cluster file.
 *
 * Three steps, so that nothing is half-written: ask every side (each node
 * over ssh, and this host) for its ~/.ssh (join_state_script) and every
 * node for its inventory; plan every change (cluster/join_plan.h), which
 * refuses a changed host key before anything is written; then make the
 * missing keys and write the files, one round trip per side.  The first
 * contact with a node is in batch mode; where its keys do not let us in,
 * one interactive login (ssh's own password prompt) opens a master
 * connection that every later step to that node rides.
 */
#include "sparkctl.h"

#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check/check.h"
#include "cluster/cluster_file.h"
#include "cluster/join_plan.h"
#include "cmd/cmd.h"
#include "discover/discover.h"
#include "inventory/derive.h"
#include "lib/xalloc.h"
#include "proc/child.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/session.h"
#include "remote/ssh.h"
#include "view/emit.h"

#define JOIN_TIMEOUT_MS	   60000
#define JOIN_OUTPUT_MAX	   ((size_t)4 << 20)
/* What one apply round trip may carry as arguments (one remote command line). */
#define JOIN_ARGS_MAX	   ((size_t)100 << 10)
#define JOIN_LOGIN_PERSIST "120"

static const char *const join_usage[] = {
	"sparkctl join HOST... [--user U] [--dry-run] [--cluster FILE] [--plan pair|switch|ring]",
	"sparkctl join --discovered [--iface IF,... | --fabric | --mgmt] [--reply-timeout S]\n"
	"                 [--user U] [--dry-run] [--cluster FILE] [--plan pair|switch|ring]",
	NULL,
};

static const char join_description[] =
	"Set up SSH between the nodes and remember them as the cluster.  On each node,\n"
	"and on this host, ~/.ssh (0700) and an ed25519 key are made where missing;\n"
	"each node's public key goes into every other node's ~/.ssh/authorized_keys,\n"
	"and this host's into every node's (a full mesh; no private key leaves its\n"
	"node).  Each node's ed25519 host key (read with ssh-keyscan) goes into the\n"
	"others' and this host's ~/.ssh/known_hosts under its name, management and\n"
	"fabric addresses; a key that differs from one known_hosts already holds is\n"
	"refused, and nothing is written.  ~/.ssh/sparkctl.conf gets a Host block per\n"
	"node and ~/.ssh/config one 'Include sparkctl.conf' line at its top (never\n"
	"'Host *').  Then the nodes are added to the cluster file, which doctor,\n"
	"status, top, launch, deploy and bench link use without -H.\n"
	"\n"
	"The first contact is in batch mode; a node whose keys do not let us in gets\n"
	"one interactive login (ssh asks for the password), whose connection every\n"
	"later step rides.  Every file is replaced atomically and its mode checked.\n"
	"--dry-run prints each change (per node, per file, each line) and makes none;\n"
	"a second join changes nothing.  The nodes need sparkctl (sparkctl deploy) for\n"
	"their addresses and ids; without it a node is joined by the address ssh used.\n"
	"\n"
	"--discovered joins the Sparks that answer 'sparkctl discover's query (the\n"
	"same interfaces by default, or --iface, --fabric, --mgmt), this host too when\n"
	"it answers: each is reached at the first IPv4 address it answered with and\n"
	"named by its host name, so the cluster file and ~/.ssh/sparkctl.conf map\n"
	"the name to that address.  A host without an IPv4 address, or a name that\n"
	"answers with two node ids, is skipped with a line that says so.";

struct join_args {
	const char *user, *cluster, *plan, *remote_sparkctl;
	bool dry_run, discovered;
	struct discover_where where;
};

/* A node to join: its name, and what ssh is given to reach it ("[user@]name-or-address"). */
struct join_target {
	char *name;
	char *reach;
	char *id; /* the node id it answered with (--discovered), or NULL */
};

/* One side: a node (host as ssh takes it), or this host (host NULL). */
struct side {
	char *host;  /* "user@name" or "name"; NULL for this host */
	char *name;  /* the host part: the node's name */
	char *label; /* in messages: the name, or "this host" */
	struct join_state st;
	struct strvec aliases; /* name, management and fabric addresses */
	struct strvec mgmt, fabric;
	char *id;
	struct join_side_plan plan;
};

struct join {
	const struct join_args *a;
	struct remote_session rs;
	struct side *sides; /* the nodes, then this host last */
	size_t nr_nodes;
	struct cluster_file_location loc;
	struct cluster_file cf; /* the cluster file as it will be */
	char *cf_old_text;	/* what the file holds now, NULL when missing */
	bool local_is_node;	/* this host is one of the nodes: its side is that node's */
	size_t local_node;	/* which one */
};

/* The argv that runs sh -c script (with args) on side s. */
static int side_argv(struct join *j, const struct side *s, const char *script,
		     const struct strvec *args, struct strvec *out)
{
	struct strvec words = STRVEC_INIT;
	int r = 0;

	/* This host's side is no ssh session, even where join runs in one. */
	if (!s->host)
		strvec_pushl(&words, "env", "-u", "SSH_CONNECTION", NULL);
	strvec_pushl(&words, "sh", "-c", script, "sparkctl-join", NULL);
	for (size_t i = 0; args && i < args->nr; i++)
		strvec_push(&words, args->v[i]);
	if (s->host)
		r = remote_session_argv(&j->rs, s->host, (const char *const *)words.v, out);
	else
		for (size_t i = 0; i < words.nr; i++)
			strvec_push(out, words.v[i]);
	strvec_clear(&words);
	return r;
}

/*
 * ssh's own words for keys that did not let it in, or a host key it does
 * not know yet: both are for the interactive login, where ssh asks for the
 * password or shows the host key's fingerprint for the user to accept.
 * (A host key that changed fails there too, with ssh's own warning.)
 */
static bool needs_login(const struct run_job *job)
{
	return job->status == 255 && (strstr(job->err.buf, "Permission denied") != NULL ||
				      strstr(job->err.buf, "Host key verification failed") != NULL);
}

/*
 * One interactive login to host: ssh asks for the password (on the
 * terminal, or through SSH_ASKPASS) and, once in, stays in the background
 * as the master of the session's control path, for ControlPersist.  Its
 * messages go to a log in the private control directory.
 */
static int interactive_login(struct join *j, const char *host, struct strbuf *why)
{
	struct child c;
	struct strbuf log = STRBUF_INIT;
	int status;

	strbuf_addf(&log, "%s/login.log", j->rs.control_dir);
	child_init(&c);
	strvec_push(&c.args, j->rs.ssh.program ? j->rs.ssh.program : "ssh");
	strvec_pushl(&c.args, "-o", "BatchMode=no", "-o", "ConnectTimeout=10", "-o",
		     "ControlMaster=yes", NULL);
	strvec_pushf(&c.args, "-oControlPath=%s/%%C", j->rs.control_dir);
	strvec_pushl(&c.args, "-o", "ControlPersist=" JOIN_LOGIN_PERSIST, "-E", log.buf, "-f", "-N",
		     "--", host, NULL);
	c.in = CHILD_IO_INHERIT;
	c.out = CHILD_IO_NULL;
	c.err = CHILD_IO_NULL;
	status = child_start(&c) < 0 ? -1 : child_finish(&c);
	if (status != 0) {
		struct strbuf text = STRBUF_INIT;
		strbuf_read_path(&text, log.buf, 1 << 16);
		char *line = remote_first_line(text.len ? text.buf : "the login failed");
		strbuf_addstr(why, line);
		free(line);
		strbuf_release(&text);
	}
	unlink(log.buf);
	child_release(&c);
	strbuf_release(&log);
	return status == 0 ? 0 : -EACCES;
}

/* Every side's ~/.ssh; -1 with the message printed when a node cannot be reached. */
static int gather_states(struct join *j)
{
	size_t n = j->nr_nodes + 1;
	struct run_job *jobs = xcalloc(n, sizeof(*jobs));
	bool *told = xcalloc(n, sizeof(*told)); /* its failure is said already */
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		run_job_init(&jobs[i]);
		side_argv(j, &j->sides[i], join_state_script, NULL, &jobs[i].argv);
	}
	run_jobs(jobs, n, 16, JOIN_TIMEOUT_MS, JOIN_OUTPUT_MAX);
	/* Keys that do not let us in: one password login each, one at a time. */
	for (size_t i = 0; i < j->nr_nodes; i++) {
		struct strbuf why = STRBUF_INIT;
		if (!needs_login(&jobs[i]))
			continue;
		if (interactive_login(j, j->sides[i].host, &why) < 0) {
			cmd_error("join", "%s: cannot log in: %s", j->sides[i].label, why.buf);
			told[i] = true;
			ret = -1;
		} else {
			run_jobs(&jobs[i], 1, 1, JOIN_TIMEOUT_MS, JOIN_OUTPUT_MAX);
		}
		strbuf_release(&why);
	}
	/* Every node that cannot be reached is named, each on its own line. */
	for (size_t i = 0; i < n; i++) {
		struct strbuf err = STRBUF_INIT;
		if (told[i])
			continue;
		char *fail = remote_failure(&jobs[i], j->sides[i].label, JOIN_TIMEOUT_MS);
		if (fail) {
			cmd_error("join", "%s: cannot be reached: %s", j->sides[i].label, fail);
			ret = -1;
		} else if (join_state_parse(jobs[i].out.buf, &j->sides[i].st, &err) < 0) {
			cmd_error("join", "%s: %s", j->sides[i].label, err.buf);
			ret = -1;
		}
		free(fail);
		strbuf_release(&err);
	}
	for (size_t i = 0; i < n; i++)
		run_job_release(&jobs[i]);
	free(told);
	free(jobs);
	return ret;
}

static void push_unique(struct strvec *sv, const char *s)
{
	if (s && *s && !strvec_contains(sv, s))
		strvec_push(sv, s);
}

/*
 * Each node's addresses and id from its inventory: management = the
 * address ssh reached it at, then the IPv4 addresses of the default
 * route's netdev; fabric = the IPv4 addresses of its fabric ports'
 * netdevs.  A node without sparkctl is joined by its ssh address alone.
 */
static int gather_inventories(struct join *j)
{
	struct doctor_cluster c = { 0 };
	int ret = 0;

	c.nodes = xcalloc(j->nr_nodes + 1, sizeof(*c.nodes));
	c.nr_nodes = j->nr_nodes;
	for (size_t i = 0; i < j->nr_nodes; i++)
		c.nodes[i].host = xstrdup(j->sides[i].host);
	remote_gather_inventories(&j->rs, &c, 16, JOIN_TIMEOUT_MS);
	for (size_t i = 0; i < j->nr_nodes; i++) {
		struct side *s = &j->sides[i];
		const struct doctor_node *dn = &c.nodes[i];
		push_unique(&s->mgmt, s->st.address);
		if (!dn->inspected) {
			if (dn->error && strstr(dn->error, "sparkctl is not installed")) {
				cmd_error("join", "note: %s: %s; joined by its ssh address alone",
					  s->label, dn->error);
				continue;
			}
			cmd_error("join", "%s: no inventory: %s", s->label,
				  dn->error ? dn->error : "unknown error");
			ret = -1;
			continue;
		}
		const struct inventory *inv = &dn->inv;
		for (size_t k = 0; k < inv->nr_netdevs; k++) {
			const struct inv_netdev *nd = &inv->netdevs[k];
			if (nd->default_route != 1)
				continue;
			for (size_t a = 0; a < nd->nr_addrs; a++)
				if (nd->addrs[a].family == AF_INET)
					push_unique(&s->mgmt, nd->addrs[a].address);
		}
		inventory_fabric_ipv4(inv, &s->fabric);
		/* The node's own id file wins over what it answered with. */
		if (inv->sys.node_id) {
			free(s->id);
			s->id = xstrdup(inv->sys.node_id);
		}
	}
	doctor_cluster_release(&c);
	return ret;
}

/* The cluster file as it will be: the one in effect, with the joined nodes put in. */
static int plan_cluster_file(struct join *j)
{
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT;
	int ret = 0;

	cluster_file_init(&j->cf);
	if (j->loc.exists) {
		if (strbuf_read_path(&text, j->loc.path.buf, 4 << 20) >= 0)
			j->cf_old_text = xstrdup(text.buf);
		if (cluster_file_load(&j->cf, j->loc.path.buf, &err) < 0) {
			cmd_error("join", "%s", err.buf);
			ret = -1;
			goto out;
		}
	}
	for (size_t i = 0; i < j->nr_nodes; i++) {
		struct side *s = &j->sides[i];
		const char *at = strchr(s->host, '@');
		char *user = at ? xstrndup(s->host, (size_t)(at - s->host)) : NULL;
		struct cluster_node *old = cluster_file_find(&j->cf, s->name);
		char *id = s->id ? xstrdup(s->id) : old && old->id ? xstrdup(old->id) : NULL;
		int r = cluster_file_put(&j->cf, s->name, id, &s->mgmt, &s->fabric, user, &err);
		free(user);
		free(id);
		if (r < 0) {
			cmd_error("join", "%s: %s", s->label, err.buf);
			ret = -1;
			goto out;
		}
	}
	if (j->a->plan) {
		free(j->cf.plan);
		j->cf.plan = xstrdup(j->a->plan);
	} else if (!j->cf.plan) {
		/* Two nodes: one cable between them; more: a switch (sparkctl netplan). */
		j->cf.plan = xstrdup(j->cf.nr == 2 ? "pair" : "switch");
	}
out:
	strbuf_release(&err);
	strbuf_release(&text);
	return ret;
}

/* Plan every side; -1 with the messages printed when a host key changed. */
static int plan_sides(struct join *j, struct join_member *members)
{
	struct strbuf conf = STRBUF_INIT;
	int ret = 0;

	const char *here_key = j->sides[j->local_is_node ? j->local_node : j->nr_nodes].st.pubkey;

	join_ssh_conf_text(&j->cf, &conf);
	for (size_t i = 0; i < j->nr_nodes; i++) {
		members[i].name = j->sides[i].name;
		members[i].pubkey = j->sides[i].st.pubkey;
		members[i].host_key = j->sides[i].st.host_key;
		members[i].aliases = &j->sides[i].aliases;
	}
	for (size_t i = 0; i <= j->nr_nodes; i++) {
		struct side *s = &j->sides[i];
		struct strbuf err = STRBUF_INIT;
		join_side_plan_release(&s->plan);
		if (i == j->nr_nodes && j->local_is_node)
			break;
		if (join_plan_side(members, j->nr_nodes, i < j->nr_nodes ? i : SIZE_MAX, &s->st,
				   here_key, conf.buf, s->label, &s->plan, &err) < 0) {
			cmd_error("join", "%s", err.buf);
			ret = -1;
		}
		strbuf_release(&err);
	}
	strbuf_release(&conf);
	return ret;
}

static bool cluster_file_changes(const struct join *j, struct strbuf *text)
{
	cluster_file_format(&j->cf, text);
	return !j->cf_old_text || !streq(j->cf_old_text, text->buf);
}

/* Every change, per side and file, each line; the number of changes. */
static size_t print_changes(const struct join *j, bool dry_run)
{
	struct strbuf out = STRBUF_INIT, text = STRBUF_INIT;
	struct emitter e;
	size_t changes = 0;

	emit_init(&e, EMIT_TEXT, &out, false);
	for (size_t i = 0; i < j->nr_nodes + !j->local_is_node; i++) {
		const struct side *s = &j->sides[i];
		if (!s->st.has_dir) {
			emit_str(&e, NULL, "%s: ", s->label);
			emit_text(&e, "%s ~/.ssh (0700)\n", dry_run ? "would create" : "created");
			changes++;
		}
		if (!s->st.has_key) {
			emit_str(&e, NULL, "%s: ", s->label);
			emit_text(&e, "%s an ed25519 key (~/.ssh/id_ed25519)\n",
				  dry_run ? "would make" : "made");
			changes++;
		}
		for (size_t f = 0; f < JOIN_NR_FILES; f++) {
			const struct join_file_change *c = &s->plan.file[f];
			if (!c->changed)
				continue;
			changes++;
			emit_str(&e, NULL, "%s: ", s->label);
			emit_str(&e, NULL, "~/.ssh/%s", join_file_name[f]);
			emit_text(&e, "%s:\n", s->st.text[f] ? "" : " (new, 0600)");
			for (size_t l = 0; l < c->added.nr; l++)
				emit_str(&e, NULL, "  + %s\n", c->added.v[l]);
		}
	}
	if (cluster_file_changes(j, &text)) {
		changes++;
		emit_str(&e, NULL, "this host: %s", j->loc.path.buf);
		emit_text(&e, " (the cluster file):\n");
		for (size_t i = 0; i < j->nr_nodes; i++) {
			const struct cluster_node *n = cluster_file_find(&j->cf, j->sides[i].name);
			emit_str(&e, NULL, "  node %s", n->name);
			emit_str(&e, NULL, ": mgmt %s",
				 n->mgmt_addresses.nr ? n->mgmt_addresses.v[0] : "-");
			emit_str(&e, NULL, ", fabric %s\n",
				 n->fabric_addresses.nr ? n->fabric_addresses.v[0] : "-");
		}
	}
	if (!changes)
		emit_text(&e, "nothing to change: every node already reaches every other with its "
			      "key, and the cluster file lists them\n");
	else if (dry_run)
		emit_text(&e, "(--dry-run: nothing was changed)\n");
	emit_release(&e);
	fputs(out.buf, stdout);
	strbuf_release(&out);
	strbuf_release(&text);
	return changes;
}

/*
 * Make the missing keys (and ~/.ssh), on every side at once (the logins
 * that needed a password are behind us: each side has its master
 * connection); each side's public key into its state.
 */
static int make_keys(struct join *j)
{
	size_t n = j->nr_nodes + 1, nr_jobs = 0;
	struct run_job *jobs = xcalloc(n, sizeof(*jobs));
	struct side **of = xcalloc(n, sizeof(*of)); /* the side of each job */
	struct strvec args = STRVEC_INIT;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct side *s = &j->sides[i];
		if ((s->st.has_key && s->st.pubkey) || (i == j->nr_nodes && j->local_is_node))
			continue;
		strvec_clear(&args);
		strvec_pushf(&args, "sparkctl-join@%s", s->name);
		run_job_init(&jobs[nr_jobs]);
		side_argv(j, s, join_keygen_script, &args, &jobs[nr_jobs].argv);
		of[nr_jobs++] = s;
	}
	if (nr_jobs)
		run_jobs(jobs, nr_jobs, 0, JOIN_TIMEOUT_MS, JOIN_OUTPUT_MAX);
	for (size_t k = 0; k < nr_jobs; k++) {
		struct side *s = of[k];
		char *fail = remote_failure(&jobs[k], s->label, JOIN_TIMEOUT_MS);
		size_t len = strcspn(jobs[k].out.buf, "\n");
		if (fail || !len) {
			cmd_error("join", "%s: cannot make an ssh key: %s", s->label,
				  fail ? fail : "ssh-keygen printed no key");
			ret = -1;
		} else {
			free(s->st.pubkey);
			s->st.pubkey = xstrndup(jobs[k].out.buf, len);
		}
		free(fail);
		run_job_release(&jobs[k]);
	}
	free(jobs);
	free(of);
	strvec_clear(&args);
	return ret;
}

/* Write every side's changed files: one round trip each. */
static int apply(struct join *j)
{
	size_t n = j->nr_nodes + 1;
	struct run_job *jobs = xcalloc(n, sizeof(*jobs));
	struct strvec args = STRVEC_INIT;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		struct side *s = &j->sides[i];
		size_t size = 0;
		run_job_init(&jobs[i]);
		if (!s->plan.nr_changed)
			continue;
		strvec_clear(&args);
		for (size_t f = 0; f < JOIN_NR_FILES; f++) {
			if (!s->plan.file[f].changed)
				continue;
			strvec_pushl(&args, join_file_name[f], "600", s->plan.file[f].content,
				     NULL);
			size += strlen(s->plan.file[f].content);
		}
		if (size > JOIN_ARGS_MAX) {
			cmd_error("join", "%s: the ~/.ssh files are too large to write in one go",
				  s->label);
			ret = -1;
			goto out;
		}
		side_argv(j, s, join_apply_script, &args, &jobs[i].argv);
	}
	run_jobs(jobs, n, 16, JOIN_TIMEOUT_MS, JOIN_OUTPUT_MAX);
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i].argv.nr)
			continue;
		char *fail = remote_failure(&jobs[i], j->sides[i].label, JOIN_TIMEOUT_MS);
		if (fail) {
			cmd_error("join", "%s: writing ~/.ssh failed: %s", j->sides[i].label, fail);
			ret = -1;
		}
		free(fail);
	}
out:
	for (size_t i = 0; i < n; i++)
		run_job_release(&jobs[i]);
	free(jobs);
	strvec_clear(&args);
	return ret;
}

static int parse_join(const struct cmd *cmd, struct join_args *a, struct host_list *hosts, int argc,
		      char **argv, int *ret)
{
	const struct discover_where *w = &a->where;
	const struct opt opts[] = {
		OPT_BOOL(0, "discovered", &a->discovered,
			 "join the Sparks that answer sparkctl discover's query (docs/cluster.md)"),
		OPT_DISCOVER_WHERE(&a->where),
		OPT_STRING(0, "user", &a->user, "USER", "log in to the nodes as USER"),
		OPT_BOOL(0, "dry-run", &a->dry_run, "print every change, make none"),
		OPT_STRING(0, "cluster", &a->cluster, "FILE",
			   "the cluster file to write (env SPARKCTL_CLUSTER; docs/cluster.md)"),
		OPT_CHOICE(0, "plan", &a->plan, "PLAN", "pair|switch|ring",
			   "the fabric plan: pair, switch or ring (default: pair for two nodes, "
			   "else switch)"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct strbuf err = STRBUF_INIT;
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = SPARKCTL_EXIT_USAGE;
	if (n < 0) {
		*ret = cmd_parse_exit(n);
		return -1;
	}
	if (a->discovered && n > 0) {
		cmd_usage_error("join",
				"--discovered joins the Sparks that answer; give HOST... or "
				"--discovered, not both");
		return -1;
	}
	if (!a->discovered && (w->iface || w->fabric || w->mgmt || w->reply_timeout)) {
		cmd_usage_error("join", "--iface, --fabric, --mgmt and --reply-timeout go with "
					"--discovered");
		return -1;
	}
	if (a->discovered && (*ret = discover_where_check("join", w)) != SPARKCTL_EXIT_OK)
		return -1;
	if (n == 0 && !a->discovered) {
		cmd_usage_error("join", "which nodes? sparkctl join HOST... or sparkctl join "
					"--discovered");
		return -1;
	}
	if (a->plan && !cluster_plan_valid(a->plan)) {
		cmd_usage_error("join", "--plan is pair, switch or ring");
		return -1;
	}
	if (a->user && !cluster_user_valid(a->user)) {
		cmd_usage_error("join", "--user: not a user name");
		return -1;
	}
	for (int i = 1; i <= n; i++) {
		if (host_list_parse(argv[i], hosts, &err) < 0)
			break;
	}
	for (size_t i = 0; !err.len && i < hosts->nr; i++)
		if (host_is_local(hosts->hosts[i].name))
			strbuf_addstr(&err, "join the nodes by the names the others know them by, "
					    "not localhost");
	if (err.len) {
		cmd_usage_error("join", "%s", err.buf);
		strbuf_release(&err);
		return -1;
	}
	strbuf_release(&err);
	*ret = SPARKCTL_EXIT_OK;
	return 0;
}

/* The nodes HOST... names: each reached by what was given, named by its host part. */
static void targets_of_hosts(const struct join *j, const struct host_list *hosts,
			     struct join_target *t)
{
	for (size_t i = 0; i < hosts->nr; i++) {
		const char *given = hosts->hosts[i].name, *at = strchr(given, '@');
		t[i].reach =
			at || !j->a->user ? xstrdup(given) : xasprintf("%s@%s", j->a->user, given);
		t[i].name = xstrdup(at ? at + 1 : given);
	}
}

/* The first IPv4 address of h (the list has IPv4 first), or NULL. */
static const char *first_ipv4(const struct discover_host *h)
{
	for (size_t i = 0; i < h->addresses.nr; i++)
		if (!strchr(h->addresses.v[i], ':'))
			return h->addresses.v[i];
	return NULL;
}

/* Another host of res answers with h's name (and another node id). */
static const struct discover_host *same_name(const struct discover_result *res,
					     const struct discover_host *h)
{
	for (size_t i = 0; i < res->nr_hosts; i++)
		if (&res->hosts[i] != h && !strcasecmp(res->hosts[i].host, h->host))
			return &res->hosts[i];
	return NULL;
}

/*
 * The Sparks that answered, as nodes to join: each reached at its first
 * IPv4 address, named by its host name.  One that cannot be joined is
 * skipped with a line on stderr; one line on stdout per node found.
 */
static size_t targets_of_discovered(const struct join *j, const struct discover_result *res,
				    struct join_target *t)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;
	size_t n = 0;

	emit_init(&e, EMIT_TEXT, &out, false);
	for (size_t i = 0; i < res->nr_hosts; i++) {
		const struct discover_host *h = &res->hosts[i], *twin = same_name(res, h);
		const char *addr = first_ipv4(h);
		if (twin) {
			cmd_error("join",
				  "%s answers with two node ids (%s and %s): not joined; two nodes "
				  "use one name, or a node's id changed (sparkctl discover)",
				  h->host, h->id ? h->id : "none", twin->id ? twin->id : "none");
			continue;
		}
		if (!addr) {
			cmd_error("join", "%s answered without an IPv4 address: not joined",
				  h->host);
			continue;
		}
		if (!cluster_node_name_valid(h->host)) {
			cmd_error("join", "%s: not a name a node can have: not joined", h->host);
			continue;
		}
		t[n].name = xstrdup(h->host);
		t[n].id = h->id && cluster_node_id_valid(h->id) ? xstrdup(h->id) : NULL;
		t[n].reach = j->a->user ? xasprintf("%s@%s", j->a->user, addr) : xstrdup(addr);
		emit_str(&e, NULL, "found %s", h->host);
		emit_str(&e, NULL, " at %s", addr);
		emit_str(&e, NULL, " (%s)", h->ifaces.nr ? h->ifaces.v[0] : "?");
		emit_text(&e, "%s\n", h->this_host ? ": this host" : "");
		n++;
	}
	emit_release(&e);
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return n;
}

/*
 * --discovered: ask as discover does, then the nodes to join.  An exit
 * status: 3 when no Spark answered, or none can be joined.
 */
static int discover_targets(const struct join *j, struct join_target **t, size_t *nr)
{
	struct discover_result res;
	struct strbuf ifs = STRBUF_INIT;
	int ret;

	discover_result_init(&res);
	ret = discover_ask("join", &j->a->where, NULL, true, &res);
	if (ret != SPARKCTL_EXIT_OK)
		goto out;
	*t = xcalloc(res.nr_hosts + 1, sizeof(**t));
	*nr = targets_of_discovered(j, &res, *t);
	for (size_t i = 0; i < res.nr_ifaces; i++)
		strbuf_addf(&ifs, "%s%s", i ? "," : "", res.ifaces[i].name);
	if (!res.nr_hosts) {
		cmd_error("join",
			  "no Sparks answered on %s (sparkctl discover to see what answers)",
			  ifs.buf);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	} else if (!*nr) {
		cmd_error("join", "none of the Sparks that answered on %s can be joined", ifs.buf);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	}
out:
	discover_result_release(&res);
	strbuf_release(&ifs);
	return ret;
}

static void targets_free(struct join_target *t, size_t nr)
{
	for (size_t i = 0; t && i < nr; i++) {
		free(t[i].name);
		free(t[i].reach);
		free(t[i].id);
	}
	free(t);
}

static void sides_init(struct join *j, const struct join_target *t, size_t nr)
{
	j->nr_nodes = nr;
	j->sides = xcalloc(nr + 1, sizeof(*j->sides));
	for (size_t i = 0; i <= nr; i++) {
		struct side *s = &j->sides[i];
		strvec_init(&s->aliases);
		strvec_init(&s->mgmt);
		strvec_init(&s->fabric);
		if (i == nr) {
			s->name = xstrdup("this host");
			s->label = xstrdup("this host");
			continue;
		}
		s->host = xstrdup(t[i].reach);
		s->id = t[i].id ? xstrdup(t[i].id) : NULL;
		s->name = xstrdup(t[i].name);
		s->label = xstrdup(s->name);
	}
}

static void sides_release(struct join *j)
{
	for (size_t i = 0; j->sides && i <= j->nr_nodes; i++) {
		struct side *s = &j->sides[i];
		free(s->host);
		free(s->name);
		free(s->label);
		free(s->id);
		join_state_release(&s->st);
		join_side_plan_release(&s->plan);
		strvec_clear(&s->aliases);
		strvec_clear(&s->mgmt);
		strvec_clear(&s->fabric);
	}
	free(j->sides);
}

static int run_join(const struct cmd *cmd, int argc, char **argv)
{
	struct join_args a = { 0 };
	struct host_list hosts = { 0 };
	struct join j = { .a = &a, .loc = { .path = STRBUF_INIT } };
	struct join_member *members = NULL;
	struct join_target *targets = NULL;
	size_t nr_targets = 0;
	struct strbuf err = STRBUF_INIT, text = STRBUF_INIT;
	int ret;

	if (parse_join(cmd, &a, &hosts, argc, argv, &ret) < 0)
		goto out_args;
	if (cluster_file_locate(a.cluster, &j.loc) < 0 || !j.loc.path.len) {
		ret = cmd_usage_error("join", "where does the cluster file go? give --cluster FILE "
					      "(no HOME, or SPARKCTL_CLUSTER=none)");
		goto out_args;
	}
	remote_session_init(&j.rs, a.remote_sparkctl, true);
	if (!j.rs.ssh.control_dir) {
		cmd_error("join", "cannot make a private directory for the ssh connections");
		ret = SPARKCTL_EXIT_ERROR;
		goto out;
	}
	if (a.discovered) {
		if ((ret = discover_targets(&j, &targets, &nr_targets)) != SPARKCTL_EXIT_OK)
			goto out;
	} else {
		targets = xcalloc(hosts.nr + 1, sizeof(*targets));
		targets_of_hosts(&j, &hosts, targets);
		nr_targets = hosts.nr;
	}
	sides_init(&j, targets, nr_targets);
	/* 1. Ask: every side's ~/.ssh, every node's inventory.  Nothing is written yet. */
	ret = SPARKCTL_EXIT_UNAVAILABLE;
	if (gather_states(&j) < 0 || gather_inventories(&j) < 0)
		goto out;
	for (size_t i = 0; i < j.nr_nodes; i++) {
		struct side *s = &j.sides[i];
		push_unique(&s->aliases, s->name);
		for (size_t k = 0; k < s->mgmt.nr; k++)
			push_unique(&s->aliases, s->mgmt.v[k]);
		for (size_t k = 0; k < s->fabric.nr; k++)
			push_unique(&s->aliases, s->fabric.v[k]);
	}
	/*
	 * Run on one of the nodes, this host's ~/.ssh is that node's: its side
	 * is planned (and written) once, as the node's.
	 */
	for (size_t i = 0; i < j.nr_nodes; i++) {
		struct join_state *here = &j.sides[j.nr_nodes].st;
		if (here->ident && j.sides[i].st.ident && streq(here->ident, j.sides[i].st.ident)) {
			j.local_is_node = true;
			j.local_node = i;
			break;
		}
	}
	/* 2. Plan: a changed host key refuses the whole join. */
	ret = SPARKCTL_EXIT_ERROR;
	if (plan_cluster_file(&j) < 0)
		goto out;
	members = xcalloc(j.nr_nodes + 1, sizeof(*members));
	if (plan_sides(&j, members) < 0) {
		ret = SPARKCTL_EXIT_PROBLEMS;
		goto out;
	}
	if (a.dry_run) {
		print_changes(&j, true);
		ret = SPARKCTL_EXIT_OK;
		goto out;
	}
	/* 3. Apply: the keys first (the plan needs the new public keys), then the files. */
	if (make_keys(&j) < 0 || plan_sides(&j, members) < 0 || apply(&j) < 0)
		goto out;
	if (cluster_file_changes(&j, &text) && cluster_file_save(&j.cf, j.loc.path.buf, &err) < 0) {
		cmd_error("join", "%s", err.buf);
		goto out;
	}
	print_changes(&j, false);
	ret = SPARKCTL_EXIT_OK;
out:
	free(members);
	targets_free(targets, nr_targets);
	sides_release(&j);
	remote_session_close(&j.rs);
	cluster_file_release(&j.cf);
	free(j.cf_old_text);
out_args:
	cluster_file_location_release(&j.loc);
	host_list_release(&hosts);
	strbuf_release(&err);
	strbuf_release(&text);
	return ret;
}

const struct cmd cmd_join = {
	.name = "join",
	.fn = run_join,
	.summary = "set up key logins between the nodes and write the cluster file",
	.usage = join_usage,
	.description = join_description,
	.exit_status =
		"0 joined (or nothing to change), 1 a file could not be written, 2 usage, "
		"3 a node could not be reached or logged in to (--discovered: no Spark "
		"answered, or none can be joined; no interface to ask on), 4 a host key changed "
		"(nothing written)",
	.max_operands = CMD_OPERANDS_ANY,
};
