/*
 * The option vocabulary (docs/coding-style.md, "Options"), held over every
 * command's option table: each command and verb of sparkctl_commands[] is
 * run with cmd_parse_observer set, which hands over the table it parses
 * (with the shared options) and ends the command there.  And what a
 * renamed option says.
 */
#include "sparkctl.h"

#include "test_util.h"

#include "cmd/cmd.h"
#include "lib/options.h"

/* The table the observed command passed to cmd_parse(), copied. */
static struct opt seen[128];
static bool observed;

static void observe(const struct cmd *cmd, const struct opt *opts)
{
	size_t n = 0;

	(void)cmd;
	while (opts[n].type != OPT_TYPE_END && n + 1 < ARRAY_SIZE(seen)) {
		seen[n] = opts[n];
		n++;
	}
	seen[n] = (struct opt)OPT_END();
	observed = true;
}

/* Options a real -n may be: a repeat count. */
static const char *const count_names[] = { "count", "iters" };

static bool is_option(const struct opt *o)
{
	return o->type != OPT_TYPE_RENAMED && o->type != OPT_TYPE_OPERANDS_STOP;
}

static const struct opt *find_long(const char *name)
{
	for (const struct opt *o = seen; o->type != OPT_TYPE_END; o++)
		if (is_option(o) && o->long_name && streq(o->long_name, name))
			return o;
	return NULL;
}

static const struct opt *find_short(int c)
{
	for (const struct opt *o = seen; o->type != OPT_TYPE_END; o++)
		if (is_option(o) && o->short_name == c)
			return o;
	return NULL;
}

static bool arg_is(const struct opt *o, const char *arg)
{
	return o->arg_name && streq(o->arg_name, arg);
}

/* A renamed option must name an option of the same table. */
static bool renamed_target_exists(const struct opt *o)
{
	const char *now = o->arg_name;

	if (!now || now[0] != '-')
		return false;
	if (now[1] == '-')
		return find_long(now + 2) != NULL;
	return now[1] && !now[2] && find_short((unsigned char)now[1]) != NULL;
}

/* One option against the vocabulary; each breach a line in bad. */
static void check_option(const char *title, const struct opt *o, struct strbuf *bad)
{
	const char *l = o->long_name ? o->long_name : "";

	if (o->type == OPT_TYPE_RENAMED) {
		if (!renamed_target_exists(o))
			strbuf_addf(bad, "%s: renamed '%s' points at no option\n", title, l);
		return;
	}
	if (!is_option(o))
		return;
	if (streq(l, "root") && !(o->type == OPT_TYPE_STRING && arg_is(o, "DIR")))
		strbuf_addf(bad, "%s: --root is not a host tree (--root DIR)\n", title);
	if (streq(l, "from") &&
	    !((o->type == OPT_TYPE_STRING || o->type == OPT_TYPE_LIST) && arg_is(o, "FILE")))
		strbuf_addf(bad, "%s: --from is not a saved inventory (--from FILE)\n", title);
	if ((o->short_name == 'q') != streq(l, "quiet") ||
	    (streq(l, "quiet") && o->type != OPT_TYPE_BOOL))
		strbuf_addf(bad, "%s: -q/--quiet must be one flag, meaning quiet (-%c, --%s)\n",
			    title, o->short_name ? o->short_name : ' ', l);
	if (o->short_name == 'n') {
		bool count = false;
		for (size_t i = 0; i < ARRAY_SIZE(count_names); i++)
			count |= streq(l, count_names[i]);
		if (!count || o->type != OPT_TYPE_UINT)
			strbuf_addf(bad, "%s: -n is a repeat count only, not --%s\n", title, l);
	}
	if (streq(l, "json") && o->type != OPT_TYPE_BOOL)
		strbuf_addf(bad, "%s: --json prints JSON to stdout and takes no value\n", title);
	if ((o->short_name == 'o') != streq(l, "output") ||
	    (streq(l, "output") && !(o->type == OPT_TYPE_STRING && arg_is(o, "FILE"))))
		strbuf_addf(bad, "%s: -o is -o, --output FILE (-%c, --%s)\n", title,
			    o->short_name ? o->short_name : ' ', l);
	if (streq(l, "timeout"))
		strbuf_addf(bad, "%s: --timeout must say what it bounds (--job-timeout...)\n",
			    title);
	if ((o->short_name == 'h' || streq(l, "help")) && o->type != OPT_TYPE_HELP)
		strbuf_addf(bad, "%s: -h/--help is the help\n", title);
}

static void check_table(const struct cmd *cmd, struct strbuf *bad)
{
	const char *title = cmd_title(cmd);
	const struct opt *color = find_long("color");

	for (const struct opt *o = seen; o->type != OPT_TYPE_END; o++)
		check_option(title, o, bad);
	if (!color || color->type != OPT_TYPE_STRING || !arg_is(color, "WHEN"))
		strbuf_addf(bad, "%s: no --color WHEN\n", title);
	if ((cmd->flags & CMD_READS_NODE) && (!find_long("root") || !find_long("from")))
		strbuf_addf(bad, "%s: reads a node but lacks --root DIR or --from FILE\n", title);
}

static void check_commands(const struct cmd *const *table, size_t *nr, struct strbuf *bad)
{
	for (; *table; table++) {
		const struct cmd *cmd = *table;
		char name[64];
		char *argv[] = { name, NULL };

		if (cmd->verbs) {
			check_commands(cmd->verbs, nr, bad);
			continue;
		}
		/* The agent's verbs take raw arguments from sparkctl itself, no options. */
		if (cmd->flags & CMD_RAW_ARGS)
			continue;
		snprintf(name, sizeof(name), "%s", cmd->name);
		observed = false;
		assert_int_equal(cmd->fn(cmd, 1, argv), SPARKCTL_EXIT_OK);
		if (!observed) {
			strbuf_addf(bad, "%s: does not parse its options with cmd_parse()\n",
				    cmd_title(cmd));
			continue;
		}
		check_table(cmd, bad);
		(*nr)++;
	}
}

static void vocabulary(void **state)
{
	struct strbuf bad = STRBUF_INIT;
	size_t nr = 0;

	(void)state;
	cmd_parse_observer = observe;
	check_commands(sparkctl_commands, &nr, &bad);
	cmd_parse_observer = NULL;
	/* topo capture env netplan doctor launch, nccl link, exporter top status help version */
	assert_true(nr >= 13);
	if (bad.len)
		fail_msg("the option vocabulary is broken:\n%s", bad.buf);
	strbuf_release(&bad);
}

/* The checks themselves: a table that breaks each rule is caught. */
static void vocabulary_catches(void **state)
{
	unsigned u;
	bool b;
	const char *s;
	const struct opt breaches[][2] = {
		{ OPT_UINT('q', "queues", &u, "N", "queue pairs"), OPT_END() },
		{ OPT_UINT('n', "nproc", &u, "N", "ranks"), OPT_END() },
		{ OPT_STRING(0, "json", &s, "FILE", "JSON to FILE"), OPT_END() },
		{ OPT_UINT(0, "timeout", &u, "S", "a bound"), OPT_END() },
		{ OPT_UINT('r', "root", &u, "RANK", "root rank"), OPT_END() },
		{ OPT_STRING('o', "op", &s, "OP", "the collective"), OPT_END() },
		{ OPT_BOOL('q', "quick", &b, "fast"), OPT_END() },
		{ OPT_RENAMED(0, "timeout", "--nothing"), OPT_END() },
	};
	const struct cmd fake = { .name = "fake" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(breaches); i++) {
		struct strbuf bad = STRBUF_INIT;
		seen[0] = breaches[i][0];
		seen[1] = (struct opt)OPT_STRING(0, "color", &s, "WHEN", "colour");
		seen[2] = (struct opt)OPT_END();
		check_table(&fake, &bad);
		if (!bad.len)
			fail_msg("breach %zu was not caught", i);
		strbuf_release(&bad);
	}
}

/* An old name is an error naming the new one, never taken for something else. */
static void renamed(void **state)
{
	unsigned n = 0;
	const struct opt opts[] = {
		OPT_UINT('N', "nproc-per-node", &n, "N", "ranks"),
		OPT_RENAMED('n', NULL, "-N"),
		OPT_RENAMED(0, "timeout", "--job-timeout"),
		OPT_END(),
	};
	char a0[] = "x", a1[] = "-n", a2[] = "2", a3[] = "--timeout=5", a4[] = "--nproc-per-node=3";
	char *argv1[] = { a0, a1, a2, NULL }, *argv2[] = { a0, a3, NULL },
	     *argv3[] = { a0, a4, NULL };
	struct strbuf err = STRBUF_INIT, help = STRBUF_INIT;

	(void)state;
	assert_int_equal(options_parse(opts, 3, argv1, &err), -EINVAL);
	assert_string_equal(err.buf, "option '-n' is now '-N'");
	assert_int_equal(n, 0);
	strbuf_reset(&err);
	assert_int_equal(options_parse(opts, 2, argv2, &err), -EINVAL);
	assert_string_equal(err.buf, "option '--timeout' is now '--job-timeout'");
	assert_int_equal(options_parse(opts, 2, argv3, &err), 0);
	assert_int_equal(n, 3);
	/* Not in the help: it is no option any more. */
	options_help(&help, NULL, NULL, opts);
	assert_null(strstr(help.buf, "timeout"));
	assert_non_null(strstr(help.buf, "--nproc-per-node"));
	strbuf_release(&err);
	strbuf_release(&help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vocabulary),
		cmocka_unit_test(vocabulary_catches),
		cmocka_unit_test(renamed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
