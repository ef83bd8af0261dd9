/*
 * Checks across the nodes of a cluster: reachability, names, the fabric
 * plan, HCA pairing, the links themselves (don't-fragment pings run by the
 * doctor command), MTU at both ends, versions and clocks.
 */
#include "sparkctl.h"

#include <strings.h>

#include "check/check.h"
#include "cluster/cluster_file.h"
#include "config/fabric.h"
#include "config/nccl_env.h"
#include "lib/xalloc.h"

static const char *node_name(const struct doctor_node *n)
{
	return n->inspected && n->inv.sys.hostname ? n->inv.sys.hostname : n->host;
}

static size_t inspected(const struct doctor_cluster *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nr_nodes; i++)
		n += c->nodes[i].inspected;
	return n;
}

void cluster_fabric_links(const struct doctor_cluster *c, struct fabric_link **ret, size_t *nr)
{
	struct fabric *f = xcalloc(c->nr_nodes + 1, sizeof(*f));

	*ret = NULL;
	*nr = 0;
	for (size_t i = 0; i < c->nr_nodes; i++)
		if (c->nodes[i].inspected)
			fabric_build(&c->nodes[i].inv, true, &f[i]);
	for (size_t a = 0; a < c->nr_nodes; a++) {
		for (size_t b = a + 1; b < c->nr_nodes; b++) {
			for (size_t r = 0; r < f[a].nr_rails; r++) {
				for (size_t s = 0; s < f[b].nr_rails; s++) {
					const struct fabric_rail *x = &f[a].rails[r],
								 *y = &f[b].rails[s];
					if (!x->netdev || !y->netdev ||
					    !cidr_overlaps(&x->ipv4, &y->ipv4))
						continue;
					struct fabric_link *l = ARRAY_PUSH(*ret, *nr);
					l->a = a;
					l->b = b;
					l->a_if = x->netdev->name;
					l->b_if = y->netdev->name;
					ipv4_format(x->ipv4.addr, l->a_addr);
					ipv4_format(y->ipv4.addr, l->b_addr);
					l->a_mtu = x->netdev->mtu;
					l->b_mtu = y->netdev->mtu;
				}
			}
		}
	}
	for (size_t i = 0; i < c->nr_nodes; i++)
		fabric_release(&f[i]);
	free(f);
}

void check_cluster_ssh(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		if (n->inspected)
			report(ctx, CHECK_PASS, NULL, "%s answered", n->host);
		else
			report(ctx, CHECK_FAIL,
			       "check 'ssh -o BatchMode=yes HOST true' (keys: ssh-copy-id; host "
			       "keys: "
			       "ssh-keyscan), and that sparkctl is installed there",
			       "%s could not be inspected: %s", n->host, n->error ? n->error : "?");
	}
}

void check_cluster_hostnames(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t dups = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		for (size_t k = i + 1; k < c->nr_nodes; k++) {
			const struct doctor_node *a = &c->nodes[i], *b = &c->nodes[k];
			if (!a->inspected || !b->inspected ||
			    !streq(a->inv.sys.hostname, b->inv.sys.hostname))
				continue;
			report(ctx, CHECK_FAIL,
			       "give every node its own name: sudo hostnamectl hostname NAME",
			       "%s and %s are both named %s", a->host, b->host,
			       a->inv.sys.hostname ? a->inv.sys.hostname : "(unknown)");
			dups++;
		}
	}
	if (inspected(c) < 2)
		report(ctx, CHECK_SKIP, NULL, "fewer than two nodes inspected");
	else if (!dups)
		report(ctx, CHECK_PASS, NULL, "%zu distinct host names", inspected(c));
}

void check_cluster_machine_id(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t known = 0, dups = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *a = &c->nodes[i];
		if (!a->inspected || !a->inv.sys.machine_id)
			continue;
		known++;
		for (size_t k = i + 1; k < c->nr_nodes; k++) {
			const struct doctor_node *b = &c->nodes[k];
			if (!b->inspected || !b->inv.sys.machine_id ||
			    strcasecmp(a->inv.sys.machine_id, b->inv.sys.machine_id) != 0)
				continue;
			struct finding *f =
				report(ctx, CHECK_FAIL,
				       "on one of them (then reboot): sudo rm -f /etc/machine-id "
				       "/var/lib/dbus/machine-id && sudo systemd-machine-id-setup",
				       "%s and %s have the same machine-id %s", a->host, b->host,
				       a->inv.sys.machine_id);
			finding_evidence(f, "machine_id=%s", a->inv.sys.machine_id);
			dups++;
		}
	}
	if (known < 2)
		report(ctx, CHECK_SKIP, NULL, "fewer than two machine-ids known");
	else if (!dups)
		report(ctx, CHECK_PASS, NULL, "%zu distinct machine-ids", known);
}

/* The host part of a node as given ("user@host"). */
static const char *host_part(const char *host)
{
	const char *at = strchr(host, '@');

	return at ? at + 1 : host;
}

void check_cluster_file(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct cluster_file *cf = c->cluster_file;
	size_t problems = 0;

	if (!cf) {
		report(ctx, CHECK_SKIP, NULL, "no cluster file in effect");
		return;
	}
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		const struct cluster_node *entry = cluster_file_find(cf, host_part(n->host));
		if (!entry) {
			report(ctx, CHECK_WARN,
			       "sparkctl join HOST... (with every node), or sparkctl cluster add "
			       "NAME",
			       "%s is not in the cluster file", n->host);
			problems++;
			continue;
		}
		if (!n->inspected)
			continue;
		if (entry->id && n->inv.sys.node_id && !streq(entry->id, n->inv.sys.node_id)) {
			report(ctx, CHECK_WARN,
			       "if the node was replaced or reinstalled: sparkctl join again, or "
			       "sparkctl cluster remove NAME && sparkctl cluster add NAME ...",
			       "%s: the cluster file has node id %s, the node has %s", n->host,
			       entry->id, n->inv.sys.node_id);
			problems++;
		}
		struct strvec fabric = STRVEC_INIT;
		inventory_fabric_ipv4(&n->inv, &fabric);
		strvec_sort(&fabric);
		struct strvec listed = STRVEC_INIT;
		for (size_t k = 0; k < entry->fabric_addresses.nr; k++)
			strvec_push(&listed, entry->fabric_addresses.v[k]);
		strvec_sort(&listed);
		bool same = fabric.nr == listed.nr;
		for (size_t k = 0; same && k < fabric.nr; k++)
			same = streq(fabric.v[k], listed.v[k]);
		if (!same) {
			struct strbuf have = STRBUF_INIT, file = STRBUF_INIT;
			for (size_t k = 0; k < fabric.nr; k++)
				strbuf_addf(&have, "%s%s", k ? "," : "", fabric.v[k]);
			for (size_t k = 0; k < listed.nr; k++)
				strbuf_addf(&file, "%s%s", k ? "," : "", listed.v[k]);
			report(ctx, CHECK_WARN,
			       "sparkctl join again (it rewrites the node's entry), or sparkctl "
			       "cluster add NAME --fabric ADDR,...",
			       "%s: the cluster file lists fabric addresses %s, the node has %s",
			       n->host, file.len ? file.buf : "none", have.len ? have.buf : "none");
			strbuf_release(&have);
			strbuf_release(&file);
			problems++;
		}
		strvec_clear(&fabric);
		strvec_clear(&listed);
	}
	if (!problems)
		report(ctx, CHECK_PASS, NULL, "the %zu nodes match the cluster file", c->nr_nodes);
}

void check_cluster_ssh_mesh(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t n = c->nr_nodes, ok = 0, bad = 0;
	struct strbuf pairs = STRBUF_INIT, fix = STRBUF_INIT;

	if (!c->mesh) {
		report(ctx, CHECK_SKIP, NULL,
		       "not probed: doctor tries every pair where the nodes come from the "
		       "cluster file (no -H)");
		return;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++) {
			int r = c->mesh[i * n + k];
			if (i == k || r < 0)
				continue;
			if (r > 0) {
				ok++;
				continue;
			}
			strbuf_addf(&pairs, "%s%s -> %s", bad ? ", " : "", c->nodes[i].host,
				    c->nodes[k].host);
			bad++;
		}
	if (bad) {
		strbuf_addstr(&fix, "sparkctl join");
		for (size_t i = 0; i < n; i++)
			strbuf_addf(&fix, " %s", c->nodes[i].host);
		report(ctx, CHECK_FAIL, fix.buf, "no key login (ssh -o BatchMode=yes) for %s",
		       pairs.buf);
	} else if (!ok) {
		report(ctx, CHECK_SKIP, NULL, "no pair of inspected nodes to try");
	} else {
		report(ctx, CHECK_PASS, NULL, "%zu pairs log in with keys", ok);
	}
	strbuf_release(&pairs);
	strbuf_release(&fix);
}

void check_cluster_plan(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct doctor_node *first = NULL;
	struct fabric f0 = { 0 };
	size_t problems = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		struct fabric f;
		if (!n->inspected)
			continue;
		fabric_build(&n->inv, false, &f);
		if (!first) {
			first = n;
			f0 = f;
			continue;
		}
		if (f.nr_ports != f0.nr_ports || f.nr_rails != f0.nr_rails ||
		    f.infiniband != f0.infiniband) {
			report(ctx, CHECK_FAIL, "cable the same ports on every node",
			       "%s has %zu cabled port%s (%zu rails, %s) but %s has %zu (%zu "
			       "rails, %s)",
			       node_name(first), f0.nr_ports, f0.nr_ports == 1 ? "" : "s",
			       f0.nr_rails, f0.infiniband ? "InfiniBand" : "RoCE", node_name(n),
			       f.nr_ports, f.nr_rails, f.infiniband ? "InfiniBand" : "RoCE");
			problems++;
		}
		fabric_release(&f);
	}
	if (inspected(c) < 2)
		report(ctx, CHECK_SKIP, NULL, "fewer than two nodes inspected");
	else if (!problems)
		report(ctx, CHECK_PASS, NULL, "every node has %zu cabled port%s (%zu rails)",
		       f0.nr_ports, f0.nr_ports == 1 ? "" : "s", f0.nr_rails);
	fabric_release(&f0);
}

void check_cluster_hca_pairing(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	struct node_env *envs = xcalloc(c->nr_nodes + 1, sizeof(*envs));
	struct env_options o = { .nodes = (unsigned)inspected(c) };
	struct strbuf err = STRBUF_INIT;
	size_t n = 0;
	bool failed = false;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		if (!c->nodes[i].inspected)
			continue;
		strbuf_reset(&err);
		if (env_generate(&c->nodes[i].inv, &o, &envs[n++], &err) < 0) {
			report(ctx, CHECK_SKIP, NULL, "%s: %s", c->nodes[i].host, err.buf);
			failed = true;
		}
	}
	if (n < 2) {
		report(ctx, CHECK_SKIP, NULL, "fewer than two nodes inspected");
	} else if (!failed) {
		strbuf_reset(&err);
		if (env_check_cluster(envs, n, &err) < 0) {
			for (char *line = err.buf; line && *line;) {
				char *nl = strchr(line, '\n');
				if (nl)
					*nl = '\0';
				report(ctx, CHECK_FAIL,
				       "cable the same ports on every node, address each rail in "
				       "one "
				       "subnet on all nodes: sparkctl netplan",
				       "%s", line);
				line = nl ? nl + 1 : NULL;
			}
		} else {
			report(ctx, CHECK_PASS, NULL,
			       "the HCA lists of %zu nodes pair (%zu HCAs each)", n,
			       envs[0].fabric.nr_rails);
		}
	}
	for (size_t i = 0; i < n; i++)
		node_env_release(&envs[i]);
	free(envs);
	strbuf_release(&err);
}

void check_cluster_ping(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;

	if (!c->probed) {
		report(ctx, CHECK_SKIP, NULL, "no active probes (inventories given with --from)");
		return;
	}
	if (!c->nr_links) {
		report(ctx, CHECK_SKIP, NULL, "no fabric link between the inspected nodes");
		return;
	}
	for (size_t i = 0; i < c->nr_links; i++) {
		const struct link_probe *l = &c->links[i];
		const char *from = node_name(&c->nodes[l->from]), *to = node_name(&c->nodes[l->to]);
		if (l->ok)
			report(ctx, CHECK_PASS, NULL,
			       "%s %s -> %s %s: %" PRId64 "-byte packets pass unfragmented", from,
			       l->from_if, to, l->to_addr, l->mtu);
		else
			report(ctx, CHECK_FAIL,
			       "check the MTU at both ends (ip link show), that the cable joins "
			       "the same "
			       "port on both nodes, and that both ends share the subnet",
			       "%s %s -> %s %s: no reply to a don't-fragment ping of %" PRId64
			       " bytes%s%s",
			       from, l->from_if, to, l->to_addr, l->mtu, l->detail ? ": " : "",
			       l->detail ? l->detail : "");
	}
}

void check_cluster_mtu(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	struct fabric_link *links;
	size_t nr, bad = 0;

	cluster_fabric_links(c, &links, &nr);
	for (size_t i = 0; i < nr; i++) {
		const struct fabric_link *l = &links[i];
		if (l->a_mtu == l->b_mtu || l->a_mtu < 0 || l->b_mtu < 0)
			continue;
		report(ctx, CHECK_FAIL,
		       "set one MTU (9000) at both ends: sparkctl netplan ... --write",
		       "%s %s has MTU %" PRId64 " but %s %s has %" PRId64
		       ": larger packets are dropped (IBV_WC_RETRY_EXC_ERR)",
		       node_name(&c->nodes[l->a]), l->a_if, l->a_mtu, node_name(&c->nodes[l->b]),
		       l->b_if, l->b_mtu);
		bad++;
	}
	if (!nr)
		report(ctx, CHECK_SKIP, NULL, "no fabric link between the inspected nodes");
	else if (!bad)
		report(ctx, CHECK_PASS, NULL, "MTU is equal at both ends of %zu link%s", nr,
		       nr == 1 ? "" : "s");
	free(links);
}

/* Report when the string fact differs between inspected nodes. */
static size_t compare_fact(struct check_ctx *ctx, const char *what, enum check_status status,
			   const char *fix, const char *(*get)(const struct inventory *))
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct doctor_node *first = NULL;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		if (!n->inspected)
			continue;
		if (!first) {
			first = n;
			continue;
		}
		const char *a = get(&first->inv), *b = get(&n->inv);
		if (!streq(a, b)) {
			report(ctx, status, fix, "%s differs: %s on %s, %s on %s", what,
			       a ? a : "none", node_name(first), b ? b : "none", node_name(n));
			return 1;
		}
	}
	return 0;
}

static const char *fact_nccl(const struct inventory *inv)
{
	return inv->sys.nccl.version;
}

static const char *fact_driver(const struct inventory *inv)
{
	return inv->sys.nvidia_driver ? inv->sys.nvidia_driver : inv->gpu.driver_version;
}

static const char *fact_cuda(const struct inventory *inv)
{
	return inv->gpu.cuda.version;
}

static const char *fact_sparkctl(const struct inventory *inv)
{
	return inv->sparkctl_version;
}

void check_cluster_versions(struct check_ctx *ctx)
{
	size_t problems = 0;

	if (inspected(ctx->cluster) < 2) {
		report(ctx, CHECK_SKIP, NULL, "fewer than two nodes inspected");
		return;
	}
	problems += compare_fact(ctx, "the NCCL version", CHECK_FAIL,
				 "install the same NCCL on every node", fact_nccl);
	problems += compare_fact(ctx, "the NVIDIA driver", CHECK_WARN,
				 "install the same driver on every node", fact_driver);
	problems += compare_fact(ctx, "the CUDA driver version", CHECK_WARN,
				 "install the same driver on every node", fact_cuda);
	if (!problems)
		report(ctx, CHECK_PASS, NULL, "NCCL, driver and CUDA versions match");
}

void check_cluster_sparkctl(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	const struct doctor_node *first = NULL;
	struct strbuf fix = STRBUF_INIT, hosts = STRBUF_INIT;
	size_t nodes = 0, differ = 0;

	if (inspected(c) < 2) {
		report(ctx, CHECK_SKIP, NULL, "fewer than two nodes inspected");
		return;
	}
	/* The first node's version is the reference: the others are told to match it. */
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		if (!n->inspected)
			continue;
		nodes++;
		if (!first) {
			first = n;
			continue;
		}
		const char *a = fact_sparkctl(&first->inv), *b = fact_sparkctl(&n->inv);
		if (streq(a, b))
			continue;
		strbuf_addf(&hosts, "%s%s", differ ? "," : "", node_name(n));
		strbuf_reset(&fix);
		strbuf_addf(&fix, "put %s's sparkctl on every node: sparkctl deploy -H %s",
			    node_name(first), hosts.buf);
		report(ctx, CHECK_FAIL, fix.buf, "%s runs sparkctl %s, %s runs %s", node_name(n),
		       b ? b : "of an unknown version", node_name(first),
		       a ? a : "one of an unknown version");
		differ++;
	}
	if (!differ)
		report(ctx, CHECK_PASS, NULL, "every node runs sparkctl %s (%zu nodes)",
		       fact_sparkctl(&first->inv) ? fact_sparkctl(&first->inv) : "(unknown)",
		       nodes);
	strbuf_release(&fix);
	strbuf_release(&hosts);
}

void check_cluster_clock(struct check_ctx *ctx)
{
	const struct doctor_cluster *c = ctx->cluster;
	size_t measured = 0, bad = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct doctor_node *n = &c->nodes[i];
		if (!n->has_clock)
			continue;
		measured++;
		double off = n->clock_offset < 0 ? -n->clock_offset : n->clock_offset;
		if (off > 1.0) {
			report(ctx, CHECK_FAIL,
			       "enable time synchronisation: sudo timedatectl set-ntp true",
			       "%s's clock is %.2f s %s this node's", node_name(n), off,
			       n->clock_offset > 0 ? "ahead of" : "behind");
			bad++;
		}
	}
	if (!measured)
		report(ctx, CHECK_SKIP, NULL, "clocks were not compared (no active probes)");
	else if (!bad)
		report(ctx, CHECK_PASS, NULL, "%zu clock%s within 1 s of this node's", measured,
		       measured == 1 ? "" : "s");
}
