/*
 * sparkctl - main: find the command in one exact-match table and run it.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "lib/suggest.h"

const struct cmd sparkctl_commands[] = {
	{ "topo", cmd_topo, "show this node's RDMA ports, twins, netdevs, GPUs and software" },
	{ "capture", cmd_capture, "write a replayable copy of the files sparkctl reads here" },
	{ "env", cmd_env, "print the NCCL/UCX/Gloo/MPI environment for this node" },
	{ "netplan", cmd_netplan, "generate (and --write) the fabric addresses of a plan" },
	{ "doctor", cmd_doctor, "check this node or the cluster; every finding with its fix" },
	{ "launch", cmd_launch, "run a job on every node; nothing of it outlives it" },
	{ "bench", cmd_bench, "time NCCL collectives; measure RDMA and TCP links between nodes" },
	{ "exporter", cmd_exporter, "serve GPU, RDMA and thermal metrics to Prometheus" },
	{ "top", cmd_top, "live view of GPUs and fabric ports, of this node or several" },
	{ "status", cmd_status, "one screen for the cluster: nodes, GPUs, links, last doctor" },
	{ "help", cmd_help, "show the commands, or one command's help" },
	{ "version", cmd_version, "print the version of sparkctl" },
	{ "agent", cmd_agent, NULL }, /* run by sparkctl on other nodes */
};
const size_t sparkctl_nr_commands = ARRAY_SIZE(sparkctl_commands);

const struct cmd *cmd_lookup(const char *name)
{
	for (size_t i = 0; i < sparkctl_nr_commands; i++)
		if (streq(sparkctl_commands[i].name, name))
			return &sparkctl_commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[ARRAY_SIZE(sparkctl_commands)];

	for (size_t i = 0; i < sparkctl_nr_commands; i++)
		names[i] = sparkctl_commands[i].summary ? sparkctl_commands[i].name : NULL;
	const char *near = suggest_nearest(name, names, sparkctl_nr_commands);
	fprintf(stderr, "sparkctl: '%s' is not a sparkctl command.", name);
	if (near)
		fprintf(stderr, " The most similar command is '%s'.", near);
	fprintf(stderr, "\nSee 'sparkctl --help'.\n");
	return SPARKCTL_EXIT_USAGE;
}

/* Output that did not reach its file (a full disk, a closed pipe) is an error. */
static int check_stdout(int ret)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sparkctl: write error on standard output: %s\n", strerror(errno));
		return SPARKCTL_EXIT_ERROR;
	}
	return ret;
}

int main(int argc, char **argv)
{
	char help_cmd[] = "help", version_cmd[] = "version";
	char *alias_argv[] = { NULL, NULL };
	const struct cmd *c;

	if (argc < 2) {
		cmd_help_overview(stderr);
		return SPARKCTL_EXIT_USAGE;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
		alias_argv[0] = help_cmd;
		return check_stdout(cmd_help(1, alias_argv));
	}
	if (streq(argv[1], "--version")) {
		alias_argv[0] = version_cmd;
		return check_stdout(cmd_version(1, alias_argv));
	}
	if (argv[1][0] == '-') {
		fprintf(stderr, "sparkctl: unknown option '%s'\nSee 'sparkctl --help'.\n", argv[1]);
		return SPARKCTL_EXIT_USAGE;
	}
	c = cmd_lookup(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return check_stdout(c->fn(argc - 1, argv + 1));
}
