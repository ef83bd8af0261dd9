/*
 * session.c - commands on the nodes over SSH, and their inventories.
 */
#include "sparkctl.h"

#include "check/check.h"
#include "remote/session.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "probe/procs.h"
#include "proc/run.h"
#include "remote/hosts.h"
#include "remote/lookup.h"

/* What one inventory may print. */
#define INVENTORY_OUTPUT_MAX ((size_t)16 << 20)

char *remote_first_line(const char *text)
{
	struct strbuf line = STRBUF_INIT;
	size_t n = strcspn(text, "\n");

	/* A dead master's line, after which ssh connected by itself, is not the cause. */
	while (text[n] == '\n' && ssh_recovered_master_line(text)) {
		text += n + 1;
		n = strcspn(text, "\n");
	}
	/* As a terminal shows it: no CR of ssh's CR LF or of a progress meter. */
	n = ssh_line_as_shown(&text, n);
	if (n > 200)
		n = 200;
	strbuf_add_printable(&line, text, n, 0);
	return strbuf_detach(&line, NULL);
}

void remote_session_init(struct remote_session *rs, const char *remote_sparkctl, bool multiplex)
{
	memset(rs, 0, sizeof(*rs));
	strvec_init(&rs->hosts);
	rs->ssh.program = getenv("SPARKCTL_SSH");
	rs->ssh.connect_timeout = 5;
	rs->sparkctl = remote_sparkctl ? xstrdup(remote_sparkctl) : proc_self_path_or_name();
	rs->sparkctl_given = remote_sparkctl != NULL;
	if (multiplex && ssh_control_dir_make(rs->control_dir) == 0)
		rs->ssh.control_dir = rs->control_dir;
}

void remote_session_fast_kex(struct remote_session *rs, const char *const *hosts, size_t n)
{
	struct ssh_options cached = rs->ssh;
	char shared_dir[SSH_CONTROL_DIR_MAX + 1];
	struct strvec remote = STRVEC_INIT;

	for (size_t i = 0; i < n; i++)
		if (!host_is_local(hosts[i]) && !strvec_contains(&remote, hosts[i]))
			strvec_push(&remote, hosts[i]);
	/* 'ssh -G' at most once a minute per host: kept where launch keeps it. */
	cached.control_dir = ssh_control_dir_shared(shared_dir) == 0 ? shared_dir : NULL;
	free(rs->kex);
	rs->kex =
		remote.nr ? ssh_fast_kex(&cached, (const char *const *)remote.v, remote.nr) : NULL;
	rs->ssh.kex = rs->kex;
	strvec_clear(&remote);
}

int remote_session_argv(struct remote_session *rs, const char *host, const char *const *argv_remote,
			struct strvec *out)
{
	int r;

	if (host_is_local(host)) {
		for (size_t i = 0; argv_remote[i]; i++)
			strvec_push(out, argv_remote[i]);
		return 0;
	}
	r = ssh_command(out, host, &rs->ssh, argv_remote);
	if (r == 0 && !strvec_contains(&rs->hosts, host))
		strvec_push(&rs->hosts, host);
	return r;
}

int remote_session_sparkctl_argv(struct remote_session *rs, const char *host,
				 const char *const *args, struct strvec *out)
{
	struct strvec words = STRVEC_INIT;
	int r;

	if (host_is_local(host)) {
		strvec_push(out, rs->sparkctl);
		for (size_t i = 0; args[i]; i++)
			strvec_push(out, args[i]);
		return 0;
	}
	remote_sparkctl_words(&words, rs->sparkctl, rs->sparkctl_given ? rs->sparkctl : NULL);
	for (size_t i = 0; args[i]; i++)
		strvec_push(&words, args[i]);
	r = remote_session_argv(rs, host, (const char *const *)words.v, out);
	strvec_clear(&words);
	return r;
}

char *remote_failure(const struct run_job *j, const char *host, unsigned timeout_ms)
{
	char *line, *ret;

	if (j->spawn_error)
		return xasprintf("cannot run %s: %s", j->argv.nr ? j->argv.v[0] : "a command",
				 strerror(-j->spawn_error));
	if (j->timed_out)
		return xasprintf("no answer within %u s", timeout_ms / 1000);
	if (j->status == 0)
		return NULL;
	if (remote_sparkctl_missing(j->status, j->err.buf))
		return remote_sparkctl_missing_message(host);
	line = remote_first_line(j->err.len ? j->err.buf : j->out.buf);
	ret = xasprintf("%s (exit status %d)", *line ? line : "failed", j->status);
	free(line);
	return ret;
}

void remote_gather_inventories(struct remote_session *rs, struct doctor_cluster *c, unsigned fanout,
			       unsigned timeout_ms)
{
	struct run_job *jobs = xcalloc(c->nr_nodes + 1, sizeof(*jobs));
	/* --slurm-user only when asked: a node's older sparkctl still answers without it. */
	const char *argv[] = { "topo", "--json", rs->slurm_user ? "--slurm-user" : NULL,
			       rs->slurm_user, NULL };
	const char **hosts = xcalloc(c->nr_nodes + 1, sizeof(*hosts));

	for (size_t i = 0; i < c->nr_nodes; i++)
		hosts[i] = c->nodes[i].host;
	remote_session_fast_kex(rs, hosts, c->nr_nodes);
	free(hosts);
	for (size_t i = 0; i < c->nr_nodes; i++) {
		run_job_init(&jobs[i]);
		if (remote_session_sparkctl_argv(rs, c->nodes[i].host, argv, &jobs[i].argv) < 0)
			c->nodes[i].error = xstrdup("not a usable host name");
	}
	run_jobs(jobs, c->nr_nodes, fanout, timeout_ms, INVENTORY_OUTPUT_MAX);
	for (size_t i = 0; i < c->nr_nodes; i++) {
		struct doctor_node *n = &c->nodes[i];
		struct run_job *j = &jobs[i];
		struct strbuf err = STRBUF_INIT;
		json_t *doc = NULL;
		inventory_init(&n->inv);
		if (n->error) {
			/* refused before running */
		} else if ((n->error = remote_failure(j, n->host, timeout_ms)) != NULL) {
			/* it did not run to success */
		} else if (json_load_buffer(j->out.buf, j->out.len, "the remote inventory", &doc,
					    &err) < 0 ||
			   inventory_from_json(&n->inv, doc, &err) < 0) {
			char *line = remote_first_line(j->out.buf);
			n->error =
				xasprintf("the remote sparkctl did not print an inventory (%s; it "
					  "printed '%s')",
					  err.buf, line);
			free(line);
		} else {
			n->inspected = true;
		}
		json_decref(doc);
		strbuf_release(&err);
		run_job_release(j);
	}
	free(jobs);
}

void remote_session_close(struct remote_session *rs)
{
	size_t n = rs->hosts.nr;
	struct run_job *jobs;

	if (rs->ssh.control_dir) {
		jobs = xcalloc(n + 1, sizeof(*jobs));
		for (size_t i = 0; i < n; i++) {
			struct run_job *j = &jobs[i];
			run_job_init(j);
			strvec_push(&j->argv, rs->ssh.program ? rs->ssh.program : "ssh");
			strvec_pushf(&j->argv, "-oControlPath=%s/%%C", rs->control_dir);
			strvec_push(&j->argv, "-O");
			strvec_push(&j->argv, "exit");
			strvec_push(&j->argv, "--");
			strvec_push(&j->argv, rs->hosts.v[i]);
		}
		run_jobs(jobs, n, 0, 5000, 4096);
		for (size_t i = 0; i < n; i++)
			run_job_release(&jobs[i]);
		free(jobs);
		ssh_control_dir_remove(rs->control_dir);
		rs->ssh.control_dir = NULL;
	}
	free(rs->sparkctl);
	rs->sparkctl = NULL;
	free(rs->kex);
	rs->kex = NULL;
	rs->ssh.kex = NULL;
	strvec_clear(&rs->hosts);
}
