/*
 * sparkctl topo - this node's fabric: RDMA ports, twins, netdevs,
 * addresses, GPUs and the software that matters.
 */
#include "sparkctl.h"

#include "cmd/cmd.h"
#include "inventory/inventory_json.h"
#include "view/topo_view.h"

static const char *const topo_usage[] = {
	"sparkctl topo [--json] [--root DIR | --from FILE]",
	NULL,
};

static const char topo_description[] =
	"Show this node's RDMA ports with their state, rate, netdev, carrier, MTU,\n"
	"IPv4 address, the RoCE v2 GID index NCCL will pick and the twin (the other\n"
	"PCIe half of the same physical port); then the GPUs and one line of\n"
	"driver, CUDA, NCCL and kernel facts.  --json prints the whole inventory\n"
	"(schema: docs/inventory.md), which --from loads back on any machine.";

static int run_topo(const struct cmd *cmd, int argc, char **argv)
{
	/* Over SSH, doctor and storage check read a node through topo: the target is tried. */
	struct inventory_source src = { .storage_target = true };
	bool json = false;
	const struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "print the inventory as JSON"),
		OPT_INVENTORY_SOURCE(&src),
		OPT_STRING(0, "slurm-user", &src.slurm_user, "NAME",
			   "the job user whose uid and gid the inventory's slurm section holds "
			   "(default: $USER)"),
		OPT_HELP(),
		OPT_END(),
	};
	struct inventory inv;
	int n, ret;

	n = cmd_parse(cmd, opts, argc, argv);
	if (n < 0)
		return cmd_parse_exit(n);

	inventory_init(&inv);
	ret = inventory_source_load("topo", &src, &inv);
	if (ret != SPARKCTL_EXIT_OK)
		return ret;
	if (json) {
		json_t *doc = inventory_to_json(&inv);
		if (json_write(stdout, doc) < 0)
			ret = SPARKCTL_EXIT_ERROR;
		json_decref(doc);
	} else {
		struct strbuf out = STRBUF_INIT;
		topo_render(&inv, 80, &out);
		fputs(out.buf, stdout);
		strbuf_release(&out);
	}
	inventory_release(&inv);
	return ret;
}

const struct cmd cmd_topo = {
	.name = "topo",
	.fn = run_topo,
	.summary = "show this node's RDMA ports, twins, netdevs, GPUs and software",
	.usage = topo_usage,
	.description = topo_description,
	.flags = CMD_READS_NODE,
	.exit_status = "0 the inventory was printed, 1 a --root or --from that cannot be read, 2 "
		       "usage; a value the probe cannot read is reported as unknown, not a failure",
	.max_operands = 0,
};
