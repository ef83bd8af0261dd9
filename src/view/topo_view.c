#include "sparkctl.h"

#include <sys/socket.h>

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"
#include "nv/nccl.h"
#include "view/table.h"
#include "view/topo_view.h"

static void render_header(const struct inventory *inv, struct strbuf *out)
{
	const struct inv_system *s = &inv->sys;

	strbuf_addstr(out, s->hostname ? s->hostname : "(unknown host)");
	if (s->os_pretty_name)
		strbuf_addf(out, ", %s", s->os_pretty_name);
	if (s->arch)
		strbuf_addf(out, ", %s", s->arch);
	if (inv->root)
		strbuf_addf(out, "  [from %s]", inv->root);
	strbuf_addch(out, '\n');
}

static void rate_text(int64_t mbps, char buf[24])
{
	if (mbps < 0)
		snprintf(buf, 24, "-");
	else if (mbps % 1000 == 0)
		snprintf(buf, 24, "%" PRId64 "G", mbps / 1000);
	else
		snprintf(buf, 24, "%" PRId64 ".%" PRId64 "G", mbps / 1000, mbps % 1000 / 100);
}

static void ipv4_text(const struct inv_netdev *nd, struct strbuf *sb)
{
	size_t n = 0;
	const struct inv_addr *first = NULL;

	for (size_t i = 0; nd && i < nd->nr_addrs; i++) {
		if (nd->addrs[i].family != AF_INET)
			continue;
		if (!first)
			first = &nd->addrs[i];
		n++;
	}
	if (!first) {
		strbuf_addch(sb, '-');
		return;
	}
	strbuf_addf(sb, "%s/%u", first->address, first->prefix_len);
	if (n > 1)
		strbuf_addf(sb, "+%zu", n - 1);
}

/*
 * The GID NCCL picks, for fabric ports only; '!' marks a pick that is not
 * an IPv4 RoCE v2 GID (NCCL would try to use it and fail).
 */
static void gid_text(const struct inventory *inv, const struct inv_rdma_dev *d,
		     const struct inv_port *p, bool *flagged, char buf[24])
{
	struct nccl_gid_params params;
	int pick;
	char v4[16];

	snprintf(buf, 24, "-");
	if (!port_is_fabric(inv, d, p))
		return;
	nccl_gid_params_default(&params);
	pick = nccl_gid_pick(p, &params);
	if (pick < 0)
		return;
	const struct inv_gid *g = port_gid(p, (unsigned)pick);
	bool good = port_is_infiniband(p) ||
		    (g && gid_ipv4(g->raw, v4) && gid_type_version(g->type) == 2);
	snprintf(buf, 24, "%d%s", pick, good ? "" : "!");
	if (!good)
		*flagged = true;
}

static int cmp_pci(const void *a, const void *b)
{
	const struct inv_rdma_dev *x = *(const struct inv_rdma_dev *const *)a;
	const struct inv_rdma_dev *y = *(const struct inv_rdma_dev *const *)b;
	int c = strcmp(x->pci_address ? x->pci_address : "~",
		       y->pci_address ? y->pci_address : "~");
	return c ? c : strcmp(x->name, y->name);
}

/* Devices in PCI order, each twin right after its partner. */
static const struct inv_rdma_dev **display_order(const struct inventory *inv)
{
	const struct inv_rdma_dev **sorted = xcalloc(inv->nr_rdma + 1, sizeof(*sorted));
	const struct inv_rdma_dev **order = xcalloc(inv->nr_rdma + 1, sizeof(*order));
	size_t n = 0;

	for (size_t i = 0; i < inv->nr_rdma; i++)
		sorted[i] = &inv->rdma[i];
	qsort(sorted, inv->nr_rdma, sizeof(*sorted), cmp_pci);
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		bool placed = false;
		for (size_t k = 0; k < n && !placed; k++)
			placed = order[k] == sorted[i];
		if (placed)
			continue;
		order[n++] = sorted[i];
		const struct inv_rdma_dev *t = rdma_twin(inv, sorted[i]);
		if (t)
			order[n++] = t;
	}
	free(sorted);
	return order;
}

static void render_ports(const struct inventory *inv, size_t width, struct strbuf *out)
{
	static const char *const headers[] = { "PORT", "STATE", ">RATE", "NETDEV", "LINK",
					       ">MTU", "IPV4",	">GID",	 "TWIN" };
	const struct inv_rdma_dev **order;
	struct table t;
	struct strbuf cell = STRBUF_INIT;
	bool flagged = false;

	if (!inv->nr_rdma) {
		strbuf_addstr(out, "RDMA: no devices (sys/class/infiniband is empty)\n");
		return;
	}
	table_init(&t, ARRAY_SIZE(headers), headers);
	order = display_order(inv);
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = order[i];
		char label[16], buf[24];
		const char *twin = rdma_twin_label(inv, d, label);
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			const struct inv_netdev *nd = rdma_port_netdev(inv, d, p);
			table_cellf(&t, "%s/%u", d->name, p->num);
			table_cell(&t, p->state_name);
			rate_text(port_rate_mbps(p), buf);
			table_cell(&t, buf);
			table_cell(&t, rdma_port_netdev_name(d, p));
			table_cell(&t, !nd || nd->carrier < 0 ? NULL : nd->carrier ? "up" : "down");
			if (nd && nd->mtu >= 0)
				table_cellf(&t, "%" PRId64, nd->mtu);
			else
				table_cell(&t, NULL);
			strbuf_reset(&cell);
			ipv4_text(nd, &cell);
			table_cell(&t, cell.buf);
			gid_text(inv, d, p, &flagged, buf);
			table_cell(&t, buf);
			table_cell(&t, twin);
		}
	}
	table_render(&t, width, out);
	table_release(&t);

	/* Name the twin pairs once, under the table. */
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = order[i], *tw = rdma_twin(inv, d);
		char label[16];
		if (tw && cmp_pci(&d, &tw) < 0)
			strbuf_addf(out, "twins %s: %s + %s\n", rdma_twin_label(inv, d, label),
				    d->name, tw->name);
	}
	if (flagged)
		strbuf_addstr(out,
			      "! NCCL would pick a GID that is not an IPv4 RoCE v2 GID: the port "
			      "needs an IPv4 address\n");
	free(order);
	strbuf_release(&cell);
}

static const char *tri_text(int t)
{
	return t < 0 ? "?" : t ? "yes" : "no";
}

static void render_gpus(const struct inventory *inv, size_t width, struct strbuf *out)
{
	static const char *const headers[] = { ">GPU",	    "NAME",    "MEMORY", "CC",
					       "GPUDIRECT", "DMA-BUF", "PCI" };
	const struct inv_gpu_info *gi = &inv->gpu;
	struct table t;

	if (!gi->nr_gpus) {
		if (gi->nvml.available == TRI_NO)
			strbuf_addf(out, "GPU: none found (NVML: %s)\n",
				    gi->nvml.reason ? gi->nvml.reason : "not available");
		else if (gi->nvml.available < 0)
			strbuf_addstr(out, "GPU: unknown (not probed)\n");
		else
			strbuf_addstr(out, "GPU: none found\n");
		return;
	}
	table_init(&t, ARRAY_SIZE(headers), headers);
	for (size_t i = 0; i < gi->nr_gpus; i++) {
		const struct inv_gpu *g = &gi->gpus[i];
		table_cellf(&t, "%u", g->index);
		table_cell(&t, g->name);
		if (g->unified_memory == TRI_YES)
			table_cell(&t, "unified");
		else if (g->memory_total_bytes >= 0)
			table_cellf(&t, "%" PRId64 " GiB",
				    (g->memory_total_bytes + (1 << 29)) >> 30);
		else
			table_cell(&t, NULL);
		if (g->cc_major >= 0)
			table_cellf(&t, "%d.%d", g->cc_major, g->cc_minor);
		else
			table_cell(&t, NULL);
		table_cell(&t, tri_text(g->gpudirect_rdma));
		table_cell(&t, tri_text(g->dma_buf));
		table_cell(&t, g->pci_bus_id);
	}
	table_render(&t, width, out);
	table_release(&t);
}

static void render_facts(const struct inventory *inv, struct strbuf *out)
{
	const struct inv_system *s = &inv->sys;
	const struct inv_gpu_info *gi = &inv->gpu;

	if (s->nvidia_driver)
		strbuf_addf(out, "driver %s%s", s->nvidia_driver,
			    s->nvidia_open_module == TRI_YES ? " (open)" : "");
	else if (gi->driver_version)
		strbuf_addf(out, "driver %s", gi->driver_version);
	else
		strbuf_addstr(out, "driver none");
	if (gi->cuda_driver_version > 0)
		strbuf_addf(out, ", CUDA %" PRId64 ".%" PRId64, gi->cuda_driver_version / 1000,
			    gi->cuda_driver_version % 1000 / 10);
	if (s->nccl.available == TRI_YES && s->nccl.version)
		strbuf_addf(out, ", NCCL %s", s->nccl.version);
	else if (s->nccl.available == TRI_NO)
		strbuf_addstr(out, ", NCCL not found");
	strbuf_addf(out, ", kernel %s\n", s->kernel ? s->kernel : "unknown");
}

void topo_render(const struct inventory *inv, size_t width, struct strbuf *out)
{
	render_header(inv, out);
	strbuf_addch(out, '\n');
	render_ports(inv, width, out);
	strbuf_addch(out, '\n');
	render_gpus(inv, width, out);
	strbuf_addch(out, '\n');
	render_facts(inv, out);
	if (inv->nr_problems)
		strbuf_addf(out, "note: %zu value%s could not be read (see 'problems' in --json)\n",
			    inv->nr_problems, inv->nr_problems == 1 ? "" : "s");
}
