#include "sparkctl.h"

#include <sys/socket.h>

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/xalloc.h"
#include "nv/nccl.h"
#include "view/emit.h"
#include "view/topo_view.h"

static void emit_header(const struct inventory *inv, struct emitter *e)
{
	const struct inv_system *s = &inv->sys;

	emit_object_open(e, "system");
	emit_value(e, "hostname", jstr(s->hostname), NULL);
	emit_str(e, NULL, "%s", s->hostname ? s->hostname : "(unknown host)");
	if (s->os_pretty_name) {
		emit_object_open(e, "os");
		emit_str(e, "pretty_name", ", %s", s->os_pretty_name);
		emit_close(e);
	}
	if (s->arch)
		emit_str(e, "arch", ", %s", s->arch);
	emit_close(e);
	if (inv->root)
		emit_str(e, "root", "  [from %s]", inv->root);
	emit_text(e, "\n");
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

static void emit_ports(const struct inventory *inv, size_t width, struct emitter *e)
{
	static const char *const headers[] = { "PORT", "STATE", ">RATE", "NETDEV", "LINK",
					       ">MTU", "IPV4",	">GID",	 "TWIN" };
	const struct inv_rdma_dev **order;
	struct strbuf cell = STRBUF_INIT;
	bool flagged = false;

	if (!inv->nr_rdma) {
		emit_text(e, "RDMA: no devices (sys/class/infiniband is empty)\n");
		emit_value(e, "ports", json_array(), NULL);
		return;
	}
	emit_table_open(e, "ports", headers, ARRAY_SIZE(headers), width);
	order = display_order(inv);
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = order[i];
		char label[16], buf[24];
		const char *twin = rdma_twin_label(inv, d, label);
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			const struct inv_netdev *nd = rdma_port_netdev(inv, d, p);
			const char *netdev = rdma_port_netdev_name(d, p);
			int carrier = nd ? nd->carrier : TRI_UNKNOWN;
			int64_t mtu = nd ? nd->mtu : INV_UNKNOWN;

			emit_row_open(e);
			emit_value(e, "name", jstr(d->name), NULL);
			emit_cellf(e, "port", jint(p->num), "%s/%u", d->name, p->num);
			emit_cell(e, "state", jstr(p->state_name), p->state_name);
			rate_text(port_rate_mbps(p), buf);
			emit_cell(e, "rate_gbps",
				  port_rate_mbps(p) < 0 ? json_null()
							: jreal((double)port_rate_mbps(p) / 1000.0),
				  buf);
			emit_cell(e, "netdev", jstr(netdev), netdev);
			emit_cell(e, "carrier", jtri(carrier),
				  carrier < 0 ? NULL
				  : carrier   ? "up"
					      : "down");
			if (mtu >= 0)
				emit_cellf(e, "mtu", jint(mtu), "%" PRId64, mtu);
			else
				emit_cell(e, "mtu", json_null(), NULL);
			strbuf_reset(&cell);
			ipv4_text(nd, &cell);
			emit_cell(e, "ipv4", jstr(cell.buf), cell.buf);
			gid_text(inv, d, p, &flagged, buf);
			emit_cell(e, "nccl_gid_index", jstr(buf), buf);
			emit_cell(e, "twin", jstr(twin), twin);
			emit_row_close(e);
		}
	}
	emit_table_close(e);

	/* Name the twin pairs once, under the table. */
	emit_array_open(e, "twins");
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = order[i], *tw = rdma_twin(inv, d);
		char label[16];
		if (!tw || cmp_pci(&d, &tw) >= 0)
			continue;
		emit_object_open(e, NULL);
		emit_str(e, "label", "twins %s: ", rdma_twin_label(inv, d, label));
		emit_str(e, "name", "%s + ", d->name);
		emit_str(e, "twin", "%s\n", tw->name);
		emit_close(e);
	}
	emit_close(e);
	if (flagged)
		emit_text(e, "! NCCL would pick a GID that is not an IPv4 RoCE v2 GID: the port "
			     "needs an IPv4 address\n");
	free(order);
	strbuf_release(&cell);
}

static const char *tri_text(int t)
{
	return t < 0 ? "?" : t ? "yes" : "no";
}

static void emit_gpu_row(const struct inv_gpu *g, struct emitter *e)
{
	emit_row_open(e);
	emit_cellf(e, "index", jint(g->index), "%u", g->index);
	emit_cell(e, "name", jstr(g->name), g->name);
	if (g->unified_memory == TRI_YES)
		emit_cell(e, "unified_memory", jtri(g->unified_memory), "unified");
	else if (g->memory_total_bytes >= 0)
		emit_cellf(e, "memory_total_bytes", jint(g->memory_total_bytes), "%" PRId64 " GiB",
			   (g->memory_total_bytes + (1 << 29)) >> 30);
	else
		emit_cell(e, "memory_total_bytes", json_null(), NULL);
	if (g->cc_major >= 0)
		emit_cellf(e, "cc_major", jint(g->cc_major), "%d.%d", g->cc_major, g->cc_minor);
	else
		emit_cell(e, "cc_major", json_null(), NULL);
	emit_value(e, "cc_minor", jint_known(g->cc_minor), NULL);
	emit_cell(e, "gpudirect_rdma_supported", jtri(g->gpudirect_rdma),
		  tri_text(g->gpudirect_rdma));
	emit_cell(e, "dma_buf_supported", jtri(g->dma_buf), tri_text(g->dma_buf));
	emit_cell(e, "pci_bus_id", jstr(g->pci_bus_id), g->pci_bus_id);
	emit_row_close(e);
}

static void emit_gpus(const struct inventory *inv, size_t width, struct emitter *e)
{
	static const char *const headers[] = { ">GPU",	    "NAME",    "MEMORY", "CC",
					       "GPUDIRECT", "DMA-BUF", "PCI" };
	const struct inv_gpu_info *gi = &inv->gpu;

	if (!gi->nr_gpus) {
		if (gi->nvml.available == TRI_NO)
			emit_str(e, NULL, "GPU: none found (NVML: %s)\n",
				 gi->nvml.reason ? gi->nvml.reason : "not available");
		else if (gi->nvml.available < 0)
			emit_text(e, "GPU: unknown (not probed)\n");
		else
			emit_text(e, "GPU: none found\n");
		emit_value(e, "gpus", json_array(), NULL);
		return;
	}
	emit_table_open(e, "gpus", headers, ARRAY_SIZE(headers), width);
	for (size_t i = 0; i < gi->nr_gpus; i++)
		emit_gpu_row(&gi->gpus[i], e);
	emit_table_close(e);
}

static void emit_facts(const struct inventory *inv, struct emitter *e)
{
	const struct inv_system *s = &inv->sys;
	const struct inv_gpu_info *gi = &inv->gpu;
	struct strbuf text = STRBUF_INIT;

	if (s->nvidia_driver) {
		emit_str(e, "nvidia_driver", "driver %s", s->nvidia_driver);
		emit_bool(e, "open_kernel_module", s->nvidia_open_module == TRI_YES, " (open)", "");
	} else if (gi->driver_version) {
		emit_str(e, "driver_version", "driver %s", gi->driver_version);
	} else {
		emit_value(e, "nvidia_driver", json_null(), "driver none");
	}
	if (gi->cuda_driver_version > 0) {
		strbuf_addf(&text, ", CUDA %" PRId64 ".%" PRId64, gi->cuda_driver_version / 1000,
			    gi->cuda_driver_version % 1000 / 10);
		emit_value(e, "cuda_driver_version", jint(gi->cuda_driver_version), text.buf);
	}
	emit_object_open(e, "nccl");
	if (s->nccl.available == TRI_YES && s->nccl.version)
		emit_str(e, "version", ", NCCL %s", s->nccl.version);
	else if (s->nccl.available == TRI_NO)
		emit_value(e, "available", jbool(false), ", NCCL not found");
	emit_close(e);
	emit_value(e, "kernel", jstr(s->kernel), NULL);
	emit_str(e, NULL, ", kernel %s\n", s->kernel ? s->kernel : "unknown");
	strbuf_release(&text);
}

void topo_emit(const struct inventory *inv, size_t width, struct emitter *e)
{
	emit_header(inv, e);
	emit_text(e, "\n");
	emit_ports(inv, width, e);
	emit_text(e, "\n");
	emit_gpus(inv, width, e);
	emit_text(e, "\n");
	emit_facts(inv, e);
	if (inv->nr_problems) {
		struct strbuf note = STRBUF_INIT;
		strbuf_addf(&note,
			    "note: %zu value%s could not be read (see 'problems' in --json)\n",
			    inv->nr_problems, inv->nr_problems == 1 ? "" : "s");
		emit_value(e, "problems", jint((int64_t)inv->nr_problems), note.buf);
		strbuf_release(&note);
	}
}

void topo_render(const struct inventory *inv, size_t width, struct strbuf *out)
{
	struct emitter e;

	emit_init(&e, EMIT_TEXT, out, false);
	topo_emit(inv, width, &e);
	emit_release(&e);
}
