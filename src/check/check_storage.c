/*
 * Checks of the shared volumes over NVMe/TCP (docs/storage.md): each plan
 * in /etc/sparkctl/storage.d against what the node has - the fabric
 * controller, the interface it leaves by, the mount and the fstab line -
 * and across nodes, the host NQNs and the writers of each volume.  A check
 * of a volume reports once per planned volume, its message led by the
 * volume's mount point.  A node without a "storage" section (nothing
 * planned, no fabric controller) gets no finding: doctor says nothing of
 * storage where there is none.
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
 * The command that writes this node's share of the plan again: the plan's
 * own values (the fix for a file that lost what the plan put there).
 */
static char *plan_fix(const struct storage_conf *conf)
{
	struct strbuf cmd = STRBUF_INIT;
	const char *writer = NULL;

	strbuf_addf(&cmd, "sparkctl storage plan --target %s%s%s:%u --nqn %s --mount %s --fs %s",
		    strchr(conf->target_address, ':') ? "[" : "", conf->target_address,
		    strchr(conf->target_address, ':') ? "]" : "", conf->target_port, conf->nqn,
		    conf->mount, storage_fs_name(conf->fs));
	if (conf->uuid)
		strbuf_addf(&cmd, " --uuid %s", conf->uuid);
	if (conf->interface)
		strbuf_addf(&cmd, " --iface %s", conf->interface);
	strbuf_addstr(&cmd, " --nodes ");
	for (size_t i = 0; i < conf->nr_nodes; i++) {
		strbuf_addf(&cmd, "%s%s", i ? "," : "", conf->nodes[i].name);
		if (conf->nodes[i].access == STORAGE_ACCESS_RW)
			writer = conf->nodes[i].name;
	}
	if (writer)
		strbuf_addf(&cmd, " --writer %s", writer);
	else
		strbuf_addstr(&cmd, " --ro-all");
	strbuf_addstr(&cmd, " --write");
	return strbuf_detach(&cmd, NULL);
}

/* "sparkctl storage connect --mount DIR", after a disconnect when reconnect. */
static char *connect_fix(const struct storage_conf *conf, bool reconnect)
{
	return reconnect ? xasprintf("sparkctl storage disconnect --mount %s && "
				     "sparkctl storage connect --mount %s",
				     conf->mount, conf->mount)
			 : xasprintf("sparkctl storage connect --mount %s", conf->mount);
}

/*
 * The plan a volume is held to: one with a subsystem and a target (the
 * parser insists; a saved inventory may lack them, and storage.conf then
 * says so), else NULL.
 */
static const struct storage_conf *planned(const struct inv_storage_volume *v)
{
	return v->conf && v->conf->nqn && v->conf->target_address ? v->conf : NULL;
}

/*
 * Whether the node has anything of storage: a plan (good or bad) or a
 * fabric controller.  'storage check' gives every node a section; one
 * that is empty has nothing for the checks but storage.conf.
 */
static bool has_storage(const struct inventory *inv)
{
	const struct inv_storage *st = inv->storage;

	return st && (st->nr_volumes || st->nr_controllers);
}

/* The name a volume's findings start with: its mount point, else its file. */
static const char *volume_name(const struct inv_storage_volume *v)
{
	if (v->conf && v->conf->mount)
		return v->conf->mount;
	return v->file ? v->file : "?";
}

/* report(), the message led by the volume's name ("/mnt/shared: ..."). */
static struct finding *report_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
				     enum check_status status, const char *fix, const char *fmt,
				     ...) ATTR_PRINTF(5, 6);
static struct finding *report_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
				     enum check_status status, const char *fix, const char *fmt,
				     ...)
{
	struct strbuf msg = STRBUF_INIT;
	struct finding *f;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	f = report(ctx, status, fix, "%s: %s", volume_name(v), msg.buf);
	strbuf_release(&msg);
	return f;
}

/* Run check_volume for every planned volume of the node. */
static void for_each_planned(struct check_ctx *ctx,
			     void (*check_volume)(struct check_ctx *ctx,
						  const struct inv_storage_volume *v,
						  const struct storage_conf *conf))
{
	const struct inv_storage *st = ctx->inv->storage;

	for (size_t i = 0; st && i < st->nr_volumes; i++)
		if (planned(&st->volumes[i]))
			check_volume(ctx, &st->volumes[i], planned(&st->volumes[i]));
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

	if (!st)
		return;
	if (!has_storage(ctx->inv)) {
		report(ctx, CHECK_FAIL, FIX_PLAN,
		       "no plan in /etc/sparkctl/storage.d: no volume is planned on this node");
		return;
	}
	if (!st->nr_volumes) {
		report(ctx, CHECK_SKIP, NULL,
		       "no plan in /etc/sparkctl/storage.d: %zu fabric controller%s, no volume "
		       "planned",
		       st->nr_controllers, st->nr_controllers == 1 ? "" : "s");
		return;
	}
	for (size_t i = 0; i < st->nr_volumes; i++) {
		const struct inv_storage_volume *v = &st->volumes[i];
		const struct storage_conf *conf = planned(v);
		if (v->conf && !conf) {
			report_volume(ctx, v, CHECK_FAIL, FIX_PLAN, "the plan names no %s",
				      v->conf->nqn ? "target address" : "subsystem NQN");
		} else if (!conf) {
			/* The parser's message names the file. */
			report(ctx, CHECK_FAIL, FIX_PLAN, "the plan cannot be used: %s",
			       v->conf_error ? v->conf_error : volume_name(v));
		} else {
			const struct storage_node *me = storage_conf_this_node(conf);
			struct finding *f = report_volume(
				ctx, v, CHECK_PASS, NULL, "%s at %s:%u, on %s (%s)", conf->nqn,
				conf->target_address, conf->target_port,
				conf->node ? conf->node : "?",
				me ? storage_access_name(me->access) : "not in the plan");
			finding_evidence(f, "uuid=%s", conf->uuid ? conf->uuid : "");
		}
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
		       "/etc/nvme/hostnqn holds '%s', not an NQN (" NVME_NQN_RULE ")", st->hostnqn);
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
static const struct inv_nvme_ctrl *planned_path(const struct inv_storage *st,
						const struct storage_conf *conf)
{
	const struct inv_nvme_ctrl *found = NULL;

	for (size_t i = 0; i < st->nr_controllers; i++) {
		const struct inv_nvme_ctrl *c = &st->controllers[i];
		if (!is_planned_path(c, conf))
			continue;
		if (c->state && streq(c->state, "live"))
			return c;
		if (!found)
			found = c;
	}
	return found;
}

static void path_live_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
			     const struct storage_conf *conf)
{
	const struct inv_storage *st = ctx->inv->storage;
	const struct inv_nvme_ctrl *c = planned_path(st, conf);
	struct finding *f;

	if (!c) {
		char *fix = connect_fix(conf, false);

		f = report_volume(ctx, v, CHECK_FAIL, fix,
				  "no controller to %s at %s:%u: the volume is not connected",
				  conf->nqn, conf->target_address, conf->target_port);
		free(fix);
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
		f = report_volume(ctx, v, CHECK_PASS, NULL, "%s to %s at %s:%u is live", c->name,
				  conf->nqn, conf->target_address, conf->target_port);
	} else if (c->state && (streq(c->state, "connecting") || streq(c->state, "resetting"))) {
		f = report_volume(
			ctx, v, CHECK_WARN,
			"wait for the kernel to reconnect; if it stays so, check the target "
			"and the link ('sparkctl storage check' again)",
			"%s to %s at %s:%u is %s: the kernel is reconnecting, I/O waits", c->name,
			conf->nqn, conf->target_address, conf->target_port, c->state);
	} else {
		char *fix = connect_fix(conf, true);

		f = report_volume(ctx, v, CHECK_FAIL, fix, "%s to %s at %s:%u is %s", c->name,
				  conf->nqn, conf->target_address, conf->target_port,
				  c->state ? c->state : "in an unknown state");
		free(fix);
	}
	finding_evidence(f, "state=%s", c->state ? c->state : "");
}

void check_storage_path_live(struct check_ctx *ctx)
{
	for_each_planned(ctx, path_live_volume);
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

static void path_iface_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
			      const struct storage_conf *conf)
{
	const struct inv_nvme_ctrl *c;
	const struct inv_netdev *nd;
	struct finding *f;

	if (!conf->interface) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "no interface planned: the route decides");
		return;
	}
	if (!(c = planned_path(ctx->inv->storage, conf))) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "no path to %s (storage.path_live)",
			      conf->nqn);
		return;
	}
	if (!c->src_addr && c->host_iface) {
		/* Kernels before 6.1 show no source address; a bound connection names its
		 * interface. */
		if (streq(c->host_iface, conf->interface))
			report_volume(ctx, v, CHECK_PASS, NULL, "%s is bound to %s, as planned",
				      c->name, c->host_iface);
		else {
			char *fix = connect_fix(conf, true);

			report_volume(ctx, v, CHECK_FAIL, fix,
				      "%s is bound to %s, not to the planned %s", c->name,
				      c->host_iface, conf->interface);
			free(fix);
		}
		return;
	}
	if (!c->src_addr) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "%s shows no src_addr (kernels before 6.1)",
			      c->name);
		return;
	}
	nd = netdev_with_address(ctx->inv, c->src_addr);
	if (nd && streq(nd->name, conf->interface)) {
		f = report_volume(ctx, v, CHECK_PASS, NULL, "%s leaves from %s on %s, as planned",
				  c->name, c->src_addr, nd->name);
	} else {
		char *fix = connect_fix(conf, true);

		f = report_volume(
			ctx, v, CHECK_FAIL, fix,
			"%s leaves from %s on %s, not on the planned %s (connect binds the "
			"planned interface)",
			c->name, c->src_addr, nd ? nd->name : "no interface of this node",
			conf->interface);
		free(fix);
	}
	finding_evidence(f, "src_addr=%s", c->src_addr);
}

void check_storage_path_iface(struct check_ctx *ctx)
{
	for_each_planned(ctx, path_iface_volume);
}

/* Whether the netdev belongs to an RDMA device: a port of the fabric. */
static bool is_fabric_netdev(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (strvec_contains(&inv->rdma[i].netdevs, name))
			return true;
	return false;
}

static void iface_mtu_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
			     const struct storage_conf *conf)
{
	const struct inv_nvme_ctrl *c;
	const struct inv_netdev *nd = NULL;
	const char *name;

	/* The planned interface, else the one the path leaves by. */
	name = conf->interface;
	if (!name && (c = planned_path(ctx->inv->storage, conf)) && c->src_addr &&
	    (nd = netdev_with_address(ctx->inv, c->src_addr)))
		name = nd->name;
	if (!name) {
		report_volume(ctx, v, CHECK_SKIP, NULL,
			      "no interface planned and no path to tell it");
		return;
	}
	if (!(nd = inventory_netdev(ctx->inv, name))) {
		char *fix = plan_fix(conf);

		report_volume(ctx, v, CHECK_WARN, fix,
			      "the planned interface %s does not exist here", name);
		free(fix);
		return;
	}
	if (nd->mtu < 0) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "the MTU of %s is not known", name);
	} else if (nd->mtu < FABRIC_MTU && is_fabric_netdev(ctx->inv, name)) {
		report_volume(
			ctx, v, CHECK_WARN,
			"sparkctl netplan (MTU 9000 on the fabric), or: sudo ip link set dev IF "
			"mtu "
			"9000 on both ends",
			"%s has MTU %" PRId64 ": NVMe/TCP moves 128 KiB and larger transfers, cut "
			"into six times as many packets at 1500 as at 9000; the CPU that handles "
			"them caps the volume's throughput",
			name, nd->mtu);
	} else {
		report_volume(ctx, v, CHECK_PASS, NULL, "%s has MTU %" PRId64 "%s", name, nd->mtu,
			      is_fabric_netdev(ctx->inv, name) ? "" : " (not a fabric port)");
	}
}

void check_storage_iface_mtu(struct check_ctx *ctx)
{
	for_each_planned(ctx, iface_mtu_volume);
}

static void target_reachable_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
				    const struct storage_conf *conf)
{
	/* Only a live probe asks the network; a tree has no answer, and no finding. */
	if (v->target_reachable == TRI_UNKNOWN)
		return;
	if (v->target_reachable == TRI_YES)
		report_volume(ctx, v, CHECK_PASS, NULL, "%s:%u accepts TCP connections",
			      conf->target_address, conf->target_port);
	else
		report_volume(
			ctx, v, CHECK_FAIL,
			"on the target: sparkctl storage target (is it listening?); here: ping the "
			"target, check the route and any firewall on the port",
			"%s:%u cannot be reached over TCP: %s", conf->target_address,
			conf->target_port, v->target_error ? v->target_error : "no answer");
}

void check_storage_target_reachable(struct check_ctx *ctx)
{
	for_each_planned(ctx, target_reachable_volume);
}

/* The messages of storage.mounted and storage.nofail name the mount point themselves. */
static void mounted_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
			   const struct storage_conf *conf)
{
	const struct storage_node *me;
	const char *want;
	struct strbuf fix = STRBUF_INIT;
	struct finding *f;

	if (!conf->mount)
		return;
	me = storage_conf_this_node(conf);
	want = me ? storage_access_name(me->access) : NULL;
	if (v->mount.mounted == TRI_UNKNOWN) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "the mount table could not be read");
		return;
	}
	if (v->mount.mounted == TRI_NO) {
		if (!v->uuid_device)
			strbuf_addf(&fix,
				    "sparkctl storage connect --mount %s, then: ", conf->mount);
		strbuf_addf(&fix, "sudo mount %s", conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf, "nothing is mounted at %s%s", conf->mount,
			   v->uuid_device ? "" : ", and no device has the planned UUID");
		finding_evidence(f, "uuid=%s", conf->uuid ? conf->uuid : "");
		goto out;
	}
	if (!v->uuid_device || !v->mount.device || !streq(v->uuid_device, v->mount.device)) {
		strbuf_addf(&fix,
			    "sudo umount %s; sparkctl storage connect --mount %s; sudo mount %s",
			    conf->mount, conf->mount, conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf,
			   "%s is mounted from %s, not from the volume with UUID %s (%s)",
			   conf->mount, v->mount.device ? v->mount.device : "?",
			   conf->uuid ? conf->uuid : "?",
			   v->uuid_device ? v->uuid_device : "no such device here");
	} else if (want && v->mount.access && !streq(want, v->mount.access)) {
		strbuf_addf(&fix, "sudo mount -o remount,%s %s", want, conf->mount);
		f = report(ctx, CHECK_FAIL, fix.buf,
			   "%s is mounted %s, but the plan makes this node %s%s", conf->mount,
			   v->mount.access, want,
			   me->access == STORAGE_ACCESS_RO
				   ? ": a second writer of one ext4 or xfs corrupts it"
				   : "");
	} else {
		f = report(ctx, CHECK_PASS, NULL, "%s is mounted %s from %s (UUID %s)", conf->mount,
			   v->mount.access ? v->mount.access : "?", v->mount.device, conf->uuid);
	}
	finding_evidence(f, "device=%s", v->mount.device ? v->mount.device : "");
	finding_evidence(f, "options=%s", v->mount.options ? v->mount.options : "");
out:
	strbuf_release(&fix);
}

void check_storage_mounted(struct check_ctx *ctx)
{
	for_each_planned(ctx, mounted_volume);
}

static void nofail_volume(struct check_ctx *ctx, const struct inv_storage_volume *v,
			  const struct storage_conf *conf)
{
	const char *missing[2];
	size_t nr_missing = 0;
	struct finding *f;
	char *fix;

	if (!conf->mount)
		return;
	if (v->fstab.present == TRI_UNKNOWN) {
		report_volume(ctx, v, CHECK_SKIP, NULL, "/etc/fstab could not be read");
		return;
	}
	fix = plan_fix(conf);
	if (v->fstab.present == TRI_NO) {
		report(ctx, CHECK_FAIL, fix, "/etc/fstab has no line for %s", conf->mount);
		free(fix);
		return;
	}
	if (!mount_has_option(v->fstab.options, "nofail"))
		missing[nr_missing++] = "nofail";
	if (!mount_has_option(v->fstab.options, "_netdev"))
		missing[nr_missing++] = "_netdev";
	if (!conf->uuid || strncmp(v->fstab.spec, "UUID=", 5) != 0 ||
	    strcasecmp(v->fstab.spec + 5, conf->uuid) != 0) {
		f = report_volume(
			ctx, v, CHECK_FAIL, fix,
			"/etc/fstab mounts %s at %s, not UUID=%s: NVMe device names follow the "
			"order of connection and change across boots",
			v->fstab.spec, conf->mount, conf->uuid ? conf->uuid : "?");
	} else if (nr_missing) {
		f = report_volume(
			ctx, v, CHECK_FAIL, fix,
			"the fstab line of %s lacks %s%s%s: a boot without the target waits for "
			"the volume, then stops in emergency mode",
			conf->mount, missing[0], nr_missing > 1 ? " and " : "",
			nr_missing > 1 ? missing[1] : "");
	} else {
		f = report(ctx, CHECK_PASS, NULL,
			   "%s is in /etc/fstab by UUID, with nofail and _netdev", conf->mount);
	}
	finding_evidence(f, "options=%s", v->fstab.options);
	free(fix);
}

void check_storage_nofail(struct check_ctx *ctx)
{
	for_each_planned(ctx, nofail_volume);
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

/* Node n's volume of subsystem nqn when it is mounted there read-write, else NULL. */
static const struct inv_storage_volume *writes(const struct doctor_node *n, const char *nqn)
{
	const struct inv_storage *st = n->inv.storage;

	for (size_t i = 0; n->inspected && st && i < st->nr_volumes; i++) {
		const struct inv_storage_volume *v = &st->volumes[i];
		if (planned(v) && streq(v->conf->nqn, nqn) && v->mount.mounted == TRI_YES &&
		    v->mount.access && streq(v->mount.access, "rw"))
			return v;
	}
	return NULL;
}

/* Whether a node before node i writes the volume of subsystem nqn: it was reported then. */
static bool written_before(const struct doctor_cluster *c, size_t i, const char *nqn)
{
	for (size_t k = 0; k < i; k++)
		if (writes(&c->nodes[k], nqn))
			return true;
	return false;
}

void check_storage_single_writer(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	struct strvec volumes = STRVEC_INIT;
	size_t done = 0;

	/* The volumes (their subsystems) mounted anywhere, each once. */
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_storage *st = c->nodes[i].inv.storage;
		for (size_t k = 0; c->nodes[i].inspected && st && k < st->nr_volumes; k++)
			if (planned(&st->volumes[k]) && st->volumes[k].mount.mounted == TRI_YES &&
			    !strvec_contains(&volumes, st->volumes[k].conf->nqn))
				strvec_push(&volumes, st->volumes[k].conf->nqn);
	}
	/* The writers of each volume, told by its subsystem: each volume once. */
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct inv_storage *st = c->nodes[i].inv.storage;
		for (size_t k = 0; c->nodes[i].inspected && st && k < st->nr_volumes; k++) {
			const struct inv_storage_volume *v = &st->volumes[k];
			struct strbuf names = STRBUF_INIT;
			size_t writers = 0;
			if (writes(&c->nodes[i], v->conf ? v->conf->nqn : "") != v ||
			    written_before(c, i, v->conf->nqn))
				continue;
			for (size_t n = i; n < c->nr_nodes; n++) {
				if (!writes(&c->nodes[n], v->conf->nqn))
					continue;
				strbuf_addf(&names, "%s%s", writers ? ", " : "", c->nodes[n].host);
				writers++;
			}
			if (writers > 1) {
				char *fix = xasprintf("on every node but the writer that the plan "
						      "names: sudo mount "
						      "-o remount,ro %s (and its fstab line: "
						      "sparkctl storage plan "
						      "... --write)",
						      v->conf->mount ? v->conf->mount : "MOUNT");
				struct finding *f =
					report(ctx, CHECK_FAIL, fix,
					       "%zu nodes mount the volume %s (%s) read-write "
					       "(%s): ext4 and "
					       "xfs have one writer, two corrupt them",
					       writers, v->conf->nqn,
					       v->conf->mount ? v->conf->mount : "?", names.buf);
				finding_evidence(f, "nqn=%s", v->conf->nqn);
				if (v->conf->uuid)
					finding_evidence(f, "uuid=%s", v->conf->uuid);
				free(fix);
				done++;
			}
			strbuf_release(&names);
		}
	}
	if (volumes.nr && !done)
		report(ctx, CHECK_PASS, NULL,
		       "at most one writer per volume (%zu volume%s mounted)", volumes.nr,
		       volumes.nr == 1 ? "" : "s");
	strvec_clear(&volumes);
}
