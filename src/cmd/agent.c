/*
 * sparkctl agent - what sparkctl runs on other nodes for a command on this
 * one.  Hidden from the help: its input and output are made by sparkctl,
 * for sparkctl.
 *
 *   sparkctl agent ping IF ADDR SIZE [IF ADDR SIZE]...
 *       don't-fragment pings, all at once, from interface IF to ADDR with
 *       SIZE bytes of payload; prints {"schema_version": 1, "results": [...]}
 *       with, for each, {"ok": bool, "detail": what ping said when it failed}.  One SSH
 *       session per node instead of one per link.
 *
 *   sparkctl agent launch
 *       one node's part of 'sparkctl launch': the job spec and control
 *       lines on stdin, the ranks' output and exits on stdout
 *       (src/launch/protocol.h has the protocol).
 *
 *   sparkctl agent reap JOB NODE GRACE_MS
 *       end what is left of node NODE's part of launch JOB after its agent
 *       died: SIGTERM, then SIGKILL after GRACE_MS.
 *
 *   sparkctl agent hold [--ready-port PORT] [--ready-timeout MS] [--self] -- CMD [ARG]...
 *       run CMD (with --self: this program with the arguments CMD [ARG]...),
 *       e.g. a one-shot server of 'sparkctl bench link' (iperf3 -s -1,
 *       ib_write_bw), until it exits or the caller is gone, and
 *       leave nothing of it behind.  CMD leads a session of its own, with
 *       stdin from /dev/null and the agent's stdout and stderr.  With
 *       --ready-port, prints "ready" once a process of CMD listens on TCP
 *       PORT; exits 3 when another process holds PORT already (CMD is
 *       not run), when CMD exits first, or when nothing listens within
 *       MS (10000; CMD is ended).  Exits with CMD's status (128+N for
 *       signal N), 127 or 126 when it cannot be run; at the end of its
 *       own stdin (the SSH channel closed) or on SIGTERM, SIGINT or SIGHUP
 *       it ends CMD and exits 143 (src/proc/hold.h has the details).
 *
 *   sparkctl agent serve-gate --await-workers|--await-peers ADDR:PORT:N
 *                             | --await-listening ADDR:PORT... | --report-to ADDR:PORT:RANK
 *       a node's part of the start order of 'sparkctl serve', in the script
 *       each node runs: the head's waits for the workers, a worker reports
 *       (src/serve/serve_gate.h); exit 5 when the other side never comes.
 */
#include "sparkctl.h"

#include <arpa/inet.h>

#include "cmd/cmd.h"
#include "lib/json.h"
#include "lib/options.h"
#include "lib/parse.h"
#include "launch/node_agent.h"
#include "lib/xalloc.h"
#include "probe/procs.h"
#include "proc/hold.h"
#include "proc/run.h"
#include "serve/serve_gate.h"

#define PING_TIMEOUT_MS 10000

/* The line of ping's output that says what went wrong. */
static char *ping_detail(const struct run_job *j)
{
	const char *text = j->err.len ? j->err.buf : j->out.buf;
	const char *sum = strstr(j->out.buf, "packets transmitted");

	if (j->timed_out)
		return xstrdup("timed out");
	if (!j->err.len && sum) {
		while (sum > j->out.buf && sum[-1] != '\n')
			sum--;
		text = sum;
	}
	return xstrndup(text, strcspn(text, "\n"));
}

static int agent_ping(int argc, char **argv)
{
	size_t n = (size_t)argc / 3;
	struct run_job *jobs;
	json_t *doc, *results;
	int ret = SPARKCTL_EXIT_OK;

	if (argc % 3 != 0 || argc == 0)
		return cmd_usage_error("agent", "ping takes IF ADDR SIZE triples");
	jobs = xcalloc(n, sizeof(*jobs));
	for (size_t i = 0; i < n; i++) {
		uint32_t size;
		run_job_init(&jobs[i]);
		if (parse_u32(argv[3 * i + 2], &size) < 0 || size > 65507) {
			ret = cmd_usage_error("agent", "bad ping size '%s'", argv[3 * i + 2]);
			goto out;
		}
		const char *const cmd[] = {
			"ping", "-n", "-M", "do", "-s",	       argv[3 * i + 2], "-c", "2", "-i",
			"0.2",	"-W", "1",  "-I", argv[3 * i], argv[3 * i + 1], NULL
		};
		for (size_t k = 0; cmd[k]; k++)
			strvec_push(&jobs[i].argv, cmd[k]);
	}
	run_jobs(jobs, n, 0, PING_TIMEOUT_MS, 65536);
	doc = json_object();
	results = json_array();
	jset(doc, "schema_version", jint(AGENT_PING_SCHEMA_VERSION));
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_object();
		bool ok = jobs[i].status == 0;
		char *detail = ok ? NULL : ping_detail(&jobs[i]);
		jset(r, "ok", jbool(ok));
		jset(r, "detail", jstr(detail));
		jpush(results, r);
		free(detail);
	}
	jset(doc, "results", results);
	if (json_write(stdout, doc) < 0)
		ret = SPARKCTL_EXIT_ERROR;
	json_decref(doc);
out:
	for (size_t i = 0; i < n; i++)
		run_job_release(&jobs[i]);
	free(jobs);
	return ret;
}

/*
 * One option of hold at argv[*i]: "--NAME VALUE" or "--NAME=VALUE".
 * Returns 1 with *value set (and *i past it), 0 when argv[*i] is not
 * the option, -1 when its value is missing.
 */
static int hold_option(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t len = strlen(name);

	if (strncmp(arg, name, len) != 0)
		return 0;
	if (arg[len] == '=') {
		*value = arg + len + 1;
		return 1;
	}
	if (arg[len] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

/* A usage error of hold: one line, no --help hint (the agent has no help). */
static int hold_usage(const char *fmt, ...) ATTR_PRINTF(1, 2);
static int hold_usage(const char *fmt, ...)
{
	struct strbuf msg = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	cmd_error("agent", "hold: %s", msg.buf);
	strbuf_release(&msg);
	return SPARKCTL_EXIT_USAGE;
}

static int agent_hold(int argc, char **argv)
{
	struct hold_options o = { .ready_timeout_ms = HOLD_READY_TIMEOUT_MS,
				  .in_fd = STDIN_FILENO,
				  .ready_fd = STDOUT_FILENO };
	const char *port = NULL, *timeout = NULL;
	struct strbuf err = STRBUF_INIT;
	struct strvec self_argv = STRVEC_INIT;
	bool self = false;
	uint32_t v;
	int i, r;

	for (i = 0; i < argc && !streq(argv[i], "--"); i++) {
		if (streq(argv[i], "--self")) {
			self = true;
			continue;
		}
		if ((r = hold_option(argc, argv, &i, "--ready-port", &port)) == 0)
			r = hold_option(argc, argv, &i, "--ready-timeout", &timeout);
		if (r < 0)
			return hold_usage("%s needs a value", argv[i]);
		if (r == 0)
			return hold_usage("unknown option '%s' (the command goes after '--')",
					  argv[i]);
	}
	if (i == argc)
		return hold_usage("no '--' before the command");
	if (i + 1 == argc)
		return hold_usage("no command after '--'");
	if (port) {
		if (parse_u32(port, &v) < 0 || v == 0 || v > 65535)
			return hold_usage("bad --ready-port '%s': a TCP port is 1 to 65535", port);
		o.ready_port = v;
	}
	if (timeout) {
		if (!port)
			return hold_usage("--ready-timeout needs --ready-port");
		if (parse_u32(timeout, &v) < 0)
			return hold_usage("bad --ready-timeout '%s': milliseconds", timeout);
		o.ready_timeout_ms = v;
	}
	o.argv = argv + i + 1;
	if (self) {
		/* A sparkctl command: this program, wherever the node keeps it. */
		char *path = proc_self_path_or_name();
		strvec_push(&self_argv, path);
		free(path);
		for (int k = i + 1; k < argc; k++)
			strvec_push(&self_argv, argv[k]);
		o.argv = self_argv.v;
	}
	r = hold_run(&o, &err);
	if (err.len)
		cmd_error("agent", "%s", err.buf);
	strbuf_release(&err);
	strvec_clear(&self_argv);
	return r;
}

static int run_ping(const struct cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	return agent_ping(argc - 1, argv + 1);
}

static int run_launch(const struct cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	(void)argv;
	if (argc != 1)
		return cmd_usage_error("agent", "launch takes no arguments");
	return launch_agent_main(STDIN_FILENO, STDOUT_FILENO);
}

static int run_srun_task(const struct cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	(void)argv;
	if (argc != 1)
		return cmd_usage_error("agent", "srun-task takes no arguments");
	return launch_agent_srun_main(STDIN_FILENO, STDOUT_FILENO);
}

static int run_reap(const struct cmd *cmd, int argc, char **argv)
{
	uint32_t node, grace;

	(void)cmd;
	if (argc != 4 || parse_u32(argv[2], &node) < 0 || parse_u32(argv[3], &grace) < 0 ||
	    strlen(argv[1]) != 16 || strspn(argv[1], "0123456789abcdef") != 16)
		return cmd_usage_error("agent", "reap takes JOB NODE GRACE_MS");
	return launch_agent_reap(argv[1], node, grace);
}

static int run_hold(const struct cmd *cmd, int argc, char **argv)
{
	(void)cmd;
	return agent_hold(argc - 1, argv + 1);
}

/*
 * A node's part of the start order of 'sparkctl serve' (serve_gate.h): the
 * head's waits for the workers' reports, a worker's reports.  An exit
 * status: 5 when the other side never came.  Its messages are serve's, in
 * the output of the node's part.
 */
struct serve_gate_args {
	const char *await_workers, *await_peers, *report_to;
	struct strvec await_listening;
};

static int serve_gate(const struct serve_gate_args *a)
{
	const char *spec = a->await_workers ? a->await_workers
			   : a->await_peers ? a->await_peers
					    : a->report_to;
	struct strbuf err = STRBUF_INIT;
	char addr[INET_ADDRSTRLEN];
	unsigned port, n;
	int r = 0;

	if (!!a->await_workers + !!a->await_peers + !!a->report_to + !!a->await_listening.nr > 1)
		return cmd_usage_error("agent serve-gate",
				       "--await-workers, --await-peers, --await-listening "
				       "or --report-to, one of them");
	for (size_t i = 0; i < a->await_listening.nr && r == 0; i++) {
		if (serve_gate_parse_addr(a->await_listening.v[i], addr, sizeof(addr), &port) < 0)
			return cmd_usage_error("agent serve-gate",
					       "'%s': ADDR:PORT, ADDR an IPv4 address",
					       a->await_listening.v[i]);
		r = serve_gate_listening(addr, port, SERVE_GATE_TIMEOUT_S, &err);
	}
	if (a->await_listening.nr) {
		if (r < 0)
			cmd_error("serve", "%s", err.buf);
		else
			cmd_error("serve", "the workers' servers listen; starting the head");
		strbuf_release(&err);
		return r == -ETIMEDOUT ? SPARKCTL_EXIT_TIMEOUT : r < 0 ? SPARKCTL_EXIT_ERROR : 0;
	}
	if (serve_gate_parse(spec, addr, sizeof(addr), &port, &n) < 0)
		return cmd_usage_error("agent serve-gate",
				       "'%s': ADDR:PORT:N, ADDR an IPv4 address", spec);
	if (a->await_peers)
		r = serve_gate_peers(addr, port, n, SERVE_GATE_TIMEOUT_S, &err);
	else if (a->await_workers)
		r = serve_gate_await(addr, port, n, SERVE_GATE_TIMEOUT_S, &err);
	else
		r = serve_gate_report(addr, port, n, SERVE_GATE_TIMEOUT_S, &err);
	if (r < 0)
		cmd_error("serve", "%s", err.buf);
	else if (a->await_peers)
		cmd_error("serve", "the %u worker%s joined; starting the head", n,
			  n == 1 ? "" : "s");
	else if (a->await_workers)
		cmd_error("serve", "the %u worker%s up; starting the head", n,
			  n == 1 ? "'s part is" : "s' parts are");
	strbuf_release(&err);
	return r == -ETIMEDOUT ? SPARKCTL_EXIT_TIMEOUT : r < 0 ? SPARKCTL_EXIT_ERROR : 0;
}

static int run_serve_gate(const struct cmd *cmd, int argc, char **argv)
{
	struct serve_gate_args a = { .await_listening = STRVEC_INIT };
	const struct opt opts[] = {
		OPT_STRING(0, "await-workers", &a.await_workers, "ADDR:PORT:N",
			   "in the head's part: wait until N workers' parts report at ADDR:PORT"),
		OPT_LIST(0, "await-listening", &a.await_listening, "ADDR:PORT",
			 "in the head's part: wait until a worker's server listens at ADDR:PORT; "
			 "repeat"),
		OPT_STRING(0, "await-peers", &a.await_peers, "ADDR:PORT:N",
			   "in the head's part: wait until N other nodes hold a connection to "
			   "ADDR:PORT"),
		OPT_STRING(0, "report-to", &a.report_to, "ADDR:PORT:RANK",
			   "in a worker's part: report to the head's part at ADDR:PORT"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv), ret;

	if (n < 0)
		ret = cmd_parse_exit(n);
	else if (!a.await_workers && !a.await_peers && !a.report_to && !a.await_listening.nr)
		ret = cmd_usage_error("agent serve-gate", "--await-workers, --await-peers, "
							  "--await-listening or --report-to");
	else
		ret = serve_gate(&a);
	strvec_clear(&a.await_listening);
	return ret;
}

static const char *const ping_usage[] = { "sparkctl agent ping IF ADDR SIZE [IF ADDR SIZE]...",
					  NULL };
static const char *const launch_usage[] = { "sparkctl agent launch", NULL };
static const char *const srun_task_usage[] = { "sparkctl agent srun-task", NULL };
static const char *const reap_usage[] = { "sparkctl agent reap JOB NODE GRACE_MS", NULL };
static const char *const hold_usage_lines[] = {
	"sparkctl agent hold [--ready-port PORT] [--ready-timeout MS] [--self] -- CMD [ARG]...",
	NULL
};

static const struct cmd agent_ping_cmd = {
	.name = "ping",
	.title = "agent ping",
	.fn = run_ping,
	.summary = "don't-fragment pings, all at once; a JSON array of results",
	.usage = ping_usage,
	.description =
		"Ping from interface IF to ADDR with SIZE bytes of payload, fragmentation\n"
		"forbidden, every triple at once; print a JSON array with, for each,\n"
		"{\"ok\": true|false, \"detail\": what ping said when it failed}.  'sparkctl\n"
		"doctor -H' runs it on each node: one SSH session per node, not per link.",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

static const struct cmd agent_launch_cmd = {
	.name = "launch",
	.title = "agent launch",
	.fn = run_launch,
	.summary = "this node's part of 'sparkctl launch' (src/launch/protocol.h)",
	.usage = launch_usage,
	.description = "One node's part of 'sparkctl launch': the job and the control lines\n"
		       "on stdin, the ranks' output and exits on stdout (the protocol is in\n"
		       "src/launch/protocol.h).  Nothing of the job outlives it.",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

static const struct cmd agent_srun_task_cmd = {
	.name = "srun-task",
	.title = "agent srun-task",
	.fn = run_srun_task,
	.summary = "one task's part of 'sparkctl launch' under srun (src/launch/srun.h)",
	.usage = srun_task_usage,
	.description = "One task of the srun step of 'sparkctl launch': the job and the control\n"
		       "lines on stdin (the same for every task), its rank's output and exit on\n"
		       "stdout; its place in the job from SLURM_PROCID, SLURM_LOCALID and\n"
		       "SLURM_NODEID.  Nothing of the job outlives it.",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

static const struct cmd agent_reap_cmd = {
	.name = "reap",
	.title = "agent reap",
	.fn = run_reap,
	.summary = "end what is left of a node's part of a launch whose agent died",
	.usage = reap_usage,
	.description = "End what is left of node NODE's part of launch JOB (16 hex digits)\n"
		       "after its agent died: SIGTERM, then SIGKILL after GRACE_MS.",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

static const struct cmd agent_hold_cmd = {
	.name = "hold",
	.title = "agent hold",
	.fn = run_hold,
	.summary = "run a command until it exits or the caller is gone (src/proc/hold.h)",
	.usage = hold_usage_lines,
	.description =
		"Run CMD (a one-shot server of 'sparkctl bench link': iperf3 -s -1,\n"
		"ib_write_bw) until it exits or the caller is gone (end of stdin, SIGTERM,\n"
		"SIGINT, SIGHUP), and leave nothing of it behind.  With --ready-port, print\n"
		"\"ready\" once CMD listens on TCP PORT; exit 3 when PORT is taken, CMD exits\n"
		"first or nothing listens within --ready-timeout MS (default 10000).\n"
		"Otherwise CMD's exit status (128+N for signal N; 127 or 126: not run).",
	.flags = CMD_RAW_ARGS,
	.max_operands = CMD_OPERANDS_ANY,
};

static const char *const serve_gate_usage[] = {
	"sparkctl agent serve-gate --await-workers|--await-peers ADDR:PORT:N",
	"sparkctl agent serve-gate --await-listening ADDR:PORT...",
	"sparkctl agent serve-gate --report-to ADDR:PORT:RANK",
	NULL,
};

static const struct cmd agent_serve_gate_cmd = {
	.name = "serve-gate",
	.title = "agent serve-gate",
	.fn = run_serve_gate,
	.summary = "a node's part of the start order of 'sparkctl serve' (src/serve/serve_gate.h)",
	.usage = serve_gate_usage,
	.description =
		"In the script each node runs for 'sparkctl serve': before the head's engine\n"
		"starts, wait until every worker's part has reported (--await-workers), its\n"
		"server listens (--await-listening) or it holds a connection to the head\n"
		"(--await-peers); in a worker's part, report to the head's (--report-to).\n"
		"Exit 5 when the other side does not come within 300 s.",
};

static const struct cmd *const agent_verbs[] = {
	&cmd_agent_status, &agent_ping_cmd, &agent_launch_cmd,	   &agent_srun_task_cmd,
	&agent_reap_cmd,   &agent_hold_cmd, &agent_serve_gate_cmd, NULL,
};

static const char *const agent_usage[] = { "sparkctl agent COMMAND [ARGS]", NULL };

const struct cmd cmd_agent = {
	.name = "agent",
	.summary = "what sparkctl runs on other nodes for a command on this one",
	.usage = agent_usage,
	.description = "Run by sparkctl over SSH, for sparkctl; not for use by hand.",
	.flags = CMD_HIDDEN,
	.verbs = agent_verbs,
	.verb_noun = "command",
};
