#include "sparkctl.h"

#include "lib/options.h"
#include "lib/parse.h"
#include "lib/suggest.h"
#include "lib/xalloc.h"

static bool takes_argument(const struct opt *o)
{
	return o->type == OPT_TYPE_STRING || o->type == OPT_TYPE_UINT || o->type == OPT_TYPE_LIST;
}

static void opt_display_name(const struct opt *o, struct strbuf *sb)
{
	if (o->long_name)
		strbuf_addf(sb, "--%s", o->long_name);
	else
		strbuf_addf(sb, "-%c", o->short_name);
}

/* Store arg (NULL for flags) into o's value. */
static int opt_apply(const struct opt *o, const char *arg, struct strbuf *err)
{
	switch (o->type) {
	case OPT_TYPE_BOOL:
		*(bool *)o->value = true;
		return 0;
	case OPT_TYPE_HELP:
		return OPTIONS_HELP;
	case OPT_TYPE_RENAMED:
		return -EINVAL; /* said by renamed() before the value is looked at */
	case OPT_TYPE_STRING:
		*(const char **)o->value = arg;
		return 0;
	case OPT_TYPE_LIST:
		strvec_push((struct strvec *)o->value, arg);
		return 0;
	case OPT_TYPE_UINT: {
		uint32_t v;
		if (parse_u32(arg, &v) < 0 || v > UINT_MAX) {
			strbuf_addstr(err, "option '");
			opt_display_name(o, err);
			strbuf_addf(err, "' expects a non-negative integer, not '%s'", arg);
			return -EINVAL;
		}
		*(unsigned *)o->value = (unsigned)v;
		return 0;
	}
	case OPT_TYPE_END:
	case OPT_TYPE_OPERANDS_STOP:
		break;
	}
	return -EINVAL;
}

static const struct opt *find_long(const struct opt *opts, const char *name, size_t len)
{
	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
		if (o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, int c)
{
	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static void unknown_long(const struct opt *opts, const char *name, size_t len, struct strbuf *err)
{
	const char *names[64];
	size_t n = 0;
	char *word = xstrndup(name, len);

	for (const struct opt *o = opts; o->type != OPT_TYPE_END && n < ARRAY_SIZE(names); o++)
		if (o->long_name && o->type != OPT_TYPE_RENAMED)
			names[n++] = o->long_name;
	const char *near = suggest_nearest(word, names, n);
	strbuf_addf(err, "unknown option '--%s'", word);
	if (near)
		strbuf_addf(err, "; did you mean '--%s'?", near);
	free(word);
}

/* The use of a renamed option: the message names the option that replaced it. */
static int renamed(const struct opt *o, bool as_long, struct strbuf *err)
{
	if (as_long)
		strbuf_addf(err, "option '--%s' is now '%s'", o->long_name, o->arg_name);
	else
		strbuf_addf(err, "option '-%c' is now '%s'", o->short_name, o->arg_name);
	return -EINVAL;
}

static int parse_long(const struct opt *opts, int argc, char **argv, int *i, struct strbuf *err)
{
	const char *name = argv[*i] + 2;
	const char *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt *o = find_long(opts, name, len);

	if (!o) {
		unknown_long(opts, name, len, err);
		return -EINVAL;
	}
	if (o->type == OPT_TYPE_RENAMED)
		return renamed(o, true, err);
	if (!takes_argument(o)) {
		if (eq) {
			strbuf_addf(err, "option '--%s' takes no value", o->long_name);
			return -EINVAL;
		}
		return opt_apply(o, NULL, err);
	}
	if (eq)
		return opt_apply(o, eq + 1, err);
	if (*i + 1 >= argc) {
		strbuf_addf(err, "option '--%s' requires a value (%s)", o->long_name,
			    o->arg_name ? o->arg_name : "an argument");
		return -EINVAL;
	}
	(*i)++;
	return opt_apply(o, argv[*i], err);
}

static int parse_short_cluster(const struct opt *opts, int argc, char **argv, int *i,
			       struct strbuf *err)
{
	const char *p = argv[*i] + 1;

	for (; *p; p++) {
		const struct opt *o = find_short(opts, (unsigned char)*p);
		if (!o) {
			strbuf_addf(err, "unknown option '-%c'", *p);
			return -EINVAL;
		}
		if (o->type == OPT_TYPE_RENAMED)
			return renamed(o, false, err);
		if (!takes_argument(o)) {
			int r = opt_apply(o, NULL, err);
			if (r < 0)
				return r;
			continue;
		}
		if (p[1])
			return opt_apply(o, p + 1, err);
		if (*i + 1 >= argc) {
			strbuf_addf(err, "option '-%c' requires a value (%s)", *p,
				    o->arg_name ? o->arg_name : "an argument");
			return -EINVAL;
		}
		(*i)++;
		return opt_apply(o, argv[*i], err);
	}
	return 0;
}

int options_parse(const struct opt *opts, int argc, char **argv, struct strbuf *err)
{
	int nr_operands = 0;
	char **operands = xcalloc((size_t)argc + 1, sizeof(*operands));
	bool stop_at_operand = false, help = false;
	int r = 0;

	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++)
		stop_at_operand |= o->type == OPT_TYPE_OPERANDS_STOP;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			while (++i < argc)
				operands[nr_operands++] = argv[i];
			break;
		}
		if (a[0] == '-' && a[1] == '-')
			r = parse_long(opts, argc, argv, &i, err);
		else if (a[0] == '-' && a[1])
			r = parse_short_cluster(opts, argc, argv, &i, err);
		else if (stop_at_operand) {
			while (i < argc)
				operands[nr_operands++] = argv[i++];
			break;
		} else
			operands[nr_operands++] = argv[i];
		/* -h: the rest is still checked, so that a bad option is said first. */
		if (r == OPTIONS_HELP) {
			help = true;
			r = 0;
		}
		if (r < 0)
			goto out;
	}
	for (int k = 0; k < nr_operands; k++)
		argv[1 + k] = operands[k];
	r = help ? OPTIONS_HELP : nr_operands;
out:
	free(operands);
	return r;
}

void options_help(struct strbuf *out, const char *const *usage, const char *description,
		  const struct opt *opts)
{
	for (size_t i = 0; usage && usage[i]; i++)
		strbuf_addf(out, "%s%s\n", i ? "   or: " : "usage: ", usage[i]);
	if (description)
		strbuf_addf(out, "\n%s\n", description);
	if (!opts || opts->type == OPT_TYPE_END)
		return;
	strbuf_addstr(out, "\noptions:\n");
	for (const struct opt *o = opts; o->type != OPT_TYPE_END; o++) {
		size_t start = out->len;
		if (o->type == OPT_TYPE_OPERANDS_STOP || o->type == OPT_TYPE_RENAMED)
			continue;
		strbuf_addstr(out, "  ");
		if (o->short_name)
			strbuf_addf(out, "-%c%s", o->short_name, o->long_name ? ", " : "");
		else
			strbuf_addstr(out, "    ");
		if (o->long_name)
			strbuf_addf(out, "--%s", o->long_name);
		if (takes_argument(o))
			strbuf_addf(out, " %s", o->arg_name ? o->arg_name : "ARG");
		size_t width = out->len - start;
		if (width < 24)
			strbuf_addchars(out, ' ', 24 - width);
		else
			strbuf_addf(out, "\n%24s", "");
		strbuf_addf(out, "%s\n", o->help ? o->help : "");
	}
}
