/*
 * sparkctl - main: the commands are in src/cmd/ (commands.c has the table).
 */
#include "sparkctl.h"

#include "cmd/cmd.h"

int main(int argc, char **argv)
{
	return cmd_main(argc, argv);
}
