/*
 * reference.h - the manual pages and shell completions of sparkctl, made
 * from the same tables as --help (struct cmd and each command's options),
 * so that they cannot say something else.  'sparkctl help --man' and
 * 'sparkctl help --completion SHELL' print them; the build runs those
 * (man/meson.build, completion/meson.build).
 */
#ifndef SPARKCTL_CMD_REFERENCE_H
#define SPARKCTL_CMD_REFERENCE_H

#include "cmd/cmd.h"
#include "lib/options.h"
#include "lib/strbuf.h"

/*
 * The option table cmd parses, with the options cmd_parse() adds (what its
 * --help lists), obtained by running cmd with cmd_parse_observer set.  A
 * copy to free(); its value pointers point nowhere: only the names, texts
 * and types mean anything.  NULL for a command that parses no options (one
 * with verbs, or CMD_RAW_ARGS).
 */
struct opt *cmd_options(const struct cmd *cmd);

/*
 * sparkctl(1), in roff (man(7)): the commands of table (hidden ones left
 * out), the global options, the exit statuses.
 */
void man_page_sparkctl(const struct cmd *const *table, struct strbuf *out);
/*
 * The page of cmd (parent: the command it is a verb of, or NULL), with
 * opts its option table (NULL: none): sparkctl-NAME(1) or
 * sparkctl-PARENT-NAME(1).
 */
void man_page_command(const struct cmd *cmd, const struct cmd *parent, const struct opt *opts,
		      struct strbuf *out);
/* The page's name: "sparkctl-bench-nccl" (parent NULL and cmd NULL: "sparkctl"). */
void man_page_name(const struct cmd *cmd, const struct cmd *parent, struct strbuf *out);
/* text with roff's special characters escaped, as one or more text lines. */
void roff_add_text(struct strbuf *out, const char *text);

enum completion_shell {
	COMPLETION_BASH,
	COMPLETION_ZSH,
};
/*
 * The completion script of shell for the commands of table (hidden ones
 * left out): commands, verbs, each one's options, the values of options
 * with choices, files and directories for FILE, PATH and DIR, host names
 * for -H (from the --hostfile given, $SPARKCTL_HOSTFILE, or ~/.ssh/config).
 */
void completion_script(enum completion_shell shell, const struct cmd *const *table,
		       struct strbuf *out);

#endif
