/*
 * sparkctl version - the version of this sparkctl.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "version.h"

static const char *const version_usage[] = {
	"sparkctl version",
	NULL,
};

static int run_version(const struct cmd *cmd, int argc, char **argv)
{
	const struct opt opts[] = {
		OPT_HELP(),
		OPT_END(),
	};
	int n = cmd_parse(cmd, opts, argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	printf("sparkctl %s (git %s)\n", SPARKCTL_VERSION, SPARKCTL_GIT_REVISION);
	return SPARKCTL_EXIT_OK;
}

const struct cmd cmd_version = {
	.name = "version",
	.fn = run_version,
	.summary = "print the version of sparkctl",
	.usage = version_usage,
	.description = "Print the version of sparkctl.",
	.exit_status = "0 shown, 2 usage",
	.max_operands = 0,
};
