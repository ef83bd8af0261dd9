/*
 * block_path.h - which block device holds a filesystem, and for NVMe how
 * it is reached: the controller's transport ("tcp", "pcie", "rdma") and,
 * over a fabric, the local address it connects from (src_addr).  For
 * 'sparkctl storage bench', which names each path's protocol and judges
 * an NVMe/TCP path against the line rate of its interface.
 *
 * From sysfs below a root: sys/dev/block/MAJ:MIN (the filesystem's
 * st_dev) names the disk or partition; a partition's disk is its parent
 * directory; sys/class/block/DISK/device is the NVMe controller (nvmeX, with
 * transport and address), or with native multipath the subsystem
 * (nvme-subsysN), whose nvmeX entries are its controllers.
 */
#ifndef SPARKCTL_PROBE_BLOCK_PATH_H
#define SPARKCTL_PROBE_BLOCK_PATH_H

#include <sys/types.h>

#include "sparkctl.h"
#include "lib/rootfs.h"

struct block_path {
	char *disk;	  /* "nvme1n1", "vda"; NULL: no block device (tmpfs, NFS) */
	char *controller; /* "nvme1" for an NVMe disk, else NULL */
	char *transport;  /* the controller's: "tcp", "pcie", "rdma", "loop"; NULL */
	char *src_addr;	  /* a fabric controller's local address, NULL when not given */
	char *traddr;	  /* and the target's */
};

void block_path_init(struct block_path *bp);
void block_path_release(struct block_path *bp);

/*
 * What holds the filesystem of device number dev: 1 when the disk was
 * found, 0 when dev is no block device there (bp->disk NULL), -errno.
 */
int block_path_read(const struct rootfs *root, dev_t dev, struct block_path *bp);
/* The same for the disk named disk ("nvme0n1"): 1, or -errno. */
int block_path_read_disk(const struct rootfs *root, const char *disk, struct block_path *bp);

/*
 * The line rate (Mb/s, -1 unknown: a link down, a virtual device) and
 * MTU (-1 unknown) of netdev name.
 */
void block_path_netdev_rate(const struct rootfs *root, const char *name, int64_t *speed_mbps,
			    int64_t *mtu);

/* The netdev that holds IPv4 or IPv6 address addr in this namespace, or NULL (a new string). */
char *block_path_netdev_of_address(const char *addr);

#endif
