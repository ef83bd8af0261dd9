/*
 * man.c - the manual pages, in roff (man(7)), from the tables --help is
 * made from: struct cmd and each command's option table.
 */
#include "sparkctl.h"

#include "cmd/reference.h"
#include "lib/xalloc.h"
#include "version.h"

/* The table cmd_parse() was handed, copied by the observer. */
static struct opt *observed;

static void observe(const struct cmd *cmd, const struct opt *opts)
{
	size_t n = 0;

	(void)cmd;
	while (opts[n].type != OPT_TYPE_END)
		n++;
	free(observed);
	observed = xcalloc(n + 1, sizeof(*observed));
	memcpy(observed, opts, (n + 1) * sizeof(*observed));
}

struct opt *cmd_options(const struct cmd *cmd)
{
	void (*before)(const struct cmd *, const struct opt *) = cmd_parse_observer;
	char name[64];
	char *argv[] = { name, NULL };
	struct opt *opts;

	if (cmd->verbs || !cmd->fn || (cmd->flags & CMD_RAW_ARGS))
		return NULL;
	snprintf(name, sizeof(name), "%s", cmd->name);
	observed = NULL;
	cmd_parse_observer = observe;
	cmd->fn(cmd, 1, argv);
	cmd_parse_observer = before;
	opts = observed;
	observed = NULL;
	return opts;
}

/* s escaped for the inside of a roff text line: backslashes, and '-' as a minus when minus. */
static void roff_add_inline(struct strbuf *out, const char *s, size_t len, bool minus)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\')
			strbuf_addstr(out, "\\e");
		else if (s[i] == '-' && minus)
			strbuf_addstr(out, "\\-");
		else
			strbuf_addch(out, s[i]);
	}
}

/* One text line: a leading '.' or '\'' would be a request; \& keeps it text. */
static void roff_add_line(struct strbuf *out, const char *s, size_t len, bool minus)
{
	if (len && (s[0] == '.' || s[0] == '\''))
		strbuf_addstr(out, "\\&");
	roff_add_inline(out, s, len, minus);
	strbuf_addch(out, '\n');
}

void roff_add_text(struct strbuf *out, const char *text)
{
	bool verbatim = false;

	/* Blank lines part paragraphs; indented lines (lists, examples) keep their layout. */
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		bool indented = p[0] == ' ' || p[0] == '\t';
		if (verbatim && (!indented || !len)) {
			strbuf_addstr(out, ".fi\n");
			verbatim = false;
		}
		if (!len) {
			strbuf_addstr(out, ".PP\n");
		} else {
			if (indented && !verbatim) {
				strbuf_addstr(out, ".nf\n");
				verbatim = true;
			}
			roff_add_line(out, p, len, false);
		}
		p += len;
		p += *p == '\n';
	}
	if (verbatim)
		strbuf_addstr(out, ".fi\n");
}

void man_page_name(const struct cmd *cmd, const struct cmd *parent, struct strbuf *out)
{
	strbuf_addstr(out, "sparkctl");
	if (parent)
		strbuf_addf(out, "-%s", parent->name);
	if (cmd)
		strbuf_addf(out, "-%s", cmd->name);
}

static void add_header(struct strbuf *out, const char *page, const char *summary)
{
	strbuf_addstr(out, ".TH ");
	for (const char *p = page; *p; p++) {
		if (*p == '-')
			strbuf_addstr(out, "\\-");
		else
			strbuf_addch(out, (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p));
	}
	strbuf_addf(out, " 1 \"\" \"sparkctl %s\" \"sparkctl manual\"\n", SPARKCTL_VERSION);
	strbuf_addstr(out, ".SH NAME\n");
	roff_add_inline(out, page, strlen(page), true);
	strbuf_addstr(out, " \\- ");
	roff_add_inline(out, summary, strlen(summary), false);
	strbuf_addch(out, '\n');
}

/* The usage lines, as the help shows them, without filling. */
static void add_synopsis(struct strbuf *out, const char *const *usage)
{
	strbuf_addstr(out, ".SH SYNOPSIS\n.nf\n");
	for (size_t i = 0; usage && usage[i]; i++)
		for (const char *p = usage[i]; *p;) {
			size_t len = strcspn(p, "\n");
			roff_add_line(out, p, len, true);
			p += len;
			p += *p == '\n';
		}
	strbuf_addstr(out, ".fi\n");
}

/* What options_help() lists: every option but the markers and the renamed ones. */
static bool listed(const struct opt *o)
{
	return o->type != OPT_TYPE_OPERANDS_STOP && o->type != OPT_TYPE_RENAMED;
}

static void add_option(struct strbuf *out, const struct opt *o)
{
	bool takes_value =
		o->type == OPT_TYPE_STRING || o->type == OPT_TYPE_UINT || o->type == OPT_TYPE_LIST;

	strbuf_addstr(out, ".TP\n");
	if (o->short_name)
		strbuf_addf(out, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
	if (o->long_name) {
		strbuf_addstr(out, "\\fB\\-\\-");
		roff_add_inline(out, o->long_name, strlen(o->long_name), true);
		strbuf_addstr(out, "\\fR");
	}
	if (takes_value) {
		const char *arg = o->arg_name ? o->arg_name : "ARG";
		strbuf_addstr(out, " \\fI");
		roff_add_inline(out, arg, strlen(arg), false);
		strbuf_addstr(out, "\\fR");
	}
	strbuf_addch(out, '\n');
	roff_add_text(out, o->help ? o->help : "");
}

/* See also: a list of pages, "name(1)", comma-separated. */
static void add_see_also_page(struct strbuf *out, const char *page, bool last)
{
	strbuf_addstr(out, ".BR ");
	roff_add_inline(out, page, strlen(page), true);
	strbuf_addf(out, " (1)%s\n", last ? "" : " ,");
}

static void add_exit_status(struct strbuf *out, const char *text)
{
	struct strbuf all = STRBUF_INIT;

	strbuf_addf(&all, "%s (docs/exit-codes.md).", text);
	strbuf_addstr(out, ".SH EXIT STATUS\n");
	roff_add_text(out, all.buf);
	strbuf_release(&all);
}

static void add_documentation(struct strbuf *out)
{
	strbuf_addstr(out, ".PP\nThe documentation of sparkctl, in /usr/share/doc/sparkctl "
			   "(docs/ in its source), and\n\\(lqsparkctl COMMAND \\-\\-help\\(rq.\n");
}

/* The verbs of cmd, each with its summary and its page. */
static void add_verbs(struct strbuf *out, const struct cmd *cmd)
{
	strbuf_addstr(out, ".SH ");
	for (const char *p = cmd->verb_noun; *p; p++)
		strbuf_addch(out, (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p));
	strbuf_addstr(out, "S\n");
	for (const struct cmd *const *v = cmd->verbs; *v; v++) {
		if ((*v)->flags & CMD_HIDDEN)
			continue;
		strbuf_addf(out, ".TP\n\\fB%s\\fR\n", (*v)->name);
		roff_add_text(out, (*v)->summary);
		strbuf_addf(out, "(\\%%\\fBsparkctl\\-%s\\-%s\\fR(1))\n", cmd->name, (*v)->name);
	}
}

void man_page_command(const struct cmd *cmd, const struct cmd *parent, const struct opt *opts,
		      struct strbuf *out)
{
	struct strbuf page = STRBUF_INIT;

	man_page_name(cmd, parent, &page);
	add_header(out, page.buf, cmd->summary);
	add_synopsis(out, cmd->usage);
	if (cmd->description) {
		strbuf_addstr(out, ".SH DESCRIPTION\n");
		roff_add_text(out, cmd->description);
	}
	if (cmd->verbs)
		add_verbs(out, cmd);
	if (opts && opts->type != OPT_TYPE_END) {
		strbuf_addstr(out, ".SH OPTIONS\n");
		for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
			if (listed(o))
				add_option(out, o);
	}
	if (cmd->exit_status)
		add_exit_status(out, cmd->exit_status);
	strbuf_addstr(out, ".SH SEE ALSO\n");
	add_see_also_page(out, "sparkctl", !parent && !cmd->verbs);
	if (parent) {
		strbuf_reset(&page);
		man_page_name(parent, NULL, &page);
		add_see_also_page(out, page.buf, true);
	}
	for (const struct cmd *const *v = cmd->verbs; v && *v; v++) {
		bool last = !v[1];
		if ((*v)->flags & CMD_HIDDEN)
			continue;
		strbuf_reset(&page);
		man_page_name(*v, cmd, &page);
		add_see_also_page(out, page.buf, last);
	}
	add_documentation(out);
	strbuf_release(&page);
}

/* The statuses of src/exitcode.h, as docs/exit-codes.md names them. */
static const struct {
	int status;
	const char *name, *meaning;
} exit_statuses[] = {
	{ SPARKCTL_EXIT_OK, "OK", "The command did what was asked." },
	{ SPARKCTL_EXIT_ERROR, "ERROR", "It failed: an I/O error, bad input data." },
	{ SPARKCTL_EXIT_USAGE, "USAGE", "The command line is wrong; nothing was done." },
	{ SPARKCTL_EXIT_UNAVAILABLE, "UNAVAILABLE",
	  "Something it needs is missing: a library, a device, a tool, a node that could "
	  "not be reached." },
	{ SPARKCTL_EXIT_PROBLEMS, "PROBLEMS",
	  "It ran to the end and found problems: failed checks, wrong values, a broken "
	  "link." },
	{ SPARKCTL_EXIT_TIMEOUT, "TIMEOUT", "A deadline passed." },
};

void man_page_sparkctl(const struct cmd *const *table, struct strbuf *out)
{
	const char *const usage[] = { "sparkctl [--version] [--help] COMMAND [ARGS]", NULL };

	add_header(out, "sparkctl", sparkctl_summary);
	add_synopsis(out, usage);
	strbuf_addstr(out, ".SH DESCRIPTION\n");
	roff_add_text(out, sparkctl_description);
	strbuf_addstr(out, ".SH COMMANDS\n");
	for (const struct cmd *const *c = table; *c; c++) {
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		strbuf_addf(out, ".TP\n\\fB%s\\fR\n", (*c)->name);
		roff_add_text(out, (*c)->summary);
		strbuf_addf(out, "(\\%%\\fBsparkctl\\-%s\\fR(1))\n", (*c)->name);
	}
	strbuf_addstr(out,
		      ".SH OPTIONS\n"
		      ".TP\n\\fB\\-\\-version\\fR\nprint the version (as \\fBsparkctl "
		      "version\\fR)\n"
		      ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nlist the commands (as \\fBsparkctl "
		      "help\\fR)\n"
		      ".SH EXIT STATUS\n");
	for (size_t i = 0; i < ARRAY_SIZE(exit_statuses); i++) {
		strbuf_addf(out, ".TP\n%d %s\n", exit_statuses[i].status, exit_statuses[i].name);
		roff_add_text(out, exit_statuses[i].meaning);
	}
	strbuf_addstr(out, ".PP\nA command killed by a signal exits with 128 + the signal's "
			   "number.\nEach command's page says which statuses it uses "
			   "(docs/exit-codes.md).\n"
			   ".SH SEE ALSO\n");
	for (const struct cmd *const *c = table; *c; c++) {
		struct strbuf page = STRBUF_INIT;
		bool last = true;
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		for (const struct cmd *const *n = c + 1; *n; n++)
			last &= ((*n)->flags & CMD_HIDDEN) != 0;
		man_page_name(*c, NULL, &page);
		add_see_also_page(out, page.buf, last);
		strbuf_release(&page);
	}
	add_documentation(out);
}
