/*
 * The manual pages and completions made from the tables (cmd/reference.h):
 * roff's special characters kept as text, a page's sections and options
 * from a command's table, a completion's options and values; and over the
 * real commands, that an option's choices are the values its help names.
 */
#include "sparkctl.h"

#include <ctype.h>

#include "test_util.h"

#include "cmd/reference.h"

static void roff_escapes(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	roff_add_text(&out, ".start is not a request\n'nor this\na back\\slash\n\n"
			    "  indented\n  kept\nafter");
	assert_string_equal(out.buf, "\\&.start is not a request\n"
				     "\\&'nor this\n"
				     "a back\\eslash\n"
				     ".PP\n"
				     ".nf\n"
				     "  indented\n"
				     "  kept\n"
				     ".fi\n"
				     "after\n");
	strbuf_release(&out);
}

static bool ex, quiet_flag;
static const char *plan, *color_when_seen;

static int run_fake(const struct cmd *cmd, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_BOOL('x', "ex", &ex, "a flag, with a back\\slash"),
		OPT_CHOICE(0, "plan", &plan, "PLAN", "pair|switch|ring", "pair, switch or ring"),
		OPT_RENAMED(0, "old", "--plan"),
		OPT_STRING(0, "dir", &color_when_seen, "DIR", "a tree"),
		OPT_STRING('H', "hosts", &color_when_seen, "HOSTS", "the nodes"),
		OPT_BOOL('q', "quiet", &quiet_flag, "quiet"),
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	return n < 0 ? cmd_parse_exit(n) : SPARKCTL_EXIT_OK;
}

static const char *const fake_usage[] = { "sparkctl fake [-x] [--plan PLAN] FILE", NULL };
static const struct cmd cmd_fake = {
	.name = "fake",
	.fn = run_fake,
	.summary = "do nothing, for the tests",
	.usage = fake_usage,
	.description = ".dot first\n\nA second paragraph.",
	.exit_status = "0 done, 2 usage",
	.max_operands = 1,
};
static const struct cmd cmd_fake_hidden = {
	.name = "secret",
	.fn = run_fake,
	.summary = "hidden",
	.usage = fake_usage,
	.flags = CMD_HIDDEN,
};
static const struct cmd *const fake_commands[] = { &cmd_fake, &cmd_fake_hidden, NULL };

static void contains(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("'%s' not in:\n%s", part, text);
}

static void page_of_a_command(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct opt *opts = cmd_options(&cmd_fake);

	(void)state;
	assert_non_null(opts);
	man_page_command(&cmd_fake, NULL, opts, &out);
	contains(out.buf, ".TH SPARKCTL\\-FAKE 1 ");
	contains(out.buf, ".SH NAME\nsparkctl\\-fake \\- do nothing, for the tests\n");
	contains(out.buf, ".SH SYNOPSIS\n.nf\nsparkctl fake [\\-x] [\\-\\-plan PLAN] FILE\n.fi\n");
	contains(out.buf, ".SH DESCRIPTION\n\\&.dot first\n.PP\nA second paragraph.\n");
	contains(out.buf, ".TP\n\\fB\\-x\\fR, \\fB\\-\\-ex\\fR\na flag, with a back\\eslash\n");
	contains(out.buf, ".TP\n\\fB\\-\\-plan\\fR \\fIPLAN\\fR\npair, switch or ring\n");
	/* The options cmd_parse() adds, as --help lists them; not the renamed one. */
	contains(out.buf, ".TP\n\\fB\\-\\-color\\fR \\fIWHEN\\fR\n");
	contains(out.buf, ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help\n");
	assert_null(strstr(out.buf, "old"));
	contains(out.buf, ".SH EXIT STATUS\n0 done, 2 usage (docs/exit-codes.md).\n");
	contains(out.buf, ".SH SEE ALSO\n.BR sparkctl (1)\n");
	free(opts);
	strbuf_release(&out);
}

static void page_of_a_verb_and_of_sparkctl(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	man_page_command(&cmd_bench_nccl, &cmd_bench, NULL, &out);
	contains(out.buf, ".TH SPARKCTL\\-BENCH\\-NCCL 1 ");
	contains(out.buf, ".BR sparkctl (1) ,\n.BR sparkctl\\-bench (1)\n");
	assert_null(strstr(out.buf, ".SH OPTIONS"));
	strbuf_reset(&out);
	man_page_command(&cmd_bench, NULL, NULL, &out);
	contains(out.buf, ".SH BENCHMARKS\n.TP\n\\fBnccl\\fR\n");
	contains(out.buf, ".BR sparkctl\\-bench\\-link (1) ,\n.BR sparkctl\\-bench\\-ddp (1)\n");
	strbuf_reset(&out);
	man_page_sparkctl(fake_commands, &out);
	contains(out.buf, ".TP\n\\fBfake\\fR\ndo nothing, for the tests\n");
	assert_null(strstr(out.buf, "secret"));
	contains(out.buf, ".TP\n4 PROBLEMS\n");
	strbuf_release(&out);
}

static void completion_of_a_command(void **state)
{
	struct strbuf out = STRBUF_INIT;

	(void)state;
	completion_script(COMPLETION_BASH, fake_commands, &out);
	contains(out.buf, "_sparkctl_commands='fake'\n");
	contains(out.buf, "\t\"fake\")\n\t\topts=\" -x --ex --plan --dir -H --hosts -q --quiet "
			  "--color -h --help\"\n");
	contains(out.buf, "\t\tdirs=\" --dir\"\n");
	contains(out.buf, "\t\thosts=\" -H --hosts\"\n");
	contains(out.buf, "case $opt in --plan) choices=\"pair switch ring\" ;; esac\n");
	contains(out.buf, "operands=files\n");
	assert_null(strstr(out.buf, "secret"));
	assert_null(strstr(out.buf, "--old"));
	strbuf_reset(&out);
	completion_script(COMPLETION_ZSH, fake_commands, &out);
	contains(out.buf, "#compdef sparkctl\n");
	contains(out.buf, "'(-x --ex)--ex[a flag, with a back\\\\slash]'");
	contains(out.buf, "'--plan=[pair, switch or ring]:PLAN:(pair switch ring)'");
	contains(out.buf, "'(-H --hosts)-H+[the nodes]:HOSTS:_sparkctl_hosts'");
	contains(out.buf, "'--dir=[a tree]:DIR:_files -/'");
	assert_null(strstr(out.buf, "secret"));
	strbuf_release(&out);
}

/* Each choice is a word of the option's help ("pair, switch or ring"). */
static void check_choices(const struct cmd *cmd, const struct opt *opts, struct strbuf *bad)
{
	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
		const char *p = o->choices;
		while (p && *p) {
			size_t len = strcspn(p, "|");
			char *word = xstrndup(p, len);
			bool named = false;
			for (const char *h = o->help; h && (h = strstr(h, word)); h += len) {
				bool before = h == o->help || !isalnum((unsigned char)h[-1]);
				named |= before && !isalnum((unsigned char)h[len]);
			}
			if (!named)
				strbuf_addf(bad, "%s --%s: '%s' is not in its help\n",
					    cmd_title(cmd), o->long_name, word);
			free(word);
			p += len;
			p += *p == '|';
		}
	}
}

static void choices_are_in_the_help(void **state)
{
	struct strbuf bad = STRBUF_INIT;
	size_t nr = 0, with_choices = 0;

	(void)state;
	for (const struct cmd *const *c = sparkctl_commands; *c; c++) {
		const struct cmd *const *v = (*c)->verbs ? (*c)->verbs : c;
		for (; *v; v++) {
			struct opt *opts = cmd_options(*v);
			if (opts) {
				check_choices(*v, opts, &bad);
				for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
					with_choices += o->choices != NULL;
				nr++;
			}
			free(opts);
			if (!(*c)->verbs)
				break;
		}
	}
	assert_true(nr >= 13);
	/* --color everywhere, and netplan's, env's, launch's, top's, bench nccl's. */
	assert_true(with_choices >= nr + 6);
	if (bad.len)
		fail_msg("%s", bad.buf);
	strbuf_release(&bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roff_escapes),
		cmocka_unit_test(page_of_a_command),
		cmocka_unit_test(page_of_a_verb_and_of_sparkctl),
		cmocka_unit_test(completion_of_a_command),
		cmocka_unit_test(choices_are_in_the_help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
