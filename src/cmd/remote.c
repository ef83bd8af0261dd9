/*
 * remote.c - running sparkctl and other commands on the nodes, for the
 * commands that work across a cluster (doctor, bench link): SSH with
 * multiplexed connections that end with the command, and the nodes'
 * inventories gathered in parallel.
 */
#include "sparkctl.h"

#include "check/check.h"
#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "lib/xalloc.h"
#include "proc/run.h"
#include "remote/hosts.h"

/* What one inventory may print. */
#define INVENTORY_OUTPUT_MAX ((size_t)16 << 20)

char *cmd_first_line(const char *text)
{
	size_t n = strcspn(text, "\n");
	if (n > 200)
		n = 200;
	return xstrndup(text, n);
}

void cmd_remote_init(struct cmd_remote *rm, const char *remote_sparkctl, bool multiplex)
{
	memset(rm, 0, sizeof(*rm));
	strvec_init(&rm->hosts);
	rm->ssh.program = getenv("SPARKCTL_SSH");
	rm->ssh.connect_timeout = 5;
	rm->sparkctl = remote_sparkctl ? xstrdup(remote_sparkctl) : cmd_self_path();
	if (multiplex && ssh_control_dir_make(rm->control_dir) == 0)
		rm->ssh.control_dir = rm->control_dir;
}

int cmd_remote_argv(struct cmd_remote *rm, const char *host, const char *const *argv_remote,
		    struct strvec *out)
{
	int r;

	if (host_is_local(host)) {
		for (size_t i = 0; argv_remote[i]; i++)
			strvec_push(out, argv_remote[i]);
		return 0;
	}
	r = ssh_command(out, host, &rm->ssh, argv_remote);
	if (r == 0 && !strvec_contains(&rm->hosts, host))
		strvec_push(&rm->hosts, host);
	return r;
}

char *cmd_remote_failure(const struct run_job *j, unsigned timeout_ms)
{
	char *line, *ret;

	if (j->spawn_error)
		return xasprintf("cannot run %s: %s", j->argv.nr ? j->argv.v[0] : "a command",
				 strerror(-j->spawn_error));
	if (j->timed_out)
		return xasprintf("no answer within %u s", timeout_ms / 1000);
	if (j->status == 0)
		return NULL;
	line = cmd_first_line(j->err.len ? j->err.buf : j->out.buf);
	ret = xasprintf("%s (exit status %d)", *line ? line : "failed", j->status);
	free(line);
	return ret;
}

void cmd_remote_gather(struct cmd_remote *rm, struct doctor_cluster *c, unsigned fanout,
		       unsigned timeout_ms)
{
	struct run_job *jobs = xcalloc(c->nr_nodes + 1, sizeof(*jobs));
	const char *argv[] = { rm->sparkctl, "topo", "--json", NULL };

	for (size_t i = 0; i < c->nr_nodes; i++) {
		run_job_init(&jobs[i]);
		if (cmd_remote_argv(rm, c->nodes[i].host, argv, &jobs[i].argv) < 0)
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
		} else if ((n->error = cmd_remote_failure(j, timeout_ms)) != NULL) {
			/* it did not run to success */
		} else if (json_load_buffer(j->out.buf, j->out.len, "the remote inventory", &doc,
					    &err) < 0 ||
			   inventory_from_json(&n->inv, doc, &err) < 0) {
			char *line = cmd_first_line(j->out.buf);
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

void cmd_remote_close(struct cmd_remote *rm)
{
	size_t n = rm->hosts.nr;
	struct run_job *jobs;

	if (rm->ssh.control_dir) {
		jobs = xcalloc(n + 1, sizeof(*jobs));
		for (size_t i = 0; i < n; i++) {
			struct run_job *j = &jobs[i];
			run_job_init(j);
			strvec_push(&j->argv, rm->ssh.program ? rm->ssh.program : "ssh");
			strvec_pushf(&j->argv, "-oControlPath=%s/%%C", rm->control_dir);
			strvec_push(&j->argv, "-O");
			strvec_push(&j->argv, "exit");
			strvec_push(&j->argv, "--");
			strvec_push(&j->argv, rm->hosts.v[i]);
		}
		run_jobs(jobs, n, 0, 5000, 4096);
		for (size_t i = 0; i < n; i++)
			run_job_release(&jobs[i]);
		free(jobs);
		ssh_control_dir_remove(rm->control_dir);
		rm->ssh.control_dir = NULL;
	}
	free(rm->sparkctl);
	rm->sparkctl = NULL;
	strvec_clear(&rm->hosts);
}
