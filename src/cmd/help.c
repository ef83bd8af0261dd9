/*
 * sparkctl help [COMMAND [VERB]] - the list of commands, or one command's help.
 * --man and --completion print the manual pages and shell completions the
 * build installs (cmd/reference.h), made from the same tables.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "cmd/reference.h"

static const char *const help_usage[] = {
	"sparkctl help [COMMAND [VERB]]",
	"sparkctl help --man [COMMAND [VERB]]",
	"sparkctl help --completion bash|zsh",
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

/* The man page of the command (and verb) named by the n operands, on stdout. */
static int show_man(int n, char **argv)
{
	const struct cmd *c = n ? cmd_find(sparkctl_commands, argv[1]) : NULL;
	const struct cmd *verb = n == 2 && c && c->verbs ? cmd_find(c->verbs, argv[2]) : NULL;
	struct strbuf out = STRBUF_INIT;
	struct opt *opts;

	if (n == 0) {
		man_page_sparkctl(sparkctl_commands, &out);
	} else if (!c || (c->flags & CMD_HIDDEN) ||
		   (n == 2 && (!verb || verb->flags & CMD_HIDDEN))) {
		return cmd_usage_error("help", "no manual page for '%s%s%s'", argv[1],
				       n == 2 ? " " : "", n == 2 ? argv[2] : "");
	} else {
		opts = cmd_options(verb ? verb : c);
		man_page_command(verb ? verb : c, verb ? c : NULL, opts, &out);
		free(opts);
	}
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return SPARKCTL_EXIT_OK;
}

static int show_completion(const char *shell)
{
	struct strbuf out = STRBUF_INIT;

	if (streq(shell, "bash"))
		completion_script(COMPLETION_BASH, sparkctl_commands, &out);
	else if (streq(shell, "zsh"))
		completion_script(COMPLETION_ZSH, sparkctl_commands, &out);
	else
		return cmd_usage_error("help", "bad --completion '%s': bash or zsh", shell);
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return SPARKCTL_EXIT_OK;
}

static int run_help(const struct cmd *cmd, int argc, char **argv)
{
	bool man = false;
	const char *shell = NULL;
	const struct opt opts[] = {
		OPT_BOOL(0, "man", &man, "print the manual page, in roff"),
		OPT_CHOICE(0, "completion", &shell, "SHELL", "bash|zsh",
			   "print the completion script for bash or zsh"),
		OPT_HELP(),
		OPT_END(),
	};
	const struct cmd *c;
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	if (shell && (man || n))
		return cmd_usage_error("help", "--completion takes no command, nor --man");
	if (shell)
		return show_completion(shell);
	c = n ? cmd_find(sparkctl_commands, argv[1]) : NULL;
	if (n == 2 && !(c && c->verbs))
		return cmd_usage_error("help", "expected a command name, and a verb of a command "
					       "that has verbs");
	if (man)
		return show_man(n, argv);
	if (n == 0) {
		cmd_help_overview(stdout);
		return SPARKCTL_EXIT_OK;
	}
	if (n == 2)
		return show(c->verbs, argv[2]);
	return show(sparkctl_commands, argv[1]);
}

const struct cmd cmd_help = {
	.name = "help",
	.fn = run_help,
	.summary = "show the commands, or one command's help",
	.usage = help_usage,
	.description = "Show the commands, or the help of COMMAND (and of its VERB).  --man\n"
		       "prints the manual page instead (sparkctl(1) without COMMAND), and\n"
		       "--completion the completion script of a shell; the build installs both.",
	.exit_status = "0 shown, 2 no such command",
	.max_operands = 2,
};
