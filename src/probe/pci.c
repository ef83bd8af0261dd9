#include "sparkctl.h"

#include "lib/xalloc.h"
#include "probe/pci_functions.h"
#include "probe/probe_internal.h"

static void probe_function(struct probe_ctx *ctx, const char *bdf)
{
	struct inventory *inv = ctx->inv;
	struct inv_pci *p = ARRAY_PUSH(inv->pci, inv->nr_pci);
	struct pci_link link;
	struct pci_aer aer;

	p->address = xstrdup(bdf);
	pci_read_link(&ctx->rd, bdf, &link);
	p->vendor_id = link.vendor_id;
	p->device_id = link.device_id;
	p->current_link_speed = link.current_link_speed;
	p->max_link_speed = link.max_link_speed;
	p->current_link_width = link.current_link_width;
	p->max_link_width = link.max_link_width;
	pci_read_aer(&ctx->rd, bdf, &aer);
	p->aer_fatal = aer.fatal;
	p->aer_nonfatal = aer.nonfatal;
	p->aer_correctable = aer.correctable;
}

void probe_pci(struct probe_ctx *ctx)
{
	struct inventory *inv = ctx->inv;
	struct strvec addrs = STRVEC_INIT;

	/* The functions of every RDMA device and every PCI network interface. */
	for (size_t i = 0; i < inv->nr_rdma; i++)
		if (inv->rdma[i].pci_address && !strvec_contains(&addrs, inv->rdma[i].pci_address))
			strvec_push(&addrs, inv->rdma[i].pci_address);
	for (size_t i = 0; i < inv->nr_netdevs; i++)
		if (inv->netdevs[i].pci_address &&
		    !strvec_contains(&addrs, inv->netdevs[i].pci_address))
			strvec_push(&addrs, inv->netdevs[i].pci_address);
	strvec_sort(&addrs);
	for (size_t i = 0; i < addrs.nr; i++)
		probe_function(ctx, addrs.v[i]);
	strvec_clear(&addrs);
}
