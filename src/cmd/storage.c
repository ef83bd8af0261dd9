/*
 * sparkctl storage - shared storage over NVMe/TCP:
 *
 *   sparkctl storage plan        each node's discovery line, module, unit and fstab line
 *   sparkctl storage target      a Linux nvmet target through configfs
 *   sparkctl storage connect     connect the planned volume (nvme-cli)
 *   sparkctl storage disconnect  and disconnect it
 *   sparkctl storage check       the volume as planned, node by node
 *   sparkctl storage bench       fio on each path, beside the local NVMe
 *
 * Each verb is its own file, src/cmd/storage_VERB.c; what they share is in
 * src/storage/ (storage_conf.h: the plan each node keeps).
 */
#include "sparkctl.h"

#include "cmd/cmd.h"

static const char *const storage_usage[] = {
	"sparkctl storage plan|target|connect|disconnect|check|bench [options]",
	NULL,
};

static const struct cmd *const storage_verbs[] = {
	&cmd_storage_plan,
	&cmd_storage_target,
	&cmd_storage_connect,
	&cmd_storage_disconnect,
	&cmd_storage_check,
	&cmd_storage_bench,
	NULL,
};

const struct cmd cmd_storage = {
	.name = "storage",
	.summary = "shared storage over NVMe/TCP: plan, target, connect, check, bench",
	.usage = storage_usage,
	.verbs = storage_verbs,
	.verb_noun = "action",
};
