#include "sparkctl.h"

#include "inventory/inventory.h"
#include "lib/host_text.h"
#include "lib/parse.h"
#include "lib/xalloc.h"
#include "probe/pci_functions.h"

int pci_list_functions(const struct host_reader *rd, struct strvec *addrs)
{
	return reader_list(rd, PCI_DEVICES, addrs);
}

/* A link speed file: "32.0 GT/s PCIe", or "Unknown" as the kernel prints it. */
static char *read_link_speed(struct reader_dir *d, const char *file, struct strbuf *v)
{
	uint64_t milli;

	if (reader_dir_value(d, file, v) <= 0)
		return NULL;
	if (!streq(v->buf, "Unknown") && parse_link_speed(v->buf, &milli) < 0) {
		reader_dir_bad_content(d, file, v->buf);
		return NULL;
	}
	return xstrdup(v->buf);
}

static int64_t read_width(struct reader_dir *d, const char *file, struct strbuf *v)
{
	uint64_t n;

	if (reader_dir_value(d, file, v) <= 0)
		return INV_UNKNOWN;
	if (parse_u64(v->buf, &n) < 0 || n > INT64_MAX) {
		reader_dir_bad_content(d, file, v->buf);
		return INV_UNKNOWN;
	}
	return (int64_t)n;
}

int pci_read_link(const struct host_reader *rd, const char *bdf, struct pci_link *out)
{
	static const char *const files[] = { "vendor",
					     "device",
					     "current_link_speed",
					     "max_link_speed",
					     "current_link_width",
					     "max_link_width",
					     NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	memset(out, 0, sizeof(*out));
	out->current_link_width = out->max_link_width = INV_UNKNOWN;
	strbuf_addf(&rel, PCI_DEVICES "/%s", bdf);
	r = reader_dir_open(rd, rel.buf, files, &d);
	if (r > 0) {
		if (reader_dir_value(&d, "vendor", &v) > 0)
			out->vendor_id = xstrdup(v.buf);
		if (reader_dir_value(&d, "device", &v) > 0)
			out->device_id = xstrdup(v.buf);
		out->current_link_speed = read_link_speed(&d, "current_link_speed", &v);
		out->max_link_speed = read_link_speed(&d, "max_link_speed", &v);
		out->current_link_width = read_width(&d, "current_link_width", &v);
		out->max_link_width = read_width(&d, "max_link_width", &v);
	}
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

void pci_link_release(struct pci_link *l)
{
	free_and_null(&l->vendor_id);
	free_and_null(&l->device_id);
	free_and_null(&l->current_link_speed);
	free_and_null(&l->max_link_speed);
}

static int64_t read_aer_total(struct reader_dir *d, const char *file, const char *key,
			      struct strbuf *v)
{
	int64_t n;

	if (reader_dir_value(d, file, v) <= 0)
		return INV_UNKNOWN;
	if (parse_aer_total(v->buf, key, &n) < 0) {
		reader_dir_bad_content(d, file, v->buf);
		return INV_UNKNOWN;
	}
	return n;
}

int pci_read_aer(const struct host_reader *rd, const char *bdf, struct pci_aer *out)
{
	static const char *const files[] = { "aer_dev_fatal", "aer_dev_nonfatal",
					     "aer_dev_correctable", NULL };
	struct strbuf rel = STRBUF_INIT, v = STRBUF_INIT;
	struct reader_dir d;
	int r;

	out->fatal = out->nonfatal = out->correctable = INV_UNKNOWN;
	strbuf_addf(&rel, PCI_DEVICES "/%s", bdf);
	r = reader_dir_open(rd, rel.buf, files, &d);
	if (r > 0) {
		out->fatal = read_aer_total(&d, "aer_dev_fatal", "TOTAL_ERR_FATAL", &v);
		out->nonfatal = read_aer_total(&d, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL", &v);
		out->correctable = read_aer_total(&d, "aer_dev_correctable", "TOTAL_ERR_COR", &v);
	}
	reader_dir_close(&d);
	strbuf_release(&rel);
	strbuf_release(&v);
	return r;
}

int pci_read_local_cpulist(const struct host_reader *rd, const char *bdf, struct strbuf *list)
{
	char *rel = xasprintf(PCI_DEVICES "/%s/local_cpulist", bdf);
	int r = reader_value(rd, rel, list);

	free(rel);
	return r;
}
