/*
 * link_plan.c - the paths and command lines of 'sparkctl bench link'.
 */
#include "sparkctl.h"

#include "bench/link_plan.h"
#include "config/fabric.h"
#include "inventory/derive.h"
#include "lib/xalloc.h"

/* The group of rail r of f: the index of the first rail on the same physical port, renumbered. */
static size_t rail_group(const struct fabric *f, size_t r, size_t *groups_of_rails)
{
	const struct fabric_rail *x = &f->rails[r];

	for (size_t k = 0; k < r; k++) {
		const struct fabric_rail *y = &f->rails[k];
		if (y->dev == x->dev || (x->twin && y->dev == x->twin))
			return groups_of_rails[k];
	}
	return SIZE_MAX;
}

static double rate_gbps(int64_t mbps)
{
	return mbps > 0 ? (double)mbps / 1000.0 : 0;
}

/* The smaller of two rates, where both are known; else the one that is. */
static double slower(double x, double y)
{
	if (x <= 0)
		return y;
	if (y <= 0)
		return x;
	return x < y ? x : y;
}

static void fill_rdma(struct link_path *p, const struct fabric_rail *x, const struct fabric_rail *y,
		      const struct nccl_gid_params *ga, const struct nccl_gid_params *gb,
		      bool infiniband)
{
	p->a_dev = x->dev->name;
	p->b_dev = y->dev->name;
	p->a_port = x->port->num;
	p->b_port = y->port->num;
	p->a_gid = infiniband ? -1 : nccl_gid_pick(x->port, ga);
	p->b_gid = infiniband ? -1 : nccl_gid_pick(y->port, gb);
	/* A DGX Spark twin is one PCIe half of its port: it carries half the port's rate. */
	p->rdma_line_gbps = slower(rate_gbps(port_rate_mbps(x->port)) / (x->twin ? 2 : 1),
				   rate_gbps(port_rate_mbps(y->port)) / (y->twin ? 2 : 1));
	if (x->twin)
		snprintf(p->label, sizeof(p->label), "%s", x->label);
}

void link_plan_build(const struct inventory *a, const struct inventory *b, struct link_plan *ret)
{
	struct fabric fa, fb;
	struct nccl_gid_params ga, gb;
	size_t *groups;
	bool *taken;

	memset(ret, 0, sizeof(*ret));
	fabric_build(a, true, &fa);
	fabric_build(b, true, &fb);
	nccl_gid_params_from_inventory(&ga, a);
	nccl_gid_params_from_inventory(&gb, b);
	groups = xcalloc(fa.nr_rails + 1, sizeof(*groups));
	taken = xcalloc(fb.nr_rails + 1, sizeof(*taken));
	ret->infiniband = fa.infiniband && fb.infiniband;
	for (size_t r = 0; r < fa.nr_rails; r++) {
		const struct fabric_rail *x = &fa.rails[r];
		const struct fabric_rail *y = NULL;
		size_t k;

		groups[r] = rail_group(&fa, r, groups);
		if (groups[r] == SIZE_MAX)
			groups[r] = ret->nr_groups++;
		for (k = 0; k < fb.nr_rails; k++) {
			const struct fabric_rail *c = &fb.rails[k];
			if (taken[k])
				continue;
			if (ret->infiniband
				    ? !c->netdev
				    : x->netdev && c->netdev && cidr_overlaps(&x->ipv4, &c->ipv4))
				break;
		}
		if (k == fb.nr_rails)
			continue;
		y = &fb.rails[k];
		taken[k] = true;

		struct link_path *p = ARRAY_PUSH(ret->paths, ret->nr_paths);
		memset(p, 0, sizeof(*p));
		p->group = groups[r];
		fill_rdma(p, x, y, &ga, &gb, ret->infiniband);
		p->a_mtu = p->b_mtu = INV_UNKNOWN;
		if (x->netdev && y->netdev) {
			p->a_if = x->netdev->name;
			p->b_if = y->netdev->name;
			ipv4_format(x->ipv4.addr, p->a_addr);
			ipv4_format(y->ipv4.addr, p->b_addr);
			p->a_mtu = x->netdev->mtu;
			p->b_mtu = y->netdev->mtu;
			p->tcp_line_gbps = slower(rate_gbps(x->netdev->speed_mbps),
						  rate_gbps(y->netdev->speed_mbps));
		}
	}
	/* Groups renumbered in the order of the paths that remain. */
	size_t *renumber = xcalloc(ret->nr_groups + 1, sizeof(*renumber));
	size_t next = 0;
	for (size_t i = 0; i < ret->nr_groups; i++)
		renumber[i] = SIZE_MAX;
	for (size_t i = 0; i < ret->nr_paths; i++) {
		struct link_path *p = &ret->paths[i];
		if (renumber[p->group] == SIZE_MAX)
			renumber[p->group] = next++;
		p->group = renumber[p->group];
	}
	ret->nr_groups = next;
	free(renumber);
	free(groups);
	free(taken);
	fabric_release(&fa);
	fabric_release(&fb);
}

void link_plan_release(struct link_plan *p)
{
	free(p->paths);
	memset(p, 0, sizeof(*p));
}

const char *link_tool_program(enum link_tool t)
{
	switch (t) {
	case LINK_TOOL_RDMA_BW:
		return "ib_write_bw";
	case LINK_TOOL_RDMA_LAT:
		return "ib_write_lat";
	case LINK_TOOL_TCP:
		break;
	}
	return "iperf3";
}

const char *link_tool_package(enum link_tool t)
{
	return t == LINK_TOOL_TCP ? "iperf3" : "perftest";
}

/* What both ends of a perftest run give: device, port, GID, TCP port, and the symmetric options. */
static void perftest_words(enum link_tool t, const char *dev, unsigned ib_port, int gid,
			   unsigned port, const struct link_tool_options *o, struct strvec *argv)
{
	strvec_push(argv, link_tool_program(t));
	strvec_pushl(argv, "-d", dev, NULL);
	strvec_pushf(argv, "-i%u", ib_port);
	if (gid >= 0)
		strvec_pushf(argv, "-x%d", gid);
	strvec_pushf(argv, "-p%u", port);
	if (t == LINK_TOOL_RDMA_BW) {
		strvec_pushf(argv, "-q%u", o->qps);
		strvec_pushf(argv, "-s%" PRIu64, o->size);
		strvec_pushf(argv, "-D%u", o->duration_s);
		strvec_push(argv, "--report_gbits");
	}
	/* No warning about CPU frequency scaling in the middle of the output. */
	strvec_push(argv, "-F");
}

void link_tool_server(enum link_tool t, const struct link_path *p, unsigned port,
		      const struct link_tool_options *o, struct strvec *argv)
{
	if (t == LINK_TOOL_TCP) {
		strvec_pushl(argv, "iperf3", "-s", "-1", NULL);
		strvec_pushf(argv, "-p%u", port);
		strvec_pushl(argv, "-B", p->b_addr, NULL);
		return;
	}
	perftest_words(t, p->b_dev, p->b_port, p->b_gid, port, o, argv);
}

void link_tool_client(enum link_tool t, const struct link_path *p, unsigned port,
		      const struct link_tool_options *o, struct strvec *argv)
{
	if (t == LINK_TOOL_TCP) {
		strvec_pushl(argv, "iperf3", "-c", p->b_addr, NULL);
		strvec_pushf(argv, "-p%u", port);
		strvec_pushl(argv, "-B", p->a_addr, NULL);
		strvec_pushf(argv, "-t%u", o->duration_s);
		strvec_pushf(argv, "-P%u", o->streams);
		strvec_push(argv, "-J");
		return;
	}
	perftest_words(t, p->a_dev, p->a_port, p->a_gid, port, o, argv);
	/* Over the path's own subnet; InfiniBand has none, so over b's host name. */
	strvec_push(argv, p->a_if ? p->b_addr : o->b_host);
}
