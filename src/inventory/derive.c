#include "sparkctl.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include "inventory/derive.h"
#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

int parse_bdf(const char *s, struct pci_bdf *ret)
{
	uint64_t v[4];
	/* DDDD:BB:DD.F with hex fields of exactly these widths. */
	static const size_t width[4] = { 4, 2, 2, 1 };
	static const char sep[4] = { ':', ':', '.', '\0' };
	const char *p = s;

	for (int i = 0; i < 4; i++) {
		char field[8];
		if (strlen(p) < width[i] || p[width[i]] != sep[i])
			return -EINVAL;
		memcpy(field, p, width[i]);
		field[width[i]] = '\0';
		if (field[0] == '0' && (field[1] == 'x' || field[1] == 'X'))
			return -EINVAL;
		if (parse_u64_hex(field, &v[i]) < 0)
			return -EINVAL;
		p += width[i] + (sep[i] ? 1 : 0);
	}
	if (v[2] > 0x1f || v[3] > 7)
		return -EINVAL;
	ret->domain = (unsigned)v[0];
	ret->bus = (unsigned)v[1];
	ret->device = (unsigned)v[2];
	ret->function = (unsigned)v[3];
	return 0;
}

static bool nonempty(const char *s)
{
	return s && *s;
}

/* Same adapter: the netdev's switch id, else the RDMA system image GUID. */
static bool same_adapter(const struct inv_rdma_dev *a, const struct inv_rdma_dev *b)
{
	if (nonempty(a->phys_switch_id) || nonempty(b->phys_switch_id))
		return streq(a->phys_switch_id, b->phys_switch_id);
	return nonempty(a->sys_image_guid) && streq(a->sys_image_guid, b->sys_image_guid) &&
	       !streq(a->sys_image_guid, "0000:0000:0000:0000");
}

static bool twin_candidates(const struct inv_rdma_dev *a, const struct inv_rdma_dev *b)
{
	struct pci_bdf pa, pb;

	if (a == b || !a->pci_address || !b->pci_address)
		return false;
	if (parse_bdf(a->pci_address, &pa) < 0 || parse_bdf(b->pci_address, &pb) < 0)
		return false;
	if (pa.domain == pb.domain || !same_adapter(a, b))
		return false;
	if (nonempty(a->phys_port_name) && nonempty(b->phys_port_name))
		return streq(a->phys_port_name, b->phys_port_name);
	return pa.function == pb.function;
}

/* The only twin candidate of d, or NULL when there are none or several. */
static const struct inv_rdma_dev *unique_candidate(const struct inventory *inv,
						   const struct inv_rdma_dev *d)
{
	const struct inv_rdma_dev *found = NULL;

	for (size_t i = 0; i < inv->nr_rdma; i++) {
		if (!twin_candidates(d, &inv->rdma[i]))
			continue;
		if (found)
			return NULL;
		found = &inv->rdma[i];
	}
	return found;
}

const struct inv_rdma_dev *rdma_twin(const struct inventory *inv, const struct inv_rdma_dev *d)
{
	const struct inv_rdma_dev *t = unique_candidate(inv, d);

	return t && unique_candidate(inv, t) == d ? t : NULL;
}

const char *rdma_twin_label(const struct inventory *inv, const struct inv_rdma_dev *d, char buf[16])
{
	struct pci_bdf bdf;

	if (!rdma_twin(inv, d))
		return NULL;
	if (nonempty(d->phys_port_name) && strlen(d->phys_port_name) < 16) {
		snprintf(buf, 16, "%s", d->phys_port_name);
		return buf;
	}
	if (parse_bdf(d->pci_address, &bdf) < 0)
		return NULL;
	snprintf(buf, 16, "f%u", bdf.function);
	return buf;
}

const struct inv_gid *port_gid(const struct inv_port *p, unsigned index)
{
	for (size_t i = 0; i < p->nr_gids; i++)
		if (p->gids[i].index == index)
			return &p->gids[i];
	return NULL;
}

const char *rdma_port_netdev_name(const struct inv_rdma_dev *d, const struct inv_port *p)
{
	const struct inv_gid *g0 = port_gid(p, 0);

	if (g0 && nonempty(g0->ndev))
		return g0->ndev;
	if (p->num >= 1 && p->num <= d->netdevs.nr)
		return d->netdevs.v[p->num - 1];
	return d->netdevs.nr ? d->netdevs.v[0] : NULL;
}

const struct inv_netdev *rdma_port_netdev(const struct inventory *inv, const struct inv_rdma_dev *d,
					  const struct inv_port *p)
{
	const char *name = rdma_port_netdev_name(d, p);

	return name ? inventory_netdev(inv, name) : NULL;
}

int64_t port_rate_mbps(const struct inv_port *p)
{
	int64_t mbps;

	if (!p->rate || parse_port_rate(p->rate, &mbps) < 0)
		return INV_UNKNOWN;
	return mbps;
}

bool port_is_infiniband(const struct inv_port *p)
{
	return streq(p->link_layer, "InfiniBand");
}

bool port_is_fabric(const struct inventory *inv, const struct inv_rdma_dev *d,
		    const struct inv_port *p)
{
	const struct inv_netdev *nd;

	if (p->state != 4) /* IB_PORT_ACTIVE */
		return false;
	if (port_is_infiniband(p))
		return true;
	nd = rdma_port_netdev(inv, d, p);
	return nd && nd->carrier == TRI_YES;
}

int64_t roce_mtu_for_netdev_mtu(int64_t mtu)
{
	/* IB_GRH + UDP + BTH + XRC ext + AtomicETH + ICRC (include/rdma/ib_addr.h) */
	static const int64_t headers = 40 + 8 + 12 + 4 + 28 + 4;

	if (mtu < 0)
		return INV_UNKNOWN;
	for (int64_t ib = 4096; ib >= 256; ib /= 2)
		if (mtu - headers >= ib)
			return ib;
	return INV_UNKNOWN;
}

void nccl_gid_params_default(struct nccl_gid_params *p)
{
	memset(p, 0, sizeof(*p));
	p->gid_index = -1;
	p->roce_version = 2;
	p->addr_family = AF_INET;
	p->routable_flid_index = 1;
}

/*
 * NCCL reads integer parameters with strtoll(str, NULL, 0) and keeps the
 * default only for an empty value or on overflow; calling strtoll here
 * reproduces exactly what NCCL will do with a value such as "3abc" or "0x3".
 */
static void nccl_int_param(const struct inventory *inv, const char *key, int *value)
{
	const char *s = inventory_nccl_setting(inv, key, NULL);
	char *end;

	if (!s || !*s)
		return;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || v < INT_MIN || v > INT_MAX)
		return;
	*value = (int)v;
}

/* NCCL_IB_ADDR_RANGE "addr/len"; anything NCCL would ignore leaves has_range false. */
static void nccl_range_param(const char *s, struct nccl_gid_params *p)
{
	char addr[128];
	const char *slash;
	char *end;

	if (!s || !*s || !(slash = strchr(s, '/')))
		return;
	if ((size_t)(slash - s) >= sizeof(addr))
		return;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	memset(p->range, 0, sizeof(p->range));
	if (inet_pton(p->addr_family, addr, p->range) != 1)
		return;
	long mask = strtol(slash + 1, &end, 10); /* as NCCL: strtol, trailing text ignored */
	if ((p->addr_family == AF_INET && mask > 32) || (p->addr_family == AF_INET6 && mask > 128))
		return;
	p->has_range = true;
	p->range_prefix = (int)mask;
}

void nccl_gid_params_from_inventory(struct nccl_gid_params *p, const struct inventory *inv)
{
	const char *fam = inventory_nccl_setting(inv, "NCCL_IB_ADDR_FAMILY", NULL);

	nccl_gid_params_default(p);
	nccl_int_param(inv, "NCCL_IB_GID_INDEX", &p->gid_index);
	nccl_int_param(inv, "NCCL_IB_ROCE_VERSION_NUM", &p->roce_version);
	nccl_int_param(inv, "NCCL_IB_ROUTABLE_FLID_GID_INDEX", &p->routable_flid_index);
	if (streq(fam, "AF_INET6"))
		p->addr_family = AF_INET6;
	nccl_range_param(inventory_nccl_setting(inv, "NCCL_IB_ADDR_RANGE", NULL), p);
}

static const uint8_t zero_gid[16];

/* The GID table by index (NULL for an empty slot), built once per pick. */
struct gid_table {
	const struct inv_gid **slot;
	unsigned len;
};

static const uint8_t *gid_raw(const struct gid_table *t, unsigned index)
{
	return t->slot[index] ? t->slot[index]->raw : zero_gid;
}

static int gid_version(const struct gid_table *t, unsigned index)
{
	return t->slot[index] ? gid_type_version(t->slot[index]->type) : 0;
}

/* IPv4-mapped (or IPv4-mapped multicast) GIDs are AF_INET, everything else AF_INET6. */
static int gid_family(const uint8_t *raw)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t mcast[12] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(raw, mapped, 12) || !memcmp(raw, mcast, 12) ? AF_INET : AF_INET6;
}

static bool gid_valid(const uint8_t *raw)
{
	static const uint8_t ll[4] = { 0xfe, 0x80, 0, 0 };
	bool trailer_zero = true, head_zero = true;

	for (int i = 0; i < 4; i++)
		head_zero &= raw[i] == 0;
	for (int i = 4; i < 16; i++)
		trailer_zero &= raw[i] == 0;
	/* Not configured: all zero, or the bare fe80:: prefix. */
	if ((head_zero && trailer_zero) || (!memcmp(raw, ll, 4) && trailer_zero))
		return false;
	/* Link-local: fe80::/64. */
	return !(!memcmp(raw, ll, 4) && !raw[4] && !raw[5] && !raw[6] && !raw[7]);
}

static bool bits_match(const uint8_t *a, const uint8_t *b, int bits)
{
	for (int i = 0; bits > 0; i++, bits -= 8) {
		uint8_t mask = (uint8_t)(bits >= 8 ? 0xff : 0xff << (8 - bits));
		if ((a[i] & mask) != (b[i] & mask))
			return false;
	}
	return true;
}

static bool gid_in_range(const struct nccl_gid_params *p, const uint8_t *raw)
{
	if (!p->has_range || p->range_prefix == 0)
		return true;
	if (p->range_prefix < 0)
		return false; /* NCCL's loop never reaches zero for a negative length */
	if (p->addr_family == AF_INET)
		return bits_match(p->range, raw + 12, p->range_prefix);
	return bits_match(p->range, raw, p->range_prefix);
}

/* One step of NCCL's scan: should the candidate replace the current index? */
static bool gid_better(const struct gid_table *port, const struct nccl_gid_params *p, unsigned cur,
		       unsigned cand)
{
	const uint8_t *g = gid_raw(port, cur), *c = gid_raw(port, cand);
	int fam_g = gid_family(g), fam_c = gid_family(c);
	bool in_range = gid_in_range(p, c);

	if (fam_c != fam_g && fam_c == p->addr_family && in_range)
		return true;
	if (fam_c != p->addr_family || !gid_valid(c) || !in_range)
		return false;
	int ver_g = gid_version(port, cur), ver_c = gid_version(port, cand);
	return (ver_g != ver_c || !gid_valid(g)) && ver_c == p->roce_version;
}

int nccl_gid_pick(const struct inv_port *p, const struct nccl_gid_params *params)
{
	struct gid_table t = { NULL, 0 };
	unsigned cur = 0;
	int pick;

	for (size_t i = 0; i < p->nr_gids; i++)
		if (p->gids[i].index + 1 > t.len)
			t.len = p->gids[i].index + 1;
	if (t.len == 0)
		return -1;
	t.slot = xcalloc(t.len, sizeof(*t.slot));
	for (size_t i = 0; i < p->nr_gids; i++)
		t.slot[p->gids[i].index] = &p->gids[i];
	if (port_is_infiniband(p)) {
		int r = params->routable_flid_index;
		const uint8_t *g =
			r >= 0 && (unsigned)r < t.len ? gid_raw(&t, (unsigned)r) : zero_gid;
		/* The FLID is bytes 4-5 of the GID. */
		pick = g[4] || g[5] ? r : 0;
	} else if (params->gid_index >= 0) {
		pick = params->gid_index;
	} else {
		for (unsigned cand = 1; cand < t.len; cand++)
			if (gid_better(&t, params, cur, cand))
				cur = cand;
		pick = (int)cur;
	}
	free(t.slot);
	return pick;
}

int pci_link_degraded(const struct inv_pci *p)
{
	uint64_t cur, max;

	if (!p->current_link_speed || !p->max_link_speed || p->current_link_width < 0 ||
	    p->max_link_width < 0 || parse_link_speed(p->current_link_speed, &cur) < 0 ||
	    parse_link_speed(p->max_link_speed, &max) < 0)
		return TRI_UNKNOWN;
	return cur < max || p->current_link_width < p->max_link_width ? TRI_YES : TRI_NO;
}

/* ---- the derived values of the JSON form ------------------------------------ */

const char *derived_rdma_twin(const struct inv_scope *s, char buf[INV_DERIVED_TEXT])
{
	const struct inv_rdma_dev *twin = rdma_twin(s->inv, s->obj);

	(void)buf;
	return twin ? twin->name : NULL;
}

/* A port's scope is held by its RDMA device's. */
static const struct inv_rdma_dev *port_device(const struct inv_scope *s)
{
	return s->outer->obj;
}

int64_t derived_port_rate_mbps(const struct inv_scope *s)
{
	return port_rate_mbps(s->obj);
}

const char *derived_port_netdev(const struct inv_scope *s, char buf[INV_DERIVED_TEXT])
{
	(void)buf;
	return rdma_port_netdev_name(port_device(s), s->obj);
}

bool derived_port_fabric(const struct inv_scope *s)
{
	return port_is_fabric(s->inv, port_device(s), s->obj);
}

int64_t derived_port_roce_mtu(const struct inv_scope *s)
{
	const struct inv_netdev *nd = rdma_port_netdev(s->inv, port_device(s), s->obj);

	if (port_is_infiniband(s->obj) || !nd)
		return INV_UNKNOWN;
	return roce_mtu_for_netdev_mtu(nd->mtu);
}

/* The index NCCL picks with its defaults: the inventory's environment is not applied. */
int64_t derived_port_nccl_gid_index(const struct inv_scope *s)
{
	struct nccl_gid_params params;

	nccl_gid_params_default(&params);
	return nccl_gid_pick(s->obj, &params);
}

int64_t derived_gid_roce_version(const struct inv_scope *s)
{
	const struct inv_gid *g = s->obj;
	int version = gid_type_version(g->type);

	return version ? version : INV_UNKNOWN;
}

const char *derived_gid_ipv4(const struct inv_scope *s, char buf[INV_DERIVED_TEXT])
{
	const struct inv_gid *g = s->obj;

	return gid_ipv4(g->raw, buf) ? buf : NULL;
}

int derived_pci_link_degraded(const struct inv_scope *s)
{
	return pci_link_degraded(s->obj);
}
