/*
 * cmd.h - the commands of sparkctl and what they share.
 *
 * To add a command: write src/cmd/NAME.c with
 *     int cmd_NAME(int argc, char **argv);
 * that parses its own options (lib/options.h), prints its --help, and
 * returns an exit status of exitcode.h; declare it below; add it to the
 * commands[] table of src/main.c; list the file in meson.build.  Only
 * commands print: the code they call returns -errno and a message.
 */
#ifndef SPARKCTL_CMD_H
#define SPARKCTL_CMD_H

#include "sparkctl.h"
#include "exitcode.h"
#include "inventory/inventory.h"
#include "lib/options.h"
#include "lib/strbuf.h"
#include "remote/ssh.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for 'sparkctl --help'; NULL keeps it out of the help */
};

/* The command table (main.c), in the order 'sparkctl --help' lists it. */
extern const struct cmd sparkctl_commands[];
extern const size_t sparkctl_nr_commands;
const struct cmd *cmd_lookup(const char *name);

int cmd_topo(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_launch(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_bench_link(int argc, char **argv); /* bench link, in cmd/bench_link.c */
int cmd_exporter(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_netplan(int argc, char **argv);
int cmd_status(int argc, char **argv);
/* sparkctl agent status: this node's answer to status (cmd/status.c). */
int status_agent(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* The command overview of 'sparkctl --help'. */
void cmd_help_overview(FILE *f);

/*
 * name in sparkctl's state directory, where a command keeps what a later
 * one shows (doctor's last report, for status): $SPARKCTL_STATE_DIR, else
 * $XDG_STATE_HOME/sparkctl, else ~/.local/state/sparkctl.  create: make
 * the directory (0700) first.  -ENOENT without any of them, or -errno.
 */
int cmd_state_path(const char *name, bool create, struct strbuf *path);

/* "sparkctl CMD: message" on stderr. */
void cmd_error(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3);
/*
 * Report a command-line error: the message, then a pointer to --help.
 * Returns SPARKCTL_EXIT_USAGE.
 */
int cmd_usage_error(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3);
/*
 * Parse argv against opts.  On a bad option prints the error and returns
 * -1 (the caller returns SPARKCTL_EXIT_USAGE); when --help was given
 * prints the help to stdout and returns -2 (the caller returns 0);
 * otherwise returns the number of operands (now argv[1..]).
 */
int cmd_parse_options(const struct opt *opts, const char *const *usage, const char *description,
		      bool *help, int argc, char **argv);
/* Map the result of cmd_parse_options() to an exit status when it is negative. */
static inline int cmd_parse_exit(int r)
{
	return r == -2 ? SPARKCTL_EXIT_OK : SPARKCTL_EXIT_USAGE;
}

/*
 * Where a command's inventory comes from: --root DIR (or $SPARKCTL_ROOT),
 * --from FILE, or the live host.  Every command that reads a node
 * includes OPT_INVENTORY_SOURCE in its options.
 */
struct inventory_source {
	const char *root;
	const char *from;
	bool no_nvidia_libraries; /* the probe leaves NVML, CUDA and NCCL alone */
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

#endif
