/*
 * derive.h - facts computed from an inventory, never stored in it.
 *
 * Pure functions: they read an inventory (which may come from any host,
 * live, captured or loaded from JSON) and touch nothing else.
 */
#ifndef SPARKCTL_DERIVE_H
#define SPARKCTL_DERIVE_H

#include "sparkctl.h"
#include "inventory/inventory.h"

/* A PCI address "DDDD:BB:DD.F". */
struct pci_bdf {
	unsigned domain, bus, device, function;
};
int parse_bdf(const char *s, struct pci_bdf *ret);

/*
 * The twin of RDMA device d: the other PCIe half of the same physical
 * port (DGX Spark: rocep1s0f1 and roceP2p1s0f1).  Twins belong to one
 * adapter (same phys_switch_id, or same sys_image_guid when the netdev
 * has no switch id), serve the same port (same phys_port_name, or the
 * same PCI function when there is none) and sit on different PCI
 * domains.  Names are never used.  NULL when d has no twin, or when the
 * match is not unique both ways.
 */
const struct inv_rdma_dev *rdma_twin(const struct inventory *inv, const struct inv_rdma_dev *d);

/*
 * A short label for d's physical port, shared by both twins: the
 * phys_port_name ("p1"), else "f<function>".  NULL if d has no twin.
 */
const char *rdma_twin_label(const struct inventory *inv, const struct inv_rdma_dev *d,
			    char buf[16]);

/*
 * The netdev carrying port p of d: the ndev of the port's GID 0 (as
 * ibdev2netdev reads it), else the device's netdev for that port number.
 */
const char *rdma_port_netdev_name(const struct inv_rdma_dev *d, const struct inv_port *p);
const struct inv_netdev *rdma_port_netdev(const struct inventory *inv, const struct inv_rdma_dev *d,
					  const struct inv_port *p);

/* The port's rate in Mb/s from its rate text, or INV_UNKNOWN. */
int64_t port_rate_mbps(const struct inv_port *p);

/* True for an InfiniBand (not Ethernet/RoCE) link layer. */
bool port_is_infiniband(const struct inv_port *p);

/*
 * A fabric port: ACTIVE, and (for RoCE) its netdev has carrier.  These
 * are the ports that carry traffic between nodes.
 */
bool port_is_fabric(const struct inventory *inv, const struct inv_rdma_dev *d,
		    const struct inv_port *p);

/*
 * The RoCE path MTU the kernel derives from a netdev MTU (iboe_get_mtu:
 * the largest IB MTU that fits once 96 bytes of headers are taken off):
 * 4096 for 9000, 1024 for 1500.  INV_UNKNOWN if the MTU is unknown or
 * too small for any.
 */
int64_t roce_mtu_for_netdev_mtu(int64_t mtu);

/* The GID-selection settings NCCL reads from its environment. */
struct nccl_gid_params {
	int gid_index;		 /* NCCL_IB_GID_INDEX: -1 selects dynamically (default) */
	int roce_version;	 /* NCCL_IB_ROCE_VERSION_NUM: 2 */
	int addr_family;	 /* NCCL_IB_ADDR_FAMILY: AF_INET */
	bool has_range;		 /* NCCL_IB_ADDR_RANGE was given and valid */
	uint8_t range[16];	 /* its address (IPv4 in the first 4 bytes) */
	int range_prefix;	 /* its prefix length */
	int routable_flid_index; /* NCCL_IB_ROUTABLE_FLID_GID_INDEX: 1 */
};

/* NCCL's defaults (no variable set). */
void nccl_gid_params_default(struct nccl_gid_params *p);
/*
 * The settings in effect on inv (environment, then NCCL's configuration
 * files), parsed as NCCL parses them (an invalid value falls back to the
 * default).
 */
void nccl_gid_params_from_inventory(struct nccl_gid_params *p, const struct inventory *inv);

/*
 * The GID index NCCL will use on port p, following NCCL's selection
 * (transport/net_ib: ncclIbGetGidIndex): on InfiniBand index 0 or the
 * routable-FLID index; on RoCE the pinned index, else a scan that prefers
 * an address of the requested family, then the requested RoCE version.
 * Returns -1 when the port has no GID table.
 */
int nccl_gid_pick(const struct inv_port *p, const struct nccl_gid_params *params);

/* The GID entry with this index, or NULL (an empty slot). */
const struct inv_gid *port_gid(const struct inv_port *p, unsigned index);

/*
 * Whether PCI function p's link trained below what both ends support, in
 * speed or in width: TRI_UNKNOWN when a speed or width is unknown.
 */
int pci_link_degraded(const struct inv_pci *p);

/*
 * The derived values of the JSON form, one per derived row of the
 * descriptors (schema.c): each computes its value for the object of the
 * scope, from the object and those that hold it.
 */
struct inv_scope {
	const struct inventory *inv;
	const struct inv_scope *outer; /* the object holding this one; NULL at the top */
	const void *obj;
};

/* Room for a derived string that is not stored in the inventory (a GID's IPv4). */
#define INV_DERIVED_TEXT 64

const char *derived_rdma_twin(const struct inv_scope *s, char buf[INV_DERIVED_TEXT]);
int64_t derived_port_rate_mbps(const struct inv_scope *s);
const char *derived_port_netdev(const struct inv_scope *s, char buf[INV_DERIVED_TEXT]);
bool derived_port_fabric(const struct inv_scope *s);
int64_t derived_port_roce_mtu(const struct inv_scope *s);
int64_t derived_port_nccl_gid_index(const struct inv_scope *s);
int64_t derived_gid_roce_version(const struct inv_scope *s);
const char *derived_gid_ipv4(const struct inv_scope *s, char buf[INV_DERIVED_TEXT]);
int derived_pci_link_degraded(const struct inv_scope *s);

#endif
