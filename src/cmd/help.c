/*
 * sparkctl help [COMMAND [VERB]] - the list of commands, or one command's help.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"

static const char *const help_usage[] = {
	"sparkctl help [COMMAND [VERB]]",
	NULL,
};

/* The help of name among table (a command, or a verb of one): what --help prints. */
static int show(const struct cmd *const *table, const char *name)
{
	const struct cmd *c = cmd_find(table, name);
	char help_flag[] = "--help";
	char *argv[] = { (char *)name, help_flag, NULL };
	const char *near;

	if (c)
		return cmd_run(c, 2, argv);
	near = cmd_nearest(table, name);
	if (near)
		return cmd_usage_error("help", "no command '%s'; did you mean '%s'?", name, near);
	return cmd_usage_error("help", "no command '%s'", name);
}

static int run_help(const struct cmd *cmd, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_HELP(),
		OPT_END(),
	};
	const struct cmd *c;
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	if (n == 0) {
		cmd_help_overview(stdout);
		return SPARKCTL_EXIT_OK;
	}
	c = cmd_find(sparkctl_commands, argv[1]);
	if (n == 2 && c && c->verbs)
		return show(c->verbs, argv[2]);
	if (n > 1)
		return cmd_usage_error("help", "expected a command name, and a verb of a command "
					       "that has verbs");
	return show(sparkctl_commands, argv[1]);
}

const struct cmd cmd_help = {
	.name = "help",
	.fn = run_help,
	.summary = "show the commands, or one command's help",
	.usage = help_usage,
	.description = "Show the commands, or the help of COMMAND (and of its VERB).",
	.exit_status = "0 shown, 2 no such command",
	.max_operands = 2,
};
