/*
 * cmd.h - the commands of sparkctl and what they share.
 *
 * A command is one file in src/cmd/ that defines a `const struct cmd`:
 * its name, what it does in one line, its usage and description for
 * --help, how many operands it takes, and the function that runs it.  The
 * function declares its options as a table (lib/options.h) and starts with
 * cmd_parse(), which handles --help, bad options and operands beyond the
 * bound, so the command body sees only valid input.  Commands with
 * sub-verbs (bench, agent) list them in `verbs` instead of having a
 * function; each verb is a struct cmd of its own.
 *
 * To add a command: src/cmd/NAME.c defining `const struct cmd cmd_NAME`,
 * its declaration below, one row in the table of src/cmd/commands.c, the
 * file in meson.build.  Only commands print: what they call returns
 * -errno and a message.
 */
#ifndef SPARKCTL_CMD_H
#define SPARKCTL_CMD_H

#include "sparkctl.h"
#include "exitcode.h"
#include "inventory/inventory.h"
#include "lib/options.h"
#include "lib/strbuf.h"

/* max_operands: no bound (the command checks its operands itself). */
#define CMD_OPERANDS_ANY (-1)

enum cmd_flags {
	CMD_HIDDEN = 1 << 0, /* run by sparkctl itself (agent): not listed by the help */
	/*
	 * Takes its arguments as they come, without cmd_parse() (the agent's
	 * verbs, whose callers are sparkctl): only a first argument -h or
	 * --help is taken for it, and shows its help.
	 */
	CMD_RAW_ARGS = 1 << 1,
	/*
	 * Reads a node (the host, a captured tree or a saved inventory): takes
	 * --root DIR and --from FILE (OPT_INVENTORY_SOURCE), which the test of
	 * the option vocabulary (tests/unit/test-options.c) holds it to.
	 */
	CMD_READS_NODE = 1 << 2,
};

struct cmd {
	const char *name;  /* as typed: "topo", "nccl" */
	const char *title; /* in messages and help, "bench nccl"; NULL: the name */
	/* Runs the command: argv[0] is its name, argv[1..] what follows; an exit status. */
	int (*fn)(const struct cmd *cmd, int argc, char **argv);
	const char *summary; /* one line for the list of commands */
	const char *const *usage;
	const char *description;
	/*
	 * The rows of docs/exit-codes.md it uses and what they mean for it
	 * ("0 ..., 2 usage, ..."): the help's last paragraph, "Exit status:".
	 */
	const char *exit_status;
	unsigned flags;			/* enum cmd_flags */
	int max_operands;		/* after the options; CMD_OPERANDS_ANY */
	const struct cmd *const *verbs; /* sub-verbs (NULL-terminated), with fn NULL */
	const char *verb_noun;		/* what a verb is called: "benchmark" */
};

/* What sparkctl is: one line (its man page's name line), and the paragraph of its help. */
extern const char sparkctl_summary[], sparkctl_description[];
/* The commands, in the order 'sparkctl --help' lists them (NULL-terminated). */
extern const struct cmd *const sparkctl_commands[];

extern const struct cmd cmd_topo, cmd_capture, cmd_env, cmd_netplan, cmd_doctor, cmd_launch,
	cmd_bench, cmd_bench_nccl, cmd_bench_link, cmd_bench_ddp, cmd_exporter, cmd_top, cmd_status,
	cmd_help, cmd_version, cmd_agent, cmd_deploy, cmd_discover, cmd_publish, cmd_cluster,
	cmd_join, cmd_storage, cmd_slurm;
/* sparkctl serve (cmd/serve.c). */
extern const struct cmd cmd_serve;
/* sparkctl storage's verbs (cmd/storage_VERB.c). */
extern const struct cmd cmd_storage_plan, cmd_storage_target, cmd_storage_connect,
	cmd_storage_disconnect, cmd_storage_check, cmd_storage_bench;

/*
 * doctor's run (cmd/doctor.c), shared with the commands that report one
 * group of its checks ('storage check'): the same nodes, options, report
 * and exit status, the checks of group only.
 */
struct doctor_cluster;
struct doctor_mode {
	const char *group; /* only the checks of this group, without --only/--skip/--list */
	/* Called on the nodes once inspected, before the checks run; NULL: nothing. */
	void (*prepare)(struct doctor_cluster *c);
};
int doctor_run(const struct cmd *cmd, int argc, char **argv, const struct doctor_mode *mode);

/* sparkctl cluster's actions (cmd/cluster.c). */
extern const struct cmd cmd_cluster_show, cmd_cluster_add, cmd_cluster_remove, cmd_cluster_path;
/* sparkctl slurm's actions (cmd/slurm.c). */
extern const struct cmd cmd_slurm_conf;
/* sparkctl agent status: this node's answer to status (cmd/status.c). */
extern const struct cmd cmd_agent_status;
/* The version of agent ping's JSON (docs/schemas/agent-ping.schema.json). */
#define AGENT_PING_SCHEMA_VERSION 1

/* sparkctl itself: the global options, then the command.  An exit status. */
int cmd_main(int argc, char **argv);
/*
 * A command that leaves libraries with live threads behind (bench nccl's
 * ranks: bench/nccl_run.h) asks main() to end the process without the
 * libraries' exit handlers, once its output is flushed.
 */
void cmd_end_without_exit_handlers(void);
bool cmd_ends_without_exit_handlers(void);
/* The command (or verb) of table called name, exactly; NULL if none. */
const struct cmd *cmd_find(const struct cmd *const *table, const char *name);
/* The closest name of table to a mistyped one, or NULL (hidden ones are not offered). */
const char *cmd_nearest(const struct cmd *const *table, const char *name);
/* Run cmd with argv[0] its name: its function, or the verb argv[1] names. */
int cmd_run(const struct cmd *cmd, int argc, char **argv);
/* "bench nccl": how messages and the help name cmd. */
const char *cmd_title(const struct cmd *cmd);
/* The list of commands of 'sparkctl --help'. */
void cmd_help_overview(FILE *f);
/* cmd's --help: usage, description, options (opts may be NULL), or its verbs. */
void cmd_help_text(const struct cmd *cmd, const struct opt *opts, struct strbuf *out);

/*
 * Parse argv against opts for cmd.  On a bad option, or more operands
 * than cmd takes, prints the error and returns -1 (the caller returns
 * SPARKCTL_EXIT_USAGE); for -h/--help prints the help to stdout and
 * returns -2 (the caller returns 0); otherwise returns the number of
 * operands (now argv[1..]).
 */
int cmd_parse(const struct cmd *cmd, const struct opt *opts, int argc, char **argv);
/*
 * For the test of the option vocabulary: when set, cmd_parse() hands it
 * the command's whole table (with the shared options) and returns -2 as
 * for --help, printing nothing, so the command does nothing else.
 */
extern void (*cmd_parse_observer)(const struct cmd *cmd, const struct opt *opts);

/*
 * --color=WHEN, which cmd_parse() adds to every command: whether a report
 * on stdout is coloured.  always and never are obeyed; auto (the default)
 * colours when stdout is a terminal, TERM is set and not "dumb", and
 * NO_COLOR is unset or empty (no-color.org).
 */
enum cmd_color {
	CMD_COLOR_AUTO,
	CMD_COLOR_ALWAYS,
	CMD_COLOR_NEVER
};
bool cmd_use_color(void);
/* The same for a report on fd (launch's summary goes to stderr). */
bool cmd_use_color_on(int fd);

/* Map the result of cmd_parse() to an exit status when it is negative. */
static inline int cmd_parse_exit(int r)
{
	return r == -2 ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_USAGE;
}

/*
 * The exit status of a failure of the layer below a command, by the errno
 * that layer documents: -EDOM options that contradict each other (USAGE),
 * -ENODEV no RDMA fabric port (UNAVAILABLE), anything else ERROR.
 */
static inline int cmd_exit_of_errno(int r)
{
	return r == -EDOM     ? SPARKCTL_EXIT_USAGE
	       : r == -ENODEV ? SPARKCTL_EXIT_UNAVAILABLE
			      : SPARKCTL_EXIT_ERROR;
}

/* "sparkctl CMD: message" on stderr. */
void cmd_error(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3);
/*
 * Report a command-line error: the message, then a pointer to --help.
 * Returns SPARKCTL_EXIT_USAGE.
 */
int cmd_usage_error(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3);

/*
 * name in sparkctl's state directory, where a command keeps what a later
 * one shows (doctor's last report, for status): $SPARKCTL_STATE_DIR, else
 * $XDG_STATE_HOME/sparkctl, else ~/.local/state/sparkctl.  create: make
 * the directory (0700) first.  -ENOENT without any of them, or -errno.
 */
int cmd_state_path(const char *name, bool create, struct strbuf *path);

/*
 * Where a command's inventory comes from: --root DIR (or $SPARKCTL_ROOT),
 * --from FILE, or the live host.  Every command that reads a node
 * includes OPT_INVENTORY_SOURCE in its options.
 */
struct inventory_source {
	const char *root;
	const char *from;
	bool no_nvidia_libraries; /* the probe leaves NVML, CUDA and NCCL alone */
	bool storage_target;	  /* the probe tries the storage target (probe_options) */
	const char *slurm_user;	  /* probe_options' */
};
#define OPT_INVENTORY_SOURCE(src)                                                                  \
	OPT_STRING(0, "root", &(src)->root, "DIR",                                                 \
		   "read the host below DIR, e.g. a 'sparkctl capture' tree (env SPARKCTL_ROOT)"), \
		OPT_STRING(0, "from", &(src)->from, "FILE",                                        \
			   "load a saved inventory ('sparkctl topo --json'; '-' is stdin)")

/*
 * Obtain the inventory the options name.  Prints its own error and returns
 * an exit status (SPARKCTL_EXIT_OK on success).
 */
int inventory_source_load(const char *cmd, const struct inventory_source *src,
			  struct inventory *inv);

/*
 * The mDNS query of 'sparkctl discover' (src/cmd/discover.c), for every
 * command that asks it (discover, join --discovered): where to ask and
 * how long to collect answers, as the options say.
 */
struct discover_where {
	const char *iface, *reply_timeout;
	bool fabric, mgmt;
};
#define OPT_DISCOVER_WHERE(w)                                                                      \
	OPT_STRING(0, "iface", &(w)->iface, "IF,...", "ask on these interfaces"),                  \
		OPT_BOOL(0, "fabric", &(w)->fabric, "ask on the fabric ports"),                    \
		OPT_BOOL(0, "mgmt", &(w)->mgmt, "ask on the interface of the default route"),      \
		OPT_STRING(0, "reply-timeout", &(w)->reply_timeout, "S",                           \
			   "collect answers for S seconds (default 1)")

struct discover_result;
/* Check w (--iface, --fabric, --mgmt exclude each other): an exit status, a usage error printed. */
int discover_where_check(const char *cmd, const struct discover_where *w);
/*
 * Ask on this node's interfaces as w says (checked), for service (NULL:
 * both services), into res (discover_result_init() first; the caller
 * releases it).  An exit status, the error printed; progress: say what
 * it waits for on a terminal.
 */
int discover_ask(const char *cmd, const struct discover_where *w, const char *service,
		 bool progress, struct discover_result *res);

#endif
