#include "sparkctl.h"

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/probe_internal.h"

#define IB "sys/class/infiniband"

/* Read a "%d: %s" state file into code and name. */
static void read_state(struct probe_ctx *ctx, const char *path, int *code, char **name)
{
	char *s = probe_read_str(ctx, path);

	*code = (int)INV_UNKNOWN;
	if (s && parse_port_state(s, code, name) < 0)
		probe_bad_content(ctx, path, s);
	free(s);
}

static int cmp_gid(const void *a, const void *b)
{
	const struct inv_gid *x = a, *y = b;
	return (x->index > y->index) - (x->index < y->index);
}

static void probe_gids(struct probe_ctx *ctx, const char *portdir, struct inv_port *port)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT;
	int r;

	strbuf_addf(&path, "%s/gids", portdir);
	r = rootfs_list(ctx->root, path.buf, &names);
	if (r < 0)
		probe_read_failed(ctx, path.buf, r);
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

static void probe_counter_dir(struct probe_ctx *ctx, const char *dir, struct inv_counter **arr,
			      size_t *nr)
{
	struct strvec names = STRVEC_INIT;
	struct strbuf path = STRBUF_INIT;
	int r = rootfs_list(ctx->root, dir, &names);

	if (r < 0)
		probe_read_failed(ctx, dir, r);
	for (size_t i = 0; i < names.nr; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir, names.v[i]);
		int64_t v = probe_read_int(ctx, path.buf);
		if (v < 0)
			continue;
		struct inv_counter *c = ARRAY_PUSH(*arr, *nr);
		c->name = xstrdup(names.v[i]);
		c->value = v;
	}
	strvec_clear(&names);
	strbuf_release(&path);
}

static void probe_port(struct probe_ctx *ctx, const char *dev, unsigned num, struct inv_port *port)
{
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT;

	strbuf_addf(&dir, IB "/%s/ports/%u", dev, num);
	port->num = num;
	strbuf_addf(&path, "%s/state", dir.buf);
	read_state(ctx, path.buf, &port->state, &port->state_name);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/phys_state", dir.buf);
	read_state(ctx, path.buf, &port->phys_state, &port->phys_state_name);

	strbuf_reset(&path);
	strbuf_addf(&path, "%s/rate", dir.buf);
	port->rate = probe_read_str(ctx, path.buf);
	int64_t mbps;
	if (port->rate && parse_port_rate(port->rate, &mbps) < 0) {
		probe_bad_content(ctx, path.buf, port->rate);
		free_and_null(&port->rate);
	}
	port->link_layer = probe_read_strf(ctx, "%s/link_layer", dir.buf);

	strbuf_reset(&path);
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
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/counters", dir.buf);
	probe_counter_dir(ctx, path.buf, &port->counters, &port->nr_counters);
	strbuf_reset(&path);
	strbuf_addf(&path, "%s/hw_counters", dir.buf);
	probe_counter_dir(ctx, path.buf, &port->hw_counters, &port->nr_hw_counters);
	strbuf_release(&dir);
	strbuf_release(&path);
}

static void probe_ports(struct probe_ctx *ctx, struct inv_rdma_dev *d)
{
	struct strvec names = STRVEC_INIT;
	char *dir = xasprintf(IB "/%s/ports", d->name);
	int r = rootfs_list(ctx->root, dir, &names);

	if (r < 0)
		probe_read_failed(ctx, dir, r);
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
	char *path;
	struct pci_bdf bdf;
	int r;

	d->name = xstrdup(name);
	strvec_init(&d->netdevs);
	d->hca_type = probe_read_strf(ctx, IB "/%s/hca_type", name);
	d->fw_ver = probe_read_strf(ctx, IB "/%s/fw_ver", name);
	d->board_id = probe_read_strf(ctx, IB "/%s/board_id", name);
	d->node_guid = probe_read_strf(ctx, IB "/%s/node_guid", name);
	d->sys_image_guid = probe_read_strf(ctx, IB "/%s/sys_image_guid", name);

	path = xasprintf(IB "/%s/device", name);
	d->pci_address = probe_read_link_base(ctx, path);
	if (d->pci_address && parse_bdf(d->pci_address, &bdf) < 0)
		free_and_null(&d->pci_address);
	free(path);

	path = xasprintf(IB "/%s/device/net", name);
	r = rootfs_list(ctx->root, path, &d->netdevs);
	if (r < 0)
		probe_read_failed(ctx, path, r);
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
				ctx, IB "/%s/device/net/%s/phys_port_name", name, nd);
			d->phys_switch_id = probe_read_strf(
				ctx, IB "/%s/device/net/%s/phys_switch_id", name, nd);
		}
	}
	probe_ports(ctx, d);
}

void probe_rdma(struct probe_ctx *ctx)
{
	struct strvec names = STRVEC_INIT;
	int r = rootfs_list(ctx->root, IB, &names);

	if (r < 0)
		probe_read_failed(ctx, IB, r);
	for (size_t i = 0; i < names.nr; i++)
		probe_rdma_dev(ctx, names.v[i]);
	strvec_clear(&names);
}
