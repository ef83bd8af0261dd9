/*
 * pci_functions.h - PCI functions, from sys/bus/pci/devices (reader.h says
 * how reads answer and fail).  A function is named by its address,
 * "0000:01:00.1".
 */
#ifndef SPARKCTL_PROBE_PCI_FUNCTIONS_H
#define SPARKCTL_PROBE_PCI_FUNCTIONS_H

#include "sparkctl.h"
#include "probe/reader.h"

#define PCI_DEVICES "sys/bus/pci/devices"

/* The PCI functions' addresses, sorted: their number. */
int pci_list_functions(const struct host_reader *rd, struct strvec *addrs);

/* What the function is and how its link trained; NULL and INV_UNKNOWN where not known. */
struct pci_link {
	char *vendor_id;	  /* "0x15b3" */
	char *device_id;	  /* "0x1021" */
	char *current_link_speed; /* "32.0 GT/s PCIe" as read, or "Unknown" */
	char *max_link_speed;
	int64_t current_link_width;
	int64_t max_link_width;
};

/* 1 when the function's directory was read, 0 when it is absent. */
int pci_read_link(const struct host_reader *rd, const char *bdf, struct pci_link *out);
void pci_link_release(struct pci_link *l);

/* The AER counts of the function (the TOTAL_ line of each file); INV_UNKNOWN where not known. */
struct pci_aer {
	int64_t fatal;	     /* TOTAL_ERR_FATAL of aer_dev_fatal */
	int64_t nonfatal;    /* TOTAL_ERR_NONFATAL of aer_dev_nonfatal */
	int64_t correctable; /* TOTAL_ERR_COR of aer_dev_correctable */
};

/* 1 when the function's directory was read, 0 when it is absent. */
int pci_read_aer(const struct host_reader *rd, const char *bdf, struct pci_aer *out);

/* The CPUs close to the function (local_cpulist), as the kernel lists them: 1, or 0 when absent. */
int pci_read_local_cpulist(const struct host_reader *rd, const char *bdf, struct strbuf *list);

#endif
