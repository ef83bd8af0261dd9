/*
 * nvmet_configfs.h - what the Linux NVMe target (nvmet) and null_blk hold
 * in configfs, read below a root: the ports with their addresses and the
 * subsystems they export, and one subsystem's namespaces and hosts.
 * 'sparkctl storage target' plans what to make or tear down from it.
 *
 * Layout (kernel drivers/nvme/target/configfs.c, drivers/block/null_blk):
 *   NVMET_CONFIGFS_DIR/subsystems/NQN/{attr_allow_any_host,
 *       allowed_hosts/HOSTNQN -> hosts/HOSTNQN, namespaces/NSID/{device_path,enable}}
 *   NVMET_CONFIGFS_DIR/hosts/HOSTNQN
 *   NVMET_CONFIGFS_DIR/ports/ID/{addr_trtype,addr_adrfam,addr_traddr,addr_trsvcid,
 *       subsystems/NQN -> subsystems/NQN}
 *   NULLB_CONFIGFS_DIR/NAME/{size,memory_backed,blocksize,power}  -> /dev/NAME
 */
#ifndef SPARKCTL_NVMET_CONFIGFS_H
#define SPARKCTL_NVMET_CONFIGFS_H

#include "sparkctl.h"
#include "lib/rootfs.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* Where configfs is mounted, relative to the root. */
#define CONFIGFS_MOUNT_DIR   "sys/kernel/config"
/* Relative to the root; present once the nvmet (null_blk) module is loaded. */
#define NVMET_CONFIGFS_DIR   "sys/kernel/config/nvmet"
#define NULLB_CONFIGFS_DIR   "sys/kernel/config/nullb"
/* Present once nvmet-tcp is loaded (nvmet alone makes NVMET_CONFIGFS_DIR). */
#define NVMET_TCP_MODULE_DIR "sys/module/nvmet_tcp"
/* The initiator's side: present once nvme-tcp is loaded (storage connect). */
#define NVME_TCP_MODULE_DIR  "sys/module/nvme_tcp"

struct nvmet_port_state {
	char *id;			 /* the directory's name */
	char *trtype, *traddr, *trsvcid; /* "" when unreadable */
	struct strvec subsystems;	 /* the NQNs linked below ports/ID/subsystems */
};

struct nvmet_namespace_state {
	char *nsid;
	char *device_path; /* "" when unset */
};

struct nvmet_state {
	bool nvmet_present;    /* NVMET_CONFIGFS_DIR exists */
	bool nvmet_tcp_loaded; /* NVMET_TCP_MODULE_DIR exists */
	bool nullb_present;    /* NULLB_CONFIGFS_DIR exists */
	struct nvmet_port_state *ports;
	size_t nr_ports;
	struct strvec subsystems; /* every subsystem's NQN */
	struct strvec hosts;	  /* hosts/ */
	struct strvec nullb;	  /* null_blk devices made through configfs */
	/* The subsystem asked about (nqn of probe_nvmet_state()): */
	bool subsystem_present;
	struct nvmet_namespace_state *namespaces;
	size_t nr_namespaces;
	struct strvec allowed_hosts;	       /* its allowed_hosts/ */
	struct strvec hosts_allowed_elsewhere; /* hosts another subsystem allows */
};

void nvmet_state_init(struct nvmet_state *st);
void nvmet_state_release(struct nvmet_state *st);
/*
 * Read the target's configfs below root, with the details of subsystem
 * nqn (may be NULL).  Missing directories are an empty state (module not
 * loaded); another failure (EACCES, EIO) is -errno with a message in err.
 */
int probe_nvmet_state(const struct rootfs *root, const char *nqn, struct nvmet_state *st,
		      struct strbuf *err);

#endif
