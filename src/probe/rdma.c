#include "sparkctl.h"

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/probe_internal.h"
#include "probe/rdma_ports.h"

static int cmp_gid(const void *a, const void *b)
{
	const struct inv_gid *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

static void probe_gids(struct probe_ctx *ctx, const char *portdir, struct inv_port *port)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT;

	strbuf_addf(&path, "%s/gids", portdir);
	reader_list(&ctx->rd, path.buf, &names);
	for (size_t i = 0; i < names.nr; i++) {
		uint32_t index;
		uint8_t raw[16];
		char *text;

		strbuf_reset(&path);
		strbuf_addf(&path, "%s/gids/%s", portdir, names.v[i]);
		if (parse_u32(names.v[i], &index) < 0 || index > 65535) {
			inventory_add_problem(ctx->inv, path.buf, "not a GID index");
			continue;
		}
		text = probe_read_str(ctx, path.buf);
		if (!text)
			continue;
		if (parse_gid(text, raw) < 0) {
			probe_bad_content(ctx, path.buf, text);
			free(text);
			continue;
		}
		free(text);
		/* An all-zero GID is an empty slot: its attributes cannot even be read. */
		if (gid_is_zero(raw))
			continue;
		struct inv_gid *g = ARRAY_PUSH(port->gids, port->nr_gids);
		g->index = index;
		memcpy(g->raw, raw, 16);
		g->type = probe_read_strf(ctx, "%s/gid_attrs/types/%s", portdir, names.v[i]);
		g->ndev = probe_read_strf(ctx, "%s/gid_attrs/ndevs/%s", portdir, names.v[i]);
	}
	if (port->nr_gids > 1)
		qsort(port->gids, port->nr_gids, sizeof(*port->gids), cmp_gid);
	strvec_clear(&names);
	strbuf_release(&path);
}

struct counters {
	struct inv_counter **arr;
	size_t *nr;
};

static int add_counter(void *data, const char *name, const char *text)
{
	struct counters *c = data;
	uint64_t v;

	if (parse_u64(text, &v) < 0 || v > INT64_MAX)
		return -EINVAL;
	struct inv_counter *ic = ARRAY_PUSH(*c->arr, *c->nr);
	ic->name = xstrdup(name);
	ic->value = (int64_t)v;
	return 0;
}

static void probe_port(struct probe_ctx *ctx, const char *dev, unsigned num, struct inv_port *port)
{
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;
	struct rdma_port_link link;
	char name[16];

	snprintf(name, sizeof(name), "%u", num);
	strbuf_addf(&dir, RDMA_CLASS "/%s/ports/%u", dev, num);
	port->num = num;
	rdma_read_port_link(&ctx->rd, dev, name, &link);
	port->state = link.state;
	port->state_name = link.state_name;
	port->phys_state = link.phys_state;
	port->phys_state_name = link.phys_state_name;
	port->rate = link.rate;
	port->link_layer = link.link_layer;

	strbuf_addf(&path, "%s/lid", dir.buf);
	char *lid = probe_read_str(ctx, path.buf);
	uint64_t v;
	port->lid = INV_UNKNOWN;
	if (lid && (parse_u64_hex(lid, &v) < 0 || v > 0xffff))
		probe_bad_content(ctx, path.buf, lid);
	else if (lid)
		port->lid = (int64_t)v;
	free(lid);

	probe_gids(ctx, dir.buf, port);
	rdma_read_counters(&ctx->rd, dev, name, false, NULL, add_counter,
			   &(struct counters){ &port->counters, &port->nr_counters });
	rdma_read_counters(&ctx->rd, dev, name, true, NULL, add_counter,
			   &(struct counters){ &port->hw_counters, &port->nr_hw_counters });
	strbuf_release(&dir);
	strbuf_release(&path);
}

static void probe_ports(struct probe_ctx *ctx, struct inv_rdma_dev *d)
{
	struct strvec names = STRVEC_INIT;
	char *dir = xasprintf(RDMA_CLASS "/%s/ports", d->name);

	rdma_list_ports(&ctx->rd, d->name, &names);
	for (size_t i = 0; i < names.nr; i++) {
		uint32_t num;
		if (parse_u32(names.v[i], &num) < 0 || num == 0 || num > 255) {
			char *p = xasprintf("%s/%s", dir, names.v[i]);
			inventory_add_problem(ctx->inv, p, "not a port number");
			free(p);
			continue;
		}
		probe_port(ctx, d->name, num, ARRAY_PUSH(d->ports, d->nr_ports));
	}
	strvec_clear(&names);
	free(dir);
}

static void probe_rdma_dev(struct probe_ctx *ctx, const char *name)
{
	struct inventory *inv = ctx->inv;
	struct inv_rdma_dev *d = ARRAY_PUSH(inv->rdma, inv->nr_rdma);
	struct rdma_device_attrs attrs;
	char *path;
	struct pci_bdf bdf;

	d->name = xstrdup(name);
	strvec_init(&d->netdevs);
	rdma_read_device(&ctx->rd, name, &attrs);
	d->hca_type = attrs.hca_type;
	d->fw_ver = attrs.fw_ver;
	d->board_id = attrs.board_id;
	d->node_guid = probe_read_strf(ctx, RDMA_CLASS "/%s/node_guid", name);
	d->sys_image_guid = probe_read_strf(ctx, RDMA_CLASS "/%s/sys_image_guid", name);

	path = xasprintf(RDMA_CLASS "/%s/device", name);
	d->pci_address = probe_read_link_base(ctx, path);
	if (d->pci_address && parse_bdf(d->pci_address, &bdf) < 0)
		free_and_null(&d->pci_address);
	free(path);

	path = xasprintf(RDMA_CLASS "/%s/device/net", name);
	reader_list(&ctx->rd, path, &d->netdevs);
	free(path);

	if (d->netdevs.nr) {
		const char *nd = d->netdevs.v[0];
		const struct inv_netdev *n = inventory_netdev(inv, nd);
		if (n) {
			d->phys_port_name = xstrdup_or_null(n->phys_port_name);
			d->phys_switch_id = xstrdup_or_null(n->phys_switch_id);
		} else {
			/* The netdev is not in this network namespace; read it via the device. */
			d->phys_port_name = probe_read_strf(
				ctx, RDMA_CLASS "/%s/device/net/%s/phys_port_name", name, nd);
			d->phys_switch_id = probe_read_strf(
				ctx, RDMA_CLASS "/%s/device/net/%s/phys_switch_id", name, nd);
		}
	}
	probe_ports(ctx, d);
}

void probe_rdma(struct probe_ctx *ctx)
{
	struct strvec names = STRVEC_INIT;

	rdma_list_devices(&ctx->rd, &names);
	for (size_t i = 0; i < names.nr; i++)
		probe_rdma_dev(ctx, names.v[i]);
	strvec_clear(&names);
}
