/*
 * sparkctl storage check - the shared volume, node by node and across the
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
	"Check the shared volume each node is meant to have (/etc/sparkctl/storage.json,\n"
	"written by 'sparkctl storage plan --write') against what it has: nvme_tcp and the\n"
	"host NQN, a live controller to the planned subsystem and target, leaving by the\n"
	"planned interface at MTU 9000, the target reachable (live only), the volume\n"
	"mounted from its UUID read-only or read-write as planned, and its fstab line by\n"
	"UUID with nofail and _netdev.  Across nodes: host NQNs unique, one writer.\n"
	"These are doctor's storage.* checks ('sparkctl doctor --list'); nodes are chosen\n"
	"as doctor chooses them.  A node without storage.json fails storage.conf.";

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
		inv->storage->mount.mounted = TRI_UNKNOWN;
		inv->storage->fstab.present = TRI_UNKNOWN;
		inv->storage->target_reachable = TRI_UNKNOWN;
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
	.summary = "check the shared volume on each node as planned; every finding with its fix",
	.usage = storage_check_usage,
	.description = storage_check_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 nothing failed, 1 a --root or --from that cannot be read, 2 usage, 3 a "
		       "node could not be inspected, 4 a check failed",
	.max_operands = 0,
};
