/*
 * schema.c - the inventory's JSON form: one descriptor per struct, its
 * rows in the order the keys are written (codec.h).  The doc strings are
 * the "meaning" column of docs/inventory.md.
 */
#include "sparkctl.h"

#include <sys/socket.h>
#include <arpa/inet.h>

#include "inventory/codec.h"
#include "storage/storage_conf.h"

/*
 * offsetof(S, m), refused at compile time unless S's member m has type T.
 * Each descriptor's rows are written between "#define S struct ..." and
 * "#undef S".
 */
#define MEMBER(m, T)                                                                               \
	(offsetof(S, m) +                                                                          \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((S *)0)->m), T) ? 1 : -1]))

#define ROW(k, t, off, ...)                                                                        \
	{                                                                                          \
		.key = k, .type = t, .offset = off, __VA_ARGS__                                    \
	}
#define STRING(k, m, ...) ROW(k, INV_STRING, MEMBER(m, char *), __VA_ARGS__)
#define INT(k, m, ...)	  ROW(k, INV_INT, MEMBER(m, int64_t), __VA_ARGS__)
#define INT32(k, m, ...)  ROW(k, INV_INT32, MEMBER(m, int), __VA_ARGS__)
#define UINT(k, m, lo, hi, msg, ...)                                                               \
	ROW(k, INV_UINT, MEMBER(m, unsigned), .min = lo, .max = hi, .message = msg, __VA_ARGS__)
#define TRI(k, m, ...)	 ROW(k, INV_TRI, MEMBER(m, int), __VA_ARGS__)
#define LIMIT(k, m, ...) ROW(k, INV_LIMIT, MEMBER(m, int64_t), __VA_ARGS__)
#define ENUM(k, m, n, ...)                                                                         \
	ROW(k, INV_ENUM,                                                                           \
	    offsetof(S, m) + 0 * sizeof(char[sizeof(((S *)0)->m) == sizeof(int) ? 1 : -1]),        \
	    .names = n, __VA_ARGS__)
#define GID(k, m, msg, ...)    ROW(k, INV_GID, MEMBER(m, uint8_t[16]), .message = msg, __VA_ARGS__)
#define STRVEC(k, m, ...)      ROW(k, INV_STRVEC, MEMBER(m, struct strvec), __VA_ARGS__)
#define NAME(m)		       ROW(NULL, INV_NAME, MEMBER(m, const char *), .doc = NULL)
#define TAG(m)		       ROW(NULL, INV_TAG, MEMBER(m, int), .doc = NULL)
#define CONST(k, v, ...)       ROW(k, INV_CONST, 0, .min = v, __VA_ARGS__)
/* A nested object of desc d: at member m, or (HERE) on the same struct. */
#define OBJECT(k, m, d, ...)   ROW(k, INV_OBJECT, offsetof(S, m), .desc = &d, __VA_ARGS__)
#define OBJECT_HERE(k, d, ...) ROW(k, INV_OBJECT, 0, .desc = &d, __VA_ARGS__)
/* A nested object or null: member m points to it. */
#define OPTIONAL(k, m, d, ...) ROW(k, INV_OPTIONAL, offsetof(S, m), .desc = &d, __VA_ARGS__)
#define INLINE(m, d)	       ROW(NULL, INV_INLINE, offsetof(S, m), .desc = &d, .doc = NULL)
/* Arrays and maps of member m, counted by member nr_m. */
#define ARRAY(k, m, d, ...)                                                                        \
	ROW(k, INV_ARRAY, offsetof(S, m), .count_offset = MEMBER(nr_##m, size_t), .desc = &d,      \
	    __VA_ARGS__)
#define MAP(k, m, d, v, ...)                                                                       \
	ROW(k, INV_MAP, offsetof(S, m), .count_offset = MEMBER(nr_##m, size_t), .desc = &d,        \
	    .value = v, __VA_ARGS__)
#define DERIVED_STRING(k, fn, ...) ROW(k, INV_DERIVED_STRING, 0, .derive.str = fn, __VA_ARGS__)
#define DERIVED_INT(k, fn, ...)	   ROW(k, INV_DERIVED_INT, 0, .derive.num = fn, __VA_ARGS__)
#define DERIVED_TRI(k, fn, ...)	   ROW(k, INV_DERIVED_TRI, 0, .derive.tri = fn, __VA_ARGS__)
#define DERIVED_BOOL(k, fn, ...)   ROW(k, INV_DERIVED_BOOL, 0, .derive.flag = fn, __VA_ARGS__)

/* The descriptor of struct type: its table in docs/inventory.md (or NULL), rows, check. */
#define DESC(name, tbl, type, rows, chk)                                                           \
	const struct inv_desc name = { .table = tbl,                                               \
				       .size = sizeof(type),                                       \
				       .fields = rows,                                             \
				       .nr_fields = ARRAY_SIZE(rows),                              \
				       .check = chk }

/* ---- the host: system ------------------------------------------------------ */

#define S struct inv_system
static const struct inv_field os_fields[] = {
	STRING("id", os_id, .doc = "`ID` (\"ubuntu\")"),
	STRING("version_id", os_version_id, .doc = "`VERSION_ID` (\"24.04\")"),
	STRING("pretty_name", os_pretty_name, .doc = "`PRETTY_NAME` (\"Ubuntu 24.04.3 LTS\")"),
};
static DESC(os_desc, NULL, S, os_fields, NULL);

static const struct inv_field nvidia_driver_fields[] = {
	STRING("version", nvidia_driver, .doc = "the driver's version (\"580.95.05\")"),
	TRI("open_kernel_module", nvidia_open_module,
	    .doc = "it is the open kernel module (\"Open Kernel Module\")"),
};
static DESC(nvidia_driver_desc, NULL, S, nvidia_driver_fields, NULL);
#undef S

#define S struct inv_module
static const struct inv_enum_name module_states[] = {
	{ MODULE_LOADED, "loaded" },
	{ MODULE_BUILTIN, "builtin" },
	{ MODULE_ABSENT, "absent" },
	{ 0, NULL },
};
/* Two maps of one array: "modules" (name -> state) and "modules_load" (name -> file). */
static const struct inv_field module_fields[] = {
	NAME(name),
	ENUM("state", state, module_states, .doc = NULL),
	STRING("load_file", load_file, .doc = NULL),
};
static DESC(module_desc, NULL, S, module_fields, NULL);
#undef S

#define S struct inv_library
static const struct inv_field library_fields[] = {
	TRI("available", available, .doc = "it was found and could be used (null: not looked for)"),
	STRING("version", version, .doc = "its version (\"2.28.9\", \"580.95.05\", \"13.0\")"),
	STRING("path", path, .doc = "the file it was loaded from"),
	STRING("reason", reason, .doc = "why it is not available"),
};
static DESC(library_desc, NULL, S, library_fields, NULL);
#undef S

#define S struct inv_system
static const struct inv_field nccl_fields[] = {
	INLINE(nccl, library_desc),
	INT("version_code", nccl_version_code, .doc = "`ncclGetVersion()`: 22809 for 2.28.9"),
	STRING("build_id", nccl_build_id,
	       .doc = "the GNU build id of its file (hex): two builds of one version differ"),
};
static DESC(nccl_desc, NULL, S, nccl_fields, NULL);

static const struct inv_field limits_fields[] = {
	LIMIT("memlock_soft", memlock_soft, .doc = "RLIMIT_MEMLOCK's soft limit in bytes"),
	LIMIT("memlock_hard", memlock_hard, .doc = "its hard limit"),
};
static DESC(limits_desc, NULL, S, limits_fields, NULL);

static const struct inv_field sysctl_fields[] = {
	INT("net.core.rmem_max", rmem_max, .doc = "`/proc/sys/net/core/rmem_max`"),
	INT("net.core.wmem_max", wmem_max, .doc = "`/proc/sys/net/core/wmem_max`"),
};
static DESC(sysctl_desc, NULL, S, sysctl_fields, NULL);

static const struct inv_field memory_fields[] = {
	INT("memory_total_bytes", mem_total, .v1_key = "mem_total_bytes", .doc = "`MemTotal`"),
	INT("memory_available_bytes", mem_available, .v1_key = "mem_available_bytes",
	    .doc = "`MemAvailable`"),
	INT("cma_total_bytes", cma_total, .doc = "`CmaTotal` (absent means 0)"),
};
static DESC(memory_desc, NULL, S, memory_fields, NULL);
#undef S

#define S struct inv_cpu
static const struct inv_field cpu_fields[] = {
	INT("cpus", cpus, .doc = "the online CPUs (`online`)"),
	INT("sockets", sockets, .doc = "distinct `topology/physical_package_id` of those CPUs"),
	INT("cores_per_socket", cores_per_socket,
	    .doc = "their cores (distinct `topology/thread_siblings_list`) per socket"),
	INT("threads_per_core", threads_per_core, .doc = "CPUs per core"),
};
static DESC(cpu_desc, NULL, S, cpu_fields, NULL);
#undef S

#define S struct inv_setting
static const char *setting_check(const void *obj, const char **what)
{
	const struct inv_setting *s = obj;

	*what = "an entry needs a key and a value";
	return !s->key || !s->value ? "key" : NULL;
}

static const struct inv_field nccl_conf_fields[] = {
	STRING("file", file, .doc = "the file that sets it"),
	STRING("key", key, .doc = "the variable (`NCCL_IB_HCA`); an entry has a key and a value"),
	STRING("value", value, .doc = "its value"),
};
static DESC(nccl_conf_desc, NULL, S, nccl_conf_fields, setting_check);

static const struct inv_field environment_fields[] = {
	STRING("key", key, .doc = NULL),
	STRING("value", value, .flags = INV_REQUIRED, .doc = NULL),
};
static DESC(environment_desc, NULL, S, environment_fields, NULL);
#undef S

#define S struct inv_nm_profile
static const struct inv_field nm_profile_fields[] = {
	STRING("file", file,
	       .doc = "the keyfile's name in `/etc/NetworkManager/system-connections/`"),
	STRING("id", id, .doc = "`[connection] id=`"),
	STRING("interface_name", interface_name,
	       .doc = "`[connection] interface-name=` (null: any interface)"),
	TRI("autoconnect", autoconnect,
	    .doc = "`[connection] autoconnect=` (NetworkManager's default when absent: true)"),
	STRING("ipv4_method", ipv4_method, .doc = "`[ipv4] method=` (`auto` is DHCP)"),
};
static DESC(nm_profile_desc, NULL, S, nm_profile_fields, NULL);
#undef S

#define S struct inv_system
static const struct inv_field system_fields[] = {
	STRING("hostname", hostname, .doc = "`/proc/sys/kernel/hostname`"),
	STRING("kernel", kernel, .doc = "`/proc/sys/kernel/osrelease`"),
	STRING("arch", arch, .doc = "`uname -m` (captured trees: `.sparkctl/host.json`)"),
	STRING("home", home, .doc = "home of the probing user (where `~/.nccl.conf` is read)"),
	STRING("node_id", node_id,
	       .doc = "`/etc/sparkctl/node-id`: the cluster-node id (32 lowercase hex digits; "
		      "null when absent or malformed)"),
	STRING("machine_id", machine_id,
	       .doc = "`/etc/machine-id` (32 hex digits; null when absent or malformed); Sparks "
		      "may ship with the same one"),
	OBJECT_HERE("os", os_desc, .doc = "`/etc/os-release`"),
	OBJECT_HERE("nvidia_driver", nvidia_driver_desc, .doc = "`/proc/driver/nvidia/version`"),
	MAP("modules", modules, module_desc, 1, .keys = inventory_watched_modules,
	    .doc = "`\"loaded\"` (in `/proc/modules`), `\"builtin\"` (only in `/sys/module`), "
		   "`\"absent\"`"),
	MAP("modules_load", modules, module_desc, 2, .keys = inventory_watched_modules,
	    .flags = INV_OMIT_NULL,
	    .doc = "the file that loads it at boot (`/etc/modules`, `/etc/modules-load.d/*.conf`, "
		   "...); those that no file loads are left out"),
	OBJECT_HERE("nccl", nccl_desc, .doc = "`libnccl.so.2` through `dlopen`"),
	ARRAY("nccl_conf", nccl_conf, nccl_conf_desc,
	      .doc = "the entries of `$NCCL_CONF_FILE` (else `~/.nccl.conf`) then "
		     "`/etc/nccl.conf`, parsed as NCCL parses them"),
	MAP("environment", environment, environment_desc, 1,
	    .doc = "the probing process's `NCCL_*`, `UCX_*`, `GLOO_SOCKET_IFNAME`, "
		   "`TP_SOCKET_IFNAME`, `OMPI_MCA_btl_tcp_if_include`/`_exclude`, "
		   "`CUDA_VISIBLE_DEVICES`, `LD_LIBRARY_PATH`, `SLURM_CONF` (nothing else is "
		   "recorded)"),
	OBJECT_HERE("limits", limits_desc, .doc = "the probing process's resource limits"),
	OBJECT_HERE("sysctl", sysctl_desc, .doc = "socket buffer limits"),
	OBJECT_HERE("memory", memory_desc, .doc = "`/proc/meminfo`"),
	OBJECT("cpu", cpu, cpu_desc,
	       .doc = "`/sys/devices/system/cpu`: the CPUs as Slurm counts them (`slurmd -C`)"),
	ARRAY("network_manager", nm_profiles, nm_profile_desc,
	      .doc = "the NetworkManager connection profiles "
		     "(`/etc/NetworkManager/system-connections/*.nmconnection`)"),
	STRING("avahi_host_name", avahi_host_name,
	       .doc = "the host name avahi-daemon holds, from its process title in "
		      "`/proc/PID/cmdline` (`avahi-daemon: running [NAME]`, or `registering "
		      "[NAME]` while it probes): `HOSTNAME-2.local` after a name conflict; null "
		      "when no avahi-daemon runs (in this network namespace), while it starts "
		      "up, or when its processes are hidden (`hidepid`)"),
};
static DESC(system_desc, "system", S, system_fields, NULL);
#undef S

/* ---- RDMA devices ------------------------------------------------------------ */

#define S struct inv_gid
static const struct inv_field gid_fields[] = {
	UINT("index", index, 0, 65535, "expected a GID index", .doc = "N of `gids/N`"),
	GID("gid", raw, "expected a GID such as fe80:0000:0000:0000:0000:0000:0000:0001",
	    .doc = "the GID in the kernel's form, 8 groups"),
	STRING("type", type, .doc = "`gid_attrs/types/N` (\"IB/RoCE v1\", \"RoCE v2\")"),
	STRING("ndev", ndev, .doc = "`gid_attrs/ndevs/N`"),
	DERIVED_INT("roce_version", derived_gid_roce_version, .doc = "from `type`: 1, 2"),
	DERIVED_STRING("ipv4", derived_gid_ipv4, .doc = "the address of an IPv4-mapped GID"),
};
static DESC(gid_desc, NULL, S, gid_fields, NULL);
#undef S

#define S struct inv_counter
static const struct inv_field counter_fields[] = {
	STRING("name", name, .doc = NULL),
	INT("value", value, .flags = INV_REQUIRED, .doc = NULL),
};
static DESC(counter_desc, NULL, S, counter_fields, NULL);
#undef S

#define S struct inv_port
static const struct inv_field port_fields[] = {
	UINT("port", num, 1, 255, "expected a port number (1-255)", .doc = "the port number"),
	STRING("state", state_name, .doc = "`ports/P/state` (\"4: ACTIVE\" → `\"ACTIVE\"`)"),
	INT32("state_code", state, .doc = "`ports/P/state` (\"4: ACTIVE\" → 4)"),
	STRING("phys_state", phys_state_name, .doc = "`ports/P/phys_state` (\"5: LinkUp\")"),
	INT32("phys_state_code", phys_state, .doc = "`ports/P/phys_state` (\"5: LinkUp\" → 5)"),
	STRING("rate", rate, .doc = "`ports/P/rate` as read (\"200 Gb/sec (2X NDR)\")"),
	STRING("link_layer", link_layer, .doc = "`Ethernet` or `InfiniBand`"),
	INT("lid", lid, .doc = "`ports/P/lid`"),
	DERIVED_INT("rate_gbps", derived_port_rate_mbps, .flags = INV_MBPS_AS_GBPS,
		    .doc = "from `rate`, in Gb/s"),
	DERIVED_STRING("netdev", derived_port_netdev,
		       .doc = "the netdev of the port (`gid_attrs/ndevs/0`, as `ibdev2netdev` "
			      "reads it)"),
	DERIVED_BOOL("fabric", derived_port_fabric,
		     .doc = "ACTIVE and, for RoCE, the netdev has carrier"),
	DERIVED_INT("roce_mtu", derived_port_roce_mtu,
		    .doc = "the RoCE path MTU the netdev MTU allows (9000 → 4096, 1500 → 1024)"),
	DERIVED_INT("nccl_gid_index", derived_port_nccl_gid_index,
		    .doc = "the GID index NCCL ≥ 2.21 selects with its defaults (RoCE v2, IPv4) — "
			   "the GID picker of NCCL's `net_ib`, re-implemented"),
	ARRAY("gids", gids, gid_desc, .doc = "the non-empty entries of the GID table"),
	MAP("counters", counters, counter_desc, 1,
	    .doc = "`ports/P/counters/*` (name → value; `port_*_data` count 4-byte words)"),
	MAP("hw_counters", hw_counters, counter_desc, 1,
	    .doc = "`ports/P/hw_counters/*` (mlx5: retransmits, CNPs, ...)"),
};
static DESC(port_desc, "ports", S, port_fields, NULL);
#undef S

#define S struct inv_rdma_dev
static const struct inv_field rdma_fields[] = {
	STRING("name", name, .flags = INV_REQUIRED, .message = "every RDMA device needs a name",
	       .doc = "`rocep1s0f1`, `mlx5_0`"),
	STRING("hca_type", hca_type, .doc = "the device's `hca_type` (`MT4129`)"),
	STRING("fw_ver", fw_ver, .doc = "the device's `fw_ver` (`28.45.4028`)"),
	STRING("board_id", board_id, .doc = "the device's `board_id` (`NVD0000000087`)"),
	STRING("node_guid", node_guid, .doc = "as sysfs prints it (`fc4c:ea03:00f9:4231`)"),
	STRING("sys_image_guid", sys_image_guid,
	       .doc = "as sysfs prints it; shared by the functions of one adapter"),
	STRING("pci_address", pci_address, .doc = "target of the `device` link (`0000:01:00.1`)"),
	STRVEC("netdevs", netdevs, .doc = "entries of `device/net/`"),
	STRING("phys_port_name", phys_port_name, .doc = "of the first netdev (`p1`)"),
	STRING("phys_switch_id", phys_switch_id, .doc = "of the first netdev (`690e82000347bb4c`)"),
	DERIVED_STRING("twin", derived_rdma_twin,
		       .doc = "the other PCIe half of the same physical port (same adapter — "
			      "`phys_switch_id`, else `sys_image_guid` — same `phys_port_name`, "
			      "else same PCI function, different PCI domain; unique both ways)"),
	ARRAY("ports", ports, port_desc, .doc = "`ports/P`, below"),
};
static DESC(rdma_desc, "rdma_devices", S, rdma_fields, NULL);
#undef S

/* ---- network interfaces and PCI functions ------------------------------------ */

#define S struct inv_addr
static const char *addr_check(const void *obj, const char **what)
{
	const struct inv_addr *a = obj;
	unsigned char bin[16];

	*what = "not an address of its family";
	if (inet_pton(a->family, a->address, bin) != 1 ||
	    a->prefix_len > (a->family == AF_INET ? 32u : 128u))
		return "address";
	return NULL;
}

static const struct inv_field addr_fields[] = {
	TAG(family),
	STRING("address", address, .flags = INV_REQUIRED, .doc = "`192.168.177.11`, `fe80::1`"),
	UINT("prefix_len", prefix_len, 0, 128, "expected a prefix length",
	     .doc = "its prefix length (24)"),
};
static DESC(addr_desc, NULL, S, addr_fields, addr_check);
#undef S

/* Any fault in an address is reported as the format of the entries. */
#define ADDR_ENTRIES "expected entries {\"address\": ..., \"prefix_len\": ...}"

#define S struct inv_netdev
static const struct inv_field netdev_fields[] = {
	STRING("name", name, .flags = INV_REQUIRED, .message = "every netdev needs a name",
	       .doc = "`/sys/class/net/N`"),
	INT("ifindex", ifindex, .doc = "`ifindex`"),
	INT("mtu", mtu, .doc = "`mtu`"),
	STRING("operstate", operstate, .doc = "`operstate` (\"up\", \"down\", \"unknown\", ...)"),
	TRI("carrier", carrier,
	    .doc = "`carrier` (null when the interface is administratively down)"),
	INT("speed_gbps", speed_mbps, .flags = INV_MBPS_AS_GBPS, .v1_key = "speed_mbps",
	    .doc = "`speed` in Gb/s (null when the link is down or the driver does not say)"),
	STRING("address", address, .doc = "`address`: the MAC address"),
	STRING("driver", driver, .doc = "basename of `device/driver`"),
	STRING("pci_address", pci_address, .doc = "target of `device` when it is a PCI function"),
	STRING("phys_port_name", phys_port_name, .doc = "when the driver reports it"),
	STRING("phys_switch_id", phys_switch_id, .doc = "when the driver reports it"),
	TRI("default_route", default_route,
	    .doc = "an IPv4 default route leaves through it (`/proc/net/route`)"),
	ARRAY("ipv4", addrs, addr_desc, .tag = AF_INET, .message = ADDR_ENTRIES,
	      .doc = "its IPv4 addresses in the kernel's order (live: rtnetlink; captured: "
		     "`.sparkctl/ip-address.json`)"),
	ARRAY("ipv6", addrs, addr_desc, .tag = AF_INET6, .message = ADDR_ENTRIES,
	      .doc = "its IPv6 addresses, likewise"),
};
static DESC(netdev_desc, "netdevs", S, netdev_fields, NULL);
#undef S

#define S struct inv_pci
static const struct inv_field pci_fields[] = {
	STRING("address", address, .flags = INV_REQUIRED,
	       .message = "every PCI function needs an address", .doc = "`0000:01:00.1`"),
	STRING("vendor_id", vendor_id, .doc = "`vendor` (`0x15b3`)"),
	STRING("device_id", device_id, .doc = "`device` (`0x1021`)"),
	STRING("current_link_speed", current_link_speed,
	       .doc = "`current_link_speed` as read (\"32.0 GT/s PCIe\")"),
	INT("current_link_width", current_link_width, .doc = "`current_link_width`"),
	STRING("max_link_speed", max_link_speed, .doc = "`max_link_speed` as read"),
	INT("max_link_width", max_link_width, .doc = "`max_link_width`"),
	INT("aer_fatal", aer_fatal, .doc = "the `TOTAL_ERR_FATAL` line of `aer_dev_fatal`"),
	INT("aer_nonfatal", aer_nonfatal,
	    .doc = "the `TOTAL_ERR_NONFATAL` line of `aer_dev_nonfatal`"),
	INT("aer_correctable", aer_correctable,
	    .doc = "the `TOTAL_ERR_COR` line of `aer_dev_correctable`"),
	DERIVED_TRI("link_degraded", derived_pci_link_degraded,
		    .doc = "trained below the maximum speed or width"),
};
static DESC(pci_desc, "pci_functions", S, pci_fields, NULL);
#undef S

/* ---- GPUs -------------------------------------------------------------------- */

#define S struct inv_gpu
static const struct inv_field gpu_fields[] = {
	UINT("index", index, 0, INT_MAX, "expected a GPU index", .doc = "NVML's index"),
	STRING("name", name, .doc = "\"NVIDIA GB10\""),
	STRING("uuid", uuid, .doc = "\"GPU-...\""),
	STRING("pci_bus_id", pci_bus_id, .doc = "as NVML writes it (\"0000000F:01:00.0\")"),
	INT("memory_total_bytes", memory_total_bytes, .doc = "null on unified memory"),
	TRI("unified_memory", unified_memory,
	    .doc = "NVML answered NOT_SUPPORTED for memory (GB10)"),
	INT32("cc_major", cc_major, .doc = "compute capability, major"),
	INT32("cc_minor", cc_minor, .doc = "compute capability, minor"),
	TRI("gpudirect_rdma_supported", gpudirect_rdma, .doc = "CUDA device attribute 116"),
	TRI("dma_buf_supported", dma_buf, .doc = "CUDA device attribute 124"),
};
static DESC(gpu_desc, "devices", S, gpu_fields, NULL);
#undef S

#define S struct inv_gpu_info
static const struct inv_field gpu_info_fields[] = {
	OBJECT("nvml", nvml, library_desc, .doc = "`libnvidia-ml.so.1` through `dlopen`"),
	OBJECT("cuda", cuda, library_desc, .doc = "`libcuda.so.1` through `dlopen`"),
	STRING("driver_version", driver_version, .doc = "NVML's driver version"),
	INT("cuda_driver_version", cuda_driver_version, .doc = "13000 for CUDA 13.0"),
	ARRAY("devices", gpus, gpu_desc, .doc = "NVML's devices, below"),
};
static DESC(gpu_info_desc, "gpu", S, gpu_info_fields, NULL);
#undef S

/* ---- storage ---------------------------------------------------------------- */

static const struct inv_enum_name storage_fs_names[] = {
	{ STORAGE_FS_EXT4, "ext4" },
	{ STORAGE_FS_XFS, "xfs" },
	{ 0, NULL },
};

static const struct inv_enum_name storage_access_names[] = {
	{ STORAGE_ACCESS_RO, "ro" },
	{ STORAGE_ACCESS_RW, "rw" },
	{ 0, NULL },
};

#define S struct storage_node
static const struct inv_field storage_node_fields[] = {
	STRING("name", name, .doc = "a node of the plan"),
	ENUM("access", access, storage_access_names,
	     .doc = "`\"rw\"` (the one writer) or `\"ro\"`"),
};
static DESC(storage_node_desc, NULL, S, storage_node_fields, NULL);
#undef S

#define S struct storage_conf
static const struct inv_field storage_target_fields[] = {
	STRING("address", target_address, .doc = "the target's address"),
	UINT("port", target_port, 1, 65535, "expected a port number (1-65535)",
	     .doc = "its port (4420)"),
};
static DESC(storage_target_desc, NULL, S, storage_target_fields, NULL);

static const struct inv_field storage_conf_fields[] = {
	OBJECT_HERE("target", storage_target_desc, .doc = "the NVMe/TCP target"),
	STRING("nqn", nqn, .doc = "the subsystem's NQN"),
	STRING("mount", mount, .doc = "where the volume is mounted"),
	ENUM("fs", fs, storage_fs_names, .doc = "its file system"),
	STRING("uuid", uuid, .doc = "the file system's UUID"),
	STRING("interface", interface,
	       .doc = "the interface the connection leaves by (null: the route decides)"),
	STRING("unit", unit, .doc = "the systemd unit that connects the volume at boot"),
	STRING("node", node, .doc = "this node's name in the plan"),
	ARRAY("nodes", nodes, storage_node_desc, .doc = "every node of the plan"),
};
static DESC(storage_conf_desc, NULL, S, storage_conf_fields, NULL);
#undef S

#define S struct inv_nvme_ctrl
static const struct inv_field nvme_ctrl_fields[] = {
	STRING("name", name, .doc = "`nvmeX` of `/sys/class/nvme/nvmeX`"),
	STRING("transport", transport, .doc = "`transport`: \"tcp\", \"rdma\", \"loop\""),
	STRING("traddr", traddr, .doc = "`address`'s `traddr=`: the target's address"),
	INT("trsvcid", trsvcid, .doc = "`address`'s `trsvcid=`: the target's port"),
	STRING("src_addr", src_addr,
	       .doc = "`address`'s `src_addr=`: the local address the connection leaves from"),
	STRING("host_iface", host_iface,
	       .doc = "`address`'s `host_iface=`: the interface it was bound to, if any"),
	STRING("state", state, .doc = "`state`: \"live\", \"connecting\", \"resetting\", ..."),
	STRING("subsysnqn", subsysnqn, .doc = "`subsysnqn`: the subsystem's NQN"),
	STRVEC("namespaces", namespaces,
	       .doc = "the block devices of its namespaces (`nvme1n1`; `nvme1c1n1` counts as "
		      "`nvme1n1`, the multipath head)"),
};
static DESC(nvme_ctrl_desc, NULL, S, nvme_ctrl_fields, NULL);
#undef S

#define S struct inv_storage_mount
static const struct inv_field storage_mount_fields[] = {
	TRI("mounted", mounted,
	    .doc = "something is mounted at the planned mount point (null: nothing planned)"),
	STRING("device", device, .doc = "what is mounted there (`/dev/nvme1n1`)"),
	STRING("fs", fs, .doc = "its file system type"),
	STRING("access", access, .doc = "`\"rw\"` or `\"ro\"`, from its options"),
	STRING("options", options, .doc = "its options as listed"),
};
static DESC(storage_mount_desc, NULL, S, storage_mount_fields, NULL);
#undef S

#define S struct inv_storage_fstab
static const struct inv_field storage_fstab_fields[] = {
	TRI("present", present,
	    .doc = "a line mounts something at the planned mount point (null: nothing planned)"),
	STRING("spec", spec, .doc = "its first field (`UUID=...`)"),
	STRING("fs", fs, .doc = "its third field"),
	STRING("options", options, .doc = "its fourth field"),
};
static DESC(storage_fstab_desc, NULL, S, storage_fstab_fields, NULL);
#undef S

#define S struct inv_storage_volume
static const struct inv_field storage_volume_fields[] = {
	STRING("file", file, .doc = "its plan: `/etc/sparkctl/storage.d/NAME.json`"),
	OPTIONAL("conf", conf, storage_conf_desc,
		 .doc = "the plan, the volume this node is meant to have (null: unusable)"),
	STRING("conf_error", conf_error, .doc = "why the plan could not be used"),
	STRING("uuid_device", uuid_device,
	       .doc = "the device the planned UUID's link `/dev/disk/by-uuid/UUID` points to"),
	OBJECT("mount", mount, storage_mount_desc,
	       .doc = "the planned mount point in `/proc/self/mounts`"),
	OBJECT("fstab", fstab, storage_fstab_desc,
	       .doc = "the planned mount point's line in `/etc/fstab`"),
	TRI("target_reachable", target_reachable,
	    .doc = "a TCP connection to the planned target opened within 2 s (a live probe of "
		   "`topo` or `doctor`; null otherwise and on trees)"),
	STRING("target_error", target_error, .doc = "why it did not"),
};
static DESC(storage_volume_desc, "volumes", S, storage_volume_fields, NULL);
#undef S

#define S struct inv_storage
static const struct inv_field storage_fields[] = {
	STRING("hostnqn", hostnqn, .doc = "`/etc/nvme/hostnqn`, the node's host NQN"),
	ARRAY("controllers", controllers, nvme_ctrl_desc,
	      .doc = "the NVMe over Fabrics controllers (`/sys/class/nvme/*` not on PCIe)"),
	ARRAY("volumes", volumes, storage_volume_desc,
	      .doc = "one per plan in `/etc/sparkctl/storage.d`, by mount point, below"),
};
static DESC(storage_desc, "storage", S, storage_fields, NULL);
#undef S

/* ---- Slurm ------------------------------------------------------------------- */

#define S struct inv_slurm
static const struct inv_field slurm_fields[] = {
	STRING("conf", conf,
	       .doc = "the slurm.conf read: `$SLURM_CONF`, else `/etc/slurm/slurm.conf`"),
	STRING("conf_sha256", conf_sha256,
	       .doc = "its SHA-256 (64 lowercase hex digits, as `sha256sum` prints it)"),
	STRING("controller", controller,
	       .doc = "the first `SlurmctldHost` (or `ControlMachine`), its name without the "
		      "`(address)`"),
	STRING("munge_socket", munge_socket,
	       .doc = "`AuthInfo`'s `socket=`: munged's socket that Slurm uses (null: munge's "
		      "default)"),
	STRING("node_name", node_name,
	       .doc = "the name looked up among the `NodeName` lines: the short host name"),
	TRI("node_listed", node_listed,
	    .doc = "a `NodeName` line (a Slurm hostlist, `spark-[01-04,07]`) names it, in "
		   "slurm.conf or a file it includes (`Include`)"),
	INT("real_memory_bytes", real_memory_bytes,
	    .doc = "its `RealMemory` (MiB in slurm.conf), from its line or a `NodeName=DEFAULT` "
		   "line before it; null when unset (Slurm's default: 1 MiB)"),
	STRING("user", user,
	       .doc = "the job user: `topo --slurm-user NAME` (`doctor --slurm-user`), else the "
		      "user the probe runs as (`$USER`; over ssh, the login user)"),
	INT("uid", uid, .doc = "the user's uid on this node (null: no such user)"),
	INT("gid", gid, .doc = "the user's primary gid"),
	STRING("user_source", user_source,
	       .doc = "where the ids come from: `\"passwd\"` (`/etc/passwd`) or `\"nss\"` "
		      "(`getpwnam()`, live only, for a user not in the file: LDAP, SSSD)"),
};
static DESC(slurm_desc, "slurm", S, slurm_fields, NULL);
#undef S

/* ---- the documents ----------------------------------------------------------- */

#define S struct inv_problem
static const struct inv_field problem_fields[] = {
	STRING("path", path, .doc = "what could not be read"),
	STRING("message", message, .flags = INV_REQUIRED, .doc = "why"),
};
static DESC(problem_desc, NULL, S, problem_fields, NULL);
#undef S

#define S struct inventory
static const struct inv_field inventory_fields[] = {
	CONST("schema_version", INVENTORY_SCHEMA_VERSION, .doc = "2"),
	STRING("sparkctl_version", sparkctl_version, .doc = "version of the sparkctl that probed"),
	STRING("source", source,
	       .doc = "`\"live\"` (this host) or `\"root\"` (a tree under `--root`)"),
	STRING("root", root, .doc = "the `--root` directory"),
	OBJECT("system", sys, system_desc, .doc = "the host, below"),
	ARRAY("rdma_devices", rdma, rdma_desc, .doc = "`/sys/class/infiniband/*`, below"),
	ARRAY("netdevs", netdevs, netdev_desc, .doc = "`/sys/class/net/*`, below"),
	ARRAY("pci_functions", pci, pci_desc,
	      .doc = "the PCI functions of every RDMA device and PCI netdev, below"),
	OBJECT("gpu", gpu, gpu_info_desc, .doc = "NVML and CUDA driver facts, below"),
	OPTIONAL("storage", storage, storage_desc,
		 .doc = "the shared NVMe/TCP volume, below; null when none is planned and no "
			"fabric controller exists"),
	OPTIONAL("slurm", slurm, slurm_desc,
		 .doc = "this node's share of a Slurm cluster, below; null when there is no "
			"slurm.conf"),
	ARRAY("problems", problems, problem_desc, .doc = "what could not be read, and why"),
};
DESC(inv_schema_inventory, "inventory", S, inventory_fields, NULL);

/* The facts of a host that are not files, for a capture (inventory_json.h). */
static const struct inv_field host_facts_fields[] = {
	CONST("format", 1, .doc = NULL),
	STRING("captured_by", sparkctl_version, .flags = INV_WRITE_ONLY, .doc = NULL),
	STRING("arch", sys.arch, .doc = NULL),
	STRING("home", sys.home, .doc = NULL),
	ROW("environment", INV_MAP, offsetof(S, sys.environment),
	    .count_offset = MEMBER(sys.nr_environment, size_t), .desc = &environment_desc,
	    .value = 1, .doc = NULL),
	OBJECT("limits", sys, limits_desc, .doc = NULL),
	OBJECT("nccl", sys, nccl_desc, .doc = NULL),
	OBJECT("gpu", gpu, gpu_info_desc, .doc = NULL),
};
DESC(inv_schema_host_facts, NULL, S, host_facts_fields, NULL);
#undef S
