/*
 * sparkctl storage check - the shared volumes, node by node and across the
 * nodes: doctor's run with the checks of group "storage" (check_storage.c),
 * on this node, the nodes given, or a tree or a saved inventory.
 */
#include "sparkctl.h"

#include "check/check.h"
#include "cmd/cmd.h"
#include "lib/xalloc.h"

static const char *const storage_check_usage[] = {
	"sparkctl storage check [--root DIR | --from FILE...] [--json]",
	"sparkctl storage check -H HOST,... | --hostfile FILE | --cluster FILE [--json]",
	NULL,
};

static const char storage_check_description[] =
	"Check the shared volumes each node is meant to have (one plan per volume in\n"
	"/etc/sparkctl/storage.d, written by 'sparkctl storage plan --write') against what\n"
	"it has: nvme_tcp and the host NQN; for each volume, a live controller to the\n"
	"planned subsystem and target, leaving by the planned interface at MTU 9000, the\n"
	"target reachable (live only), the volume mounted from its UUID read-only or\n"
	"read-write as planned, and its fstab line by UUID with nofail and _netdev; each\n"
	"finding of a volume starts with its mount point.  Across nodes: host NQNs unique,\n"
	"one writer per volume.  These are doctor's storage.* checks ('sparkctl doctor\n"
	"--list'); nodes are chosen as doctor chooses them.  A node without a plan fails\n"
	"storage.conf.";

/*
 * doctor leaves a node without a storage section alone; asked about
 * storage, such a node has no plan, which storage.conf reports.
 */
static void require_storage(struct doctor_cluster *c)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		struct inventory *inv = &c->nodes[i].inv;
		if (!c->nodes[i].inspected || inv->storage)
			continue;
		inv->storage = xcalloc(1, sizeof(*inv->storage));
	}
}

static int run_storage_check(const struct cmd *cmd, int argc, char **argv)
{
	const struct doctor_mode storage_checks = { .group = "storage",
						    .prepare = require_storage };

	return doctor_run(cmd, argc, argv, &storage_checks);
}

const struct cmd cmd_storage_check = {
	.name = "check",
	.title = "storage check",
	.fn = run_storage_check,
	.summary = "check the shared volumes on each node as planned; every finding with its fix",
	.usage = storage_check_usage,
	.description = storage_check_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 nothing failed, 1 a --root or --from that cannot be read, 2 usage, 3 a "
		       "node could not be inspected, 4 a check failed",
	.max_operands = 0,
};
