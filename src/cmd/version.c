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

int cmd_version(int argc, char **argv)
{
	bool help = false;
	const struct opt opts[] = {
		OPT_HELP(&help),
		OPT_END(),
	};
	int n = cmd_parse_options(opts, version_usage, "Print the version of sparkctl.", &help,
				  argc, argv);

	if (n < 0)
		return cmd_parse_exit(n);
	if (n > 0)
		return cmd_usage_error("version", "unexpected argument '%s'", argv[1]);
	printf("sparkctl %s (git %s)\n", SPARKCTL_VERSION, SPARKCTL_GIT_REVISION);
	return SPARKCTL_EXIT_OK;
}
