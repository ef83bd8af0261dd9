/*
 * options.h - declarative command-line options.
 *
 * Each command describes its options in one table and calls
 * options_parse(); help text is generated from the same table, so the
 * two cannot drift.  Options and operands may be mixed (like GNU getopt);
 * "--" ends the options.  Long options take "--name=value" or
 * "--name value"; short ones "-x value", "-xvalue", and boolean short
 * options can be bundled ("-ab").
 */
#ifndef SPARKCTL_OPTIONS_H
#define SPARKCTL_OPTIONS_H

#include "sparkctl.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

enum opt_type {
	OPT_TYPE_END = 0,
	OPT_TYPE_BOOL,	 /* value: bool *, set to true */
	OPT_TYPE_STRING, /* value: const char **, the argument */
	OPT_TYPE_UINT,	 /* value: unsigned *, a decimal argument */
	OPT_TYPE_LIST,	 /* value: struct strvec *, one entry per use */
	OPT_TYPE_HELP,	 /* -h/--help: options_parse() returns OPTIONS_HELP */
	/*
	 * Not an option: the first operand ends the options, and everything
	 * after it is an operand (for commands that run a command: 'launch
	 * -N 2 train.py -N 5' passes the second -N to train.py).
	 */
	OPT_TYPE_OPERANDS_STOP,
	/*
	 * A name this command no longer takes: using it is an error that names
	 * what replaced it (arg_name), so that an old script fails with a hint
	 * instead of the name silently meaning something else.  Not in the help.
	 */
	OPT_TYPE_RENAMED,
};

struct opt {
	enum opt_type type;
	int short_name;	       /* single character, or 0 */
	const char *long_name; /* without the dashes, or NULL */
	void *value;	       /* where the result goes (see enum opt_type) */
	const char *arg_name;  /* shown in help for options with an argument */
	const char *help;      /* one line */
	/*
	 * The values it takes, '|' between them ("auto|always|never"), for the
	 * man page and shell completion (OPT_CHOICE); NULL: any value.  The
	 * command still checks the value itself; the help names each one.
	 */
	const char *choices;
};

#define OPT_BOOL(s, l, v, h)                                                                       \
	{                                                                                          \
		OPT_TYPE_BOOL, (s), (l), (v), NULL, (h), NULL                                      \
	}
#define OPT_STRING(s, l, v, a, h)                                                                  \
	{                                                                                          \
		OPT_TYPE_STRING, (s), (l), (v), (a), (h), NULL                                     \
	}
/* A string of one of choices ("pair|switch|ring"), which the help names too. */
#define OPT_CHOICE(s, l, v, a, choices, h)                                                         \
	{                                                                                          \
		OPT_TYPE_STRING, (s), (l), (v), (a), (h), (choices)                                \
	}
#define OPT_UINT(s, l, v, a, h)                                                                    \
	{                                                                                          \
		OPT_TYPE_UINT, (s), (l), (v), (a), (h), NULL                                       \
	}
#define OPT_LIST(s, l, v, a, h)                                                                    \
	{                                                                                          \
		OPT_TYPE_LIST, (s), (l), (v), (a), (h), NULL                                       \
	}
#define OPT_HELP()                                                                                 \
	{                                                                                          \
		OPT_TYPE_HELP, 'h', "help", NULL, NULL, "show this help", NULL                     \
	}
/* now: what replaced the option, as the user types it ("--job-timeout", "-N"). */
#define OPT_RENAMED(s, l, now)                                                                     \
	{                                                                                          \
		OPT_TYPE_RENAMED, (s), (l), NULL, (now), NULL, NULL                                \
	}
#define OPT_OPERANDS_STOP()                                                                        \
	{                                                                                          \
		OPT_TYPE_OPERANDS_STOP, 0, NULL, NULL, NULL, NULL, NULL                            \
	}
#define OPT_END()                                                                                  \
	{                                                                                          \
		OPT_TYPE_END, 0, NULL, NULL, NULL, NULL, NULL                                      \
	}

/*
 * Parse argv[1..argc) against opts (argv[0] is the command's name).
 * Operands are moved, in order, to argv[1..]; the number of operands is
 * returned.  On a bad option returns -EINVAL with a one-line message
 * (no trailing newline) in err.  When -h or --help was given (and nothing
 * was wrong) returns OPTIONS_HELP: the caller shows the help.  A renamed
 * option (OPT_RENAMED) is a bad option: "option '--timeout' is now
 * '--job-timeout'".
 */
#define OPTIONS_HELP (-ECANCELED)
int options_parse(const struct opt *opts, int argc, char **argv, struct strbuf *err);

/*
 * Append the help text: the usage lines, a blank line, the description
 * (may be NULL), and the option table.
 */
void options_help(struct strbuf *out, const char *const *usage, const char *description,
		  const struct opt *opts);

#endif
