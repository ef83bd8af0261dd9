/*
 * sparkctl help [COMMAND] - the list of commands, or one command's help.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "lib/suggest.h"

static const char *const help_usage[] = {
	"sparkctl help [COMMAND]",
	NULL,
};

void cmd_help_overview(FILE *f)
{
	fprintf(f, "usage: sparkctl [--version] [--help] COMMAND [ARGS]\n\n"
		   "sparkctl turns DGX Spark machines (and any GPU nodes joined by RoCE or\n"
		   "InfiniBand) into a working cluster: it reads the fabric, checks it and\n"
		   "says how to fix what is wrong.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sparkctl_nr_commands; i++)
		if (sparkctl_commands[i].summary)
			fprintf(f, "  %-10s %s\n", sparkctl_commands[i].name,
				sparkctl_commands[i].summary);
	fprintf(f, "\n'sparkctl help COMMAND' or 'sparkctl COMMAND --help' shows a command's "
		   "options.\n"
		   "Exit statuses are listed in docs/exit-codes.md.\n");
}

int cmd_help(int argc, char **argv)
{
	bool help = false;
	const struct opt opts[] = {
		OPT_HELP(&help),
		OPT_END(),
	};
	int n = cmd_parse_options(opts, help_usage, "Show the commands, or the help of COMMAND.",
				  &help, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	if (n == 0) {
		cmd_help_overview(stdout);
		return SPARKCTL_EXIT_OK;
	}
	if (n > 1)
		return cmd_usage_error("help", "expected one command name");
	const struct cmd *c = cmd_lookup(argv[1]);
	if (!c) {
		const char *names[64];
		size_t k;
		for (k = 0; k < sparkctl_nr_commands && k < ARRAY_SIZE(names); k++)
			names[k] = sparkctl_commands[k].summary ? sparkctl_commands[k].name : NULL;
		const char *near = suggest_nearest(argv[1], names, k);
		if (near)
			return cmd_usage_error("help", "no command '%s'; did you mean '%s'?",
					       argv[1], near);
		return cmd_usage_error("help", "no command '%s'", argv[1]);
	}
	char *sub_argv[] = { (char *)c->name, (char *)"--help", NULL };
	return c->fn(2, sub_argv);
}
