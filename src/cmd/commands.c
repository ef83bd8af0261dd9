/*
 * commands.c - the command table, and finding and running a command: the
 * global options, exact-match lookup with a suggestion for a mistyped
 * name, sub-verbs, --help, and the checks every command starts with.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "lib/suggest.h"
#include "lib/xalloc.h"

const struct cmd *const sparkctl_commands[] = {
	&cmd_topo,     &cmd_capture, &cmd_env,	    &cmd_netplan, &cmd_doctor,	&cmd_launch,
	&cmd_serve,    &cmd_bench,   &cmd_exporter, &cmd_top,	  &cmd_status,	&cmd_deploy,
	&cmd_discover, &cmd_publish, &cmd_join,	    &cmd_cluster, &cmd_storage, &cmd_slurm,
	&cmd_help,     &cmd_version, &cmd_agent,    NULL,
};

const char *cmd_title(const struct cmd *cmd)
{
	return cmd->title ? cmd->title : cmd->name;
}

const struct cmd *cmd_find(const struct cmd *const *table, const char *name)
{
	for (; *table; table++)
		if (streq((*table)->name, name))
			return *table;
	return NULL;
}

const char *cmd_nearest(const struct cmd *const *table, const char *name)
{
	const char **names;
	const char *near;
	size_t n = 0;

	while (table[n])
		n++;
	names = xcalloc(n + 1, sizeof(*names));
	for (size_t i = 0; i < n; i++)
		names[i] = table[i]->flags & CMD_HIDDEN ? NULL : table[i]->name;
	near = suggest_nearest(name, names, n);
	free(names);
	return near;
}

const char sparkctl_summary[] = "set up, check, benchmark and run jobs on a cluster of DGX Spark "
				"machines";
const char sparkctl_description[] =
	"sparkctl turns DGX Spark machines (and any GPU nodes joined by RoCE or\n"
	"InfiniBand) into a working cluster: it reads the fabric, checks it and\n"
	"says how to fix what is wrong.";

/* "  NAME   summary" for each listed command of table. */
static void list_commands(const struct cmd *const *table, int width, struct strbuf *out)
{
	for (; *table; table++)
		if (!((*table)->flags & CMD_HIDDEN))
			strbuf_addf(out, "  %-*s %s\n", width, (*table)->name, (*table)->summary);
}

void cmd_help_overview(FILE *f)
{
	struct strbuf out = STRBUF_INIT;

	strbuf_addf(&out,
		    "usage: sparkctl [--version] [--help] COMMAND [ARGS]\n\n%s\n\ncommands:\n",
		    sparkctl_description);
	list_commands(sparkctl_commands, 10, &out);
	strbuf_addstr(&out, "\n'sparkctl help COMMAND' or 'sparkctl COMMAND --help' shows a "
			    "command's options.\n"
			    "Exit statuses are listed in docs/exit-codes.md.\n");
	fputs(out.buf, f);
	strbuf_release(&out);
}

/* "Exit status: ..." filled to 80 columns; the table's name for where the rows are defined. */
static void add_exit_status(const char *text, struct strbuf *out)
{
	struct strbuf all = STRBUF_INIT;
	size_t column = 0;

	strbuf_addf(&all, "Exit status: %s (docs/exit-codes.md).", text);
	strbuf_addch(out, '\n');
	for (const char *p = all.buf; *p;) {
		size_t word = strcspn(p, " ");
		if (column && column + 1 + word > 80) {
			strbuf_addch(out, '\n');
			column = 0;
		} else if (column) {
			strbuf_addch(out, ' ');
			column++;
		}
		strbuf_add(out, p, word);
		column += word;
		p += word;
		p += strspn(p, " ");
	}
	strbuf_addch(out, '\n');
	strbuf_release(&all);
}

void cmd_help_text(const struct cmd *cmd, const struct opt *opts, struct strbuf *out)
{
	char *noun;

	if (!cmd->verbs) {
		options_help(out, cmd->usage, cmd->description, opts);
		if (cmd->exit_status)
			add_exit_status(cmd->exit_status, out);
		return;
	}
	options_help(out, cmd->usage, cmd->description, NULL);
	strbuf_addch(out, '\n');
	list_commands(cmd->verbs, 8, out);
	noun = xstrdup(cmd->verb_noun);
	for (char *p = noun; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
	strbuf_addf(out, "\n'sparkctl %s %s --help' tells more.\n", cmd_title(cmd), noun);
	free(noun);
}

void (*cmd_parse_observer)(const struct cmd *cmd, const struct opt *opts);

/* --color's value, as the last cmd_parse() found it (NULL: auto). */
static const char *color_when;
static enum cmd_color color_mode = CMD_COLOR_AUTO;

/*
 * opts with the options every command takes (--color) added before -h
 * (or at the end), so that the help lists them with the command's own.
 */
static struct opt *with_shared_options(const struct opt *opts)
{
	const struct opt color = OPT_CHOICE(0, "color", &color_when, "WHEN", "auto|always|never",
					    "colour: auto (on a terminal), always or never");
	size_t n = 0, k = 0, at;
	struct opt *all;

	while (opts[n].type != OPT_TYPE_END)
		n++;
	for (at = 0; at < n && opts[at].type != OPT_TYPE_HELP; at++)
		;
	all = xcalloc(n + 2, sizeof(*all));
	for (size_t i = 0; i <= n; i++) {
		if (i == at)
			all[k++] = color;
		all[k++] = opts[i];
	}
	return all;
}

static int parse_color(const struct cmd *cmd)
{
	if (!color_when || streq(color_when, "auto"))
		color_mode = CMD_COLOR_AUTO;
	else if (streq(color_when, "always"))
		color_mode = CMD_COLOR_ALWAYS;
	else if (streq(color_when, "never"))
		color_mode = CMD_COLOR_NEVER;
	else
		return cmd_usage_error(cmd_title(cmd), "bad --color '%s': auto, always or never",
				       color_when);
	return 0;
}

bool cmd_use_color_on(int fd)
{
	const char *term = getenv("TERM"), *no_color = getenv("NO_COLOR");

	if (color_mode != CMD_COLOR_AUTO)
		return color_mode == CMD_COLOR_ALWAYS;
	/* no-color.org: only a NO_COLOR with a value turns colour off. */
	if (no_color && *no_color)
		return false;
	return isatty(fd) && term && *term && !streq(term, "dumb");
}

bool cmd_use_color(void)
{
	return cmd_use_color_on(STDOUT_FILENO);
}

/*
 * The word after a boolean --json, when it is not an option: someone who
 * wrote "--json FILE" for "-o FILE".  Found before options_parse()
 * reorders argv.
 */
static const char *word_after_json(const struct opt *opts, int argc, char **argv)
{
	bool takes_file = false;

	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
		takes_file |= o->long_name && streq(o->long_name, "output");
	for (int i = 1; takes_file && i + 1 < argc && !streq(argv[i], "--"); i++)
		if (streq(argv[i], "--json") && argv[i + 1][0] != '-')
			return argv[i + 1];
	return NULL;
}

int cmd_parse(const struct cmd *cmd, const struct opt *opts, int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct opt *all = with_shared_options(opts);
	const char *after_json = word_after_json(all, argc, argv);
	int n;

	color_when = NULL;
	if (cmd_parse_observer) {
		cmd_parse_observer(cmd, all);
		free(all);
		return -2;
	}
	n = options_parse(all, argc, argv, &err);
	if (n == OPTIONS_HELP) {
		struct strbuf out = STRBUF_INIT;
		cmd_help_text(cmd, all, &out);
		fputs(out.buf, stdout);
		strbuf_release(&out);
		n = -2;
	} else if (n < 0) {
		cmd_usage_error(cmd_title(cmd), "%s", err.buf);
		n = -1;
	} else if (cmd->max_operands != CMD_OPERANDS_ANY && n > cmd->max_operands) {
		const char *extra = argv[1 + cmd->max_operands];
		if (extra == after_json)
			cmd_usage_error(cmd_title(cmd),
					"unexpected argument '%s': --json prints the JSON on "
					"standard output; -o FILE writes it to a file",
					extra);
		else
			cmd_usage_error(cmd_title(cmd), "unexpected argument '%s'", extra);
		n = -1;
	} else if (parse_color(cmd) != 0) {
		n = -1;
	}
	free(all);
	strbuf_release(&err);
	return n;
}

/* A command with verbs: the verb argv[1] names, or the list of verbs. */
static int run_verb(const struct cmd *cmd, int argc, char **argv)
{
	const struct cmd *verb = argc >= 2 ? cmd_find(cmd->verbs, argv[1]) : NULL;
	struct strbuf out = STRBUF_INIT;
	bool asked = argc >= 2 && (streq(argv[1], "-h") || streq(argv[1], "--help"));

	if (verb)
		return cmd_run(verb, argc - 1, argv + 1);
	if (argc >= 2 && !asked) {
		const char *near = cmd_nearest(cmd->verbs, argv[1]);
		if (near)
			return cmd_usage_error(cmd_title(cmd),
					       "unknown %s '%s'; did you mean '%s'?",
					       cmd->verb_noun, argv[1], near);
		return cmd_usage_error(cmd_title(cmd), "unknown %s '%s'", cmd->verb_noun, argv[1]);
	}
	/* Asked for: the list on stdout; missing: the same, and a usage error. */
	cmd_help_text(cmd, NULL, &out);
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return asked ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_USAGE;
}

int cmd_run(const struct cmd *cmd, int argc, char **argv)
{
	if (cmd->verbs)
		return run_verb(cmd, argc, argv);
	if ((cmd->flags & CMD_RAW_ARGS) && argc >= 2 &&
	    (streq(argv[1], "-h") || streq(argv[1], "--help"))) {
		struct strbuf out = STRBUF_INIT;
		cmd_help_text(cmd, NULL, &out);
		fputs(out.buf, stdout);
		strbuf_release(&out);
		return SPARKCTL_EXIT_OK;
	}
	return cmd->fn(cmd, argc, argv);
}

static int unknown_command(const char *name)
{
	const char *near = cmd_nearest(sparkctl_commands, name);
	struct strbuf msg = STRBUF_INIT;

	strbuf_addstr(&msg, "sparkctl: '");
	strbuf_addstr_printable(&msg, name);
	strbuf_addstr(&msg, "' is not a sparkctl command.");
	if (near)
		strbuf_addf(&msg, " The most similar command is '%s'.", near);
	fprintf(stderr, "%s\nSee 'sparkctl --help'.\n", msg.buf);
	strbuf_release(&msg);
	return SPARKCTL_EXIT_USAGE;
}

static bool leave_without_exit_handlers;

void cmd_end_without_exit_handlers(void)
{
	leave_without_exit_handlers = true;
}

bool cmd_ends_without_exit_handlers(void)
{
	return leave_without_exit_handlers;
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

int cmd_main(int argc, char **argv)
{
	char help_name[] = "help", version_name[] = "version";
	char *alias_argv[] = { NULL, NULL };
	const struct cmd *c;

	if (argc < 2) {
		cmd_help_overview(stderr);
		return SPARKCTL_EXIT_USAGE;
	}
	if (streq(argv[1], "--help") || streq(argv[1], "-h")) {
		alias_argv[0] = help_name;
		return check_stdout(cmd_run(&cmd_help, 1, alias_argv));
	}
	if (streq(argv[1], "--version")) {
		alias_argv[0] = version_name;
		return check_stdout(cmd_run(&cmd_version, 1, alias_argv));
	}
	if (argv[1][0] == '-') {
		struct strbuf opt = STRBUF_INIT;
		strbuf_addstr_printable(&opt, argv[1]);
		fprintf(stderr, "sparkctl: unknown option '%s'\nSee 'sparkctl --help'.\n", opt.buf);
		strbuf_release(&opt);
		return SPARKCTL_EXIT_USAGE;
	}
	c = cmd_find(sparkctl_commands, argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	return check_stdout(cmd_run(c, argc - 1, argv + 1));
}
