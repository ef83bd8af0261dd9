/*
 * Checks of the RDMA fabric of one node: devices, modules, ports, twins,
 * addresses, GIDs, MTU, link rate and errors, PCIe links.
 */
#include "sparkctl.h"

#include <sys/socket.h>

#include "check/check.h"
#include "config/fabric.h"
#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"

/* The netdev of an ACTIVE RoCE port, or NULL. */
static const struct inv_netdev *active_roce_netdev(const struct inventory *inv,
						   const struct inv_rdma_dev *d,
						   const struct inv_port *p)
{
	if (p->state != 4 || port_is_infiniband(p))
		return NULL;
	return rdma_port_netdev(inv, d, p);
}

/* The port of twin t with the number of p. */
static const struct inv_port *twin_port(const struct inv_rdma_dev *t, const struct inv_port *p)
{
	for (size_t i = 0; t && i < t->nr_ports; i++)
		if (t->ports[i].num == p->num)
			return &t->ports[i];
	return NULL;
}

/* The node is a DGX Spark: a GB10 GPU, or its ConnectX-7 with NVIDIA's board id. */
static bool is_spark(const struct inventory *inv)
{
	for (size_t i = 0; i < inv->gpu.nr_gpus; i++)
		if (inv->gpu.gpus[i].name && strstr(inv->gpu.gpus[i].name, "GB10"))
			return true;
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (streq(inv->rdma[i].hca_type, "MT4129") && inv->rdma[i].board_id &&
		    starts_with(inv->rdma[i].board_id, "NVD"))
			return true;
	return false;
}

void check_rdma_devices(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	struct strbuf names = STRBUF_INIT;

	if (!inv->nr_rdma) {
		report(ctx, CHECK_FAIL,
		       "sudo modprobe mlx5_ib ib_uverbs   # in a container: "
		       "--device=/dev/infiniband",
		       "no RDMA device in /sys/class/infiniband: NCCL would fall back to TCP");
		return;
	}
	for (size_t i = 0; i < inv->nr_rdma; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", inv->rdma[i].name);
	report(ctx, CHECK_PASS, NULL, "%zu RDMA device%s: %s", inv->nr_rdma,
	       inv->nr_rdma == 1 ? "" : "s", names.buf);
	strbuf_release(&names);
}

static enum inv_module_state module_state(const struct inventory *inv, const char *name)
{
	for (size_t i = 0; i < inv->sys.nr_modules; i++)
		if (streq(inv->sys.modules[i].name, name))
			return inv->sys.modules[i].state;
	return MODULE_UNKNOWN;
}

void check_rdma_modules(struct check_ctx *ctx)
{
	static const struct {
		const char *name;
		enum check_status missing;
	} mods[] = { { "mlx5_ib", CHECK_FAIL },
		     { "ib_uverbs", CHECK_FAIL },
		     { "rdma_ucm", CHECK_WARN } };
	size_t ok = 0, unknown = 0;

	for (size_t i = 0; i < ARRAY_SIZE(mods); i++) {
		enum inv_module_state st = module_state(ctx->inv, mods[i].name);
		if (st == MODULE_UNKNOWN) {
			unknown++;
		} else if (st == MODULE_ABSENT) {
			char *fix = xasprintf("sudo modprobe %s && echo %s | sudo tee "
					      "/etc/modules-load.d/%s.conf",
					      mods[i].name, mods[i].name, mods[i].name);
			report(ctx, mods[i].missing, fix, "kernel module %s is not loaded%s",
			       mods[i].name,
			       mods[i].missing == CHECK_FAIL
				       ? ": no RDMA devices reach user space"
				       : ": rdma_cm users (perftest -R, UCX) fail");
			free(fix);
		} else {
			ok++;
		}
	}
	if (unknown == ARRAY_SIZE(mods))
		report(ctx, CHECK_SKIP, NULL,
		       "the loaded modules are unknown (/proc/modules unreadable)");
	else if (ok == ARRAY_SIZE(mods))
		report(ctx, CHECK_PASS, NULL, "mlx5_ib, ib_uverbs and rdma_ucm are loaded");
}

void check_fabric_active(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	struct strbuf up = STRBUF_INIT, states = STRBUF_INIT;
	size_t n = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			strbuf_addf(&states, "%s%s/%u %s", states.len ? ", " : "", d->name, p->num,
				    p->state_name ? p->state_name : "?");
			if (!port_is_fabric(inv, d, p))
				continue;
			strbuf_addf(&up, "%s%s/%u", n++ ? ", " : "", d->name, p->num);
		}
	}
	if (!inv->nr_rdma)
		report(ctx, CHECK_SKIP, NULL, "no RDMA devices");
	else if (!n)
		report(ctx, CHECK_FAIL,
		       "plug the QSFP cable into the same port on both nodes, then check the link "
		       "with 'sparkctl topo' (ACTIVE and LINK up)",
		       "no RDMA port is ACTIVE with carrier (%s)", states.buf);
	else
		report(ctx, CHECK_PASS, NULL, "%zu fabric port%s ACTIVE with carrier: %s", n,
		       n == 1 ? "" : "s", up.buf);
	strbuf_release(&up);
	strbuf_release(&states);
}

void check_fabric_twins(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t pairs = 0, reported = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i], *t = rdma_twin(inv, d);
		if (!t)
			continue;
		pairs++;
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k], *tp = twin_port(t, p);
			bool up = port_is_fabric(inv, d, p);
			bool tup = tp && port_is_fabric(inv, t, tp);
			char label[16];
			if (up && !tup) {
				const struct inv_netdev *tn =
					tp ? rdma_port_netdev(inv, t, tp) : NULL;
				struct strbuf fix = STRBUF_INIT;
				strbuf_addf(&fix,
					    "sudo ip link set %s up; give it its own subnet: "
					    "sparkctl netplan --plan pair --node I --write",
					    tn ? tn->name : t->name);
				report(ctx, CHECK_FAIL, fix.buf,
				       "%s is ACTIVE but its twin %s (the other PCIe half of port "
				       "%s) is "
				       "%s: the port runs at half bandwidth",
				       d->name, t->name, rdma_twin_label(inv, d, label),
				       tp && tp->state == 4   ? "without carrier"
				       : tp && tp->state_name ? tp->state_name
							      : "down");
				strbuf_release(&fix);
				reported++;
			} else if (up && tup && strcmp(d->name, t->name) < 0) {
				report(ctx, CHECK_PASS, NULL, "%s and %s (port %s) are both ACTIVE",
				       d->name, t->name, rdma_twin_label(inv, d, label));
				reported++;
			}
		}
	}
	if (!pairs)
		report(ctx, CHECK_SKIP, NULL,
		       "no ports split into twins (not a DGX Spark ConnectX-7)");
	else if (!reported)
		report(ctx, CHECK_SKIP, NULL, "no cabled port");
}

void check_fabric_subnets(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t checked = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i], *t = rdma_twin(inv, d);
		if (!t || strcmp(d->name, t->name) > 0)
			continue;
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k], *tp = twin_port(t, p);
			const struct inv_netdev *a = active_roce_netdev(inv, d, p);
			const struct inv_netdev *b = tp ? active_roce_netdev(inv, t, tp) : NULL;
			struct cidr ca, cb;
			char ta[19], tb[19];
			if (!a || !b || !netdev_ipv4(a, &ca) || !netdev_ipv4(b, &cb))
				continue;
			checked++;
			cidr_format(&ca, ta);
			cidr_format(&cb, tb);
			if (cidr_overlaps(&ca, &cb)) {
				struct finding *f = report(ctx, CHECK_FAIL,
							   "give each twin its own subnet: "
							   "sparkctl netplan --plan pair "
							   "--node I --write",
							   "twins %s (%s) and %s (%s) share a "
							   "subnet: traffic for one half "
							   "leaves by the other",
							   a->name, ta, b->name, tb);
				finding_evidence(f, "%s=%s", a->name, ta);
				finding_evidence(f, "%s=%s", b->name, tb);
			} else {
				report(ctx, CHECK_PASS, NULL,
				       "twins %s (%s) and %s (%s) are in different "
				       "subnets",
				       a->name, ta, b->name, tb);
			}
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no pair of ACTIVE twins with IPv4 addresses");
}

void check_fabric_ipv4(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t checked = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_netdev *nd = active_roce_netdev(inv, d, &d->ports[k]);
			struct cidr a;
			if (!nd || nd->carrier != TRI_YES)
				continue;
			checked++;
			if (netdev_ipv4(nd, &a)) {
				char t[19];
				cidr_format(&a, t);
				report(ctx, CHECK_PASS, NULL, "%s (%s) has %s", nd->name, d->name,
				       t);
			} else {
				report(ctx, CHECK_FAIL,
				       "sparkctl netplan --plan pair --node I --write   # or: sudo "
				       "ip addr "
				       "add ADDR/24 dev IF",
				       "%s (%s) is ACTIVE but has no IPv4 address: it has no RoCE "
				       "v2 GID "
				       "to connect with",
				       nd->name, d->name);
			}
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no ACTIVE RoCE port");
}

void check_fabric_gid(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	struct nccl_gid_params defaults;
	size_t checked = 0;

	nccl_gid_params_default(&defaults);
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			const struct inv_netdev *nd = active_roce_netdev(inv, d, p);
			struct cidr a;
			char want[16], v4[16], list[160] = "";
			size_t v2 = 0;
			if (!nd || !netdev_ipv4(nd, &a))
				continue;
			checked++;
			ipv4_format(a.addr, want);
			for (size_t g = 0; g < p->nr_gids; g++) {
				if (gid_type_version(p->gids[g].type) == 2 &&
				    gid_ipv4(p->gids[g].raw, v4)) {
					size_t len = strlen(list);
					snprintf(list + len, sizeof(list) - len, "%s%u (%s)",
						 v2 ? ", " : "", p->gids[g].index, v4);
					v2++;
				}
			}
			int pick = nccl_gid_pick(p, &defaults);
			const struct inv_gid *g = pick >= 0 ? port_gid(p, (unsigned)pick) : NULL;
			bool good = g && gid_type_version(g->type) == 2 && gid_ipv4(g->raw, v4) &&
				    streq(v4, want);
			if (!good) {
				report(ctx, CHECK_FAIL,
				       "check the address and RoCE mode: sudo ip addr show dev IF; "
				       "cat /sys/class/infiniband/DEV/ports/1/gid_attrs/types/*",
				       "%s/%u: NCCL would pick GID %d, which is not the IPv4 RoCE "
				       "v2 GID of "
				       "%s (%s)",
				       d->name, p->num, pick, nd->name, want);
			} else if (v2 > 1) {
				report(ctx, CHECK_WARN,
				       "remove the extra address, or restrict NCCL: "
				       "NCCL_IB_ADDR_RANGE=<fabric CIDR> (sparkctl env sets it)",
				       "%s/%u has %zu IPv4 RoCE v2 GIDs (%s): NCCL takes the "
				       "lowest index",
				       d->name, p->num, v2, list);
			} else {
				report(ctx, CHECK_PASS, NULL,
				       "%s/%u: NCCL picks GID %d (RoCE v2, %s)", d->name, p->num,
				       pick, want);
			}
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no ACTIVE RoCE port with an IPv4 address");
}

void check_fabric_link_layer(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t eth = 0, ib = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++)
		for (size_t k = 0; k < inv->rdma[i].nr_ports; k++)
			if (port_is_fabric(inv, &inv->rdma[i], &inv->rdma[i].ports[k])) {
				if (port_is_infiniband(&inv->rdma[i].ports[k]))
					ib++;
				else
					eth++;
			}
	if (!eth && !ib)
		report(ctx, CHECK_SKIP, NULL, "no fabric port");
	else if (eth && ib)
		report(ctx, CHECK_FAIL, "use one kind of rail per job: list them in NCCL_IB_HCA",
		       "%zu InfiniBand and %zu Ethernet (RoCE) fabric ports: NCCL cannot mix them",
		       ib, eth);
	else if (ib && is_spark(inv))
		report(ctx, CHECK_WARN, "sudo mlxconfig -d DEV set LINK_TYPE_P1=2   # Ethernet",
		       "a DGX Spark ConnectX-7 port runs InfiniBand; Spark fabrics are RoCE "
		       "(Ethernet)");
	else
		report(ctx, CHECK_PASS, NULL, "all %zu fabric ports are %s", eth + ib,
		       ib ? "InfiniBand" : "Ethernet (RoCE)");
}

void check_net_mtu(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t checked = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i], *t = rdma_twin(inv, d);
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			const struct inv_netdev *nd = active_roce_netdev(inv, d, p);
			if (!nd || nd->mtu < 0)
				continue;
			checked++;
			const struct inv_port *tp = twin_port(t, p);
			const struct inv_netdev *tn = tp ? active_roce_netdev(inv, t, tp) : NULL;
			if (tn && tn->mtu >= 0 && tn->mtu != nd->mtu &&
			    strcmp(d->name, t->name) < 0) {
				report(ctx, CHECK_FAIL,
				       "set one MTU on both twins: sparkctl netplan ... --write "
				       "(mtu 9000)",
				       "twins %s (MTU %" PRId64 ") and %s (MTU %" PRId64 ") differ",
				       nd->name, nd->mtu, tn->name, tn->mtu);
			}
			int64_t roce = roce_mtu_for_netdev_mtu(nd->mtu);
			if (nd->mtu < 9000) {
				struct strbuf fix = STRBUF_INIT;
				strbuf_addf(&fix,
					    "sudo ip link set dev %s mtu 9000, and persist it: "
					    "sparkctl "
					    "netplan ... --write",
					    nd->name);
				report(ctx, CHECK_WARN, fix.buf,
				       "%s has MTU %" PRId64 " (RoCE MTU %" PRId64
				       "): 9000 gives 4096-byte RoCE packets and more bandwidth",
				       nd->name, nd->mtu, roce);
				strbuf_release(&fix);
			} else {
				report(ctx, CHECK_PASS, NULL,
				       "%s has MTU %" PRId64 " (RoCE MTU %" PRId64 ")", nd->name,
				       nd->mtu, roce);
			}
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no ACTIVE RoCE port");
}

void check_link_speed(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	bool spark = is_spark(inv);
	size_t checked = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i], *t = rdma_twin(inv, d);
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k], *tp = twin_port(t, p);
			int64_t rate = port_rate_mbps(p);
			if (!port_is_fabric(inv, d, p) || rate < 0)
				continue;
			checked++;
			const struct inv_netdev *nd =
				port_is_infiniband(p) ? NULL : rdma_port_netdev(inv, d, p);
			int64_t trate = tp && port_is_fabric(inv, t, tp) ? port_rate_mbps(tp) : -1;
			bool bad = false;
			if (spark && !port_is_infiniband(p) && rate < 200000) {
				report(ctx, CHECK_FAIL,
				       "a switch may have negotiated 100G: set its port to 200G; "
				       "use an "
				       "approved QSFP cable",
				       "%s/%u runs at %" PRId64
				       " Gb/s; a DGX Spark port runs at 200",
				       d->name, p->num, rate / 1000);
				bad = true;
			} else if (trate > rate) {
				report(ctx, CHECK_WARN,
				       "reseat the cable; check both ends' settings",
				       "%s/%u runs at %" PRId64 " Gb/s, its twin %s at %" PRId64,
				       d->name, p->num, rate / 1000, t->name, trate / 1000);
				bad = true;
			}
			if (nd && nd->speed_mbps >= 0 && nd->speed_mbps < rate) {
				report(ctx, CHECK_WARN,
				       "check autonegotiation: sudo ethtool IF; set the switch "
				       "port's "
				       "speed",
				       "%s reports %" PRId64 " Mb/s while the port rate is %" PRId64
				       " Gb/s",
				       nd->name, nd->speed_mbps, rate / 1000);
				bad = true;
			}
			if (!bad)
				report(ctx, CHECK_PASS, NULL, "%s/%u runs at %" PRId64 " Gb/s",
				       d->name, p->num, rate / 1000);
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no fabric port with a known rate");
}

static int64_t counter(const struct inv_port *p, const char *name)
{
	for (size_t i = 0; i < p->nr_counters; i++)
		if (streq(p->counters[i].name, name))
			return p->counters[i].value;
	return -1;
}

void check_link_errors(struct check_ctx *ctx)
{
	static const char *const names[] = { "link_downed", "symbol_error", "link_error_recovery" };
	const struct inventory *inv = ctx->inv;
	size_t checked = 0, clean = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			struct strbuf bad = STRBUF_INIT;
			bool any = false;
			for (size_t n = 0; n < ARRAY_SIZE(names); n++) {
				int64_t v = counter(p, names[n]);
				any |= v >= 0;
				if (v > 0)
					strbuf_addf(&bad, "%s%s %" PRId64, bad.len ? ", " : "",
						    names[n], v);
			}
			if (any)
				checked++;
			if (bad.len)
				report(ctx, CHECK_WARN,
				       "reseat or replace the cable; watch the counters with "
				       "'sparkctl top'",
				       "%s/%u has counted errors: %s", d->name, p->num, bad.buf);
			else if (any)
				clean++;
			strbuf_release(&bad);
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no port counters");
	else if (clean)
		report(ctx, CHECK_PASS, NULL, "%zu port%s without link-down or symbol errors",
		       clean, clean == 1 ? "" : "s");
}

/* The PCI functions of the RDMA devices. */
static bool is_rdma_function(const struct inventory *inv, const char *addr)
{
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (streq(inv->rdma[i].pci_address, addr))
			return true;
	return false;
}

void check_pci_link(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t checked = 0;

	for (size_t i = 0; i < inv->nr_pci; i++) {
		const struct inv_pci *p = &inv->pci[i];
		int degraded = pci_link_degraded(p);
		if (!is_rdma_function(inv, p->address) || degraded == TRI_UNKNOWN)
			continue;
		checked++;
		if (degraded == TRI_YES) {
			struct finding *f =
				report(ctx, CHECK_FAIL,
				       "update the firmware (sudo fwupdmgr refresh && sudo "
				       "fwupdmgr update), "
				       "reboot; reseat the card where it can be",
				       "%s trained at %s x%" PRId64 " but can do %s x%" PRId64
				       ": this PCIe link caps its port",
				       p->address, p->current_link_speed, p->current_link_width,
				       p->max_link_speed, p->max_link_width);
			finding_evidence(f, "current_link_width=%" PRId64, p->current_link_width);
		} else {
			report(ctx, CHECK_PASS, NULL, "%s runs at %s x%" PRId64, p->address,
			       p->current_link_speed, p->current_link_width);
		}
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no PCIe link information for the RDMA functions");
}

void check_pci_aer(struct check_ctx *ctx)
{
	const struct inventory *inv = ctx->inv;
	size_t checked = 0, clean = 0;

	for (size_t i = 0; i < inv->nr_pci; i++) {
		const struct inv_pci *p = &inv->pci[i];
		if (!is_rdma_function(inv, p->address) || (p->aer_fatal < 0 && p->aer_nonfatal < 0))
			continue;
		checked++;
		if (p->aer_fatal > 0)
			report(ctx, CHECK_FAIL,
			       "check 'sudo dmesg | grep -i aer'; update the firmware; a recurring "
			       "fatal error needs service",
			       "%s has %" PRId64 " fatal PCIe AER error%s since boot", p->address,
			       p->aer_fatal, p->aer_fatal == 1 ? "" : "s");
		else if (p->aer_nonfatal > 0)
			report(ctx, CHECK_WARN, "check 'sudo dmesg | grep -i aer'",
			       "%s has %" PRId64 " non-fatal PCIe AER error%s since boot",
			       p->address, p->aer_nonfatal, p->aer_nonfatal == 1 ? "" : "s");
		else
			clean++;
	}
	if (!checked)
		report(ctx, CHECK_SKIP, NULL, "no AER counters for the RDMA functions");
	else if (clean)
		report(ctx, CHECK_PASS, NULL, "%zu RDMA PCIe function%s without AER errors", clean,
		       clean == 1 ? "" : "s");
}
