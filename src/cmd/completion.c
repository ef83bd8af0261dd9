/*
 * completion.c - the bash and zsh completions of sparkctl, from the
 * command table and each command's option table: what --help lists is
 * what completes.
 */
#include "sparkctl.h"

#include "cmd/reference.h"
#include "lib/xalloc.h"

/* What an option's value completes to. */
enum value_kind {
	VALUE_NONE, /* a number, a name: nothing to offer */
	VALUE_CHOICES,
	VALUE_FILE,
	VALUE_DIR,
	VALUE_HOSTS,
};

static bool takes_value(const struct opt *o)
{
	return o->type == OPT_TYPE_STRING || o->type == OPT_TYPE_UINT || o->type == OPT_TYPE_LIST;
}

static bool listed(const struct opt *o)
{
	return o->type != OPT_TYPE_OPERANDS_STOP && o->type != OPT_TYPE_RENAMED &&
	       o->type != OPT_TYPE_END;
}

static enum value_kind value_kind(const struct opt *o)
{
	const char *arg = o->arg_name ? o->arg_name : "";

	if (!takes_value(o))
		return VALUE_NONE;
	if (o->choices)
		return VALUE_CHOICES;
	if (o->long_name && streq(o->long_name, "hosts"))
		return VALUE_HOSTS;
	if (streq(arg, "DIR"))
		return VALUE_DIR;
	if (streq(arg, "FILE") || streq(arg, "PATH"))
		return VALUE_FILE;
	return VALUE_NONE;
}

static bool stops_at_operand(const struct opt *opts)
{
	for (const struct opt *o = opts; o && o->type != OPT_TYPE_END; o++)
		if (o->type == OPT_TYPE_OPERANDS_STOP)
			return true;
	return false;
}

/* The choices, blank-separated. */
static void add_choices(struct strbuf *out, const char *choices)
{
	for (const char *p = choices; *p; p++)
		strbuf_addch(out, *p == '|' ? ' ' : *p);
}

/* " -H --hosts" for each listed option of opts that want accepts (NULL: every one). */
static void add_spellings(struct strbuf *out, const struct opt *opts, bool only_valued, int kind)
{
	for (const struct opt *o = opts; o && o->type != OPT_TYPE_END; o++) {
		if (!listed(o) || (only_valued && !takes_value(o)) ||
		    (kind >= 0 && value_kind(o) != (enum value_kind)kind))
			continue;
		if (o->short_name)
			strbuf_addf(out, " -%c", o->short_name);
		if (o->long_name)
			strbuf_addf(out, " --%s", o->long_name);
	}
}

/* The visible names of table, blank-separated. */
static void add_names(struct strbuf *out, const struct cmd *const *table)
{
	for (const struct cmd *const *c = table; *c; c++)
		if (!((*c)->flags & CMD_HIDDEN))
			strbuf_addf(out, "%s%s", c == table ? "" : " ", (*c)->name);
}

static const char bash_head[] =
	"# bash completion for sparkctl: commands, verbs, options and their values.\n"
	"# Made by 'sparkctl help --completion bash' from sparkctl's tables.\n"
	"\n"
	"# The hosts -H completes: those of the --hostfile on the line, else of\n"
	"# $SPARKCTL_HOSTFILE, else the Host names of ~/.ssh/config.\n"
	"_sparkctl_hosts()\n"
	"{\n"
	"\tlocal file='' i h key\n"
	"\tlocal -a w\n"
	"\tfor ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do\n"
	"\t\tcase ${COMP_WORDS[i]} in\n"
	"\t\t--hostfile) [ \"${COMP_WORDS[i + 1]-}\" = = ] && file=${COMP_WORDS[i + 2]-} ||\n"
	"\t\t\tfile=${COMP_WORDS[i + 1]-} ;;\n"
	"\t\t--hostfile=*) file=${COMP_WORDS[i]#--hostfile=} ;;\n"
	"\t\tesac\n"
	"\tdone\n"
	"\t[ -n \"$file\" ] || file=${SPARKCTL_HOSTFILE-}\n"
	"\tfile=${file/#\\~/$HOME}\n"
	"\tif [ -n \"$file\" ] && [ -r \"$file\" ]; then\n"
	"\t\twhile read -r h _; do\n"
	"\t\t\th=${h%%#*}\n"
	"\t\t\th=${h%%:*}\n"
	"\t\t\t[ -z \"$h\" ] || printf '%s\\n' \"$h\"\n"
	"\t\tdone < \"$file\"\n"
	"\telif [ -r ~/.ssh/config ]; then\n"
	"\t\twhile read -r -a w; do\n"
	"\t\t\tkey=${w[0]-}\n"
	"\t\t\t[ \"${key,,}\" = host ] || continue\n"
	"\t\t\tfor h in \"${w[@]:1}\"; do\n"
	"\t\t\t\tcase $h in *[*?!]*) ;; *) printf '%s\\n' \"$h\" ;; esac\n"
	"\t\t\tdone\n"
	"\t\tdone < ~/.ssh/config\n"
	"\tfi\n"
	"}\n"
	"\n"
	"# _sparkctl_in WORD LIST: whether WORD is one of the blank-separated LIST.\n"
	"_sparkctl_in()\n"
	"{\n"
	"\tcase \" $2 \" in *\" $1 \"*) return 0 ;; esac\n"
	"\treturn 1\n"
	"}\n"
	"\n"
	"# _sparkctl_value CUR KIND CHOICES: COMPREPLY for an option's value.\n"
	"_sparkctl_value()\n"
	"{\n"
	"\tlocal cur=$1\n"
	"\tcase $2 in\n"
	"\tchoices) mapfile -t COMPREPLY < <(compgen -W \"$3\" -- \"$cur\") ;;\n"
	"\tfile)\n"
	"\t\tcompopt -o filenames 2> /dev/null || :\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n"
	"\tdir)\n"
	"\t\tcompopt -o filenames 2> /dev/null || :\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n"
	"\thosts)\n"
	"\t\tlocal prefix=''\n"
	"\t\t[[ $cur == *,* ]] && prefix=${cur%,*},\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -P \"$prefix\" -W \"$(_sparkctl_hosts)\" -- "
	"\"${cur##*,}\") ;;\n"
	"\t*) COMPREPLY=() ;;\n"
	"\tesac\n"
	"}\n"
	"\n";

/* The case branch of one command (title: "bench nccl"): its options and what their values are. */
static void bash_command(struct strbuf *out, const struct cmd *cmd, const char *title,
			 const struct opt *opts)
{
	strbuf_addf(out, "\t\"%s\")\n\t\topts=\"", title);
	add_spellings(out, opts, false, -1);
	strbuf_addstr(out, "\"\n\t\tvalued=\"");
	add_spellings(out, opts, true, -1);
	strbuf_addstr(out, "\"\n\t\tfiles=\"");
	add_spellings(out, opts, true, VALUE_FILE);
	strbuf_addstr(out, "\"\n\t\tdirs=\"");
	add_spellings(out, opts, true, VALUE_DIR);
	strbuf_addstr(out, "\"\n\t\thosts=\"");
	add_spellings(out, opts, true, VALUE_HOSTS);
	strbuf_addstr(out, "\"\n");
	for (const struct opt *o = opts; o && o->type != OPT_TYPE_END; o++) {
		if (!listed(o) || value_kind(o) != VALUE_CHOICES)
			continue;
		strbuf_addstr(out, "\t\tcase $opt in");
		if (o->short_name)
			strbuf_addf(out, " -%c%s", o->short_name, o->long_name ? " |" : "");
		if (o->long_name)
			strbuf_addf(out, " --%s", o->long_name);
		strbuf_addstr(out, ") choices=\"");
		add_choices(out, o->choices);
		strbuf_addstr(out, "\" ;; esac\n");
	}
	strbuf_addf(out, "\t\toperands=%s\n\t\t;;\n",
		    cmd == &cmd_help	     ? "commands"
		    : stops_at_operand(opts) ? "command"
		    : cmd->max_operands == 0 ? "none"
					     : "files");
}

static const char bash_body[] =
	"\tif [ -n \"$opt\" ]; then\n"
	"\t\tif [ -n \"$choices\" ]; then\n"
	"\t\t\t_sparkctl_value \"$cur\" choices \"$choices\"\n"
	"\t\telif _sparkctl_in \"$opt\" \"$files\"; then\n"
	"\t\t\t_sparkctl_value \"$cur\" file\n"
	"\t\telif _sparkctl_in \"$opt\" \"$dirs\"; then\n"
	"\t\t\t_sparkctl_value \"$cur\" dir\n"
	"\t\telif _sparkctl_in \"$opt\" \"$hosts\"; then\n"
	"\t\t\t_sparkctl_value \"$cur\" hosts\n"
	"\t\tfi\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\t# The operands before the word: a command's own line once launch has one.\n"
	"\tfor ((i = start; i < COMP_CWORD; i++)); do\n"
	"\t\tw=${COMP_WORDS[i]}\n"
	"\t\tif [ \"$w\" = -- ]; then\n"
	"\t\t\tseen=$((seen + 1)); break\n"
	"\t\telif _sparkctl_in \"$w\" \"$valued\"; then\n"
	"\t\t\ti=$((i + 1))\n"
	"\t\t\t[ \"${COMP_WORDS[i]-}\" != = ] || i=$((i + 1))\n"
	"\t\telif [[ $w != -* && $w != = ]]; then\n"
	"\t\t\tseen=$((seen + 1)); first=${first:-$w}\n"
	"\t\t\t[ \"$operands\" != command ] || break\n"
	"\t\tfi\n"
	"\tdone\n"
	"\tif [ \"$operands\" = command ] && [ $seen -gt 0 ]; then\n"
	"\t\tcompopt -o default 2> /dev/null || :\n"
	"\t\tif [ $i -eq $((COMP_CWORD - 1)) ] && [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$cur\")\n"
	"\t\telse\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	"\t\tfi\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tif [[ $cur == -* ]] || [ \"$operands\" = none ]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -W \"$opts\" -- \"$cur\")\n"
	"\telif [ \"$operands\" = commands ]; then\n"
	"\t\tif [ $seen -eq 0 ]; then\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -W \"$_sparkctl_commands\" -- \"$cur\")\n"
	"\t\telif [ $seen -eq 1 ] && [[ $first =~ ^[a-z]+$ ]]; then\n"
	"\t\t\tw=_sparkctl_${first}_verbs\n"
	"\t\t\tmapfile -t COMPREPLY < <(compgen -W \"${!w-}\" -- \"$cur\")\n"
	"\t\tfi\n"
	"\telif [ \"$operands\" = command ]; then\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -c -- \"$cur\")\n"
	"\telse\n"
	"\t\tcompopt -o filenames 2> /dev/null || :\n"
	"\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	"\tfi\n"
	"\treturn 0\n"
	"}\n"
	"complete -F _sparkctl sparkctl\n";

static void bash_script(const struct cmd *const *table, struct strbuf *out)
{
	strbuf_addstr(out, bash_head);
	strbuf_addstr(out, "_sparkctl_commands='");
	add_names(out, table);
	strbuf_addstr(out, "'\n");
	for (const struct cmd *const *c = table; *c; c++) {
		if (!(*c)->verbs || ((*c)->flags & CMD_HIDDEN))
			continue;
		strbuf_addf(out, "_sparkctl_%s_verbs='", (*c)->name);
		add_names(out, (*c)->verbs);
		strbuf_addstr(out, "'\n");
	}
	strbuf_addstr(
		out,
		"\n_sparkctl()\n"
		"{\n"
		"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]-}\n"
		"\tlocal cmd opt='' opts valued files dirs hosts choices='' operands\n"
		"\tlocal i w start=2 seen=0 first=''\n"
		"\tCOMPREPLY=()\n"
		"\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
		"\t\tmapfile -t COMPREPLY < <(compgen -W \"$_sparkctl_commands --help --version\" "
		"-- \"$cur\")\n"
		"\t\treturn 0\n"
		"\tfi\n"
		"\tcmd=${COMP_WORDS[1]}\n"
		"\t# Verbs: the second word.\n"
		"\tcase $cmd in\n");
	for (const struct cmd *const *c = table; *c; c++) {
		if (!(*c)->verbs || ((*c)->flags & CMD_HIDDEN))
			continue;
		strbuf_addf(
			out,
			"\t%s)\n"
			"\t\tif [ \"$COMP_CWORD\" -eq 2 ]; then\n"
			"\t\t\tmapfile -t COMPREPLY < <(compgen -W \"$_sparkctl_%s_verbs --help\" "
			"-- \"$cur\")\n"
			"\t\t\treturn 0\n"
			"\t\tfi\n"
			"\t\tcmd=\"%s ${COMP_WORDS[2]}\"\n"
			"\t\tstart=3 ;;\n",
			(*c)->name, (*c)->name, (*c)->name);
	}
	strbuf_addstr(out, "\tesac\n"
			   "\t# The option whose value is the word: '--opt VALUE', '--opt=VALUE'\n"
			   "\t# (split at '=' by COMP_WORDBREAKS, or not).\n"
			   "\tif [ \"$cur\" = = ]; then\n"
			   "\t\topt=$prev cur=''\n"
			   "\telif [ \"$prev\" = = ] && [ \"$COMP_CWORD\" -ge 2 ]; then\n"
			   "\t\topt=${COMP_WORDS[COMP_CWORD - 2]}\n"
			   "\telif [[ $cur == --*=* ]]; then\n"
			   "\t\topt=${cur%%=*} cur=${cur#*=}\n"
			   "\telif [[ $prev == -* ]]; then\n"
			   "\t\topt=$prev\n"
			   "\tfi\n"
			   "\tcase $cmd in\n");
	for (const struct cmd *const *c = table; *c; c++) {
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		for (const struct cmd *const *v = (*c)->verbs ? (*c)->verbs : c; *v; v++) {
			struct opt *opts = cmd_options(*v);
			struct strbuf title = STRBUF_INIT;
			if ((*c)->verbs)
				strbuf_addf(&title, "%s %s", (*c)->name, (*v)->name);
			else
				strbuf_addstr(&title, (*v)->name);
			if (!((*v)->flags & CMD_HIDDEN))
				bash_command(out, *v, title.buf, opts);
			strbuf_release(&title);
			free(opts);
			if (!(*c)->verbs)
				break;
		}
	}
	strbuf_addstr(out, "\t*) return 0 ;;\n"
			   "\tesac\n"
			   "\t_sparkctl_in \"$opt\" \"$valued\" || opt=''\n");
	strbuf_addstr(out, bash_body);
}

/*
 * s inside a zsh single-quoted word; special: the characters that end an
 * _arguments field there (']' of a description, ':' of a message), escaped.
 */
static void zsh_add_quoted(struct strbuf *out, const char *s, const char *special)
{
	for (; *s; s++) {
		if (*s == '\'')
			strbuf_addstr(out, "'\\''");
		else if (*s == '\\' || (*s && strchr(special, *s)))
			strbuf_addf(out, "\\%c", *s);
		else
			strbuf_addch(out, *s);
	}
}

/* The action of an option's value, in _arguments' syntax. */
static void zsh_add_action(struct strbuf *out, const struct opt *o)
{
	switch (value_kind(o)) {
	case VALUE_CHOICES:
		strbuf_addch(out, '(');
		add_choices(out, o->choices);
		strbuf_addch(out, ')');
		break;
	case VALUE_FILE:
		strbuf_addstr(out, "_files");
		break;
	case VALUE_DIR:
		strbuf_addstr(out, "_files -/");
		break;
	case VALUE_HOSTS:
		strbuf_addstr(out, "_sparkctl_hosts");
		break;
	case VALUE_NONE:
		strbuf_addstr(out, " ");
		break;
	}
}

/* One spelling of o ("-H" or "--hosts") as an _arguments spec. */
static void zsh_spec(struct strbuf *out, const struct opt *o, bool as_long)
{
	bool list = o->type == OPT_TYPE_LIST;

	strbuf_addstr(out, " \\\n\t\t'");
	if (o->type == OPT_TYPE_HELP)
		strbuf_addstr(out, "(- *)");
	else if (list)
		strbuf_addch(out, '*');
	else if (o->short_name && o->long_name)
		strbuf_addf(out, "(-%c --%s)", o->short_name, o->long_name);
	if (as_long)
		strbuf_addf(out, "--%s%s", o->long_name, takes_value(o) ? "=" : "");
	else
		strbuf_addf(out, "-%c%s", o->short_name, takes_value(o) ? "+" : "");
	strbuf_addch(out, '[');
	zsh_add_quoted(out, o->help ? o->help : "", "]");
	strbuf_addch(out, ']');
	if (takes_value(o)) {
		strbuf_addch(out, ':');
		zsh_add_quoted(out, o->arg_name ? o->arg_name : "ARG", ":");
		strbuf_addch(out, ':');
		zsh_add_action(out, o);
	}
	strbuf_addch(out, '\'');
}

/* The _arguments call of one command (or verb). */
static void zsh_command(struct strbuf *out, const struct cmd *cmd, const struct opt *opts,
			const struct cmd *const *table)
{
	strbuf_addstr(out, "\t\t_arguments -s -S :");
	for (const struct opt *o = opts; o && o->type != OPT_TYPE_END; o++) {
		if (!listed(o))
			continue;
		if (o->short_name)
			zsh_spec(out, o, false);
		if (o->long_name)
			zsh_spec(out, o, true);
	}
	if (cmd == &cmd_help) {
		strbuf_addstr(out, " \\\n\t\t'1:command:(");
		add_names(out, table);
		strbuf_addstr(out, ")'");
		for (const struct cmd *const *c = table; *c; c++)
			if ((*c)->verbs && !((*c)->flags & CMD_HIDDEN)) {
				strbuf_addstr(out, " \\\n\t\t'2:verb:(");
				add_names(out, (*c)->verbs);
				strbuf_addstr(out, ")'");
				break;
			}
	} else if (stops_at_operand(opts)) {
		strbuf_addstr(out, " \\\n\t\t'1:command:_command_names -e' '*::argument:_normal'");
	} else if (cmd->max_operands != 0) {
		strbuf_addstr(out, " \\\n\t\t'*:file:_files'");
	}
	strbuf_addstr(out, " && ret=0\n");
}

static void zsh_describe(struct strbuf *out, const char *array, const struct cmd *const *table)
{
	strbuf_addf(out, "\t\tlocal -a %s=(", array);
	for (const struct cmd *const *c = table; *c; c++) {
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		strbuf_addf(out, "\n\t\t\t'%s:", (*c)->name);
		zsh_add_quoted(out, (*c)->summary, "");
		strbuf_addch(out, '\'');
	}
	strbuf_addstr(out, "\n\t\t)\n");
}

static const char zsh_head[] =
	"#compdef sparkctl\n"
	"# zsh completion for sparkctl: commands, verbs, options and their values.\n"
	"# Made by 'sparkctl help --completion zsh' from sparkctl's tables.\n"
	"\n"
	"# The hosts -H completes: those of the --hostfile on the line, else of\n"
	"# $SPARKCTL_HOSTFILE, else the Host names of ~/.ssh/config.\n"
	"_sparkctl_hosts() {\n"
	"\tlocal file='' line i\n"
	"\tlocal -a hosts w\n"
	"\ti=${words[(I)--hostfile]}\n"
	"\t(( i )) && file=${words[i+1]}\n"
	"\t[[ -z $file ]] && file=${${(M)words:#--hostfile=*}#--hostfile=}\n"
	"\t[[ -z $file ]] && file=${SPARKCTL_HOSTFILE-}\n"
	"\tif [[ -n $file && -r ${~file} ]]; then\n"
	"\t\twhile read -r line; do\n"
	"\t\t\tline=${line%%\\#*}\n"
	"\t\t\tw=(${=line})\n"
	"\t\t\t(( $#w )) && hosts+=(${w[1]%%:*})\n"
	"\t\tdone < ${~file}\n"
	"\telif [[ -r ~/.ssh/config ]]; then\n"
	"\t\twhile read -rA w; do\n"
	"\t\t\t[[ ${(L)w[1]} == host ]] && hosts+=(${w[2,-1]:#*[\\*\\?\\!]*})\n"
	"\t\tdone < ~/.ssh/config\n"
	"\tfi\n"
	"\tif (( $#hosts )); then\n"
	"\t\t_values -s , 'host' $hosts\n"
	"\telse\n"
	"\t\t_message 'host names'\n"
	"\tfi\n"
	"}\n"
	"\n"
	"_sparkctl() {\n"
	"\tlocal curcontext=$curcontext state line ret=1\n"
	"\t_arguments -C \\\n"
	"\t\t'(- *)--version[print the version]' \\\n"
	"\t\t'(- *)'{-h,--help}'[list the commands]' \\\n"
	"\t\t'1:command:->command' \\\n"
	"\t\t'*::argument:->argument' && ret=0\n"
	"\tcase $state in\n"
	"\tcommand)\n";

static void zsh_script(const struct cmd *const *table, struct strbuf *out)
{
	strbuf_addstr(out, zsh_head);
	zsh_describe(out, "commands", table);
	strbuf_addstr(out, "\t\t_describe -t commands 'sparkctl command' commands && ret=0\n"
			   "\t\t;;\n"
			   "\targument)\n"
			   "\t\tcurcontext=${curcontext%:*:*}:sparkctl-$words[1]:\n"
			   "\t\tcase $words[1] in\n");
	for (const struct cmd *const *c = table; *c; c++) {
		struct opt *opts;
		if ((*c)->flags & CMD_HIDDEN)
			continue;
		strbuf_addf(out, "\t\t%s)\n", (*c)->name);
		if (!(*c)->verbs) {
			opts = cmd_options(*c);
			zsh_command(out, *c, opts, table);
			free(opts);
			strbuf_addstr(out, "\t\t;;\n");
			continue;
		}
		strbuf_addstr(out, "\t\tif (( CURRENT == 2 )); then\n");
		zsh_describe(out, "verbs", (*c)->verbs);
		strbuf_addf(out, "\t\t_describe -t verbs '%s' verbs && ret=0\n", (*c)->verb_noun);
		strbuf_addstr(out, "\t\telse\n"
				   "\t\tshift words\n"
				   "\t\t(( CURRENT-- ))\n"
				   "\t\tcase $words[1] in\n");
		for (const struct cmd *const *v = (*c)->verbs; *v; v++) {
			if ((*v)->flags & CMD_HIDDEN)
				continue;
			strbuf_addf(out, "\t\t%s)\n", (*v)->name);
			opts = cmd_options(*v);
			zsh_command(out, *v, opts, table);
			free(opts);
			strbuf_addstr(out, "\t\t;;\n");
		}
		strbuf_addstr(out, "\t\tesac\n\t\tfi\n\t\t;;\n");
	}
	strbuf_addstr(out, "\t\tesac\n"
			   "\t\t;;\n"
			   "\tesac\n"
			   "\treturn ret\n"
			   "}\n"
			   "\n"
			   "_sparkctl \"$@\"\n");
}

void completion_script(enum completion_shell shell, const struct cmd *const *table,
		       struct strbuf *out)
{
	if (shell == COMPLETION_ZSH)
		zsh_script(table, out);
	else
		bash_script(table, out);
}
