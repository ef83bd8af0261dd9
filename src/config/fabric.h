/*
 * fabric.h - which of a node's RDMA ports form its fabric.
 *
 * A rail is one ACTIVE RDMA port that carries traffic between nodes: on
 * RoCE its netdev has carrier (and, where asked, an IPv4 address), and the
 * twin of its physical port (the other PCIe half) qualifies too - using
 * one twin of two halves the bandwidth, so a half-working port is not a
 * rail.  Every ACTIVE port that is not a rail is a stray, with the reason.
 * Rails are in PCI address order, the order NCCL sorts devices in
 * (NCCL_IB_DEVICE_PCI_ORDER), so the list is the same on every node built
 * alike.  Pure: reads only the inventory.
 */
#ifndef SPARKCTL_FABRIC_H
#define SPARKCTL_FABRIC_H

#include "sparkctl.h"
#include "inventory/inventory.h"
#include "lib/ipv4.h"

struct fabric_rail {
	const struct inv_rdma_dev *dev;
	const struct inv_port *port;
	const struct inv_netdev *netdev; /* NULL on InfiniBand */
	const struct inv_rdma_dev *twin; /* NULL when the port has no twin */
	bool has_ipv4;
	struct cidr ipv4; /* the netdev's first IPv4 address and prefix */
	char label[16];	  /* the physical port ("p1"); "" without a twin */
	unsigned half;	  /* 0 for the lower PCI domain of a twin pair, else 1 */
};

struct fabric_stray {
	const struct inv_rdma_dev *dev;
	const struct inv_port *port;
	char *reason;
};

struct fabric {
	bool infiniband; /* the rails are InfiniBand (no RoCE, no netdevs) */
	struct fabric_rail *rails;
	size_t nr_rails;
	struct fabric_stray *strays;
	size_t nr_strays;
	size_t nr_ports; /* physical ports the rails belong to (twins count once) */
};

/* Build the fabric of inv; require_ipv4: a RoCE rail needs an IPv4 address. */
void fabric_build(const struct inventory *inv, bool require_ipv4, struct fabric *f);
void fabric_release(struct fabric *f);

/* The first IPv4 address of a netdev. */
bool netdev_ipv4(const struct inv_netdev *nd, struct cidr *ret);

#endif
