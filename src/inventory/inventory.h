/*
 * inventory.h - one node's fabric, as plain data.
 *
 * The inventory is what the probe reads from a host (live, or a captured
 * tree under --root) and what 'sparkctl topo --json' writes and --from
 * loads back (docs/inventory.md).  Every consumer - topo, env, doctor -
 * works on this structure only; none of them reads the host.
 *
 * Conventions: a NULL string, a negative integer (INV_UNKNOWN) or a
 * tri-state of TRI_UNKNOWN means the fact could not be read; the reason,
 * when it is not simply "absent", is in problems[].  Facts derived from
 * these (twins, the GID NCCL picks, the RoCE MTU) are not stored: they are
 * computed by derive.h.
 *
 * Ownership: the inventory owns every string and array it points to;
 * inventory_release() frees them all and leaves an empty inventory.
 */
#ifndef SPARKCTL_INVENTORY_H
#define SPARKCTL_INVENTORY_H

#include "sparkctl.h"
#include "lib/strvec.h"

/* The JSON schema version this sparkctl writes and reads. */
#define INVENTORY_SCHEMA_VERSION 2

#define INV_UNKNOWN   ((int64_t)-1)
#define INV_UNLIMITED ((int64_t)-2) /* for resource limits only */

enum tristate {
	TRI_UNKNOWN = -1,
	TRI_NO = 0,
	TRI_YES = 1,
};

/* One entry of a port's GID table (/sys/class/infiniband/D/ports/P/gids/N). */
struct inv_gid {
	unsigned index;
	uint8_t raw[16]; /* the GID in network order */
	char *type;	 /* gid_attrs/types/N as read ("RoCE v2"), NULL if unreadable */
	char *ndev;	 /* gid_attrs/ndevs/N, NULL if none */
};

struct inv_counter {
	char *name;
	int64_t value;
};

struct inv_port {
	unsigned num;	       /* port number, 1 on mlx5 */
	int state;	       /* ports/P/state code: 4 = ACTIVE; INV_UNKNOWN */
	char *state_name;      /* "ACTIVE" */
	int phys_state;	       /* ports/P/phys_state code: 5 = LinkUp */
	char *phys_state_name; /* "LinkUp" */
	char *rate;	       /* ports/P/rate as read: "200 Gb/sec (2X NDR)" */
	char *link_layer;      /* "Ethernet", "InfiniBand" */
	int64_t lid;	       /* ports/P/lid */
	struct inv_gid *gids;  /* sorted by index; empty slots are left out */
	size_t nr_gids;
	struct inv_counter *counters; /* ports/P/counters/, sorted by name */
	size_t nr_counters;
	struct inv_counter *hw_counters; /* ports/P/hw_counters/, sorted by name */
	size_t nr_hw_counters;
};

/* An RDMA device (/sys/class/infiniband/D). */
struct inv_rdma_dev {
	char *name;	       /* "rocep1s0f1", "mlx5_0" */
	char *hca_type;	       /* "MT4129" */
	char *fw_ver;	       /* "28.45.4028" */
	char *board_id;	       /* "NVD0000000087" */
	char *node_guid;       /* "fc4c:ea03:00f9:4231" */
	char *sys_image_guid;  /* shared by the functions of one adapter */
	char *pci_address;     /* "0000:01:00.1", from the device link */
	struct strvec netdevs; /* device/net/ entries, sorted */
	char *phys_port_name;  /* of the (first) netdev: "p1" */
	char *phys_switch_id;  /* of the (first) netdev, shared by one adapter's functions */
	struct inv_port *ports;
	size_t nr_ports;
};

struct inv_addr {
	int family;	     /* AF_INET or AF_INET6 */
	char *address;	     /* "192.168.177.11", "fe80::1" */
	unsigned prefix_len; /* 24 */
};

/* A network interface (/sys/class/net/N). */
struct inv_netdev {
	char *name;
	int64_t ifindex;
	int64_t mtu;
	char *operstate;    /* "up", "down", "unknown", ... */
	int carrier;	    /* tri-state */
	int64_t speed_mbps; /* INV_UNKNOWN when the link is down */
	char *address;	    /* MAC */
	char *driver;	    /* "mlx5_core", from device/driver */
	char *pci_address;  /* from the device link, NULL for virtual devices */
	char *phys_port_name;
	char *phys_switch_id;
	struct inv_addr *addrs; /* IPv4 first, then IPv6, each in kernel order */
	size_t nr_addrs;
	int default_route; /* tri-state: the IPv4 default route leaves through it */
};

/* A PCI function of a NIC (/sys/bus/pci/devices/BDF). */
struct inv_pci {
	char *address;		  /* "0000:01:00.1" */
	char *vendor_id;	  /* "0x15b3" */
	char *device_id;	  /* "0x1021" */
	char *current_link_speed; /* "32.0 GT/s PCIe" as read */
	int64_t current_link_width;
	char *max_link_speed;
	int64_t max_link_width;
	int64_t aer_fatal;	 /* TOTAL_ERR_FATAL of aer_dev_fatal */
	int64_t aer_nonfatal;	 /* TOTAL_ERR_NONFATAL of aer_dev_nonfatal */
	int64_t aer_correctable; /* TOTAL_ERR_COR of aer_dev_correctable */
};

/* Whether an optional library could be used, and why not. */
struct inv_library {
	int available; /* tri-state: TRI_UNKNOWN when never looked for */
	char *reason;  /* why it is not available */
	char *path;    /* the file it was loaded from */
	char *version; /* "2.28.9", "13.0" */
};

struct inv_gpu {
	unsigned index;
	char *name;		    /* "NVIDIA GB10" */
	char *uuid;		    /* "GPU-..." */
	char *pci_bus_id;	    /* "0000000F:01:00.0" as NVML reports it */
	int64_t memory_total_bytes; /* INV_UNKNOWN on unified memory */
	int unified_memory;	    /* tri-state: NVML answered NOT_SUPPORTED for memory */
	int cc_major, cc_minor;	    /* compute capability, INV_UNKNOWN (-1) if unknown */
	int gpudirect_rdma;	    /* tri-state: CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED */
	int dma_buf;		    /* tri-state: CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED */
};

struct inv_gpu_info {
	struct inv_library nvml;
	struct inv_library cuda;
	char *driver_version;	     /* NVML's, "580.95.05" */
	int64_t cuda_driver_version; /* 13000 = 13.0 */
	struct inv_gpu *gpus;
	size_t nr_gpus;
};

/* A kernel module sparkctl cares about and whether it is present. */
enum inv_module_state {
	MODULE_UNKNOWN = -1,
	MODULE_ABSENT = 0,
	MODULE_LOADED = 1,  /* listed in /proc/modules */
	MODULE_BUILTIN = 2, /* not in /proc/modules but present in /sys/module */
};

struct inv_module {
	const char *name; /* one of inventory_watched_modules[] (not owned) */
	enum inv_module_state state;
	char *load_file; /* the modules-load.d file (or /etc/modules) that loads it at boot */
};

struct inv_setting {
	char *key;
	char *value;
	char *file; /* for nccl.conf entries: the file it came from; NULL for the environment */
};

/* A NetworkManager connection profile (keyfile /etc/NetworkManager/system-connections/). */
struct inv_nm_profile {
	char *file;	      /* the keyfile's name */
	char *id;	      /* [connection] id= */
	char *interface_name; /* [connection] interface-name=, NULL: any interface */
	int autoconnect; /* tri-state: [connection] autoconnect= (NetworkManager's default: true) */
	char *ipv4_method; /* [ipv4] method= ("auto" is DHCP), NULL when not set */
};

/* The CPUs as Slurm counts them (probe/cpu_topology.h); INV_UNKNOWN when unread. */
struct inv_cpu {
	int64_t cpus; /* online */
	int64_t sockets;
	int64_t cores_per_socket;
	int64_t threads_per_core;
};

struct inv_system {
	char *hostname;
	char *kernel;			    /* /proc/sys/kernel/osrelease */
	char *arch;			    /* uname machine: "aarch64" */
	char *home;			    /* home of the probing user (where ~/.nccl.conf is) */
	char *node_id;			    /* /etc/sparkctl/node-id: 32 lowercase hex, or NULL */
	char *machine_id;		    /* /etc/machine-id: 32 hex, or NULL */
	struct inv_nm_profile *nm_profiles; /* NetworkManager keyfiles, by file name */
	size_t nr_nm_profiles;
	char *avahi_host_name;	    /* avahi-daemon's process title: "node1-2.local", or NULL */
	char *os_id;		    /* os-release ID: "ubuntu" */
	char *os_version_id;	    /* "24.04" */
	char *os_pretty_name;	    /* "Ubuntu 24.04.3 LTS" */
	char *nvidia_driver;	    /* version from /proc/driver/nvidia/version */
	int nvidia_open_module;	    /* tri-state: "Open Kernel Module" */
	struct inv_module *modules; /* one per watched module, in that order */
	size_t nr_modules;
	struct inv_library nccl;
	int64_t nccl_version_code;     /* ncclGetVersion(): 22809 */
	char *nccl_build_id;	       /* its file's GNU build id, hex */
	struct inv_setting *nccl_conf; /* /etc/nccl.conf then $NCCL_CONF_FILE, file order */
	size_t nr_nccl_conf;
	struct inv_setting *environment; /* NCCL_*, UCX_*, ... of the probing process, sorted */
	size_t nr_environment;
	/* sys/devices/system/cpu */
	struct inv_cpu cpu;
	int64_t memlock_soft; /* RLIMIT_MEMLOCK bytes, INV_UNLIMITED or INV_UNKNOWN */
	int64_t memlock_hard;
	int64_t rmem_max;  /* net.core.rmem_max */
	int64_t wmem_max;  /* net.core.wmem_max */
	int64_t mem_total; /* bytes, from /proc/meminfo */
	int64_t mem_available;
	int64_t cma_total;
};

struct storage_conf; /* storage/storage_conf.h */

/* An NVMe over Fabrics controller (/sys/class/nvme/nvmeX, transport not "pcie"). */
struct inv_nvme_ctrl {
	char *name;	  /* "nvme1" */
	char *transport;  /* "tcp", "rdma", "loop", "fc" */
	char *traddr;	  /* of address: the target's address */
	int64_t trsvcid;  /* of address: the target's port */
	char *src_addr;	  /* of address: the local address the connection leaves from */
	char *host_iface; /* of address: the interface it was bound to (-f), NULL when not */
	char *state;	  /* "live", "connecting", "resetting", "deleting", ... */
	char *subsysnqn;  /* the subsystem's NQN */
	struct strvec namespaces; /* the block devices of its namespaces: "nvme1n1", sorted */
};

/* The planned mount point as /proc/self/mounts has it. */
struct inv_storage_mount {
	int mounted;   /* tri-state: something is mounted there */
	char *device;  /* what: "/dev/nvme1n1" */
	char *fs;      /* "ext4" */
	char *access;  /* "rw" or "ro", from the options */
	char *options; /* as listed */
};

/* The planned mount point's line in /etc/fstab. */
struct inv_storage_fstab {
	int present;   /* tri-state: a line mounts something there */
	char *spec;    /* its first field: "UUID=..." */
	char *fs;      /* its third */
	char *options; /* its fourth */
};

/* One planned volume: its plan and what the node has of it. */
struct inv_storage_volume {
	char *file;		   /* its plan: "/etc/sparkctl/storage.d/mnt-shared.json" */
	struct storage_conf *conf; /* NULL when the file is bad */
	char *conf_error;	   /* why it could not be used */
	char *uuid_device; /* /dev/disk/by-uuid/UUID (the planned UUID) resolved: "/dev/nvme1n1" */
	struct inv_storage_mount mount;
	struct inv_storage_fstab fstab;
	int target_reachable; /* tri-state: TCP connect to the target (live probes only) */
	char *target_error;   /* why not */
};

/* The shared volumes over NVMe/TCP (docs/storage.md). */
struct inv_storage {
	char *hostnqn;			   /* /etc/nvme/hostnqn, first line */
	struct inv_nvme_ctrl *controllers; /* the fabric controllers, by name */
	size_t nr_controllers;
	struct inv_storage_volume *volumes; /* /etc/sparkctl/storage.d/NAME.json, by mount point */
	size_t nr_volumes;
};

/*
 * This node's share of a Slurm cluster (docs/slurm.md): what doctor -H
 * compares across the nodes.  Present only where slurm.conf exists.
 */
struct inv_slurm {
	char *conf;	    /* the slurm.conf read: $SLURM_CONF, else /etc/slurm/slurm.conf */
	char *conf_sha256;  /* SHA-256 of that file, 64 lowercase hex digits */
	char *controller;   /* the first SlurmctldHost (or ControlMachine) name */
	char *munge_socket; /* AuthInfo's socket=, NULL: munge's default */
	char *node_name;    /* the name looked up among the NodeName lines: the short host name */
	int node_listed;    /* tri-state: a NodeName line names it */
	int64_t real_memory_bytes; /* its RealMemory (MiB in slurm.conf), INV_UNKNOWN when unset */
	char *user;		   /* the job user: the user the probe runs as ($USER) */
	int64_t uid, gid;	   /* the user's ids on this node, INV_UNKNOWN when it has none */
	char *user_source;	   /* where they come from: "passwd" (etc/passwd) or "nss" */
};

/* Something the probe could not read or understand, with where and why. */
struct inv_problem {
	char *path;
	char *message;
};

struct inventory {
	char *sparkctl_version; /* of the sparkctl that probed */
	char *source;		/* "live", or "root" for a captured tree */
	char *root;		/* the --root directory, NULL for live */
	struct inv_system sys;
	struct inv_rdma_dev *rdma;
	size_t nr_rdma;
	struct inv_netdev *netdevs;
	size_t nr_netdevs;
	struct inv_pci *pci;
	size_t nr_pci;
	struct inv_gpu_info gpu;
	struct inv_storage *storage; /* NULL: no volume planned and no fabric controller */
	struct inv_slurm *slurm;     /* NULL: no slurm.conf */
	struct inv_problem *problems;
	size_t nr_problems;
};

/* The kernel modules whose state is recorded, NULL-terminated. */
extern const char *const inventory_watched_modules[];

/* Environment variable names (exact) and prefixes (ending in '_') the probe records. */
bool inventory_env_is_recorded(const char *name);

void inventory_init(struct inventory *inv);
void inventory_release(struct inventory *inv);

/* Append a problem; message is formatted. */
void inventory_add_problem(struct inventory *inv, const char *path, const char *fmt, ...)
	ATTR_PRINTF(3, 4);

/* Look-ups by name; NULL when absent. */
const struct inv_rdma_dev *inventory_rdma(const struct inventory *inv, const char *name);
const struct inv_netdev *inventory_netdev(const struct inventory *inv, const char *name);
const struct inv_pci *inventory_pci(const struct inventory *inv, const char *address);
/* The value of an environment variable recorded in the inventory, or NULL. */
const char *inventory_env(const struct inventory *inv, const char *key);
/*
 * The value NCCL will use for key, with NCCL's precedence: the environment,
 * then $NCCL_CONF_FILE (or ~/.nccl.conf), then /etc/nccl.conf - the first
 * that sets it wins.  *ret_source (may be NULL) is "environment" or the
 * file; NULL when nothing sets it.
 */
const char *inventory_nccl_setting(const struct inventory *inv, const char *key,
				   const char **ret_source);

#endif
