#include "sparkctl.h"

#include <sys/socket.h>

#include "config/fabric.h"
#include "inventory/derive.h"
#include "lib/xalloc.h"

bool netdev_ipv4(const struct inv_netdev *nd, struct cidr *ret)
{
	for (size_t i = 0; nd && i < nd->nr_addrs; i++) {
		if (nd->addrs[i].family != AF_INET ||
		    ipv4_parse(nd->addrs[i].address, &ret->addr) < 0)
			continue;
		ret->prefix = nd->addrs[i].prefix_len;
		return true;
	}
	return false;
}

/* Why port p of d cannot carry fabric traffic by itself, or NULL when it can. */
static char *port_unfit(const struct inventory *inv, const struct inv_rdma_dev *d,
			const struct inv_port *p, bool require_ipv4)
{
	const struct inv_netdev *nd;
	struct cidr a;

	if (p->state != 4)
		return xasprintf("not ACTIVE (%s)",
				 p->state_name ? p->state_name : "state unknown");
	if (port_is_infiniband(p))
		return NULL;
	nd = rdma_port_netdev(inv, d, p);
	if (!nd)
		return xstrdup("no netdev");
	if (nd->carrier != TRI_YES)
		return xasprintf("netdev %s has no carrier", nd->name);
	if (require_ipv4 && !netdev_ipv4(nd, &a))
		return xasprintf("netdev %s has no IPv4 address", nd->name);
	return NULL;
}

static int cmp_rail(const void *a, const void *b)
{
	const struct fabric_rail *x = a, *y = b;
	struct pci_bdf p, q;

	if (x->dev->pci_address && y->dev->pci_address && parse_bdf(x->dev->pci_address, &p) == 0 &&
	    parse_bdf(y->dev->pci_address, &q) == 0) {
		unsigned long long kx = (unsigned long long)p.domain << 24 | p.bus << 16 |
					p.device << 8 | p.function;
		unsigned long long ky = (unsigned long long)q.domain << 24 | q.bus << 16 |
					q.device << 8 | q.function;
		if (kx != ky)
			return kx < ky ? -1 : 1;
	}
	int c = strcmp(x->dev->name, y->dev->name);
	return c ? c : (int)x->port->num - (int)y->port->num;
}

static void add_stray(struct fabric *f, const struct inv_rdma_dev *d, const struct inv_port *p,
		      char *reason)
{
	struct fabric_stray *s = ARRAY_PUSH(f->strays, f->nr_strays);
	s->dev = d;
	s->port = p;
	s->reason = reason;
}

void fabric_build(const struct inventory *inv, bool require_ipv4, struct fabric *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < inv->nr_rdma; i++) {
		const struct inv_rdma_dev *d = &inv->rdma[i];
		for (size_t k = 0; k < d->nr_ports; k++) {
			const struct inv_port *p = &d->ports[k];
			if (p->state != 4)
				continue; /* only ACTIVE ports matter, rail or stray */
			char *why = port_unfit(inv, d, p, require_ipv4);
			if (why) {
				add_stray(f, d, p, why);
				continue;
			}
			const struct inv_rdma_dev *twin =
				port_is_infiniband(p) ? NULL : rdma_twin(inv, d);
			if (twin) {
				/* The twin's port with the same number must qualify as well. */
				const struct inv_port *tp = NULL;
				for (size_t t = 0; t < twin->nr_ports; t++)
					if (twin->ports[t].num == p->num)
						tp = &twin->ports[t];
				char *twhy = tp ? port_unfit(inv, twin, tp, require_ipv4)
						: xstrdup("has no such port");
				if (twhy) {
					add_stray(
						f, d, p,
						xasprintf(
							"its twin %s %s: one half of a port halves "
							"the bandwidth",
							twin->name, twhy));
					free(twhy);
					continue;
				}
			}
			struct fabric_rail *r = ARRAY_PUSH(f->rails, f->nr_rails);
			r->dev = d;
			r->port = p;
			r->twin = twin;
			r->netdev = port_is_infiniband(p) ? NULL : rdma_port_netdev(inv, d, p);
			r->has_ipv4 = netdev_ipv4(r->netdev, &r->ipv4);
			if (port_is_infiniband(p))
				f->infiniband = true;
			if (twin) {
				rdma_twin_label(inv, d, r->label);
				struct pci_bdf a, b;
				r->half = parse_bdf(d->pci_address, &a) == 0 &&
							  parse_bdf(twin->pci_address, &b) == 0 &&
							  a.domain > b.domain
						  ? 1
						  : 0;
			}
		}
	}
	if (f->nr_rails > 1)
		qsort(f->rails, f->nr_rails, sizeof(*f->rails), cmp_rail);
	for (size_t i = 0; i < f->nr_rails; i++) {
		/* Count each physical port once: a twin pair only through its lower half. */
		bool counted = false;
		for (size_t k = 0; k < i && !counted; k++)
			counted = f->rails[k].dev == f->rails[i].twin;
		if (!counted)
			f->nr_ports++;
	}
}

void fabric_release(struct fabric *f)
{
	for (size_t i = 0; i < f->nr_strays; i++)
		free(f->strays[i].reason);
	free(f->rails);
	free(f->strays);
	memset(f, 0, sizeof(*f));
}
