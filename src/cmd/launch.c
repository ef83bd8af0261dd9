/*
 * sparkctl launch - run a job on every node, and leave nothing of it behind.
 *
 * The work is in src/launch/: launcher.c (this side), node_agent.c (each
 * node's side), protocol.c (what passes between them).  Here: the command
 * line, the job spec, and the summary.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "probe/procs.h"
#include "proc/child.h"
#include "launch/launcher.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "remote/hosts.h"
#include "view/launch_view.h"

/* A bound on the ranks of one job (each is a process and four pipe ends somewhere). */
#define LAUNCH_MAX_RANKS     65536
#define LAUNCH_GRACE_DEFAULT 10
/* -N not given: the hostfile's slots, else 1. */
#define NPROC_FROM_HOSTS     UINT_MAX

static const char *const launch_usage[] = {
	"sparkctl launch [-H HOSTS | --hostfile FILE] [-N N] [options] -- CMD [ARG]...",
	NULL,
};

static const char launch_description[] =
	"Run CMD as the ranks of one job on every node: each node is reached with ssh\n"
	"(localhost without it) and runs its ranks with torchrun's variables (RANK,\n"
	"LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, ROLE_*,\n"
	"TORCHELASTIC_*, MASTER_ADDR, MASTER_PORT) and NODE_RANK set, the node's\n"
	"'sparkctl env', and the caller's working directory.  MASTER_ADDR is node 0's\n"
	"fabric address; MASTER_PORT a port free on node 0.  --torchrun adapts to the\n"
	"node's torch version.\n"
	"\n"
	"The first rank that fails ends the job on every node (SIGTERM, then SIGKILL\n"
	"after the grace) and its status is the launch's.  Ctrl-C ends the job; a second\n"
	"kills it at once.  If the launcher dies or a connection drops, each node ends\n"
	"its ranks itself.  No process of the job outlives it.\n"
	"\n"
	"HOSTS: spark1,spark2, ranges spark[1-4]; a hostfile has lines 'host slots=N\n"
	"[max_slots=M]' (Open MPI, DeepSpeed) or 'host:N' (MPICH).\n"
	"\n"
	"Inside a Slurm allocation (SLURM_JOB_ID set; --slurm, --no-slurm) the ranks are\n"
	"the tasks of one srun step on the allocation's nodes (or the -H ones among\n"
	"them), with the same variables, environment, output and summary.";

struct launch_args {
	const char *hosts, *hostfile, *cluster, *master_addr, *chdir, *log_dir, *remote_sparkctl,
		*contain;
	unsigned nproc, port, grace, stall, timeout, connect_timeout;
	bool torchrun, kill_stale, no_env, tag_output, quiet, ssh_close, slurm, no_slurm;
	struct strvec envs, exports, torchrun_opts;
};

static bool valid_var_name(const char *s, size_t len)
{
	if (!len || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* Check one KEY=VALUE for --env (or -x VAR=VALUE) and add it. */
static int add_env_entry(const char *opt, const char *entry, struct strvec *env)
{
	const char *eq = strchr(entry, '=');
	char *key;
	int ret = SPARKCTL_EXIT_OK;

	if (!eq || !valid_var_name(entry, (size_t)(eq - entry)))
		return cmd_usage_error("launch", "%s takes NAME=VALUE, not '%s'", opt, entry);
	key = xstrndup(entry, (size_t)(eq - entry));
	if (launch_var_reserved(key))
		ret = cmd_usage_error("launch", "%s: %s is set by sparkctl launch itself", opt,
				      key);
	else
		env_list_put(env, entry);
	free(key);
	return ret;
}

/* -x VAR then --env K=V, in that order: the caller's variables for every rank. */
static int collect_env(const struct launch_args *a, struct strvec *env)
{
	int r;

	for (size_t i = 0; i < a->exports.nr; i++) {
		const char *name = a->exports.v[i];
		const char *value;
		if (strchr(name, '=')) {
			if ((r = add_env_entry("-x", name, env)) != SPARKCTL_EXIT_OK)
				return r;
			continue;
		}
		if (!valid_var_name(name, strlen(name)))
			return cmd_usage_error("launch", "-x takes a variable name, not '%s'",
					       name);
		if (!(value = getenv(name)))
			return cmd_usage_error("launch", "-x %s: %s is not set here", name, name);
		if (launch_var_reserved(name))
			return cmd_usage_error("launch", "-x: %s is set by sparkctl launch itself",
					       name);
		env_list_set(env, name, value);
	}
	for (size_t i = 0; i < a->envs.nr; i++)
		if ((r = add_env_entry("--env", a->envs.v[i], env)) != SPARKCTL_EXIT_OK)
			return r;
	return SPARKCTL_EXIT_OK;
}

/* Whether the nodes are the allocation's: inside one, without -H or --hostfile. */
static bool hosts_from_allocation(const struct launch_args *a)
{
	return !a->hosts && !a->hostfile && getenv("SLURM_JOB_ID") && getenv("SLURM_JOB_NODELIST");
}

/*
 * A hostfile that cannot be read is a bad argument too, as in doctor and
 * status: exit 1 would read as a rank's exit status.  So is an allocation's
 * SLURM_JOB_NODELIST that is not a hostlist, in one line: no option of the
 * command line is wrong, and --help would not tell how to mend it.
 */
static int load_hosts(const struct launch_args *a, struct host_list *hosts)
{
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (host_list_from_options(a->hosts, a->hostfile, a->cluster, "localhost", hosts, &err) <
	    0) {
		if (hosts_from_allocation(a)) {
			cmd_error("launch", "%s", err.buf);
			ret = SPARKCTL_EXIT_USAGE;
		} else {
			ret = cmd_usage_error("launch", "%s", err.buf);
		}
	}
	strbuf_release(&err);
	return ret;
}

/* The nodes, with the ranks of each: -N, else the hostfile's slots, else 1. */
static int make_nodes(const struct launch_args *a, const struct host_list *hosts,
		      struct launch_node **ret, size_t *total)
{
	struct launch_node *nodes = xcalloc(hosts->nr, sizeof(*nodes));

	*total = 0;
	*ret = nodes;
	for (size_t i = 0; i < hosts->nr; i++) {
		nodes[i].host = hosts->hosts[i].name;
		nodes[i].local = host_is_local(nodes[i].host);
		/* Open MPI's rule: the count given wins over slots, never over max_slots. */
		if (a->nproc != NPROC_FROM_HOSTS && hosts->hosts[i].max_slots &&
		    a->nproc > hosts->hosts[i].max_slots)
			return cmd_usage_error(
				"launch", "%u ranks per node: %s has max_slots=%u in '%s'",
				a->nproc, nodes[i].host, hosts->hosts[i].max_slots, a->hostfile);
		if (a->nproc != NPROC_FROM_HOSTS)
			nodes[i].nproc = a->nproc;
		else
			nodes[i].nproc = hosts->hosts[i].slots ? hosts->hosts[i].slots : 1;
		*total += nodes[i].nproc;
	}
	if (*total > LAUNCH_MAX_RANKS)
		return cmd_usage_error("launch", "%zu ranks: at most %d", *total, LAUNCH_MAX_RANKS);
	return SPARKCTL_EXIT_OK;
}

static const char *unit_host(const struct launch_options *o, const struct launch_unit_result *u)
{
	return o->nodes[u->node].host;
}

/* The one line that says how the job ended. */
static void print_outcome(const struct launch_options *o, const struct launch_result *res)
{
	struct strbuf b = STRBUF_INIT;
	const char *what = o->job->torchrun ? "torchrun on" : "rank";

	switch (res->end) {
	case LAUNCH_END_OK:
		fprintf(stderr, "sparkctl launch: %zu %s%s ended with status 0 in %.2f s\n",
			res->nr_units, o->job->torchrun ? "node" : "rank",
			res->nr_units == 1 ? "" : "s", res->seconds);
		break;
	case LAUNCH_END_UNIT_FAILED: {
		const struct launch_unit_result *u = &res->units[res->failed_unit];
		launch_describe_status(u->status, u->signaled, &b);
		if (o->job->torchrun)
			fprintf(stderr,
				"sparkctl launch: torchrun on %s ended with %s; the job was "
				"ended\n",
				unit_host(o, u), b.buf);
		else
			fprintf(stderr,
				"sparkctl launch: %s %u on %s ended with %s; the job was ended\n",
				what, u->id, unit_host(o, u), b.buf);
		break;
	}
	case LAUNCH_END_INTERRUPTED:
		fprintf(stderr, "sparkctl launch: the job was ended by SIG%s\n",
			sigabbrev_np(res->signal) ? sigabbrev_np(res->signal) : "?");
		break;
	case LAUNCH_END_TIMEOUT:
		fprintf(stderr, "sparkctl launch: the job was ended by --job-timeout\n");
		break;
	case LAUNCH_END_NODE_FAILED:
		fprintf(stderr, "sparkctl launch: the job failed on %s\n",
			o->nodes[res->failed_node].host);
		break;
	}
	strbuf_release(&b);
}

/* Under srun, which step of which job ran the ranks (scontrol, sacct, scancel). */
static void print_srun_step(const struct launch_options *o, const struct launch_result *res)
{
	if (o->srun)
		fprintf(stderr, "sparkctl launch: ran as Slurm step %s (srun on %u node%s)\n",
			res->slurm_step[0] ? res->slurm_step : o->srun->job_id, o->srun->nnodes,
			o->srun->nnodes == 1 ? "" : "s");
}

static void print_summary(const struct launch_options *o, const struct launch_result *res)
{
	struct strbuf out = STRBUF_INIT;
	struct emitter e;

	emit_init(&e, EMIT_TEXT, &out, cmd_use_color_on(STDERR_FILENO));
	launch_summary_emit(o, res, &e);
	emit_release(&e);
	fputs(out.buf, stderr);
	strbuf_release(&out);
}

/* DIR/summary.json: the outcome and every unit, for scripts. */
static int write_summary_json(const char *dir, const struct launch_options *o,
			      const struct launch_result *res)
{
	char *path = xasprintf("%s/summary.json", dir);
	struct emitter e;
	json_t *j;
	FILE *f;
	int r = 0;

	emit_init(&e, EMIT_JSON, NULL, false);
	launch_summary_emit(o, res, &e);
	j = emit_document(&e);
	emit_release(&e);
	if (!(f = fopen(path, "we")) || json_write(f, j) < 0)
		r = -errno;
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	if (r < 0)
		cmd_error("launch", "cannot write '%s': %s", path, strerror(-r));
	free(path);
	json_decref(j);
	return r;
}

static int check_args(const struct launch_args *a, int n, char **argv)
{
	enum contain_mode mode;

	if (n < 1)
		return cmd_usage_error("launch",
				       "no command: sparkctl launch [options] -- CMD [ARG]...");
	if (!argv[1][0])
		return cmd_usage_error("launch", "the command is an empty word");
	if (a->port > 65535)
		return cmd_usage_error("launch", "--port %u: not a TCP port", a->port);
	if (a->nproc == 0)
		return cmd_usage_error("launch", "--nproc-per-node 0: a node needs a rank");
	if (a->nproc != NPROC_FROM_HOSTS && a->nproc > LAUNCH_MAX_RANKS)
		return cmd_usage_error("launch", "--nproc-per-node %u: too many", a->nproc);
	if (a->kill_stale && !a->port)
		return cmd_usage_error("launch", "--kill-stale only applies with --port");
	if (a->grace > 3600 || a->stall > 86400 * 30 || a->timeout > 86400 * 365 ||
	    a->connect_timeout > 3600)
		return cmd_usage_error("launch", "a time given is out of range");
	if (a->master_addr && (!*a->master_addr || strpbrk(a->master_addr, " \t\n")))
		return cmd_usage_error("launch", "--master-addr '%s': not an address",
				       a->master_addr);
	if (a->torchrun_opts.nr && !a->torchrun)
		return cmd_usage_error("launch", "--torchrun-opt only applies with --torchrun");
	for (size_t i = 0; i < a->torchrun_opts.nr; i++)
		if (a->torchrun_opts.v[i][0] != '-')
			return cmd_usage_error("launch", "--torchrun-opt '%s': not an option",
					       a->torchrun_opts.v[i]);
	if (a->chdir && a->chdir[0] != '/')
		return cmd_usage_error("launch", "--chdir takes an absolute path");
	if (a->slurm && a->no_slurm)
		return cmd_usage_error("launch", "--slurm and --no-slurm contradict each other");
	if (a->contain && contain_mode_parse(a->contain, &mode) < 0)
		return cmd_usage_error(
			"launch", "--contain '%s': not auto, systemd, cgroup or marks", a->contain);
	return SPARKCTL_EXIT_OK;
}

/*
 * The command line into a; the job's command stays in argv[1..n].  Returns
 * n, or -1 when the command ends here with the exit status *ret (--help,
 * a usage error).
 */
static int parse_launch(const struct cmd *cmd, struct launch_args *a, int argc, char **argv,
			int *ret)
{
	const struct opt opts[] = {
		OPT_STRING('H', "hosts", &a->hosts, "HOSTS",
			   "nodes: spark1,spark2 or spark[1-4] (default localhost)"),
		OPT_STRING(0, "hostfile", &a->hostfile, "FILE",
			   "nodes from a hostfile ('host slots=N' or 'host:N')"),
		OPT_STRING(0, "cluster", &a->cluster, "FILE",
			   "the cluster file whose nodes to use without -H (env SPARKCTL_CLUSTER)"),
		OPT_UINT('N', "nproc-per-node", &a->nproc, "N",
			 "ranks on each node (default: the hostfile's slots, else 1)"),
		OPT_RENAMED('n', NULL, "-N"),
		OPT_BOOL(0, "torchrun", &a->torchrun,
			 "run one torchrun per node, which starts the node's ranks"),
		OPT_LIST(0, "torchrun-opt", &a->torchrun_opts, "OPTION",
			 "pass an option to torchrun, e.g. --torchrun-opt=--max_restarts=0"),
		OPT_STRING(0, "master-addr", &a->master_addr, "ADDR",
			   "MASTER_ADDR (default: node 0's fabric address)"),
		OPT_UINT(0, "port", &a->port, "PORT",
			 "MASTER_PORT (default: a free port on node 0)"),
		OPT_BOOL(0, "kill-stale", &a->kill_stale,
			 "end an earlier sparkctl job that holds --port"),
		OPT_LIST(0, "env", &a->envs, "NAME=VALUE", "set a variable for every rank"),
		OPT_LIST('x', NULL, &a->exports, "NAME", "pass this variable's value from here"),
		OPT_STRING(0, "chdir", &a->chdir, "DIR",
			   "working directory of the ranks (default: the current one)"),
		OPT_BOOL(0, "no-env", &a->no_env, "do not add the node's 'sparkctl env'"),
		OPT_BOOL(0, "tag-output", &a->tag_output, "prefix lines with [host:rank]"),
		OPT_STRING(0, "log-dir", &a->log_dir, "DIR",
			   "also write each rank's output to DIR/rank-N.log, and DIR/summary.json"),
		OPT_CHOICE(0, "contain", &a->contain, "MODE", "auto|systemd|cgroup|marks",
			   "how each node keeps the job's processes together: auto (default), "
			   "systemd, cgroup or marks"),
		OPT_UINT(0, "grace", &a->grace, "SECONDS",
			 "from SIGTERM to SIGKILL when the job ends (default 10)"),
		OPT_UINT(0, "stall", &a->stall, "SECONDS",
			 "say what hangs a job when it prints nothing for this long"),
		OPT_UINT(0, "job-timeout", &a->timeout, "SECONDS",
			 "end the job after this long (exit 5)"),
		OPT_RENAMED(0, "timeout", "--job-timeout"),
		OPT_UINT(0, "connect-timeout", &a->connect_timeout, "SECONDS",
			 "ssh connect timeout (default 5)"),
		OPT_BOOL(0, "ssh-close", &a->ssh_close,
			 "close the ssh connections at the end (default: kept 60 s for the next "
			 "run)"),
		OPT_STRING(0, "remote-sparkctl", &a->remote_sparkctl, "PATH",
			   "sparkctl on the nodes (default: this program's path, then PATH, then "
			   "~/.local/bin/sparkctl)"),
		OPT_BOOL(0, "slurm", &a->slurm,
			 "run the ranks as the tasks of one srun step (default inside an "
			 "allocation)"),
		OPT_BOOL(0, "no-slurm", &a->no_slurm,
			 "reach the nodes with ssh even inside a Slurm allocation"),
		OPT_BOOL('q', "quiet", &a->quiet,
			 "only errors: no warnings, notices or summary (a failure still gets its "
			 "line)"),
		OPT_HELP(),
		OPT_OPERANDS_STOP(), /* the command's own options are the command's */
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	*ret = n < 0 ? cmd_parse_exit(n) : check_args(a, n, argv);
	return *ret == SPARKCTL_EXIT_OK && n >= 0 ? n : -1;
}

/* The job every node shares, from the options, the nodes and the command argv[1..n]. */
static int make_job(const struct launch_args *a, const struct launch_node *nodes, size_t nr,
		    size_t total, int n, char **argv, struct launch_spec *job)
{
	int ret = collect_env(a, &job->env);
	char *cwd = NULL;

	if (ret != SPARKCTL_EXIT_OK)
		return ret;
	for (int i = 1; i <= n; i++)
		strvec_push(&job->argv, argv[i]);
	for (size_t i = 0; i < a->torchrun_opts.nr; i++)
		strvec_push(&job->torchrun_opts, a->torchrun_opts.v[i]);
	if (launch_job_id_new(&job->job_id) < 0) {
		cmd_error("launch", "cannot make a job id: %s", strerror(errno));
		return SPARKCTL_EXIT_ERROR;
	}
	if (!a->chdir && !(cwd = getcwd(NULL, 0))) {
		cmd_error("launch", "cannot tell the current directory: %s; give --chdir",
			  strerror(errno));
		return SPARKCTL_EXIT_ERROR;
	}
	job->chdir = xstrdup(a->chdir ? a->chdir : cwd);
	free(cwd);
	job->master_addr = xstrdup_or_null(a->master_addr);
	job->port = a->port;
	job->kill_stale = a->kill_stale;
	job->torchrun = a->torchrun;
	job->use_env = !a->no_env;
	job->grace_ms = a->grace * 1000;
	if (a->contain)
		contain_mode_parse(a->contain, &job->contain);
	job->world_size = (unsigned)total;
	job->all_local = true;
	for (size_t i = 0; i < nr; i++)
		job->all_local &= nodes[i].local;
	return SPARKCTL_EXIT_OK;
}

/*
 * How the nodes are reached: one ssh connection per node, kept for 60 s
 * (ControlPersist) in a private directory, so that the next launch skips
 * the handshake, which is most of a launch's time.  With --ssh-close, or
 * where that directory cannot be used, plain connections that end with
 * the launch (a master of their own would serve no second session).
 */
static void ssh_setup(const struct launch_args *a, const struct launch_node *nodes, size_t nr,
		      struct ssh_options *ssh, struct strvec *extra,
		      char shared_dir[SSH_CONTROL_DIR_MAX + 1])
{
	struct strvec remote = STRVEC_INIT;

	for (size_t i = 0; i < nr; i++)
		if (!nodes[i].local)
			strvec_push(&remote, nodes[i].host);
	ssh->program = getenv("SPARKCTL_SSH");
	ssh->connect_timeout = a->connect_timeout ? a->connect_timeout : 5;
	/* A node that dies is noticed in 15 s, not at the next TCP timeout. */
	strvec_push(extra, "ServerAliveInterval=5");
	strvec_push(extra, "ServerAliveCountMax=3");
	ssh->extra_options = extra;
	if (remote.nr && !a->ssh_close && ssh_control_dir_shared(shared_dir) == 0)
		ssh->control_dir = shared_dir;
	/* A new connection's handshake is most of a cold launch (docs/launch.md). */
	if (remote.nr)
		ssh->kex = ssh_fast_kex(ssh, (const char *const *)remote.v, remote.nr);
	strvec_clear(&remote);
}

/* Run the job on the nodes and say how it ended; the exit status. */
static int launch_and_report(const struct launch_args *a, const struct launch_spec *job,
			     const struct launch_node *nodes, size_t nr,
			     const struct launch_srun *srun)
{
	char shared_dir[SSH_CONTROL_DIR_MAX + 1];
	struct ssh_options ssh = { .connect_timeout = 0 };
	struct strvec ssh_extra = STRVEC_INIT;
	struct launch_result res = { 0 };
	struct strbuf err = STRBUF_INIT;
	char *self = proc_self_path_or_name();
	int ret;

	if (!srun)
		ssh_setup(a, nodes, nr, &ssh, &ssh_extra, shared_dir);
	const struct launch_options o = {
		.job = job,
		.nodes = nodes,
		.nr_nodes = nr,
		.local_sparkctl = self,
		.remote_sparkctl = a->remote_sparkctl,
		.ssh = srun ? NULL : &ssh,
		.srun = srun,
		.stall_s = a->stall,
		.timeout_s = a->timeout,
		.tag_output = a->tag_output,
		.quiet = a->quiet,
		.log_dir = a->log_dir,
		/* Under srun without -H: the allocation's nodes, as Slurm writes them. */
		.hosts_arg = a->hostfile ? a->hostfile
			     : a->hosts	 ? a->hosts
			     : srun	 ? getenv("SLURM_JOB_NODELIST")
					 : "localhost",
		.out_fd = STDOUT_FILENO,
		.err_fd = STDERR_FILENO,
	};
	fflush(stdout);
	if ((ret = launch_run(&o, &res, &err)) == -ERANGE) {
		/* srun ran no task: the allocation cannot hold the step asked for. */
		cmd_error("launch", "the allocation (job %s) is smaller than asked: %s",
			  srun->job_id, err.buf);
		ret = SPARKCTL_EXIT_USAGE;
	} else if (ret == -EHOSTUNREACH) {
		cmd_error("launch", "srun could not start the job step: %s", err.buf);
		ret = SPARKCTL_EXIT_UNAVAILABLE;
	} else if (ret < 0) {
		/* Nothing started: this host's own failure (--log-dir, signals, ...). */
		cmd_error("launch", "%s", err.buf);
		ret = SPARKCTL_EXIT_ERROR;
	} else {
		/* -q drops the table, never the reason a job failed. */
		if (!a->quiet)
			print_srun_step(&o, &res);
		if (!a->quiet || res.end != LAUNCH_END_OK)
			print_outcome(&o, &res);
		if (!a->quiet && (res.end != LAUNCH_END_OK || res.nr_units <= 64))
			print_summary(&o, &res);
		if (a->log_dir)
			write_summary_json(a->log_dir, &o, &res);
		ret = res.exit_status;
		launch_result_release(&res);
	}
	free(self);
	free((char *)ssh.kex);
	strvec_clear(&ssh_extra);
	strbuf_release(&err);
	return ret;
}

/*
 * Under srun: the nodes are the allocation's, or those of -H among them in
 * the allocation's order (Slurm numbers the step's nodes so, and rank R
 * runs on node R / N).  Returns the exit status; nodelist is "" for the
 * whole allocation.
 */
static int srun_nodes(const struct launch_args *a, struct host_list *hosts, struct strbuf *nodelist)
{
	const char *job = getenv("SLURM_JOB_ID"), *alloc_spec = getenv("SLURM_JOB_NODELIST");
	struct host_list alloc = { 0 }, ordered = { 0 };
	struct strbuf err = STRBUF_INIT;
	int ret = SPARKCTL_EXIT_OK;

	if (!alloc_spec || host_list_parse(alloc_spec, &alloc, &err) < 0) {
		/* The allocation's fault, not the command line's: one line, no --help. */
		if (alloc_spec)
			cmd_error("launch", "%s (in SLURM_JOB_NODELIST)", err.buf);
		else
			cmd_error("launch", "no allocation's nodes to run on (SLURM_JOB_NODELIST "
					    "is not set)");
		ret = SPARKCTL_EXIT_USAGE;
		goto out;
	}
	if (!a->hosts && !a->hostfile)
		goto out;
	if (hosts->nr > alloc.nr) {
		ret = cmd_usage_error("launch",
				      "%zu nodes asked; the allocation (job %s) has %zu: %s",
				      hosts->nr, job, alloc.nr, alloc_spec);
		goto out;
	}
	for (size_t i = 0; i < hosts->nr; i++) {
		bool found = false;
		for (size_t k = 0; k < alloc.nr && !found; k++)
			found = streq(hosts->hosts[i].name, alloc.hosts[k].name);
		if (!found) {
			ret = cmd_usage_error("launch", "%s is not in the allocation (job %s: %s)",
					      hosts->hosts[i].name, job, alloc_spec);
			goto out;
		}
	}
	ordered.hosts = xcalloc(hosts->nr, sizeof(*ordered.hosts));
	for (size_t k = 0; k < alloc.nr; k++)
		for (size_t i = 0; i < hosts->nr; i++)
			if (hosts->hosts[i].name &&
			    streq(hosts->hosts[i].name, alloc.hosts[k].name)) {
				ordered.hosts[ordered.nr++] = hosts->hosts[i];
				hosts->hosts[i].name = NULL;
				strbuf_addf(nodelist, "%s%s", nodelist->len ? "," : "",
					    alloc.hosts[k].name);
			}
	host_list_release(hosts);
	*hosts = ordered;
	ordered = (struct host_list){ 0 };
out:
	host_list_release(&alloc);
	strbuf_release(&err);
	return ret;
}

/*
 * srun runs the job with --slurm, and inside an allocation (SLURM_JOB_ID)
 * unless --no-slurm - or unless -H names this host alone (localhost): a
 * job asked for here, as 'bench ddp' asks for its one-node run where it
 * runs, is not the allocation's to place.
 */
static bool under_srun(const struct launch_args *a, const struct host_list *hosts)
{
	bool all_local = true;

	if (a->slurm || a->no_slurm)
		return a->slurm;
	if (!getenv("SLURM_JOB_ID"))
		return false;
	for (size_t i = 0; i < hosts->nr; i++)
		all_local &= host_is_local(hosts->hosts[i].name);
	return !((a->hosts || a->hostfile) && all_local);
}

/*
 * The job under srun: one task per rank (per node with --torchrun),
 * named by its node; see src/launch/srun.h.
 */
static int run_under_srun(const struct launch_args *a, struct host_list *hosts, int n, char **argv)
{
	struct launch_node *nodes = NULL, *tasks = NULL;
	struct strbuf nodelist = STRBUF_INIT;
	struct launch_spec job;
	struct launch_srun srun = { .job_id = getenv("SLURM_JOB_ID") };
	char *srun_path = NULL, *self = NULL;
	size_t total = 0, nr_tasks;
	int ret, why;

	launch_spec_init(&job);
	if (!srun.job_id) {
		ret = cmd_usage_error(
			"launch", "--slurm: not inside a Slurm allocation (no SLURM_JOB_ID); run "
				  "it in salloc or sbatch");
		goto out;
	}
	if (!(srun_path = child_find_program("srun", getenv("PATH"), &why))) {
		cmd_error("launch", "no srun in PATH to run the job under Slurm (--no-slurm: ssh)");
		ret = SPARKCTL_EXIT_UNAVAILABLE;
		goto out;
	}
	if ((ret = srun_nodes(a, hosts, &nodelist)) != SPARKCTL_EXIT_OK ||
	    (ret = make_nodes(a, hosts, &nodes, &total)) != SPARKCTL_EXIT_OK)
		goto out;
	for (size_t i = 1; i < hosts->nr; i++)
		if (nodes[i].nproc != nodes[0].nproc) {
			ret = cmd_usage_error(
				"launch",
				"under srun every node runs as many ranks: %s has %u, "
				"%s %u; give -N",
				nodes[0].host, nodes[0].nproc, nodes[i].host, nodes[i].nproc);
			goto out;
		}
	if ((ret = make_job(a, nodes, hosts->nr, total, n, argv, &job)) != SPARKCTL_EXIT_OK)
		goto out;
	job.all_local = false;
	self = proc_self_path_or_name();
	srun.program = srun_path;
	srun.nnodes = (unsigned)hosts->nr;
	srun.nproc = nodes[0].nproc;
	srun.nodelist = nodelist.len ? nodelist.buf : NULL;
	srun.sparkctl = a->remote_sparkctl ? a->remote_sparkctl : self;
	/* One entry per task: a rank, or a node's torchrun. */
	nr_tasks = a->torchrun ? hosts->nr : total;
	tasks = xcalloc(nr_tasks, sizeof(*tasks));
	for (size_t t = 0; t < nr_tasks; t++) {
		tasks[t].host = nodes[a->torchrun ? t : t / srun.nproc].host;
		tasks[t].nproc = a->torchrun ? srun.nproc : 1;
	}
	ret = launch_and_report(a, &job, tasks, nr_tasks, &srun);
out:
	launch_spec_release(&job);
	strbuf_release(&nodelist);
	free(nodes);
	free(tasks);
	free(srun_path);
	free(self);
	return ret;
}

static int run_launch(const struct cmd *cmd, int argc, char **argv)
{
	struct launch_args a = { .grace = LAUNCH_GRACE_DEFAULT,
				 .connect_timeout = 5,
				 .nproc = NPROC_FROM_HOSTS,
				 .envs = STRVEC_INIT,
				 .exports = STRVEC_INIT,
				 .torchrun_opts = STRVEC_INIT };
	struct host_list hosts = { 0 };
	struct launch_spec job;
	struct launch_node *nodes = NULL;
	size_t total = 0;
	int n, ret;

	launch_spec_init(&job);
	n = parse_launch(cmd, &a, argc, argv, &ret);
	if (n < 0 || (ret = load_hosts(&a, &hosts)) != SPARKCTL_EXIT_OK)
		goto out;
	if (under_srun(&a, &hosts)) {
		ret = run_under_srun(&a, &hosts, n, argv);
		goto out;
	}
	if ((ret = make_nodes(&a, &hosts, &nodes, &total)) == SPARKCTL_EXIT_OK &&
	    (ret = make_job(&a, nodes, hosts.nr, total, n, argv, &job)) == SPARKCTL_EXIT_OK)
		ret = launch_and_report(&a, &job, nodes, hosts.nr, NULL);
out:
	launch_spec_release(&job);
	host_list_release(&hosts);
	free(nodes);
	strvec_clear(&a.envs);
	strvec_clear(&a.exports);
	strvec_clear(&a.torchrun_opts);
	return ret;
}

const struct cmd cmd_launch = {
	.name = "launch",
	.fn = run_launch,
	.summary = "run a job on every node; nothing of it outlives it",
	.usage = launch_usage,
	.description = launch_description,
	.exit_status = "the first failed rank's (128+N for signal N); the launch's own: 0 every "
		       "rank exited 0, 1 error, 2 usage, 3 a node could not be reached, set up, or "
		       "was lost, 5 ended by --job-timeout; summary.json's outcome tells which",
	.max_operands = CMD_OPERANDS_ANY,
};
