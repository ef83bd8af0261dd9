#include "sparkctl.h"

#include "lib/host_text.h"
#include "lib/xalloc.h"
#include "probe/probe_internal.h"

#define PCI "sys/bus/pci/devices"

static int64_t read_aer_total(struct probe_ctx *ctx, const char *bdf, const char *file,
			      const char *key)
{
	struct strbuf text = STRBUF_INIT;
	char *path = xasprintf(PCI "/%s/%s", bdf, file);
	int64_t v = INV_UNKNOWN;
	int r = rootfs_read_file(ctx->root, path, ROOTFS_VALUE_MAX, &text);

	if (r < 0)
		probe_read_failed(ctx, path, r);
	else if (parse_aer_total(text.buf, key, &v) < 0)
		probe_bad_content(ctx, path, text.buf);
	strbuf_release(&text);
	free(path);
	return v;
}

/* A link speed file: "32.0 GT/s PCIe", or "Unknown" as the kernel prints it. */
static char *read_link_speed(struct probe_ctx *ctx, const char *bdf, const char *file)
{
	char *path = xasprintf(PCI "/%s/%s", bdf, file);
	char *s = probe_read_str(ctx, path);
	uint64_t v;

	if (s && !streq(s, "Unknown") && parse_link_speed(s, &v) < 0) {
		probe_bad_content(ctx, path, s);
		free_and_null(&s);
	}
	free(path);
	return s;
}

static void probe_function(struct probe_ctx *ctx, const char *bdf)
{
	struct inventory *inv = ctx->inv;
	struct inv_pci *p = ARRAY_PUSH(inv->pci, inv->nr_pci);
	char *path;

	p->address = xstrdup(bdf);
	p->vendor_id = probe_read_strf(ctx, PCI "/%s/vendor", bdf);
	p->device_id = probe_read_strf(ctx, PCI "/%s/device", bdf);
	p->current_link_speed = read_link_speed(ctx, bdf, "current_link_speed");
	p->max_link_speed = read_link_speed(ctx, bdf, "max_link_speed");
	path = xasprintf(PCI "/%s/current_link_width", bdf);
	p->current_link_width = probe_read_int(ctx, path);
	free(path);
	path = xasprintf(PCI "/%s/max_link_width", bdf);
	p->max_link_width = probe_read_int(ctx, path);
	free(path);
	p->aer_fatal = read_aer_total(ctx, bdf, "aer_dev_fatal", "TOTAL_ERR_FATAL");
	p->aer_nonfatal = read_aer_total(ctx, bdf, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL");
	p->aer_correctable = read_aer_total(ctx, bdf, "aer_dev_correctable", "TOTAL_ERR_COR");
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
