#include "sparkctl.h"

#include "cmd/cmd.h"
const struct cmd cmd_storage_connect = { .name = "connect",
					 .title = "storage connect",
					 .summary = "x",
					 .usage = (const char *const[]){ "x", NULL },
					 .description = "x",
					 .exit_status = "0" };
const struct cmd cmd_storage_disconnect = { .name = "disconnect",
					    .title = "storage disconnect",
					    .summary = "x",
					    .usage = (const char *const[]){ "x", NULL },
					    .description = "x",
					    .exit_status = "0" };
