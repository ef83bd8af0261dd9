/*
 * Checks of the shared volume over NVMe/TCP (docs/storage.md): the plan
 * in /etc/sparkctl/storage.json against what the node has - the fabric
 * controller, the interface it leaves by, the mount and the fstab line -
 * and across nodes, the host NQNs and the writers.  A node without a
 * "storage" section (nothing planned, no fabric controller) gets no
 * finding: doctor says nothing of storage where there is none.
 */
#include "sparkctl.h"

#include "check/check.h"
#include "lib/xalloc.h"
#include "probe/nvme.h"
#include "storage/storage_conf.h"

#define FABRIC_MTU 9000

/* The fix that makes the plan and the files it implies again. */
#define FIX_PLAN                                                                                   \
	"sparkctl storage plan --target ADDR --nqn NQN --mount DIR --uuid UUID --nodes ... "       \
	"--writer NODE --write"

/*
 * The plan the checks hold the node to: one with a subsystem and a target
 * (storage.json's parser insists; a saved inventory may lack them, and
 * storage.conf then says so), else NULL.
 */
static const struct storage_conf *planned(const struct check_ctx *ctx)
{
	const struct storage_conf *conf = ctx->inv->storage ? ctx->inv->storage->conf : NULL;

	return conf && conf->nqn && conf->target_address ? conf : NULL;
}

/*
 * Whether the node has anything of storage: a plan (good or bad) or a
 * fabric controller.  'storage check' gives every node a section; one
 * that is empty has nothing for the checks but storage.conf.
 */
static bool has_storage(const struct inventory *inv)
{
	const struct inv_storage *st = inv->storage;

	return st && (st->conf || st->conf_error || st->nr_controllers);
}

static enum inv_module_state module_state(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->sys.nr_modules; i++)
		if (streq(inv->sys.modules[i].name, name))
			return inv->sys.modules[i].state;
	return MODULE_UNKNOWN;
}

void check_storage_conf(struct check_ctx *ctx)
{
	const struct inv_storage *st = ctx->inv->storage;
	const struct storage_conf *conf = planned(ctx);

	if (!st)
		return;
	if (st->conf && !conf) {
		report(ctx, CHECK_FAIL, FIX_PLAN, "the plan names no %s",
		       st->conf->nqn ? "target address" : "subsystem NQN");
		return;
	}
	if (!has_storage(ctx->inv)) {
		report(ctx, CHECK_FAIL, FIX_PLAN,
		       "no /etc/sparkctl/storage.json: no volume is planned on this node");
	} else if (st->conf_error) {
		report(ctx, CHECK_FAIL, FIX_PLAN, "the plan cannot be used: %s", st->conf_error);
	} else if (!conf) {
		report(ctx, CHECK_SKIP, NULL,
		       "no /etc/sparkctl/storage.json: %zu fabric controller%s, no volume planned",
		       st->nr_controllers, st->nr_controllers == 1 ? "" : "s");
	} else {
		struct finding *f =
			report(ctx, CHECK_PASS, NULL, "%s of %s at %s:%u, on %s (%s)",
			       conf->mount ? conf->mount : "?", conf->nqn, conf->target_address,
			       conf->target_port, conf->node ? conf->node : "?",
			       storage_conf_this_node(conf)
				       ? storage_access_name(storage_conf_this_node(conf)->access)
				       : "not in the plan");
		finding_evidence(f, "uuid=%s", conf->uuid ? conf->uuid : "");
	}
}

void check_storage_module(struct check_ctx *ctx)
{
	if (!has_storage(ctx->inv))
		return;
	switch (module_state(ctx->inv, "nvme_tcp")) {
	case MODULE_LOADED:
	case MODULE_BUILTIN:
		report(ctx, CHECK_PASS, NULL, "nvme_tcp is loaded");
		break;
	case MODULE_ABSENT:
		report(ctx, CHECK_FAIL,
		       "sudo modprobe nvme_tcp && echo nvme_tcp | sudo tee "
		       "/etc/modules-load.d/nvme_tcp.conf",
		       "nvme_tcp is not loaded: no NVMe/TCP controller can be connected");
		break;
	case MODULE_UNKNOWN:
		report(ctx, CHECK_SKIP, NULL, "whether nvme_tcp is loaded is not known");
		break;
	}
}

void check_storage_hostnqn(struct check_ctx *ctx)
{
	const struct inv_storage *st = ctx->inv->storage;

	if (!has_storage(ctx->inv))
		return;
	if (!st->hostnqn)
		report(ctx, CHECK_FAIL, "nvme gen-hostnqn | sudo tee /etc/nvme/hostnqn",
		       "/etc/nvme/hostnqn is missing or empty: the target cannot tell this host "
		       "from others, nor allow it by name");
	else if (!nvme_nqn_valid(st->hostnqn))
		report(ctx, CHECK_FAIL, "nvme gen-hostnqn | sudo tee /etc/nvme/hostnqn",
		       "/etc/nvme/hostnqn holds '%s', not an NQN (nqn., at most 223 bytes)",
		       st->hostnqn);
	else
		report(ctx, CHECK_PASS, NULL, "host NQN %s", st->hostnqn);
}

/* A controller to the planned subsystem at the planned target. */
static bool is_planned_path(const struct inv_nvme_ctrl *c, const struct storage_conf *conf)
{
	return c->subsysnqn && streq(c->subsysnqn, conf->nqn) && c->traddr &&
	       streq(c->traddr, conf->target_address) && c->trsvcid == conf->target_port;
}

/* The planned path: a live one first; NULL when there is none. */
static const struct inv_nvme_ctrl *planned_path(const struct inv_storage *st)
{
	const struct inv_nvme_ctrl *found = NULL;

	for (size_t i = 0; i < st->nr_controllers; i++) {
		const struct inv_nvme_ctrl *c = &st->controllers[i];
		if (!is_planned_path(c, st->conf))
			continue;
		if (c->state && streq(c->state, "live"))
			return c;
		if (!found)
			found = c;
	}
	return found;
}

void check_storage_path_live(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_storage *st = ctx->inv->storage;
	const struct inv_nvme_ctrl *c;
	struct finding *f;

	if (!conf)
		return;
	c = planned_path(st);
	if (!c) {
		f = report(ctx, CHECK_FAIL, "sparkctl storage connect",
			   "no controller to %s at %s:%u: the volume is not connected", conf->nqn,
			   conf->target_address, conf->target_port);
		/* A controller to the subsystem elsewhere says where it went instead. */
		for (size_t i = 0; i < st->nr_controllers; i++)
			finding_evidence(
				f, "%s=%s %s:%" PRId64 " %s", st->controllers[i].name,
				st->controllers[i].subsysnqn ? st->controllers[i].subsysnqn : "?",
				st->controllers[i].traddr ? st->controllers[i].traddr : "?",
				st->controllers[i].trsvcid,
				st->controllers[i].state ? st->controllers[i].state : "?");
		return;
	}
	if (c->state && streq(c->state, "live")) {
		f = report(ctx, CHECK_PASS, NULL, "%s to %s at %s:%u is live", c->name, conf->nqn,
			   conf->target_address, conf->target_port);
	} else if (c->state && (streq(c->state, "connecting") || streq(c->state, "resetting"))) {
		f = report(ctx, CHECK_WARN,
			   "wait for the kernel to reconnect; if it stays so, check the target "
			   "and the link ('sparkctl storage check' again)",
			   "%s to %s at %s:%u is %s: the kernel is reconnecting, I/O waits",
			   c->name, conf->nqn, conf->target_address, conf->target_port, c->state);
	} else {
		f = report(ctx, CHECK_FAIL,
			   "sparkctl storage disconnect && sparkctl storage connect",
			   "%s to %s at %s:%u is %s", c->name, conf->nqn, conf->target_address,
			   conf->target_port, c->state ? c->state : "in an unknown state");
	}
	finding_evidence(f, "state=%s", c->state ? c->state : "");
}

/* The netdev that holds address, or NULL. */
static const struct inv_netdev *netdev_with_address(const struct inventory *inv,
						    const char *address)
{
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		for (size_t k = 0; k < inv->netdevs[i].nr_addrs; k++)
			if (inv->netdevs[i].addrs[k].address &&
			    streq(inv->netdevs[i].addrs[k].address, address))
				return &inv->netdevs[i];
	return NULL;
}

void check_storage_path_iface(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_nvme_ctrl *c;
	const struct inv_netdev *nd;
	struct finding *f;

	if (!conf)
		return;
	if (!conf->interface) {
		report(ctx, CHECK_SKIP, NULL, "no interface planned: the route decides");
		return;
	}
	if (!(c = planned_path(ctx->inv->storage))) {
		report(ctx, CHECK_SKIP, NULL, "no path to %s (storage.path_live)", conf->nqn);
		return;
	}
	if (!c->src_addr && c->host_iface) {
		/* Kernels before 6.1 show no source address; a bound connection names its
		 * interface. */
		if (streq(c->host_iface, conf->interface))
			report(ctx, CHECK_PASS, NULL, "%s is bound to %s, as planned", c->name,
			       c->host_iface);
		else
			report(ctx, CHECK_FAIL,
			       "sparkctl storage disconnect && sparkctl storage connect",
			       "%s is bound to %s, not to the planned %s", c->name, c->host_iface,
			       conf->interface);
		return;
	}
	if (!c->src_addr) {
		report(ctx, CHECK_SKIP, NULL, "%s shows no src_addr (kernels before 6.1)", c->name);
		return;
	}
	nd = netdev_with_address(ctx->inv, c->src_addr);
	if (nd && streq(nd->name, conf->interface)) {
		f = report(ctx, CHECK_PASS, NULL, "%s leaves from %s on %s, as planned", c->name,
			   c->src_addr, nd->name);
	} else {
		f = report(ctx, CHECK_FAIL,
			   "sparkctl storage disconnect && sparkctl storage connect (it binds the "
			   "planned interface)",
			   "%s leaves from %s on %s, not on the planned %s", c->name, c->src_addr,
			   nd ? nd->name : "no interface of this node", conf->interface);
	}
	finding_evidence(f, "src_addr=%s", c->src_addr);
}

/* Whether the netdev belongs to an RDMA device: a port of the fabric. */
static bool is_fabric_netdev(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (strvec_contains(&inv->rdma[i].netdevs, name))
			return true;
	return false;
}

void check_storage_iface_mtu(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_nvme_ctrl *c;
	const struct inv_netdev *nd = NULL;
	const char *name;

	if (!conf)
		return;
	/* The planned interface, else the one the path leaves by. */
	name = conf->interface;
	if (!name && (c = planned_path(ctx->inv->storage)) && c->src_addr &&
	    (nd = netdev_with_address(ctx->inv, c->src_addr)))
		name = nd->name;
	if (!name) {
		report(ctx, CHECK_SKIP, NULL, "no interface planned and no path to tell it");
		return;
	}
	if (!(nd = inventory_netdev(ctx->inv, name))) {
		report(ctx, CHECK_WARN, FIX_PLAN, "the planned interface %s does not exist here",
		       name);
		return;
	}
	if (nd->mtu < 0) {
		report(ctx, CHECK_SKIP, NULL, "the MTU of %s is not known", name);
	} else if (nd->mtu < FABRIC_MTU && is_fabric_netdev(ctx->inv, name)) {
		report(ctx, CHECK_WARN,
		       "sparkctl netplan (MTU 9000 on the fabric), or: sudo ip link set dev IF mtu "
		       "9000 on both ends",
		       "%s has MTU %" PRId64 ": NVMe/TCP moves 128 KiB and larger transfers, cut "
		       "into six times as many packets at 1500 as at 9000; the CPU that handles "
		       "them caps the volume's throughput",
		       name, nd->mtu);
	} else {
		report(ctx, CHECK_PASS, NULL, "%s has MTU %" PRId64 "%s", name, nd->mtu,
		       is_fabric_netdev(ctx->inv, name) ? "" : " (not a fabric port)");
	}
}

void check_storage_target_reachable(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_storage *st = ctx->inv->storage;

	/* Only a live probe asks the network; a tree has no answer, and no finding. */
	if (!conf || st->target_reachable == TRI_UNKNOWN)
		return;
	if (st->target_reachable == TRI_YES)
		report(ctx, CHECK_PASS, NULL, "%s:%u accepts TCP connections", conf->target_address,
		       conf->target_port);
	else
		report(ctx, CHECK_FAIL,
		       "on the target: sparkctl storage target (is it listening?); here: ping the "
		       "target, check the route and any firewall on the port",
		       "%s:%u cannot be reached over TCP: %s", conf->target_address,
		       conf->target_port, st->target_error ? st->target_error : "no answer");
}

void check_storage_mounted(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_storage *st = ctx->inv->storage;
	const struct storage_node *me;
	const char *want;
	struct strbuf fix = STRBUF_INIT;
	struct finding *f;

	if (!conf || !conf->mount)
		return;
	me = storage_conf_this_node(conf);
	want = me ? storage_access_name(me->access) : NULL;
	if (st->mount.mounted == TRI_UNKNOWN) {
		report(ctx, CHECK_SKIP, NULL, "the mount table could not be read");
		return;
	}
	if (st->mount.mounted == TRI_NO) {
		strbuf_addf(&fix, "%ssudo mount %s",
			    st->uuid_device ? "" : "sparkctl storage connect, then: ", conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf, "nothing is mounted at %s%s", conf->mount,
			   st->uuid_device ? "" : ", and no device has the planned UUID");
		finding_evidence(f, "uuid=%s", conf->uuid ? conf->uuid : "");
		goto out;
	}
	if (!st->uuid_device || !st->mount.device || !streq(st->uuid_device, st->mount.device)) {
		strbuf_addf(&fix, "sudo umount %s; sparkctl storage connect; sudo mount %s",
			    conf->mount, conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf,
			   "%s is mounted from %s, not from the volume with UUID %s (%s)",
			   conf->mount, st->mount.device ? st->mount.device : "?",
			   conf->uuid ? conf->uuid : "?",
			   st->uuid_device ? st->uuid_device : "no such device here");
	} else if (want && st->mount.access && !streq(want, st->mount.access)) {
		strbuf_addf(&fix, "sudo mount -o remount,%s %s", want, conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf,
			   "%s is mounted %s, but the plan makes this node %s%s", conf->mount,
			   st->mount.access, want,
			   me->access == STORAGE_ACCESS_RO
				   ? ": a second writer of one ext4 or xfs corrupts it"
				   : "");
	} else {
		f = report(ctx, CHECK_PASS, NULL, "%s is mounted %s from %s (UUID %s)", conf->mount,
			   st->mount.access ? st->mount.access : "?", st->mount.device, conf->uuid);
	}
	finding_evidence(f, "device=%s", st->mount.device ? st->mount.device : "");
	finding_evidence(f, "options=%s", st->mount.options ? st->mount.options : "");
out:
	strbuf_release(&fix);
}

void check_storage_nofail(struct check_ctx *ctx)
{
	const struct storage_conf *conf = planned(ctx);
	const struct inv_storage *st = ctx->inv->storage;
	const char *missing[2];
	size_t nr_missing = 0;
	struct finding *f;

	if (!conf || !conf->mount)
		return;
	if (st->fstab.present == TRI_UNKNOWN) {
		report(ctx, CHECK_SKIP, NULL, "/etc/fstab could not be read");
		return;
	}
	if (st->fstab.present == TRI_NO) {
		report(ctx, CHECK_FAIL, FIX_PLAN, "/etc/fstab has no line for %s", conf->mount);
		return;
	}
	if (!mount_has_option(st->fstab.options, "nofail"))
		missing[nr_missing++] = "nofail";
	if (!mount_has_option(st->fstab.options, "_netdev"))
		missing[nr_missing++] = "_netdev";
	if (!conf->uuid || strncmp(st->fstab.spec, "UUID=", 5) != 0 ||
	    strcasecmp(st->fstab.spec + 5, conf->uuid) != 0) {
		f = report(ctx, CHECK_FAIL, FIX_PLAN,
			   "/etc/fstab mounts %s at %s, not UUID=%s: NVMe device names follow the "
			   "order of connection and change across boots",
			   st->fstab.spec, conf->mount, conf->uuid ? conf->uuid : "?");
	} else if (nr_missing) {
		f = report(ctx, CHECK_FAIL, FIX_PLAN,
			   "the fstab line of %s lacks %s%s%s: a boot without the target waits for "
			   "the volume, then stops in emergency mode",
			   conf->mount, missing[0], nr_missing > 1 ? " and " : "",
			   nr_missing > 1 ? missing[1] : "");
	} else {
		f = report(ctx, CHECK_PASS, NULL,
			   "%s is in /etc/fstab by UUID, with nofail and _netdev", conf->mount);
	}
	finding_evidence(f, "options=%s", st->fstab.options);
}

void check_storage_hostnqn_unique(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t known = 0, dups = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *a = &c->nodes[i];
		if (!a->inspected || !a->inv.storage || !a->inv.storage->hostnqn)
			continue;
		known++;
		for (size_t k = i + 1; k < c->nr_nodes; k++) {
			const struct doctor_node *b = &c->nodes[k];
			if (!b->inspected || !b->inv.storage || !b->inv.storage->hostnqn ||
			    !streq(a->inv.storage->hostnqn, b->inv.storage->hostnqn))
				continue;
			struct finding *f = report(
				ctx, CHECK_FAIL,
				"on one of them: nvme gen-hostnqn | sudo tee /etc/nvme/hostnqn, "
				"then reconnect ('sparkctl storage connect')",
				"%s and %s have the same host NQN %s (made from one image): "
				"the target takes them for one host",
				a->host, b->host, a->inv.storage->hostnqn);
			finding_evidence(f, "hostnqn=%s", a->inv.storage->hostnqn);
			dups++;
		}
	}
	if (known >= 2 && !dups)
		report(ctx, CHECK_PASS, NULL, "%zu distinct host NQNs", known);
}

/* Whether node n has the planned volume mounted read-write. */
static bool mounts_rw(const struct doctor_node *n)
{
	const struct inv_storage *st = n->inv.storage;

	return n->inspected && st && st->conf && st->mount.mounted == TRI_YES && st->mount.access &&
	       streq(st->mount.access, "rw");
}

void check_storage_single_writer(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t mounted = 0, done = 0;

	for (size_t i = 0; i < c->nr_nodes; i++)
		if (c->nodes[i].inspected && c->nodes[i].inv.storage &&
		    c->nodes[i].inv.storage->mount.mounted == TRI_YES)
			mounted++;
	/* Writers of one volume (its UUID): each volume once. */
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *a = &c->nodes[i];
		struct strbuf names = STRBUF_INIT;
		size_t writers = 0;
		bool seen = false;
		if (!mounts_rw(a) || !a->inv.storage->conf->uuid)
			continue;
		const char *uuid = a->inv.storage->conf->uuid;
		for (size_t k = 0; k < i; k++)
			if (mounts_rw(&c->nodes[k]) && c->nodes[k].inv.storage->conf->uuid &&
			    !strcasecmp(c->nodes[k].inv.storage->conf->uuid, uuid))
				seen = true;
		if (seen)
			continue;
		for (size_t k = i; k < c->nr_nodes; k++) {
			if (!mounts_rw(&c->nodes[k]) || !c->nodes[k].inv.storage->conf->uuid ||
			    strcasecmp(c->nodes[k].inv.storage->conf->uuid, uuid) != 0)
				continue;
			strbuf_addf(&names, "%s%s", writers ? ", " : "", c->nodes[k].host);
			writers++;
		}
		if (writers > 1) {
			char *fix =
				xasprintf("on every node but the writer that storage.json names: "
					  "sudo mount -o remount,ro %s (and its fstab line: "
					  "sparkctl storage plan ... --write)",
					  a->inv.storage->conf->mount ? a->inv.storage->conf->mount
								      : "MOUNT");
			struct finding *f = report(ctx, CHECK_FAIL, fix,
						   "%zu nodes mount the volume %s read-write (%s): "
						   "ext4 and xfs have one "
						   "writer, two corrupt them",
						   writers, uuid, names.buf);
			finding_evidence(f, "uuid=%s", uuid);
			free(fix);
		}
		done += writers > 1;
		strbuf_release(&names);
	}
	if (mounted && !done)
		report(ctx, CHECK_PASS, NULL,
		       "at most one writer per volume (%zu node%s mount%s it)", mounted,
		       mounted == 1 ? "" : "s", mounted == 1 ? "s" : "");
}
